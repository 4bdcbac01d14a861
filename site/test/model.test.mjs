// The dashboard's data model in Node: readings merged by case name, checksums compared, ratios,
// budgets and filters — the figures the page draws.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { repo } from './helpers.mjs';
import { buildModel, checkReading, filterCases, sortByRatio } from '../dashboard/model.mjs';
import { duration, esc, tickDuration } from '../dashboard/format.mjs';

const FILES = ['native.json', 'wasm-node.json', 'wasm-browser.json', 'format/native.json', 'format/wasm-node.json', 'format/wasm-browser.json'];
const load = (f) => JSON.parse(readFileSync(path.join(repo, 'bench', 'readings', f), 'utf8'));
const checkedIn = () => FILES.map((f) => ({ source: f, run: path.dirname(f) === '.' ? '' : path.dirname(f), reading: load(f) }));

function tiny(target, cases) {
  return {
    source: `${target}.json`,
    reading: {
      schema: 'quire-reading/1', target, runtime: { name: 'x', version: '1' }, build: { commit: 'abc', compiler: 'c', flags: '' },
      machine: { cpu: 'cpu', logical_cores: 2, os: 'linux' }, started_at: '2026-01-01T00:00:00Z',
      cases: cases.map(([name, median, checksum, extra = {}]) => ({
        name, op: name.split('/')[0], shape: name.split('/')[1], input_bytes: 1000, calls: 10, checksum,
        time_ns: { median, p50: median, p95: median, p99: median * 2, min: median, max: median * 3 }, ...extra,
      })),
    },
  };
}

test('every checked-in reading is a reading, and every case becomes one row', () => {
  const readings = checkedIn();
  for (const r of readings) assert.equal(checkReading(r.reading), null, r.source);
  const m = buildModel(readings);
  const names = new Set(readings.flatMap((r) => r.reading.cases.map((c) => c.name)));
  assert.equal(m.cases.length, names.size);
  assert.deepEqual(m.mismatches, [], 'the checked-in run computes equal checksums everywhere');
  assert.equal(m.runs.length, 6);
  assert.deepEqual(m.duplicates, []);
  for (const c of m.cases.filter((x) => !x.peer)) assert.ok(c.targets.includes('native'), c.name);
});

test('a checksum that differs between targets marks that case only', () => {
  const readings = checkedIn();
  const doctored = structuredClone(readings[0].reading);
  const victim = doctored.cases[3];
  victim.checksum = 'deadbeefdeadbeef';
  readings[0] = { ...readings[0], reading: doctored };
  const m = buildModel(readings);
  assert.deepEqual(m.mismatches, [victim.name]);
  const row = m.cases.find((c) => c.name === victim.name);
  assert.equal(row.checksumsDiffer, true);
  assert.equal(row.checksums.native, 'deadbeefdeadbeef');
});

test('peers are other libraries: their checksums are not compared, their ratio is to the quire case they mirror', () => {
  const m = buildModel([
    tiny('native', [['json.parse/a', 100, 'q'], ['peer.x.parse/a', 50, 'p1', { peer: 'x 1', mirrors: 'json.parse/a' }]]),
    tiny('wasm-node', [['json.parse/a', 300, 'q'], ['peer.x.parse/a', 600, 'p2', { peer: 'x 1', mirrors: 'json.parse/a' }]]),
  ]);
  assert.deepEqual(m.mismatches, []);
  const peer = m.cases.find((c) => c.peer);
  assert.equal(peer.peerRatio['wasm-node'], 2);
  assert.equal(peer.peerRatio.native, 0.5);
  assert.deepEqual(peer.ratio, {}, 'no wasm/native ratio for a peer');
  assert.equal(m.cases[0].ratio['wasm-node'], 3);
});

test('budgets: peak over 20x the input (3x for opaque payloads) is flagged on its target', () => {
  const m = buildModel([
    tiny('native', [
      ['a.x/within', 1, 's', { alloc: { calls_per_op: 1, bytes_per_op: 1, peak_bytes: 20000 } }],
      ['a.x/over', 1, 's', { alloc: { calls_per_op: 1, bytes_per_op: 1, peak_bytes: 20001 } }],
      ['a.x/opaque', 1, 's', { opaque_payload: true, alloc: { calls_per_op: 1, bytes_per_op: 1, peak_bytes: 3001 } }],
    ]),
  ]);
  assert.deepEqual(m.overBudget, ['a.x/over', 'a.x/opaque']);
  assert.equal(m.cases[2].budget.native.limit, 3000);
});

test('ratio view: largest wasm/native first, cases without native left out', () => {
  const m = buildModel(checkedIn());
  for (const target of ['wasm-node', 'wasm-browser']) {
    const sorted = sortByRatio(m.cases, target);
    assert.ok(sorted.length > 50);
    const key = (c) => c.ratio[target] ?? c.ratio[target === 'wasm-node' ? 'wasm-browser' : 'wasm-node'];
    for (let i = 1; i < sorted.length; ++i) assert.ok(key(sorted[i - 1]) >= key(sorted[i]), `${sorted[i - 1].name} before ${sorted[i].name}`);
    assert.ok(sorted.every((c) => !c.peer));
  }
});

test('filters narrow by module, operation, name, peers and problems', () => {
  const m = buildModel(checkedIn());
  const hl7 = filterCases(m.cases, { module: 'hl7v2' });
  assert.ok(hl7.length > 0 && hl7.length < m.cases.length);
  assert.ok(hl7.every((c) => c.name.startsWith('hl7v2.')));
  const ack = filterCases(m.cases, { module: 'hl7v2', op: 'hl7v2.ack' });
  assert.ok(ack.length > 0 && ack.length < hl7.length && ack.every((c) => c.op === 'hl7v2.ack'));
  assert.ok(filterCases(m.cases, { peers: false }).every((c) => !c.peer));
  assert.ok(filterCases(m.cases, { text: 'CUSTOMERS-200K' }).every((c) => c.name.includes('customers-200k')));
  assert.deepEqual(filterCases(m.cases, { problems: true }).map((c) => c.name), m.overBudget);
});

test('bad files are refused with a reason', () => {
  assert.match(checkReading([]), /not a JSON object/);
  assert.match(checkReading({ schema: 'other' }), /schema/);
  assert.match(checkReading({ schema: 'quire-reading/1', target: 'wasm-deno', cases: [] }), /target/);
  assert.match(checkReading({ schema: 'quire-reading/1', target: 'native' }), /cases/);
  assert.match(checkReading({ schema: 'quire-reading/1', target: 'native', cases: [{ name: 'a', op: 'a' }] }), /time_ns/);
});

test('figures and markup', () => {
  assert.equal(duration(22951), '23.0 µs');
  assert.equal(duration(1500), '1.50 µs');
  assert.equal(duration(2.5e9), '2.50 s');
  assert.equal(tickDuration(1e3), '1 µs');
  assert.equal(tickDuration(1e8), '100 ms');
  assert.equal(esc('<a href="x">&'), '&lt;a href=&quot;x&quot;&gt;&amp;');
});
