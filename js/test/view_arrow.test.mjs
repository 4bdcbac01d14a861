// view.toArrow(), toArrowTable() and toParquet() in Node: the files, read back by DuckDB
// (@duckdb/node-api from native/parquet/, hive partitioning on) and apache-arrow, hold every value
// of quire's own rows (core's CSV of the same view and input), decimals exactly, with the types
// the CLI's `quire view run --out rows.parquet|rows.arrow` gives — and, when build/native is
// there, the CLI's files hold the same values with the same types. Errors: a decimal
// DECIMAL(38,18) cannot hold (SCHEMA_MISMATCH, the CLI's message), no apache-arrow or parquet-wasm
// given (INVALID_ARGUMENT saying what to pass).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { spawnSync, execFileSync } from 'node:child_process';
import { tmpdir } from 'node:os';
import path from 'node:path';
import * as arrow from 'apache-arrow';
import * as parquet from 'parquet-wasm';
import { corpusDir, dataDir, dist, loadQuire, repo } from './helpers.mjs';
import { ARROW_TYPES, expectedCell, fromArrow, fromDuckDb, openDuckDb, parseCsv, readbackCases } from '../../tests/readback_support.mjs';

const quire = await loadQuire();
const work = mkdtempSync(path.join(tmpdir(), 'quire-view-arrow-'));
test.after(() => rmSync(work, { recursive: true, force: true }));

const duck = await openDuckDb();

const cli = process.env.QUIRE_CLI ?? path.join(repo, 'build', 'native', 'native', 'quire');

const CASES = readbackCases(corpusDir());

async function readParquet(file) {
  const from = `read_parquet('${file}', hive_partitioning = true)`;
  const described = (await duck.runAndReadAll(`DESCRIBE SELECT * FROM ${from}`)).getRowObjects();
  const rows = (await duck.runAndReadAll(`SELECT * FROM ${from}`)).getRows();
  return { names: described.map((d) => d.column_name), types: described.map((d) => d.column_type), rows };
}

function readArrow(bytes) {
  const table = arrow.tableFromIPC(bytes);
  const types = table.schema.fields.map((f) => String(f.type));
  const columns = table.schema.fields.map((_, i) => table.getChildAt(i));
  const rows = [];
  for (let r = 0; r < table.numRows; r++) rows.push(columns.map((c, i) => fromArrow(types[i], c.get(r))));
  return { names: table.schema.fields.map((f) => f.name), types, rows, batches: table.batches.length };
}

// Every cell of `got` (rows of comparable values) against quire's CSV rows; the count compared.
function compareRows(what, types, got, csvRows) {
  assert.equal(got.length, csvRows.length, `${what}: rows`);
  let compared = 0;
  for (let r = 0; r < csvRows.length; r++) {
    for (let c = 0; c < types.length; c++) {
      const want = expectedCell(types[c], csvRows[r][c]);
      if (got[r][c] !== want) assert.fail(`${what}: row ${r} column ${c}: ${String(got[r][c])}, quire's rows have ${String(csvRows[r][c])}`);
      compared++;
    }
  }
  return compared;
}

for (const k of CASES) {
  test(`view.toParquet and toArrow: ${k.view} read back by DuckDB and apache-arrow, every value quire's`, async () => {
    const viewText = readFileSync(path.join(dataDir, k.view), 'utf8');
    const input = readFileSync(k.input);
    const [header, ...csvRows] = parseCsv(await quire.view.toCsv(viewText, input));

    const parquetFile = path.join(work, 'npm.parquet');
    writeFileSync(parquetFile, await quire.view.toParquet(viewText, input, { arrow, parquet }));
    const pq = await readParquet(parquetFile);
    assert.deepEqual(pq.names, header);
    assert.deepEqual(pq.types, k.types);
    let compared = compareRows('npm Parquet', k.types, pq.rows.map((row) => row.map((v, i) => fromDuckDb(k.types[i], v))), csvRows);

    const ipc = readArrow(await quire.view.toArrow(viewText, input, { arrow }));
    assert.deepEqual(ipc.names, header);
    assert.deepEqual(ipc.types, k.types.map((t) => ARROW_TYPES[t]));
    compared += compareRows('npm Arrow', k.types, ipc.rows, csvRows);
    assert.ok(compared >= csvRows.length * header.length * 2);

    if (!existsSync(cli)) return; // the CLI's files are compared below when build/native is there
    const cliParquet = path.join(work, 'cli.parquet'), cliArrow = path.join(work, 'cli.arrow');
    execFileSync(cli, ['view', 'run', path.join(dataDir, k.view), k.input, '--out', cliParquet, '--quiet']);
    execFileSync(cli, ['view', 'run', path.join(dataDir, k.view), k.input, '--out', cliArrow, '--quiet']);
    const fromCli = await readParquet(cliParquet);
    assert.deepEqual(fromCli.types, pq.types, 'the CLI\'s Parquet types');
    assert.deepEqual(fromCli.rows, pq.rows, 'the CLI\'s Parquet values');
    const cliIpc = readArrow(readFileSync(cliArrow));
    assert.deepEqual(cliIpc.types, ipc.types, 'the CLI\'s Arrow types');
    assert.deepEqual(cliIpc.rows, ipc.rows, 'the CLI\'s Arrow values');
  });
}

test('view.toArrowTable: a record batch per batchRows rows, the user\'s apache-arrow Table', async () => {
  const viewText = readFileSync(path.join(dataDir, 'parquet', 'medication_view.json'), 'utf8');
  const input = readFileSync(CASES[1].input);
  const table = await quire.view.toArrowTable(viewText, input, { arrow, batchRows: 500 });
  assert.ok(table instanceof arrow.Table);
  assert.equal(table.numRows, 1745);
  assert.deepEqual(table.batches.map((b) => b.numRows), [500, 500, 500, 245]);
  // The Parquet file's row groups follow batchRows.
  const file = path.join(work, 'groups.parquet');
  writeFileSync(file, await quire.view.toParquet(viewText, input, { arrow, parquet, batchRows: 500 }));
  const groups = (await duck.runAndReadAll(`SELECT DISTINCT row_group_id, row_group_num_rows FROM parquet_metadata('${file}') ORDER BY 1`)).getRows();
  assert.deepEqual(groups.map((g) => Number(g[1])), [500, 500, 500, 245]);
  // Statistics are written for engines to skip row groups by: min and max of the decimal dose.
  const stats = (await duck.runAndReadAll(`SELECT stats_min_value, stats_max_value FROM parquet_metadata('${file}') WHERE path_in_schema = 'dose' AND row_group_id = 0`)).getRows();
  assert.notEqual(stats[0][0], null);
  assert.notEqual(stats[0][1], null);
});

test('view.toArrow and toParquet: no rows give a file with the columns and their types', async () => {
  const viewText = readFileSync(path.join(dataDir, 'parquet', 'observation_view.json'), 'utf8');
  const patients = '{"resourceType":"Patient","id":"p"}\n';
  const ipc = readArrow(await quire.view.toArrow(viewText, patients, { arrow }));
  assert.equal(ipc.rows.length, 0);
  assert.deepEqual(ipc.types, CASES[0].types.map((t) => ARROW_TYPES[t]));
  const file = path.join(work, 'empty.parquet');
  writeFileSync(file, await quire.view.toParquet(viewText, patients, { arrow, parquet }));
  const pq = await readParquet(file);
  assert.equal(pq.rows.length, 0);
  assert.deepEqual(pq.types, CASES[0].types);
});

test('view.toParquet with out (Node): the file written under a temporary name, none left on an error', async () => {
  const viewText = readFileSync(path.join(dataDir, 'parquet', 'observation_view.json'), 'utf8');
  const input = readFileSync(CASES[0].input);
  const out = path.join(work, 'out.parquet');
  const returned = await quire.view.toParquet(viewText, input, { arrow, parquet, out });
  assert.equal(returned.length, 0);
  assert.equal((await readParquet(out)).rows.length, 6);
  const bad = '{"resourceType":"Observation","id":"x","valueQuantity":{"value":1e3}}\n';
  await assert.rejects(quire.view.toArrow(viewText, bad, { arrow, out: path.join(work, 'bad.arrow') }), { code: 'SCHEMA_MISMATCH' });
  assert.equal(existsSync(path.join(work, 'bad.arrow')), false);
});

const line = (id, value) => `{"resourceType":"Observation","id":"${id}","status":"final","valueQuantity":{"value":${value}}}\n`;

test('a decimal DECIMAL(38,18) cannot hold exactly: SCHEMA_MISMATCH, the message the CLI gives', async () => {
  const viewFile = path.join(dataDir, 'parquet', 'observation_view.json');
  const viewText = readFileSync(viewFile, 'utf8');
  const text = line('a', '1.5') + line('b', '1.1234567890123456789');
  // core's error::describe(), the line the CLI prints after the input's name.
  const message =
    'SCHEMA_MISMATCH (value): column value (decimal, declared decimal) cannot hold a decimal 1.1234567890123456789 (does not fit DECIMAL(38,18) ' +
    'exactly: at most 20 integer and 18 fraction digits, no exponent) in resource 2 (Observation/b), line 2';
  for (const write of [() => quire.view.toArrow(viewText, text, { arrow }), () => quire.view.toParquet(viewText, text, { arrow, parquet })]) {
    await assert.rejects(write(), (e) => {
      assert.ok(e instanceof quire.QuireError);
      assert.equal(e.code, 'SCHEMA_MISMATCH');
      assert.equal(e.path, 'value');
      assert.equal(e.line, 2);
      assert.equal(e.message, message);
      return true;
    });
  }
  // Wider than 20 integer digits, and an exponent, are refused alike; a 20-digit value is kept.
  await assert.rejects(quire.view.toArrow(viewText, line('c', '123456789012345678901'), { arrow }), { code: 'SCHEMA_MISMATCH' });
  await assert.rejects(quire.view.toArrow(viewText, line('d', '2E5'), { arrow }), { code: 'SCHEMA_MISMATCH' });
  const widest = readArrow(await quire.view.toArrow(viewText, line('e', '-99999999999999999999.999999999999999999'), { arrow }));
  assert.equal(widest.rows[0][3], -(10n ** 38n - 1n));

  if (!existsSync(cli)) return;
  const bad = path.join(work, 'bad.ndjson');
  writeFileSync(bad, text);
  for (const out of ['bad.parquet', 'bad.arrow']) {
    const r = spawnSync(cli, ['view', 'run', viewFile, bad, '--out', path.join(work, out), '--quiet']);
    assert.equal(r.status, 1);
    assert.ok(r.stderr.toString().includes(message), r.stderr.toString());
    assert.equal(existsSync(path.join(work, out)), false);
  }
});

test('apache-arrow or parquet-wasm not given: INVALID_ARGUMENT that says what to pass', async () => {
  const viewText = readFileSync(path.join(dataDir, 'parquet', 'observation_view.json'), 'utf8');
  const input = line('a', '1.5');
  for (const [write, what] of [
    [() => quire.view.toArrow(viewText, input), 'apache-arrow'],
    [() => quire.view.toArrow(viewText, input, {}), 'apache-arrow'],
    [() => quire.view.toArrowTable(viewText, input, { arrow: { tableFromIPC() {} } }), 'apache-arrow'],
    [() => quire.view.toParquet(viewText, input, { arrow }), 'parquet-wasm'],
    [() => quire.view.toParquet(viewText, input, { parquet }), 'apache-arrow'],
  ]) {
    await assert.rejects(write(), (e) => {
      assert.ok(e instanceof quire.QuireError, String(e));
      assert.equal(e.code, 'INVALID_ARGUMENT');
      assert.match(e.message, new RegExp(`needs ${what}, which quire does not bundle: pass the module`));
      return true;
    });
  }
  // A batch size that is not a whole number of rows is misuse: a plain RangeError.
  for (const batchRows of [0, -1, 1.5, Infinity, 2 ** 32]) {
    await assert.rejects(quire.view.toArrow(viewText, input, { arrow, batchRows }), (e) => e instanceof RangeError && /batchRows is a whole number/.test(e.message));
  }
  // A compiled view is left open and usable after the error.
  const v = quire.view.compile(viewText);
  await assert.rejects(v.toParquet(input, { arrow }), { code: 'INVALID_ARGUMENT' });
  assert.equal((await v.toArrowTable(input, { arrow })).numRows, 1);
  v.close();
});

test('TypeScript: a caller passing the real apache-arrow and parquet-wasm modules type-checks against the package\'s .d.ts', () => {
  const modules = path.join(repo, 'js', 'node_modules');
  const dir = mkdtempSync(path.join(work, 'tsc-'));
  writeFileSync(path.join(dir, 'caller.ts'), `
import * as arrow from 'apache-arrow';
import * as parquet from 'parquet-wasm';
import { view } from 'quire-health';
const definition = { resource: 'Patient', select: [{ column: [{ name: 'id', path: 'id' }] }] };
export async function write(ndjson: string): Promise<[Uint8Array, Uint8Array, number]> {
  const ipc: Uint8Array = await view.toArrow(definition, ndjson, { arrow });
  const pq: Uint8Array = await view.toParquet(definition, ndjson, { arrow, parquet, batchRows: 1000 });
  const table = await view.toArrowTable<arrow.Table>(definition, ndjson, { arrow });
  return [ipc, pq, table.numRows];
}
`);
  writeFileSync(path.join(dir, 'tsconfig.json'), JSON.stringify({
    compilerOptions: {
      target: 'ES2022', module: 'ES2022', moduleResolution: 'bundler', strict: true, noEmit: true, skipLibCheck: true,
      lib: ['ES2022', 'DOM'], types: [],
      paths: {
        'quire-health': [path.join(dist, 'index.d.ts')],
        'apache-arrow': [path.join(modules, 'apache-arrow')],
        'parquet-wasm': [path.join(modules, 'parquet-wasm', 'esm', 'parquet_wasm.d.ts')],
      },
    },
    files: ['caller.ts'],
  }));
  const r = spawnSync(process.execPath, [path.join(modules, 'typescript', 'bin', 'tsc'), '-p', dir]);
  assert.equal(r.status, 0, r.stdout.toString() + r.stderr.toString());
});
