// The .quire format from JavaScript: write rows / CSV / NDJSON, open bytes and files by ranges,
// query, count, aggregate, columns, explain, errors, close() and the finalizer.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, writeFileSync, existsSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { loadQuire, dataDir } from './helpers.mjs';

const quire = await loadQuire();
const { format, QuireError } = quire;

const people = [
  { id: 1, name: 'Ana Okafor', country: 'NA', age: 81, balance: 12.5, joined: '2020-01-02T03:04:05Z', tags: ['a'] },
  { id: 2, name: 'Ben Smith', country: 'US', age: 30, balance: 99.25, joined: '2021-05-06T00:00:00Z', tags: null },
  { id: 3, name: 'Chen Ito', country: 'NA', age: 79, balance: null, joined: null, tags: { k: 1 } },
  { id: 4, name: 'Dalia Okafor', country: 'DE', age: 90, balance: 7, joined: '2019-12-31T23:59:59.5Z', tags: [] },
];

test('format: rows round-trip with inferred types and nulls', () => {
  const bytes = format.write(people, { indexes: { id: 'hash', name: 'text', age: 'sorted' } });
  assert.ok(bytes instanceof Uint8Array);
  const f = format.open(bytes);
  try {
    assert.deepEqual(f.schema, [
      { name: 'id', type: 'integer' }, { name: 'name', type: 'string' }, { name: 'country', type: 'string' },
      { name: 'age', type: 'integer' }, { name: 'balance', type: 'float' }, { name: 'joined', type: 'timestamp' }, { name: 'tags', type: 'json' },
    ]);
    assert.equal(f.rowCount, 4);
    const rows = f.query();
    assert.equal(rows.length, 4);
    assert.deepEqual(rows[1], { id: 2, name: 'Ben Smith', country: 'US', age: 30, balance: 99.25, joined: '2021-05-06T00:00:00Z', tags: null });
    assert.deepEqual(rows[3].tags, []);
    assert.equal(rows[3].joined, '2019-12-31T23:59:59.500Z');
    assert.deepEqual(f.find('id', 3, { columns: ['name', 'tags'] }), { name: 'Chen Ito', tags: { k: 1 } });
    assert.equal(f.find('id', 99), undefined);
  } finally {
    f.close();
  }
});

test('format: filters as expressions and objects, count, aggregate, order, paging', () => {
  const f = format.open(format.write(people, { indexes: [{ column: 'id', kind: 'hash' }] }));
  assert.deepEqual(f.query({ where: "country = 'NA' and age > 80", columns: ['id'] }), [{ id: 1 }]);
  assert.deepEqual(f.query({ where: { country: 'NA', age: { '>': 80 } }, columns: ['id'] }), [{ id: 1 }]);
  assert.deepEqual(f.query({ where: { or: [{ id: 2 }, { name: { contains: 'Ito' } }] }, columns: ['id'] }), [{ id: 2 }, { id: 3 }]);
  assert.equal(f.count({ where: "name contains 'Okafor'" }), 2);
  assert.equal(f.count(), 4);
  assert.equal(f.count({ where: { balance: null } }), 1);
  assert.equal(f.count({ where: "name contains 'Okafor'", limit: 1 }), 1);
  assert.equal(f.count({ offset: 3 }), 1);
  const agg = f.aggregate('age', { where: "country = 'NA'" });
  assert.deepEqual(agg, { column: 'age', type: 'integer', rows: 2, count: 2, sum: 160, min: 79, max: 81, avg: 80, finite: true });
  // The trap: a filter object where the query goes is refused, not read as a column 'where'.
  assert.throws(() => f.count("age > 80"), (e) => e instanceof TypeError && /query object/.test(e.message));
  assert.throws(() => f.aggregate('age', { country: 'NA' }), (e) => e.code === 'INVALID_QUERY' && /unknown query field 'country'/.test(e.message));
  assert.deepEqual(f.query({ orderBy: 'age', descending: true, limit: 2, columns: ['id'] }), [{ id: 4 }, { id: 1 }]);
  assert.deepEqual(f.query({ offset: 1, limit: 2, columns: ['id'] }), [{ id: 2 }, { id: 3 }]);
  f.close();
});

test('format: columns come out as typed arrays, strings decoded in bulk', () => {
  const rows = [];
  for (let i = 0; i < 3000; i++) rows.push({ id: i, word: i % 3 ? `wörd-${i % 17} 😀` : null, ok: i % 2 === 0, x: i / 4 });
  const f = format.open(format.write(rows, { chunkRows: 1000 }));
  const c = f.columns({ columns: ['id', 'word', 'ok', 'x'] });
  assert.equal(c.rows, 3000);
  assert.ok(c.columns.id instanceof Float64Array);
  assert.equal(c.columns.id[2999], 2999);
  assert.ok(c.columns.ok instanceof Uint8Array);
  assert.equal(c.columns.ok[2], 1);
  assert.equal(c.columns.word[0], null);
  assert.equal(c.columns.word[4], 'wörd-4 😀');
  assert.equal(c.valid.word[3], 0);
  assert.equal(c.columns.x[5], 1.25);
  const some = f.columns({ columns: ['id'], where: 'id >= 2990' });
  const ordered = f.columns({ columns: ['id'], where: 'id >= 2990', orderBy: 'x', descending: true, limit: 3 });
  assert.deepEqual(Array.from(ordered.columns.id), [2999, 2998, 2997]);
  assert.deepEqual(Array.from(some.columns.id), [2990, 2991, 2992, 2993, 2994, 2995, 2996, 2997, 2998, 2999]);
  f.close();
});

test('format: CSV and NDJSON text inputs, and their errors', () => {
  const csv = 'id,name\n1,"Okafor, Ana"\n2,Ben\n';
  const f = format.open(format.write(csv, { from: 'csv' }));
  assert.deepEqual(f.query(), [{ id: 1, name: 'Okafor, Ana' }, { id: 2, name: 'Ben' }]);
  f.close();
  const nd = format.open(format.write('{"a":1}\n{"a":2.5}\n'));
  assert.deepEqual(nd.schema, [{ name: 'a', type: 'float' }]);
  nd.close();
  assert.throws(() => format.write('a,b\n1,2\n3\n', { from: 'csv' }), (e) => e instanceof QuireError && e.code === 'INVALID_CSV' && e.line === 3);
  assert.throws(() => format.write('{"a":1}\n{"a":"x"}\n'), (e) => e instanceof QuireError && e.code === 'SCHEMA_MISMATCH' && e.line === 2);
  assert.throws(() => format.write([{ a: 1 }], { sortedBy: 'nope' }), (e) => e.code === 'NO_SUCH_COLUMN');
  assert.throws(() => format.write([{ a: 1 }], { schema: [{ name: 'a', type: 'integer' }], indexes: { a: 'text' } }), (e) => e.code === 'INVALID_ARGUMENT');
});

test('format: bad files and bad queries are QuireErrors', () => {
  assert.throws(() => format.open(new TextEncoder().encode('definitely not a quire file at all, long enough')), (e) => e.code === 'NOT_A_QUIRE_FILE');
  const bytes = format.write(people);
  const flipped = bytes.slice();
  flipped[12] ^= 1;
  const f = format.open(flipped);
  assert.throws(() => f.query(), (e) => e instanceof QuireError && e.code === 'CORRUPT_BLOCK' && e.path === 'columns.id.chunks[0].pages[0]');
  f.close();
  const g = format.open(bytes);
  assert.throws(() => g.query({ where: 'age >' }), (e) => e.code === 'INVALID_QUERY');
  assert.throws(() => g.count({ where: 'nope = 1' }), (e) => e.code === 'NO_SUCH_COLUMN');
  assert.throws(() => g.count({ where: "age = 'x'" }), (e) => e.code === 'INVALID_QUERY');
  assert.throws(() => g.count({ where: "age contains 'x'" }), (e) => e.code === 'INVALID_QUERY');
  assert.throws(() => g.find('id', 'x'), (e) => e.code === 'WRONG_KEY');
  g.close();
  assert.throws(() => g.query(), /closed/);
});

test('format: a Node file is read by ranges, reading only what a lookup needs', () => {
  const dir = mkdtempSync(path.join(tmpdir(), 'quire-format-'));
  const file = path.join(dir, 'people.quire');
  const rows = [];
  for (let i = 0; i < 20000; i++) rows.push({ id: i, name: `name ${i}`, score: (i * 37) % 1000 });
  format.writeFile(file, rows, { indexes: { id: 'hash' }, chunkRows: 4096 });
  assert.ok(existsSync(file));
  const size = readFileSync(file).length;
  const f = format.open(file);
  const opened = f.counters();
  assert.ok(opened.bytes < 2000, `opening read ${opened.bytes} bytes`);
  assert.deepEqual(f.find('id', 12345), { id: 12345, name: 'name 12345', score: (12345 * 37) % 1000 });
  const after = f.counters();
  assert.ok(after.bytes < size / 4, `a lookup read ${after.bytes} of ${size} bytes`);
  const plan = f.explain({ where: 'id = 777' }, { analyze: true });
  assert.equal(plan.index.kind, 'hash');
  assert.equal(plan.rowsMatched, 1);
  assert.equal(plan.chunks.skippedByIndex, plan.chunks.total - 1);
  assert.equal(plan.read.chunks, 1);
  assert.equal(f.verify() > 0, true);
  const storage = f.storage();
  assert.equal(storage.columns.length, 3);
  // A hash index on integers holds the keys as integers: the root's ranges decide, no Bloom filter.
  assert.ok(storage.columns[0].dataBytes > 0 && storage.indexes[0].bytes > 0);
  assert.equal(storage.indexes[0].bloomBytes, 0);
  assert.equal(storage.version, 4);
  assert.equal(f.chunkStatistics('id').length, storage.chunks);
  f.close();
  // The same answers from the bytes in memory.
  const m = format.open(readFileSync(file));
  assert.deepEqual(m.find('id', 12345), { id: 12345, name: 'name 12345', score: (12345 * 37) % 1000 });
  m.close();
});

test('format: a Blob on the main thread is read whole; ranges need a Worker', async () => {
  const bytes = format.write(people);
  const f = await format.openBlob(new Blob([bytes]));
  assert.equal(f.count(), 4);
  f.close();
});

test('format: answers match the native golden file', () => {
  // golden.quire and golden.txt are written by the Catch2 suite (native and wasm check them);
  // here the npm package opens the same file by ranges and must give the same answers.
  const golden = readFileSync(path.join(dataDir, 'format', 'golden.txt'), 'utf8').split('\n');
  const f = format.open(path.join(dataDir, 'format', 'golden.quire'));
  let checked = 0;
  for (let i = 0; i < golden.length; i++) {
    if (!golden[i].startsWith('where ')) continue;
    const where = golden[i].slice(6);
    const count = Number(/^count (\d+)/.exec(golden[i + 1])[1]);
    assert.equal(f.count({ where }), count, where);
    const rows = f.query({ where, limit: 5 });
    assert.deepEqual(rows.map((r) => JSON.stringify(r)), golden.slice(i + 2, i + 2 + rows.length), where);
    // Core writes the aggregate's text; the package hands it over parsed: the same text back.
    const agg = f.aggregate('balance', { where });
    assert.equal(JSON.stringify(agg), /aggregate (\S+)$/.exec(golden[i + 1])[1], where);
    checked++;
  }
  assert.equal(checked, 6);
  f.close();
});

test('format: close() frees wasm memory, and so does the finalizer', async () => {
  const bytes = format.write(people);
  const before = quire.memory().heapBytes;
  // Each file read by a find holds its footer, directories and the pages it read (bytes are read
  // where they are, so an open alone holds little).
  for (let i = 0; i < 50; i++) {
    const f = format.open(bytes);
    f.find('id', 2);
    f.close();
  }
  const afterClose = quire.memory().heapBytes;
  assert.ok(afterClose - before < 64 * 1024, `close() leaked ${afterClose - before} bytes`);
  assert.equal(typeof globalThis.gc, 'function', 'run with --expose-gc (npm test does)');
  for (let i = 0; i < 50; i++) format.open(bytes).find('id', 2);
  assert.ok(quire.memory().heapBytes - before > 64 * 1024, 'forgotten files hold memory until collected');
  for (let i = 0; i < 10 && quire.memory().heapBytes - before > 64 * 1024; i++) {
    globalThis.gc();
    await new Promise((r) => setTimeout(r, 20));
  }
  assert.ok(quire.memory().heapBytes - before < 64 * 1024, 'the finalizer frees forgotten files');
});

test('format: decimal aggregates are exact decimal strings; float overflow is null with finite: false', () => {
  const rows = [];
  for (let i = 0; i < 200; i++) rows.push(`{"price": ${Math.floor(i * 37 % 1000)}.${String(i % 100).padStart(2, '0')}, "big": 1e308, "country": "${i % 2 ? 'NA' : 'DE'}"}`);
  const f = format.open(format.write(rows.join('\n') + '\n'));
  assert.deepEqual(f.schema.map((c) => c.type), ['decimal', 'float', 'string']);
  let cents = 0n;
  for (let i = 0; i < 200; i++) cents += BigInt(Math.floor(i * 37 % 1000) * 100 + (i % 100));
  const agg = f.aggregate('price');
  assert.equal(agg.sum, `${cents / 100n}.${String(cents % 100n).padStart(2, '0')}`);
  assert.equal(typeof agg.avg, 'string');
  assert.match(agg.avg, /^\d+\.\d{6}$/);
  const na = f.aggregate('price', { where: "country = 'NA'" });
  assert.equal(na.rows, 100);
  const big = f.aggregate('big');
  assert.equal(big.sum, null);
  assert.equal(big.finite, false);
  assert.equal(big.max, 1e308);
  assert.deepEqual(f.aggregate('price', { where: "country = 'XX'" }), { column: 'price', type: 'decimal', rows: 0, count: 0, sum: null, min: null, max: null, avg: null, finite: true });
  f.close();
});

// --- rows in bulk: format.write(objects) hands columns to core (js/src/rows.ts, core write_columns) ---

const ndjsonOf = (rows) => rows.map((r) => JSON.stringify(r)).join('\n') + '\n';
const sameBytes = (a, b) => a.length === b.length && a.every((x, i) => x === b[i]);

/** The error write() throws, or undefined when it writes. */
function writeError(input, options) {
  try {
    format.write(input, options);
    return undefined;
  } catch (e) {
    return e;
  }
}

function mixedRows(n) {
  const rows = [];
  for (let i = 0; i < n; i++) {
    const r = { id: i, name: i % 7 ? `Name ${i % 97}` : `Zoë Ångström ${i} 😀`, balance: (i * 37) / 100, at: new Date(Date.UTC(2020, 0, 1) + i * 60000).toISOString() };
    if (i % 5) r.flag = i % 2 === 0;
    if (i % 11 === 0) r.nested = { k: i, list: [1, 'two', null, { deep: true }] };
    if (i % 13 === 0) r.name = null;
    if (i % 17 === 0) r.skipped = undefined;
    if (i % 19 === 0) r.day = '2024-02-29';
    rows.push(r);
  }
  return rows;
}

test('format: objects give the NDJSON of the same objects byte for byte', () => {
  const sets = [people, mixedRows(3000)];
  const optionSets = [
    {},
    { indexes: { id: 'hash', name: ['text', 'sorted'] }, chunkRows: 512 },
    { sortedBy: 'balance', indexes: { id: 'sorted' } },
  ];
  for (const rows of sets) {
    for (const options of optionSets) {
      const mine = format.write(rows, options);
      const theirs = format.write(ndjsonOf(rows), options);
      assert.ok(sameBytes(mine, theirs), `${rows.length} rows, ${JSON.stringify(options)}`);
    }
  }
  // A schema given, and numbers the JSON text reads in its own way.
  const numbers = [2 ** 60, 0.1 + 0.2, -0, 1e21, 123456789012345680000, 5e-324, NaN, Infinity, 7].map((v, i) => ({ i, v }));
  assert.ok(sameBytes(format.write(numbers), format.write(ndjsonOf(numbers))));
  for (const type of ['float', 'decimal', 'string']) {
    const options = { schema: [{ name: 'i', type: 'integer' }, { name: 'v', type }] };
    const a = writeError(numbers, options), b = writeError(ndjsonOf(numbers), options);
    assert.equal(a?.code, b?.code, type);
    if (!a) assert.ok(sameBytes(format.write(numbers, options), format.write(ndjsonOf(numbers), options)), type);
  }
  const big = [{ v: 2 ** 62 }, { v: 2 ** 53 + 2 }, { v: -(2 ** 60) }];
  const ints = { schema: [{ name: 'v', type: 'integer' }] };
  assert.ok(sameBytes(format.write(big, ints), format.write(ndjsonOf(big), ints)));
  // Dates and boxed values as JSON.stringify writes them; keys only some rows have.
  const odd = [{ when: new Date(Date.UTC(2024, 4, 6)), n: Object(5), s: Object('x') }, { extra: true }, {}];
  assert.ok(sameBytes(format.write(odd), format.write(ndjsonOf(odd))));
});

test('format: typed columns are core arrays equal to the row objects', () => {
  const rows = [];
  for (let i = 0; i < 2500; i++) {
    rows.push({
      id: i * 3 - 100,
      name: i % 10 === 0 ? null : `n${i} é`,
      ok: i % 3 === 0,
      x: i / 8,
      price: `${i}.50`,
      at: new Date(Date.UTC(2021, 0, 1) + i * 1000).toISOString(),
      day: i % 4 ? '1969-12-31' : '2024-01-01',
    });
  }
  const schema = [
    { name: 'id', type: 'integer' }, { name: 'name', type: 'string' }, { name: 'ok', type: 'boolean' }, { name: 'x', type: 'float' },
    { name: 'price', type: 'decimal' }, { name: 'at', type: 'timestamp' }, { name: 'day', type: 'date' },
  ];
  const f = format.open(format.write(rows, { schema, chunkRows: 1000 }));
  try {
    const t = f.columns(undefined, { typed: true });
    assert.equal(t.rows, 2500);
    assert.equal(t.types.id, 'integer');
    assert.ok(t.columns.id instanceof BigInt64Array);
    assert.ok(t.columns.x instanceof Float64Array);
    assert.ok(t.columns.ok instanceof Uint8Array);
    assert.ok(t.columns.day instanceof Int32Array);
    assert.ok(t.columns.at instanceof BigInt64Array);
    for (let i = 0; i < rows.length; i++) {
      const r = rows[i];
      assert.equal(t.columns.id[i], BigInt(r.id));
      assert.equal(t.valid.name[i], r.name === null ? 0 : 1);
      assert.equal(quire.textAt(t.columns.name, i), r.name ?? '');
      assert.equal(t.columns.ok[i], r.ok ? 1 : 0);
      assert.equal(t.columns.x[i], r.x);
      assert.equal(quire.textAt(t.columns.price, i), r.price);
      assert.equal(t.columns.at[i], BigInt(Date.parse(r.at)) * 1000n);
      assert.equal(t.columns.day[i], Date.parse(r.day) / 86400000);
    }
    const some = f.columns({ columns: ['id', 'name'], where: 'id >= 7000', orderBy: 'id', descending: true, limit: 3 }, { typed: true });
    assert.deepEqual(Array.from(some.columns.id), [7397n, 7394n, 7391n]);
    assert.deepEqual(Object.keys(some.columns), ['id', 'name']);
    assert.equal(quire.textAt(some.columns.name, 0), 'n2499 é');
    // The untyped form still gives doubles and strings.
    const plain = f.columns({ columns: ['id', 'name'], limit: 2 });
    assert.ok(plain.columns.id instanceof Float64Array);
    assert.deepEqual(plain.columns.name, [null, 'n1 é']);
    assert.throws(() => f.columns({ columns: ['nope'] }, { typed: true }), (e) => e.code === 'NO_SUCH_COLUMN');
  } finally {
    f.close();
  }
});

test('format: bad rows are typed errors, as their NDJSON gives them', () => {
  const cases = [
    [[{ a: 1 }, { a: 2 }, { a: 'x' }], undefined], // mixed types in a column
    [[{ a: 1 }, { a: [1] }], undefined],
    [[{ a: 1 }, { a: 'x' }], { schema: [{ name: 'a', type: 'integer' }] }], // wrong type for the schema
    [[{ a: 1 }, { a: 1, b: null }], { schema: [{ name: 'a', type: 'integer' }] }], // a key the schema lacks
    [[{ a: true }, { a: 1.5 }], { schema: [{ name: 'a', type: 'boolean' }] }],
    [[{ t: 'yesterday' }], { schema: [{ name: 't', type: 'timestamp' }] }],
    [[{ a: 1 }, null], undefined], // not objects
    [[{ a: 1 }, [1, 2]], undefined],
    [[{ a: 1 }, 5], undefined],
    [[], undefined],
    [[{}, {}], undefined],
    [[{ s: 'lone \ud800 surrogate' }], undefined],
  ];
  for (const [rows, options] of cases) {
    const mine = writeError(rows, options), theirs = writeError(ndjsonOf(rows), options);
    const what = JSON.stringify(rows);
    assert.ok(mine instanceof QuireError, what);
    assert.equal(mine.code, theirs.code, what);
    assert.equal(mine.line, theirs.line, what);
    assert.equal(mine.path, theirs.path, what);
  }
  // A sparse array: the hole is not an object, refused as its NDJSON line ("undefined") is.
  const sparse = [{ a: 1 }, , { a: 2 }]; // eslint-disable-line no-sparse-arrays
  const hole = writeError(sparse);
  assert.ok(hole instanceof QuireError);
  assert.equal(hole.code, writeError('{"a":1}\nundefined\n{"a":2}\n').code);
  // BigInt ids: exact integers, the same file as the numbers give; beyond 64 bits an integer
  // column refuses them.
  const numberIds = [{ id: 1, v: 'a' }, { id: 2 ** 40, v: 'b' }, { id: -3, v: null }];
  const bigIds = numberIds.map((r) => ({ ...r, id: BigInt(r.id) }));
  assert.ok(sameBytes(format.write(bigIds), format.write(numberIds)));
  const exact = format.open(format.write([{ id: 9007199254740993n }, { id: 2n ** 63n - 1n }]));
  assert.deepEqual(Array.from(exact.columns(undefined, { typed: true }).columns.id), [9007199254740993n, 2n ** 63n - 1n]);
  exact.close();
  const tooBig = writeError([{ id: 2n ** 64n }], { schema: [{ name: 'id', type: 'integer' }] });
  assert.ok(tooBig instanceof QuireError && tooBig.code === 'SCHEMA_MISMATCH', String(tooBig));
  assert.equal(format.open(format.write([{ id: 2n ** 64n }])).schema[0].type, 'decimal');
  // BigInt and numbers in one column: both integers.
  assert.ok(sameBytes(format.write([{ id: 1n }, { id: 2 }]), format.write([{ id: 1 }, { id: 2 }])));
});

test('format: a huge string and wide text go through in bulk', () => {
  const huge = 'x'.repeat(5 << 20) + 'é';
  const rows = [{ id: 1, s: huge }, { id: 2, s: 'short' }];
  const bytes = format.write(rows, { indexes: { s: 'text' } });
  assert.ok(sameBytes(bytes, format.write(ndjsonOf(rows), { indexes: { s: 'text' } })));
  const f = format.open(bytes);
  assert.equal(f.find('id', 1).s.length, huge.length);
  f.close();
});
