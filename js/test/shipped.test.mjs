// What the package ships carries no benchmark code: quire.wasm and its glue contain none of the
// strings only the benchmark cases, their generators and the harness contain. The list is
// cmake/check_shipped.cmake's (the same check runs on the native CLI and quire.wasm under ctest).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { dist, repo } from './helpers.mjs';

const script = readFileSync(path.join(repo, 'cmake', 'check_shipped.cmake'), 'utf8');
const forbidden = [...script.match(/set\(forbidden([\s\S]*?)\)/)[1].matchAll(/"([^"]+)"/g)].map((m) => m[1]);

test('the list of benchmark-only strings is read', () => {
  assert.ok(forbidden.length >= 8, `only ${forbidden.length} strings read from check_shipped.cmake`);
  assert.ok(forbidden.includes('customers-200k') && forbidden.includes('benchRun'));
});

test('the package has no benchmark entry point', async () => {
  assert.ok(!existsSync(path.join(dist, 'bench.js')), 'dist/bench.js is there (a stale build?)');
  const quire = await import(pathToFileURL(path.join(dist, 'index.js')).href);
  assert.ok('json' in quire && 'format' in quire, 'index.js is not the package');
  assert.equal('bench' in quire, false);
});

for (const file of ['quire.wasm', 'quire.mjs']) {
  test(`${file} carries no benchmark case, generator or harness`, () => {
    const bytes = readFileSync(path.join(dist, file));
    // latin1: one character per byte, so a byte search cannot be upset by invalid UTF-8.
    const text = bytes.toString('latin1');
    // A control that every build carries, so that a search of the wrong bytes cannot pass.
    assert.ok(text.includes(file === 'quire.wasm' ? 'INVALID_JSON' : 'createQuireModule'), `${file} is not a build of quire`);
    const found = forbidden.filter((word) => text.includes(word));
    assert.deepEqual(found, [], `${file} carries benchmark code`);
  });
}

test('the glue evaluates no code (-sDYNAMIC_EXECUTION=0), so a page can load it without \'unsafe-eval\' in its CSP', () => {
  const glue = readFileSync(path.join(dist, 'quire.mjs'), 'utf8');
  assert.ok(glue.includes('createQuireModule'), 'quire.mjs is not a build of quire');
  // Embind's invokers and emval's method callers are the places 3.1.6 builds code from strings.
  assert.deepEqual(glue.match(/new Function\b|\beval\(/g) ?? [], []);
});
