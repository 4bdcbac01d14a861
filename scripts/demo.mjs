#!/usr/bin/env node
// The README's first command ends here: quire's main job on a built-in default.
// Checks the JSON corpus (JSONTestSuite, when ../shared/corpus is there) and a generated 64 MB
// document natively (the `quire` CLI) and through the npm package (wasm in Node), and prints the
// two side by side: outcomes must be identical, and the throughputs show what wasm costs.
import { execFileSync } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

const repo = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const cli = process.env.QUIRE_CLI ?? path.join(repo, 'build', 'native', 'native', 'quire');
const dist = process.env.QUIRE_DIST ?? path.join(repo, 'js', 'dist');
const corpus = process.env.QUIRE_CORPUS ?? path.resolve(repo, '..', 'shared', 'corpus');

const quire = await import(pathToFileURL(path.join(dist, 'index.js')).href);
await quire.init();

function nativeCheck(files) {
  let out;
  try {
    out = execFileSync(cli, ['json', 'check', '--json', '--load', 'mmap', ...files], { encoding: 'utf8', maxBuffer: 1 << 28 });
  } catch (e) {
    out = e.stdout; // exit 1 when some file is invalid
  }
  return out.trim().split('\n').map((l) => JSON.parse(l));
}

const pad = (s, n) => String(s).padEnd(n);
const lpad = (s, n) => String(s).padStart(n);

// 1. JSONTestSuite, file by file, on both targets.
const suite = path.join(corpus, 'json-test-suite', 'test_parsing');
if (existsSync(suite)) {
  const files = readdirSync(suite).filter((f) => f.endsWith('.json')).sort().map((f) => path.join(suite, f));
  const native = nativeCheck(files);
  const rows = { y_: [0, 0, 0, 0], n_: [0, 0, 0, 0], i_: [0, 0, 0, 0] };
  let differ = 0;
  files.forEach((file, k) => {
    const group = path.basename(file).slice(0, 2);
    const e = quire.json.check(readFileSync(file));
    const wasmOutcome = e ? e.code : 'accept';
    const nativeOutcome = native[k].ok ? 'accept' : native[k].code;
    const r = rows[group];
    r[0] += nativeOutcome === 'accept';
    r[1] += nativeOutcome !== 'accept';
    r[2] += wasmOutcome === 'accept';
    r[3] += wasmOutcome !== 'accept';
    if (wasmOutcome !== nativeOutcome) {
      differ++;
      console.log(`  differs: ${path.basename(file)} native ${nativeOutcome}, wasm ${wasmOutcome}`);
    }
  });
  console.log(`\nJSONTestSuite (${files.length} files)        native              wasm (npm, Node ${process.versions.node})`);
  console.log(`  ${pad('group', 32)} ${pad('accepted  rejected', 20)}accepted  rejected`);
  for (const [g, r] of Object.entries(rows)) {
    const label = { y_: 'y_ (must accept)', n_: 'n_ (must reject)', i_: 'i_ (implementation-defined)' }[g];
    console.log(`  ${pad(label, 32)} ${lpad(r[0], 8)}  ${lpad(r[1], 8)}  ${lpad(r[2], 8)}  ${lpad(r[3], 8)}`);
  }
  console.log(`  outcomes identical on both targets: ${files.length - differ}/${files.length}`);
} else {
  console.log(`(JSONTestSuite not found at ${suite}: skipped; the generated document below still runs)`);
}

// 2. A generated document (built-in default): 64 MB of records, checked on both targets.
const work = mkdtempSync(path.join(tmpdir(), 'quire-demo-'));
try {
  const records = [];
  let seed = 42;
  const rnd = () => ((seed = (seed * 1103515245 + 12345) >>> 0) / 2 ** 32);
  for (let i = 0; records.length * 160 < 64e6; i++) {
    records.push(`{"id":${i},"name":"Patient ${i}","active":${rnd() < 0.5},"weight":${(40 + rnd() * 80).toFixed(3)},"tags":["a","b"],"address":{"city":"C${i % 977}","postalCode":null}}`);
  }
  const text = `[${records.join(',\n')}]`;
  const file = path.join(work, 'generated.json');
  writeFileSync(file, text);
  const bytes = readFileSync(file);
  const runs = 5;
  const nativeTimes = [];
  for (let k = 0; k < runs; k++) nativeTimes.push(nativeCheck([file])[0].seconds);
  const wasmTimes = [];
  let stats;
  for (let k = 0; k < runs; k++) {
    const t0 = performance.now();
    stats = quire.json.stats(bytes);
    wasmTimes.push((performance.now() - t0) / 1000);
  }
  const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
  const mbps = (s) => (bytes.length / s / 1e6).toFixed(0);
  const n = median(nativeTimes), w = median(wasmTimes);
  console.log(`\nGenerated document: ${(bytes.length / 1e6).toFixed(1)} MB, ${stats.values.toLocaleString('en')} values, median of ${runs} checks`);
  console.log(`  native (quire json check --load mmap, incl. mapping the file): ${(n * 1000).toFixed(1)} ms  ${mbps(n)} MB/s`);
  console.log(`  wasm (json.stats in Node, bytes already in JS):     ${(w * 1000).toFixed(1)} ms  ${mbps(w)} MB/s`);
  console.log('  (the in-process figures of the same check, without the file, are json.check/records-* in the benchmark table below)');
  console.log(`  wasm / native: ${(w / n).toFixed(2)}x   simd kernel native: ${execFileSync(cli, ['version', '--json'], { encoding: 'utf8' }).match(/"simd":"(\w+)"/)[1]}, wasm: ${quire.version().simd}`);
} finally {
  rmSync(work, { recursive: true, force: true });
}
