// The result battery through the package: every call of tests/data/battery/battery.tsv runs through
// the npm API and must give the text whose digest is in tests/data/battery/digests.tsv, the table
// core's Catch2 test (native and wasm) and the CLI's test check. Rows are compared as core's own
// text (queryText); the other results as JSON.stringify of what the package returns, which equals
// core's text when every number in it survives a JavaScript number; failing calls as
// QuireError.message (core's describe() line).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { loadQuire, dataDir, repo } from './helpers.mjs';

const { readBattery, readDigests, fnv1a64 } = await import(pathToFileURL(path.join(repo, 'tests', 'cli_battery.mjs')).href);

// Lines whose result the package cannot give back as core's text, and why. Each must still differ
// (so that a line that becomes comparable is moved off this list), with the same outcome (ok or
// the error code).
const NOT_COMPARABLE = new Map([
  ['d-sum-integer-128', 'the exact 128-bit sum and the min/max near int64 bounds are integers beyond 2^53: JavaScript numbers round them'],
  ['d-chunks-integer', 'chunk min/max near int64 bounds are integers beyond 2^53: JavaScript numbers round them'],
]);

/** A --find key as the package takes it: a number or boolean when the column's type reads the text so, else the text. */
function keyFor(type, text) {
  if (type === 'integer' && /^-?\d+$/.test(text)) return Number(text);
  if ((type === 'float' || type === 'decimal') && /^-?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?$/.test(text)) return Number(text);
  if (type === 'boolean' && (text === 'true' || text === 'false')) return text === 'true';
  return text;
}

/** The call's text as the package gives it back. */
function run(format, call) {
  const f = format.open(path.join(dataDir, call.file));
  try {
    const q = { where: call.where, columns: call.columns, orderBy: call.order, descending: call.descending, offset: call.offset, limit: call.limit };
    switch (call.op) {
      case 'rows': {
        const text = f.queryText(q, { ndjson: true });
        // The array form holds the same objects, comma-separated.
        const lines = text ? text.slice(0, -1).split('\n') : [];
        assert.equal(f.queryText(q), `[${lines.join(',')}]`, `${call.id}: queryText as an array`);
        return text;
      }
      case 'count':
        return `${f.count(q)}\n`;
      case 'sum':
        return `${JSON.stringify(f.aggregate(call.column, q))}\n`;
      case 'explain':
      case 'explain-analyze':
        return `${JSON.stringify(f.explain(q, { analyze: call.op === 'explain-analyze' }))}\n`;
      case 'storage':
        return `${JSON.stringify(f.storage())}\n`;
      case 'chunks':
        return `${JSON.stringify(f.chunkStatistics(call.column))}\n`;
      case 'find': {
        const type = f.schema.find((c) => c.name === call.column)?.type;
        const row = f.find(call.column, keyFor(type, call.key), { columns: call.columns });
        return row === undefined ? '' : `${JSON.stringify(row)}\n`;
      }
      default:
        throw new Error(`${call.id}: unknown op ${call.op}`);
    }
  } finally {
    f.close();
  }
}

test('the result battery: the package gives core\'s texts (tests/data/battery/digests.tsv)', async () => {
  const quire = await loadQuire();
  const calls = readBattery();
  const table = readDigests();
  assert.equal(calls.length, table.size, 'battery.tsv and digests.tsv have the same lines');
  const failures = [];
  let agree = 0;
  for (const call of calls) {
    const want = table.get(call.id);
    assert.ok(want, `${call.id} is in digests.tsv`);
    let text;
    let status = 'ok';
    try {
      text = run(quire.format, call);
    } catch (e) {
      if (!(e instanceof quire.QuireError)) throw e;
      text = `${e.message}\n`;
      status = e.code;
    }
    const same = status === want.status && fnv1a64(text) === want.digest;
    if (NOT_COMPARABLE.has(call.id)) {
      if (same) failures.push(`${call.id} now agrees: take it off NOT_COMPARABLE`);
      else if (status !== want.status) failures.push(`${call.id}: ${status}, table ${want.status}`);
      continue;
    }
    if (same) agree++;
    else failures.push(`${call.id}: ${status} ${fnv1a64(text)}, table ${want.status} ${want.digest}: ${text.slice(0, 300)}`);
  }
  console.log(`npm battery: ${calls.length} calls, ${agree} agree, ${NOT_COMPARABLE.size} not comparable through JSON.parse`);
  assert.deepEqual(failures, []);
});
