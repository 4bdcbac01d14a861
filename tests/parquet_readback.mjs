// Parquet and Arrow IPC out of `quire view run --out rows.parquet|rows.arrow`, read back by DuckDB
// and apache-arrow (ctest parquet_readback, native only): for each view, every value DuckDB reads
// from the Parquet file (and apache-arrow from the Arrow file) equals the value
// quire writes as CSV for the same rows — decimals exactly (as numbers: DECIMAL(p,s) keeps one
// scale a column), integers as BIGINT, booleans, text with its empty strings and nulls apart,
// json columns as their text — and the types are the ones native/parquet/README.md promises.
//   node tests/parquet_readback.mjs path/to/quire
import { execFileSync, spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ARROW_TYPES, expectedCell, fromArrow, fromDuckDb, openDuckDb, parseCsv, readbackCases } from './readback_support.mjs';

const quire = process.argv[2];
if (!quire) {
  console.error('usage: node tests/parquet_readback.mjs path/to/quire');
  process.exit(2);
}
const here = new URL('.', import.meta.url).pathname;
const require = createRequire(join(here, '../native/parquet/package.json'));
const arrow = await import(require.resolve('apache-arrow'));
const cases = readbackCases(join(here, '../../shared/corpus'));

let failures = 0, compared = 0;
const work = mkdtempSync(join(tmpdir(), 'quire-parquet-'));
try {
  const c = await openDuckDb();
  for (const k of cases) {
    const view = k.viewPath;
    const csvPath = join(work, 'rows.csv'), parquetPath = join(work, 'rows.parquet');
    execFileSync(quire, ['view', 'run', view, k.input, '--out', csvPath, '--quiet']);
    execFileSync(quire, ['view', 'run', view, k.input, '--out', parquetPath, '--quiet']);
    const [header, ...expected] = parseCsv(readFileSync(csvPath, 'utf8'));
    const described = (await c.runAndReadAll(`DESCRIBE SELECT * FROM read_parquet('${parquetPath}')`)).getRowObjects();
    const names = described.map((d) => d.column_name), types = described.map((d) => d.column_type);
    if (JSON.stringify(names) !== JSON.stringify(header)) { failures++; console.log(`FAIL ${k.view}: columns ${names} against ${header}`); }
    if (JSON.stringify(types) !== JSON.stringify(k.types)) { failures++; console.log(`FAIL ${k.view}: types ${types} against ${k.types}`); }
    const got = (await c.runAndReadAll(`SELECT * FROM read_parquet('${parquetPath}')`)).getRows();
    if (got.length !== expected.length) { failures++; console.log(`FAIL ${k.view}: ${got.length} rows, quire wrote ${expected.length}`); }
    for (let r = 0; r < Math.min(got.length, expected.length); r++) {
      for (let col = 0; col < header.length; col++) {
        const want = expected[r][col], have = got[r][col];
        const ok = fromDuckDb(types[col], have) === expectedCell(types[col], want);
        compared++;
        if (!ok && failures++ < 20) console.log(`FAIL ${k.view} row ${r} ${header[col]}: DuckDB ${String(have)}, quire ${want}`);
      }
    }
    console.log(`ok: ${k.view}: ${got.length} rows, ${types.join(' ')}`);

    // The same rows as an Arrow IPC file, read back with apache-arrow: the same values.
    const arrowPath = join(work, 'rows.arrow');
    execFileSync(quire, ['view', 'run', view, k.input, '--out', arrowPath, '--quiet']);
    const table = arrow.tableFromIPC(readFileSync(arrowPath));
    const arrowTypes = table.schema.fields.map((f) => String(f.type));
    const wantTypes = k.types.map((t) => ARROW_TYPES[t]);
    if (JSON.stringify(arrowTypes) !== JSON.stringify(wantTypes)) { failures++; console.log(`FAIL ${k.view} arrow: types ${arrowTypes}`); }
    if (table.numRows !== expected.length) { failures++; console.log(`FAIL ${k.view} arrow: ${table.numRows} rows`); }
    for (let col = 0; col < header.length; col++) {
      const vector = table.getChildAt(col);
      for (let r = 0; r < Math.min(table.numRows, expected.length); r++) {
        const want = expected[r][col], have = vector.get(r);
        const ok = fromArrow(arrowTypes[col], have) === expectedCell(k.types[col], want);
        compared++;
        if (!ok && failures++ < 20) console.log(`FAIL ${k.view} arrow row ${r} ${header[col]}: ${String(have)}, quire ${want}`);
      }
    }
    console.log(`ok: ${k.view} as Arrow IPC: ${table.numRows} rows, ${arrowTypes.join(' ')}`);
  }
  // What cannot be written exactly, or stops midway, leaves no file: a decimal DECIMAL(38,18)
  // cannot hold, and a line that is not JSON after rows were already written.
  const obsView = join(here, 'data/parquet/observation_view.json');
  const line = (id, value) => `{"resourceType":"Observation","id":"${id}","status":"final","valueQuantity":{"value":${value}}}\n`;
  for (const [what, text, reason] of [
    ['a decimal too wide', line('a', '1.5') + line('b', '1.1234567890123456789'), 'does not fit DECIMAL(38,18)'],
    ['a bad line after good ones', line('a', '1.5').repeat(150000) + '{"resourceType":\n', 'INVALID'],
  ]) {
    const bad = join(work, 'bad.ndjson'), out = join(work, 'bad.parquet');
    writeFileSync(bad, text);
    const r = spawnSync(quire, ['view', 'run', obsView, bad, '--out', out, '--quiet']);
    const leftovers = readdirSync(work).filter((n) => n.startsWith('bad.parquet'));
    if (r.status !== 1 || leftovers.length || !r.stderr.toString().includes(reason)) {
      failures++;
      console.log(`FAIL ${what}: exit ${r.status}, files ${leftovers}, stderr ${r.stderr}`);
    } else {
      console.log(`ok: ${what}: exit 1, no file`);
    }
    if (existsSync(out)) rmSync(out);
  }

  // A dataset with Parquet beside its parts, partitioned by a column whose values need escaping
  // (`mmol/L`, `%`) and one null: DuckDB reads DIR/*/*.parquet with hive partitioning on and
  // finds the rows quire's own query of DIR gives.
  const dir = join(work, 'ds');
  execFileSync(quire, ['view', 'run', join(here, 'data/parquet/observation_view.json'),
    join(here, 'data/parquet/observations.ndjson'), '--out', dir, '--partition-by', 'unit', '--parquet', '--quiet']);
  const [header, ...mine] = parseCsv(execFileSync(quire, ['query', dir, '--csv']).toString());
  const theirs = (await c.runAndReadAll(`SELECT ${header.map((h) => `"${h}"::VARCHAR`).join(', ')} FROM ` +
    `read_parquet('${dir}/*/*.parquet', hive_partitioning = true)`)).getRows();
  const key = (rows) => rows.map((r) => JSON.stringify(r)).sort();
  // Decimals print with the column's scale in DuckDB: compare them as numbers.
  const norm = (rows) => rows.map((r) => r.map((v, i) => (v !== null && header[i] === 'value' ? String(Number(v)) : v)));
  if (JSON.stringify(key(norm(mine))) !== JSON.stringify(key(norm(theirs)))) {
    failures++;
    console.log(`FAIL the dataset's Parquet: DuckDB ${JSON.stringify(key(norm(theirs)))} against quire ${JSON.stringify(key(norm(mine)))}`);
  } else {
    console.log(`ok: a partitioned dataset's Parquet parts: ${theirs.length} rows as quire reads them`);
  }
  compared += theirs.length * header.length;
} finally {
  rmSync(work, { recursive: true, force: true });
}
console.log(`parquet_readback: ${compared} values compared, ${failures} failures`);
process.exit(failures ? 1 : 0);
