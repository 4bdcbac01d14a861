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

test('a view case hands a peer its ViewDefinition and quire\'s rows', () => {
  const name = 'view.patient_flat/export-10000-patients-2000';
  const view = JSON.parse(bench.spec(name));
  assert.equal(view.resource, 'Patient');
  const rows = bench.answer(name).split('\n').filter((l) => l.length > 0);
  assert.equal(rows.length, 2000);
  assert.deepEqual(Object.keys(JSON.parse(rows[0])), view.select[0].column.map((c) => c.name));
  assert.equal(bench.list().find((c) => c.name === name).items, 2000);
  // Cases without a peer's parameter or answer.
  assert.equal(bench.spec('json.check/nested-depth-500'), '');
  assert.equal(bench.answer('json.check/nested-depth-500'), undefined);
});

test('the view peer\'s row check normalises decimals and absent columns only', async () => {
  const { rowsDifference } = await import('./peers_view.mjs');
  const quireRows = '{"a":80.0,"b":null}\n{"a":1.5,"b":"x"}\n';
  assert.equal(rowsDifference(['a', 'b'], quireRows, [{ a: 80 }, { a: 1.5, b: 'x' }]), '');
  assert.match(rowsDifference(['a', 'b'], quireRows, [{ a: 81 }, { a: 1.5, b: 'x' }]), /^row 0/);
  assert.match(rowsDifference(['a', 'b'], quireRows, [{ a: 80 }, { a: 1.5, b: 'y' }]), /^row 1/);
  assert.match(rowsDifference(['a', 'b'], quireRows, [{ a: 80 }]), /1 rows, quire has 2/);
});

test('the format peers, DuckDB among them, give quire\'s answers on the customers (each checked before it is timed)', async () => {
  const { peerCases } = await import('./peers_format.mjs');
  const cases = await peerCases({ ...quire, bench }, [{ name: 'format.find/customers-200k' }, { name: 'format.sum/customers-200k' }]);
  const names = cases.map((c) => c.name);
  for (const peer of ['sqlite', 'arrow', 'parquet', 'duckdb', 'duckdb-parquet']) {
    assert.ok(names.includes(`peer.${peer}.find/customers-200k`), peer);
    assert.ok(names.includes(`peer.${peer}.sum/customers-200k`), peer);
  }
  const find = cases.find((c) => c.name === 'peer.duckdb.find/customers-200k');
  const row = await find.run(find.input());
  assert.equal(Number(row.id), 123456);
});
