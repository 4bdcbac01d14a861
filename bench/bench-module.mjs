// The benchmark module (quire-bench.mjs + quire-bench.wasm, built from bench/ with the same core and
// flags as the shipped quire.wasm, plus the cases and the harness) and its JavaScript face, for the
// Node runner (run.mjs) and the browser runner's worker (browser/worker.mjs). The npm package
// carries none of this: peers compare their answers with the package's own API (js/dist).
// Plain JavaScript that runs in Node and in browsers alike: the caller hands over the glue's URL
// and the .wasm's bytes.

/**
 * Instantiates the benchmark module: `glue` is the URL of quire-bench.mjs, `wasmBinary` the bytes
 * of quire-bench.wasm. Resolves to the harness (list, run, input, gates).
 */
export async function loadBench(glue, wasmBinary) {
  const { default: createQuireBenchModule } = await import(glue);
  const m = await createQuireBenchModule({
    wasmBinary,
    print: (text) => console.log(text),
    printErr: (text) => console.error(text),
  });
  return {
    /** The registered cases: [{ name, large, items }]. */
    list() {
      return JSON.parse(m.benchList());
    },
    /**
     * Runs the cases and returns the reading (schema quire-reading/1). Blocks while it runs: use a
     * Worker in browsers. options: filter (substring of case names, comma separates alternatives),
     * quick, large, seconds (time budget of one case's timed samples, default 2), meta (everything
     * of the reading but its cases), onProgress(index, count, name).
     */
    run(options = {}) {
      const text = m.benchRun(options.filter ?? '', options.quick ?? false, options.large ?? false, options.seconds ?? 0,
        JSON.stringify(options.meta ?? {}), options.onProgress);
      return JSON.parse(text);
    },
    /** A case's input bytes (a copy), so peer libraries can be measured on the same bytes; undefined for no such case. */
    input(name) {
      return m.benchInput(name);
    },
    /** What a case hands a peer beside its input (a ViewDefinition's JSON text); "" for none. */
    spec(name) {
      return m.benchSpec(name);
    },
    /**
     * A case's result as text, computed by quire on the case's input (a view's rows, one JSON
     * object a line), for a peer's answer to be checked against; undefined for a case without one.
     * Throws when the case fails.
     */
    answer(name) {
      const text = m.benchAnswer(name);
      if (text instanceof Error) throw text;
      return text;
    },
    /**
     * Runs the scaling gates: [{ name, baseNs, fourNs, ratio, twinBaseNs, twinFourNs, twinRatio,
     * floor, ceiling, passed, twinFailed, error }].
     */
    gates(filter = '', onProgress) {
      return JSON.parse(m.benchGates(filter, onProgress));
    },
  };
}
