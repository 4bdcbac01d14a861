// What the two read-back tests of quire's Parquet and Arrow IPC share (tests/parquet_readback.mjs,
// the CLI's files; js/test/view_arrow.test.mjs, the npm package's): the views and inputs, the
// types each must have, DuckDB from the CLI's Parquet helper (native/parquet/), core's CSV parsed
// back, and the cells DuckDB and apache-arrow read turned into values comparable with quire's.
import { createRequire } from 'node:module';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const tests = path.dirname(fileURLToPath(import.meta.url));

/** The views read back, with the DuckDB types of their columns; `corpus` is the shared corpus. */
export function readbackCases(corpus) {
  const synthea = path.join(corpus, 'bulk-ndjson-synthea');
  return [
    { view: 'parquet/observation_view.json', input: path.join(tests, 'data', 'parquet', 'observations.ndjson'),
      types: ['VARCHAR', 'VARCHAR', 'VARCHAR', 'DECIMAL(38,18)', 'VARCHAR', 'VARCHAR', 'VARCHAR'] },
    { view: 'parquet/medication_view.json', input: path.join(synthea, 'MedicationRequest.000.ndjson'),
      types: ['VARCHAR', 'VARCHAR', 'VARCHAR', 'BOOLEAN', 'DECIMAL(38,18)', 'BIGINT', 'VARCHAR', 'VARCHAR'] },
    { view: 'view_output/patient_view.json', input: path.join(synthea, 'Patient.000.ndjson'),
      types: ['VARCHAR', 'BOOLEAN', 'VARCHAR', 'VARCHAR', 'BIGINT', 'VARCHAR', 'VARCHAR', 'VARCHAR'] },
  ].map((k) => ({ ...k, viewPath: path.join(tests, 'data', k.view) }));
}

/** apache-arrow's name of the type DuckDB reads for each column. */
export const ARROW_TYPES = { VARCHAR: 'Utf8', BIGINT: 'Int64', BOOLEAN: 'Bool', 'DECIMAL(38,18)': 'Decimal[38e+18]' };

/** A DuckDB connection, from the CLI's Parquet helper's node_modules (installed by scripts/bootstrap). */
export async function openDuckDb() {
  const require = createRequire(path.join(tests, '..', 'native', 'parquet', 'package.json'));
  const { DuckDBInstance } = await import(require.resolve('@duckdb/node-api'));
  const db = await DuckDBInstance.create(':memory:');
  return db.connect();
}

/** RFC 4180 as core writes it: null is an empty unquoted field, "" an empty string. */
export function parseCsv(text) {
  const rows = [];
  let row = [], i = 0;
  while (i < text.length) {
    let value;
    if (text[i] === '"') {
      let s = '';
      i++;
      for (;;) {
        const q = text.indexOf('"', i);
        s += text.slice(i, q);
        i = q + 1;
        if (text[i] === '"') { s += '"'; i++; } else break;
      }
      value = s;
    } else {
      let end = i;
      while (end < text.length && text[end] !== ',' && text[end] !== '\n') end++;
      value = end === i ? null : text.slice(i, end);
      i = end;
    }
    row.push(value);
    if (text[i] === ',') { i++; continue; }
    rows.push(row);
    row = [];
    i++;  // the \n
  }
  return rows;
}

/** quire's exact decimal text as the value x 10^18 (test-side arithmetic, to check core's). */
export function unscaled(text) {
  const neg = text.startsWith('-');
  const [whole, frac = ''] = text.replace(/^[-+]/, '').split('.');
  const v = BigInt(whole + frac.padEnd(18, '0'));
  return neg ? -v : v;
}

/** A cell DuckDB read, as a comparable value: decimals as their x 10^18 BigInt. */
export function fromDuckDb(type, v) {
  if (v === null) return null;
  if (type.startsWith('DECIMAL')) return v.value * 10n ** BigInt(18 - v.scale);
  return v;
}

/** A cell apache-arrow read, as a comparable value: decimals as their x 10^18 BigInt. */
export function fromArrow(type, v) {
  if (v === null) return null;
  if (type.startsWith('Decimal')) {
    const w = Array.from(v, (x) => BigInt(x));
    return BigInt.asIntN(128, w[0] | (w[1] << 32n) | (w[2] << 64n) | (w[3] << 96n));
  }
  return v;
}

/** quire's CSV cell as the value DuckDB and Arrow should hold (`type`: DuckDB's name). */
export function expectedCell(type, text) {
  if (text === null) return null;
  if (type.startsWith('DECIMAL')) return unscaled(text);
  if (type === 'BIGINT') return BigInt(text);
  if (type === 'BOOLEAN') return text === 'true';
  return text;
}
