// detect(bytes): core's rule of what an input is (quire/detect.h), the one `quire view run` and
// `quire fhirpath` apply to their inputs.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { loadQuire } from './helpers.mjs';

const quire = await loadQuire();
const { detect, DETECT_BYTES } = quire;

test('detect: each kind from the first bytes', () => {
  const kind = (bytes, options) => detect(bytes, options).kind;
  assert.equal(DETECT_BYTES, 65536);
  assert.equal(kind(new Uint8Array([0x51, 0x55, 0x49, 0x52, 0x45, 0, 1])), 'quire');
  assert.equal(kind('{\n  "resourceType": "Patient"\n}\n'), 'fhir');
  assert.equal(kind('[\n 1\n]'), 'json');
  assert.equal(kind('{"resourceType":"Patient"}\n{"resourceType":"Patient"}\n'), 'ndjson');
  assert.equal(kind('{"resourceType":"Patient"}'), 'ndjson');
  assert.equal(kind('{"resourceType":"Pat', { complete: false }), 'need-more');
  assert.equal(kind('<?xml version="1.0"?>\n<Patient xmlns="http://hl7.org/fhir"/>'), 'fhir-xml');
  assert.equal(kind('MSH|^~\\&|A|B\rPID|1\r'), 'hl7');
  assert.equal(kind(new Uint8Array([0x0b, ...new TextEncoder().encode('MSH|^~\\&|A\r'), 0x1c, 0x0d])), 'hl7');
  assert.equal(kind('id,name\n1,a\n'), 'csv');
  assert.equal(kind(' \n'), 'empty');
  assert.equal(kind(new Uint8Array([1, 2, 3, 0])), 'unknown');
  // A name: .ndjson and .jsonl say NDJSON before the bytes do; any other name is not looked at.
  assert.equal(kind('{\n  "resourceType": "Patient"\n}\n', { name: 'Patient.ndjson' }), 'ndjson');
  assert.equal(kind('id,name\n1,a\n', { name: 'rows.jsonl' }), 'ndjson');
  assert.equal(kind('id,name\n1,a\n', { name: 'rows.json' }), 'csv');
  const d = detect('id;name\n1;a\n');
  assert.deepEqual(d, { kind: 'csv', reason: 'text in rows of fields split by ";" (CSV)' });
});
