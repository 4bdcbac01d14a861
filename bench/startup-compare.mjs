#!/usr/bin/env node
// Two builds of the shipped module side by side, in one run: the .wasm's size (raw and gzipped at
// zlib level 9, as runner-common.mjs's artifactSizes) and what starting costs in Node. Each round
// starts a fresh `node` per build, in alternating order (A B, B A, ...), and times what
// bench/run.mjs's startup figures time: from the start of the glue's import to the module being
// ready (import_ms + instantiate_ms, the .wasm read from disk and handed over as wasmBinary, as
// js/src/module.ts does in Node), plus the whole process's wall time. Medians over the rounds.
//
//   node bench/startup-compare.mjs [--before DIR] [--after DIR] [--rounds N] [--json]
// DIR holds quire.mjs and quire.wasm (default: /tmp/before-dist and js/dist).
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { gzipSync } from 'node:zlib';

const repo = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const args = process.argv.slice(2);
const option = (name, fallback) => {
  const i = args.indexOf(name);
  return i >= 0 ? args[i + 1] : fallback;
};
const builds = {
  before: path.resolve(option('--before', '/tmp/before-dist')),
  after: path.resolve(option('--after', path.join(repo, 'js', 'dist'))),
};
const rounds = Number(option('--rounds', '11'));

// The child: one import and one instantiation, timed inside the fresh process.
const child = (dir) => `
const t0 = performance.now();
const { default: create } = await import(${JSON.stringify(pathToFileURL(path.join(dir, 'quire.mjs')).href)});
const t1 = performance.now();
const { readFile } = await import('node:fs/promises');
const wasmBinary = await readFile(${JSON.stringify(path.join(dir, 'quire.wasm'))});
await create({ wasmBinary, print: () => {}, printErr: () => {} });
const t2 = performance.now();
process.stdout.write(JSON.stringify({ import_ms: t1 - t0, instantiate_ms: t2 - t1, ready_ms: t2 - t0 }));`;

function sizes(dir) {
  const wasm = readFileSync(path.join(dir, 'quire.wasm'));
  const glue = readFileSync(path.join(dir, 'quire.mjs'));
  const gz = (b) => gzipSync(b, { level: 9 }).length;
  return { wasm_bytes: wasm.length, wasm_gzip_bytes: gz(wasm), glue_bytes: glue.length, glue_gzip_bytes: gz(glue) };
}

const samples = { before: [], after: [] };
for (let r = 0; r < rounds; r++) {
  const order = r % 2 === 0 ? ['before', 'after'] : ['after', 'before'];
  for (const which of order) {
    const t = performance.now();
    const out = execFileSync(process.execPath, ['--input-type=module', '-e', child(builds[which])], { encoding: 'utf8' });
    samples[which].push({ ...JSON.parse(out), process_ms: performance.now() - t });
  }
}

const median = (xs) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length % 2 ? s[(s.length - 1) / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2;
};
const result = { rounds, method: 'fresh node per build per round, alternating order; medians; gzip = zlib level 9', node: process.versions.node };
for (const which of ['before', 'after']) {
  const m = {};
  for (const k of ['import_ms', 'instantiate_ms', 'ready_ms', 'process_ms']) m[k] = median(samples[which].map((s) => s[k]));
  result[which] = { dir: builds[which], ...sizes(builds[which]), ...m };
}

if (args.includes('--json')) {
  console.log(JSON.stringify(result, null, 1));
} else {
  const kb = (b) => `${b} B`;
  const ms = (x) => `${x.toFixed(1)} ms`;
  const rows = [
    ['quire.wasm raw', 'wasm_bytes', kb],
    ['quire.wasm gzip -9', 'wasm_gzip_bytes', kb],
    ['quire.mjs raw', 'glue_bytes', kb],
    ['quire.mjs gzip -9', 'glue_gzip_bytes', kb],
    ['import (median)', 'import_ms', ms],
    ['instantiate (median)', 'instantiate_ms', ms],
    ['import + instantiate (median)', 'ready_ms', ms],
    ['process wall time (median)', 'process_ms', ms],
  ];
  console.log(`${rounds} interleaved rounds, Node ${process.versions.node}\n  before: ${builds.before}\n  after:  ${builds.after}\n`);
  console.log(`${''.padEnd(32)}${'before'.padStart(14)}${'after'.padStart(14)}${'after/before'.padStart(14)}`);
  for (const [label, key, fmt] of rows) {
    const a = result.before[key], b = result.after[key];
    console.log(`${label.padEnd(32)}${fmt(a).padStart(14)}${fmt(b).padStart(14)}${`${(b / a).toFixed(3)}x`.padStart(14)}`);
  }
}
