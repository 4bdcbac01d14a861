// queryText(q, { form: 'cells' }) and findText(column, key, { form: 'cells' }): core's cells, what
// the viewer's grids show — one JSON array a row of each cell's text (core's digits), null as null.
// The same bytes as the native Catch2 test (tests/format_query_cells_test.cpp).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { loadQuire } from './helpers.mjs';

const quire = await loadQuire();
const { format, QuireError } = quire;

const rows =
  '{"id":1,"name":"Ana \\"A\\"","price":12.50,"ok":true,"when":"2024-01-02","tags":[1,"x"],"big":9007199254740993}\n' +
  '{"id":2,"name":"","price":3.05,"ok":false,"when":null,"tags":{"k":null},"big":null}\n';

test('queryText cells: each cell its text as core writes it, a row a line', () => {
  const f = format.open(format.write(rows));
  try {
    assert.equal(f.schema[2].type, 'decimal');
    const text = f.queryText({}, { form: 'cells' });
    assert.equal(text,
      '["1","Ana \\"A\\"","12.50","true","2024-01-02","[1,\\"x\\"]","9007199254740993"]\n' +
      '["2","","3.05","false",null,"{\\"k\\":null}",null]\n');
    // What a grid does with it: parse each line, nothing else; the digits stay core's.
    const cells = text.split('\n').filter(Boolean).map((line) => JSON.parse(line));
    assert.deepEqual(cells[0], ['1', 'Ana "A"', '12.50', 'true', '2024-01-02', '[1,"x"]', '9007199254740993']);
    assert.equal(f.queryText({ where: 'id = 2', columns: ['when', 'id'] }, { form: 'cells' }), '[null,"2"]\n');
    assert.equal(f.queryText({ limit: 0 }, { form: 'cells' }), '');
    // The other forms by name, as before.
    assert.equal(f.queryText({ limit: 1, columns: ['id'] }, { form: 'ndjson' }), '{"id":1}\n');
    assert.equal(f.queryText({ limit: 1, columns: ['id'] }, { ndjson: true }), '{"id":1}\n');
    assert.equal(f.queryText({ limit: 1, columns: ['id'] }), '[{"id":1}]');
    assert.throws(() => f.queryText({ columns: ['nope'] }, { form: 'cells' }), (e) => e instanceof QuireError && e.code === 'NO_SUCH_COLUMN');
    assert.throws(() => f.queryText({}, { form: 'tsv' }), (e) => e instanceof QuireError && e.code === 'INVALID_ARGUMENT' && /no row text named 'tsv'/.test(e.message));
  } finally {
    f.close();
  }
});

test('findText: find in one call, as an object or as cells', () => {
  const f = format.open(format.write(rows, { indexes: { id: 'hash' } }));
  try {
    assert.equal(f.findText('id', 1, { columns: ['price', 'name'], form: 'cells' }), '["12.50","Ana \\"A\\""]');
    assert.equal(f.findText('id', 1, { columns: ['price', 'name'] }), '{"price":12.50,"name":"Ana \\"A\\""}');
    assert.deepEqual(f.find('id', 2, { columns: ['when', 'ok'] }), { when: null, ok: false });
    assert.equal(f.findText('id', 9, { form: 'cells' }), undefined);
    assert.throws(() => f.findText('id', 'x', { form: 'cells' }), (e) => e instanceof QuireError && e.code === 'WRONG_KEY');
  } finally {
    f.close();
  }
});
