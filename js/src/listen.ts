// hl7.listen: HL7 v2 over MLLP into a growing .quire store, in Node (docs/listen.md, "In Node").
// The same engine as `quire listen` (core's quire/listen.h, bound in wasm/bind_listen.cpp) frames,
// parses, stores and builds the ACKs; this module only moves bytes between node:net sockets and
// the engine, reads the clock, and decides when a group is committed. Node only: a browser has no
// sockets to listen on.
import type { Server, Socket } from 'node:net';
import type { EmbindHandle, ErrorRecord } from './quire.mjs';
import { QuireError } from './errors.js';
import { wasm, withInput } from './module.js';
import { nodeFs, type NodeFs } from './files.js';
import { fillRandom, NodeFileTarget, type TargetHooks } from './store.js';
import type { AckCode } from './hl7.js';

// --- the Embind functions this module binds (wasm/bind_listen.cpp) ---------------------------------

interface ListenSettings {
  maxFrameBytes: number;
  maxGroupRows: number;
  maxGroupBytes: number;
  ownerKey: Uint8Array;
  duplicateWindow: number;
  view: string;
}
interface AckRecord {
  connection: number;
  bytes: Uint8Array;
  code: AckCode;
  controlId: string;
}
interface ListenHandle extends EmbindHandle {
  open(settings: ListenSettings): ErrorRecord;
  allow(range: string): ErrorRecord;
  allows(address: string): boolean;
  feed(connection: number, pointer: number, length: number, receiveTimeUs: number): void;
  forget(connection: number): void;
  commit(): { error: ErrorRecord; acks?: AckRecord[] };
  queuedBytes(connection: number): number;
  totalQueuedBytes(): number;
  groupSize(): number;
  groupFull(): boolean;
  framesWaiting(): boolean;
  counters(): ListenCounters;
  close(): void;
}
interface ListenBindings {
  HEAPU8: Uint8Array;
  listenThrough(target: TargetHooks, hooks: { random(pointer: number, length: number): string }, viewTarget: TargetHooks | null): ListenHandle;
  listenViewPath(store: string, viewJson: string): { error: ErrorRecord; path?: string };
}

function bindings(): ListenBindings {
  return wasm('listen') as unknown as ListenBindings;
}

// --- public types ----------------------------------------------------------------------------------

/** What hl7.listen takes; bounds as `quire listen`'s options (docs/listen.md). */
export interface ListenOptions {
  /** TCP port; 0: any free port (address() tells which). */
  port: number;
  /** Address to listen on (default 127.0.0.1). */
  host?: string;
  /**
   * Peers that may send, as CIDR ranges (`['10.0.0.0/8', 'fd00::/8']`, as `--allow`): any other is
   * destroyed on connect, before a byte is read, and told to `onRefused`. Default: anyone who can reach `host`.
   */
  allow?: string[];
  /**
   * TLS (node:tls, Node's OpenSSL), as `--tls-cert`, `--tls-key` and `--tls-ca`: the server's
   * certificate chain and key (PEM); with `ca`, every client must present a certificate that CA
   * issued (mutual TLS), else its handshake fails. TLS 1.2 at least. A handshake not done in
   * `handshakeTimeoutMs` (default 10000) is dropped. A failed handshake is told to `onRefused`.
   */
  tls?: { cert: string | Uint8Array; key: string | Uint8Array; ca?: string | Uint8Array; handshakeTimeoutMs?: number };
  /** A peer was refused (outside `allow`, past `maxConnections`, a failed TLS handshake): its address and why. */
  onRefused?: (peer: string, reason: string) => void;
  /** The store's path: created when absent, continued when present. */
  store: string;
  /** The owner's key (32 bytes): the store is sealed; a sealed store cannot be continued without it. */
  key?: Uint8Array;
  /** A group is committed at most this many ms after it got its first message (default 5; 0: on the next turn of the event loop). */
  groupMs?: number;
  /** ... or as soon as it holds this many messages (default 1000). */
  groupMax?: number;
  /** ... or this many bytes of messages (default 16 MiB). */
  groupBytes?: number;
  /** A longer MLLP frame is dropped as it arrives and answered AR (default 1 MiB). */
  maxFrameBytes?: number;
  /** A connection past this many is closed at once (default 1024). */
  maxConnections?: number;
  /** Per connection: partial frame, waiting frames and unwritten ACKs; past it the socket is paused (default 4 MiB). */
  maxQueuedBytes?: number;
  /** The same over all connections plus the group; past it every socket is paused (default 256 MiB). */
  maxTotalQueuedBytes?: number;
  /** A connection quiet this long is closed (default 60000). */
  idleTimeoutMs?: number;
  /**
   * The duplicate check remembers the keys (MSH-3, MSH-4, MSH-10) of this many most recent stored
   * messages (default 1,000,000; at most ~48 MB); an older resend is stored again.
   */
  duplicateWindow?: number;
  /**
   * A view (docs/listen.md, "Views"): each stored message also becomes a row of a second table,
   * `{ name, column: [{ name, path: 'PID-5.1', type?: 'string' | 'integer' | 'decimal' | 'date' | 'timestamp' | 'boolean' }] }`
   * (an object, or its JSON text).
   */
  view?: MessageView | string;
  /** The view's table (default beside the store: `adt.quire` and the view `patients` give `adt.patients.quire`). */
  viewStore?: string;
  /** The receive time, µs since 1970 (default the system clock): MSH-7 of the ACKs and the rows' receive_time. */
  clock?: () => number;
  /** A commit failed: no ACK of its group was sent, and the listener closed itself (as `quire listen` exits 1). */
  onError?: (error: unknown) => void;
}

/** A view of stored messages (`quire listen --view`): a row a message, a column an HL7 v2 path. */
export interface MessageView {
  name: string;
  description?: string;
  column: { name: string; path: string; type?: 'string' | 'integer' | 'decimal' | 'date' | 'timestamp' | 'boolean'; description?: string }[];
}

/** What the listener has done since it opened (core's listen::counters). */
export interface ListenCounters {
  frames: number;
  stored: number;
  duplicates: number;
  errors: number;
  rejected: number;
  commits: number;
  failedCommits: number;
  rowsAtOpen: number;
  /** View rows derived at open from stored messages the view's table lacked. */
  viewRowsCaughtUp: number;
}

/** Where a listener listens (node:net's AddressInfo). */
export interface ListenAddress {
  address: string;
  family: string;
  port: number;
}

// --- the store's file is store.ts's NodeFileTarget; random bytes from its fillRandom ---------------------

function randomHook(pointer: number, length: number): string {
  try {
    fillRandom(bindings().HEAPU8.subarray(pointer, pointer + length));
    return '';
  } catch (e) {
    return e instanceof Error ? e.message : String(e);
  }
}

function peerOf(socket: Socket): string {
  const a = socket.remoteAddress ?? '';
  return a.includes(':') ? `[${a}]:${socket.remotePort ?? ''}` : `${a}:${socket.remotePort ?? ''}`;
}

function systemClockUs(): number {
  return Math.round((performance.timeOrigin + performance.now()) * 1000);
}

function bound(name: string, value: number | undefined, fallback: number, min = 1): number {
  if (value === undefined) return fallback;
  if (!Number.isSafeInteger(value) || value < min) throw new RangeError(`quire: hl7.listen ${name} must be an integer >= ${min}`);
  return value;
}

// --- the listener ------------------------------------------------------------------------------------

type Settings = Required<Omit<ListenOptions, 'key' | 'onError' | 'onRefused' | 'host' | 'allow' | 'tls' | 'duplicateWindow' | 'view' | 'viewStore'>> & {
  onError?: (e: unknown) => void;
  onRefused?: (peer: string, reason: string) => void;
};

interface Connection {
  socket: Socket;
  paused: boolean;
}

/** A running listener (hl7.listen). close() it: it commits the group it holds and sends its ACKs. */
export class Hl7Listener {
  readonly #server: Server;
  readonly #engine: ListenHandle;
  readonly #files: NodeFileTarget[];
  readonly #o: Settings;
  readonly #conns = new Map<number, Connection>();
  #nextId = 1;
  #timer: ReturnType<typeof setTimeout> | undefined;
  #closing: Promise<void> | undefined;
  #error: unknown;
  #final: ListenCounters | undefined;

  /** @internal */
  constructor(server: Server, engine: ListenHandle, files: NodeFileTarget[], o: Settings, tlsOn: boolean) {
    this.#server = server;
    this.#engine = engine;
    this.#files = files;
    this.#o = o;
    // Plain: each connection is taken as it comes. TLS: the raw connection is checked against
    // `allow` before its handshake; the connection is taken once the handshake succeeded.
    server.on('connection', (s: Socket) => {
      if (this.#refused(s)) return;
      if (!tlsOn) this.#accept(s);
    });
    if (tlsOn) {
      server.on('secureConnection', (s: Socket) => this.#accept(s));
      server.on('tlsClientError', (e: Error, s: Socket) => {
        s.destroy();
        this.#o.onRefused?.(peerOf(s), `TLS handshake failed: ${e.message}`);
      });
    }
  }

  /** Where it listens ({ address, family, port }). */
  address(): ListenAddress {
    return this.#server.address() as ListenAddress;
  }

  /** The engine's counters. */
  counters(): ListenCounters {
    return this.#final ? { ...this.#final } : { ...this.#engine.counters() };
  }

  /** The error of a failed commit (the listener then closed itself), or undefined. */
  get error(): unknown {
    return this.#error;
  }

  /**
   * Stops accepting, commits the group, writes its ACKs (giving them up to a second to leave),
   * closes the connections and the store's file.
   */
  close(): Promise<void> {
    this.#closing ??= this.#shutdown();
    return this.#closing;
  }

  async #shutdown(): Promise<void> {
    const stopped = new Promise<void>((resolve) => this.#server.close(() => resolve()));
    if (this.#timer !== undefined) clearTimeout(this.#timer);
    this.#timer = undefined;
    if (this.#error === undefined) {
      this.#commit(false);
      while (this.#error === undefined && this.#engine.groupSize() > 0) this.#commit(false);
    }
    const ended = [...this.#conns.values()].map(
      (c) =>
        new Promise<void>((resolve) => {
          c.socket.once('close', () => resolve());
          c.socket.end();
        }),
    );
    const late = setTimeout(() => {
      for (const c of this.#conns.values()) c.socket.destroy();
    }, 1000);
    await Promise.all(ended);
    clearTimeout(late);
    await stopped;
    this.#final = this.counters();
    this.#engine.close();
    this.#engine.delete();
    for (const f of this.#files) f.close();
  }

  /** Destroys a connection that may not send (closing, outside `allow`): true when it did. */
  #refused(socket: Socket): boolean {
    if (this.#closing) {
      socket.destroy();
      return true;
    }
    if (this.#engine.allows(socket.remoteAddress ?? '')) return false;
    socket.destroy();
    this.#o.onRefused?.(peerOf(socket), 'not in allow');
    return true;
  }

  #accept(socket: Socket): void {
    if (this.#closing) {
      socket.destroy();
      return;
    }
    if (this.#conns.size >= this.#o.maxConnections) {
      socket.destroy();
      this.#o.onRefused?.(peerOf(socket), `maxConnections ${this.#o.maxConnections} reached`);
      return;
    }
    const id = this.#nextId++;
    const c: Connection = { socket, paused: false };
    this.#conns.set(id, c);
    socket.setNoDelay(true);
    socket.setTimeout(this.#o.idleTimeoutMs, () => socket.destroy());
    socket.on('data', (chunk: Uint8Array) => this.#read(id, chunk));
    socket.on('drain', () => this.#pace());
    socket.on('error', () => {}); // 'close' follows
    socket.on('close', () => {
      this.#conns.delete(id);
      if (!this.#closing || this.#error !== undefined) this.#engine.forget(id);
      this.#pace();
    });
  }

  #read(id: number, chunk: Uint8Array): void {
    if (this.#error !== undefined || this.#closing) return;
    const at = this.#o.clock();
    withInput(chunk, (pointer, length) => this.#engine.feed(id, pointer, length, at));
    if (this.#engine.groupFull()) this.#commit(true);
    else if (this.#engine.groupSize() > 0) this.#schedule();
    this.#pace();
  }

  #schedule(): void {
    if (this.#timer !== undefined || this.#closing) return;
    this.#timer = setTimeout(() => {
      this.#timer = undefined;
      this.#commit(true);
    }, this.#o.groupMs);
  }

  /** One commit (it syncs the file), then its ACKs to their sockets. */
  #commit(schedule: boolean): void {
    if (this.#timer !== undefined) clearTimeout(this.#timer);
    this.#timer = undefined;
    if (this.#engine.groupSize() === 0) return;
    const r = this.#engine.commit();
    if (r.error.code) {
      // As `quire listen` exits 1: nothing of the group is acknowledged; the senders resend.
      this.#error = QuireError.fromRecord(r.error);
      for (const c of this.#conns.values()) c.socket.destroy();
      void this.close();
      this.#o.onError?.(this.#error);
      return;
    }
    for (const a of r.acks ?? []) {
      const c = this.#conns.get(a.connection);
      if (c && !c.socket.destroyed) c.socket.write(a.bytes);
    }
    if (schedule && this.#engine.groupSize() > 0) {
      if (this.#engine.groupFull()) setImmediate(() => this.#commit(true));
      else this.#schedule();
    }
    this.#pace();
  }

  /** Pauses a socket over its bound (or every one over the total), resumes the rest. */
  #pace(): void {
    const total = this.#engine.totalQueuedBytes() > this.#o.maxTotalQueuedBytes;
    const full = this.#engine.framesWaiting() && this.#engine.groupFull();
    for (const [id, c] of this.#conns) {
      const over = total || full || this.#engine.queuedBytes(id) + c.socket.writableLength > this.#o.maxQueuedBytes;
      if (over && !c.paused) c.socket.pause();
      else if (!over && c.paused) c.socket.resume();
      c.paused = over;
    }
  }
}

/**
 * Node: takes HL7 v2 messages over MLLP on `host:port` and stores each as a row of the growing
 * .quire file `store`, acknowledging each only once its commit is durable — the engine of `quire
 * listen`, with the same rows and ACK bytes. Resolves once it listens. Throws QuireError for a
 * store it cannot open (KEY_REQUIRED, WRONG_KEY, INVALID_ARGUMENT: not a listener's store).
 */
export async function listen(options: ListenOptions): Promise<Hl7Listener> {
  const get = (globalThis as { process?: { getBuiltinModule?: (id: string) => unknown } }).process?.getBuiltinModule;
  if (!get) throw new Error('quire: hl7.listen needs Node.js 20.16 or newer (a browser has no sockets to listen on)');
  const net = get('node:net') as typeof import('node:net');
  if (typeof options?.store !== 'string' || options.store === '') throw new TypeError('quire: hl7.listen needs store: a path');
  const port = bound('port', options.port, -1, 0);
  if (port > 65535) throw new RangeError('quire: hl7.listen port must be 0..65535');
  if (options.key !== undefined && (!(options.key instanceof Uint8Array) || options.key.length !== 32)) throw new TypeError('quire: hl7.listen key must be 32 bytes');
  const o = {
    port,
    store: options.store,
    groupMs: bound('groupMs', options.groupMs, 5, 0),
    groupMax: bound('groupMax', options.groupMax, 1000),
    groupBytes: bound('groupBytes', options.groupBytes, 16 << 20),
    maxFrameBytes: bound('maxFrameBytes', options.maxFrameBytes, 1 << 20),
    maxConnections: bound('maxConnections', options.maxConnections, 1024),
    maxQueuedBytes: bound('maxQueuedBytes', options.maxQueuedBytes, 4 << 20),
    maxTotalQueuedBytes: bound('maxTotalQueuedBytes', options.maxTotalQueuedBytes, 256 << 20),
    idleTimeoutMs: bound('idleTimeoutMs', options.idleTimeoutMs, 60000),
    clock: options.clock ?? systemClockUs,
    onError: options.onError,
    onRefused: options.onRefused,
  };
  if (options.allow !== undefined && !(Array.isArray(options.allow) && options.allow.every((a) => typeof a === 'string')))
    throw new TypeError('quire: hl7.listen allow must be an array of CIDR strings');
  const exists = (path: string) => (nodeFs() as NodeFs & { existsSync(path: string): boolean }).existsSync(path);
  let viewJson = '';
  let viewPath: string | undefined;
  if (options.view !== undefined) {
    viewJson = typeof options.view === 'string' ? options.view : JSON.stringify(options.view);
    const where = bindings().listenViewPath(o.store, viewJson);
    if (where.error.code) throw QuireError.fromRecord(where.error);
    viewPath = options.viewStore ?? (where.path as string);
    if (viewPath === o.store) throw new TypeError('quire: hl7.listen viewStore must be another file than store');
  } else if (options.viewStore !== undefined) {
    throw new TypeError('quire: hl7.listen viewStore needs view');
  }
  // Made first: node:tls refuses a certificate or key it cannot use here, before any file is opened.
  let server: Server;
  const t = options.tls;
  if (t) {
    const tls = get('node:tls') as typeof import('node:tls');
    // node:tls takes any ArrayBufferView where its types say Buffer.
    type Pem = string | Buffer;
    server = tls.createServer({
      cert: t.cert as Pem,
      key: t.key as Pem,
      ca: t.ca as Pem | undefined,
      requestCert: t.ca !== undefined,
      rejectUnauthorized: t.ca !== undefined,
      minVersion: 'TLSv1.2',
      handshakeTimeout: bound('tls.handshakeTimeoutMs', t.handshakeTimeoutMs, 10000),
    });
  } else {
    server = net.createServer({ pauseOnConnect: false });
  }
  const duplicateWindow = bound('duplicateWindow', options.duplicateWindow, 0);
  // Each file: created in place when absent (removed again if the engine refuses it), else continued.
  const files: { target: NodeFileTarget; created: boolean }[] = [];
  for (const path of viewPath === undefined ? [o.store] : [o.store, viewPath]) {
    const created = !exists(path);
    files.push({ target: new NodeFileTarget(path, created ? 'wx+' : 'r+'), created });
  }
  const engine = bindings().listenThrough(files[0].target, { random: randomHook }, files[1]?.target ?? null);
  const refused =
    (options.allow ?? []).map((a) => engine.allow(a)).find((r) => r.code) ??
    engine.open({
      maxFrameBytes: o.maxFrameBytes,
      maxGroupRows: o.groupMax,
      maxGroupBytes: o.groupBytes,
      ownerKey: options.key ?? new Uint8Array(0),
      duplicateWindow,
      view: viewJson,
    });
  if (refused.code) {
    engine.delete();
    for (const f of files) {
      if (f.created) f.target.remove();
      else f.target.close();
    }
    throw QuireError.fromRecord(refused);
  }
  const listener = new Hl7Listener(
    server,
    engine,
    files.map((f) => f.target),
    o,
    t !== undefined,
  );
  try {
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(port, options.host ?? '127.0.0.1', () => {
        server.off('error', reject);
        resolve();
      });
    });
  } catch (e) {
    await listener.close();
    throw e;
  }
  return listener;
}
