// The heap past 2 GiB and up to its 4 GB maximum: addresses at or above 2^31 (negative as the
// i32 a wasm export returns) work in every call, a heap that is full is a QuireError
// OUT_OF_MEMORY, and freeing what was held brings the module back. This is the case:
// thousands of handles held open in a loop where finalizers cannot run — JSON documents here, each
// with its own copy of its text in the heap (a .quire file opened from bytes reads them where they
// are, so its handle holds little), and .quire files opened past 2 GiB reading their pages there.
// Its own file, so its own process and module instance (node --test runs each file apart).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { loadQuire } from './helpers.mjs';

const quire = await loadQuire();
const { format, json, fhir, hl7, memory, QuireError } = quire;
// The same module instance the package uses (its internal export; index.js is one bundled module): to watch the addresses.
const wasm = quire.internalWasmModule;

const TWO_GIB = 2 ** 31;

// Records the highest address _malloc gave while `fn` ran (as the wrapper reads it: unsigned).
function highestAllocation(fn) {
  const m = wasm();
  const original = m._malloc;
  let highest = 0;
  m._malloc = (size) => {
    const p = original(size);
    highest = Math.max(highest, p >>> 0);
    return p;
  };
  try {
    return { result: fn(), highest };
  } finally {
    m._malloc = original;
  }
}

// Calls of every layer, with answers known in advance.
function everyLayerWorks() {
  const doc = json.parse('{"a":[1,2.50,"three"],"b":{"c":null}}');
  try {
    assert.equal(doc.text('/a/1'), '2.50');
    assert.equal(doc.get('/a/2'), 'three');
    assert.equal(doc.kind('/b/c'), 'null');
  } finally {
    doc.close();
  }
  assert.equal(json.stats('[1,[2,[3]]]').maxDepth, 3);
  const patient = fhir.parse('{"resourceType":"Patient","id":"p1","active":true}');
  assert.equal(patient.resourceType, 'Patient');
  const msg = hl7.parse('MSH|^~\\&|A|B|C|D|20240101||ADT^A01|42|P|2.5\rPID|1||123^^^H||Doe^Jane');
  try {
    assert.equal(msg.get('PID-5.2'), 'Jane');
  } finally {
    msg.close();
  }
  const small = format.write([{ id: 7, name: 'seven' }]);
  const f = format.open(small);
  try {
    assert.deepEqual(f.query({ limit: 1 }), [{ id: 7, name: 'seven' }]);
  } finally {
    f.close();
  }
}

test('memory: past 2 GiB every call works, a full heap is OUT_OF_MEMORY, and freeing it brings the module back', () => {
  everyLayerWorks();
  const baseline = memory().heapBytes;
  // About 1 MiB of .quire file: random text that zstd cannot shrink much.
  const rows = Array.from({ length: 1400 }, (_, i) => ({ id: i, text: randomBytes(540).toString('base64') }));
  const bytes = format.write(rows);
  assert.ok(bytes.length > 700_000, `${bytes.length} bytes`);

  // About 1 MiB of JSON text: each document keeps its copy (padded) and its tape in the heap.
  const text = JSON.stringify(rows);
  const held = [];
  const holdOne = () => held.push(json.parse(text));
  try {
    // 1. Past 2 GiB.
    while (memory().heapBytes < TWO_GIB + 64 * 2 ** 20) holdOne();
    const { highest } = highestAllocation(() => {
      everyLayerWorks();
      // A handle opened now lies above 2^31 and reads its pages from there.
      const f = format.open(bytes);
      held.push(f);
      assert.deepEqual(f.query({ where: { id: 1399 }, columns: ['id', 'text'] }), [{ id: 1399, text: rows[1399].text }]);
      assert.equal(f.rowCount, 1400);
    });
    assert.ok(highest >= TWO_GIB, `the calls used addresses up to ${highest}, all below 2^31`);
    assert.ok(memory().heapBytes > TWO_GIB, 'memory() reads past 2 GiB as a positive count');
    // Handles opened early and late both still read correctly.
    assert.equal(held[0].get('/3/text'), rows[3].text);
    assert.equal(held.at(-1).query({ where: { id: 3 } })[0].text, rows[3].text);

    // 2. To the 4 GB maximum: the copy that does not fit is OUT_OF_MEMORY, not an abort or a RangeError.
    let failure;
    while (!failure) {
      try {
        holdOne();
      } catch (e) {
        failure = e;
      }
    }
    assert.ok(failure instanceof QuireError, String(failure));
    assert.equal(failure.code, 'OUT_OF_MEMORY');
    assert.ok(memory().heapCapacityBytes > 4 * 2 ** 30 - 64 * 2 ** 20, `the heap stopped at ${memory().heapCapacityBytes} bytes`);
    // Even with the heap full, small calls still have the headroom the wrapper keeps.
    assert.equal(held.at(-1).get('/5/text'), rows[5].text);
    const quireFile = held.find((h) => h instanceof quire.QuireFile);
    assert.equal(quireFile.query({ where: { id: 5 } })[0].text, rows[5].text);
  } finally {
    for (const f of held) f.close();
  }
  // 3. Freed: the heap is back near where it started and every layer works.
  assert.ok(memory().heapBytes < baseline + 64 * 2 ** 20, `${memory().heapBytes} bytes still in use (${baseline} at the start)`);
  everyLayerWorks();
  const again = format.open(bytes);
  try {
    assert.equal(again.query({ where: { id: 42 } })[0].text, rows[42].text);
  } finally {
    again.close();
  }
});
