#!/usr/bin/env node
// fhir.validate through the npm package against JSON.parse of the same text, in one Node process
// (issue 22, item 1: validation with every invariant at most 1x JSON.parse). The table of
// docs/performance.md, "FHIR invariants: direct checks", is this script's output.
//
//   node bench/validate-vs-parse.mjs [--rounds N] [--base DIST] [--json]
//
// --base DIST: a second build of the package (another dist/ folder, e.g. main's) timed in the same
// process and rounds: its validate(text) beside this one's, so a change is judged by ratios taken
// under the same conditions.
//
// Inputs: the benchmark cases' own bytes (quire-bench.wasm's input(), so the same as native
// quire-bench's fhir.validate cases), and one collection Bundle of the corpus's official examples
// that are not Bundles themselves (shared corpus, fhir-r4/examples). Each is timed as a string
// (the copy across the boundary counts, as it does for JSON.parse), as bytes, and as a string with
// checkInvariants off; JSON.parse(text) is the yardstick.
//
// Method: every function is warmed up first (half a second), then N rounds (default 11); in each
// round each function runs one timed batch (calls enough for about 20 ms, fixed after the warm-up),
// the functions in turn, so that a machine's slow phase hits them alike. Per call: the median of
// the rounds. Ratios are to JSON.parse's median in the same process.
//
// Environment: QUIRE_DIST (the package's dist/, default js/dist), QUIRE_BENCH_MODULE (the folder
// of quire-bench.mjs and .wasm, default build/wasm/bench), QUIRE_CORPUS (default ../shared/corpus,
// beside the repository).
import { readFileSync, readdirSync, existsSync } from 'node:fs';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { dist, flag, loadBenchInNode, option, repo } from './runner-common.mjs';

const rounds = Number(option('--rounds') ?? 11);
const asJson = flag('--json');

async function loadPackage(folder) {
  const q = await import(pathToFileURL(path.join(path.resolve(folder), 'index.js')).href);
  await q.init();
  return q.fhir;
}
const fhir = await loadPackage(dist);
const baseDist = option('--base');
const baseFhir = baseDist ? await loadPackage(baseDist) : undefined;

const bench = await loadBenchInNode();
const decoder = new TextDecoder();

const inputs = [];
for (const shape of ['vital-signs-observation', 'transaction-bundle-100', 'transaction-bundle-1000', 'searchset-bundle-1000']) {
  const bytes = bench.input(`fhir.validate/${shape}`);
  if (!bytes) throw new Error(`no benchmark case fhir.validate/${shape}`);
  inputs.push({ name: shape, bytes: new Uint8Array(bytes) });
}
const corpus = process.env.QUIRE_CORPUS ?? path.join(repo, '..', 'shared', 'corpus');
const examples = path.join(corpus, 'fhir-r4', 'examples');
if (existsSync(examples)) {
  const entries = [];
  for (const f of readdirSync(examples).sort()) {
    if (!f.endsWith('.json')) continue;
    const text = readFileSync(path.join(examples, f), 'utf8');
    let resource;
    try {
      resource = JSON.parse(text);
    } catch {
      continue;
    }
    if (resource?.resourceType && resource.resourceType !== 'Bundle') entries.push(`{"resource":${text.trim()}}`);
  }
  const text = `{"resourceType":"Bundle","type":"collection","entry":[${entries.join(',')}]}`;
  inputs.push({ name: `corpus-examples-${entries.length}`, bytes: new TextEncoder().encode(text) });
}

function timeBatch(fn, calls) {
  const start = process.hrtime.bigint();
  for (let i = 0; i < calls; ++i) fn();
  return Number(process.hrtime.bigint() - start) / calls;
}

function median(values) {
  const s = [...values].sort((a, b) => a - b);
  return s[s.length >> 1];
}

const rows = [];
for (const input of inputs) {
  const text = decoder.decode(input.bytes);
  const outcome = fhir.validate(text);
  // The three ways give the same issues (a reading of a wrong answer is no reading).
  if (JSON.stringify(fhir.validate(input.bytes)) !== JSON.stringify(outcome)) throw new Error(`${input.name}: bytes and text disagree`);
  const fns = {
    'JSON.parse(text)': () => JSON.parse(text),
    'validate(text)': () => fhir.validate(text),
    'validate(bytes)': () => fhir.validate(input.bytes),
    'validate(text), no invariants': () => fhir.validate(text, { checkInvariants: false }),
  };
  if (baseFhir) {
    if (JSON.stringify(baseFhir.validate(text)) !== JSON.stringify(outcome)) throw new Error(`${input.name}: the base gives other issues`);
    fns['base validate(text)'] = () => baseFhir.validate(text);
    fns['base validate(text), no invariants'] = () => baseFhir.validate(text, { checkInvariants: false });
  }
  const calls = {};
  for (const [name, fn] of Object.entries(fns)) {
    let n = 0;
    const until = performance.now() + 500;
    const start = performance.now();
    while (performance.now() < until) {
      fn();
      ++n;
    }
    const per = (performance.now() - start) / n;
    calls[name] = Math.max(1, Math.round(20 / per));
  }
  const times = Object.fromEntries(Object.keys(fns).map((k) => [k, []]));
  for (let r = 0; r < rounds; ++r) {
    for (const [name, fn] of Object.entries(fns)) times[name].push(timeBatch(fn, calls[name]));
  }
  const med = Object.fromEntries(Object.entries(times).map(([k, v]) => [k, median(v)]));
  rows.push({
    input: input.name,
    bytes: input.bytes.length,
    issues: outcome.issues.length,
    ns: med,
    ratio: Object.fromEntries(Object.entries(med).map(([k, v]) => [k, v / med['JSON.parse(text)']])),
  });
}

if (asJson) {
  console.log(JSON.stringify({ node: process.version, rounds, rows }, null, 1));
} else {
  const fmt = (ns) => (ns >= 1e6 ? `${(ns / 1e6).toFixed(2)} ms` : `${(ns / 1e3).toFixed(1)} µs`);
  console.log(`Node ${process.version}, ${rounds} rounds, median per call (ratio to JSON.parse(text))`);
  const cols = Object.keys(rows[0].ns);
  console.log(`| input | bytes | issues | ${cols.join(' | ')} |`);
  console.log(`|---|---|---|${cols.map(() => '---').join('|')}|`);
  for (const r of rows) {
    const cells = cols.map((c) => (c === 'JSON.parse(text)' ? fmt(r.ns[c]) : `${r.ratio[c].toFixed(2)}x (${fmt(r.ns[c])})`));
    console.log(`| ${r.input} | ${r.bytes} | ${r.issues} | ${cells.join(' | ')} |`);
  }
}
