// NDJSON streaming through the npm package: from a string, a Node Readable and a WHATWG
// ReadableStream; blank lines, per-line errors, continueOnError; the corpus's Bulk Data export with
// zero issues; close() and the finalizer free the wasm-side stream.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createReadStream, readFileSync, readdirSync } from 'node:fs';
import { Readable } from 'node:stream';
import path from 'node:path';
import { loadQuire, corpusDir, dataDir } from './helpers.mjs';

const quire = await loadQuire();
const { ndjson, QuireError } = quire;
const mixed = readFileSync(path.join(dataDir, 'ndjson', 'mixed.ndjson'));

async function collect(stream) {
  const items = [];
  for await (const item of stream) items.push(item);
  return items;
}

test('ndjson: blank lines skipped, issues and bad lines with their line numbers (continueOnError)', async () => {
  for (const source of [mixed, mixed.toString('utf8'), Readable.from([mixed.subarray(0, 7), mixed.subarray(7, 100), mixed.subarray(100)]), Readable.toWeb(Readable.from([mixed]))]) {
    const s = ndjson.stream(source, { continueOnError: true });
    const items = await collect(s);
    assert.deepEqual(items.filter((i) => i.resource).map((i) => i.line), [1, 4, 6, 9]);
    assert.deepEqual(items.filter((i) => i.error).map((i) => [i.line, i.error.code]), [[7, 'INVALID_JSON'], [8, 'INVALID_RESOURCE']]);
    // Invariants' advice aside (dom-6: these fixtures have no narrative; fhir.test.mjs covers invariants).
    const issues = items.filter((i) => i.issue && (i.issue.key === undefined || i.issue.severity === 'error'));
    assert.equal(issues.length, 1);
    assert.equal(issues[0].line, 6);
    assert.equal(issues[0].issue.expression, 'Patient.gender');
    assert.equal(s.stats.resources, 4);
    assert.equal(s.stats.blankLines, 3);
    assert.deepEqual(s.stats.byType, { Observation: 1, Patient: 3 });
    assert.equal(s.closed, true);
  }
});

test('ndjson: string chunks cut between the halves of a surrogate pair keep the character (not U+FFFD)', async () => {
  const text = JSON.stringify({ resourceType: 'Patient', id: 'p1', name: [{ family: 'Gr\u{1F600}n' }] }) + '\n';
  const cut = text.indexOf('\u{1F600}') + 1; // between the pair's two UTF-16 units
  assert.equal(text.charCodeAt(cut - 1) >= 0xd800 && text.charCodeAt(cut - 1) <= 0xdbff, true);
  const items = await collect(ndjson.stream(Readable.from([text.slice(0, cut), text.slice(cut)], { objectMode: true })));
  const resources = items.filter((i) => i.resource);
  assert.equal(resources.length, 1);
  assert.equal(resources[0].resource.name[0].family, 'Gr\u{1F600}n');
});

test('ndjson: a bad line throws QuireError with its line number by default', async () => {
  const lines = [];
  await assert.rejects(
    (async () => {
      for await (const item of ndjson.stream(mixed)) if (item.resource) lines.push(item.line);
    })(),
    (e) => e instanceof QuireError && e.code === 'INVALID_JSON' && e.line === 7,
  );
  assert.deepEqual(lines, [1, 4, 6]);
});

test('ndjson: a line longer than maxLineBytes', async () => {
  const text = '{"resourceType":"Patient"}\n' + '{"resourceType":"Binary","data":"' + 'A'.repeat(10000) + '"}\n{"resourceType":"Patient"}\n';
  // Lines and errors only (the Patients' dom-6 warnings, no narrative, are issue items too).
  const items = (await collect(ndjson.stream(text, { maxLineBytes: 1000, continueOnError: true }))).filter((i) => !i.issue);
  assert.deepEqual(items.map((i) => (i.error ? `${i.line}:${i.error.code}` : `${i.line}`)), ['1', '2:LINE_TOO_LONG', '3']);
});

test('ndjson: the Bulk Data export streams with zero issues', async () => {
  const corpus = corpusDir();
  const dir = path.join(corpus, 'bulk-ndjson-synthea');
  let total = 0;
  for (const file of readdirSync(dir).filter((f) => f.endsWith('.000.ndjson')).sort()) {
    const s = ndjson.stream(createReadStream(path.join(dir, file), { highWaterMark: 64 * 1024 }));
    let issues = 0;
    // Synthea writes no narrative: dom-6's warning (and txt-1/txt-2 not checked) on every line are not counted.
    for await (const item of s) if (!item.resource && !(item.issue && item.issue.key !== undefined && item.issue.severity !== 'error')) ++issues;
    assert.equal(issues, 0, file);
    assert.deepEqual(Object.keys(s.stats.byType), [file.replace('.000.ndjson', '')]);
    total += s.stats.resources;
  }
  assert.equal(total, 3889);
});

test('ndjson: close() and the finalizer free the stream', async () => {
  const before = quire.memory().heapBytes;
  const s = ndjson.stream(mixed);
  s.close();
  s.close();
  assert.equal(s.closed, true);
  assert.ok(quire.memory().heapBytes <= before + 64);
  assert.equal(typeof globalThis.gc, 'function', 'run with --expose-gc (npm test does)');
  for (let i = 0; i < 50; ++i) ndjson.stream(mixed);
  assert.ok(quire.memory().heapBytes > before + 4096, 'forgotten streams hold memory until collected');
  for (let i = 0; i < 10 && quire.memory().heapBytes > before + 4096; ++i) {
    await new Promise((r) => setTimeout(r, 10));
    globalThis.gc();
  }
  assert.ok(quire.memory().heapBytes <= before + 4096, 'the finalizer freed forgotten streams');
});

// Byte ranges: the npm package cuts an input as `quire split` and `quire view run --range` do.
const patients = readFileSync(path.join(dataDir, 'view_output', 'patients.ndjson'));
const patientsPath = path.join(dataDir, 'view_output', 'patients.ndjson');
const patientView = readFileSync(path.join(dataDir, 'view_output', 'patient_view.json'), 'utf8');
const patientRows = readFileSync(path.join(dataDir, 'view_output', 'rows.ndjson'), 'utf8');

async function rowsOfRange(source, range) {
  let text = '';
  for await (const t of quire.view.streamText(patientView, ndjson.range(source, range))) text += t;
  return text;
}

test('ndjson.split: the ranges quire split prints, meeting at line starts, from bytes, a path and a reader', () => {
  const cli = [{ part: 0, start: 0, end: 283, bytes: 283 }, { part: 1, start: 283, end: 628, bytes: 345 }, { part: 2, start: 628, end: 750, bytes: 122 }];
  assert.deepEqual(ndjson.split(patients, 3), cli);
  assert.deepEqual(ndjson.split(patientsPath, 3), cli);
  const reads = [];
  const reader = { size: patients.length, read(offset, length, into) { reads.push([offset, length]); into.set(patients.subarray(offset, offset + length)); return length; } };
  assert.deepEqual(ndjson.split(reader, 3), cli);
  for (let parts = 1; parts <= 6; parts++) {
    const r = ndjson.split(patients, parts);
    assert.equal(r.length, parts);
    assert.equal(r[0].start, 0);
    assert.equal(r[parts - 1].end, patients.length);
    for (let i = 1; i < parts; i++) {
      assert.equal(r[i].start, r[i - 1].end);
      assert.ok(r[i].start === r[i].end || patients[r[i].start - 1] === 0x0a, `range ${i} of ${parts} starts at a line start`);
    }
  }
});

test('ndjson.range: the rows of split ranges, one after another, are the whole file\'s rows (as view run --range)', async () => {
  for (const parts of [1, 2, 3, 5]) {
    let joined = '';
    for (const r of ndjson.split(patients, parts)) joined += await rowsOfRange(patientsPath, r);
    assert.equal(joined, patientRows, `${parts} parts`);
  }
  // Cut anywhere: three meeting ranges give every row once.
  for (let a = 0; a <= patients.length; a += 37) {
    for (let b = a; b <= patients.length; b += 53) {
      const joined = (await rowsOfRange(patients, { start: 0, end: a })) + (await rowsOfRange(patients, { start: a, end: b })) +
        (await rowsOfRange(patients, { start: b, end: patients.length + 100 }));
      assert.equal(joined, patientRows, `cut at ${a} and ${b}`);
    }
  }
  // Byte 283 starts a blank line, 284 the next: the range holds that blank line only.
  assert.deepEqual(ndjson.lineRange(patients, { start: 1, end: 284 }), { start: 283, end: 284 });
  assert.deepEqual(ndjson.lineRange(patients, { start: 1, end: 285 }), { start: 283, end: patients.indexOf(0x0a, 284) + 1 });
  assert.deepEqual(ndjson.lineRange(patients, { start: 750, end: 9999 }), { start: 750, end: 750 });
});

test('ndjson ranges: bad bounds and parts are typed errors', () => {
  assert.throws(() => ndjson.lineRange(patients, { start: 751, end: 800 }), (e) => e instanceof QuireError && e.code === 'INVALID_ARGUMENT');
  assert.throws(() => ndjson.split(patients, 0), (e) => e instanceof QuireError && e.code === 'INVALID_ARGUMENT');
  assert.throws(() => ndjson.split(patients, 65537), (e) => e instanceof QuireError && e.code === 'INVALID_ARGUMENT');
  assert.throws(() => ndjson.lineRange(patients, { start: -1, end: 3 }), TypeError);
  assert.throws(() => ndjson.split(patients, 1.5), TypeError);
  assert.throws(() => ndjson.split({ size: 3 }, 2), TypeError);
  const short = { size: 100, read: () => 0 };
  assert.throws(() => ndjson.split(short, 2), (e) => e instanceof QuireError && e.code === 'IO_ERROR');
});
