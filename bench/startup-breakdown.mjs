#!/usr/bin/env node
// Where a fresh Node process's start goes, for the npm package (js/dist): node's own start, the
// package's JavaScript (index.js and every module it imports, the Emscripten glue among them),
// reading quire.wasm, compiling it, instantiating it, and the glue's runtime start after that
// (static constructors: each EMSCRIPTEN_BINDINGS block calls Embind's JS `_embind_register_*`
// imports, timed apart here). Each round is a fresh `node`; medians over the rounds.
//
// Also the figure the size gate prints (bench/size-gate.mjs): a fresh node that imports the
// package and awaits init(), from its first line to init() resolving, and the whole process.
//
// With --base DIST2, the same processes for a second build (the base) are interleaved with the
// first's, round by round, and both are printed: a base-against-head reading on a noisy machine.
//
// With --browser, headless Chromium instead (js/test/browser.mjs's server and browser): each round
// a new browser context (its own empty HTTP cache) loads a page whose module script imports
// index.js and awaits init() (fetch + instantiateStreaming), timed from the script's first line.
//
//   node bench/startup-breakdown.mjs [--dist js/dist] [--base OTHER_DIST] [--rounds 7] [--browser] [--json]
import { execFileSync } from 'node:child_process';
import os from 'node:os';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { flag, option as commonOption, repo } from './runner-common.mjs';

const option = (name, fallback) => commonOption(name) ?? fallback;
const dist = path.resolve(option('--dist', path.join(repo, 'js', 'dist')));
const base = commonOption('--base') ? path.resolve(commonOption('--base')) : undefined;
const rounds = Number(option('--rounds', '7'));

// The breakdown: the glue driven by hand, each step timed.
const breakdownSource = (url) => `
const now = () => performance.now();
const t0 = now();
const pkg = await import(${url('index.js')});
const t1 = now();
const { default: create } = await import(${url('quire.mjs')});
const tg = now();
const { readFile } = await import('node:fs/promises');
const t2 = now();
const bytes = await readFile(new URL(${url('quire.wasm')}));
const t3 = now();
const module = await WebAssembly.compile(bytes);
const t4 = now();
let instantiate = 0, runtime = 0, embind = 0, embindCalls = 0;
await create({
  print() {}, printErr() {},
  instantiateWasm(imports, done) {
    for (const ns of Object.values(imports)) {
      for (const [k, f] of Object.entries(ns)) {
        if (typeof f !== 'function' || !f.name.startsWith('__embind_')) continue;
        ns[k] = function (...a) { const s = now(); try { return f.apply(this, a); } finally { embind += now() - s; embindCalls++; } };
      }
    }
    const s = now();
    WebAssembly.instantiate(module, imports).then((instance) => {
      instantiate = now() - s;
      const r = now();
      done(instance, module);
      runtime = now() - r;
    });
    return {};
  },
});
const t5 = now();
process.stdout.write(JSON.stringify({
  before_script_ms: t0, package_js_ms: t1 - t0, glue_js_ms: tg - t1, read_ms: t3 - t2, compile_ms: t4 - t3, instantiate_ms: instantiate,
  runtime_init_ms: runtime, embind_register_ms: embind, embind_register_calls: embindCalls, glue_other_ms: t5 - t4 - instantiate - runtime,
}));`;

// What a user pays: import the package, await init().
const coldSource = (url) => `
const t0 = performance.now();
const q = await import(${url('index.js')});
await q.init();
process.stdout.write(JSON.stringify({ before_script_ms: t0, import_init_ms: performance.now() - t0 }));`;

function run(source) {
  const t = performance.now();
  const out = execFileSync(process.execPath, ['--input-type=module', '-e', source], { encoding: 'utf8' });
  return { ...JSON.parse(out), process_ms: performance.now() - t };
}

export const median = (xs) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length % 2 ? s[(s.length - 1) / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2;
};

/**
 * Fresh node processes, interleaved: the empty one, the cold import + init(), the breakdown, for
 * each of `dists` in turn within a round. One result per dist (the empty node's samples shared).
 */
export function measureEach(n, dists) {
  const empty = [];
  const samples = dists.map(() => ({ cold: [], breakdown: [] }));
  const scripts = dists.map((d) => {
    const url = (f) => JSON.stringify(pathToFileURL(path.join(d, f)).href);
    return { cold: coldSource(url), breakdown: breakdownSource(url) };
  });
  for (let r = 0; r < n; r++) {
    empty.push(run(`process.stdout.write(JSON.stringify({ before_script_ms: performance.now() }))`));
    dists.forEach((_, i) => {
      samples[i].cold.push(run(scripts[i].cold));
      samples[i].breakdown.push(run(scripts[i].breakdown));
    });
  }
  const medians = (list) => Object.fromEntries(Object.keys(list[0]).map((k) => [k, median(list.map((s) => s[k]))]));
  return dists.map((d, i) => ({
    rounds: n, node: process.versions.node, dist: d, empty_node: medians(empty),
    cold_import_init: medians(samples[i].cold), breakdown: medians(samples[i].breakdown),
  }));
}

/** Fresh node processes, interleaved: the empty one, the cold import + init(), the breakdown. */
export const measure = (n) => measureEach(n, [dist])[0];

/** Headless Chromium: import + init() in a fresh context per sample, `dists` interleaved. Medians. */
export async function measureBrowser(n, dists) {
  const { serve, launchChromium } = await import('../js/test/browser.mjs');
  const { mkdtempSync, rmSync, symlinkSync, writeFileSync } = await import('node:fs');
  const root = mkdtempSync(path.join(os.tmpdir(), 'quire-start-'));
  dists.forEach((d, i) => symlinkSync(d, path.join(root, `d${i}`)));
  writeFileSync(path.join(root, 'start.html'), `<!doctype html><script type="module">
    const d = new URLSearchParams(location.search).get('d');
    const t0 = performance.now();
    const q = await import('./' + d + '/index.js');
    const t1 = performance.now();
    await q.init();
    const t2 = performance.now();
    window.result = { nav_to_script_ms: t0, import_ms: t1 - t0, init_ms: t2 - t1, import_init_ms: t2 - t0 };
  </script>`);
  const server = await serve(root);
  const browser = await launchChromium();
  const samples = dists.map(() => []);
  try {
    for (let r = 0; r < n; r++) {
      for (let i = 0; i < dists.length; i++) {
        const context = await browser.newContext();
        const page = await context.newPage();
        await page.goto(`${server.url}/start.html?d=d${i}`);
        await page.waitForFunction(() => window.result !== undefined, null, { timeout: 30000 });
        const first = await page.evaluate(() => window.result);
        // A second visit in the same context: the HTTP cache (and whatever code Chromium cached
        // with it) warm.
        await page.goto(`${server.url}/start.html?d=d${i}&again`);
        await page.waitForFunction(() => window.result !== undefined, null, { timeout: 30000 });
        const again = await page.evaluate(() => window.result);
        samples[i].push({ ...first, again_import_init_ms: again.import_init_ms, again_import_ms: again.import_ms, again_init_ms: again.init_ms });
        await context.close();
      }
    }
  } finally {
    await browser.close();
    await server.close();
    rmSync(root, { recursive: true, force: true });
  }
  return dists.map((d, i) => ({ rounds: n, dist: d, browser: Object.fromEntries(Object.keys(samples[i][0]).map((k) => [k, median(samples[i].map((s) => s[k]))])) }));
}

if (import.meta.url === pathToFileURL(process.argv[1]).href && flag('--browser')) {
  const results = await measureBrowser(rounds, base ? [base, dist] : [dist]);
  const load = os.loadavg().map((x) => x.toFixed(2)).join(' ');
  if (flag('--json')) console.log(JSON.stringify({ results, load }, null, 1));
  else {
    console.log(`headless Chromium, a new context per sample, ${rounds} rounds, medians; load average at the end ${load}`);
    if (results.length > 1) console.log(`  ${''.padEnd(42)}${'base'.padStart(11)}${'head'.padStart(11)}   (base ${base}, head ${dist})`);
    for (const [label, k] of [['import + init() (script line to resolved)', 'import_init_ms'], ['  import (index.js and what it imports)', 'import_ms'], ['  init() (fetch, instantiateStreaming, ctors)', 'init_ms'], ['navigation to the script', 'nav_to_script_ms'],
      ['a second visit, same context: import + init()', 'again_import_init_ms'], ['  import', 'again_import_ms'], ['  init()', 'again_init_ms']]) {
      console.log(`  ${label.padEnd(42)}${results.map((r) => `${r.browser[k].toFixed(1)} ms`.padStart(11)).join('')}`);
    }
  }
} else if (import.meta.url === pathToFileURL(process.argv[1]).href) {
  const results = measureEach(rounds, base ? [base, dist] : [dist]);
  const load = os.loadavg().map((x) => x.toFixed(2)).join(' ');
  if (flag('--json')) {
    console.log(JSON.stringify(base ? { base: results[0], head: results[1], load } : { ...results[0], load }, null, 1));
  } else {
    const ms = (x) => `${x.toFixed(1)} ms`;
    const cols = results.length;
    const line = (label, f) => console.log(`  ${label.padEnd(42)}${results.map((r) => ms(f(r)).padStart(11)).join('')}`);
    console.log(`fresh node ${results[0].node}, ${rounds} rounds, medians; load average at the end ${load}`);
    if (cols > 1) console.log(`  ${''.padEnd(42)}${'base'.padStart(11)}${'head'.padStart(11)}   (base ${base}, head ${dist})`);
    line('empty node process (wall)', (r) => r.empty_node.process_ms);
    line('  its script starts at', (r) => r.empty_node.before_script_ms);
    line('import + init() (first line to resolved)', (r) => r.cold_import_init.import_init_ms);
    line('  process wall', (r) => r.cold_import_init.process_ms);
    console.log('  breakdown (glue driven by hand):');
    line("  the package's JS (index.js + imports)", (r) => r.breakdown.package_js_ms);
    line('  the glue quire.mjs (if not imported yet)', (r) => r.breakdown.glue_js_ms);
    line('  read quire.wasm', (r) => r.breakdown.read_ms);
    line('  WebAssembly.compile', (r) => r.breakdown.compile_ms);
    line('  WebAssembly.instantiate', (r) => r.breakdown.instantiate_ms);
    line('  runtime init (ctors)', (r) => r.breakdown.runtime_init_ms);
    line(`    of which Embind's JS registrations (${results[0].breakdown.embind_register_calls} calls)`, (r) => r.breakdown.embind_register_ms);
    line('  rest of the glue', (r) => r.breakdown.glue_other_ms);
  }
}
