// format.writeStream and format.writeFile with a stream: NDJSON and CSV arriving in chunks of any
// size (Node Readables, WHATWG ReadableStreams, async generators) give the bytes of format.write,
// errors carry the whole input's line numbers, and a failed file write leaves nothing behind.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Readable } from 'node:stream';
import { existsSync, mkdtempSync, readdirSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { loadQuire } from './helpers.mjs';

const quire = await loadQuire();
const { format, QuireError } = quire;

const NAMES = ['Ana Okafor', 'Zoë Ñúñez 😀', 'Ben "B" Smith', 'Chen, Ito', 'Dalia\nMultiline'];

function peopleRows(n) {
  const rows = [];
  for (let i = 0; i < n; i++) {
    rows.push({ id: i, name: NAMES[i % NAMES.length], age: 18 + (i * 7) % 80, balance: i % 9 ? (i * 37) / 4 : null, joined: `2020-01-${String(1 + (i % 28)).padStart(2, '0')}T03:04:05Z` });
  }
  return rows;
}

function ndjsonText(rows) {
  return rows.map((r) => JSON.stringify(r)).join('\r\n') + '\n\n';
}

function csvText(rows) {
  const cell = (v) => {
    if (v === null || v === undefined) return '';
    const s = String(v);
    return /[",\n]/.test(s) ? `"${s.replaceAll('"', '""')}"` : s;
  };
  return '\uFEFFid,name,age,balance,joined\r\n' + rows.map((r) => [r.id, r.name, r.age, r.balance, r.joined].map(cell).join(',')).join('\r\n');
}

/** The UTF-8 bytes of `text` cut into pieces of `size` bytes (splitting multi-byte characters). */
function pieces(text, size) {
  const bytes = Buffer.from(text, 'utf8');
  const out = [];
  for (let at = 0; at < bytes.length; at += size) out.push(bytes.subarray(at, at + size));
  return out;
}

test('writeStream: NDJSON from a Node Readable in pieces of any size gives the bytes of write()', async () => {
  const text = ndjsonText(peopleRows(3000));
  const options = { indexes: { id: 'hash', name: 'text' }, sortedBy: 'age', chunkRows: 1000 };
  const expected = format.write(text, options);
  for (const size of [1, 7, 65536]) {
    const bytes = await format.writeStream(Readable.from(pieces(text, size)), options);
    assert.ok(bytes instanceof Uint8Array);
    assert.deepEqual(bytes, expected, `pieces of ${size} bytes`);
  }
  const f = format.open(expected);
  assert.equal(f.rowCount, 3000);
  assert.deepEqual(f.find('id', 4), { id: 4, name: 'Dalia\nMultiline', age: 46, balance: 37, joined: '2020-01-05T03:04:05Z' });
  f.close();
});

test('writeStream: CSV from WHATWG ReadableStreams, async generators and strings', async () => {
  const text = csvText(peopleRows(2000));
  const expected = format.write(text, { from: 'csv' });
  // A Blob's stream (Node 20's ReadableStream), and one that only offers getReader() as some browsers' do.
  assert.deepEqual(await format.writeStream(new Blob([text]).stream(), { from: 'csv' }), expected);
  const stream = new Blob([text]).stream();
  assert.deepEqual(await format.writeStream({ getReader: () => stream.getReader() }, { from: 'csv' }), expected);
  // An async generator of string chunks, cut inside quoted fields and CRLFs.
  async function* strings() {
    for (let at = 0; at < text.length; at += 13) yield text.slice(at, at + 13);
  }
  assert.deepEqual(await format.writeStream(strings(), { from: 'csv' }), expected);
  // Bytes and text whole.
  assert.deepEqual(await format.writeStream(text, { from: 'csv' }), expected);
  assert.deepEqual(await format.writeStream(new TextEncoder().encode(text), { from: 'csv' }), expected);
});

test('writeStream: errors carry the whole input\'s line numbers', async () => {
  const good = ndjsonText(peopleRows(500)).trimEnd() + '\n';  // 500 lines
  await assert.rejects(format.writeStream(Readable.from(pieces(good + '{"id":1,}\n', 5))), (e) => e instanceof QuireError && e.code === 'INVALID_JSON' && e.line === 501);
  const csv = 'a,b\n' + '1,"x\ny"\n'.repeat(100) + '1,2,3\n';
  await assert.rejects(format.writeStream(Readable.from(pieces(csv, 3)), { from: 'csv' }), (e) => e.code === 'INVALID_CSV' && e.line === 202 && e.column === 3);
  await assert.rejects(format.writeStream(Readable.from([])), (e) => e.code === 'EMPTY_INPUT');
  await assert.rejects(format.writeStream(Readable.from(['{"a":1}\n']), { sortedBy: 'nope' }), (e) => e.code === 'NO_SUCH_COLUMN');
  await assert.rejects(format.writeStream(Readable.from(['a\n']), { from: 'rows' }), TypeError);
  // A source that fails: its own error, and the wasm handle is freed.
  async function* broken() {
    yield '{"a":1}\n';
    throw new Error('network gone');
  }
  await assert.rejects(format.writeStream(broken()), /network gone/);
});

test('writeStream: the schema is inferred from the first inferRows rows; later misfits name their line', async () => {
  const text = '{"a":1}\n{"a":2}\n{"a":3}\n{"a":4.5}\n';
  await assert.rejects(format.writeStream(Readable.from([text]), { inferRows: 3 }), (e) => e.code === 'SCHEMA_MISMATCH' && e.line === 4 && e.path === 'a' && /inferred from the first 3 rows/.test(e.message));
  // By default the first 10,000 rows are read first: here all four, so the column is float.
  assert.deepEqual(format.open(await format.writeStream(Readable.from([text]))).schema, [{ name: 'a', type: 'float' }]);
  // A given schema avoids inference.
  const bytes = await format.writeStream(Readable.from([text]), { inferRows: 1, schema: [{ name: 'a', type: 'float' }] });
  assert.equal(format.open(bytes).rowCount, 4);
  // Text and a number in one column are refused wherever they are.
  await assert.rejects(format.writeStream(Readable.from(['{"a":1}\n{"a":"x"}\n'])), (e) => e.code === 'SCHEMA_MISMATCH' && e.line === 2);
});

test('writeFile: a stream goes to disk through a temporary name; a failure leaves no file', async () => {
  const dir = mkdtempSync(path.join(tmpdir(), 'quire-stream-'));
  const file = path.join(dir, 'people.quire');
  const text = ndjsonText(peopleRows(5000));
  const pending = format.writeFile(file, Readable.from(pieces(text, 4096)), { indexes: { id: 'hash' } });
  assert.ok(pending instanceof Promise);
  await pending;
  assert.deepEqual(new Uint8Array(readFileSync(file)), format.write(text, { indexes: { id: 'hash' } }));
  const f = format.open(file);
  assert.equal(f.count({ where: 'age > 90' }), format.open(format.write(text)).count({ where: 'age > 90' }));
  f.close();
  // The sync form is unchanged.
  assert.equal(format.writeFile(path.join(dir, 'rows.quire'), [{ a: 1 }]), undefined);
  const bad = path.join(dir, 'bad.quire');
  await assert.rejects(format.writeFile(bad, Readable.from(pieces(text + '{"id":"x"}\n', 4096))), (e) => e.code === 'SCHEMA_MISMATCH');
  assert.equal(existsSync(bad), false);
  assert.deepEqual(readdirSync(dir).sort(), ['people.quire', 'rows.quire']);
});

test('writeStream: the heap holds the writer, not the file, and is freed at the end', async () => {
  const text = ndjsonText(peopleRows(20000));
  const before = quire.memory().heapBytes;
  let peak = 0;
  async function* watched() {
    for (const p of pieces(text, 65536)) {
      peak = Math.max(peak, quire.memory().heapBytes - before);
      yield p;
    }
  }
  const bytes = await format.writeStream(watched(), { inferRows: 100, chunkRows: 1000 });
  assert.ok(bytes.length > 0);
  assert.ok(peak < text.length, `the heap grew by ${peak} bytes for ${text.length} bytes of input`);
  assert.ok(quire.memory().heapBytes - before < 256 * 1024, 'the stream writer frees its memory');
});
