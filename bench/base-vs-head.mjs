#!/usr/bin/env node
// Base against head on the three targets, on the same machine at the same time: builds BASE (a
// git ref) in its own checkout (natively, and its wasm module and npm package), then runs the
// base's and the head's runners in fresh processes, interleaved (base, head, head, base, ...) for
// several rounds: `quire-bench` natively, `bench/run.mjs` in Node, `bench/run-browser.mjs` in
// Chromium. Per case it compares the medians of the rounds' medians, and names a case slower when
// head's median exceeds base's by more than its spread: the larger of the rounds' range (max - min
// over median, either side) and the samples' spread within a run (p95 over median).
//
//   node bench/base-vs-head.mjs --base REF [--rounds 2] [--targets native,wasm-node,wasm-browser]
//                               [--base-dir DIR] [--filter TEXT] [--quick] [--seconds S] [--no-peers] [--resume]
//
// The head must be built (`make native js`); `make bench-base` does that first. --base-dir names
// an existing checkout of BASE to build and use (default build/base-src, a git worktree made
// here). Writes build/base-vs-head/{base,head}-TARGET.json (medians of medians, readings of
// bench/reading.schema.json) and summary.json; prints one table a target. --no-peers leaves the
// peer libraries out of the Node runs (they are not the change being judged). --resume reads a
// run's reading left in build/base-vs-head/ by an interrupted comparison instead of running it again. Speed is a reading:
// the exit status is 0 whatever the figures say.
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, symlinkSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const repo = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const args = process.argv.slice(2);
const option = (name, fallback) => {
  const i = args.indexOf(name);
  return i >= 0 ? args[i + 1] : fallback;
};
const base = option('--base');
if (!base) {
  console.error('usage: node bench/base-vs-head.mjs --base REF [--rounds N] [--targets native,wasm-node,wasm-browser] [--base-dir DIR] [--filter TEXT] [--quick] [--seconds S]');
  process.exit(2);
}
const rounds = Number(option('--rounds', '2'));
const targets = option('--targets', 'native,wasm-node,wasm-browser').split(',');
for (const t of targets) {
  if (!['native', 'wasm-node', 'wasm-browser'].includes(t)) {
    console.error(`unknown target ${t}: native, wasm-node or wasm-browser`);
    process.exit(2);
  }
}
const benchArgs = [
  ...(args.includes('--quick') ? ['--quick'] : []),
  ...(option('--filter') ? ['--filter', option('--filter')] : []),
  ...(option('--seconds') ? ['--seconds', option('--seconds')] : []),
];
const run = (cmd, a, opts = {}) => execFileSync(cmd, a, { cwd: repo, stdio: ['ignore', 'pipe', 'inherit'], encoding: 'utf8', ...opts });

// --- the base's checkout and build ---------------------------------------------------------------
const work = path.join(repo, 'build', 'base-vs-head');
mkdirSync(work, { recursive: true });
const commit = run('git', ['rev-parse', base]).trim();
const src = path.resolve(option('--base-dir', path.join(repo, 'build', 'base-src')));
if (!existsSync(src)) {
  run('git', ['worktree', 'add', '--detach', src, commit]);
} else if (run('git', ['rev-parse', 'HEAD'], { cwd: src }).trim() !== commit) {
  run('git', ['checkout', '--detach', commit], { cwd: src });
}
// The base uses the head's dependencies and npm modules (the same pinned versions a fresh
// bootstrap would fetch), not copies of them.
for (const shared of ['.deps', 'js/node_modules', 'bench/node_modules']) {
  const at = path.join(src, shared);
  if (!existsSync(at) && existsSync(path.join(repo, shared))) symlinkSync(path.join(repo, shared), at);
}
const wantsWasm = targets.some((t) => t.startsWith('wasm'));
const flags = `${process.env.CMAKE_FLAGS ?? ''} -DQUIRE_TESTS=OFF`.trim();
process.stderr.write(`building the base ${commit.slice(0, 12)} in ${src} (${wantsWasm ? 'native and js' : 'native'})\n`);
run('make', ['--no-print-directory', 'native', ...(wantsWasm ? ['js'] : []), `CMAKE_FLAGS=${flags}`], { cwd: src, stdio: ['ignore', 'ignore', 'inherit'] });

// Each tree's runner for a target: [executable, words before its arguments], run in the tree.
function runner(tree, target) {
  if (target === 'wasm-node') return ['node', [path.join(tree, 'bench', 'run.mjs')]];
  if (target === 'wasm-browser') return ['node', [path.join(tree, 'bench', 'run-browser.mjs')]];
  const own = path.join(tree, 'build', 'native', 'bench', 'quire-bench');
  // A base from before the benchmarks left the CLI has them as `quire bench`.
  if (existsSync(own)) return [own, []];
  return [path.join(tree, 'build', 'native', 'native', 'quire'), ['bench']];
}
const trees = { base: src, head: repo };

// --- interleaved rounds --------------------------------------------------------------------------
const readings = {};
for (const t of targets) readings[t] = { base: [], head: [] };
for (let r = 0; r < rounds; r++) {
  const order = r % 2 === 0 ? ['base', 'head'] : ['head', 'base'];
  for (const t of targets) {
    for (const which of order) {
      const out = path.join(work, `${which}-${t}-${r}.json`);
      process.stderr.write(`round ${r + 1}/${rounds}: ${t} ${which}\n`);
      const [exe, words] = runner(trees[which], t);
      const own = t === 'wasm-node' && args.includes('--no-peers') ? ['--no-peers'] : [];
      if (!(args.includes('--resume') && existsSync(out))) {
        run(exe, [...words, ...benchArgs, ...own, '--out', out], { cwd: trees[which], stdio: ['ignore', 'ignore', 'inherit'] });
      }
      readings[t][which].push(JSON.parse(readFileSync(out, 'utf8')));
    }
  }
}

// --- medians of medians, spreads, verdicts -------------------------------------------------------
const median = (xs) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length % 2 ? s[(s.length - 1) / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2;
};
// A reading whose case figures are the medians over its rounds; each case keeps its rounds' medians.
function combine(list) {
  const first = structuredClone(list[0]);
  for (const c of first.cases) {
    const same = list.map((r) => r.cases.find((x) => x.name === c.name)).filter((x) => x?.time_ns);
    if (!c.time_ns) continue;
    c.round_medians = same.map((x) => x.time_ns.median);
    for (const k of Object.keys(c.time_ns)) c.time_ns[k] = median(same.map((x) => x.time_ns[k]));
  }
  return first;
}
// How far apart one side's rounds are, relative to their median: (max - min) / median.
const spreadOf = (xs) => (xs.length < 2 ? 0 : (Math.max(...xs) - Math.min(...xs)) / median(xs));

const summary = { base: { ref: base, commit }, head: { commit: run('git', ['rev-parse', 'HEAD']).trim() }, rounds, args: benchArgs, targets: {} };
for (const t of targets) {
  const sides = { base: combine(readings[t].base), head: combine(readings[t].head) };
  for (const which of ['base', 'head']) writeFileSync(path.join(work, `${which}-${t}.json`), JSON.stringify(sides[which], null, 1));
  const rows = [];
  for (const h of sides.head.cases) {
    const b = sides.base.cases.find((c) => c.name === h.name);
    if (!b?.time_ns || !h.time_ns) continue;
    const ratio = h.time_ns.median / b.time_ns.median;
    // Two rounds can agree by chance: the samples' own spread within a run (p95 over median)
    // counts too.
    const within = (c) => (c.time_ns.p95 && c.time_ns.median ? c.time_ns.p95 / c.time_ns.median - 1 : 0);
    const spread = Math.max(spreadOf(b.round_medians), spreadOf(h.round_medians), within(b), within(h));
    const verdict = ratio - 1 > spread ? 'slower' : 1 / ratio - 1 > spread ? 'faster' : 'same';
    rows.push({ name: h.name, base_ns: b.time_ns.median, head_ns: h.time_ns.median, ratio, spread, verdict });
  }
  const onlyBase = sides.base.cases.filter((b) => !sides.head.cases.some((h) => h.name === b.name)).map((c) => c.name);
  const onlyHead = sides.head.cases.filter((h) => !sides.base.cases.some((b) => b.name === h.name)).map((c) => c.name);
  summary.targets[t] = { cases: rows, only_base: onlyBase, only_head: onlyHead };

  const ms = (ns) => (ns >= 1e6 ? `${(ns / 1e6).toFixed(2)} ms` : `${(ns / 1e3).toFixed(2)} us`).padStart(11);
  console.log(`\n${t}: base ${base} (${commit.slice(0, 12)}) against head, ${rounds} interleaved rounds, medians of medians`);
  console.log(`${'case'.padEnd(48)} ${'base'.padStart(11)} ${'head'.padStart(11)} ${'head/base'.padStart(9)} ${'spread'.padStart(7)}  verdict`);
  for (const r of rows) {
    console.log(`${r.name.padEnd(48)} ${ms(r.base_ns)} ${ms(r.head_ns)} ${r.ratio.toFixed(2).padStart(8)}x ${`${(r.spread * 100).toFixed(0)}%`.padStart(7)}  ${r.verdict}`);
  }
  const count = (v) => rows.filter((r) => r.verdict === v).length;
  console.log(`${rows.length} cases in both: ${count('slower')} slower beyond their spread, ${count('faster')} faster, ${count('same')} within it` +
    (onlyBase.length ? `; only in base: ${onlyBase.join(', ')}` : '') + (onlyHead.length ? `; only in head: ${onlyHead.length} cases` : ''));
}
writeFileSync(path.join(work, 'summary.json'), JSON.stringify(summary, null, 1));
console.log(`\nreadings and summary.json in ${path.relative(repo, work)}/`);
