// Growing and sealed .quire files in the npm package (store.ts): format.write with store: true,
// format.open with a key or passphrase, format.store's commits (append, delete, update, compact,
// rotate, reseal) in memory and on a Node file, and the same rows as the CLI both ways: a file the CLI
// seals opens here with the CLI's keys, and a file sealed here opens in the CLI.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { loadQuire, repo } from './helpers.mjs';

const quire = await loadQuire();
const { format, QuireError } = quire;
const cli = process.env.QUIRE_CLI ?? path.join(repo, 'build', 'native', 'native', 'quire');

const work = mkdtempSync(path.join(tmpdir(), 'quire-store-'));
test.after(() => rmSync(work, { recursive: true, force: true }));

const CLINICS = ['north', 'south', 'east'];
function clinicRows(from, to, clinic) {
  const rows = [];
  for (let i = from; i < to; i++) rows.push({ id: i, clinic: clinic ?? CLINICS[i % 3], name: `Okafor-${i}`, balance: `${i}.50` });
  return rows;
}
const ndjson = (rows) => rows.map((r) => JSON.stringify(r) + '\n').join('');
// Decimals stay exact as text: the schema says so, as the CLI's inference of "1.50" does.
const SCHEMA = [
  { name: 'id', type: 'integer' },
  { name: 'clinic', type: 'string' },
  { name: 'name', type: 'string' },
  { name: 'balance', type: 'decimal' },
];

/** A sealed file partitioned by clinic, written here, and the keys handed back. */
function sealedFile(rows = clinicRows(0, 600)) {
  const owner = format.keygen();
  const keys = new Map();
  const bytes = format.write(rows, { store: true, schema: SCHEMA, partitionBy: 'clinic', ownerKey: owner, onNewKey: (v, k) => keys.set(v, k) });
  return { bytes, owner, keys };
}

function codeOf(fn) {
  try {
    fn();
  } catch (e) {
    assert.ok(e instanceof QuireError, `expected a QuireError, got ${e}`);
    return e.code;
  }
  assert.fail('did not throw');
}

test('store: keygen gives 32 random bytes', () => {
  const a = format.keygen();
  const b = quire.keygen();
  assert.ok(a instanceof Uint8Array);
  assert.equal(a.length, 32);
  assert.equal(b.length, 32);
  assert.notDeepEqual(a, b);
});

test('store: a sealed, partitioned file opens with the owner key (every row) and a partition key (its partition only)', () => {
  const { bytes, owner, keys } = sealedFile();
  assert.deepEqual([...keys.keys()].sort(), ['east', 'north', 'south']);
  for (const k of keys.values()) assert.equal(k.length, 32);
  assert.ok(!Buffer.from(bytes).includes('Okafor'), 'no plaintext in the sealed file');

  const all = format.open(bytes, { key: owner });
  assert.equal(all.count(), 600);
  const info = all.info;
  assert.equal(info.version, 2);
  assert.equal(info.sealed, true);
  assert.equal(info.partitionBy, 'clinic');
  assert.equal(info.partitions, 3);
  assert.equal(info.partitionsRead, 3);
  assert.equal(info.partitionKey, false);
  assert.equal(info.commit, 1);
  assert.equal(info.deletedRows, 0);
  assert.ok(info.segments >= 3);
  all.close();

  const north = format.open(bytes, { key: keys.get('north') });
  assert.equal(north.count(), 200);
  assert.equal(north.count({ where: "clinic != 'north'" }), 0);
  assert.equal(north.info.partitionKey, true);
  assert.equal(north.info.partitionsRead, 1);
  assert.deepEqual(north.query({ limit: 2, columns: ['id', 'clinic'] }), [{ id: 0, clinic: 'north' }, { id: 3, clinic: 'north' }]);
  north.close();

  // The storage report as each key sees it: the owner's every partition, a partition's key its own.
  const owned = format.storeStorage(bytes, { key: owner });
  assert.deepEqual(owned.byPartition.map((p) => [p.value, p.rows]), [['east', 200], ['north', 200], ['south', 200]]);
  const own = format.storeStorage({ size: bytes.length, read: (o, n, into) => (into.set(bytes.subarray(o, o + n)), n) }, { key: keys.get('south') });
  assert.deepEqual(own.byPartition.map((p) => [p.value, p.rows]), [['south', 200]]);
  assert.equal(codeOf(() => format.storeStorage(bytes)), 'KEY_REQUIRED');

  // A plain file says what it is too.
  const plain = format.open(format.write([{ a: 1 }]));
  assert.equal(plain.info.sealed, false);
  assert.equal(plain.info.partitionBy, null);
  assert.equal(plain.info.partitionKey, false);
  plain.close();
});

test('store: a missing, wrong or short key is a typed error; a key that is not bytes is misuse', () => {
  const { bytes, owner } = sealedFile(clinicRows(0, 30));
  assert.equal(codeOf(() => format.open(bytes)), 'KEY_REQUIRED');
  assert.equal(codeOf(() => format.open(bytes, { key: format.keygen() })), 'WRONG_KEY');
  assert.equal(codeOf(() => format.open(bytes, { passphrase: 'not the owner' })), 'WRONG_KEY');
  assert.throws(() => format.open(bytes, { key: owner.subarray(0, 31) }), (e) => e instanceof QuireError && e.code === 'INVALID_ARGUMENT' && /32 bytes; this one is 31/.test(e.message));
  assert.throws(() => format.open(bytes, { key: 'owner' }), (e) => e instanceof TypeError && /Uint8Array/.test(e.message));
  // Changes need the owner: none, and a partition's key, are KEY_REQUIRED.
  const s = format.store(bytes);
  assert.equal(codeOf(() => s.delete('id < 3')), 'KEY_REQUIRED');
  s.close();
});

test('store: a passphrase seals and opens (a cheap Argon2id cost for the test)', () => {
  const bytes = format.write(clinicRows(0, 40), { store: true, schema: SCHEMA, ownerPassphrase: 'correct horse battery staple', kdfCost: { passes: 1, memoryBytes: 1 << 16 } });
  assert.equal(codeOf(() => format.open(bytes)), 'KEY_REQUIRED');
  const f = format.open(bytes, { passphrase: 'correct horse battery staple' });
  assert.equal(f.count(), 40);
  assert.equal(f.info.sealed, true);
  f.close();
});

test('store: append, delete, update, storage, compact and rotate in memory', () => {
  const { bytes, owner, keys } = sealedFile();
  const made = new Map();
  const s = format.store(bytes, { ownerKey: owner, partitionKeys: keys, onNewKey: (v, k) => made.set(v, k) });
  assert.equal(s.path, undefined);

  const appended = s.append(ndjson(clinicRows(600, 630, 'west')));
  assert.equal(appended.rows, 30);
  assert.equal(appended.commit, 2);
  assert.deepEqual([...appended.newKeys.keys()], ['west']);
  assert.deepEqual(made.get('west'), appended.newKeys.get('west'));
  // A known partition's rows ask for no key.
  assert.equal(s.append(clinicRows(630, 633, 'north')).newKeys.size, 0);

  assert.equal(s.delete('id < 100').rows, 100);
  s.update({ id: 150 }, 'name', 'Renamed');
  let f = s.open();
  assert.equal(f.count(), 533);
  assert.deepEqual(f.find('id', 150, { columns: ['name', 'balance'] }), { name: 'Renamed', balance: 150.5 });
  assert.equal(f.info.deletedRows, 101);
  f.close();

  const west = format.open(s.bytes(), { key: made.get('west') });
  assert.equal(west.count(), 30);
  west.close();

  const storage = s.storage();
  assert.equal(storage.compactionPays, true);
  assert.equal(storage.rows, 533);
  assert.equal(storage.partitions, 4);
  const before = s.bytes().length;
  s.compact();
  const after = s.bytes();
  assert.ok(after.length < before, `compaction: ${before} -> ${after.length} bytes`);
  f = format.open(after, { key: keys.get('south') });
  assert.equal(f.count(), 167);
  f.close();

  const next = format.keygen();
  s.rotateOwnerKey(next);
  const rotated = s.bytes();
  assert.equal(codeOf(() => format.open(rotated, { key: owner })), 'WRONG_KEY');
  f = format.open(rotated, { key: next });
  assert.equal(f.count(), 533);
  f.close();
  f = format.open(rotated, { key: keys.get('north') });
  assert.equal(f.count(), 169);
  f.close();
  // The handle writes with the new owner from now on.
  assert.equal(s.delete('id = 200').rows, 1);
  s.close();
  assert.throws(() => s.bytes(), /closed/);
});

test('store: reseal puts every page under new data keys: the same rows, every key still opens, pages the same length', () => {
  const { bytes, owner, keys } = sealedFile();
  const s = format.store(bytes, { ownerKey: owner, partitionKeys: keys });
  s.append(clinicRows(600, 660));
  s.delete('id < 50');
  const old = s.bytes();
  const rowsOf = (b, key) => {
    const f = format.open(b, { key });
    try {
      return { rows: f.queryText({ orderBy: 'id' }), columns: f.storage().columns.map((c) => [c.name, c.dataBytes, c.pages]) };
    } finally {
      f.close();
    }
  };
  const before = rowsOf(old, owner);
  const r = s.reseal();
  assert.equal(r.rows, 610);
  assert.equal(r.segmentsWritten, 6);
  assert.equal(r.commit, 1);
  const now = s.bytes();
  assert.deepEqual(rowsOf(now, owner), before);
  for (const c of CLINICS) assert.equal(rowsOf(now, keys.get(c)).rows, rowsOf(old, keys.get(c)).rows, c);
  // Sealed again: no 32-byte run of the old file's pages is left in the new one.
  const within = Buffer.from(now);
  let found = 0;
  for (let at = 64; at + 32 < old.length - 4096; at += 509) if (within.indexOf(Buffer.from(old.subarray(at, at + 32))) >= 0) found++;
  assert.equal(found, 0);
  // One partition alone; then a partitioned file without its keys is refused.
  assert.equal(s.reseal({ partition: 'south' }).segmentsWritten, 2);
  assert.deepEqual(rowsOf(s.bytes(), owner), before);
  assert.equal(codeOf(() => s.reseal({ partition: 'west' })), 'INVALID_ARGUMENT');
  assert.throws(() => s.reseal({ partition: 7 }), TypeError);
  s.close();
  const t = format.store(now, { ownerKey: owner });
  assert.equal(codeOf(() => t.reseal()), 'INVALID_ARGUMENT');
  assert.deepEqual(t.bytes(), now, 'a refused re-seal changes nothing');
  t.close();
  const u = format.store(now, { ownerKey: keys.get('north'), partitionKeys: keys });
  assert.equal(codeOf(() => u.reseal()), 'KEY_REQUIRED');
  u.close();
});

test('store: reseal of a Node file renames the new file over it (the CLI reads it)', (t) => {
  const file = path.join(work, 'reseal.quire');
  const owner = format.keygen();
  const keys = new Map();
  format.writeFile(file, clinicRows(0, 300), { store: true, schema: SCHEMA, partitionBy: 'clinic', ownerKey: owner, onNewKey: (v, k) => keys.set(v, k) });
  const s = format.store(file, { ownerKey: owner, partitionKeys: keys });
  const old = readFileSync(file);
  assert.equal(s.reseal().rows, 300);
  assert.ok(!existsSync(`${file}.reseal-${process.pid}`));
  assert.notDeepEqual(readFileSync(file), old);
  assert.equal(s.append(clinicRows(300, 303)).rows, 3);
  s.close();
  const f = format.open(file, { key: keys.get('east') });
  assert.equal(f.count(), 101);
  f.close();
  if (!existsSync(cli)) return t.skip(`${cli} is absent (make native builds it)`);
  writeFileSync(path.join(work, 'reseal-owner.key'), owner);
  const out = execFileSync(cli, ['query', file, '--key', path.join(work, 'reseal-owner.key'), '--count'], { encoding: 'utf8' });
  assert.equal(out.trim(), '303');
});

test('store: the storage report adds up to the file; info() is core\'s JSON with version 2\'s members', () => {
  const { bytes, owner, keys } = sealedFile();
  const s = format.store(bytes, { ownerKey: owner, partitionKeys: keys });
  s.append(clinicRows(600, 660));
  s.delete('id < 50');
  const parts = (r) => 32 + r.segmentFrameBytes + r.deletionBytes + r.directoryBytes + r.mapBytes + r.metaBytes + r.footerBytes + 48 + r.garbageBytes + r.columns.reduce((a, c) => a + c.dataBytes + c.directoryBytes, 0) + r.indexes.reduce((a, i) => a + i.bytes, 0);
  const r = s.storage();
  assert.equal(r.bytes, s.bytes().length);
  assert.ok(r.garbageBytes > 0 && r.deletionBytes > 0);
  assert.equal(parts(r), r.bytes);
  assert.deepEqual(r.columns.map((c) => c.name), ['id', 'clinic', 'name', 'balance']);
  assert.equal(r.maxSegmentsPerPartition, 2);
  // The same figures through format.storeStorage, and as the CLI's core writes them.
  assert.deepEqual(format.storeStorage(s.bytes(), { key: owner }), r);
  const f = format.open(s.bytes(), { key: owner });
  const st = f.storage();
  for (let c = 0; c < 4; c++) assert.equal(r.columns[c].dataBytes, st.columns[c].dataBytes);
  assert.deepEqual(
    { commit: f.info.commit, sealed: f.info.sealed, partitionBy: f.info.partitionBy, partitions: f.info.partitions, partitionsRead: f.info.partitionsRead, segments: f.info.segments, deletedRows: f.info.deletedRows, partitionKey: f.info.partitionKey },
    { commit: 3, sealed: true, partitionBy: 'clinic', partitions: 3, partitionsRead: 3, segments: 6, deletedRows: 50, partitionKey: false },
  );
  f.close();
  s.compact();
  const c = s.storage();
  assert.equal(c.garbageBytes, 0);
  assert.equal(parts(c), s.bytes().length);
  // A partition's key now knows the column its file is partitioned by.
  const south = format.open(s.bytes(), { key: keys.get('south') });
  assert.equal(south.info.partitionBy, 'clinic');
  assert.equal(south.info.partitionKey, true);
  assert.equal(south.info.partitionsRead, 1);
  south.close();
  s.close();
  // A version-1 file: commit 0, nothing sealed, no partitions (the same members, as before).
  const v1 = format.open(format.write(clinicRows(0, 3)));
  assert.equal(v1.info.commit, 0);
  assert.equal(v1.info.sealed, false);
  assert.equal(v1.info.partitionBy, null);
  v1.close();
});

test('store: an exception of the caller\'s callback stops the commit and is thrown as it was', () => {
  const { bytes, owner, keys } = sealedFile(clinicRows(0, 30));
  const s = format.store(bytes, { ownerKey: owner, partitionKeys: keys, onNewKey: () => { throw new RangeError('no room for keys'); } });
  assert.throws(() => s.append(clinicRows(30, 31, 'west')), (e) => e instanceof RangeError && e.message === 'no room for keys');
  assert.deepEqual(s.bytes(), bytes, 'no commit was written');
  const f = format.open(s.bytes(), { key: owner });
  assert.equal(f.count(), 30);
  f.close();
  s.close();
  // A partition key of the wrong size is core's typed error.
  const t = format.store(bytes, { ownerKey: owner, partitionKeys: { west: new Uint8Array(8) } });
  assert.equal(codeOf(() => t.append(clinicRows(30, 31, 'west'))), 'INVALID_ARGUMENT');
  t.close();
  // An empty key or passphrase would mean a plain file: refused as misuse.
  assert.throws(() => format.write(clinicRows(0, 3), { store: true, ownerKey: new Uint8Array(0) }), (e) => e instanceof TypeError && /ownerKey is empty/.test(e.message));
  assert.throws(() => format.write(clinicRows(0, 3), { store: true, ownerPassphrase: '' }), (e) => e instanceof TypeError && /ownerPassphrase is empty/.test(e.message));
  // A sealed, partitioned write without a way to keep its keys is refused before anything is written.
  assert.throws(() => format.write(clinicRows(0, 3), { store: true, partitionBy: 'clinic', ownerKey: owner }), /partitionKeys or onNewKey/);
});

test('store: a Node file changes in place, and compaction renames a new file over it', () => {
  const file = path.join(work, 'grow.quire');
  const owner = format.keygen();
  const keys = new Map();
  format.writeFile(file, clinicRows(0, 300), { store: true, schema: SCHEMA, partitionBy: 'clinic', ownerKey: owner, onNewKey: (v, k) => keys.set(v, k) });
  const s = format.store(file, { ownerKey: owner, onNewKey: (v, k) => keys.set(v, k) });
  assert.equal(s.path, file);
  const size0 = statSync(file).size;
  const r = s.append(clinicRows(300, 320, 'west'));
  assert.equal(r.bytesBefore, size0);
  assert.equal(statSync(file).size, r.bytesAfter);
  assert.ok(keys.has('west'));
  s.delete("clinic = 'east'");
  assert.equal(s.info().rows, 220);
  s.compact();
  assert.ok(!existsSync(`${file}.compact-${process.pid}`));
  assert.equal(s.append(clinicRows(320, 321, 'north')).rows, 1);
  s.close();
  const f = format.open(file, { key: keys.get('west') });
  assert.equal(f.count(), 20);
  f.close();
  const g = format.open(file, { key: owner });
  assert.equal(g.count(), 221);
  assert.equal(g.info.partitions, 4);
  g.close();
});

test('store: a file the CLI seals opens here with its keys and gives the CLI\'s rows, byte for byte (skipped without build/native)', (t) => {
  if (!existsSync(cli)) return t.skip(`${cli} is absent (make native builds it)`);
  const dir = mkdtempSync(path.join(work, 'cli-'));
  const run = (...args) => execFileSync(cli, args, { cwd: dir, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });
  writeFileSync(path.join(dir, 'a.ndjson'), ndjson(clinicRows(0, 600)));
  writeFileSync(path.join(dir, 'b.ndjson'), ndjson(clinicRows(600, 630, 'west')));
  run('keygen', 'owner.key');
  run('convert', 'a.ndjson', 's.quire', '--partition-by', 'clinic', '--owner-key', 'owner.key', '--keys-dir', 'keys', '--quiet');
  run('append', 's.quire', 'b.ndjson', '--key', 'owner.key', '--keys-dir', 'keys', '--quiet');
  run('delete', 's.quire', '--where', 'id < 50', '--key', 'owner.key', '--quiet');
  const bytes = readFileSync(path.join(dir, 's.quire'));
  const owner = readFileSync(path.join(dir, 'owner.key'));
  for (const [keyFile, where] of [['owner.key', 'id >= 0'], ['keys/north.key', 'id >= 0'], ['keys/west.key', 'id >= 0'], ['owner.key', "clinic = 'east' and id < 90"]]) {
    const native = run('query', 's.quire', '--key', keyFile, '--where', where);
    const f = format.open(bytes, { key: new Uint8Array(readFileSync(path.join(dir, keyFile))) });
    assert.equal(f.queryText({ where }, { ndjson: true }), native, `${keyFile}: ${where}`);
    assert.equal(f.count({ where }), Number(run('query', 's.quire', '--key', keyFile, '--where', where, '--count').trim()));
    f.close();
  }
  const north = format.open(path.join(dir, 's.quire'), { key: new Uint8Array(readFileSync(path.join(dir, 'keys', 'north.key'))) });
  assert.equal(north.count(), 183);
  assert.equal(north.info.partitionKey, true);
  north.close();
  // The npm store changes the CLI's file, and the CLI reads the change.
  const s = format.store(path.join(dir, 's.quire'), { ownerKey: new Uint8Array(owner) });
  s.update({ id: 150 }, 'name', 'Renamed');
  s.close();
  assert.equal(run('query', 's.quire', '--key', 'owner.key', '--find', 'id=150', '--columns', 'name'), '{"name":"Renamed"}\n');
  assert.equal(codeOf(() => format.open(bytes, { key: format.keygen() })), 'WRONG_KEY');
});

test('store: a file sealed here opens in the CLI with the same keys and rows (skipped without build/native)', (t) => {
  if (!existsSync(cli)) return t.skip(`${cli} is absent (make native builds it)`);
  const dir = mkdtempSync(path.join(work, 'npm-'));
  const run = (...args) => execFileSync(cli, args, { cwd: dir, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });
  const { bytes, owner, keys } = sealedFile();
  const s = format.store(bytes, { ownerKey: owner, partitionKeys: keys, onNewKey: (v, k) => keys.set(v, k) });
  s.append(clinicRows(600, 610, 'west'));
  s.delete('id < 10');
  const file = path.join(dir, 'npm.quire');
  writeFileSync(file, s.bytes());
  s.close();
  writeFileSync(path.join(dir, 'owner.key'), owner, { mode: 0o600 });
  for (const [v, k] of keys) writeFileSync(path.join(dir, `${v}.key`), k, { mode: 0o600 });
  for (const keyFile of ['owner.key', 'north.key', 'west.key']) {
    const f = format.open(file, { key: new Uint8Array(readFileSync(path.join(dir, keyFile))) });
    assert.equal(run('query', 'npm.quire', '--key', keyFile), f.queryText({}, { ndjson: true }), keyFile);
    // Version 2's members of info() are core's bytes, the ones `quire inspect --json` prints.
    const members = ['commit', 'sealed', 'partitionBy', 'partitions', 'partitionsRead', 'segments', 'deletedRows', 'partitionKey'];
    const text = (o) => JSON.stringify(Object.fromEntries(members.map((m) => [m, o[m]])));
    assert.equal(text(JSON.parse(run('inspect', 'npm.quire', '--json', '--key', keyFile))), text(f.info), keyFile);
    f.close();
  }
  assert.equal(run('query', 'npm.quire', '--key', 'west.key', '--count').trim(), '10');
  assert.equal(run('query', 'npm.quire', '--key', 'owner.key', '--count').trim(), '600');
  // Without a key the CLI says KEY_REQUIRED, as the package does.
  let err = '';
  try {
    run('query', 'npm.quire', '--count');
  } catch (e) {
    err = String(e.stderr);
  }
  assert.match(err, /KEY_REQUIRED/);
  // The CLI's compaction of the npm file leaves every key working.
  run('compact', 'npm.quire', '--key', 'owner.key', '--quiet');
  const f = format.open(file, { key: keys.get('south') });
  assert.equal(f.count(), 197);
  f.close();
});

test('store: close() frees the in-memory file, and so does the finalizer', async () => {
  const { bytes, owner, keys } = sealedFile();
  const before = quire.memory().heapBytes;
  for (let i = 0; i < 30; i++) {
    const s = format.store(bytes, { ownerKey: owner, partitionKeys: keys });
    s.delete(`id = ${i}`);
    s.close();
  }
  const afterClose = quire.memory().heapBytes;
  assert.ok(afterClose - before < 64 * 1024, `close() leaked ${afterClose - before} bytes`);
  assert.equal(typeof globalThis.gc, 'function', 'run with --expose-gc (npm test does)');
  for (let i = 0; i < 30; i++) format.store(bytes, { ownerKey: owner }).delete(`id = ${i}`);
  assert.ok(quire.memory().heapBytes - before > 64 * 1024, 'forgotten stores hold memory until collected');
  for (let i = 0; i < 10 && quire.memory().heapBytes - before > 64 * 1024; i++) {
    globalThis.gc();
    await new Promise((r) => setTimeout(r, 20));
  }
  assert.ok(quire.memory().heapBytes - before < 64 * 1024, 'the finalizer frees forgotten stores');
});
