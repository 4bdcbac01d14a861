#!/usr/bin/env node
// Generates r4_definitions_generated.cpp — the tables declared in ../r4_tables.h — from the R4
// base StructureDefinitions copied into ../definitions (see its SOURCES.md).
//
//   node r4_gen_definitions.mjs DEFINITIONS_DIR OUTPUT.cpp
//
// Runs at build time (module.cmake). Uses only Node's standard library (zlib for the .gz files).
// The output depends only on the input files: everything is emitted in a sorted or snapshot order,
// with no timestamps, so two runs give identical bytes.
import { readFileSync, readdirSync, writeFileSync, renameSync } from 'node:fs';
import { gunzipSync } from 'node:zlib';
import path from 'node:path';

const [definitionsDir, outputFile] = process.argv.slice(2);
if (!definitionsDir || !outputFile) {
  console.error('usage: r4_gen_definitions.mjs DEFINITIONS_DIR OUTPUT.cpp');
  process.exit(2);
}

function readJson(file) {
  let bytes = readFileSync(file);
  if (file.endsWith('.gz')) bytes = gunzipSync(bytes);
  return JSON.parse(bytes.toString('utf8'));
}

// The order of r4_tables.h's `primitive` enum.
const PRIMITIVES = ['base64Binary', 'boolean', 'canonical', 'code', 'date', 'dateTime', 'decimal', 'id', 'instant', 'integer',
  'markdown', 'oid', 'positiveInt', 'string', 'time', 'unsignedInt', 'uri', 'url', 'uuid', 'xhtml'];
const FHIR_TYPE_EXT = 'http://hl7.org/fhir/StructureDefinition/structuredefinition-fhir-type';
const EXPLICIT_NAME_EXT = 'http://hl7.org/fhir/StructureDefinition/structuredefinition-explicit-type-name';
// Above this many codes a value set is not "small": its codes are not checked.
const MAX_CODES = 400;

const byteCompare = (a, b) => (a < b ? -1 : a > b ? 1 : 0);
const cap = (s) => s[0].toUpperCase() + s.slice(1);

const version = readJson(path.join(definitionsDir, 'package.json')).version;
const typesBundle = readJson(path.join(definitionsDir, 'profiles-types.json.gz'));
const resourceDir = path.join(definitionsDir, 'resources');
const resourceFiles = readdirSync(resourceDir).filter((f) => f.endsWith('.json.gz')).sort(byteCompare);
const schema = readJson(path.join(definitionsDir, 'fhir.schema.json.gz'));

const structureDefinitions = [
  ...typesBundle.entry.map((e) => e.resource).filter((r) => r.resourceType === 'StructureDefinition'),
  ...resourceFiles.map((f) => readJson(path.join(resourceDir, f))),
];

// --- types -------------------------------------------------------------------------------------
// A type: { name, kind, prim, elements: [{ name, min, max, isArray, isChoice, typeNames, contentRef, codes }] }
const types = new Map();

function typeCodeName(t) {
  if (t.code.startsWith('http://hl7.org/fhirpath/System.')) {
    const ext = (t.extension || []).find((x) => x.url === FHIR_TYPE_EXT);
    if (ext) return ext.valueUrl ?? ext.valueUri;
    const sys = t.code.slice('http://hl7.org/fhirpath/System.'.length);
    return { String: 'string', Boolean: 'boolean', Integer: 'integer', Decimal: 'decimal', Date: 'date', DateTime: 'dateTime', Time: 'time' }[sys] ?? 'string';
  }
  return t.code;
}

function segments(p) {
  return p.split('.');
}

const pendingCodes = []; // { element, sd, parentPath, valueSet }

function buildType(sd) {
  const name = sd.id;
  const kind = sd.kind === 'primitive-type' ? 'primitive' : sd.kind === 'resource' ? (name === 'Resource' ? 'any_resource' : 'resource') : 'complex';
  if (sd.kind === 'resource' && sd.abstract && name !== 'Resource') return; // DomainResource: never a type code
  const elements = sd.snapshot.element;
  const rootPath = elements[0].path;
  const addType = (typeName, typeKind, parentPath, schemaName) => {
    const depth = segments(parentPath).length;
    const t = { name: typeName, kind: typeKind, prim: typeKind === 'primitive' ? typeName : 'none', elements: [], schemaName };
    // The invariants of the type itself: on the root element of its definition (Patient: dom-2...;
    // Period: per-1), or for a backbone element on that element (Patient.contact: pat-1).
    t.constraints = elements.find((x) => x.path === parentPath)?.constraint ?? [];
    types.set(typeName, t);
    for (let i = 0; i < elements.length; ++i) {
      const e = elements[i];
      const segs = segments(e.path);
      if (segs.length !== depth + 1 || !e.path.startsWith(parentPath + '.')) continue;
      if (e.max === '0') continue;
      let elemName = segs[segs.length - 1];
      if (typeKind === 'primitive' && elemName === 'value') continue; // the JSON value itself
      const isChoice = elemName.endsWith('[x]');
      if (isChoice) elemName = elemName.slice(0, -3);
      const baseMax = e.base?.max ?? e.max;
      const el = {
        name: elemName,
        min: e.min ?? 0,
        max: e.max === '*' ? 'UNBOUNDED' : Number(e.max),
        isArray: baseMax !== '1',
        isChoice,
        typeNames: [],
        constraints: e.constraint ?? [],
      };
      if (e.contentReference) {
        el.typeNames = [e.contentReference.replace(/^.*#/, '')];
      } else {
        const codes = [...new Set((e.type || []).map(typeCodeName))];
        const hasChildren = i + 1 < elements.length && elements[i + 1].path.startsWith(e.path + '.');
        if (!isChoice && hasChildren && (codes[0] === 'BackboneElement' || codes[0] === 'Element')) {
          // R4's JSON schema names a backbone element Resource_Name (Bundle_Request for Bundle.entry.request).
          const explicit = (e.extension || []).find((x) => x.url === EXPLICIT_NAME_EXT);
          el.typeNames = [`${rootPath}.${segs.slice(1).join('.')}`];
          addType(el.typeNames[0], 'backbone', e.path, `${rootPath}_${explicit ? explicit.valueString : cap(segs[segs.length - 1])}`);
        } else {
          el.typeNames = codes;
        }
        // Resource.id is `id`, although R4's snapshots give it the type of Element.id (a string).
        if (typeKind === 'resource' || typeKind === 'any_resource') {
          if (segs.length === 2 && elemName === 'id') el.typeNames = ['id'];
        }
      }
      if (e.binding?.strength === 'required' && el.typeNames.length === 1 && el.typeNames[0] === 'code' && e.binding.valueSet) {
        pendingCodes.push({ el, schemaName: t.schemaName, valueSet: e.binding.valueSet.replace(/\|.*$/, ''), short: e.short });
      }
      t.elements.push(el);
    }
    return t;
  };
  addType(name, kind, rootPath, rootPath === name ? name : null);
}

for (const sd of structureDefinitions) {
  if (!sd.snapshot) continue;
  buildType(sd);
}
for (const p of PRIMITIVES) {
  if (!types.has(p) || types.get(p).kind !== 'primitive') throw new Error(`primitive type ${p} missing from the definitions`);
}

// --- code sets (required bindings to small closed value sets) -----------------------------------
// The StructureDefinitions name the value set but do not hold its codes; R4's JSON schema (built by
// HL7 from the same sources) lists the codes of every required binding it can enumerate.
const codesByValueSet = new Map();
for (const p of pendingCodes) {
  const def = p.schemaName && schema.definitions[p.schemaName];
  const prop = def?.properties?.[p.el.name];
  const list = prop?.enum ?? prop?.items?.enum;
  if (list && list.length <= MAX_CODES) {
    const codes = [...list].sort(byteCompare);
    const known = codesByValueSet.get(p.valueSet);
    // Two elements bound to one value set must see the same codes; keep the larger list if not.
    if (!known || known.length < codes.length) codesByValueSet.set(p.valueSet, codes);
  }
}
// The schema leaves out value sets that take part of a code system (immunization-status takes three
// codes of event-status). For those the element's short definition, which the specification's
// build writes as the value set's codes ("completed | entered-in-error | not-done"), is used.
const SHORT_CODES = /^[A-Za-z0-9][A-Za-z0-9\-.]*( \| [A-Za-z0-9][A-Za-z0-9\-.]*)+$/;
for (const p of pendingCodes) {
  if (codesByValueSet.has(p.valueSet) || !p.short || !SHORT_CODES.test(p.short)) continue;
  codesByValueSet.set(p.valueSet, p.short.split(' | ').sort(byteCompare));
}
let unenumerated = 0;
for (const p of pendingCodes) {
  if (codesByValueSet.has(p.valueSet)) p.el.codeSet = p.valueSet;
  else { ++unenumerated; if (process.env.FHIR_GEN_DEBUG) console.error("no codes:", p.schemaName, p.el.name, p.valueSet); }
}
const codeSetNames = [...codesByValueSet.keys()].sort(byteCompare);
const codeSetIndex = new Map(codeSetNames.map((n, i) => [n, i]));

// --- ordering and indices ----------------------------------------------------------------------
const ordered = [];
for (const p of PRIMITIVES) ordered.push(types.get(p));
const named = [...types.values()].filter((t) => t.kind !== 'backbone' && t.kind !== 'primitive');
ordered.push(...named.filter((t) => t.kind === 'complex').sort((a, b) => byteCompare(a.name, b.name)));
ordered.push(...named.filter((t) => t.kind !== 'complex').sort((a, b) => byteCompare(a.name, b.name)));
ordered.push(...[...types.values()].filter((t) => t.kind === 'backbone').sort((a, b) => byteCompare(a.name, b.name)));
const typeIndex = new Map(ordered.map((t, i) => [t.name, i]));
if (ordered.length >= 0xffff) throw new Error('too many types for uint16_t');

function resolveType(typeName, context) {
  if (typeName === 'BackboneElement' || typeName === 'Element') return typeIndex.get(typeName) ?? fail();
  const i = typeIndex.get(typeName);
  if (i === undefined) fail();
  return i;
  function fail() {
    throw new Error(`unknown type ${typeName} in ${context}`);
  }
}

const lines = [];
// Strings go into one blob (TEXT); each distinct string once.
const textParts = [];
const textOffsets = new Map();
let textLength = 0;
const q = (s) => {
  let off = textOffsets.get(s);
  if (off === undefined) {
    off = textLength;
    textOffsets.set(s, off);
    textParts.push(s);
    textLength += Buffer.byteLength(s, 'utf8');
  }
  const length = Buffer.byteLength(s, 'utf8');
  return `{${off}, ${length}}`;
};
lines.push('// GENERATED by core/src/r4/gen/r4_gen_definitions.mjs from core/src/r4/definitions. Do not edit.');
lines.push('#include "r4_tables.h"', '', 'namespace quire::r4 {', '');
lines.push(`const text_ref DEFINITIONS_VERSION = ${q(version)};`, '');

// --- invariants (element[].constraint[]) --------------------------------------------------------
// Each distinct constraint once (a key names one constraint, but inv-1 has three texts); a value of
// key K (element E, type T) is checked against E's constraints and T's own, without repeats (ele-1
// is on both); a resource against its type's own (dom-2...). Lists hold indices into CONSTRAINTS.
const constraintSig = (c) => JSON.stringify([c.key, c.severity, c.human, c.expression ?? '']);
const constraintMap = new Map();
for (const t of ordered) for (const c of [...t.constraints, ...t.elements.flatMap((el) => el.constraints)]) constraintMap.set(constraintSig(c), c);
const constraintSigs = [...constraintMap.keys()].sort(byteCompare);
const constraintIndex = new Map(constraintSigs.map((s, i) => [s, i]));
const constraintListRows = [];
const constraintListOf = new Map(); // list text -> first index (identical lists shared)
const constraintRange = (cs) => {
  const ids = [...new Set(cs.map((c) => constraintIndex.get(constraintSig(c))))];
  if (ids.length === 0) return '{0, 0}';
  const text = ids.join(',');
  let first = constraintListOf.get(text);
  if (first === undefined) {
    first = constraintListRows.length;
    constraintListOf.set(text, first);
    constraintListRows.push(...ids);
  }
  return `{${fits(first, 0xffff, 'a constraint list offset')}, ${fits(ids.length, 0xffff, 'a constraint list length')}}`;
};
const typeConstraintRows = [];
const keyConstraintRows = [];

const elementRows = [];
const keyRows = [];
const typeRows = [];
for (const t of ordered) {
  const firstElement = elementRows.length;
  const keys = [];
  for (const el of t.elements) {
    const elementIndex = elementRows.length;
    const context = `${t.name}.${el.name}`;
    const typeIdx = el.isChoice ? 'NO_TYPE' : resolveType(el.typeNames[0], context);
    const codeSet = el.codeSet !== undefined ? codeSetIndex.get(el.codeSet) : -1;
    const max = el.max === 'UNBOUNDED' ? el.max : fits(el.max, 0xfe, `${context}'s max`);
    elementRows.push(`  {${q(el.name)}, ${fits(el.min, 0xfe, `${context}'s min`)}, ${max}, ${el.isArray}, ${el.isChoice}, ${typeIdx}, ${fits(codeSet, 0x7fff, 'a code set index')}},  // ${t.name}`);
    // A resource's own invariants are applied by its concrete resourceType, not by the key.
    const ownOf = (i) => (ordered[i].kind === 'any_resource' || ordered[i].kind === 'resource' ? [] : ordered[i].constraints);
    if (el.isChoice) {
      for (const tn of el.typeNames) {
        const ti = resolveType(tn, context);
        keys.push([el.name + cap(tn), elementIndex, ti, [...el.constraints, ...ownOf(ti)]]);
      }
    } else {
      keys.push([el.name, elementIndex, typeIdx, [...el.constraints, ...ownOf(typeIdx)]]);
    }
  }
  keys.sort((a, b) => byteCompare(a[0], b[0]));
  for (let i = 1; i < keys.length; ++i) if (keys[i][0] === keys[i - 1][0]) throw new Error(`duplicate key ${keys[i][0]} in ${t.name}`);
  const firstKey = keyRows.length;
  for (const k of keys) {
    keyRows.push(`  {${q(k[0])}, ${fits(k[1], 0xffff, 'an element index')}, ${k[2]}},`);
    keyConstraintRows.push(`  ${constraintRange(k[3])},`);
  }
  typeConstraintRows.push(`  ${constraintRange(t.constraints)},  // ${t.name}`);
  typeRows.push(`  {${q(t.name)}, type_kind::${t.kind}, primitive::${t.prim}, ${firstElement}, ${t.elements.length}, ${firstKey}, ${keys.length}},`);
}

lines.push('const type_def TYPES[] = {', ...typeRows, '};', `const size_t TYPE_COUNT = ${typeRows.length};`, '');
lines.push('const element_def ELEMENTS[] = {', ...elementRows, '};', `const size_t ELEMENT_COUNT = ${elementRows.length};`, '');
lines.push('const key_def KEYS[] = {', ...keyRows, '};', `const size_t KEY_COUNT = ${keyRows.length};`, '');

const constraintRows = constraintSigs.map((sig) => {
  const c = constraintMap.get(sig);
  return `  {${q(c.key)}, ${q(c.human ?? '')}, ${q(c.expression ?? '')}, ${c.severity === 'warning'}},`;
});
lines.push('const constraint_def CONSTRAINTS[] = {', ...constraintRows, '};', `const size_t CONSTRAINT_COUNT = ${constraintRows.length};`, '');
lines.push('const uint16_t CONSTRAINT_LISTS[] = {', ...chunkRows(constraintListRows), '};', '');
lines.push('const constraint_range TYPE_CONSTRAINTS[] = {', ...typeConstraintRows, '};', '');
lines.push('const constraint_range KEY_CONSTRAINTS[] = {', ...keyConstraintRows, '};', '');
if (constraintRows.length >= 0xffff) throw new Error('too many constraints for uint16_t');

const codeRows = [];
const setRows = [];
for (const name of codeSetNames) {
  const codes = codesByValueSet.get(name);
  setRows.push(`  {${q(name)}, ${codeRows.length}, ${codes.length}},`);
  for (const c of codes) codeRows.push(`  ${q(c)},`);
}
lines.push('const text_ref CODES[] = {', ...codeRows, '};', '');
lines.push('const code_set_def CODE_SETS[] = {', ...setRows, '};', `const size_t CODE_SET_COUNT = ${setRows.length};`, '');

const resources = ordered.map((t, i) => [t, i]).filter(([t]) => t.kind === 'resource');
lines.push('const uint16_t RESOURCE_TYPES[] = {', ...resources.map(([t, i]) => `  ${i},  // ${t.name}`), '};');
lines.push(`const size_t RESOURCE_TYPE_COUNT = ${resources.length};`);
lines.push(`const uint16_t ANY_RESOURCE_TYPE = ${typeIndex.get('Resource')};`, '');
// The blob, as string literals of at most ~100 bytes each (adjacent literals concatenate).
lines.push('const char TEXT[] =');
let chunk = '';
for (const part of textParts) {
  chunk += part;
  if (chunk.length > 100) {
    lines.push(`  ${JSON.stringify(chunk)}`);
    chunk = '';
  }
}
lines.push(`  ${JSON.stringify(chunk)};`, '');
lines.push('}  // namespace quire::r4', '');

/** `n`, when it fits a field of at most `max` (r4_tables.h keeps the rows small); else an error. */
function fits(n, max, what) {
  if (!Number.isInteger(n) || n > max) throw new Error(`${what} (${n}) does not fit its field in r4_tables.h (at most ${max})`);
  return n;
}

function chunkRows(values) {
  const rows = [];
  for (let i = 0; i < values.length; i += 16) rows.push(`  ${values.slice(i, i + 16).join(', ')},`);
  return rows;
}

// Write to a temporary name and rename, so an interrupted run never leaves a half file behind.
const text = lines.join('\n');
writeFileSync(outputFile + '.tmp', text);
renameSync(outputFile + '.tmp', outputFile);
console.log(`r4_gen_definitions: ${ordered.length} types (${resources.length} resources), ${elementRows.length} elements, ${keyRows.length} keys, ${constraintRows.length} constraints, ${codeSetNames.length} code sets (${codeRows.length} codes) for ${pendingCodes.length - unenumerated} of ${pendingCodes.length} required code bindings`);
