// Growing and sealed .quire files in the npm package (store.ts): format.write with store: true,
// format.open with a key or passphrase, format.store's commits (append, delete, update, compact,
// rotate) in memory and on a Node file, and the same rows as the CLI both ways: a file the CLI
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
