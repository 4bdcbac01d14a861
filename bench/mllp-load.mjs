#!/usr/bin/env node
// The open-loop MLLP load driver and the capacity ladder (issue 21; docs/performance.md, "HL7 v2
// over MLLP: capacity ladder"). Each connection sends ADT^A01 messages at a fixed rate whatever the
// ACKs do: message i of a connection is due at t0 + i/rate and is written as soon as it is due
// (everything due at a tick in one write), and its latency runs from that due time to the moment its
// ACK was read, so a stalled server shows as latency, not as a slower sender (no coordinated
// omission). Latencies go into an HDR histogram (hdr-histogram-js, µs, 3 significant digits).
//
//   node bench/mllp-load.mjs [--systems a,b] [--rates 250,500,...] [--seconds N] [--connections N]
//        [--threads N] [--repeats N] [--grace-ms N] [--warmup S] [--stop-after N] [--quire PATH]
//        [--out READING.json] [--quick]
//
// Every system runs as its own process (a fresh store or database in a temporary folder each run),
// the senders in worker threads of this one:
//   quire-grouped          `quire listen --group-ms 5`            (the CLI, group commit)
//   quire-grouped-0        `quire listen --group-ms 0`            (a group a turn of the event loop)
//   quire-per-message      `quire listen --group-max 1`           (a commit, so an fsync pair, a message)
//   quire-npm-grouped      the npm package's hl7.listen({ groupMs: 5 }) in a child Node process
//   quire-npm-per-message  hl7.listen({ groupMax: 1 })
//   medplum-sqlite         @medplum/hl7's Hl7Server, a row a message into SQLite (better-sqlite3)
//   node-hl7-server-sqlite node-hl7-server's Server, the same SQLite row a message
//   node-net-sqlite        no MLLP library: node:net, the frames split here, the same SQLite row
//                          a message (what a careful hand-written Node server would do)
//   ack-only               a Node server that frames and answers AA, storing nothing: what the
//                          driver itself can push (not a system; not in the default list)
// The SQLite peers store the columns of quire's row schema (docs/listen.md, "Rows") with
// journal_mode=WAL and synchronous=FULL (each commit waits for its fsync, as quire's ACK waits for
// its commit's), in one transaction a message, and answer AA only after it committed.
//
// A rate is held when every message was answered AA exactly once, p99 <= 100 ms and the queue
// stayed flat (the messages sent but not answered when the last one was due exceed those at half
// time by no more than 50 ms of the offered rate, or two a connection). A system's ladder stops
// after two rates in a row not held. The reading (bench/reading.schema.json, target "loopback")
// has one case a system and rate.
//
// Internal modes: `--serve SYSTEM --store PATH` (a peer or npm server; prints `listening on
// ADDR:PORT`), and the worker threads (workerData).
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { Worker, isMainThread, parentPort, workerData } from 'node:worker_threads';
import * as hdr from 'hdr-histogram-js';

const here = path.dirname(fileURLToPath(import.meta.url));
const repo = path.resolve(here, '..');
const dist = path.resolve(process.env.QUIRE_DIST ?? path.join(repo, 'js', 'dist'));
const VT = 0x0b;
const FS = 0x1c;
const CR = 0x0d;
const hr = () => Number(process.hrtime.bigint());

/** One ADT^A01 with control id `cid` in MSH-10 and PID-3 (~190 bytes with the driver's ids, `R0-1-12345`). */
export function message(cid) {
  return (
    `MSH|^~\\&|LOAD|FAC|QUIRE|RFAC|20261203064115||ADT^A01^ADT_A01|${cid}|P|2.5\r` +
    `EVN|A01|20261203064115\rPID|1||${cid}^^^HOSP^MR||DOE^JANE^Q||19800101|F\r` +
    'PV1|1|I|W1^101^1||||1234^SMITH^JOHN\r'
  );
}
const frame = (cid) => Buffer.from(`\x0b${message(cid)}\x1c\r`, 'latin1');

/**
 * Splits MLLP frames (VT ... FS CR) off `state.buf` + `chunk`, calling `onFrame(bytes)` for each;
 * keeps the partial tail. Bytes before a VT are skipped.
 */
/** The machine's load averages at the start and end of a run, as readings hold them. */
function loadAverages(start, end) {
  const r = (xs) => xs.map((x) => Math.round(x * 100) / 100);
  return { load_average: { start: r(start)[0], end: r(end)[0] }, load_average_1_5_15: { start: r(start), end: r(end) } };
}

/** A node:net server of the driver's own framing: onFrame(bytes, out) for each frame of a read; the ACK texts it pushes to `out` go back in one write. */
function framedServer(onFrame) {
  return net.createServer((sock) => {
    sock.setNoDelay(true);
    const state = { buf: Buffer.alloc(0) };
    sock.on('error', () => {});
    sock.on('data', (chunk) => {
      const out = [];
      deframe(state, chunk, (bytes) => onFrame(bytes, out));
      if (out.length) sock.write(out.join(''), 'latin1');
    });
  });
}

function deframe(state, chunk, onFrame) {
  let buf = state.buf.length ? Buffer.concat([state.buf, chunk]) : chunk;
  let at = 0;
  for (;;) {
    const start = buf.indexOf(VT, at);
    if (start < 0) {
      at = buf.length;
      break;
    }
    let end = buf.indexOf(FS, start + 1);
    while (end >= 0 && end + 1 < buf.length && buf[end + 1] !== CR) end = buf.indexOf(FS, end + 1);
    if (end < 0 || end + 1 >= buf.length) {
      at = start;
      break;
    }
    onFrame(buf.subarray(start + 1, end));
    at = end + 2;
  }
  state.buf = at >= buf.length ? Buffer.alloc(0) : Buffer.from(buf.subarray(at));
}

/** MSA-1 and MSA-2 of an ACK's bytes, or null. */
function msa(bytes) {
  const i = bytes.indexOf('MSA|');
  if (i < 0) return null;
  const codeEnd = bytes.indexOf('|', i + 4);
  if (codeEnd < 0) return null;
  let idEnd = codeEnd + 1;
  while (idEnd < bytes.length && bytes[idEnd] !== 0x7c && bytes[idEnd] !== CR) idEnd++;
  return { code: bytes.toString('latin1', i + 4, codeEnd), id: bytes.toString('latin1', codeEnd + 1, idEnd) };
}

// --- the senders (worker threads) -----------------------------------------------------------------

function newHistogram() {
  // µs from 1 to 10 minutes, 3 significant digits.
  return hdr.build({ lowestDiscernibleValue: 1, highestTrackableValue: 600_000_000, numberOfSignificantValueDigits: 3 });
}

async function senderThread({ host, port, ids, perConnRate, seconds, prefix, graceMs }) {
  const period = 1e9 / perConnRate;
  const n = Math.max(1, Math.floor(perConnRate * seconds));
  const hist = newHistogram();
  const codes = {};
  let acked = 0;
  let sent = 0;
  let bytesSent = 0;
  let duplicates = 0;
  let unknown = 0;
  let t0 = 0;
  const conns = await Promise.all(
    ids.map(
      (id) =>
        new Promise((resolve, reject) => {
          const sock = net.connect({ host, port }, () => resolve(conn));
          const conn = { id, sock, next: 0, seen: new Uint8Array(n), state: { buf: Buffer.alloc(0) }, tag: `${prefix}${id}-`, closed: false };
          sock.setNoDelay(true);
          sock.on('error', (e) => (t0 ? (conn.closed = true) : reject(e)));
          sock.on('close', () => (conn.closed = true));
          sock.on('data', (chunk) => {
            const now = hr();
            deframe(conn.state, chunk, (bytes) => {
              const a = msa(bytes);
              if (!a || !a.id.startsWith(conn.tag)) return void unknown++;
              const k = Number(a.id.slice(conn.tag.length));
              if (!(k >= 0 && k < n)) return void unknown++;
              if (conn.seen[k]) return void duplicates++;
              conn.seen[k] = 1;
              acked++;
              codes[a.code] = (codes[a.code] ?? 0) + 1;
              hist.recordValue(Math.max(1, Math.round((now - (t0 + k * period)) / 1000)));
            });
          });
        }),
    ),
  );
  parentPort.postMessage({ ready: true });
  t0 = await new Promise((resolve) => parentPort.once('message', (m) => resolve(m.t0)));
  const mid = t0 + (seconds / 2) * 1e9;
  let midOutstanding = null;
  let endOutstanding = null;
  await new Promise((done) => {
    const tick = () => {
      const now = hr();
      let nextDue = Infinity;
      for (const c of conns) {
        if (c.next >= n) continue;
        const upto = Math.min(n, Math.floor((now - t0) / period) + 1);
        if (upto > c.next && !c.closed) {
          const parts = [];
          for (let k = c.next; k < upto; k++) parts.push(frame(`${c.tag}${k}`));
          const bytes = parts.length === 1 ? parts[0] : Buffer.concat(parts);
          c.sock.write(bytes);
          bytesSent += bytes.length;
          sent += upto - c.next;
          c.next = upto;
        }
        if (c.next < n) nextDue = Math.min(nextDue, t0 + c.next * period);
      }
      if (midOutstanding === null && now >= mid) midOutstanding = sent - acked;
      if (nextDue === Infinity || conns.every((c) => c.closed)) {
        endOutstanding = sent - acked;
        if (midOutstanding === null) midOutstanding = endOutstanding;
        return done();
      }
      // Timers, not a spin: the senders share the machine with the server. A tick sends all that
      // fell due since the last one (at high rates, a millisecond's worth), and the latency of
      // what waited for the tick counts from its due time.
      setTimeout(tick, Math.max(0, Math.floor((nextDue - hr()) / 1e6)));
    };
    const first = () => (hr() >= t0 ? tick() : setTimeout(first, Math.max(0, Math.floor((t0 - hr()) / 1e6))));
    first();
  });
  const sendEnd = hr();
  // The answers still due: up to graceMs after the last send.
  await new Promise((done) => {
    const check = () => (acked >= n * conns.length || hr() - sendEnd > graceMs * 1e6 || conns.every((c) => c.closed) ? done() : setTimeout(check, 5));
    check();
  });
  for (const c of conns) c.sock.destroy();
  parentPort.postMessage({
    hist: hdr.encodeIntoCompressedBase64(hist),
    codes,
    want: n * conns.length,
    sent,
    acked,
    bytesSent,
    duplicates,
    unknown,
    midOutstanding,
    endOutstanding,
    sendSeconds: (sendEnd - t0) / 1e9,
  });
}

// --- the servers (child processes) ----------------------------------------------------------------

const ROW_COLUMNS = ['control_id', 'type', 'sending_application', 'sending_facility', 'receiving_application', 'receiving_facility', 'message_time', 'receive_time', 'patient_id', 'ack_code', 'message'];

/** A SQLite file with quire's row schema, WAL and synchronous=FULL; returns store(row) (one transaction). */
async function sqliteStore(file) {
  const { default: Database } = await import('better-sqlite3');
  const db = new Database(file);
  db.pragma('journal_mode = WAL');
  db.pragma('synchronous = FULL');
  db.exec(
    'CREATE TABLE messages (control_id TEXT, type TEXT, sending_application TEXT, sending_facility TEXT, receiving_application TEXT, ' +
      'receiving_facility TEXT, message_time TEXT, receive_time INTEGER, patient_id TEXT, ack_code TEXT, message TEXT)',
  );
  const insert = db.prepare(`INSERT INTO messages (${ROW_COLUMNS.join(', ')}) VALUES (${ROW_COLUMNS.map(() => '?').join(', ')})`);
  const store = db.transaction((row) => insert.run(...ROW_COLUMNS.map((c) => row[c])));
  return { store, close: () => db.close() };
}

const serveNote = (port) => process.stdout.write(`listening on 127.0.0.1:${port}\n`);
const onStop = (fn) => {
  for (const sig of ['SIGTERM', 'SIGINT']) {
    process.once(sig, async () => {
      await fn();
      process.exit(0);
    });
  }
};

async function serve(system, store) {
  if (system === 'quire-npm-grouped' || system === 'quire-npm-per-message') {
    const q = await import(pathToFileURL(path.join(dist, 'index.js')).href);
    await q.init();
    const l = await q.hl7.listen({ port: 0, store, ...(system === 'quire-npm-grouped' ? { groupMs: 5 } : { groupMax: 1 }) });
    onStop(() => l.close());
    serveNote(l.address().port);
  } else if (system === 'medplum-sqlite') {
    // @medplum/core refers to the global WebSocket when it loads; Node 20 has none (peers_hl7v2.mjs).
    globalThis.WebSocket ??= class {};
    const { Hl7Server } = await import('@medplum/hl7');
    const db = await sqliteStore(store);
    const server = new Hl7Server((connection) => {
      connection.addEventListener('message', ({ message }) => {
        let code = 'AA';
        try {
          const msh = message.getSegment('MSH');
          const f = (i) => msh.getField(i)?.toString() ?? '';
          db.store({
            control_id: f(10), type: f(9), sending_application: f(3), sending_facility: f(4), receiving_application: f(5),
            receiving_facility: f(6), message_time: f(7), receive_time: Date.now() * 1000,
            patient_id: message.getSegment('PID')?.getField(3)?.getComponent(1) ?? null, ack_code: 'AA', message: message.toString(),
          });
        } catch {
          code = 'AE';
        }
        connection.send(message.buildAck({ ackCode: code }));
      });
    });
    server.start(0);
    await new Promise((resolve) => (server.server.listening ? resolve() : server.server.once('listening', resolve)));
    onStop(async () => {
      await server.stop({ forceDrainTimeoutMs: 100 });
      db.close();
    });
    serveNote(server.server.address().port);
  } else if (system === 'node-hl7-server-sqlite') {
    const { Server } = await import('node-hl7-server');
    const db = await sqliteStore(store);
    const server = new Server({ bindAddress: '127.0.0.1' });
    const inbound = server.createInbound({ port: 0 }, async (req, res) => {
      const m = req.getMessage();
      let code = 'AA';
      try {
        const g = (p) => m.get(p).toRaw(); // the whole field as written (toString() is its first component)
        db.store({
          control_id: g('MSH.10'), type: g('MSH.9'), sending_application: g('MSH.3'), sending_facility: g('MSH.4'), receiving_application: g('MSH.5'),
          receiving_facility: g('MSH.6'), message_time: g('MSH.7'), receive_time: Date.now() * 1000,
          patient_id: g('PID.3.1') || null, ack_code: 'AA', message: m.toString(),
        });
      } catch {
        code = 'AE';
      }
      await res.sendResponse(code);
    });
    await new Promise((resolve) => inbound.once('listen', resolve));
    onStop(async () => {
      await inbound.close();
      db.close();
    });
    serveNote(inbound._socket.address().port);
  } else if (system === 'node-net-sqlite') {
    const db = await sqliteStore(store);
    const field = (line, i) => line.split('|')[i] ?? '';
    const server = framedServer((bytes, out) => {
      const text = bytes.toString('latin1');
      const segs = text.split('\r');
      const msh = segs[0];
      const pid = segs.find((x) => x.startsWith('PID|'));
      const id = field(msh, 9);
      let code = 'AA';
      try {
        if (!msh.startsWith('MSH|') || !id) throw new Error('no MSH-10');
        db.store({
          control_id: id, type: field(msh, 8), sending_application: field(msh, 2), sending_facility: field(msh, 3), receiving_application: field(msh, 4),
          receiving_facility: field(msh, 5), message_time: field(msh, 6), receive_time: Date.now() * 1000,
          patient_id: pid ? (field(pid, 3).split('~')[0].split('^')[0] || null) : null, ack_code: 'AA', message: text,
        });
      } catch {
        code = 'AE';
      }
      out.push(`\x0bMSH|^~\\&|${field(msh, 4)}|${field(msh, 5)}|${field(msh, 2)}|${field(msh, 3)}|${field(msh, 6)}||ACK|ACK${id}|P|2.5\rMSA|${code}|${id}\r\x1c\r`);
    });
    await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
    onStop(async () => {
      await new Promise((resolve) => server.close(resolve));
      db.close();
    });
    serveNote(server.address().port);
  } else if (system === 'ack-only') {
    const server = framedServer((bytes, out) => {
      const id = bytes.toString('latin1').split('\r', 1)[0].split('|')[9] ?? '';
      out.push(`\x0bMSH|^~\\&|QUIRE|RFAC|LOAD|FAC|20261203064115||ACK^A01^ACK|ACK${id}|P|2.5\rMSA|AA|${id}\r\x1c\r`);
    });
    await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
    onStop(() => new Promise((resolve) => server.close(resolve)));
    serveNote(server.address().port);
  } else {
    throw new Error(`--serve: unknown system ${system}`);
  }
}

// --- the ladder (main thread) ---------------------------------------------------------------------

const QUIRE_FLAGS = {
  'quire-grouped': ['--group-ms', '5'],
  'quire-grouped-0': ['--group-ms', '0'],
  'quire-per-message': ['--group-max', '1'],
};
const NODE_SYSTEMS = ['quire-npm-grouped', 'quire-npm-per-message', 'medplum-sqlite', 'node-hl7-server-sqlite', 'node-net-sqlite', 'ack-only'];
export const SYSTEMS = [...Object.keys(QUIRE_FLAGS), ...NODE_SYSTEMS];
const DEFAULT_SYSTEMS = ['quire-grouped', 'quire-grouped-0', 'quire-per-message', 'quire-npm-grouped', 'quire-npm-per-message', 'medplum-sqlite', 'node-hl7-server-sqlite', 'node-net-sqlite'];
const P99_BOUND_US = 100_000;

function packageVersion(name) {
  try {
    return JSON.parse(readFileSync(path.join(here, 'node_modules', name, 'package.json'), 'utf8')).version;
  } catch {
    return 'unknown';
  }
}

/** What a system is, in words, for the reading. */
function describe(system, quire) {
  if (QUIRE_FLAGS[system]) return { what: `quire listen ${QUIRE_FLAGS[system].join(' ')} (${path.relative(repo, quire)})` };
  if (system === 'quire-npm-grouped') return { what: 'quire-health hl7.listen({ groupMs: 5 })' };
  if (system === 'quire-npm-per-message') return { what: 'quire-health hl7.listen({ groupMax: 1 })' };
  if (system === 'medplum-sqlite') return { what: 'Hl7Server, better-sqlite3 (WAL, synchronous=FULL, a transaction a message)', peer: `@medplum/hl7 ${packageVersion('@medplum/hl7')} + better-sqlite3 ${packageVersion('better-sqlite3')}` };
  if (system === 'node-hl7-server-sqlite') return { what: 'Server.createInbound, better-sqlite3 (WAL, synchronous=FULL, a transaction a message)', peer: `node-hl7-server ${packageVersion('node-hl7-server')} + better-sqlite3 ${packageVersion('better-sqlite3')}` };
  if (system === 'node-net-sqlite') return { what: 'node:net with its own MLLP framing, better-sqlite3 (WAL, synchronous=FULL, a transaction a message)', peer: `node:net ${process.version} + better-sqlite3 ${packageVersion('better-sqlite3')}` };
  return { what: 'a Node server that frames and answers AA, storing nothing (the driver\'s own limit)', peer: 'ack-only (bench/mllp-load.mjs)' };
}

/** Starts `system` on a fresh store in `dir`; resolves { pid, port, stop() } once it listens. */
function startSystem(system, dir, quire) {
  const store = path.join(dir, QUIRE_FLAGS[system] || system.startsWith('quire-npm') ? 'load.quire' : 'load.sqlite');
  const [cmd, args] = QUIRE_FLAGS[system]
    ? [quire, ['listen', '--port', '0', '--store', store, ...QUIRE_FLAGS[system]]]
    : [process.execPath, [fileURLToPath(import.meta.url), '--serve', system, '--store', store]];
  const child = spawn(cmd, args, { stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, QUIRE_DIST: dist } });
  running.add(child);
  child.once('exit', () => running.delete(child));
  let stderr = '';
  child.stderr.on('data', (d) => (stderr = (stderr + d).slice(-4000)));
  const exited = new Promise((resolve) => child.once('exit', (code, signal) => resolve({ code, signal })));
  return new Promise((resolve, reject) => {
    child.once('error', (e) => reject(new Error(`${system}: cannot start ${cmd}: ${e.message}`)));
    let out = '';
    const timer = setTimeout(() => reject(new Error(`${system}: not listening after 30 s\n${stderr}`)), 30_000);
    child.stdout.on('data', (d) => {
      out += d;
      const m = /listening on [^\n]*:(\d+)\n/.exec(out);
      if (!m) return;
      clearTimeout(timer);
      child.stdout.removeAllListeners('data');
      child.stdout.resume();
      resolve({
        pid: child.pid,
        port: Number(m[1]),
        stop: async () => {
          child.kill('SIGTERM');
          const killer = setTimeout(() => child.kill('SIGKILL'), 15_000);
          const r = await exited;
          clearTimeout(killer);
          return { ...r, stderr };
        },
      });
    });
    exited.then((r) => reject(new Error(`${system} exited (${r.code ?? r.signal}) before listening\n${stderr}`)));
  });
}

// The servers running: stopped with the driver (SIGINT, SIGTERM), never left behind.
const running = new Set();
if (isMainThread) {
  for (const sig of ['SIGINT', 'SIGTERM']) {
    process.once(sig, () => {
      if (process.argv.includes('--serve')) return;
      for (const c of running) c.kill('SIGKILL');
      process.exit(130);
    });
  }
}

const CLK_TCK = 100; // USER_HZ on Linux
/** CPU seconds (user + system) a process has used, from /proc/PID/stat; null where there is none. */
function cpuSeconds(pid) {
  try {
    const f = readFileSync(`/proc/${pid}/stat`, 'utf8').split(')').pop().trim().split(' ');
    return (Number(f[11]) + Number(f[12])) / CLK_TCK;
  } catch {
    return null;
  }
}

/** One load run: `connections` connections over `threads` worker threads at `rate` msg/s in all. */
async function runLoad({ port, rate, seconds, connections, threads, graceMs, prefix }) {
  const groups = Array.from({ length: Math.min(threads, connections) }, () => []);
  for (let c = 0; c < connections; c++) groups[c % groups.length].push(c);
  const workers = groups.map((ids) => new Worker(fileURLToPath(import.meta.url), { workerData: { host: '127.0.0.1', port, ids, perConnRate: rate / connections, seconds, prefix, graceMs } }));
  const results = workers.map(
    (w) =>
      new Promise((resolve, reject) => {
        w.on('message', (m) => m.hist && resolve(m));
        w.once('error', reject);
        w.once('exit', (code) => code && reject(new Error(`sender thread exited ${code}`)));
      }),
  );
  await Promise.all(workers.map((w) => new Promise((resolve, reject) => {
    w.once('error', reject);
    w.on('message', (m) => m.ready && resolve());
  })));
  const t0 = hr() + 50e6;
  const cpu0 = process.cpuUsage();
  for (const w of workers) w.postMessage({ t0 });
  const parts = await Promise.all(results);
  const cpu = process.cpuUsage(cpu0);
  await Promise.all(workers.map((w) => w.terminate()));
  const hist = newHistogram();
  const sum = { codes: {}, want: 0, sent: 0, acked: 0, bytesSent: 0, duplicates: 0, unknown: 0, midOutstanding: 0, endOutstanding: 0, sendSeconds: 0 };
  for (const p of parts) {
    hist.add(hdr.decodeFromCompressedBase64(p.hist));
    for (const [k, v] of Object.entries(p.codes)) sum.codes[k] = (sum.codes[k] ?? 0) + v;
    for (const k of ['want', 'sent', 'acked', 'bytesSent', 'duplicates', 'unknown', 'midOutstanding', 'endOutstanding']) sum[k] += p[k];
    sum.sendSeconds = Math.max(sum.sendSeconds, p.sendSeconds);
  }
  return { ...sum, hist, driverCpuSeconds: (cpu.user + cpu.system) / 1e6 };
}

/** The figures of one run (a histogram and counts) as the reading's ladder fields. */
function summarise(run, rate, cpu, connections) {
  const h = run.hist;
  const aa = run.codes.AA ?? 0;
  const pct = (p) => (h.totalCount ? h.getValueAtPercentile(p) : 0);
  // Slack: 50 ms of the offered rate, and at least two messages a connection (at 50 msg/s, one
  // message in flight a connection is no queue).
  const queueFlat = run.endOutstanding <= run.midOutstanding + Math.max(rate * 0.05, 2 * connections);
  const p99 = pct(99);
  return {
    sent: run.sent,
    aa,
    ae: run.codes.AE ?? 0,
    ar: run.codes.AR ?? 0,
    missing: run.want - run.acked,
    duplicates: run.duplicates,
    unknown: run.unknown,
    aa_per_s: Math.round((aa / run.sendSeconds) * 10) / 10,
    latency_us: { p50: pct(50), p90: pct(90), p95: pct(95), p99, p999: pct(99.9), max: h.totalCount ? h.maxValue : 0, min: h.totalCount ? h.minNonZeroValue : 0, mean: Math.round(h.mean) },
    queue: { at_half: run.midOutstanding, at_end: run.endOutstanding, flat: queueFlat },
    ...(cpu !== null && aa > 0 ? { server_cpu_us_per_msg: Math.round(((cpu * 1e6) / aa) * 10) / 10 } : {}),
    bytes_sent: run.bytesSent,
    driver_cpu_us_per_msg: Math.round(((run.driverCpuSeconds * 1e6) / Math.max(1, run.sent)) * 10) / 10,
    held: aa === run.want && run.sent === run.want && run.duplicates === 0 && run.unknown === 0 && p99 <= P99_BOUND_US && queueFlat,
  };
}

/**
 * The disk's fsync latency where the stores live (os.tmpdir()): 200 appends of 2 KiB, each
 * followed by fsync; { p50, p90, p99, max } in ms. What a commit a message waits for, twice for
 * quire (its commit's two syncs), once for SQLite in WAL mode.
 */
async function fsyncProbe() {
  const { openSync, writeSync, fsyncSync, closeSync } = await import('node:fs');
  const dir = mkdtempSync(path.join(os.tmpdir(), 'quire-fsync-probe-'));
  try {
    const fd = openSync(path.join(dir, 'probe'), 'w');
    const block = Buffer.alloc(2048, 0x41);
    const t = [];
    for (let i = 0; i < 200; i++) {
      writeSync(fd, block);
      const a = hr();
      fsyncSync(fd);
      t.push((hr() - a) / 1e6);
    }
    closeSync(fd);
    t.sort((x, y) => x - y);
    const r = (v) => Math.round(v * 100) / 100;
    return { p50: r(t[100]), p90: r(t[180]), p99: r(t[198]), max: r(t[199]) };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

const median = (xs) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length % 2 ? s[(s.length - 1) / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2;
};

/** The repeats of one rate as one figure: the median run by p99 (its own counts and percentiles). */
function medianRun(runs) {
  const byP99 = [...runs].sort((a, b) => a.latency_us.p99 - b.latency_us.p99);
  const m = byP99[Math.floor((byP99.length - 1) / 2)];
  return { ...m, held: runs.filter((r) => r.held).length * 2 > runs.length, repeats: runs.length, p99_us_runs: runs.map((r) => r.latency_us.p99) };
}

function caseOf(system, rate, opts, fig, info) {
  const l = fig.latency_us;
  return {
    name: `listen.ladder/${system}@${rate}`,
    op: 'listen.ladder',
    shape: `${system}@${rate}`,
    input_bytes: fig.bytes_sent,
    items: fig.sent,
    calls: fig.sent,
    time_ns: { median: l.p50 * 1000, p50: l.p50 * 1000, p95: l.p95 * 1000, p99: l.p99 * 1000, min: l.min * 1000, max: l.max * 1000 },
    throughput: { ops_per_s: fig.aa_per_s },
    checksum: `aa ${fig.aa} of ${fig.sent}`,
    ...(info.peer ? { peer: info.peer } : {}),
    ladder: {
      system,
      what: info.what,
      offered_per_s: rate,
      seconds: opts.seconds,
      connections: opts.connections,
      sender_threads: Math.min(opts.threads, opts.connections),
      ...fig,
    },
  };
}

function parseArgs(argv) {
  const o = { systems: DEFAULT_SYSTEMS, rates: [50, 100, 250, 500, 1000, 2000, 4000, 8000, 16000, 24000, 32000], seconds: 3, connections: 4, threads: 2, repeats: 1, graceMs: 10_000, quire: path.join(repo, 'build', 'native', 'native', 'quire'), out: null, quick: false, stopAfter: 2, warmup: 1 };
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i];
    const v = () => {
      if (i + 1 >= argv.length) throw new Error(`${a} needs a value`);
      return argv[++i];
    };
    const num = (lo) => {
      const x = Number(v());
      if (!Number.isFinite(x) || x < lo) throw new Error(`${a}: not a number >= ${lo}`);
      return x;
    };
    if (a === '--systems') o.systems = v().split(',').filter(Boolean);
    else if (a === '--rates') o.rates = v().split(',').map(Number);
    else if (a === '--seconds') o.seconds = num(0.1);
    else if (a === '--connections') o.connections = Math.floor(num(1));
    else if (a === '--threads') o.threads = Math.floor(num(1));
    else if (a === '--repeats') o.repeats = Math.floor(num(1));
    else if (a === '--grace-ms') o.graceMs = num(0);
    else if (a === '--stop-after') o.stopAfter = Math.floor(num(1));
    else if (a === '--warmup') o.warmup = num(0);
    else if (a === '--quire') o.quire = path.resolve(v());
    else if (a === '--out') o.out = v();
    else if (a === '--quick') o.quick = true;
    else if (a === '--help' || a === '-h') o.help = true;
    else throw new Error(`unknown option ${a}`);
  }
  for (const s of o.systems) if (!SYSTEMS.includes(s)) throw new Error(`--systems: unknown system ${s} (known: ${SYSTEMS.join(', ')})`);
  if (o.rates.some((r) => !(r > 0))) throw new Error('--rates: rates must be positive numbers');
  if (o.quick) {
    o.rates = [200];
    o.seconds = 1;
    o.graceMs = Math.min(o.graceMs, 5000);
    o.warmup = 0;
  }
  return o;
}

async function gitInfo() {
  const { execFileSync } = await import('node:child_process');
  const git = (...a) => {
    try {
      return execFileSync('git', a, { cwd: repo, encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] }).trim();
    } catch {
      return '';
    }
  };
  return { commit: git('rev-parse', 'HEAD') || 'unknown', dirty: git('status', '--porcelain', '--untracked-files=no') !== '' };
}

async function main(argv) {
  const o = parseArgs(argv);
  if (o.help) {
    console.log('usage: node bench/mllp-load.mjs [--systems a,b] [--rates r1,r2] [--seconds N] [--connections N] [--threads N] [--repeats N] [--grace-ms N] [--warmup S] [--stop-after N] [--quire PATH] [--out READING.json] [--quick]');
    console.log(`systems: ${SYSTEMS.join(', ')}`);
    return 0;
  }
  const started = new Date().toISOString();
  const load0 = os.loadavg();
  const fsync0 = await fsyncProbe();
  const cases = [];
  for (const system of o.systems) {
    const info = describe(system, o.quire);
    let notHeld = 0;
    for (const rate of o.rates) {
      const runs = [];
      for (let r = 0; r < o.repeats; r++) {
        const dir = mkdtempSync(path.join(os.tmpdir(), 'quire-mllp-load-'));
        try {
          const server = await startSystem(system, dir, o.quire);
          // Warm-up, not measured: a JIT's first compiles (V8 tiers up the npm package's wasm and
          // the peers' JavaScript as they run hot) and first allocations fall outside the run.
          if (o.warmup > 0) await runLoad({ port: server.port, rate: Math.min(rate, 1000), seconds: o.warmup, connections: o.connections, threads: o.threads, graceMs: 2000, prefix: `W${r}-` });
          const cpu0 = cpuSeconds(server.pid);
          let run;
          let cpu1 = null;
          try {
            run = await runLoad({ port: server.port, rate, seconds: o.seconds, connections: o.connections, threads: o.threads, graceMs: o.graceMs, prefix: `R${r}-` });
            cpu1 = cpuSeconds(server.pid);
          } finally {
            await server.stop();
          }
          runs.push(summarise(run, rate, cpu0 !== null && cpu1 !== null ? cpu1 - cpu0 : null, o.connections));
        } finally {
          rmSync(dir, { recursive: true, force: true });
        }
      }
      const fig = medianRun(runs);
      cases.push(caseOf(system, rate, o, fig, info));
      const l = fig.latency_us;
      process.stderr.write(
        `${system.padEnd(22)} ${String(rate).padStart(6)}/s  AA ${fig.aa}/${fig.sent}${fig.missing ? ` missing ${fig.missing}` : ''}${fig.ae + fig.ar ? ` AE ${fig.ae} AR ${fig.ar}` : ''}  ` +
          `p50 ${(l.p50 / 1000).toFixed(2)} p99 ${(l.p99 / 1000).toFixed(2)} p99.9 ${(l.p999 / 1000).toFixed(2)} max ${(l.max / 1000).toFixed(2)} ms  ` +
          `queue ${fig.queue.at_half}->${fig.queue.at_end}  cpu ${fig.server_cpu_us_per_msg ?? '—'} µs/msg  ${fig.held ? 'held' : 'NOT held'}\n`,
      );
      // Two in a row: one rate lost to a stall of the shared machine does not end a ladder.
      notHeld = fig.held ? 0 : notHeld + 1;
      if (notHeld >= o.stopAfter) break;
    }
  }
  const reading = {
    schema: 'quire-reading/1',
    target: 'loopback',
    runtime: { name: 'node', version: process.version, v8: process.versions.v8 },
    build: { ...(await gitInfo()), compiler: 'see native/wasm readings', flags: 'the quire CLI and npm package as built (make native, make js)' },
    machine: { cpu: os.cpus()[0]?.model ?? 'unknown', logical_cores: os.cpus().length, os: `${os.type()} ${os.release()}`, ...loadAverages(load0, os.loadavg()) },
    started_at: started,
    disk: { fsync_2kib_ms: [fsync0, await fsyncProbe()], where: os.tmpdir() },
    ladder: {
      command: `node bench/mllp-load.mjs ${argv.join(' ')}`.trim(),
      rule: 'held: every message AA exactly once, p99 <= 100 ms, outstanding at the end <= outstanding at half time + max(50 ms of the offered rate, 2 a connection)',
      p99_bound_ms: P99_BOUND_US / 1000,
      seconds: o.seconds,
      connections: o.connections,
      sender_threads: Math.min(o.threads, o.connections),
      repeats: o.repeats,
      grace_ms: o.graceMs,
      warmup_s: o.warmup,
      finished_at: new Date().toISOString(),
    },
    cases,
  };
  const text = `${JSON.stringify(reading, null, 1)}\n`;
  if (o.out) {
    const { writeFileSync, renameSync } = await import('node:fs');
    writeFileSync(`${o.out}.tmp-${process.pid}`, text);
    renameSync(`${o.out}.tmp-${process.pid}`, o.out);
    process.stderr.write(`wrote ${o.out} (${cases.length} cases)\n`);
  } else {
    process.stdout.write(text);
  }
  return 0;
}

if (!isMainThread) {
  await senderThread(workerData);
} else if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const argv = process.argv.slice(2);
  const serveAt = argv.indexOf('--serve');
  try {
    if (serveAt >= 0) {
      const storeAt = argv.indexOf('--store');
      await serve(argv[serveAt + 1], argv[storeAt + 1]);
    } else {
      process.exitCode = await main(argv);
    }
  } catch (e) {
    process.stderr.write(`mllp-load: ${e.message}\n`);
    process.exit(2);
  }
}
