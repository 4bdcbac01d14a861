#!/usr/bin/env node
// The browser runner: serves a small tree on localhost, opens bench/browser/ in headless
// Chromium (Debian's, through playwright-core), runs the C++ cases of the benchmark module
// (quire-bench.wasm) in a Web Worker, and saves the reading. Start-up is the npm package's.
//   node bench/run-browser.mjs [--quick] [--filter TEXT] [--large] [--seconds S] [--out FILE] [--no-peers]
// When the run has format.find or format.sum on the customers, the page then measures DuckDB-Wasm
// on the same (bench/browser/peers-duckdb.mjs); --no-peers leaves it out.
import { cpSync, existsSync, mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { serve, launchChromium } from '../js/test/browser.mjs';
import { artifactSizes, benchModuleDir, commitInfo, dist, flag, option, writeReading } from './runner-common.mjs';

const here = path.dirname(fileURLToPath(import.meta.url));

// Serve a small tree: the page, its worker, the package build, and the benchmark module with its
// JavaScript face.
const root = mkdtempSync(path.join(os.tmpdir(), 'quire-bench-browser-'));
cpSync(path.join(here, 'browser'), path.join(root, 'bench', 'browser'), { recursive: true });
cpSync(path.join(here, 'bench-module.mjs'), path.join(root, 'bench', 'bench-module.mjs'));
for (const f of ['quire-bench.mjs', 'quire-bench.wasm']) cpSync(path.join(benchModuleDir, f), path.join(root, 'bench', 'module', f));
cpSync(dist, path.join(root, 'js', 'dist'), { recursive: true });
cpSync(path.join(here, 'peer-measure.mjs'), path.join(root, 'bench', 'peer-measure.mjs'));
// DuckDB-Wasm's ES module, its EH worker and module, and the ES modules of the apache-arrow and
// flatbuffers and tslib it imports (the page's import map names them), from bench/node_modules.
const duckdbDir = path.join(here, 'node_modules', '@duckdb', 'duckdb-wasm');
for (const f of ['duckdb-browser.mjs', 'duckdb-browser-eh.worker.js', 'duckdb-eh.wasm']) cpSync(path.join(duckdbDir, 'dist', f), path.join(root, 'dep', 'duckdb-wasm', f));
cpSync(path.join(duckdbDir, 'package.json'), path.join(root, 'dep', 'duckdb-wasm', 'package.json'));
const dependencyOfDuckdb = (name) => [path.join(duckdbDir, 'node_modules', name), path.join(here, 'node_modules', name)].find((d) => existsSync(d));
const modulesOnly = (src) => !/\.(ts|map)$/.test(src) || src.endsWith('.mjs');
cpSync(dependencyOfDuckdb('apache-arrow'), path.join(root, 'dep', 'apache-arrow'), { recursive: true, filter: modulesOnly });
cpSync(path.join(dependencyOfDuckdb('flatbuffers'), 'mjs'), path.join(root, 'dep', 'flatbuffers', 'mjs'), { recursive: true });
cpSync(path.join(dependencyOfDuckdb('tslib'), 'tslib.es6.mjs'), path.join(root, 'dep', 'tslib', 'tslib.es6.mjs'));

const server = await serve(root);
const browser = await launchChromium();
let reading;
try {
  const page = await browser.newPage();
  page.on('pageerror', (e) => process.stderr.write(`page error: ${e}\n`));
  await page.goto(`${server.url}/bench/browser/index.html`);
  const meta = {
    schema: 'quire-reading/1',
    target: 'wasm-browser',
    runtime: { name: 'chromium', version: browser.version() },
    build: commitInfo(),
    machine: { cpu: os.cpus()[0]?.model ?? 'unknown', logical_cores: os.cpus().length, os: `${os.type()} ${os.release()}` },
    started_at: new Date().toISOString().replace(/\.\d+Z$/, 'Z'),
    startup: artifactSizes(),
  };
  const options = { filter: option('--filter') ?? '', quick: flag('--quick'), large: flag('--large'), seconds: Number(option('--seconds') ?? 0), peers: !flag('--no-peers') };
  const timer = setInterval(async () => {
    const p = await page.evaluate(() => window.lastProgress).catch(() => undefined);
    if (p) process.stderr.write(`\r${p.padEnd(70)}`);
  }, 500);
  // The host's 1-minute load average before and after the cases (as run.mjs records it).
  meta.machine.load_average = { start: os.loadavg()[0] };
  try {
    reading = await page.evaluate(([o, m]) => window.runBench(o, m), [options, meta]);
    reading.machine.load_average.end = os.loadavg()[0];
  } finally {
    clearInterval(timer);
    process.stderr.write(`\r${' '.repeat(80)}\r`);
  }
} finally {
  await browser.close();
  await server.close();
  rmSync(root, { recursive: true, force: true });
}

process.exit(writeReading(reading));
