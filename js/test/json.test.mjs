// The JSON layer through the npm package: the same outcomes as native, errors with locations,
// exact numbers, handles that free their memory.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync, readdirSync } from 'node:fs';
import { execFileSync } from 'node:child_process';
import path from 'node:path';
import { loadQuire, corpusDir, dataDir, dist } from './helpers.mjs';

const quire = await loadQuire();
const { json, QuireError, memory, version, init } = quire;

// Each of these runs in a fresh Node process: an ES module is instantiated once per process.
function runFresh(body) {
  const script = `import * as quire from ${JSON.stringify(new URL(`file://${dist}/index.js`).href)};\n${body}`;
  return execFileSync(process.execPath, ['--input-type=module', '-e', script], { encoding: 'utf8' }).trim();
}

test('init is idempotent and accepts a compiled module or the wasm bytes', async () => {
  await init();
  await init();
  const wasmPath = JSON.stringify(path.join(dist, 'quire.wasm'));
  assert.equal(
    runFresh(`import { readFileSync } from 'node:fs';
      const compiled = await WebAssembly.compile(readFileSync(${wasmPath}));
      await quire.init(compiled); await quire.init();
      console.log(quire.json.stats('[1]').numbers);`),
    '1',
  );
  assert.equal(
    runFresh(`import { readFileSync } from 'node:fs';
      await Promise.all([quire.init(new Uint8Array(readFileSync(${wasmPath}))), quire.init()]);
      console.log(quire.json.stats('{"a":true}').booleans);`),
    '1',
  );
});

test('init() with bytes that are not a module rejects, and a later init() can still succeed', () => {
  assert.equal(
    runFresh(`let first;
      try { await quire.init(new Uint8Array([0, 97, 115, 109, 1, 0, 0, 0, 255])); first = 'resolved'; } catch (e) { first = e instanceof WebAssembly.CompileError; }
      await quire.init();
      console.log(first, quire.json.stats('[1]').numbers);`),
    'true 1',
  );
});

test('calling before init() is a plain Error that says what to do', () => {
  assert.equal(
    runFresh(`try { quire.json.check('[]'); console.log('no error'); }
      catch (e) { console.log(e instanceof quire.QuireError ? 'QuireError' : e.message); }`),
    'quire: call `await init()` before using the library',
  );
});

test('version() reports the build and its flags', () => {
  const v = version();
  assert.equal(v.target, 'wasm');
  assert.match(v.flags, /-O3/);
  assert.match(v.flags, /-msimd128/);
  assert.equal(v.simd, 'fallback');
});

test('check returns null for valid JSON and a located QuireError otherwise', () => {
  assert.equal(json.check('{"a": [1, 2.50, "x"]}'), null);
  const e = json.check('{\n  "a": [1, 2,]\n}');
  assert.ok(e instanceof QuireError);
  assert.equal(e.code, 'INVALID_JSON');
  assert.equal(e.line, 2);
  assert.equal(typeof e.offset, 'number');
  const n = json.check('[1, 01]');
  assert.equal(n.code, 'INVALID_NUMBER');
  assert.equal(n.offset, 4);
  assert.equal(n.column, 5);
});

test('stats counts values by kind and throws QuireError on bad input', () => {
  const s = json.stats('{"a":[1,"x",null,true,{"b":[[]]}]}');
  assert.deepEqual(s, { objects: 2, arrays: 3, strings: 1, numbers: 1, booleans: 1, nulls: 1, keys: 2, values: 9, maxDepth: 5, bytes: 34 });
  assert.throws(() => json.stats('[1,'), (e) => e instanceof QuireError && e.offset === 3);
  assert.equal(json.stats(new TextEncoder().encode('[true]').buffer).booleans, 1);
});

test('documents keep numbers exactly and answer JSON Pointers', () => {
  const doc = json.parse('{"value": 0.700, "big": 123456789012345678901234567890, "a/b": [{"c": null}]}');
  try {
    assert.equal(doc.text('/value'), '0.700');
    assert.equal(doc.text('/big'), '123456789012345678901234567890');
    assert.deepEqual(doc.get('/a~1b'), [{ c: null }]);
    assert.equal(doc.kind('/a~1b/0/c'), 'null');
    assert.equal(doc.get('/missing'), undefined);
    assert.equal(doc.valueCount, 6);
    assert.equal(doc.maxDepth, 3);
  } finally {
    doc.close();
  }
  assert.throws(() => doc.text(''), /closed/);
  doc.close(); // twice is fine
});

test('bad input: each is a typed error', () => {
  const deep = '['.repeat(100000) + ']'.repeat(100000);
  assert.equal(json.check(deep).code, 'MAX_DEPTH_EXCEEDED');
  assert.equal(json.check('[' + '7'.repeat(1000000) + ']'), null);
  assert.equal(json.check(new Uint8Array([0x5b, 0x22, 0xff, 0x22, 0x5d])).code, 'INVALID_UTF8');
  assert.equal(json.check('').code, 'EMPTY_INPUT');
  assert.equal(json.check('{"a": [1, 2').code, 'INVALID_JSON');
  assert.equal(json.check('[1,2,3]', { maxDocumentBytes: 4 }).code, 'DOCUMENT_TOO_LARGE');
  assert.equal(json.check('[[1]]', { maxDepth: 1 }).code, 'MAX_DEPTH_EXCEEDED');
  assert.throws(() => json.parse('1 2'), (e) => e.code === 'TRAILING_CONTENT' && e.offset === 2);
  assert.throws(() => json.parse('[1] 2'), (e) => e.code === 'INVALID_JSON');
});

test('JSONTestSuite: every outcome equals the native table', () => {
  const dir = path.join(corpusDir(), 'json-test-suite', 'test_parsing');
  const table = new Map(
    readFileSync(path.join(dataDir, 'json', 'json_test_suite_outcomes.tsv'), 'utf8')
      .split('\n')
      .filter((l) => l && !l.startsWith('#'))
      .map((l) => l.split('\t')),
  );
  let y = 0, n = 0, same = 0;
  const files = readdirSync(dir).filter((f) => f.endsWith('.json')).sort();
  for (const f of files) {
    const e = json.check(readFileSync(path.join(dir, f)));
    const outcome = e ? e.code : 'accept';
    if (f.startsWith('y_')) { assert.equal(outcome, 'accept', f); y++; }
    if (f.startsWith('n_')) { assert.notEqual(outcome, 'accept', f); n++; }
    assert.equal(outcome, table.get(f), f);
    same++;
  }
  assert.equal(files.length, 318);
  console.log(`JSONTestSuite (wasm, npm package): y_ ${y}/95 accepted, n_ ${n}/188 rejected, ${same}/318 outcomes as native`);
});

test('close() frees the wasm memory a document holds', () => {
  const text = JSON.stringify(Array.from({ length: 20000 }, (_, i) => ({ id: i, name: `n${i}`, v: i / 7 })));
  const before = memory().heapBytes;
  const docs = Array.from({ length: 5 }, () => json.parse(text));
  const during = memory().heapBytes;
  assert.ok(during - before > 5 * text.length, `documents should hold memory (${during - before} bytes)`);
  for (const d of docs) d.close();
  assert.ok(memory().heapBytes - before < 64 * 1024, `after close: ${memory().heapBytes - before} bytes left`);
});

test('a forgotten document is freed by the finalizer', async () => {
  assert.equal(typeof global.gc, 'function', 'run with --expose-gc');
  const text = JSON.stringify(Array.from({ length: 20000 }, (_, i) => ({ id: i })));
  const before = memory().heapBytes;
  (() => {
    for (let i = 0; i < 5; i++) json.parse(text).valueCount;
  })();
  assert.ok(memory().heapBytes - before > 5 * text.length);
  for (let i = 0; i < 50 && memory().heapBytes - before > 64 * 1024; i++) {
    global.gc();
    await new Promise((r) => setTimeout(r, 20));
  }
  assert.ok(memory().heapBytes - before < 64 * 1024, `after GC: ${memory().heapBytes - before} bytes left`);
});
