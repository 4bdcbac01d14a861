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
//   node bench/startup-breakdown.mjs [--dist js/dist] [--rounds 7] [--json]
import { execFileSync } from 'node:child_process';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { flag, option as commonOption, repo } from './runner-common.mjs';

const option = (name, fallback) => commonOption(name) ?? fallback;
const dist = path.resolve(option('--dist', path.join(repo, 'js', 'dist')));
const rounds = Number(option('--rounds', '7'));

const url = (f) => JSON.stringify(pathToFileURL(path.join(dist, f)).href);

// The breakdown: the glue driven by hand, each step timed.
const breakdown = `
const now = () => performance.now();
const t0 = now();
const pkg = await import(${url('index.js')});
const t1 = now();
const { default: create } = await import(${url('quire.mjs')});
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
  before_script_ms: t0, package_js_ms: t1 - t0, read_ms: t3 - t2, compile_ms: t4 - t3, instantiate_ms: instantiate,
  runtime_init_ms: runtime, embind_register_ms: embind, embind_register_calls: embindCalls, glue_other_ms: t5 - t4 - instantiate - runtime,
}));`;

// What a user pays: import the package, await init().
const cold = `
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

/** Fresh node processes, interleaved: the empty one, the cold import + init(), the breakdown. */
export function measure(n) {
  const samples = { empty: [], cold: [], breakdown: [] };
  for (let r = 0; r < n; r++) {
    samples.empty.push(run(`process.stdout.write(JSON.stringify({ before_script_ms: performance.now() }))`));
    samples.cold.push(run(cold));
    samples.breakdown.push(run(breakdown));
  }
  const medians = (list) => Object.fromEntries(Object.keys(list[0]).map((k) => [k, median(list.map((s) => s[k]))]));
  return { rounds: n, node: process.versions.node, dist, empty_node: medians(samples.empty), cold_import_init: medians(samples.cold), breakdown: medians(samples.breakdown) };
}

if (import.meta.url === pathToFileURL(process.argv[1]).href) {
  const result = measure(rounds);
  if (flag('--json')) {
    console.log(JSON.stringify(result, null, 1));
  } else {
    const ms = (x) => `${x.toFixed(1)} ms`;
    const b = result.breakdown;
    console.log(`fresh node ${result.node}, ${rounds} rounds, medians`);
    console.log(`  empty node process (wall)                 ${ms(result.empty_node.process_ms)}  (script starts at ${ms(result.empty_node.before_script_ms)})`);
    console.log(`  import + init() (first line to resolved)  ${ms(result.cold_import_init.import_init_ms)}  (process wall ${ms(result.cold_import_init.process_ms)})`);
    console.log('  breakdown (glue driven by hand):');
    console.log(`    the package's JS (index.js + imports)   ${ms(b.package_js_ms)}`);
    console.log(`    read quire.wasm                         ${ms(b.read_ms)}`);
    console.log(`    WebAssembly.compile                     ${ms(b.compile_ms)}`);
    console.log(`    WebAssembly.instantiate                 ${ms(b.instantiate_ms)}`);
    console.log(`    runtime init (ctors)                    ${ms(b.runtime_init_ms)}  of which Embind's JS registrations ${ms(b.embind_register_ms)} (${b.embind_register_calls} calls)`);
    console.log(`    rest of the glue                        ${ms(b.glue_other_ms)}`);
  }
}
