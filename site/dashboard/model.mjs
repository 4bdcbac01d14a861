// The merge of reading files (bench/reading.schema.json) into one row per case, matched across
// targets by case name: the one JS merge, used by the dashboard and by bench/report.mjs (the
// tables of docs/performance.md), and tested to give the figures `quire-bench compare`
// (bench/runner/bench_compare.cpp) prints for the same files (site/test/model.test.mjs). It lives
// here, not in bench/, because the site's server serves site/ and the page imports it. No DOM.

export const TARGETS = ['native', 'wasm-node', 'wasm-browser'];
export const TARGET_LABELS = { native: 'native', 'wasm-node': 'Node', 'wasm-browser': 'browser' };
/**
 * The target of a load run over loopback (bench/mllp-load.mjs): its cases are the capacity
 * ladder's (one system at one offered rate), drawn as a ladder, not merged with the per-call cases.
 */
export const LADDER_TARGET = 'loopback';

/** Returns why `reading` is not a reading file (a string), or null when it is one. */
export function checkReading(reading) {
  if (reading === null || typeof reading !== 'object' || Array.isArray(reading)) return 'not a JSON object';
  if (reading.schema !== 'quire-reading/1') return `schema is ${JSON.stringify(reading.schema)}, not "quire-reading/1"`;
  if (!TARGETS.includes(reading.target) && reading.target !== LADDER_TARGET) return `target ${JSON.stringify(reading.target)} is none of ${[...TARGETS, LADDER_TARGET].join(', ')}`;
  if (!Array.isArray(reading.cases)) return 'has no cases array';
  for (const [i, c] of reading.cases.entries()) {
    if (!c || typeof c.name !== 'string' || typeof c.op !== 'string') return `case ${i} has no name or op`;
    if (!c.time_ns || typeof c.time_ns.median !== 'number') return `case ${c.name} has no time_ns.median`;
  }
  return null;
}

/**
 * The peak-memory budget of one call (advisory, as `quire-bench compare` prints it): 20x the input,
 * 3x for inputs that are mostly one opaque value.
 */
export function budgetFactor(c) {
  return c.opaque_payload ? 3 : 20;
}

/**
 * What the budget is a multiple of: the bytes a case generated inside the call when it reports
 * them (`generated_bytes`: the wide write, whose input is a six-byte row count), else its input.
 */
export function budgetBase(c) {
  return c.generated_bytes > 0 ? { bytes: c.generated_bytes, of: 'generated' } : { bytes: c.input_bytes ?? 0, of: 'input' };
}

/**
 * Merges readings ({ source, run, reading }, in load order) into
 * { runs, cases, modules, ops, mismatches, overBudget, failed, missing, duplicates, ladders }.
 * Loopback readings (capacity ladders) are not merged case by case: each becomes one of
 * `ladders` (ladderOf).
 * A case seen twice on one target (two readings of the same target) keeps the later one and is
 * listed in `duplicates`. Peer cases (other libraries) are never checked for equal checksums (a
 * peer on another target is another build of another library) nor held to quire's memory budget,
 * and are not missing where they did not run.
 */
export function buildModel(readings) {
  const runs = [];
  const byName = new Map();
  const duplicates = [];
  const ladders = [];
  for (const { source, run, reading } of readings) {
    if (reading.target === LADDER_TARGET) {
      ladders.push(ladderOf(source, reading));
      continue;
    }
    runs.push({
      source,
      run: run ?? '',
      target: reading.target,
      runtime: reading.runtime ?? {},
      build: reading.build ?? {},
      machine: reading.machine ?? {},
      startedAt: reading.started_at ?? '',
      startup: reading.startup ?? {},
      caseCount: reading.cases.length,
    });
    for (const c of reading.cases) {
      let row = byName.get(c.name);
      if (!row) {
        row = {
          name: c.name,
          op: c.op,
          shape: c.shape ?? c.name.slice(c.name.indexOf('/') + 1),
          module: c.op.split('.')[0],
          peer: c.peer ?? null,
          mirrors: c.mirrors ?? null,
          inputBytes: c.input_bytes ?? 0,
          byTarget: {},
          source: {},
        };
        byName.set(c.name, row);
      } else if (row.byTarget[reading.target]) {
        duplicates.push(`${c.name} (${reading.target}: ${row.source[reading.target]} and ${source})`);
      }
      row.byTarget[reading.target] = c;
      row.source[reading.target] = source;
      if (c.peer && !row.peer) row.peer = c.peer;
    }
  }

  const cases = [...byName.values()];
  const loaded = TARGETS.filter((t) => runs.some((r) => r.target === t));
  const missing = [];
  const mismatches = [];
  const overBudget = [];
  const failed = [];
  for (const row of cases) {
    const present = TARGETS.filter((t) => row.byTarget[t]);
    row.targets = present;
    // Checksums: every quire case must compute the same digest on every target.
    const sums = present.map((t) => row.byTarget[t].checksum).filter((s) => s);
    row.checksumsDiffer = !row.peer && new Set(sums).size > 1;
    row.checksums = Object.fromEntries(present.map((t) => [t, row.byTarget[t].checksum ?? '']));
    if (row.checksumsDiffer) mismatches.push(row.name);
    row.errors = present.filter((t) => row.byTarget[t].error).map((t) => ({ target: t, error: row.byTarget[t].error }));
    if (row.errors.length) failed.push(row.name);
    // Wasm over native, by median, for quire's own cases (a peer's "native" is another library).
    const native = row.byTarget.native;
    row.ratio = {};
    if (!row.peer && native && native.time_ns.median > 0 && !native.error) {
      for (const t of ['wasm-node', 'wasm-browser']) {
        const c = row.byTarget[t];
        if (c && !c.error && c.time_ns.median > 0) row.ratio[t] = c.time_ns.median / native.time_ns.median;
      }
    }
    row.budget = {};
    row.overBudget = [];
    for (const t of row.peer ? [] : present) {
      const c = row.byTarget[t];
      const peak = c.alloc?.peak_bytes;
      const base = budgetBase(c);
      if (peak === undefined || !(base.bytes > 0)) continue;
      const limit = budgetFactor(c) * base.bytes;
      row.budget[t] = { peak, limit, factor: budgetFactor(c), of: base.of, over: peak > limit };
      if (peak > limit) row.overBudget.push(t);
    }
    if (row.overBudget.length) overBudget.push(row.name);
    row.missing = row.peer ? [] : loaded.filter((t) => !row.byTarget[t]);
    for (const t of row.missing) missing.push(`${row.name} in ${t}`);
  }
  // A peer's ratio to the quire case it mirrors, on the same target.
  for (const row of cases) {
    row.peerRatio = {};
    if (!row.peer || !row.mirrors) continue;
    const quire = byName.get(row.mirrors);
    if (!quire) continue;
    for (const t of row.targets) {
      const q = quire.byTarget[t];
      if (q && q.time_ns.median > 0) row.peerRatio[t] = row.byTarget[t].time_ns.median / q.time_ns.median;
    }
  }
  const modules = [...new Set(cases.map((c) => c.module))];
  const ops = [...new Set(cases.map((c) => c.op))];
  return { runs, cases, modules, ops, mismatches, overBudget, failed, missing, duplicates, ladders };
}

/**
 * A loopback reading as its ladder: { source, startedAt, machine, ladder (how it ran), systems },
 * each system { system, peer, what, maxHeld (the highest held rate, 0 for none), points } and each
 * point one offered rate { rate, held, sent, aa, missing, p50, p99, p999, max (ms), cpu (µs/msg) },
 * in rate order; systems in the reading's order.
 */
export function ladderOf(source, reading) {
  const bySystem = new Map();
  for (const c of reading.cases) {
    const l = c.ladder;
    if (!l) continue;
    if (!bySystem.has(l.system)) bySystem.set(l.system, { system: l.system, peer: c.peer ?? null, what: l.what ?? '', points: [] });
    const ms = (us) => (typeof us === 'number' ? us / 1000 : null);
    bySystem.get(l.system).points.push({
      name: c.name,
      rate: l.offered_per_s,
      held: l.held === true,
      sent: l.sent,
      aa: l.aa,
      missing: l.missing ?? 0,
      aaPerS: l.aa_per_s ?? null,
      p50: ms(l.latency_us?.p50),
      p99: ms(l.latency_us?.p99),
      p999: ms(l.latency_us?.p999),
      max: ms(l.latency_us?.max),
      cpu: l.server_cpu_us_per_msg ?? null,
      queue: l.queue ?? null,
    });
  }
  const systems = [...bySystem.values()];
  for (const s of systems) {
    s.points.sort((a, b) => a.rate - b.rate);
    s.maxHeld = Math.max(0, ...s.points.filter((p) => p.held).map((p) => p.rate));
  }
  return {
    source, startedAt: reading.started_at ?? '', runtime: reading.runtime ?? {}, build: reading.build ?? {}, machine: reading.machine ?? {},
    ladder: reading.ladder ?? {}, caseCount: reading.cases.length, systems,
  };
}

/** The cases that pass the filter { module, op, text, peers, problems }. */
export function filterCases(cases, { module = '', op = '', text = '', peers = true, problems = false } = {}) {
  const needle = text.trim().toLowerCase();
  return cases.filter(
    (c) =>
      (!module || c.module === module) &&
      (!op || c.op === op) &&
      (peers || !c.peer) &&
      (!problems || c.checksumsDiffer || c.errors.length > 0 || c.overBudget.length > 0) &&
      (!needle || c.name.toLowerCase().includes(needle)),
  );
}

/**
 * Cases with a wasm/native ratio, largest first, by `target`'s ratio (falling back to the other
 * wasm target's when a case did not run there).
 */
export function sortByRatio(cases, target = 'wasm-node') {
  const other = target === 'wasm-node' ? 'wasm-browser' : 'wasm-node';
  const key = (c) => c.ratio[target] ?? c.ratio[other];
  return cases.filter((c) => key(c) !== undefined).sort((a, b) => key(b) - key(a) || a.name.localeCompare(b.name));
}
