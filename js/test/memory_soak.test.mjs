// The wasm heap stays flat over 100,000 handles opened, queried and closed: every handle frees
// what it took (its input copy, its directories and pages), and nothing accumulates per call.
// Its own file, so its own process and module instance (node --test runs each file apart).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { loadQuire } from './helpers.mjs';

const quire = await loadQuire();
const { format, memory } = quire;

const ROUNDS = 10;
const PER_ROUND = 10_000;
// dlmalloc's own bookkeeping moves by a few chunk headers as free lists change: anything per
// handle would be PER_ROUND times its size.
const TOLERANCE = 64 * 1024;

test('memory: 100,000 open/query/close rounds leave the heap where it started', () => {
  const rows = Array.from({ length: 50 }, (_, i) => ({ id: i, name: `patient ${i}`, score: i * 1.5 }));
  const bytes = format.write(rows, { indexes: { id: 'hash' } });
  const once = () => {
    const f = format.open(bytes);
    const got = f.query({ limit: 1 });
    f.close();
    return got;
  };
  assert.deepEqual(once(), [{ id: 0, name: 'patient 0', score: 0 }]);
  // Warm up: the first calls size the caches that live as long as the module (simdjson's parser,
  // Embind's type tables).
  for (let i = 0; i < 1000; ++i) once();
  const baseline = memory();
  const readings = [];
  for (let round = 0; round < ROUNDS; ++round) {
    for (let i = 0; i < PER_ROUND; ++i) {
      const f = format.open(bytes);
      const got = f.query({ limit: 1 });
      f.close();
      if (got.length !== 1 || got[0].id !== 0) assert.fail(`round ${round}, call ${i}: ${JSON.stringify(got)}`);
    }
    readings.push(memory());
  }
  for (const [round, m] of readings.entries()) {
    assert.ok(Math.abs(m.heapBytes - baseline.heapBytes) <= TOLERANCE, `round ${round}: ${m.heapBytes} bytes in use, ${baseline.heapBytes} at the start`);
    // Linear memory never shrinks, so a leak would show as growth here too.
    assert.equal(m.heapCapacityBytes, baseline.heapCapacityBytes, `round ${round}: linear memory grew`);
  }
  // No drift across rounds either (a slow leak smaller than the tolerance over one round).
  assert.ok(Math.abs(readings.at(-1).heapBytes - readings[0].heapBytes) <= TOLERANCE);
});
