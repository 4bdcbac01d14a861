#!/usr/bin/env node
// The browser runner: serves the repository on localhost, opens bench/browser/ in headless
// Chromium (Debian's, through playwright-core), runs the C++ cases in a Web Worker, and saves the
// reading.   node bench/run-browser.mjs [--quick] [--filter TEXT] [--large] [--seconds S] [--out FILE]
import { execFileSync } from 'node:child_process';
import { cpSync, mkdtempSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { gzipSync } from 'node:zlib';
import { serve, launchChromium } from '../js/test/browser.mjs';

const here = path.dirname(fileURLToPath(import.meta.url));
const repo = path.resolve(here, '..');
const dist = path.resolve(process.env.QUIRE_DIST ?? path.join(repo, 'js', 'dist'));
const args = process.argv.slice(2);
const flag = (name) => args.includes(name);
const option = (name) => {
  const i = args.indexOf(name);
  return i >= 0 ? args[i + 1] : undefined;
};

function git(...a) {
  try {
    return execFileSync('git', a, { cwd: repo, encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] }).trim();
  } catch {
    return '';
  }
}

// Serve a small tree: the page, its worker, and the package build.
const root = mkdtempSync(path.join(os.tmpdir(), 'quire-bench-browser-'));
cpSync(path.join(here, 'browser'), path.join(root, 'bench', 'browser'), { recursive: true });
cpSync(dist, path.join(root, 'js', 'dist'), { recursive: true });

const wasmBytes = readFileSync(path.join(dist, 'quire.wasm'));
const glue = readFileSync(path.join(dist, 'quire.mjs'));
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
    build: { commit: git('rev-parse', 'HEAD') || 'unknown', dirty: git('status', '--porcelain', '--untracked-files=no') !== '' },
    machine: { cpu: os.cpus()[0]?.model ?? 'unknown', logical_cores: os.cpus().length, os: `${os.type()} ${os.release()}` },
    started_at: new Date().toISOString().replace(/\.\d+Z$/, 'Z'),
    startup: {
      artifact_bytes: wasmBytes.length + glue.length,
      artifact_gzip_bytes: gzipSync(wasmBytes, { level: 9 }).length + gzipSync(glue, { level: 9 }).length,
    },
  };
  const options = { filter: option('--filter') ?? '', quick: flag('--quick'), large: flag('--large'), seconds: Number(option('--seconds') ?? 0) };
  const timer = setInterval(async () => {
    const p = await page.evaluate(() => window.lastProgress).catch(() => undefined);
    if (p) process.stderr.write(`\r${p.padEnd(70)}`);
  }, 500);
  try {
    reading = await page.evaluate(([o, m]) => window.runBench(o, m), [options, meta]);
  } finally {
    clearInterval(timer);
    process.stderr.write(`\r${' '.repeat(80)}\r`);
  }
} finally {
  await browser.close();
  await server.close();
  rmSync(root, { recursive: true, force: true });
}

const text = JSON.stringify(reading, null, 1) + '\n';
const out = option('--out');
if (out) {
  const tmp = `${out}.tmp-${process.pid}`;
  writeFileSync(tmp, text);
  renameSync(tmp, out);
  process.stderr.write(`wrote ${out} (${reading.cases.length} cases)\n`);
} else {
  process.stdout.write(text);
}
const failed = reading.cases.filter((c) => c.error);
for (const c of failed) process.stderr.write(`case ${c.name} failed: ${c.error}\n`);
process.exit(failed.length ? 1 : 0);
