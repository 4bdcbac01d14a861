// The FHIR, NDJSON, HL7 and CSV views' logic without a browser: the JSON byte index (nodes,
// FHIRPath locations, line and column), Bundle references, FHIR XML made ready for the view
// (core's canonical JSON for the tree, issues at XML lines and columns, INVALID_XML) and the
// kind that opens it, the NDJSON line index over slices,
// the unchecked invariants folded into one note per reason, the HL7 table rows and the binary-byte test, and CSV rows from core's text.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync, readdirSync } from 'node:fs';
import path from 'node:path';
import { JsonModel, TextLines, bundleTargets, containedTarget, resolveReference } from '../viewer/views/json-model.mjs';
import { prepare } from '../viewer/views/fhir-worker.mjs';
import { VIEW_OF_KIND } from '../viewer/detect.mjs';
import { LineIndex, UncheckedNotes, trimLineEnd, uncheckedText } from '../viewer/views/ndjson-model.mjs';
import { fieldParts, hasBinary, messageRows, rawSegments } from '../viewer/views/hl7-model.mjs';
import { HL7_FIELDS, fieldName } from '../viewer/hl7-fields.mjs';
import { corpusDir, loadPackage, repo } from './helpers.mjs';

const enc = new TextEncoder();
const examples = () => path.join(corpusDir(), 'fhir-r4', 'examples');

test('json model: nodes are byte ranges; scalars keep their text; paths are FHIRPath', () => {
  const text = '{\n  "resourceType": "Observation",\n  "valueQuantity": { "value": 12.50, "unit": "mg" },\n  "code": {"coding": [{"code": "a\\"b"}, {"code": "c"}]}\n}\n';
  const m = new JsonModel(enc.encode(text));
  const kids = m.children(m.root);
  assert.deepEqual(kids.map((k) => k.key), ['resourceType', 'valueQuantity', 'code']);
  assert.equal(m.root.path, 'Observation');
  const value = m.member(m.member(m.root, 'valueQuantity'), 'value');
  assert.equal(m.scalarText(value), '12.50');
  assert.equal(value.path, 'Observation.valueQuantity.value');
  const second = m.nodeForPath('Observation.code.coding[1].code');
  assert.equal(m.stringValue(second), 'c');
  assert.equal(m.stringValue(m.nodeForPath('Observation.code.coding[0].code')), 'a"b');
  // A string ending in an escaped backslash ends at the quote after it.
  const esc = new JsonModel(enc.encode('{"a":"x\\\\","b":"\\\"","c":1}'));
  assert.deepEqual(esc.children(esc.root).map((k) => k.key), ['a', 'b', 'c']);
  assert.equal(esc.stringValue(esc.member(esc.root, 'a')), 'x\\');
  assert.equal(esc.stringValue(esc.member(esc.root, 'b')), '"');
  // A location that does not exist pins to the nearest node that does.
  assert.equal(m.nodeForPath('Observation.code.coding[0].system'), m.nodeForPath('Observation.code.coding[0]'));
  assert.equal(m.nodeAt(text.indexOf('12.50') + 2), value);
  assert.deepEqual(m.position(text.indexOf('"value"')), { line: 3, column: text.indexOf('"value"') - text.indexOf('  "valueQuantity"') + 1 });
  assert.equal(m.lineCount, 6);
  assert.equal(m.text(...m.lineRange(2)), '  "resourceType": "Observation",');
});

test('json model: a deep document is walked without recursion', () => {
  const depth = 50000;
  const m = new JsonModel(enc.encode('['.repeat(depth) + ']'.repeat(depth)));
  assert.equal(m.root.end, depth * 2);
  let node = m.root;
  for (let i = 0; i < 10; i++) node = m.children(node)[0];
  assert.equal(node.path, '[0]'.repeat(10));
});

test('bundle references: fullUrl and Type/id resolve to the entry resource', () => {
  const bundle = {
    resourceType: 'Bundle', type: 'collection',
    entry: [
      { fullUrl: 'urn:uuid:61ebe359-bfdc-4613-8bf2-c5e300945f0a', resource: { resourceType: 'Patient', id: 'p1' } },
      { fullUrl: 'http://example.org/fhir/Observation/o1', resource: { resourceType: 'Observation', id: 'o1', subject: { reference: 'urn:uuid:61ebe359-bfdc-4613-8bf2-c5e300945f0a' } } },
    ],
  };
  const m = new JsonModel(enc.encode(JSON.stringify(bundle, null, 1)));
  const targets = bundleTargets(m);
  const patient = m.nodeForPath('Bundle.entry[0].resource');
  assert.equal(resolveReference(targets, 'urn:uuid:61ebe359-bfdc-4613-8bf2-c5e300945f0a'), patient);
  assert.equal(resolveReference(targets, 'Patient/p1'), patient);
  assert.equal(resolveReference(targets, 'Patient/p1/_history/2'), patient);
  assert.equal(resolveReference(targets, 'http://example.org/fhir/Observation/o1'), m.nodeForPath('Bundle.entry[1].resource'));
  assert.equal(resolveReference(targets, 'Patient/nobody'), undefined);
  assert.equal(bundleTargets(new JsonModel(enc.encode('{"resourceType":"Patient","id":"x"}'))).size, 0);
});

test('json model: every example resource indexes to the end; references of the references Bundle resolve', () => {
  const b = readFileSync(path.join(examples(), 'Bundle-bundle-references.json'));
  const m = new JsonModel(b);
  assert.equal(m.root.kind, 'object');
  const targets = bundleTargets(m);
  assert.ok(targets.size >= 2, `targets: ${[...targets.keys()]}`);
  const entries = m.children(m.member(m.root, 'entry'));
  // Every reference string in the Bundle that names an entry resolves to a node inside entry[].
  let resolved = 0;
  const walk = [m.root];
  while (walk.length) {
    const n = walk.pop();
    if (n.kind === 'object' || n.kind === 'array') walk.push(...m.children(n));
    else if (n.key === 'reference' && resolveReference(targets, m.stringValue(n))) resolved++;
  }
  assert.ok(resolved >= 1, 'a reference resolves');
  assert.ok(entries.length >= 2);
});

test('line index: slices of any size give the same line starts', () => {
  const text = '{"a":1}\n{"b":2}\r\n\n{"c":3}';
  const bytes = enc.encode(text);
  for (const size of [1, 2, 3, 7, 8, 100]) {
    const index = new LineIndex();
    for (let i = 0; i < bytes.length; i += size) index.push(bytes.subarray(i, i + size));
    assert.equal(index.count, 4, `slice ${size}`);
    assert.deepEqual(index.range(1), [0, 8]);
    assert.deepEqual(index.range(2), [8, 17]);
    assert.equal(new TextDecoder().decode(trimLineEnd(bytes.subarray(...index.range(2)))), '{"b":2}');
    assert.deepEqual(index.range(4), [18, bytes.length]);
    assert.equal(index.range(5), undefined);
  }
  const ended = new LineIndex();
  ended.push(enc.encode('x\ny\n'));
  assert.equal(ended.count, 2);
});

test('unchecked invariants: one note per reason, its keys and the lines it was on; other issues are not taken', () => {
  const why = 'it calls htmlChecks(), which quire cannot evaluate (no resolver, terminology server or XHTML checker)';
  const unchecked = (key, reason = why) => ({ severity: 'information', code: 'informational', key, details: `invariant ${key} not checked: ${reason}`, expression: 'Patient.text.div' });
  const notes = new UncheckedNotes(2);
  for (let line = 1; line <= 1234; line++) {
    assert.equal(notes.add(line, unchecked('txt-1')), true);
    assert.equal(notes.add(line, unchecked('txt-2')), true);
  }
  // A real issue and an error are the caller's to list by line.
  assert.equal(notes.add(5, { severity: 'warning', code: 'invariant', key: 'dom-6', details: 'dom-6: A resource should have narrative' }), false);
  assert.equal(notes.add(6, { severity: 'information', code: 'informational', details: 'no key' }), false);
  assert.equal(notes.add(7, { code: 'INVALID_JSON', message: 'INVALID_JSON at offset 3' }), false);
  assert.equal(notes.add(9, unchecked('pat-9', 'evaluating it failed here: FHIRPATH_TYPE_ERROR')), true);
  assert.equal(notes.add(10, unchecked('pat-9', 'evaluating it failed here: FHIRPATH_TYPE_ERROR')), true);
  // Past maxReasons a new reason is refused (listed by line), a known one still folds.
  assert.equal(notes.add(11, unchecked('obs-7', 'another reason')), false);
  assert.equal(notes.add(12, unchecked('txt-1')), true);
  assert.deepEqual(notes.notes(), [
    { keys: ['txt-1', 'txt-2'], why, lines: 1235 },
    { keys: ['pat-9'], why: 'evaluating it failed here: FHIRPATH_TYPE_ERROR', lines: 2 },
  ]);
  assert.equal(uncheckedText(notes.notes()[0]), `txt-1, txt-2 not checked on 1,235 lines: ${why}`);
  assert.equal(uncheckedText({ keys: ['pat-9'], why: 'x', lines: 1 }), 'pat-9 not checked on 1 line: x');
  notes.clear();
  assert.deepEqual(notes.notes(), []);
});

test('hl7 rows: decoded parts split repetitions, components and subcomponents', () => {
  assert.deepEqual(fieldParts('abc'), [{ path: '', text: 'abc' }]);
  assert.deepEqual(fieldParts(null), [{ path: '', text: null }]);
  assert.deepEqual(fieldParts([['Smith', 'John'], ['Doe', ['x', 'y']]]), [
    { path: '[1].1', text: 'Smith' }, { path: '[1].2', text: 'John' },
    { path: '[2].1', text: 'Doe' }, { path: '[2].2.1', text: 'x' }, { path: '[2].2.2', text: 'y' },
  ]);
  assert.deepEqual(fieldParts([['ADT', 'A01']]), [{ path: '.1', text: 'ADT' }, { path: '.2', text: 'A01' }]);
  const json = { delimiters: '|^~\\&', segments: [{ id: 'MSH', fields: ['|', '^~\\&', 'APP'] }, { id: 'PID', fields: ['1', '', [['Smith', 'J']]] }] };
  const rows = messageRows(json);
  assert.deepEqual(rows.map((r) => `${r.segment}-${r.field} ${r.name}`), ['MSH-1 Field Separator', 'MSH-2 Encoding Characters', 'MSH-3 Sending Application', 'PID-1 Set ID - PID', 'PID-3 Patient Identifier List']);
  const raw = messageRows(json, 'MSH|^~\\&|APP\rPID|1||Smith^J\\T\\x\r');
  assert.equal(raw.find((r) => r.segment === 'PID' && r.field === 3).parts[0].text, 'Smith^J\\T\\x');
  assert.deepEqual(rawSegments('MSH^~|\\&^A\nPID^1', '^~|\\&')[0].slice(1), ['^', '~|\\&', 'A']);
});

test('hl7 field names: 16 segments, MSH-9 and PID-5 as the standard names them', () => {
  assert.deepEqual(Object.keys(HL7_FIELDS).sort(), ['AL1', 'DG1', 'ERR', 'EVN', 'IN1', 'MSA', 'MSH', 'NK1', 'NTE', 'OBR', 'OBX', 'ORC', 'PD1', 'PID', 'PV1', 'PV2']);
  assert.equal(fieldName('MSH', 9), 'Message Type');
  assert.equal(fieldName('MSH', 10), 'Message Control ID');
  assert.equal(fieldName('PID', 5), 'Patient Name');
  assert.equal(fieldName('PID', 39), 'Tribal Citizenship');
  assert.equal(fieldName('OBX', 5), 'Observation Value');
  assert.equal(fieldName('PV1', 52), 'Other Healthcare Provider');
  assert.equal(fieldName('ZZZ', 1), '');
  assert.equal(fieldName('PID', 40), '');
  const sizes = Object.fromEntries(Object.entries(HL7_FIELDS).map(([k, v]) => [k, v.length]));
  assert.deepEqual(sizes, { MSH: 21, EVN: 7, PID: 39, PD1: 21, NK1: 39, PV1: 52, PV2: 49, ORC: 31, OBR: 50, OBX: 25, NTE: 4, AL1: 6, DG1: 21, IN1: 53, MSA: 6, ERR: 12 });
});

test('hl7 binary bytes: controls other than TAB, CR, LF, VT and FS', () => {
  assert.equal(hasBinary(enc.encode('MSH|^~\\&|A\r\nPID|1\t\x0b\x1c')), false);
  assert.equal(hasBinary(Uint8Array.of(0x4d, 0x00)), true);
  assert.equal(hasBinary(Uint8Array.of(0x4d, 0x7f)), true);
  assert.equal(hasBinary(Uint8Array.of(0xc3, 0xa9)), false);
});

test('contained references: #id names the contained resource of the enclosing resource', () => {
  const m = new JsonModel(readFileSync(path.join(examples(), 'ActivityDefinition-citalopramPrescription.json')));
  const refs = [];
  const walk = [m.root];
  while (walk.length) {
    const n = walk.pop();
    if (n.kind === 'object' || n.kind === 'array') walk.push(...m.children(n));
    else if (n.key === 'reference' && m.stringValue(n).startsWith('#')) refs.push(n);
  }
  assert.ok(refs.length >= 2);
  for (const ref of refs) {
    const target = containedTarget(m, ref, m.stringValue(ref));
    assert.ok(target, m.stringValue(ref));
    assert.equal(target.parent.key, 'contained');
    assert.equal(`#${m.stringValue(m.member(target, 'id'))}`, m.stringValue(ref));
  }
  assert.equal(containedTarget(m, refs[0], '#nothing-here'), undefined);
  assert.equal(containedTarget(m, refs[0], 'Patient/1'), undefined);
});

test('fhir xml: each official example gives the tree core\'s canonical JSON and the issues of the XML at its elements', async () => {
  const pkg = await loadPackage();
  assert.equal(VIEW_OF_KIND['fhir-xml'], 'fhir', "core's kind 'fhir-xml' opens in the FHIR view");
  const dir = path.join(repo, 'tests', 'data', 'fhir-xml', 'xml');
  const names = readdirSync(dir).filter((f) => f.endsWith('.xml'));
  assert.ok(names.length >= 20, `${dir}: the official examples`);
  let issues = 0;
  for (const name of names) {
    const bytes = readFileSync(path.join(dir, name));
    assert.equal(pkg.detect(bytes, { complete: true, name }).kind, 'fhir-xml', name);
    const { json, outcome } = prepare(pkg, bytes, 'xml');
    assert.equal(new TextDecoder().decode(json), pkg.fhir.format(bytes, { to: 'json' }), `${name}: the tree's bytes are core's canonical JSON`);
    assert.deepEqual(outcome, pkg.fhir.validate(bytes, { syntax: 'xml' }), name);
    const model = new JsonModel(json);
    assert.equal(model.root.end, json.length, name);
    const text = new TextLines(bytes);
    for (const issue of outcome.issues) {
      issues++;
      // At the XML element the issue is about: its "<" at the line and column core gives.
      const [start, end] = text.lineRange(issue.line);
      assert.ok(issue.column >= 1 && start + issue.column - 1 < end, `${name}: ${issue.line}:${issue.column} inside the line`);
      assert.equal(text.text(start + issue.column - 1, start + issue.column), '<', `${name}: ${issue.expression} at an element`);
      assert.deepEqual(text.position(start + issue.column - 1), { line: issue.line, column: issue.column });
      // Its FHIRPath location names a node of the JSON tree (or the nearest one there).
      const node = model.nodeForPath(issue.expression);
      assert.ok(node.path && issue.expression.startsWith(node.path), `${name}: ${issue.expression} -> ${node.path}`);
    }
  }
  assert.ok(issues > 0, 'some example has issues to place');
  // The JSON path is as before: the bytes themselves, the outcome of fhir.validate.
  const patient = readFileSync(path.join(examples(), 'Patient-example.json'));
  const same = prepare(pkg, patient);
  assert.equal(same.json, patient);
  assert.deepEqual(same.outcome, pkg.fhir.validate(patient));
});

test('fhir xml: a DOCTYPE, a truncated document and a wrong namespace are core\'s typed errors', async () => {
  const pkg = await loadPackage();
  const good = readFileSync(path.join(repo, 'tests', 'data', 'fhir-xml', 'xml', 'patient-example.xml'), 'utf8');
  const cases = [
    [good.replace('<Patient ', '<!DOCTYPE Patient>\n<Patient '), 'INVALID_XML', /line 1, column \d+/],
    [good.slice(0, 300), 'INVALID_XML', /line \d+, column \d+/],
    [good.replace('xmlns="http://hl7.org/fhir"', 'xmlns="urn:other"'), 'INVALID_RESOURCE', /./],
  ];
  for (const [text, code, where] of cases) {
    assert.throws(() => prepare(pkg, enc.encode(text), 'xml'), (err) => {
      assert.equal(err.code, code, err.message);
      assert.match(err.message, where);
      return true;
    });
  }
});
