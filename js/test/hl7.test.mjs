// The HL7 v2 module of the npm package: API, errors, close() and the finalizer, MLLP in chunks of
// every size, and the corpus digest table (tests/data/hl7v2/corpus_digests.tsv) identical to native.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync, readdirSync } from 'node:fs';
import path from 'node:path';
import { loadQuire, corpusDir, dataDir } from './helpers.mjs';

const quire = await loadQuire();
const { hl7, mllp, QuireError, memory } = quire;

const ADT =
  'MSH|^~\\&|SENDAPP|SENDFAC|RECVAPP|RECVFAC|20240131120500||ADT^A01^ADT_A01|MSG0001|P|2.5.1\r' +
  'EVN|A01|20240131120500\r' +
  'PID|1||123^^^HOSP^MR~456^^^SSA^SS||Doe^Jane^Q||19800101|F|||1 Main St\\F\\Apt 2^^Oslo||""\r' +
  'OBX|1|ST|X^Note||Line one\\.br\\line two|||N\r' +
  'OBX|2|NM|8867-4^Heart rate^LN||72|/min\r';

/** FNV-1a 64 over bytes, as 16 hex digits (the digest native quire writes in the table). */
function fnv1a64(bytes) {
  let h = 0xcbf29ce484222325n;
  for (const b of bytes) {
    h ^= BigInt(b);
    h = BigInt.asUintN(64, h * 0x100000001b3n);
  }
  return h.toString(16).padStart(16, '0');
}
const encoder = new TextEncoder();

test('parse: header getters, get / getRaw by path, absent vs empty', () => {
  const m = hl7.parse(ADT);
  try {
    assert.equal(m.messageType, 'ADT');
    assert.equal(m.trigger, 'A01');
    assert.equal(m.structure, 'ADT_A01');
    assert.equal(m.controlId, 'MSG0001');
    assert.equal(m.version, '2.5.1');
    assert.equal(m.processingId, 'P');
    assert.equal(m.delimiters, '|^~\\&');
    assert.equal(m.charset, 'UTF-8');
    assert.equal(m.segmentCount, 5);
    assert.equal(m.get('PID-5.2'), 'Jane');
    assert.equal(m.get('PID-3[2].1'), '456');
    assert.equal(m.get('PID-11.1'), '1 Main St|Apt 2');
    assert.equal(m.getRaw('PID-11.1'), '1 Main St\\F\\Apt 2');
    assert.equal(m.get('OBX[1]-5'), 'Line one\nline two');
    assert.equal(m.get('OBX[2]-3.2'), 'Heart rate');
    assert.equal(m.get('MSH-1'), '|');
    assert.equal(m.get('MSH-2'), '^~\\&');
    assert.equal(m.get('PID-2'), '');
    assert.equal(m.get('PID-99'), undefined);
    assert.equal(m.get('ZZZ-1'), undefined);
    assert.equal(m.get('OBX[3]-1'), undefined);
    assert.deepEqual(
      m.segments().map((s) => s.id),
      ['MSH', 'EVN', 'PID', 'OBX', 'OBX'],
    );
    assert.deepEqual(m.segments()[1], { id: 'EVN', fields: 2, offset: ADT.indexOf('EVN') });
    assert.deepEqual(new TextDecoder().decode(m.bytes()), ADT.slice(0, -1));
  } finally {
    m.close();
  }
});

test('toJSON: the documented shape, identical to the golden files written natively', () => {
  const m = hl7.parse(ADT);
  const j = m.toJSON();
  assert.equal(j.delimiters, '|^~\\&');
  const pid = j.segments[2];
  assert.equal(pid.id, 'PID');
  assert.deepEqual(pid.fields[2], [['123', '', '', 'HOSP', 'MR'], ['456', '', '', 'SSA', 'SS']]);
  assert.deepEqual(pid.fields[4], [['Doe', 'Jane', 'Q']]);
  assert.equal(pid.fields[12], null); // the HL7 explicit null ""
  assert.equal(JSON.stringify(m), m.toJSONText());
  m.close();
  const dir = path.join(dataDir, 'hl7v2');
  const goldens = readdirSync(dir).filter((f) => f.endsWith('.hl7'));
  assert.ok(goldens.length >= 2);
  for (const f of goldens) {
    const msg = hl7.parse(readFileSync(path.join(dir, f)));
    const want = readFileSync(path.join(dir, f.replace(/\.hl7$/, '.json')), 'utf8').replace(/\n$/, '');
    assert.equal(msg.toJSONText(), want, f);
    msg.close();
  }
});

test('ack: MSA-2 is the control id, sender and receiver swapped, ERR for errors', () => {
  const m = hl7.parse(ADT);
  const aa = m.ack();
  assert.equal(aa, 'MSH|^~\\&|RECVAPP|RECVFAC|SENDAPP|SENDFAC|20240131120500||ACK^A01^ACK|ACKMSG0001|P|2.5.1\rMSA|AA|MSG0001\r');
  const ae = m.ack('AE', { text: 'bad | value', timestamp: '20240201', controlId: 'A1', errorLocation: { segment: 'PID', field: 3 }, errorCode: '101' });
  const a = hl7.parse(ae);
  assert.equal(a.get('MSA-1'), 'AE');
  assert.equal(a.get('MSA-2'), 'MSG0001');
  assert.equal(a.get('MSA-3'), 'bad | value');
  assert.equal(a.get('MSH-7'), '20240201');
  assert.equal(a.get('MSH-10'), 'A1');
  assert.equal(a.get('ERR-2'), 'PID^1^3');
  assert.equal(a.get('ERR-3.2'), 'Required field missing');
  assert.equal(a.get('ERR-4'), 'E');
  assert.throws(() => m.ack('XX'), (e) => e instanceof QuireError && e.code === 'INVALID_ARGUMENT');
  assert.throws(() => m.ack('AE', { severity: 'Q' }), (e) => e instanceof QuireError && e.code === 'INVALID_ARGUMENT');
  a.close();
  m.close();
});

test('errors are QuireError with code and offset; misuse is a plain Error', () => {
  const expect = (fn, code, offset) =>
    assert.throws(fn, (e) => {
      assert.ok(e instanceof QuireError, String(e));
      assert.equal(e.code, code);
      if (offset !== undefined) assert.equal(e.offset, offset);
      return true;
    });
  expect(() => hl7.parse(''), 'EMPTY_INPUT');
  expect(() => hl7.parse('PID|1\r'), 'INVALID_HL7', 0);
  expect(() => hl7.parse(ADT + ADT), 'INVALID_HL7', ADT.length);
  expect(() => hl7.parse('MSH|^~\\&|A\rNOT A SEGMENT\r', { strict: true }), 'INVALID_HL7', 11);
  expect(() => hl7.parse('MSH|^~\\&|A|B\rOBX|1|ST|||bad \\Q\\ escape\r', { strict: true }), 'INVALID_ESCAPE');
  expect(() => hl7.parse(ADT, { maxSegments: 2 }), 'DOCUMENT_TOO_LARGE');
  expect(() => hl7.parse(ADT, { maxSegmentBytes: 20 }), 'LINE_TOO_LONG');
  expect(() => hl7.parse(ADT, { maxMessageBytes: 100 }), 'DOCUMENT_TOO_LARGE', 0);
  const m = hl7.parse(ADT);
  expect(() => m.get('PID-0x'), 'INVALID_ARGUMENT');
  m.close();
  m.close(); // twice is fine
  assert.equal(m.closed, true);
  assert.throws(() => m.get('PID-5'), (e) => !(e instanceof QuireError) && /closed/.test(e.message));
  assert.throws(() => hl7.parse(42), TypeError);
});

test('parseBatch: messages, envelope, skipped text; messages outlive the batch', () => {
  const file = 'FHS|^~\\&|A\rBHS|^~\\&|A\r' + ADT + '// a comment\r' + ADT.replace('MSG0001', 'MSG0002') + 'BTS|2\rFTS|1\r';
  const b = hl7.parseBatch(file);
  assert.equal(b.messages.length, 2);
  assert.deepEqual(b.envelope, ['FHS|^~\\&|A', 'BHS|^~\\&|A', 'BTS|2', 'FTS|1']);
  assert.equal(b.skippedBytes, '// a comment'.length);
  assert.deepEqual(
    b.messages.map((m) => m.controlId),
    ['MSG0001', 'MSG0002'],
  );
  b.messages[0].close();
  assert.equal(b.messages[1].get('PID-5.1'), 'Doe'); // shares the bytes, still alive
  b.messages[1].close();
  assert.throws(() => hl7.parseBatch('nothing here'), (e) => e instanceof QuireError && e.code === 'INVALID_HL7');
});

test('ISO-8859-1 bytes (MSH-18 8859/1) come out as text', () => {
  const bytes = new Uint8Array([...encoder.encode('MSH|^~\\&|A|B|C|D|2024||ADT^A01|1|P|2.5||||||8859/1\rPID|1||1||M'), 0xfc, ...encoder.encode('ller\r')]);
  const m = hl7.parse(bytes);
  assert.equal(m.charset, 'ISO-8859-1');
  assert.equal(m.get('PID-5'), 'Müller');
  assert.equal(m.getRaw('PID-5'), 'Müller');
  assert.equal(m.toJSON().segments[1].fields[4], 'Müller');
  m.close();
});

test('close() and the finalizer both free the wasm memory', async () => {
  assert.equal(typeof global.gc, 'function', 'run with --expose-gc');
  const big = ADT + 'OBX|3|ED|PDF||^AP^PDF^Base64^' + 'QUJD'.repeat(50000) + '\r';
  let before = memory().heapBytes;
  for (let i = 0; i < 5; i++) hl7.parse(big).close();
  const d = mllp.decoder();
  d.push(mllp.encode(big).subarray(0, 1000));
  d.close();
  assert.ok(memory().heapBytes - before < 64 * 1024, `after close: ${memory().heapBytes - before} bytes left`);
  before = memory().heapBytes;
  (() => {
    for (let i = 0; i < 5; i++) hl7.parse(big).controlId;
  })();
  assert.ok(memory().heapBytes - before > 5 * big.length);
  for (let i = 0; i < 50 && memory().heapBytes - before > 64 * 1024; i++) {
    global.gc();
    await new Promise((r) => setTimeout(r, 20));
  }
  assert.ok(memory().heapBytes - before < 64 * 1024, `after GC: ${memory().heapBytes - before} bytes left`);
});

test('mllp: encode, and decode in chunks of every size from 1 to n bytes', () => {
  const messages = [ADT, ADT.replace('MSG0001', 'MSG0002'), 'MSH|^~\\&|X|Y\rPID|1||é\r'];
  const framed = messages.map((m) => mllp.encode(m));
  assert.deepEqual([...framed[0].subarray(0, 1)], [0x0b]);
  assert.deepEqual([...framed[0].subarray(-2)], [0x1c, 0x0d]);
  const stream = new Uint8Array([...encoder.encode('garbage'), ...framed[0], ...framed[1], ...framed[2]]);
  for (let size = 1; size <= stream.length; size += size < 32 ? 1 : 97) {
    const d = mllp.decoder();
    const out = [];
    for (let at = 0; at < stream.length; at += size) out.push(...d.push(stream.subarray(at, at + size)));
    assert.deepEqual(out, messages, `chunks of ${size}`);
    assert.equal(d.stats.skippedBytes, 7);
    assert.equal(d.stats.bytesFed, stream.length);
    d.close();
  }
});

test('mllp: an oversize frame is FRAME_TOO_LARGE, the decoder resynchronises, bounded memory', () => {
  const d = mllp.decoder({ maxFrameBytes: 64 });
  const small = mllp.encode('MSH|^~\\&|A\r');
  const huge = mllp.encode('MSH|^~\\&|' + 'x'.repeat(10000) + '\r');
  assert.throws(
    () => d.push(new Uint8Array([...small, ...huge, ...small])),
    (e) => e instanceof QuireError && e.code === 'FRAME_TOO_LARGE' && e.offset === small.length,
  );
  // Frames completed in the same chunk stay queued.
  assert.deepEqual(d.take(), ['MSH|^~\\&|A\r', 'MSH|^~\\&|A\r']);
  assert.equal(d.stats.droppedFrames, 1);
  assert.ok(d.stats.bufferedBytes <= 64);
  assert.deepEqual(d.pushBytes(small).map((b) => b.length), [11]);
  d.close();
  assert.throws(() => d.push(small), /closed/);
});

test('corpus: every message parses, with JSON and ACK digests equal to the native table', () => {
  const corpus = corpusDir();
  const dir = path.join(corpus, 'hl7v2');
  const table = new Map();
  for (const line of readFileSync(path.join(dataDir, 'hl7v2', 'corpus_digests.tsv'), 'utf8').split('\n')) {
    if (!line || line.startsWith('#')) continue;
    table.set(line.split('\t')[0], line);
  }
  const files = readdirSync(path.join(dir, 'converter'))
    .filter((f) => f.endsWith('.hl7'))
    .sort()
    .map((f) => `converter/${f}`);
  for (const f of ['parser/adt_a03.txt', 'parser/cv.04_001_chem.hl7', 'parser/example_oml_o21.hl7', 'parser/omd_o03.txt', 'parser/omd_o03_rep.txt', 'util/messages.txt', 'util/segmentfinder_a24.hl7'])
    files.push(`hapi/${f}`);
  const aeOptions = { timestamp: '20240101000000', text: 'checked | by ^ quire', errorLocation: { segment: 'PID', sequence: 1, field: 3 } };
  let same = 0;
  let count = 0;
  for (const name of files) {
    const b = hl7.parseBatch(readFileSync(path.join(dir, name)));
    b.messages.forEach((m, i) => {
      const rowName = b.messages.length === 1 ? name : `${name}#${i + 1}`;
      const row = [rowName, String(m.segmentCount), fnv1a64(encoder.encode(m.toJSONText())), fnv1a64(encoder.encode(m.ack('AA'))), fnv1a64(encoder.encode(m.ack('AE', aeOptions)))].join('\t');
      assert.equal(row, table.get(rowName), rowName);
      // The ACK parses, carries the right MSA-2 and swaps sender and receiver.
      const a = hl7.parse(m.ack('AA'));
      assert.equal(a.get('MSA-2'), m.controlId, rowName);
      assert.equal(a.sendingApplication, m.receivingApplication, rowName);
      assert.equal(a.receivingFacility, m.sendingFacility, rowName);
      a.close();
      m.close();
      same++;
      count++;
    });
  }
  assert.equal(count, table.size);
  assert.ok(same >= 140);
});
