#!/usr/bin/env node
// The wasm-in-Node runner: the C++ cases through the benchmark module (quire-bench.wasm, see
// bench-module.mjs), plus peer libraries measured in the same run on the same bytes, their answers
// checked with the npm package's API. Writes one reading (schema quire-reading/1). Start-up is the
// shipped package's: its import and init(), timed here and in fresh processes.
//
//   node bench/run.mjs [--quick] [--filter TEXT] [--large] [--seconds S] [--out FILE] [--scaling] [--no-peers]
import { execFileSync } from 'node:child_process';
import os from 'node:os';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { peerCases, measure } from './peers.mjs';
import { artifactSizes, commitInfo, dist, flag, loadBenchInNode, option, writeReading } from './runner-common.mjs';
import { measureEach } from './startup-breakdown.mjs';

// Startup: the npm package's import and instantiation, timed in this fresh process.
let t0 = performance.now();
const quire = await import(pathToFileURL(path.join(dist, 'index.js')).href);
const importMs = performance.now() - t0;
t0 = performance.now();
await quire.init();
const instantiateMs = performance.now() - t0;
const bench = await loadBenchInNode();

if (flag('--scaling')) {
  const results = bench.gates(option('--filter') ?? '', (name) => process.stderr.write(`gate ${name} ...\n`));
  let ok = true;
  const ms = (ns) => `${(ns / 1e6).toFixed(2)}ms`.padStart(12);
  console.log(`${'gate (wasm-node)'.padEnd(28)} ${'base'.padStart(12)} ${'4x'.padStart(12)} ${'ratio'.padStart(8)}         ${'twin base'.padStart(12)} ${'twin 4x'.padStart(12)} ${'ratio'.padStart(8)}  self-check`);
  for (const r of results) {
    if (r.error) { console.log(`${r.name.padEnd(28)} ERROR ${r.error}`); ok = false; continue; }
    console.log(`${r.name.padEnd(28)} ${ms(r.baseNs)} ${ms(r.fourNs)} ${r.ratio.toFixed(2).padStart(7)}x  ${(r.passed ? 'pass' : 'FAIL').padEnd(6)} ${ms(r.twinBaseNs)} ${ms(r.twinFourNs)} ${r.twinRatio.toFixed(2).padStart(7)}x  ${r.twinFailed ? 'fails as designed' : 'DID NOT FAIL (fixture too small)'} (bounds ${r.floor}x-${r.ceiling}x)`);
    ok &&= r.passed && r.twinFailed;
  }
  console.log(`${results.length} gates: ${ok ? 'all within their bounds (1.5x-8x linear, under 2.5x sublinear), every twin above the bound' : 'FAILED'}`);
  process.exit(ok ? 0 : 1);
}

// A fresh Node process that imports the package and instantiates it: what starting costs.
function processStartMs() {
  const script = `const q = await import(${JSON.stringify(pathToFileURL(path.join(dist, 'index.js')).href)}); await q.init();`;
  const times = [];
  for (let i = 0; i < 5; i++) {
    const t = performance.now();
    execFileSync(process.execPath, ['--input-type=module', '-e', script]);
    times.push(performance.now() - t);
  }
  return times.sort((a, b) => a - b)[2];
}

// The issue-22 gate's figure: fresh `node` processes that import the package and await init(),
// timed from the script's first line, median of 7 (bench/startup-breakdown.mjs, as make test-size).
const [cold] = measureEach(7, [dist]);

const v = quire.version();
const meta = {
  schema: 'quire-reading/1',
  target: 'wasm-node',
  runtime: { name: 'node', version: process.versions.node, v8: process.versions.v8 },
  build: { ...commitInfo(), compiler: v.compiler, flags: v.flags, simd: v.simd },
  machine: { cpu: os.cpus()[0]?.model ?? 'unknown', logical_cores: os.cpus().length, os: `${os.type()} ${os.release()}` },
  started_at: new Date().toISOString().replace(/\.\d+Z$/, 'Z'),
  startup: {
    process_start_ms: processStartMs(),
    cold_import_init_ms: cold.cold_import_init.import_init_ms,
    cold_breakdown_ms: {
      package_js: cold.breakdown.package_js_ms,
      glue_js: cold.breakdown.glue_js_ms,
      read: cold.breakdown.read_ms,
      compile: cold.breakdown.compile_ms,
      instantiate: cold.breakdown.instantiate_ms,
      runtime_init: cold.breakdown.runtime_init_ms,
    },
    import_ms: importMs,
    instantiate_ms: instantiateMs,
    ...artifactSizes(),
  },
};

const options = {
  filter: option('--filter') ?? '',
  quick: flag('--quick'),
  large: flag('--large'),
  seconds: Number(option('--seconds') ?? 0),
  meta,
  onProgress: (i, n, name) => process.stderr.write(`\r[${i + 1}/${n}] ${name.padEnd(60)}`),
};
// The 1-minute load average before and after the cases (and peers): above the core count, the
// run shared the machine and its times stretched with the load.
meta.machine.load_average = { start: os.loadavg()[0] };
const reading = bench.run(options);
process.stderr.write(`\r${' '.repeat(80)}\r`);

if (!flag('--no-peers')) {
  for (const peer of await peerCases({ ...quire, bench }, options)) {
    process.stderr.write(`\r[peer] ${peer.name.padEnd(60)}`);
    reading.cases.push(await measure(peer, options));
  }
  process.stderr.write(`\r${' '.repeat(80)}\r`);
}

reading.machine.load_average.end = os.loadavg()[0];
process.exit(writeReading(reading));
