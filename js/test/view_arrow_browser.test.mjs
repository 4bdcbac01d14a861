// view.toArrow() and toParquet() in headless Chromium: the page loads apache-arrow (its UMD build,
// the global `Arrow`) and parquet-wasm (its ES module, initialised with its own .wasm) and passes
// them in; its Arrow IPC and Parquet files are byte for byte the ones Node writes for the same
// view and input, DuckDB reads its Parquet back with every value Node's has, and its errors (a
// decimal too wide, no apache-arrow) are the same QuireErrors.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { cpSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import * as arrow from 'apache-arrow';
import * as parquet from 'parquet-wasm';
import { dist, loadQuire, repo } from './helpers.mjs';
import { serve, launchChromium } from './browser.mjs';

// quire's exact decimal text as the value x 10^18 (test-side arithmetic, to check core's).
function unscaled(text) {
  const neg = text.startsWith('-');
  const [whole, frac = ''] = text.replace(/^-/, '').split('.');
  const v = BigInt(whole + frac.padEnd(18, '0'));
  return neg ? -v : v;
}

const here = path.dirname(fileURLToPath(import.meta.url));
const work = mkdtempSync(path.join(tmpdir(), 'quire-view-arrow-browser-'));
test.after(() => rmSync(work, { recursive: true, force: true }));

// Shared by Node and the page: the view, the input and the calls whose answers must match.
const SHARED = `
export const VIEW = {
  resource: 'Observation',
  select: [{ column: [
    { name: 'id', path: 'id', type: 'id' },
    { name: 'final', path: "status = 'final'", type: 'boolean' },
    { name: 'components', path: 'component.count()', type: 'integer' },
    { name: 'value', path: 'value.ofType(Quantity).value', type: 'decimal' },
    { name: 'codes', path: 'code.coding.code', collection: true }] }],
};
export function makeNdjson(n) {
  const lines = [];
  for (let i = 0; i < n; i++) {
    const value = i % 11 === 0 ? '' : ',"valueQuantity":{"value":' + (i % 2 ? '-' : '') + (i % 50) + '.' + String(i % 1000).padStart(3, '0') + '}';
    lines.push('{"resourceType":"Observation","id":"o' + i + '","status":"' + (i % 3 ? 'final' : 'amended') + '","code":{"coding":[{"code":"c' + (i % 7) + '"}]}' + value + '}');
  }
  return lines.join('\\n') + '\\n';
}
function digest(bytes) {
  let h = 0x811c9dc5;
  for (let i = 0; i < bytes.length; i++) h = Math.imul(h ^ bytes[i], 0x01000193) >>> 0;
  return h;
}
export async function calls(quire, arrow, parquet, blob) {
  const ipc = await quire.view.toArrow(VIEW, blob, { arrow, batchRows: 1000 });
  const pq = await quire.view.toParquet(VIEW, blob, { arrow, parquet, batchRows: 1000 });
  const errors = [];
  for (const write of [
    () => quire.view.toParquet(VIEW, '{"resourceType":"Observation","id":"x","valueQuantity":{"value":0.1234567890123456789}}\\n', { arrow, parquet }),
    () => quire.view.toArrow(VIEW, makeNdjson(3)),
  ]) {
    try { await write(); errors.push(null); } catch (e) { errors.push({ isQuireError: e instanceof quire.QuireError, code: e.code, path: e.path, message: e.message }); }
  }
  return { arrow: { size: ipc.length, digest: digest(ipc) }, parquet: { size: pq.length, digest: digest(pq), base64: btoa(Array.from(pq, (b) => String.fromCharCode(b)).join('')) }, errors };
}
`;

test('view.toArrow and toParquet in Chromium: the bytes Node writes, read back by DuckDB', async () => {
  cpSync(dist, path.join(work, 'dist'), { recursive: true });
  const modules = path.join(here, '..', 'node_modules');
  cpSync(path.join(modules, 'apache-arrow', 'Arrow.es2015.min.js'), path.join(work, 'arrow.js'));
  cpSync(path.join(modules, 'parquet-wasm', 'esm'), path.join(work, 'parquet-wasm'), { recursive: true });
  writeFileSync(path.join(work, 'shared.js'), SHARED);
  writeFileSync(
    path.join(work, 'index.html'),
    `<!doctype html><html><head><script src="./arrow.js"></script></head><body><script type="module">
      import * as quire from './dist/index.js';
      import initParquet, * as parquet from './parquet-wasm/parquet_wasm.js';
      import { calls, makeNdjson } from './shared.js';
      try {
        await quire.init();
        await initParquet();
        window.result = await calls(quire, window.Arrow, parquet, new Blob([makeNdjson(5000)]));
      } catch (e) { window.result = { error: String(e && e.stack || e) }; }
    </script></body></html>`,
  );

  const quire = await loadQuire();
  const shared = await import(pathToFileURL(path.join(work, 'shared.js')).href);
  const expected = await shared.calls(quire, arrow, parquet, new Blob([shared.makeNdjson(5000)]));
  assert.equal(expected.errors[0].code, 'SCHEMA_MISMATCH');
  assert.equal(expected.errors[0].path, 'value');
  assert.equal(expected.errors[1].code, 'INVALID_ARGUMENT');

  const server = await serve(work);
  const browser = await launchChromium();
  let result;
  try {
    const page = await browser.newPage();
    const errors = [];
    page.on('pageerror', (e) => errors.push(String(e)));
    await page.goto(`${server.url}/index.html`);
    await page.waitForFunction(() => window.result !== undefined, null, { timeout: 60000 });
    result = await page.evaluate(() => window.result);
    assert.deepEqual(errors, []);
    assert.equal(result.error, undefined, result.error);
  } finally {
    await browser.close();
    await server.close();
  }
  assert.deepEqual(result.errors, expected.errors);
  assert.deepEqual(result.arrow, expected.arrow);
  assert.deepEqual({ size: result.parquet.size, digest: result.parquet.digest }, { size: expected.parquet.size, digest: expected.parquet.digest });

  // DuckDB reads the page's Parquet: the rows of Node's Arrow table, value for value.
  const helperRequire = createRequire(path.join(repo, 'native', 'parquet', 'package.json'));
  const { DuckDBInstance } = await import(helperRequire.resolve('@duckdb/node-api'));
  const file = path.join(work, 'page.parquet');
  writeFileSync(file, Buffer.from(result.parquet.base64, 'base64'));
  const c = await (await DuckDBInstance.create(':memory:')).connect();
  const types = (await c.runAndReadAll(`DESCRIBE SELECT * FROM read_parquet('${file}', hive_partitioning = true)`)).getRowObjects().map((d) => d.column_type);
  assert.deepEqual(types, ['VARCHAR', 'BOOLEAN', 'BIGINT', 'DECIMAL(38,18)', 'VARCHAR']);
  const rows = (await c.runAndReadAll(`SELECT * FROM read_parquet('${file}')`)).getRows();
  const table = await quire.view.toArrowTable(shared.VIEW, shared.makeNdjson(5000), { arrow });
  assert.equal(rows.length, 5000);
  assert.equal(table.numRows, 5000);
  const text = quire.view.runText(shared.VIEW, shared.makeNdjson(5000)).trim().split('\n');
  for (let r = 0; r < rows.length; r++) {
    const [id, final, components, value, codes] = rows[r];
    const row = JSON.parse(text[r]);
    assert.equal(id, row.id);
    assert.equal(final, row.final);
    assert.equal(components, BigInt(row.components));
    assert.equal(codes, JSON.stringify(row.codes));
    // The decimal's exact text in core's row, against DuckDB's unscaled value.
    const exact = /"value":(-?[0-9.]+|null)/.exec(text[r])[1];
    if (exact === 'null') assert.equal(value, null);
    else assert.equal(value.value * 10n ** BigInt(18 - value.scale), unscaled(exact), `row ${r}: ${exact}`);
  }
});
