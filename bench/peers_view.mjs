// The ViewDefinition peer, measured in Node in the same run as quire's view.* cases, on the very
// same bytes (quire.bench.input) and the very same ViewDefinitions (quire.bench.spec, the JSON the
// C++ case compiles): @medplum/core's evalSqlOnFhir (SQL on FHIR v2, its own FHIRPath engine).
//
// What it does per call, so that the work is comparable with quire's case (bytes in, rows out):
//   peer.medplum.view/<shape>  decode the NDJSON bytes, split lines, JSON.parse each line, then
//                              evalSqlOnFhir(view, resources) over them all.
// quire's case also writes its rows' text (append_row_json); the peer's rows stay JavaScript
// objects (writing them out would only add to its time).
//
// Rows are checked equal to quire's before anything is timed (a difference throws): quire's rows
// (quire.bench.answer, one JSON object a line) and the peer's, row by row, after one normalisation,
// a documented difference: FHIR decimals are exact in quire (`80.0` stays `80.0`, its precision
// kept, as the SQL on FHIR suite's decimals are), JavaScript numbers are binary (`80.0` is 80), so
// both sides are compared as JSON.parse reads them. A column the peer leaves out of a row (it
// omits empty values) is compared as null, as quire writes it.
import { readFileSync } from 'node:fs';
import { fnv } from './peers.mjs';

const decoder = new TextDecoder();

function version(pkg) {
  return JSON.parse(readFileSync(new URL(`./node_modules/${pkg}/package.json`, import.meta.url), 'utf8')).version;
}

function parseLines(bytes) {
  const out = [];
  for (const line of decoder.decode(bytes).split('\n')) if (line.length > 0) out.push(JSON.parse(line));
  return out;
}

// A row as text with the view's columns in order, absent values as null.
function rowText(columns, row) {
  const o = {};
  for (const c of columns) o[c] = row[c] ?? null;
  return JSON.stringify(o);
}

function viewColumns(view) {
  const out = [];
  const walk = (s) => {
    for (const c of s.column ?? []) out.push(c.name);
    for (const n of s.select ?? []) walk(n);
    if (s.unionAll?.length) walk(s.unionAll[0]);
  };
  for (const s of view.select) walk(s);
  return out;
}

/** The first difference between quire's rows (NDJSON text) and the peer's, or '' when equal. */
export function rowsDifference(columns, quireText, peerRows) {
  const quireRows = quireText.split('\n').filter((l) => l.length > 0);
  if (quireRows.length !== peerRows.length) return `${peerRows.length} rows, quire has ${quireRows.length}`;
  for (let i = 0; i < quireRows.length; i++) {
    const q = rowText(columns, JSON.parse(quireRows[i]));
    const p = rowText(columns, peerRows[i]);
    if (q !== p) return `row ${i}: ${p}, quire has ${q}`;
  }
  return '';
}

export async function peerCases(quire, cases) {
  const viewCases = cases.filter((c) => /^view\.(patient_flat|observation_coding)\//.test(c.name));
  if (viewCases.length === 0) return [];
  // @medplum/core 5.2.13 refers to the global WebSocket when it loads; Node 20 has none (Node 22
  // does). evalSqlOnFhir never uses it, so an empty class stands in.
  globalThis.WebSocket ??= class {};
  const { evalSqlOnFhir } = await import('@medplum/core');
  const label = `@medplum/core ${version('@medplum/core')} evalSqlOnFhir`;
  const out = [];
  for (const c of viewCases) {
    const shape = c.name.slice(c.name.indexOf('/') + 1);
    const view = JSON.parse(quire.bench.spec(c.name));
    const columns = viewColumns(view);
    const bytes = quire.bench.input(c.name);
    const run = (input) => evalSqlOnFhir(view, parseLines(input));
    const rows = run(bytes);
    const diff = rowsDifference(columns, quire.bench.answer(c.name), rows);
    if (diff) throw new Error(`peer.medplum.view/${shape}: the rows differ from quire's: ${diff}`);
    process.stderr.write(`peer.medplum.view/${shape}: ${rows.length} rows equal to quire's\n`);
    out.push({
      name: `peer.medplum.view/${shape}`,
      op: 'peer.medplum.view',
      shape,
      peer: label,
      mirrors: c.name,
      items: c.items,
      input: () => bytes,
      run,
      // The row count and the first rows in column order: equal answers, equal checksums.
      checksum: (r) => fnv(`${r.length}\n${r.slice(0, 200).map((row) => rowText(columns, row)).join('\n')}`),
    });
  }
  return out;
}

