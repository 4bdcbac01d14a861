// QuireFile.queryCsv(): core's CSV of a query (what `quire query --csv` prints and the viewer
// exports): a header row, records ending in \n, a null an empty field and "" a quoted one.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { loadQuire } from './helpers.mjs';

const quire = await loadQuire();
const { format, QuireError } = quire;

test('queryCsv: RFC 4180 rows of the query, null and "" apart', () => {
  const f = format.open(format.write([
    { id: 1, name: 'Ana, "the" first', note: '', tags: [1, 2] },
    { id: 2, name: 'line\nbreak', note: null, tags: null },
  ]));
  try {
    assert.equal(f.queryCsv(), 'id,name,note,tags\n1,"Ana, ""the"" first","","[1,2]"\n2,"line\nbreak",,\n');
    assert.equal(f.queryCsv({ where: 'id = 2', columns: ['note', 'id'] }), 'note,id\n,2\n');
    assert.equal(f.queryCsv({ limit: 0 }), 'id,name,note,tags\n');
    assert.throws(() => f.queryCsv({ columns: ['nope'] }), (e) => e instanceof QuireError && e.code === 'NO_SUCH_COLUMN');
  } finally {
    f.close();
  }
});
