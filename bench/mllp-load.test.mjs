// The MLLP load driver's smoke (bench/mllp-load.mjs --quick): one short rate against the quire CLI
// (grouped and a commit a message), the npm package's listener (QUIRE_DIST) and a Node peer into SQLite (node-net-sqlite: the two MLLP
// libraries do not frame a stream — docs/performance.md — so their counts are not exact), in fresh
// processes; the reading validates against the schema and every message sent was
// answered AA exactly once. Counts, not speed: a loaded machine only makes the latencies larger.
// Run by `make test-bench-smoke`:  QUIRE_CLI=build/native/native/quire node --test bench/mllp-load.test.mjs
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { validate } from './validate-reading.mjs';

const here = path.dirname(fileURLToPath(import.meta.url));
const quire = path.resolve(process.env.QUIRE_CLI ?? path.join(here, '..', 'build', 'native', 'native', 'quire'));

function driver(args) {
  return new Promise((resolve) => {
    execFile(process.execPath, [path.join(here, 'mllp-load.mjs'), ...args], { timeout: 120_000 }, (error, stdout, stderr) => resolve({ code: error ? (error.code ?? 1) : 0, stdout, stderr }));
  });
}

test('--quick against quire listen, hl7.listen and a Node peer into SQLite: a valid reading, every message AA once', async () => {
  const dir = mkdtempSync(path.join(tmpdir(), 'mllp-load-test-'));
  try {
    const out = path.join(dir, 'reading.json');
    const systems = ['quire-grouped', 'quire-per-message', 'quire-npm-grouped', 'node-net-sqlite'];
    const r = await driver(['--quick', '--systems', systems.join(','), '--quire', quire, '--out', out]);
    assert.equal(r.code, 0, r.stderr);
    const reading = JSON.parse(readFileSync(out, 'utf8'));
    assert.deepEqual(validate(reading), []);
    assert.equal(reading.target, 'loopback');
    assert.deepEqual(reading.cases.map((c) => c.ladder.system), systems, 'one quick rate a system');
    for (const c of reading.cases) {
      const l = c.ladder;
      assert.equal(l.offered_per_s, 200);
      assert.equal(l.sent, 200, `${l.system}: 4 connections x 50 messages`);
      assert.equal(l.aa, l.sent, `${l.system}: every message AA (${r.stderr})`);
      assert.equal(l.missing + l.ae + l.ar + l.duplicates + l.unknown, 0, l.system);
      assert.ok(l.latency_us.p50 > 0 && l.latency_us.p50 <= l.latency_us.p99 && l.latency_us.p99 <= l.latency_us.max, `${l.system}: percentiles in order`);
      assert.equal(c.calls, l.sent);
      assert.equal(typeof l.held, 'boolean');
    }
    assert.match(reading.cases[3].peer, /^node:net v\d+.* \+ better-sqlite3 \d/);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test('the driver tells a bad option and an unknown system, and a server that cannot start', async () => {
  let r = await driver(['--systems', 'nope']);
  assert.equal(r.code, 2);
  assert.match(r.stderr, /unknown system nope/);
  r = await driver(['--seconds', 'x']);
  assert.equal(r.code, 2);
  assert.match(r.stderr, /--seconds: not a number/);
  r = await driver(['--quick', '--systems', 'quire-grouped', '--quire', '/nonexistent/quire']);
  assert.equal(r.code, 2);
  assert.match(r.stderr, /quire-grouped/);
});
