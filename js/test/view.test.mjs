// SQL on FHIR v2 ViewDefinitions through the npm package: the whole suite in the corpus gives
// the rows the C++ conformance test checked in (tests/data/view/digests.tsv, the same digest over
// the same text), its expectError cases their codes; objects, JSON text, Bundles, arrays and NDJSON
// give the same rows; streaming over any piece size; errors with their place in the view; close().
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync, readdirSync } from 'node:fs';
import { Readable } from 'node:stream';
import path from 'node:path';
import { loadQuire, corpusDir, dataDir } from './helpers.mjs';

const quire = await loadQuire();
const { view, json, CompiledView, QuireError } = quire;

/**
 * tests/view_conformance_test.cpp's digest() of the UTF-8 bytes, as 16 hex digits: FNV-1a 64 with
 * its basis as that file writes it (1469598103934665603, one digit short of FNV's), which the
 * checked-in table is made with.
 */
function fnv1a(text) {
  let h = 1469598103934665603n;
  for (const byte of new TextEncoder().encode(text)) {
    h ^= BigInt(byte);
    h = (h * 0x100000001b3n) & 0xffffffffffffffffn;
  }
  return h.toString(16).padStart(16, '0');
}

/** file \t title -> digest, from the table the C++ suite checks in. */
function checkedInDigests() {
  const out = new Map();
  for (const line of readFileSync(path.join(dataDir, 'view', 'digests.tsv'), 'utf8').split('\n')) {
    if (!line || line.startsWith('#')) continue;
    const [file, title, , digest] = line.split('\t');
    out.set(`${file}\t${title}`, digest);
  }
  return out;
}

const PATIENT_VIEW = {
  resourceType: 'ViewDefinition',
  resource: 'Patient',
  name: 'patient_names',
  select: [{ column: [{ name: 'id', path: 'id', type: 'id' }] }, { forEach: 'name', column: [{ name: 'family', path: 'family', type: 'string' }, { name: 'given', path: 'given', collection: true }] }],
};
const ID_VIEW = { resource: 'Patient', select: [{ column: [{ name: 'id', path: 'id' }] }] };
const PATIENTS = [
  { resourceType: 'Patient', id: 'a', name: [{ family: 'Smith', given: ['Ann', 'B'] }, { family: 'Jones' }] },
  { resourceType: 'Observation', id: 'o1', status: 'final', code: { text: 'x' } },
  { resourceType: 'Patient', id: 'b', name: [{ family: 'Lee' }] },
];
const EXPECTED = [
  { id: 'a', family: 'Smith', given: ['Ann', 'B'] },
  { id: 'a', family: 'Jones', given: [] },
  { id: 'b', family: 'Lee', given: [] },
];

test('view: the SQL on FHIR suite gives the checked-in digests, case by case', async () => {
  // The corpus's copy of the suite, then the suite's files it lacks (tests/data/view/beyond).
  const dirs = [path.join(corpusDir(), 'sql-on-fhir', 'tests'), path.join(dataDir, 'view', 'beyond')];
  const digests = checkedInDigests();
  let cases = 0;
  let errors = 0;
  let inexactFiles = 0;
  const files = dirs.flatMap((dir) => readdirSync(dir).filter((f) => f.endsWith('.json')).sort().map((f) => [dir, f]));
  for (const [dir, file] of files) {
    const bytes = readFileSync(path.join(dir, file));
    const parsed = JSON.parse(bytes.toString('utf8'));
    // The exact texts of the resources and each view, numbers as written (JSON.parse would round).
    const doc = json.parse(bytes);
    const resourcesText = doc.text('/resources');
    // Objects lose a decimal's precision (`1.0` is 1), which lowBoundary() and the like read: the
    // object forms are compared only for files that JSON.parse leaves unchanged.
    const exactAsObjects = JSON.stringify(parsed.resources) === resourcesText;
    if (!exactAsObjects) ++inexactFiles;
    parsed.tests.forEach((c, i) => {
      ++cases;
      const want = digests.get(`${file}\t${c.title}`);
      assert.ok(want, `${file}: ${c.title} is in digests.tsv`);
      let got;
      let rows;
      try {
        const text = view.runText(doc.text(`/tests/${i}/view`), resourcesText);
        got = `[${text.split('\n').filter(Boolean).join(',')}]`;
        rows = text.split('\n').filter(Boolean).map((l) => JSON.parse(l));
      } catch (e) {
        if (!(e instanceof QuireError)) throw e;
        got = `error:${e.code}`;
      }
      assert.equal(fnv1a(got), want, `${file}: ${c.title}: ${got}`);
      if (c.expectError) {
        ++errors;
        assert.match(got, /^error:(INVALID_VIEW|INVALID_FHIRPATH|UNKNOWN_FUNCTION|FHIRPATH_TYPE_ERROR)$/, `${file}: ${c.title}`);
        assert.throws(() => view.run(c.view, parsed.resources), (e) => e instanceof QuireError && got === `error:${e.code}`);
      } else if (exactAsObjects) {
        // The object forms (JSON.stringify'd by the wrapper) give the rows the text gives.
        assert.deepEqual(view.run(c.view, parsed.resources), rows, `${file}: ${c.title}`);
      }
    });
    doc.close();
  }
  assert.equal(cases, digests.size, 'every case of digests.tsv ran');
  assert.ok(errors >= 10, `${errors} expectError cases`);
  assert.ok(inexactFiles <= 3, `${inexactFiles} files whose numbers JSON.parse changes`);
});

test('view: compile gives a handle with the columns, resource and name', () => {
  const v = view.compile(PATIENT_VIEW);
  assert.ok(v instanceof CompiledView);
  assert.equal(v.resource, 'Patient');
  assert.equal(v.name, 'patient_names');
  assert.deepEqual(v.columns, [
    { name: 'id', type: 'id', collection: false },
    { name: 'family', type: 'string', collection: false },
    { name: 'given', type: '', collection: true },
  ]);
  assert.deepEqual(v.run(PATIENTS), EXPECTED);
  assert.deepEqual(v.run(PATIENTS[0]), EXPECTED.slice(0, 2));
  v.close();
  assert.equal(v.closed, true);
  assert.throws(() => v.run(PATIENTS), /this CompiledView is closed/);
  v.close();
  // The JSON text of the view, as text or bytes, compiles the same.
  const w = view.compile(new TextEncoder().encode(JSON.stringify(PATIENT_VIEW)));
  assert.deepEqual(w.columns.map((c) => c.name), ['id', 'family', 'given']);
  w[Symbol.dispose]();
  assert.equal(w.closed, true);
});

test('view: one resource, an array, a Bundle, JSON text, bytes and NDJSON give the same rows', () => {
  const ndjsonText = PATIENTS.map((p) => JSON.stringify(p)).join('\n') + '\n';
  const bundle = { resourceType: 'Bundle', type: 'collection', entry: PATIENTS.map((resource) => ({ resource })) };
  const v = view.compile(PATIENT_VIEW);
  for (const input of [PATIENTS, JSON.stringify(PATIENTS), bundle, JSON.stringify(bundle, null, 2), ndjsonText, new TextEncoder().encode(ndjsonText), new TextEncoder().encode(ndjsonText).buffer, ndjsonText.replaceAll('\n', '\r\n\n')]) {
    assert.deepEqual(v.run(input), EXPECTED);
    assert.deepEqual(view.run(PATIENT_VIEW, input), EXPECTED);
  }
  assert.deepEqual(v.run(''), []);
  assert.deepEqual(v.run([]), []);
  v.close();
});

test('view: runText keeps every digit that the row objects round', () => {
  const obsView = { resource: 'Observation', select: [{ column: [{ name: 'id', path: 'id' }, { name: 'value', path: 'value.ofType(Quantity).value' }] }] };
  const text = '{"resourceType":"Observation","id":"o1","status":"final","code":{"text":"x"},"valueQuantity":{"value":0.700}}';
  assert.equal(view.runText(obsView, text), '{"id":"o1","value":0.700}\n');
  assert.deepEqual(view.run(obsView, text), [{ id: 'o1', value: 0.7 }]);
});

test('view: stream gives the rows of run over any piece size and source kind', async () => {
  const lines = [];
  for (let i = 0; i < 300; ++i) lines.push(JSON.stringify({ resourceType: 'Patient', id: `p${i}`, name: [{ family: `F${i}`, given: ['x'] }] }));
  const text = lines.join('\n') + '\n';
  const bytes = new TextEncoder().encode(text);
  const want = view.run(PATIENT_VIEW, text);
  assert.equal(want.length, 300);
  const collect = async (it) => {
    const out = [];
    for await (const r of it) out.push(r);
    return out;
  };
  const chunked = (size) => {
    const parts = [];
    for (let at = 0; at < bytes.length; at += size) parts.push(bytes.subarray(at, at + size));
    return parts;
  };
  for (const source of [bytes, text, Readable.from(chunked(1)), Readable.from(chunked(97)), Readable.toWeb(Readable.from(chunked(4096))), new Blob([bytes])]) {
    assert.deepEqual(await collect(view.stream(PATIENT_VIEW, source)), want);
  }
  const v = view.compile(PATIENT_VIEW);
  assert.deepEqual(await collect(v.stream(Readable.from(chunked(13)))), want);
  const texts = await collect(v.streamText(Readable.from(chunked(500))));
  assert.equal(texts.join(''), view.runText(v, text));
  v.close();
});

test('view: string chunks cut between the halves of a surrogate pair keep the character (not U+FFFD)', async () => {
  const text = JSON.stringify({ resourceType: 'Patient', id: 'p1', name: [{ family: 'Gr\u{1F600}n', given: ['\u{10348}'] }] }) + '\n';
  const want = view.run(PATIENT_VIEW, text);
  assert.equal(want[0].family, 'Gr\u{1F600}n');
  // Every cut of the text in UTF-16 units, the pair's halves among them, as a stream of strings.
  for (let cut = 1; cut < text.length; ++cut) {
    const rows = [];
    for await (const r of view.stream(PATIENT_VIEW, Readable.from([text.slice(0, cut), text.slice(cut)], { objectMode: true }))) rows.push(r);
    assert.deepEqual(rows, want, `cut at ${cut}`);
  }
});

test('view: a bad NDJSON line while streaming throws with its line number, after the rows before it', async () => {
  const text = '{"resourceType":"Patient","id":"a"}\n\n{"resourceType":"Patient","id":}\n{"resourceType":"Patient","id":"c"}\n';
  for (const size of [1, 7, 1000]) {
    const bytes = new TextEncoder().encode(text);
    const parts = [];
    for (let at = 0; at < bytes.length; at += size) parts.push(bytes.subarray(at, at + size));
    const ids = [];
    await assert.rejects(
      (async () => {
        for await (const row of view.stream(ID_VIEW, Readable.from(parts))) ids.push(row.id);
      })(),
      (e) => e instanceof QuireError && e.code === 'INVALID_JSON' && e.line === 3 && e.offset >= 37,
    );
    assert.deepEqual(ids, ['a']);
  }
  await assert.rejects(
    (async () => {
      for await (const row of view.stream(PATIENT_VIEW, '{"resourceType":"Patient","id":"' + 'x'.repeat(2000) + '"}\n', { maxLineBytes: 1000 })) assert.fail(row);
    })(),
    (e) => e instanceof QuireError && e.code === 'LINE_TOO_LONG' && e.line === 1,
  );
});

test('view: an error of the view on a streamed line has the line and the place in the view', async () => {
  const where = { resource: 'Patient', where: [{ path: 'id' }], select: [{ column: [{ name: 'id', path: 'id' }] }] };
  await assert.rejects(
    (async () => {
      for await (const row of view.stream(where, '\n{"resourceType":"Patient","id":"a"}\n')) assert.fail(row);
    })(),
    (e) => e instanceof QuireError && e.code === 'FHIRPATH_TYPE_ERROR' && e.line === 2 && e.path === 'where[0].path' && e.offset === undefined && e.message.includes('(NDJSON line 2)'),
  );
});

test('view: errors are QuireErrors with the code and the place in the view', () => {
  const cases = [
    [{ select: [{ column: [{ name: 'id', path: 'id' }] }] }, 'INVALID_VIEW', 'resource'],
    [{ resource: 'Patient', select: [{ column: [{ name: 'id', path: 'id' }, { name: '1bad', path: 'id' }] }] }, 'INVALID_VIEW', 'select[0].column[1].name'],
    [{ resource: 'Patient', select: [{ forEach: 'name.nosuch()', column: [{ name: 'a', path: 'id' }] }] }, 'UNKNOWN_FUNCTION', 'select[0].forEach'],
    [{ resource: 'Patient', select: [{ column: [{ name: 'a', path: 'name.(' }] }] }, 'INVALID_FHIRPATH', 'select[0].column[0].path'],
  ];
  for (const [definition, code, where] of cases) {
    assert.throws(() => view.compile(definition), (e) => e instanceof QuireError && e.code === code && e.path === where && e.message.includes(code), `${code} ${where}`);
  }
  assert.throws(() => view.compile('{"resource":'), (e) => e instanceof QuireError && e.code === 'INVALID_JSON');
  // While running: a column that is not a collection gets several values.
  const many = { resource: 'Patient', select: [{ column: [{ name: 'family', path: 'name.family' }] }] };
  assert.throws(() => view.run(many, PATIENTS), (e) => e instanceof QuireError && e.code === 'FHIRPATH_TYPE_ERROR' && e.path === 'select[0].column[0].path');
  assert.throws(() => view.run(PATIENT_VIEW, '{"resourceType":"Patient",'), (e) => e instanceof QuireError && e.code === 'INVALID_JSON');
  assert.throws(() => view.run(PATIENT_VIEW, 42), TypeError);
  assert.throws(() => view.compile(42), TypeError);
});

test('view: close() and the finalizer free the compiled view', async () => {
  const before = quire.memory().heapBytes;
  for (let i = 0; i < 2000; ++i) {
    const v = view.compile(PATIENT_VIEW);
    v.run(PATIENTS);
    v.close();
  }
  assert.ok(quire.memory().heapBytes - before < 1 << 20, 'close() frees');
  assert.equal(typeof globalThis.gc, 'function', 'run with --expose-gc (npm test does)');
  for (let i = 0; i < 2000; ++i) view.compile(PATIENT_VIEW);
  assert.ok(quire.memory().heapBytes - before >= 1 << 20, 'forgotten views hold memory until collected');
  for (let i = 0; i < 10 && quire.memory().heapBytes - before >= 1 << 20; ++i) {
    globalThis.gc();
    await new Promise((r) => setTimeout(r, 10));
  }
  assert.ok(quire.memory().heapBytes - before < 1 << 20, 'the finalizer frees');
});

// --- writing tables (core's table_writer) ----------------------------------------------------------

const goldenDir = path.join(dataDir, 'view_output');
const goldenView = readFileSync(path.join(goldenDir, 'patient_view.json'), 'utf8');
const goldenInput = readFileSync(path.join(goldenDir, 'patients.ndjson'));

/** FNV-1a 64 of bytes, as 16 hex digits (tests/view_test.cpp's digest of the pinned .quire bytes). */
function fnv1a64(bytes) {
  let h = 0xcbf29ce484222325n;
  for (const byte of bytes) {
    h ^= BigInt(byte);
    h = (h * 0x100000001b3n) & 0xffffffffffffffffn;
  }
  return h.toString(16).padStart(16, '0');
}

const PINNED_OPTIONS = { indexes: [{ column: 'id', kind: 'hash' }, { column: 'family', kind: 'sorted' }], chunkRows: 2 };

test('view: toQuire writes the bytes tests/data/view/quire_bytes.tsv pins natively, from any piece size', async () => {
  const [, pinned] = readFileSync(path.join(dataDir, 'view', 'quire_bytes.tsv'), 'utf8').split('\n');
  const [size, digest] = pinned.split('\t');
  const bytes = await view.toQuire(goldenView, goldenInput, PINNED_OPTIONS);
  assert.equal(`${bytes.length}\t${fnv1a64(bytes)}`, `${size}\t${digest}`);
  const parts = [];
  for (let at = 0; at < goldenInput.length; at += 5) parts.push(goldenInput.subarray(at, at + 5));
  assert.deepEqual(await view.toQuire(goldenView, Readable.from(parts), PINNED_OPTIONS), bytes);
  assert.deepEqual(await view.toQuire(goldenView, new Blob([goldenInput]), PINNED_OPTIONS), bytes);
});

test('view: toQuire bytes open with format.open and give the rows of run', async () => {
  const v = view.compile(goldenView);
  const bytes = await v.toQuire(goldenInput, PINNED_OPTIONS);
  const f = quire.format.open(bytes);
  assert.equal(f.queryText({}, { ndjson: true }), v.runText(goldenInput));
  assert.equal(f.queryText({}, { ndjson: true }), readFileSync(path.join(goldenDir, 'rows.ndjson'), 'utf8'));
  assert.deepEqual(f.info.columns.map((c) => c.name), v.columns.map((c) => c.name));
  assert.deepEqual(f.info.indexes, PINNED_OPTIONS.indexes);
  const first = v.run(goldenInput)[0];
  assert.deepEqual(f.find('id', first.id), first);
  f.close();
  // Resource objects are NDJSON to the writer: one, or an array.
  const objects = goldenInput.toString('utf8').split('\n').filter((l) => l.trim()).map((l) => JSON.parse(l));
  assert.deepEqual(await v.toNdjson(objects), v.runText(objects));
  assert.equal(await v.toNdjson(objects[0]), v.runText(objects[0]));
  v.close();
});

test('view: toCsv and toNdjson give the golden files core writes', async () => {
  assert.equal(await view.toCsv(goldenView, goldenInput), readFileSync(path.join(goldenDir, 'rows.csv'), 'utf8'));
  assert.equal(await view.toNdjson(goldenView, goldenInput), readFileSync(path.join(goldenDir, 'rows.ndjson'), 'utf8'));
});

test('view: toQuire with out writes the file in Node; errors from the writer are QuireErrors', async () => {
  const { mkdtempSync, rmSync, existsSync, readdirSync: ls } = await import('node:fs');
  const { tmpdir } = await import('node:os');
  const dir = mkdtempSync(path.join(tmpdir(), 'quire-view-'));
  try {
    const file = path.join(dir, 'patients.quire');
    const v = view.compile(goldenView);
    assert.deepEqual(await v.writeFile(file, goldenInput, PINNED_OPTIONS), { rows: v.run(goldenInput).length });
    assert.deepEqual(readFileSync(file), Buffer.from(await v.toQuire(goldenInput, PINNED_OPTIONS)));
    const again = path.join(dir, 'again.quire');
    assert.equal((await view.toQuire(v, goldenInput, { ...PINNED_OPTIONS, out: again })).length, 0);
    assert.deepEqual(readFileSync(again), readFileSync(file));
    // An index on a column the view does not have; a value its column cannot hold: no file left behind.
    await assert.rejects(v.writeFile(path.join(dir, 'bad.quire'), goldenInput, { indexes: { nosuch: 'hash' } }), (e) => e instanceof QuireError && e.code === 'NO_SUCH_COLUMN');
    await assert.rejects(
      view.toQuire({ resource: 'Patient', select: [{ column: [{ name: 'b', path: 'id', type: 'boolean' }] }] }, '{"resourceType":"Patient","id":"x"}\n'),
      (e) => e instanceof QuireError && e.code === 'SCHEMA_MISMATCH' && e.path === 'b',
    );
    await assert.rejects(view.toNdjson(ID_VIEW, '{"resourceType":"Patient","id":"a"}\n{"resourceType":\n'), (e) => e instanceof QuireError && e.line === 2);
    assert.equal(existsSync(path.join(dir, 'bad.quire')), false);
    assert.deepEqual(ls(dir).sort(), ['again.quire', 'patients.quire']);
    v.close();
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test('view: toQuire, toCsv and toNdjson give the bytes of `quire view run` (skipped without build/native)', async (t) => {
  const cli = process.env.QUIRE_CLI ?? path.join(dataDir, '..', '..', 'build', 'native', 'native', 'quire');
  const { existsSync, mkdtempSync, rmSync } = await import('node:fs');
  if (!existsSync(cli)) return t.skip(`${cli} is absent (make native builds it)`);
  const { execFileSync } = await import('node:child_process');
  const { tmpdir } = await import('node:os');
  const dir = mkdtempSync(path.join(tmpdir(), 'quire-view-cli-'));
  try {
    const viewFile = path.join(goldenDir, 'patient_view.json');
    const input = path.join(goldenDir, 'patients.ndjson');
    const run = (out, ...flags) => {
      execFileSync(cli, ['view', 'run', viewFile, input, '--out', path.join(dir, out), '--quiet', ...flags]);
      return readFileSync(path.join(dir, out));
    };
    const native = run('t.quire', '--index', 'id:hash', '--index', 'family:sorted', '--chunk-rows', '2');
    assert.deepEqual(Buffer.from(await view.toQuire(goldenView, goldenInput, PINNED_OPTIONS)), native);
    assert.equal(await view.toCsv(goldenView, goldenInput), run('t.csv').toString('utf8'));
    assert.equal(await view.toNdjson(goldenView, goldenInput), run('t.ndjson').toString('utf8'));
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test('view: streaming 40 MB of NDJSON leaves the heap bounded by a piece, not the input', async (t) => {
  const line = (i) => `{"resourceType":"Patient","id":"p${i}","name":[{"family":"F${i}","given":["${'g'.repeat(300)}"]}]}\n`;
  const PIECE = 256 * 1024;
  async function* source() {
    let piece = '';
    for (let i = 0; i < 110000; ++i) {
      piece += line(i);
      if (piece.length >= PIECE) {
        yield piece;
        piece = '';
      }
    }
    if (piece) yield piece;
  }
  const before = quire.memory().heapCapacityBytes;
  let rows = 0;
  let bytes = 0;
  for await (const text of view.streamText(PATIENT_VIEW, source())) {
    bytes += text.length;
    rows += text ? text.split('\n').length - 1 : 0;
  }
  assert.equal(rows, 110000);
  assert.ok(bytes > 35e6, `${bytes} bytes of rows`);
  const grown = quire.memory().heapCapacityBytes - before;
  t.diagnostic(`heap capacity ${before} bytes before, grown by ${grown}`);
  // Holding the input (40 MB) would grow it past the capacity it started with.
  assert.ok(before < 40e6, `capacity ${before} bytes before`);
  assert.ok(grown < 16 * 1024 * 1024, `the heap grew by ${grown} bytes`);
});

test('view: every entry point walks Bundles alike over the corpus examples (a Bundle line gives its entries)', async () => {
  const corpus = corpusDir();
  assert.ok(corpus, 'the corpus (QUIRE_CORPUS or ../shared/corpus) is needed');
  const dir = path.join(corpus, 'fhir-r4', 'examples');
  const names = readdirSync(dir).filter((n) => /^(Observation|Patient|Bundle)-/.test(n)).sort();
  // One example a line: a pretty-printed file's line ends lie between tokens.
  const ndjson = names.map((n) => readFileSync(path.join(dir, n), 'utf8').replace(/[\r\n]/g, ' ') + '\n').join('');
  assert.ok(names.filter((n) => n.startsWith('Bundle-')).length > 10);
  const v = view.compile({
    resource: 'Observation',
    select: [{ column: [{ name: 'id', path: 'id' }, { name: 'status', path: 'status' }, { name: 'subject', path: 'subject.reference' }] }],
  });
  const want = v.runText(ndjson);
  const count = want.split('\n').length - 1;
  const topLevel = names.filter((n) => n.startsWith('Observation-')).length;
  assert.ok(count > topLevel, `${count} rows, ${topLevel} Observations outside Bundles`);
  assert.equal(v.run(ndjson).length, count);
  assert.equal(v.runText(JSON.parse(`[${ndjson.trim().split('\n').join(',')}]`)), want);
  let streamed = '';
  for await (const t of v.streamText(Readable.from([Buffer.from(ndjson)]))) streamed += t;
  assert.equal(streamed, want);
  let rows = 0;
  for await (const _ of view.stream(v, new Blob([ndjson]))) rows++;
  assert.equal(rows, count);
  assert.equal(await v.toNdjson(ndjson), want);
  assert.equal((await v.toCsv(ndjson)).split('\n').length - 2, count);
  const f = quire.format.open(await v.toQuire(ndjson));
  assert.equal(f.queryText({}, { ndjson: true }), want);
  f.close();
  v.close();
});
