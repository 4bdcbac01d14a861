// The benchmark module (quire-bench.wasm through bench-module.mjs): readings valid against the
// schema, checksums that do not depend on the run, inputs the same bytes the cases measure (read
// back with the npm package). Run by `make test-bench-smoke`:  node --test bench/bench.test.mjs
import { test } from 'node:test';
import assert from 'node:assert/strict';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { dist, loadBenchInNode } from './runner-common.mjs';
import { validate } from './validate-reading.mjs';

const bench = await loadBenchInNode();
const quire = await import(pathToFileURL(path.join(dist, 'index.js')).href);
await quire.init();

test('list has the JSON cases', () => {
  const names = bench.list().map((c) => c.name);
  assert.ok(names.includes('json.check/records-1mib'));
  assert.ok(names.includes('json.parse/nested-depth-500'));
});

test('a quick run writes a reading valid against the schema, with stable checksums', () => {
  const meta = { schema: 'quire-reading/1', target: 'wasm-node', runtime: { name: 'node', version: process.versions.node },
    build: { commit: 'test', compiler: 'x', flags: 'y' }, machine: { cpu: 'c', logical_cores: 1, os: 'o' }, started_at: new Date().toISOString() };
  const progress = [];
  const a = bench.run({ quick: true, filter: 'nested-depth-500', meta, onProgress: (i, n, name) => progress.push(name) });
  assert.deepEqual(validate(a), []);
  assert.deepEqual(progress, ['json.check/nested-depth-500', 'json.parse/nested-depth-500']);
  const b = bench.run({ quick: true, filter: 'nested-depth-500', meta });
  assert.deepEqual(a.cases.map((c) => c.checksum), b.cases.map((c) => c.checksum));
  for (const c of a.cases) {
    assert.ok(c.calls > 0 && c.time_ns.median > 0, c.name);
    assert.ok(c.alloc.calls_per_op > 0, `${c.name} counts allocations through the hooks`);
  }
  const broken = structuredClone(a);
  delete broken.cases[0].checksum;
  broken.target = 'elsewhere';
  assert.equal(validate(broken).length, 2);
});

test('the npm package carries no harness: it is the benchmark module\'s', () => {
  assert.equal(quire.bench, undefined);
});

test('a case input is the same bytes the C++ case measures', () => {
  const bytes = bench.input('json.check/nested-depth-500');
  assert.ok(bytes instanceof Uint8Array);
  assert.equal(quire.json.stats(bytes).maxDepth, 500);
  assert.equal(bench.input('no/such-case'), undefined);
});
