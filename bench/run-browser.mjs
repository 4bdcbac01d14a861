#!/usr/bin/env node
// The browser runner: serves a small tree on localhost, opens bench/browser/ in headless
// Chromium (Debian's, through playwright-core), runs the C++ cases of the benchmark module
// (quire-bench.wasm) in a Web Worker, and saves the reading. Start-up is the npm package's.
//   node bench/run-browser.mjs [--quick] [--filter TEXT] [--large] [--seconds S] [--out FILE]
import { cpSync, mkdtempSync, rmSync } from 'node:fs';
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
  const options = { filter: option('--filter') ?? '', quick: flag('--quick'), large: flag('--large'), seconds: Number(option('--seconds') ?? 0) };
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
