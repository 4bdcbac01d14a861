// hl7.listen (js/src/listen.ts, wasm/bind_listen.cpp): HL7 v2 over MLLP into a .quire store in
// Node, the engine of `quire listen`. The same messages go to hl7.listen and to the native CLI
// (QUIRE_CLI, else build/native/native/quire; that half is skipped when it is not built): the ACK
// bytes (MSH-7, the receive time, masked) and the stored rows (minus receive_time) must be equal.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import net from 'node:net';
import { spawn, execFileSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import tls from 'node:tls';
import os from 'node:os';
import path from 'node:path';
import { loadQuire, repo } from './helpers.mjs';

const quire = await loadQuire();
const cli = process.env.QUIRE_CLI ?? path.join(repo, 'build', 'native', 'native', 'quire');

const VT = 0x0b, FS = 0x1c, CR = 0x0d;
const frame = (text) => Buffer.concat([Buffer.from([VT]), Buffer.from(text, 'latin1'), Buffer.from([FS, CR])]);
const adt = (id, pat) => `MSH|^~\\&|SND|FAC|RCV|RFAC|20261203064115||ADT^A01^ADT_A01|${id}|P|2.5\rEVN|A01|20261203064115\rPID|1||${pat}^^^HOSP^MR||DOE^JANE\r`;
const oru = (id, pat) => `MSH|^~\\&|LAB|LABFAC|EHR|HOSP|20261203070000||ORU^R01^ORU_R01|${id}|P|2.5.1\rPID|1||${pat}^^^HOSP^MR\rOBR|1|||GLU\rOBX|1|NM|GLU||5.4|mmol/L|||||F\r`;

/** The frames every listener is sent, and the ACK codes they must get. */
const frames = [
  frame(adt('M1', 'P1')),
  frame(oru('L1', 'P2')),
  frame(adt('M2', 'P3')),
  frame(adt('M1', 'P1')), // a duplicate of the first
  Buffer.from('noise between frames\r\n'), // outside a frame: skipped by the decoder
  frame('this is not a message'), // AR
  frame(adt('', 'P4')), // empty MSH-10: AE
  frame(oru('L2', '')), // no patient id: stored with patient_id null
];
const codes = ['AA', 'AA', 'AA', 'AA', 'AR', 'AE', 'AA'];

/** Sends the frames on one connection, then reads `want` ACKs (VT ... FS CR); returns their bytes. */
async function exchange(port, bytes, want) {
  const s = net.connect(port, '127.0.0.1');
  await new Promise((resolve, reject) => s.once('connect', resolve).once('error', reject));
  const acks = [];
  let pending = Buffer.alloc(0);
  const done = new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`${acks.length} of ${want} ACKs in 10 s`)), 10000);
    s.on('data', (d) => {
      pending = Buffer.concat([pending, d]);
      for (let end; (end = pending.indexOf(Buffer.from([FS, CR]))) >= 0; ) {
        acks.push(pending.subarray(0, end + 2));
        pending = pending.subarray(end + 2);
      }
      if (acks.length >= want) {
        clearTimeout(timer);
        resolve();
      }
    });
    s.on('error', reject);
  });
  s.write(bytes);
  await done;
  s.destroy();
  return acks;
}

/** An ACK's text with MSH-7 (the receive time) masked. */
function masked(ack) {
  return ack
    .toString('latin1')
    .split('\r')
    .map((seg) => {
      if (!seg.includes('MSH|')) return seg;
      const f = seg.split('|');
      f[6] = '<time>';
      return f.join('|');
    })
    .join('\r');
}
const msa = (ack) => ack.toString('latin1').split('\r').find((s) => s.startsWith('MSA|')).split('|');

const columns = 'control_id,type,sending_application,sending_facility,receiving_application,receiving_facility,message_time,patient_id,ack_code,message';
const rowsOf = (store) => execFileSync(cli, ['query', store, '--csv', '--columns', columns]).toString('latin1');

let work;
test.before(() => {
  work = mkdtempSync(path.join(os.tmpdir(), 'quire-listen-'));
});
test.after(() => rmSync(work, { recursive: true, force: true }));

test('hl7.listen acknowledges each frame once, stores accepted messages, continues its store after a restart', async () => {
  const store = path.join(work, 'js.quire');
  const fixed = Date.UTC(2026, 11, 3, 7, 30, 0) * 1000;
  let l = await quire.hl7.listen({ port: 0, store, clock: () => fixed });
  const port = l.address().port;
  assert.ok(port > 0);
  const acks = await exchange(port, Buffer.concat(frames), codes.length);
  assert.deepEqual(acks.map((a) => msa(a)[1]), codes);
  assert.deepEqual(acks.map((a) => msa(a)[2]), ['M1', 'L1', 'M2', 'M1', '', '', 'L2']);
  // MSH-7 of the ACK is the receive time the clock gave; MSH-10 'ACK' + the original's.
  const msh = acks[0].toString('latin1').slice(1).split('\r')[0].split('|');
  assert.equal(msh[6], '20261203073000');
  assert.equal(msh[9], 'ACKM1');
  assert.equal(acks[0][0], VT);
  let c = l.counters();
  assert.equal(c.stored, 4);
  assert.equal(c.duplicates, 1);
  assert.equal(c.errors, 1);
  assert.equal(c.rejected, 1);
  assert.ok(c.commits >= 1);
  await l.close();

  // Restarted on the same file: the stored keys are read back, a resend is AA and not stored again.
  l = await quire.hl7.listen({ port: 0, store });
  assert.equal(l.counters().rowsAtOpen, 4);
  const again = await exchange(l.address().port, frame(oru('L1', 'P2')), 1);
  assert.equal(msa(again[0])[1], 'AA');
  c = l.counters();
  assert.equal(c.duplicates, 1);
  assert.equal(c.stored, 0);
  await l.close();
});

test('hl7.listen closes by committing the group it holds and sending its ACKs', async () => {
  const store = path.join(work, 'close.quire');
  const l = await quire.hl7.listen({ port: 0, store, groupMs: 60000 });
  const s = net.connect(l.address().port, '127.0.0.1');
  await new Promise((resolve) => s.once('connect', resolve));
  const got = [];
  s.on('data', (d) => got.push(d));
  const ended = new Promise((resolve) => s.once('close', resolve));
  s.write(frame(adt('C1', 'P9')));
  await new Promise((resolve) => setTimeout(resolve, 100));
  assert.equal(got.length, 0, 'no ACK before the commit');
  await l.close();
  await ended;
  assert.equal(msa(Buffer.concat(got))[1], 'AA');
  assert.equal(l.counters().stored, 1);
});

test('hl7.listen under small groups and a small queue bound: every message acknowledged in order, stored once', async () => {
  const store = path.join(work, 'bounded.quire');
  const l = await quire.hl7.listen({ port: 0, store, groupMax: 3, maxQueuedBytes: 2048, groupMs: 1 });
  const n = 300;
  const bytes = Buffer.concat(Array.from({ length: n }, (_, i) => frame(adt(`B${i}`, `P${i}`))));
  assert.ok(bytes.length > 10 * 2048, 'the bytes sent are far over the bound');
  const acks = await exchange(l.address().port, bytes, n);
  assert.deepEqual(acks.map((a) => msa(a)[2]), Array.from({ length: n }, (_, i) => `B${i}`));
  assert.ok(acks.every((a) => msa(a)[1] === 'AA'));
  const c = l.counters();
  assert.equal(c.stored, n);
  assert.ok(c.commits >= n / 3, `${c.commits} commits of at most 3 rows`);
  await l.close();
});

test('hl7.listen refuses what it cannot use', async () => {
  await assert.rejects(quire.hl7.listen({ port: 0 }), TypeError);
  await assert.rejects(quire.hl7.listen({ port: 70000, store: path.join(work, 'x.quire') }), RangeError);
  await assert.rejects(quire.hl7.listen({ port: 0, store: path.join(work, 'y.quire'), key: new Uint8Array(3) }), TypeError);
  assert.equal(existsSync(path.join(work, 'y.quire')), false);
  // A sealed store cannot be continued without its key (and the file is left as it was).
  const sealed = path.join(work, 'sealed.quire');
  const key = quire.keygen();
  await (await quire.hl7.listen({ port: 0, store: sealed, key })).close();
  await assert.rejects(quire.hl7.listen({ port: 0, store: sealed }), (e) => e instanceof quire.QuireError && e.code === 'KEY_REQUIRED');
  assert.equal(existsSync(sealed), true);
});

/** Starts `quire listen ARGS... --port 0`; resolves to its port and a stop() that SIGTERMs it and resolves to its exit code. */
async function cliListen(args) {
  const child = spawn(cli, ['listen', '--port', '0', ...args], { stdio: ['ignore', 'pipe', 'pipe'] });
  const exited = new Promise((resolve) => child.once('exit', (code) => resolve(code)));
  const port = await new Promise((resolve, reject) => {
    let out = '';
    child.stdout.on('data', (d) => {
      out += d;
      const m = /listening on .*:(\d+)/.exec(out);
      if (m) resolve(Number(m[1]));
    });
    child.once('exit', () => reject(new Error(`quire listen exited: ${out}`)));
  });
  return { port, stop: () => (child.kill('SIGTERM'), exited) };
}

/** A view of the test's messages: the patient, the lab value, the message time. */
const view = {
  name: 'msgs',
  column: [
    { name: 'mrn', path: 'PID-3[1].1' },
    { name: 'family', path: 'PID-5.1' },
    { name: 'glucose', path: 'OBX-5', type: 'decimal' },
    { name: 'sent', path: 'MSH-7', type: 'timestamp' },
  ],
};
const viewColumns = 'control_id,mrn,family,glucose,sent';

test('hl7.listen and quire listen send the same ACK bytes and store the same rows, and the same view rows', { skip: !existsSync(cli) && `no native CLI at ${cli}` }, async () => {
  const jsStore = path.join(work, 'same-js.quire');
  const cliStore = path.join(work, 'same-cli.quire');
  const l = await quire.hl7.listen({ port: 0, store: jsStore, view });
  const jsAcks = await exchange(l.address().port, Buffer.concat(frames), codes.length);
  await l.close();

  const viewFile = path.join(work, 'view.json');
  writeFileSync(viewFile, JSON.stringify(view));
  const c = await cliListen(['--store', cliStore, '--view', viewFile]);
  const cliAcks = await exchange(c.port, Buffer.concat(frames), codes.length);
  assert.equal(await c.stop(), 0);

  assert.deepEqual(jsAcks.map(masked), cliAcks.map(masked));
  const jsRows = rowsOf(jsStore);
  assert.equal(jsRows.trim().split('\n').length, 1 + 4, jsRows);
  assert.equal(jsRows, rowsOf(cliStore));
  // Both views beside their stores, the same rows.
  const viewRows = (store) => execFileSync(cli, ['query', store, '--csv', '--columns', viewColumns]).toString('latin1');
  const jsView = viewRows(path.join(work, 'same-js.msgs.quire'));
  assert.equal(jsView, viewRows(path.join(work, 'same-cli.msgs.quire')));
  assert.equal(jsView, `${viewColumns}\nM1,P1,DOE,,2026-12-03T06:41:15Z\nL1,P2,,5.4,2026-12-03T07:00:00Z\nM2,P3,DOE,,2026-12-03T06:41:15Z\nL2,,,5.4,2026-12-03T07:00:00Z\n`);
});

test('hl7.listen with a view: the view catches up at open, a bad view is refused, the window bounds duplicates', { skip: !existsSync(cli) && `no native CLI at ${cli}` }, async () => {
  const store = path.join(work, 'later.quire');
  let l = await quire.hl7.listen({ port: 0, store, duplicateWindow: 2 });
  await exchange(l.address().port, Buffer.concat(['W1', 'W2', 'W3'].map((id) => frame(adt(id, 'P')))), 3);
  await l.close();
  // W1 left the window of two: its resend is stored again, W3's is not.
  l = await quire.hl7.listen({ port: 0, store, duplicateWindow: 2, view, viewStore: path.join(work, 'later-view.quire') });
  assert.equal(l.counters().viewRowsCaughtUp, 3);
  await exchange(l.address().port, Buffer.concat([frame(adt('W3', 'P')), frame(adt('W1', 'P'))]), 2);
  assert.equal(l.counters().stored, 1);
  assert.equal(l.counters().duplicates, 1);
  await l.close();
  assert.equal(execFileSync(cli, ['query', path.join(work, 'later-view.quire'), '--count']).toString().trim(), '4');
  const bad = path.join(work, 'bad-view.quire');
  await assert.rejects(
    quire.hl7.listen({ port: 0, store: bad, view: { name: 'v', column: [{ name: 'a', path: 'PID-0x' }] } }),
    (e) => e instanceof quire.QuireError && e.code === 'INVALID_VIEW' && e.path === 'column[0].path',
  );
  assert.equal(existsSync(bad), false);
  await assert.rejects(quire.hl7.listen({ port: 0, store: bad, viewStore: 'x.quire' }), TypeError);
  await assert.rejects(quire.hl7.listen({ port: 0, store: bad, duplicateWindow: 0 }), RangeError);
});

test('hl7.listen refuses a peer outside allow before reading a byte, and tells onRefused', async () => {
  const store = path.join(work, 'allow.quire');
  const refusals = [];
  // 127.0.0.1 is outside 10.0.0.0/8: refused; then a listener allowing loopback serves it.
  let l = await quire.hl7.listen({ port: 0, store, allow: ['10.0.0.0/8', 'fd00::/8'], onRefused: (peer, why) => refusals.push([peer, why]) });
  const s = net.connect(l.address().port, '127.0.0.1');
  s.on('error', () => {});
  s.write(frame(adt('X1', 'P')));
  await new Promise((resolve) => s.once('close', resolve));
  assert.equal(refusals.length, 1);
  assert.match(refusals[0][0], /^(::ffff:)?127\.0\.0\.1:\d+$/);
  assert.equal(refusals[0][1], 'not in allow');
  assert.equal(l.counters().frames, 0);
  await l.close();
  l = await quire.hl7.listen({ port: 0, store, allow: ['127.0.0.0/8'] });
  const acks = await exchange(l.address().port, frame(adt('X2', 'P')), 1);
  assert.equal(msa(acks[0])[1], 'AA');
  assert.equal(l.counters().rowsAtOpen, 0);
  await l.close();
  await assert.rejects(
    quire.hl7.listen({ port: 0, store: path.join(work, 'allow-bad.quire'), allow: ['10.0.0.0/33'] }),
    (e) => e instanceof quire.QuireError && e.code === 'INVALID_ARGUMENT',
  );
  assert.equal(existsSync(path.join(work, 'allow-bad.quire')), false);
});

/** A CA, a server certificate for 127.0.0.1 and a client certificate it issued, and one from another CA (openssl req/x509). */
function certificates(dir) {
  const run = (...args) => execFileSync('openssl', args, { cwd: dir, stdio: ['ignore', 'ignore', 'pipe'] });
  const ca = (name) => run('req', '-x509', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:P-256', '-nodes', '-days', '2', '-subj', `/CN=${name}`, '-keyout', `${name}.key`, '-out', `${name}.pem`);
  const issued = (name, by, ext) => {
    run('req', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:P-256', '-nodes', '-subj', `/CN=${name}`, '-keyout', `${name}.key`, '-out', `${name}.csr`);
    writeFileSync(path.join(dir, `${name}.ext`), ext);
    run('x509', '-req', '-in', `${name}.csr`, '-CA', `${by}.pem`, '-CAkey', `${by}.key`, '-CAcreateserial', '-days', '2', '-extfile', `${name}.ext`, '-out', `${name}.pem`);
  };
  ca('ca');
  ca('other-ca');
  issued('server', 'ca', 'subjectAltName=IP:127.0.0.1\n');
  issued('client', 'ca', 'extendedKeyUsage=clientAuth\n');
  issued('stranger', 'other-ca', 'extendedKeyUsage=clientAuth\n');
  const read = (f) => readFileSync(path.join(dir, f));
  return { ca: read('ca.pem'), cert: read('server.pem'), key: read('server.key'), client: { cert: read('client.pem'), key: read('client.key') }, stranger: { cert: read('stranger.pem'), key: read('stranger.key') } };
}

/** Sends frames over TLS and reads `want` ACKs; resolves to their MSA-2s, or rejects when the handshake fails. */
function tlsExchange(port, certs, who, bytes, want) {
  return new Promise((resolve, reject) => {
    const s = tls.connect({ port, host: '127.0.0.1', ca: certs.ca, ...(who ?? {}) }, () => s.write(bytes));
    let pending = Buffer.alloc(0);
    const ids = [];
    s.on('data', (d) => {
      pending = Buffer.concat([pending, d]);
      for (let end; (end = pending.indexOf(Buffer.from([FS, CR]))) >= 0; ) {
        ids.push(msa(pending.subarray(0, end + 2))[2]);
        pending = pending.subarray(end + 2);
      }
      if (ids.length >= want) {
        s.destroy();
        resolve(ids);
      }
    });
    s.on('error', reject);
    s.on('close', () => reject(new Error(`closed after ${ids.length} ACKs`)));
  });
}

test('hl7.listen over TLS and mutual TLS: a client of the CA is served, one without a certificate or of another CA is refused', { skip: !existsSync('/usr/bin/openssl') && 'no openssl' }, async () => {
  const certs = certificates(mkdtempSync(path.join(work, 'certs-')));
  const store = path.join(work, 'tls.quire');
  // Server-only TLS.
  let l = await quire.hl7.listen({ port: 0, store, tls: { cert: certs.cert, key: certs.key } });
  assert.deepEqual(await tlsExchange(l.address().port, certs, null, Buffer.concat([frame(adt('T1', 'P')), frame(adt('T2', 'P'))]), 2), ['T1', 'T2']);
  await l.close();
  // Mutual TLS: the CA's client is served; no certificate, another CA's: the handshake fails, nothing stored.
  const refusals = [];
  l = await quire.hl7.listen({ port: 0, store, tls: { cert: certs.cert, key: certs.key, ca: certs.ca }, onRefused: (peer, why) => refusals.push(why) });
  const port = l.address().port;
  await assert.rejects(tlsExchange(port, certs, null, frame(adt('N1', 'P')), 1));
  await assert.rejects(tlsExchange(port, certs, certs.stranger, frame(adt('N2', 'P')), 1));
  assert.deepEqual(await tlsExchange(port, certs, certs.client, frame(adt('T3', 'P')), 1), ['T3']);
  await l.close();
  assert.equal(refusals.length, 2, refusals.join('; '));
  assert.ok(refusals.every((r) => r.startsWith('TLS handshake failed')), refusals.join('; '));
  assert.equal(execFileSync(cli, ['query', store, '--columns', 'control_id', '--csv']).toString(), 'control_id\nT1\nT2\nT3\n');
  // A key that is not PEM: refused before the store is created.
  const bad = path.join(work, 'tls-bad.quire');
  await assert.rejects(quire.hl7.listen({ port: 0, store: bad, tls: { cert: certs.cert, key: 'not a key' } }));
  assert.equal(existsSync(bad), false);
});
