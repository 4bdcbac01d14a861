#!/usr/bin/env node
// The shipped sizes against their checked-in budget (bench/size-budget.json), and the cold start
// measured beside them. Run by `make test-size` (part of `make test`).
//
// Sizes are deterministic for a given source and toolchain: the gate fails when the build's
// quire.wasm (raw or gzipped at zlib level 9, as the readings count it), its glue quire.mjs or the
// npm tarball is larger than its budget. The cold start — a fresh `node` that imports the package
// and awaits init(), median of 7 — is printed, never asserted: the machines are shared and noisy.
// A change that grows a size past its budget raises the budget in the same commit and says why.
//
//   node bench/size-gate.mjs [--dist js/dist] [--budget bench/size-budget.json] [--rounds 7] [--json]
import { execFileSync } from 'node:child_process';
import { cpSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { gzipSync } from 'node:zlib';
import { measure } from './startup-breakdown.mjs';
import { flag, option as commonOption, repo } from './runner-common.mjs';

const option = (name, fallback) => commonOption(name) ?? fallback;
const dist = path.resolve(option('--dist', process.env.QUIRE_DIST ?? path.join(repo, 'js', 'dist')));
const budgetFile = path.resolve(option('--budget', path.join(repo, 'bench', 'size-budget.json')));
const rounds = Number(option('--rounds', '7'));

/** The shipped files' sizes and the npm tarball's, packed from `dist` as js/test/package.test.mjs does. */
export function shippedSizes(dir) {
  const wasm = readFileSync(path.join(dir, 'quire.wasm'));
  const glue = readFileSync(path.join(dir, 'quire.mjs'));
  const gz = (b) => gzipSync(b, { level: 9 }).length;
  const work = mkdtempSync(path.join(os.tmpdir(), 'quire-size-'));
  try {
    const stage = path.join(work, 'stage');
    cpSync(path.join(repo, 'js', 'package.json'), path.join(stage, 'package.json'));
    cpSync(dir, path.join(stage, 'dist'), { recursive: true });
    execFileSync('npm', ['pack', '--pack-destination', work, '--loglevel=error'], { cwd: stage, encoding: 'utf8' });
    const tarball = readdirSync(work).find((f) => f.endsWith('.tgz'));
    if (!tarball) throw new Error('size-gate: npm pack wrote no tarball');
    return {
      wasm_bytes: wasm.length,
      wasm_gzip_bytes: gz(wasm),
      glue_bytes: glue.length,
      glue_gzip_bytes: gz(glue),
      tarball_bytes: statSync(path.join(work, tarball)).size,
    };
  } finally {
    rmSync(work, { recursive: true, force: true });
  }
}

const budget = JSON.parse(readFileSync(budgetFile, 'utf8'));
const sizes = shippedSizes(dist);
const over = Object.keys(budget.max).filter((k) => !(k in sizes) || sizes[k] > budget.max[k]);
const start = rounds > 0 ? measure(rounds) : null;

if (flag('--json')) {
  console.log(JSON.stringify({ dist, sizes, budget: budget.max, over, start }, null, 1));
} else {
  console.log(`size gate: ${dist} against ${path.relative(repo, budgetFile)}`);
  for (const [k, max] of Object.entries(budget.max)) {
    const v = sizes[k];
    console.log(`  ${k.padEnd(16)} ${String(v).padStart(10)} B  budget ${String(max).padStart(10)} B  ${v <= max ? 'ok' : 'OVER'}`);
  }
  if (start) {
    const c = start.cold_import_init;
    console.log(
      `cold start (measured, not asserted; fresh node ${start.node}, median of ${rounds}): import + init() ${c.import_init_ms.toFixed(1)} ms, ` +
        `process ${c.process_ms.toFixed(1)} ms (an empty node: ${start.empty_node.process_ms.toFixed(1)} ms); load average ${os.loadavg()[0].toFixed(2)}`,
    );
    const b = start.breakdown;
    console.log(
      `  package JS ${b.package_js_ms.toFixed(1)} ms, read ${b.read_ms.toFixed(1)} ms, compile ${b.compile_ms.toFixed(1)} ms, ` +
        `instantiate ${b.instantiate_ms.toFixed(1)} ms, runtime init ${b.runtime_init_ms.toFixed(1)} ms (Embind registrations ${b.embind_register_ms.toFixed(1)} ms)`,
    );
  }
}
if (over.length) {
  console.error(`size gate: over budget: ${over.join(', ')} (raise bench/size-budget.json in the commit that grows them, and say why)`);
  process.exit(1);
}
