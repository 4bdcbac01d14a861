// FHIRPath through the npm package: results as arrays of values and as core's exact text, a
// compiled expression reused over resources, the error codes with their offsets, close().
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { loadQuire } from './helpers.mjs';

const quire = await loadQuire();
const { fhirpath, FhirpathExpression, QuireError } = quire;

const PATIENT = {
  resourceType: 'Patient',
  id: 'pt1',
  active: true,
  birthDate: '1974-12-25',
  name: [
    { use: 'official', family: 'Chalmers', given: ['Peter', 'James'] },
    { use: 'usual', given: ['Jim'] },
  ],
};

test('fhirpath: evaluate gives the collection as an array of values', () => {
  assert.deepEqual(fhirpath.evaluate("name.where(use = 'official').given", PATIENT), ['Peter', 'James']);
  assert.deepEqual(fhirpath.evaluate('name.given.count()', PATIENT), [3]);
  assert.deepEqual(fhirpath.evaluate('active', PATIENT), [true]);
  assert.deepEqual(fhirpath.evaluate('birthDate', PATIENT), ['1974-12-25']);
  assert.deepEqual(fhirpath.evaluate('name.first()', PATIENT), [PATIENT.name[0]]);
  assert.deepEqual(fhirpath.evaluate('deceased', PATIENT), []);
  assert.deepEqual(fhirpath.evaluate("'a' | 'b'", PATIENT), ['a', 'b']);
  assert.deepEqual(fhirpath.evaluate('1 + 2', {}), [3]);
  // JSON text and bytes are contexts as well as objects.
  const text = JSON.stringify(PATIENT);
  assert.deepEqual(fhirpath.evaluate('id', text), ['pt1']);
  assert.deepEqual(fhirpath.evaluate('id', new TextEncoder().encode(text)), ['pt1']);
});

test('fhirpath: evaluateText keeps decimals exactly as core has them', () => {
  const obs = '{"resourceType":"Observation","status":"final","code":{"text":"x"},"valueQuantity":{"value":0.700,"unit":"mg"}}';
  assert.equal(fhirpath.evaluateText('value.value', obs), '[0.700]');
  assert.deepEqual(fhirpath.evaluate('value.value', obs), [0.7]);
  assert.equal(fhirpath.evaluateText('1.50 * 2', '{}'), '[3.00]');
  assert.equal(fhirpath.evaluateText("'x'", '{}'), '["x"]');
});

test('fhirpath: a compiled expression is reused over many resources', () => {
  const e = fhirpath.compile('name.given.first()');
  assert.ok(e instanceof FhirpathExpression);
  assert.equal(e.expression, 'name.given.first()');
  const got = [];
  for (let i = 0; i < 50; ++i) got.push(...e.evaluate({ resourceType: 'Patient', name: [{ given: [`g${i}`] }] }));
  assert.equal(got.length, 50);
  assert.equal(got[49], 'g49');
  e.close();
  assert.throws(() => e.evaluate(PATIENT), /this FhirpathExpression is closed/);
  // `using d = fhirpath.compile('id')` where the syntax exists (not in Node 20) calls this.
  const d = fhirpath.compile('id');
  assert.deepEqual(d.evaluate(PATIENT), ['pt1']);
  d[Symbol.dispose]();
  assert.equal(d.closed, true);
});

test('fhirpath: errors carry their code and offset in the expression', () => {
  assert.throws(() => fhirpath.compile('name.('), (e) => e instanceof QuireError && e.code === 'INVALID_FHIRPATH' && e.offset !== undefined);
  assert.throws(() => fhirpath.compile('name.nosuch()'), (e) => e instanceof QuireError && e.code === 'UNKNOWN_FUNCTION' && e.offset === 5 && e.message.includes('nosuch'));
  assert.throws(() => fhirpath.evaluate("'a' + 1", PATIENT), (e) => e instanceof QuireError && e.code === 'FHIRPATH_TYPE_ERROR');
  assert.throws(() => fhirpath.evaluate('id', '{"id":'), (e) => e instanceof QuireError && e.code === 'INVALID_JSON');
  assert.throws(() => fhirpath.compile(42), TypeError);
  assert.throws(() => fhirpath.evaluate('id', 42), TypeError);
  assert.throws(() => new FhirpathExpression({}), /FhirpathExpression cannot be constructed directly; use fhirpath\.compile\(\)/);
});

test('fhirpath: close() frees the compiled expression', () => {
  const before = quire.memory().heapBytes;
  const held = Array.from({ length: 2000 }, (_, i) => fhirpath.compile(`name.where(use = 'official').given.where($this != 'x${i}')`));
  const during = quire.memory().heapBytes - before;
  assert.ok(during > 2000 * 64, `compiled expressions hold wasm memory (${during} bytes)`);
  for (const e of held) assert.deepEqual(e.evaluate(PATIENT), ['Peter', 'James']);
  for (const e of held) e.close();
  assert.ok(quire.memory().heapBytes - before < 64 * 1024, `after close(): ${quire.memory().heapBytes - before} bytes left`);
  assert.equal(held[0].closed, true);
  assert.throws(() => held[0].evaluate(PATIENT), /closed/);
  held[0].close();
  // The one-shot evaluate() closes what it compiles.
  for (let i = 0; i < 2000; ++i) fhirpath.evaluate("name.where(use = 'official').given", PATIENT);
  assert.ok(quire.memory().heapBytes - before < 64 * 1024, `after 2,000 evaluate(): ${quire.memory().heapBytes - before} bytes left`);
});
