// Partitioned datasets through the npm package (Node): format.openDataset() of the checked-in
// dataset gives the bytes `quire query` prints of it (tests/data/dataset/, which cli_dataset.sh
// holds the CLI to), prunes by the manifest, and refuses a manifest or a file that lies.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { cpSync, mkdtempSync, readFileSync, rmSync, truncateSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { loadQuire, dataDir } from './helpers.mjs';

const quire = await loadQuire();
const { format, QuireError, QuireDataset } = quire;
const golden = path.join(dataDir, 'dataset');
const dir = path.join(golden, 'observations');

test('format.openDataset: the rows, CSV and plan quire query prints of the same folder', () => {
  const ds = format.openDataset(dir);
  try {
    assert.ok(ds instanceof QuireDataset);
    assert.equal(ds.rowCount, 6);
    assert.deepEqual(ds.manifest.partitionBy, ['status']);
    assert.deepEqual(ds.manifest.files.map((f) => f.partition), ['amended', 'final', 'preliminary']);
    assert.equal(ds.queryText({}, { form: 'ndjson' }), readFileSync(path.join(golden, 'rows.ndjson'), 'utf8'));
    assert.equal(ds.queryText({ offset: 1, limit: 4 }, { form: 'csv' }), readFileSync(path.join(golden, 'rows_1_4.csv'), 'utf8'));
    const plan = ds.explain({ where: "status = 'final' and value > 1" });
    assert.deepEqual(plan, JSON.parse(readFileSync(path.join(golden, 'explain_final.json'), 'utf8')));
    assert.equal(ds.count({ where: "status = 'final' and value > 1" }), 2);
    assert.deepEqual(ds.query({ where: { status: 'preliminary' }, columns: ['id'] }), [{ id: 'o6' }]);
    assert.equal(ds.count({ where: 'value is null' }), 1);
    assert.throws(() => ds.count({ where: 'nope = 1' }), (e) => e instanceof QuireError && e.code === 'NO_SUCH_COLUMN');
    assert.throws(() => ds.query({ orderBy: 'id' }), (e) => e instanceof QuireError && e.code === 'INVALID_QUERY');
  } finally {
    ds.close();
  }
});

test('format.openDataset: a missing manifest, a hostile one and a file unlike its entry are typed errors', () => {
  const work = mkdtempSync(path.join(tmpdir(), 'quire-dataset-'));
  try {
    assert.throws(() => format.openDataset(work), (e) => e instanceof QuireError && e.code === 'FILE_NOT_FOUND');
    const copy = path.join(work, 'ds');
    cpSync(dir, copy, { recursive: true });
    const manifest = path.join(copy, '_quire_dataset.json');
    const text = readFileSync(manifest, 'utf8');
    writeFileSync(manifest, text.replace('"path":"status=final/', '"path":"../'));
    assert.throws(() => format.openDataset(copy), (e) => e instanceof QuireError && e.code === 'CORRUPT_FILE');
    writeFileSync(manifest, text.replace('"quireDataset":1', '"quireDataset":9'));
    assert.throws(() => format.openDataset(copy), (e) => e instanceof QuireError && e.code === 'UNSUPPORTED_VERSION');
    writeFileSync(manifest, text);
    truncateSync(path.join(copy, 'status=final', 'part-00000.quire'), 100);
    const ds = format.openDataset(copy);
    try {
      assert.equal(ds.count({ where: "status = 'amended'" }), 1);  // the cut file is skipped by its partition
      assert.throws(() => ds.count(), (e) => e instanceof QuireError && e.code === 'CORRUPT_FILE' && /final/.test(e.message));
      rmSync(path.join(copy, 'status=preliminary', 'part-00000.quire'));
      assert.throws(() => ds.query({ where: "status = 'preliminary'" }), (e) => e instanceof QuireError && e.code === 'FILE_NOT_FOUND');
    } finally {
      ds.close();
    }
  } finally {
    rmSync(work, { recursive: true, force: true });
  }
});
