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
