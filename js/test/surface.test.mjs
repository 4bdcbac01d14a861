// The TypeScript surface: internals stay out of the .d.ts files (stripInternal), every JS result is
// camelCase, and handle classes cannot be built around nothing from outside the package.
import test from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync, readdirSync } from 'node:fs';
import path from 'node:path';
import { dist, loadQuire } from './helpers.mjs';

const quire = await loadQuire();

test('surface: handle classes refuse construction from outside with a message that says what to do', () => {
  assert.throws(() => new quire.QuireFile(), /QuireFile cannot be constructed directly; use format\.open\(\)/);
  assert.throws(() => new quire.JsonDocument({}), /JsonDocument cannot be constructed directly; use json\.parse\(\)/);
  assert.throws(() => new quire.Hl7Message({}), /Hl7Message cannot be constructed directly/);
  assert.throws(() => new quire.NdjsonStream({}, ''), /NdjsonStream cannot be constructed directly/);
  assert.throws(() => new quire.MllpDecoder({}), /MllpDecoder cannot be constructed directly/);
  assert.throws(() => new quire.CompiledView({}), /CompiledView cannot be constructed directly; use view\.compile\(\)/);
  assert.throws(() => new quire.FhirpathExpression({}), /FhirpathExpression cannot be constructed directly; use fhirpath\.compile\(\)/);
});

test('surface: the view and fhirpath modules are exported with their handle classes and typed', () => {
  for (const name of ['compile', 'run', 'runText', 'stream', 'streamText', 'toQuire', 'toCsv', 'toNdjson', 'toArrow', 'toArrowTable', 'toParquet']) assert.equal(typeof quire.view[name], 'function', `view.${name}`);
  for (const name of ['compile', 'evaluate', 'evaluateText']) assert.equal(typeof quire.fhirpath[name], 'function', `fhirpath.${name}`);
  for (const name of ['run', 'runText', 'stream', 'streamText', 'toQuire', 'writeFile', 'toCsv', 'toNdjson', 'toArrow', 'toArrowTable', 'toParquet', 'close']) assert.equal(typeof quire.CompiledView.prototype[name], 'function', `CompiledView.${name}`);
  assert.equal(typeof quire.CompiledView.prototype[Symbol.dispose], 'function');
  assert.equal(typeof quire.FhirpathExpression.prototype[Symbol.dispose], 'function');
  const index = readFileSync(path.join(dist, 'index.d.ts'), 'utf8');
  for (const name of ['view', 'CompiledView', 'ViewDefinition', 'Row', 'ColumnInfo', 'fhirpath', 'FhirpathExpression', 'FhirpathValue']) {
    assert.match(index, new RegExp(`\\b${name}\\b`), `index.d.ts exports ${name}`);
  }
  const viewTypes = readFileSync(path.join(dist, 'view.d.ts'), 'utf8');
  assert.match(viewTypes, /run\(resources: ViewResources\): Row\[\];/);
  assert.match(viewTypes, /get columns\(\): ColumnInfo\[\];/);
});

test('surface: the .d.ts files carry no internals', () => {
  const files = readdirSync(dist).filter((f) => f.endsWith('.d.ts'));
  assert.ok(files.length >= 8, `${files.length} declaration files`);
  for (const f of files) {
    const text = readFileSync(path.join(dist, f), 'utf8');
    for (const internal of ['fromRecord', 'withInput', 'checkInternal', 'INTERNAL', 'Record<string, unknown>;\n  storage']) {
      assert.ok(!text.includes(internal), `${f} declares ${internal}`);
    }
  }
  const format = readFileSync(path.join(dist, 'format.d.ts'), 'utf8');
  assert.match(format, /explain\(q\?: Query, options\?: \{[^}]*\}\): ExplainReport;/);
  assert.match(format, /storage\(\): StorageReport;/);
});

test('surface: every key of a format result is camelCase', () => {
  const f = quire.format.open(quire.format.write([{ id: 1, first_name: 'Ana', balance: 1.5 }, { id: 2, first_name: 'Ben', balance: 2 }], { indexes: { id: 'hash' } }));
  const keys = new Set();
  const walk = (v, inRow) => {
    if (Array.isArray(v)) v.forEach((x) => walk(x, inRow));
    else if (v && typeof v === 'object') for (const [k, x] of Object.entries(v)) { if (!inRow) keys.add(k); walk(x, inRow || k === 'encodings'); }
  };
  walk(f.explain({ where: 'id = 1' }, { analyze: true }));
  walk(f.storage());
  walk(f.aggregate('balance'));
  walk(f.counters());
  walk(f.info);
  walk(f.chunkStatistics('id'));
  for (const k of keys) assert.match(k, /^[a-z][A-Za-z0-9]*$/, `key ${k}`);
  assert.ok(keys.has('skippedByIndex') && keys.has('dataBytes') && keys.has('rowsMatched') && keys.has('chunkRows'));
  f.close();
});
