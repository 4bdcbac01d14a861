// Shared by the Node and browser runners: command-line options, the git commit, the artifact
// sizes, where the benchmark module is, and writing a reading (to a temporary name, then renamed).
import { execFileSync } from 'node:child_process';
import { readFileSync, renameSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { gzipSync } from 'node:zlib';

export const repo = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
export const dist = path.resolve(process.env.QUIRE_DIST ?? path.join(repo, 'js', 'dist'));
/** The benchmark module's folder (quire-bench.mjs + quire-bench.wasm): `make wasm` builds it there. */
export const benchModuleDir = path.resolve(process.env.QUIRE_BENCH_MODULE ?? path.join(repo, 'build', 'wasm', 'bench'));

const args = process.argv.slice(2);
export const flag = (name) => args.includes(name);
export const option = (name) => {
  const i = args.indexOf(name);
  return i >= 0 ? args[i + 1] : undefined;
};

export function git(...a) {
  try {
    return execFileSync('git', a, { cwd: repo, encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] }).trim();
  } catch {
    return '';
  }
}

/** The build's commit and whether tracked files differ from it. */
export const commitInfo = () => ({ commit: git('rev-parse', 'HEAD') || 'unknown', dirty: git('status', '--porcelain', '--untracked-files=no') !== '' });

/** The shipped .wasm and its JS glue (the npm package's, not the benchmark module's), raw and gzipped (level 9). */
export function artifactSizes() {
  const wasmBytes = readFileSync(path.join(dist, 'quire.wasm'));
  const glue = readFileSync(path.join(dist, 'quire.mjs'));
  const wasmGzip = gzipSync(wasmBytes, { level: 9 }).length;
  return {
    artifact_bytes: wasmBytes.length + glue.length,
    artifact_gzip_bytes: wasmGzip + gzipSync(glue, { level: 9 }).length,
    // The shipped sizes bench/size-budget.json holds (make test-size), apart.
    wasm_bytes: wasmBytes.length,
    wasm_gzip_bytes: wasmGzip,
    glue_bytes: glue.length,
  };
}

/** Writes the reading to --out (or stdout), reports failed cases; returns the exit code. */
export function writeReading(reading) {
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
  return failed.length ? 1 : 0;
}

/** The benchmark module loaded in Node (bench-module.mjs). */
export async function loadBenchInNode() {
  const { loadBench } = await import('./bench-module.mjs');
  const glue = path.join(benchModuleDir, 'quire-bench.mjs');
  let bytes;
  try {
    bytes = readFileSync(path.join(benchModuleDir, 'quire-bench.wasm'));
  } catch {
    throw new Error(`no benchmark module in ${benchModuleDir} (make wasm builds it; QUIRE_BENCH_MODULE points elsewhere)`);
  }
  return loadBench(pathToFileURL(glue).href, bytes);
}
