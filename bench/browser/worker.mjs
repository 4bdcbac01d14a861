// The browser runner's worker: imports the npm package (served from js/dist) and instantiates it
// (the start-up figures are the package's), then loads the benchmark module (quire-bench.wasm,
// served from bench/module/) and runs the same C++ cases as `quire-bench`, posting a progress line
// per case.
// The message handler is installed before any await: a message that arrives while a module
// worker is still evaluating its top-level awaits is otherwise lost.
const origin = performance.timeOrigin;
const ready = (async () => {
  let t0 = performance.now();
  const quire = await import('/js/dist/index.js');
  const importMs = performance.now() - t0;
  t0 = performance.now();
  await quire.init();
  const instantiateMs = performance.now() - t0;
  // The moment the package was ready, on an absolute clock (the page and the worker have different
  // timeOrigins); the benchmark module loads after it, outside the start-up figures.
  const readyAt = origin + performance.now();
  const { loadBench } = await import('/bench/bench-module.mjs');
  const wasm = new Uint8Array(await (await fetch('/bench/module/quire-bench.wasm')).arrayBuffer());
  const bench = await loadBench(new URL('/bench/module/quire-bench.mjs', self.location.href).href, wasm);
  return { quire, bench, importMs, instantiateMs, readyAt };
})();

self.onmessage = async ({ data }) => {
  try {
    const { quire, bench, importMs, instantiateMs, readyAt } = await ready;
    const { options, meta } = data;
    const v = quire.version();
    meta.build = { ...meta.build, compiler: v.compiler, flags: v.flags, simd: v.simd };
    meta.startup = { ...meta.startup, import_ms: importMs, instantiate_ms: instantiateMs };
    const reading = bench.run({
      ...options,
      meta,
      onProgress: (i, n, name) => self.postMessage({ progress: `[${i + 1}/${n}] ${name}` }),
    });
    self.postMessage({ reading, workerReadyAt: readyAt, peerInput: options.peers === false ? undefined : peerInput(quire, bench, reading) });
  } catch (e) {
    self.postMessage({ error: String((e && e.stack) || e) });
  }
};

// What the page's DuckDB-Wasm peers (peers-duckdb.mjs) need when the run has the cases they mirror:
// the customers' CSV (DuckDB-Wasm 1.28 reads CSV without an extension; each peer builds its own file from it) and quire's answers, through the
// npm package, to check theirs against.
const SHAPE = 'customers-200k';
function peerInput(quire, bench, reading) {
  const ops = ['find', 'sum'].filter((op) => reading.cases.some((c) => c.name === `format.${op}/${SHAPE}`));
  if (ops.length === 0) return undefined;
  const f = quire.format.open(bench.input(`format.find/${SHAPE}`));
  try {
    return { ops, csv: bench.input(`format.write-csv/${SHAPE}`), find: f.find('id', 123456), sum: f.aggregate('balance') };
  } finally {
    f.close();
  }
}
