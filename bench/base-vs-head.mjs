#!/usr/bin/env node
// Base against head, on the same machine at the same time: builds BASE (a git ref) natively in
// build/base-*, then runs the base and head native runners in fresh processes, interleaved
// (base, head, head, base, ...) for several rounds, and compares the per-case medians of the
// rounds' medians. Native only: both builds must exist side by side.
//
//   node bench/base-vs-head.mjs --base REF [--rounds 3] [--filter TEXT] [--quick]
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
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
  console.error('usage: node bench/base-vs-head.mjs --base REF [--rounds N] [--filter TEXT] [--quick]');
  process.exit(2);
}
const rounds = Number(option('--rounds', '3'));
const benchArgs = [...(args.includes('--quick') ? ['--quick'] : []), ...(option('--filter') ? ['--filter', option('--filter')] : [])];
const run = (cmd, a, opts = {}) => execFileSync(cmd, a, { cwd: repo, stdio: ['ignore', 'pipe', 'inherit'], encoding: 'utf8', ...opts });

const work = path.join(repo, 'build', 'base-vs-head');
const src = path.join(repo, 'build', 'base-src');
mkdirSync(work, { recursive: true });
const commit = run('git', ['rev-parse', base]).trim();
if (existsSync(src)) run('git', ['worktree', 'remove', '--force', src]);
run('git', ['worktree', 'add', '--detach', src, commit]);
const baseBuild = path.join(repo, 'build', 'base-native');
run('cmake', ['-S', src, '-B', baseBuild, '-G', 'Ninja', '-DCMAKE_BUILD_TYPE=Release', `-DQUIRE_DEPS_DIR=${path.join(repo, '.deps', 'src')}`, '-DQUIRE_TESTS=OFF']);
run('cmake', ['--build', baseBuild, '-j', '2']);
// The runner is `quire-bench` (bench/) since the benchmarks left the CLI; a base from before that
// has it as `quire bench` / `quire compare`. Each runner: [executable, words before its arguments].
function runner(build) {
  const own = path.join(build, 'bench', 'quire-bench');
  if (existsSync(own)) return { bench: [own, []], compare: [own, ['compare']] };
  const cli = path.join(build, 'native', 'quire');
  return { bench: [cli, ['bench']], compare: [cli, ['compare']] };
}
const binaries = { base: runner(baseBuild), head: runner(path.join(repo, 'build', 'native')) };

const readings = { base: [], head: [] };
for (let r = 0; r < rounds; r++) {
  const order = r % 2 === 0 ? ['base', 'head'] : ['head', 'base'];
  for (const which of order) {
    const out = path.join(work, `${which}-${r}.json`);
    process.stderr.write(`round ${r + 1}/${rounds}: ${which}\n`);
    const [exe, words] = binaries[which].bench;
    run(exe, [...words, ...benchArgs, '--out', out], { stdio: ['ignore', 'ignore', 'ignore'] });
    readings[which].push(JSON.parse(readFileSync(out, 'utf8')));
  }
}

// Per case, the median over rounds of each figure.
const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
function combine(list, label) {
  const first = structuredClone(list[0]);
  first.target = 'native';
  first.build.label = label;
  for (const c of first.cases) {
    const same = list.map((r) => r.cases.find((x) => x.name === c.name)).filter(Boolean);
    for (const k of Object.keys(c.time_ns)) c.time_ns[k] = median(same.map((x) => x.time_ns[k]));
    c.rounds = same.length;
  }
  return first;
}
const files = {};
for (const which of ['base', 'head']) {
  files[which] = path.join(work, `${which}.json`);
  writeFileSync(files[which], JSON.stringify(combine(readings[which], which), null, 1));
}
console.log(`base ${base} (${commit.slice(0, 12)}) against head, ${rounds} interleaved rounds, medians of medians:\n`);
try {
  const [exe, words] = binaries.head.compare;
  process.stdout.write(run(exe, [...words, files.base, files.head]).replace(/native {2}/, 'base    '));
} catch (e) {
  process.stdout.write(e.stdout ?? '');
  process.exit(1);
}
