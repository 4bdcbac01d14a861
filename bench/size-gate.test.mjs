// The size gate itself (bench/size-gate.mjs): it fails when a size is over its budget, names the
// size, and passes at a budget the build meets. QUIRE_DIST is the package build under test.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';

const here = path.dirname(fileURLToPath(import.meta.url));
const work = mkdtempSync(path.join(tmpdir(), 'quire-size-gate-'));
test.after(() => rmSync(work, { recursive: true, force: true }));

function gate(max) {
  const budget = path.join(work, `budget-${Object.keys(max).join('-')}.json`);
  writeFileSync(budget, JSON.stringify({ max }));
  return spawnSync(process.execPath, [path.join(here, 'size-gate.mjs'), '--budget', budget, '--rounds', '0', '--json'], { encoding: 'utf8' });
}

test('a size over its budget fails the gate and is named', () => {
  const r = gate({ wasm_gzip_bytes: 1000, glue_bytes: 1e9 });
  assert.equal(r.status, 1);
  const out = JSON.parse(r.stdout);
  assert.deepEqual(out.over, ['wasm_gzip_bytes']);
  assert.ok(out.sizes.wasm_gzip_bytes > 1000);
  assert.match(r.stderr, /over budget: wasm_gzip_bytes/);
});

test('sizes within their budget pass, and every size is measured', () => {
  const r = gate({ wasm_bytes: 1e9, wasm_gzip_bytes: 1e9, glue_bytes: 1e9, tarball_bytes: 1e9 });
  assert.equal(r.status, 0, r.stderr);
  const { sizes, over } = JSON.parse(r.stdout);
  assert.deepEqual(over, []);
  // gzip of a wasm module is smaller than the module; the tarball holds the gzipped module.
  assert.ok(sizes.wasm_gzip_bytes > 0 && sizes.wasm_gzip_bytes < sizes.wasm_bytes);
  assert.ok(sizes.tarball_bytes > sizes.wasm_gzip_bytes);
});

test('a budget naming a size the gate does not measure fails', () => {
  const r = gate({ no_such_size: 1 });
  assert.equal(r.status, 1);
  assert.deepEqual(JSON.parse(r.stdout).over, ['no_such_size']);
});
