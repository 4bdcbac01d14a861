#!/usr/bin/env node
// The tail of a cold lookup through the npm package: format.open(bytes), find('id', K), close(),
// timed one call at a time after 300 unmeasured, for 1,000 random ids and then 1,000 times one id;
// prints the median, p99 (and its ratio to the median) and the slowest call. Issue 19 asks p99 at
// most twice the median (docs/performance.md, "Where issue 19's targets stand").
//
//   node bench/find-tail.mjs FILE.quire [--dist js/dist] [--rows N]
//
// FILE.quire has an integer column `id` holding 1..N (N = --rows, default 200,000), as the
// customers written by `quire convert` from the benchmark's NDJSON have. Each answer is checked.
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

const args = process.argv.slice(2);
const option = (name, fallback) => {
  const i = args.indexOf(name);
  return i >= 0 ? args[i + 1] : fallback;
};
const file = args.find((a, i) => !a.startsWith('--') && !(i > 0 && args[i - 1].startsWith('--')));
if (!file) {
  console.error('usage: node bench/find-tail.mjs FILE.quire [--dist js/dist] [--rows N]');
  process.exit(2);
}
const dist = path.resolve(option('--dist', path.join(path.dirname(fileURLToPath(import.meta.url)), '..', 'js', 'dist')));
const rows = Number(option('--rows', 200000));
const quire = await import(pathToFileURL(path.join(dist, 'index.js')).href);
await quire.init();
const bytes = new Uint8Array(readFileSync(file));

let seed = 7; // a fixed sequence of ids, the same every run
const randomId = () => 1 + Math.floor((seed = (seed * 1103515245 + 12345) % 2147483648) / 2147483648 * rows);
const findOnce = (id) => {
  const f = quire.format.open(bytes);
  try {
    return f.find('id', id);
  } finally {
    f.close();
  }
};
for (let i = 0; i < 300; i++) findOnce(randomId());

const summary = (times) => {
  times.sort((a, b) => a - b);
  const at = (p) => times[Math.min(times.length - 1, Math.floor(p * times.length))];
  return `median ${at(0.5).toFixed(1)} µs, p99 ${at(0.99).toFixed(1)} µs (${(at(0.99) / at(0.5)).toFixed(2)}x), slowest ${times[times.length - 1].toFixed(1)} µs`;
};
for (const [label, next] of [['1,000 random ids', randomId], [`1,000 times id ${Math.ceil(rows * 0.6)}`, () => Math.ceil(rows * 0.6)]]) {
  const times = [];
  for (let i = 0; i < 1000; i++) {
    const id = next();
    const t0 = performance.now();
    const row = findOnce(id);
    times.push((performance.now() - t0) * 1000);
    if (!row || row.id !== id) throw new Error(`id ${id}: found ${JSON.stringify(row)}`);
  }
  console.log(`${label}: ${summary(times)}`);
}
