// The FHIR module through the npm package: the corpus examples give the same outcome as native
// (compared with the checked-in summary the C++ conformance test also compares with), the
// broken-resource suite gives the expected issues, and parse/format behave.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync, readdirSync } from 'node:fs';
import path from 'node:path';
import { loadQuire, corpusDir, dataDir } from './helpers.mjs';

const quire = await loadQuire();
const { fhir, QuireError } = quire;

function tsv(file) {
  return readFileSync(file, 'utf8').split('\n').filter((l) => l && !l.startsWith('#')).map((l) => l.split('\t'));
}

// FNV-1a 64 of the UTF-8 bytes, as tests/fhir_conformance_test.cpp computes it.
function fnv1a(text) {
  let h = 0xcbf29ce484222325n;
  for (const b of new TextEncoder().encode(text)) {
    h ^= BigInt(b);
    h = (h * 0x100000001b3n) & 0xffffffffffffffffn;
  }
  return h.toString(16).padStart(16, '0');
}

test('fhir: every corpus example gives the outcome native quire gives (examples_summary.tsv)', () => {
  const corpus = corpusDir();
  const dir = path.join(corpus, 'fhir-r4', 'examples');
  const golden = new Map(tsv(path.join(dataDir, 'fhir', 'examples_summary.tsv')).map((r) => [r[0], r.slice(1).join('\t')]));
  const files = readdirSync(dir).filter((f) => f.endsWith('.json')).sort();
  assert.equal(files.length, golden.size);
  let valid = 0;
  for (const file of files) {
    const bytes = readFileSync(path.join(dir, file));
    const o = fhir.validate(bytes);
    const compact = fhir.format(bytes);
    const pretty = fhir.format(bytes, { pretty: true });
    assert.equal([o.errors, o.warnings, o.issues.length, fnv1a(compact), fnv1a(pretty)].join('\t'), golden.get(file), file);
    assert.equal(fhir.format(compact), compact, `${file}: writing again gives the same bytes`);
    if (o.ok) ++valid;
  }
  console.log(`fhir conformance (wasm): ${files.length} examples, ${valid} valid, all outcomes identical to native`);
});

test('fhir: the broken-resource suite gives exactly the expected issue', () => {
  const dir = path.join(dataDir, 'fhir', 'broken');
  for (const [file, severity, code, expression, line, column] of tsv(path.join(dir, 'expected.tsv'))) {
    // The structural rules alone: invariants (dom-6 on a resource without narrative...) are the next test's.
    const o = fhir.validate(readFileSync(path.join(dir, file)), { checkInvariants: false });
    assert.equal(o.issues.length, 1, file);
    const i = o.issues[0];
    assert.deepEqual([i.severity, i.code, i.expression, String(i.line), String(i.column)], [severity, code, expression, line, column], file);
  }
});

test('fhir: each broken resource of the invariants suite fails exactly its invariant', () => {
  const dir = path.join(dataDir, 'fhir', 'invariants');
  const rows = tsv(path.join(dir, 'expected.tsv'));
  assert.ok(rows.length >= 12);
  for (const [file, severity, key, expression, line, column] of rows) {
    const o = fhir.validate(readFileSync(path.join(dir, file)));
    const found = o.issues.filter((i) => i.severity !== 'information');
    assert.equal(found.length, 1, file);
    const i = found[0];
    assert.deepEqual([i.severity, i.code, i.key, i.expression, String(i.line), String(i.column)], [severity, 'invariant', key, expression, line, column], file);
    assert.ok(i.details.startsWith(`${key}: `), file);
    // Without invariants it is valid, but for the two rules the walk also checks on its own.
    const plain = fhir.validate(readFileSync(path.join(dir, file)), { checkInvariants: false });
    assert.equal(plain.errors, key === 'dom-2' || key === 'ref-1' ? 1 : 0, file);
    for (const u of o.issues.filter((x) => x.severity === 'information')) {
      assert.equal(u.code, 'informational', file);
      assert.match(u.details, /not checked/, file);
    }
  }
});

// What issues_to_json writes for the same input, natively the CLI's and the OperationOutcome's
// source: read through the module's fhirWrite, whose record carries the read's issues as JSON
// (the same walk and issues as validate() for input that parses).
function issuesAsJson(bytes) {
  const m = quire.internalWasmModule();
  const pointer = m._malloc(bytes.length + 64);
  try {
    m.HEAPU8.set(bytes, pointer);
    m.HEAPU8.fill(0, pointer + bytes.length, pointer + bytes.length + 64);
    const options = { strict: false, maxDepth: 0, maxBytes: 0, maxIssues: 0, maxContained: 0, checkCodes: true, checkReferences: true, checkInvariants: true, syntax: 2 };
    const r = m.fhirWrite(pointer, bytes.length, false, false, options);
    assert.equal(r.error.code, '');
    return r.issues;
  } finally {
    m._free(pointer);
  }
}

test('fhir: validate() gives the issues issues_to_json gives, members in its order (both forms of the result block)', () => {
  const encoder = new TextEncoder();
  const inputs = [];
  const examples = path.join(corpusDir(), 'fhir-r4', 'examples');
  for (const file of readdirSync(examples).filter((f) => f.endsWith('.json')).sort()) inputs.push([file, readFileSync(path.join(examples, file))]);
  for (const suite of ['broken', 'invariants']) {
    const dir = path.join(dataDir, 'fhir', suite);
    for (const [file] of tsv(path.join(dir, 'expected.tsv'))) inputs.push([`${suite}/${file}`, readFileSync(path.join(dir, file))]);
  }
  // Not ASCII (the JSON form), and a Bundle whose entries repeat dom-6's warning (the table form).
  inputs.push(['not ascii', encoder.encode('{"resourceType":"Patient","nåme":[{"family":"Ødegård"}],"gender":"kvinne"}')]);
  const entries = Array.from({ length: 50 }, (_, i) => ({ fullUrl: `urn:uuid:${String(i).padStart(8, '0')}-0000-4000-8000-000000000000`, resource: { resourceType: 'Patient', id: `p${i}` } }));
  inputs.push(['bundle', encoder.encode(JSON.stringify({ resourceType: 'Bundle', type: 'collection', entry: entries }, null, 1))]);
  let issues = 0;
  for (const [name, bytes] of inputs) {
    const o = fhir.validate(bytes);
    assert.equal(JSON.stringify(o.issues), issuesAsJson(bytes), name);
    assert.equal(JSON.stringify(fhir.validate(new TextDecoder().decode(bytes)).issues), JSON.stringify(o.issues), name);
    issues += o.issues.length;
  }
  assert.ok(issues > 1000, `${issues} issues compared`);
  // An unreadable input: its one issue carries the error code, last.
  const bad = fhir.validate('{"resourceType":"Patient",');
  assert.deepEqual(Object.keys(bad.issues[0]), ['severity', 'code', 'details', 'expression', 'line', 'column', 'offset', 'error']);
});

test('fhir: parse gives a plain object, format keeps decimals and orders keys', () => {
  const text = '{"valueQuantity":{"unit":"mg","value":0.700},"code":{"text":"x"},"status":"final","resourceType":"Observation"}';
  assert.equal(fhir.format(text), '{"resourceType":"Observation","status":"final","code":{"text":"x"},"valueQuantity":{"value":0.700,"unit":"mg"}}');
  assert.equal(fhir.format(text, { pretty: true }).split('\n')[1], '  "resourceType": "Observation",');
  const obj = fhir.parse(text);
  assert.equal(obj.resourceType, 'Observation');
  assert.deepEqual(Object.keys(obj), ['resourceType', 'status', 'code', 'valueQuantity']);
});

test('fhir: strict mode and unreadable input throw QuireError; validate never throws', () => {
  const text = '{"resourceType":"Patient","foo":1}';
  assert.equal(fhir.validate(text, { checkInvariants: false }).issues[0].expression, 'Patient.foo');
  assert.throws(() => fhir.parse(text, { strict: true }), (e) => e instanceof QuireError && e.code === 'UNKNOWN_ELEMENT' && e.path === 'Patient.foo');
  assert.throws(() => fhir.format('{"resourceType":"Nope"}'), (e) => e instanceof QuireError && e.code === 'INVALID_RESOURCE');
  const o = fhir.validate('{"resourceType":"Patient",');
  assert.equal(o.ok, false);
  assert.equal(o.issues[0].error, 'INVALID_JSON');
  const deep = fhir.validate('{"resourceType":"Patient","extension":' + '[{"url":"http://x","extension":'.repeat(200) + '[]' + '}]'.repeat(200) + '}', { maxDepth: 64 });
  assert.equal(deep.issues[0].error, 'MAX_DEPTH_EXCEEDED');
});

test('fhir: entries of a Bundle one by one', () => {
  const bundle = JSON.stringify({ resourceType: 'Bundle', type: 'collection', entry: [{ fullUrl: 'urn:uuid:1', resource: { resourceType: 'Patient' } }, { resource: { resourceType: 'Practitioner' } }] });
  const seen = [...fhir.entries(bundle)].map((e) => `${e.index}:${e.resource.resourceType}`);
  assert.deepEqual(seen, ['0:Patient', '1:Practitioner']);
  assert.equal(fhir.definitionsVersion, '4.0.1');
});

test('fhir: XML input and output give the bytes native quire gives (tests/data/fhir-xml)', () => {
  const dir = path.join(dataDir, 'fhir-xml');
  const golden = new Map(tsv(path.join(dir, 'xml_summary.tsv')).map((r) => [r[0], r.slice(1).join('\t')]));
  const files = readdirSync(path.join(dir, 'xml')).filter((f) => f.endsWith('.xml')).sort();
  assert.equal(files.length, golden.size);
  for (const file of files) {
    const bytes = readFileSync(path.join(dir, 'xml', file));
    const o = fhir.validate(bytes);
    const json = fhir.format(bytes);
    const xml = fhir.format(bytes, { to: 'xml', pretty: true });
    const line = o.issues.length ? o.issues[0].line : 0;
    assert.equal([o.errors, o.warnings, o.issues.length, line, fnv1a(json), fnv1a(xml)].join('\t'), golden.get(file), file);
    assert.equal(fhir.format(xml), json, `${file}: XML -> JSON -> XML -> JSON`);
    assert.equal(fhir.format(bytes.toString('utf8')), json, `${file}: from a string as from bytes`);
  }
  const corpusGolden = new Map(tsv(path.join(dir, 'corpus_xml_summary.tsv')).map((r) => [r[0], r.slice(1).join('\t')]));
  const examples = path.join(corpusDir(), 'fhir-r4', 'examples');
  for (const file of ['Patient-example.json', 'Bundle-bundle-example.json', 'Observation-decimal.json', 'Binary-f006.json']) {
    const bytes = readFileSync(path.join(examples, file));
    const compact = fhir.format(bytes, { to: 'xml' });
    const pretty = fhir.format(bytes, { to: 'xml', pretty: true });
    assert.equal([fnv1a(compact), fnv1a(pretty)].join('\t'), corpusGolden.get(file), file);
    assert.equal(fhir.format(compact), fhir.format(bytes), `${file}: JSON -> XML -> JSON`);
  }
});

test('fhir: XML issues are at XML lines; hostile XML is a typed error, never expanded', () => {
  const xml = '<Patient xmlns="http://hl7.org/fhir">\n  <birthDate value="1974-13-45"/>\n</Patient>';
  const o = fhir.validate(xml, { checkInvariants: false });
  const birth = o.issues.find((i) => i.expression === 'Patient.birthDate');
  assert.equal(birth.line, 2);
  assert.equal(birth.column, 3);
  const laughs = '<?xml version="1.0"?>\n<!DOCTYPE p [<!ENTITY a "aaaaaaaaaa"><!ENTITY b "&a;&a;&a;&a;&a;&a;&a;&a;">]>\n<Patient xmlns="http://hl7.org/fhir"><id value="&b;"/></Patient>';
  const bad = fhir.validate(laughs);
  assert.equal(bad.issues[0].error, 'INVALID_XML');
  assert.equal(bad.issues[0].line, 2);
  assert.throws(() => fhir.parse(laughs), (e) => e instanceof QuireError && e.code === 'INVALID_XML' && e.line === 2);
  assert.throws(() => fhir.parse('<Patient xmlns="http://hl7.org/fhir"><colour value="red"/></Patient>'), (e) => e instanceof QuireError && e.code === 'UNKNOWN_ELEMENT');
  // syntax: 'json' reads `<` as JSON, as before.
  assert.equal(fhir.validate(xml, { syntax: 'json' }).issues[0].error, 'INVALID_JSON');
  assert.equal(fhir.parse(xml).birthDate, '1974-13-45');
});
