// Growing and sealed .quire files (version 2, core's quire/store.h): written by format.write with
// `store: true`, changed by commits through format.store — in wasm memory, or in Node on a file
// (a thin append target over node:fs). Core does the work; this module hands it random bytes
// (crypto.getRandomValues), the caller's partition keys, and the file's bytes.
import type { EmbindHandle, ErrorRecord } from './quire.mjs';
import { QuireError } from './errors.js';
import { Handle } from './handles.js';
import { INTERNAL, checkInternal } from './internal.js';
import { wasm, withInput, type Input } from './module.js';
import { nodeFs, type NodeFs } from './files.js';
import { format, nodeFileReader, writeOptionsJson, type ColumnDef, type FileInfo, type IndexKind, type OpenOptions, type QuireFile, type RangeReader, type Where, type WriteOptions } from './format.js';

// --- the Embind functions this module binds (wasm/bind_store.cpp) ---------------------------------

interface StoreSettings {
  writeOptions: string;
  partitionBy: string;
  ownerKey: Uint8Array;
  ownerPassphrase: string;
  kdfPasses: number;
  kdfMemoryBytes: number;
}
interface CommitRecord {
  error: ErrorRecord;
  commit: number;
  rows: number;
  segmentsWritten: number;
  bytesBefore: number;
  bytesAfter: number;
}
interface TextRecord {
  error: ErrorRecord;
  text: string;
}
/** What core calls back into: random bytes and the partitions' keys (bind_store.cpp). */
interface StoreHooks {
  random(pointer: number, length: number): string;
  findKey(value: string, isNull: boolean): Uint8Array | string | null;
  keepKey(value: string, isNull: boolean, pointer: number): string;
}
/** A file core changes in JavaScript's hands (bind_targets.h js_target). @internal (the listener's store too) */
export interface TargetHooks {
  size(): number;
  read(offset: number, length: number, pointer: number): number;
  append(pointer: number, length: number): string;
  sync(): string;
  truncate(size: number): string;
}
interface StoreFileHandle extends EmbindHandle {
  load(pointer: number, length: number): void;
  pointer(): number;
  size(): number;
  create(pointer: number, length: number, settings: StoreSettings, hooks: StoreHooks): CommitRecord;
  append(pointer: number, length: number, settings: StoreSettings, hooks: StoreHooks): CommitRecord;
  remove(whereJson: string, settings: StoreSettings, hooks: StoreHooks): CommitRecord;
  update(whereJson: string, column: string, valueText: string, settings: StoreSettings, hooks: StoreHooks): CommitRecord;
  compactInto(fresh: StoreFileHandle, settings: StoreSettings, hooks: StoreHooks): CommitRecord;
  resealInto(fresh: StoreFileHandle, settings: StoreSettings, hooks: StoreHooks, one: boolean, value: string, isNull: boolean): CommitRecord;
  rotate(settings: StoreSettings, hooks: StoreHooks, newKey: Uint8Array, newPassphrase: string): CommitRecord;
  storage(settings: StoreSettings): TextRecord;
  info(settings: StoreSettings): TextRecord;
}
interface StoreBindings {
  HEAPU8: Uint8Array;
  storeInMemory(): StoreFileHandle;
  storeThrough(target: TargetHooks): StoreFileHandle;
  storeStorageOfBytes(pointer: number, length: number, key: Uint8Array, passphrase: string): TextRecord;
  storeStorageOfReader(size: number, reader: { read(offset: number, length: number, pointer: number): number }, key: Uint8Array, passphrase: string): TextRecord;
}

function bindings(): StoreBindings {
  return wasm('store') as unknown as StoreBindings;
}

// --- public types ----------------------------------------------------------------------------------

/** The bytes of a key: a key file's 32 bytes. */
export type Key = Uint8Array;

/**
 * The keys of a sealed, partitioned file's partitions, by partition value (its text, as the
 * CLI's key files are named; `null` for the null value): a Map, a plain object (no null value),
 * or a function. A partition without a key gets a new one, handed back (StoreCommit.newKeys and
 * `onNewKey`). Only new partitions are asked for: the owner's key unwraps the others.
 */
export type PartitionKeys = Map<string | null, Key> | Record<string, Key> | ((value: string | null) => Key | null | undefined);

/** Who changes a store: the owner (its key or passphrase), and where new partition keys come from and go. */
export interface StoreOptions {
  /** The owner's key (32 bytes): reads every partition, and is the only one who writes. */
  ownerKey?: Key;
  /** The owner's passphrase (Argon2id), instead of ownerKey. */
  ownerPassphrase?: string;
  /** Keys for new partitions, found by value; absent ones are made. */
  partitionKeys?: PartitionKeys;
  /** Called with each key the store makes for a new partition, before the commit is written (throw to stop it). Keep the key: it is the only way for that partition's reader in. */
  onNewKey?: (value: string | null, key: Key) => void;
}

/** Argon2id's work for an owner's passphrase (default 3 passes over 64 MiB, as the CLI writes). */
export interface KdfCost {
  passes?: number;
  memoryBytes?: number;
}

/**
 * format.write's options with `store: true`: a version-2 file that can grow (format.store),
 * partitioned by a column (one segment per partition and commit) and sealed when an owner's key
 * or passphrase is given (a sealed, partitioned file seals each partition under its own key:
 * give partitionKeys or onNewKey, or those keys are lost).
 */
export interface StoreWriteOptions extends WriteOptions, StoreOptions {
  store: true;
  partitionBy?: string;
  kdfCost?: KdfCost;
}

/** What one commit wrote. */
export interface StoreCommit {
  commit: number;
  /** Rows added (create, append, update, compact) or deleted (delete). */
  rows: number;
  segmentsWritten: number;
  bytesBefore: number;
  bytesAfter: number;
  /** Keys made for new partitions in this commit, by value (null: the null value). */
  newKeys: Map<string | null, Key>;
}

/** Where a version-2 file's bytes go (`quire inspect --storage`). */
export interface StoreStorage {
  bytes: number;
  commits: number;
  liveBytes: number;
  garbageBytes: number;
  partitions: number;
  segments: number;
  rows: number;
  deletedRows: number;
  mapBytes: number;
  /** The partitions' directory pages. */
  directoryBytes: number;
  footerBytes: number;
  /** The meta page (schema, partition column, write options). */
  metaBytes: number;
  /** Live deletion vectors. */
  deletionBytes: number;
  /** Each live segment's 8-byte header, footer and 24-byte tail. */
  segmentFrameBytes: number;
  /**
   * Bytes by column (data pages with dictionaries; page and column directories) and by index
   * (roots, leaves, Bloom filters), over the live segments. With the others they add up to the
   * file: bytes = 32 + columns + indexes + segmentFrameBytes + deletionBytes + directoryBytes +
   * mapBytes + metaBytes + footerBytes + 48 + garbageBytes.
   */
  columns: { name: string; dataBytes: number; directoryBytes: number }[];
  indexes: { column: string; kind: IndexKind; bytes: number }[];
  /** Segments a query of one partition touches on average. */
  segmentsPerPartition: number;
  /** ...and for the partition with the most. */
  maxSegmentsPerPartition: number;
  /** Whether compacting would help (deleted rows, garbage, many segments). */
  compactionPays: boolean;
  /** The owner's view; a partition's key sees its own. */
  byPartition: { value: string | null; rows: number; deletedRows: number; segments: number; bytes: number }[];
}

/** A new owner for rotateOwnerKey: a key (32 bytes) or a passphrase. */
export type NewOwner = Key | { key: Key } | { passphrase: string };

// --- random bytes and keys ---------------------------------------------------------------------------

/** crypto.getRandomValues fills at most 65536 bytes a call. @internal (the listener uses it too) */
export function fillRandom(out: Uint8Array): void {
  const c = (globalThis as { crypto?: { getRandomValues(a: Uint8Array): Uint8Array } }).crypto;
  if (!c?.getRandomValues) throw new Error('quire: sealed files need crypto.getRandomValues (Node 20, every browser)');
  for (let at = 0; at < out.length; at += 65536) c.getRandomValues(out.subarray(at, Math.min(out.length, at + 65536)));
}

/** A new random 256-bit key (crypto.getRandomValues), as `quire keygen` writes to a key file. */
export function keygen(): Key {
  const k = new Uint8Array(32);
  fillRandom(k);
  return k;
}

function lookUp(keys: PartitionKeys | undefined, value: string | null): Key | null | undefined {
  if (keys === undefined) return undefined;
  if (typeof keys === 'function') return keys(value);
  if (keys instanceof Map) return keys.get(value);
  return value === null ? undefined : Object.prototype.hasOwnProperty.call(keys, value) ? keys[value] : undefined;
}

/** One call's hooks; an exception of the caller's callbacks is kept and thrown after the call returns. */
class CallHooks implements StoreHooks {
  readonly newKeys = new Map<string | null, Key>();
  thrown: { error: unknown } | undefined;

  constructor(private readonly options: StoreOptions) {}

  random(pointer: number, length: number): string {
    try {
      fillRandom(bindings().HEAPU8.subarray(pointer, pointer + length));
      return '';
    } catch (e) {
      return this.#keep(e);
    }
  }

  findKey(value: string, isNull: boolean): Uint8Array | string | null {
    try {
      const k = lookUp(this.options.partitionKeys, isNull ? null : value);
      if (k === undefined || k === null) return null;
      if (!(k instanceof Uint8Array)) throw new TypeError(`quire: the key of partition ${JSON.stringify(isNull ? null : value)} is not a Uint8Array`);
      return k;
    } catch (e) {
      return this.#keep(e);
    }
  }

  keepKey(value: string, isNull: boolean, pointer: number): string {
    try {
      const key = bindings().HEAPU8.slice(pointer, pointer + 32);
      this.newKeys.set(isNull ? null : value, key);
      this.options.onNewKey?.(isNull ? null : value, key);
      return '';
    } catch (e) {
      return this.#keep(e);
    }
  }

  /** The result of a commit, or the caller's exception, or core's QuireError. */
  commit(r: CommitRecord): StoreCommit {
    this.rethrow();
    if (r.error.code) throw QuireError.fromRecord(r.error);
    return { commit: r.commit, rows: r.rows, segmentsWritten: r.segmentsWritten, bytesBefore: r.bytesBefore, bytesAfter: r.bytesAfter, newKeys: this.newKeys };
  }

  rethrow(): void {
    if (this.thrown) throw this.thrown.error;
  }

  #keep(e: unknown): string {
    this.thrown ??= { error: e };
    return e instanceof Error ? e.message : String(e);
  }
}

function checkKeyOptions(o: StoreOptions): void {
  if (o === null || typeof o !== 'object') throw new TypeError('quire: store options are an object { ownerKey?, ownerPassphrase?, partitionKeys?, onNewKey? }');
  if (o.ownerKey !== undefined && !(o.ownerKey instanceof Uint8Array)) throw new TypeError("quire: ownerKey is a Uint8Array of 32 bytes (a key file's bytes)");
  if (o.ownerPassphrase !== undefined && typeof o.ownerPassphrase !== 'string') throw new TypeError('quire: ownerPassphrase is a string');
  // Core reads an empty key or passphrase as none: the file would be written plain.
  if (o.ownerKey?.length === 0) throw new TypeError('quire: ownerKey is empty (a key is 32 bytes: format.keygen())');
  if (o.ownerPassphrase === '') throw new TypeError('quire: ownerPassphrase is empty');
  if (o.ownerKey !== undefined && o.ownerPassphrase !== undefined) throw new TypeError('quire: give ownerKey or ownerPassphrase, not both');
  if (o.onNewKey !== undefined && typeof o.onNewKey !== 'function') throw new TypeError('quire: onNewKey is a function (value, key) => void');
}

function settings(o: StoreOptions, extra: { writeOptions?: string; partitionBy?: string; kdfCost?: KdfCost } = {}): StoreSettings {
  return {
    writeOptions: extra.writeOptions ?? '',
    partitionBy: extra.partitionBy ?? '',
    ownerKey: o.ownerKey ?? new Uint8Array(0),
    ownerPassphrase: o.ownerPassphrase ?? '',
    kdfPasses: extra.kdfCost?.passes ?? 0,
    kdfMemoryBytes: extra.kdfCost?.memoryBytes ?? 0,
  };
}

function memoryBytes(h: StoreFileHandle): Uint8Array {
  const pointer = h.pointer();
  return bindings().HEAPU8.slice(pointer, pointer + h.size());
}

/** @internal format.write with `store: true`: the table is written as version 1 in memory, then made a store (as `quire convert --store` does). */
export function writeStoreBytes(input: readonly object[] | Input, options: StoreWriteOptions): Uint8Array {
  checkKeyOptions(options);
  const { store: _store, partitionBy, ownerKey: _k, ownerPassphrase: _p, partitionKeys: _pk, onNewKey: _n, kdfCost, ...write } = options;
  const sealed = options.ownerKey !== undefined || options.ownerPassphrase !== undefined;
  if (sealed && partitionBy && !options.partitionKeys && !options.onNewKey) {
    throw new TypeError('quire: a sealed, partitioned file seals each partition under its own key: give partitionKeys or onNewKey to keep them (or use format.store(...).append, whose commits return newKeys)');
  }
  const table = format.write(input, write);
  const h = bindings().storeInMemory();
  try {
    const hooks = new CallHooks(options);
    const r = withInput(table, (pointer, length) => h.create(pointer, length, settings(options, { writeOptions: writeOptionsJson(write), partitionBy, kdfCost }), hooks));
    hooks.commit(r);
    return memoryBytes(h);
  } finally {
    h.delete();
  }
}

// --- a Node file as an append target --------------------------------------------------------------------

type StoreFs = NodeFs & {
  writeSync(fd: number, buffer: Uint8Array, offset: number, length: number, position: number): number;
  fsyncSync(fd: number): void;
  ftruncateSync(fd: number, size: number): void;
  readFileSync(path: string): Uint8Array;
};

/** A Node file core reads anywhere and appends to (positional writes at its end), fsyncs and truncates. No lock: one writer at a time is the caller's to ensure. @internal (the listener's store too) */
export class NodeFileTarget implements TargetHooks {
  readonly #fs: StoreFs;
  #fd: number;
  #size: number;

  constructor(readonly path: string, flags: 'r+' | 'wx+') {
    this.#fs = nodeFs() as StoreFs;
    this.#fd = this.#fs.openSync(path, flags);
    this.#size = this.#fs.fstatSync(this.#fd).size;
  }

  size(): number {
    return this.#size;
  }
  read(offset: number, length: number, pointer: number): number {
    const into = bindings().HEAPU8.subarray(pointer, pointer + length);
    let done = 0;
    try {
      while (done < length) {
        const n = this.#fs.readSync(this.#fd, into, done, length - done, offset + done);
        if (n <= 0) break;
        done += n;
      }
    } catch {
      return -1;
    }
    return done;
  }
  append(pointer: number, length: number): string {
    return this.#io(() => {
      const from = bindings().HEAPU8.subarray(pointer, pointer + length);
      for (let done = 0; done < length; ) {
        const n = this.#fs.writeSync(this.#fd, from, done, length - done, this.#size);
        done += n;
        this.#size += n;
      }
    });
  }
  sync(): string {
    return this.#io(() => this.#fs.fsyncSync(this.#fd));
  }
  truncate(size: number): string {
    return this.#io(() => {
      this.#fs.ftruncateSync(this.#fd, size);
      this.#size = size;
    });
  }

  /** After a compaction renamed a new file over this one: the descriptor follows the path. */
  reopen(): void {
    this.close();
    this.#fd = this.#fs.openSync(this.path, 'r+');
    this.#size = this.#fs.fstatSync(this.#fd).size;
  }
  close(): void {
    if (this.#fd >= 0) this.#fs.closeSync(this.#fd);
    this.#fd = -1;
  }
  /** Closes and deletes the file (one this process created and the engine refused). */
  remove(): void {
    this.close();
    this.#fs.rmSync(this.path, { force: true });
  }

  #io(work: () => void): string {
    try {
      work();
      return '';
    } catch (e) {
      return `${this.path}: ${e instanceof Error ? e.message : String(e)}`;
    }
  }
}

// --- the handle ------------------------------------------------------------------------------------------

/**
 * A version-2 .quire file being changed (format.store): in memory, or in Node a file on disk.
 * Each change is one commit (a crash leaves the file at its last whole commit; the next change
 * cuts the rest). close() it when done (a finalizer frees the memory otherwise; the file
 * descriptor only by close()).
 */
export class QuireStore extends Handle<StoreFileHandle> {
  #options: StoreOptions;
  readonly #file: NodeFileTarget | undefined;

  /** @internal */
  constructor(token: typeof INTERNAL, handle: StoreFileHandle, options: StoreOptions, file?: NodeFileTarget) {
    checkInternal(token, 'QuireStore', 'format.store()');
    super(handle, 'QuireStore');
    this.#options = options;
    this.#file = file;
  }

  /** The file's path (Node), or undefined in memory. */
  get path(): string | undefined {
    return this.#file?.path;
  }

  /** The file's bytes now: a copy of the memory file, or in Node the file read whole. */
  bytes(): Uint8Array {
    if (this.#file) return new Uint8Array((nodeFs() as StoreFs).readFileSync(this.#file.path));
    return memoryBytes(this.handle);
  }

  /** Opens the file as it is now for reading, with the owner's key (close() the QuireFile). */
  open(): QuireFile {
    const keys = { key: this.#options.ownerKey, passphrase: this.#options.ownerPassphrase };
    return this.#file ? format.open(this.#file.path, keys) : format.open(this.bytes(), keys);
  }

  /** What the file is now (FileInfo, as the owner sees it). */
  info(): FileInfo {
    const f = this.open();
    try {
      return f.info;
    } finally {
      f.close();
    }
  }

  /**
   * Appends rows as one commit: an array of objects, or CSV / NDJSON text (or its UTF-8 bytes;
   * `from` as for format.write), read with the file's schema (a value that does not fit is
   * SCHEMA_MISMATCH). A new partition's key comes from partitionKeys or is made (newKeys).
   */
  append(rows: readonly object[] | Input, options: { from?: 'rows' | 'csv' | 'ndjson' } = {}): StoreCommit {
    const h = this.handle;
    const schema = this.#schema();
    const table = format.write(rows, { from: options.from, schema });
    return this.#commit((hooks, s) => withInput(table, (pointer, length) => h.append(pointer, length, s, hooks)));
  }

  /** Deletes the rows `where` selects (deletion vectors: nothing is rewritten); `rows` is how many. */
  delete(where: Where): StoreCommit {
    const h = this.handle;
    const w = whereJson(where, 'delete');
    return this.#commit((hooks, s) => h.remove(w, s, hooks));
  }

  /**
   * Sets `column` to `value` in the rows `where` selects (their old versions deleted, the new
   * appended: one commit). A string is read as the column's type ("2024-01-31", "12.50");
   * null is null.
   */
  update(where: Where, column: string, value: string | number | boolean | null): StoreCommit {
    const h = this.handle;
    const w = whereJson(where, 'update');
    if (typeof column !== 'string') throw new TypeError('quire: update(where, column, value) takes the column by name');
    if (value !== null && !['string', 'number', 'boolean'].includes(typeof value)) throw new TypeError('quire: update sets a string, number, boolean or null');
    const text = value === null ? 'null' : String(value);
    return this.#commit((hooks, s) => h.update(w, column, text, s, hooks));
  }

  /** Rewrites the live rows as one segment per partition, without deleted rows or garbage (every key still opens it). In Node the new file is written beside the old one, then renamed over it. */
  compact(): StoreCommit {
    const h = this.handle;
    return this.#replace('compact', (fresh) => this.#commit((hooks, s) => h.compactInto(fresh, s, hooks)));
  }

  /**
   * Seals every page again under new random data keys (`partition`: that partition's pages only;
   * null names the null value), without decompressing or decoding them, so a holder of an old
   * data key opens nothing in the new file; every partition's key still opens its partition. A
   * partitioned file needs partitionKeys holding each re-sealed partition's key (INVALID_ARGUMENT
   * without). As compact(), the new file replaces the old one (in Node: written beside it, then
   * renamed over it); old commits are not carried over. `rows` is the rows re-sealed.
   */
  reseal(options: { partition?: string | null } = {}): StoreCommit {
    const h = this.handle;
    if (options === null || typeof options !== 'object') throw new TypeError('quire: reseal takes { partition }');
    const one = 'partition' in options && options.partition !== undefined;
    const value = one ? options.partition : '';
    if (value !== null && typeof value !== 'string') throw new TypeError('quire: reseal\'s partition is a value\'s text or null');
    return this.#replace('reseal', (fresh) => this.#commit((hooks, s) => h.resealInto(fresh, s, hooks, one, value ?? '', value === null)));
  }

  /** Runs `write` into a new empty file, then puts it in this one's place (Node: renamed over it). */
  #replace(what: string, write: (fresh: StoreFileHandle) => StoreCommit): StoreCommit {
    const h = this.handle;
    const m = bindings();
    if (!this.#file) {
      const fresh = m.storeInMemory();
      try {
        const r = write(fresh);
        h.load(fresh.pointer(), fresh.size());
        return r;
      } finally {
        fresh.delete();
      }
    }
    const fs = nodeFs() as StoreFs;
    const temp = `${this.#file.path}.${what}-${process.pid}`;
    fs.rmSync(temp, { force: true });
    const target = new NodeFileTarget(temp, 'wx+');
    const fresh = m.storeThrough(target);
    let renamed = false;
    try {
      const r = write(fresh);
      target.close();
      fs.renameSync(temp, this.#file.path);
      renamed = true;
      this.#file.reopen();
      return r;
    } finally {
      fresh.delete();
      target.close();
      if (!renamed) fs.rmSync(temp, { force: true });
    }
  }

  /** Re-wraps every data key under a new owner key or passphrase (no page is rewritten); this handle then writes with the new one. */
  rotateOwnerKey(next: NewOwner): StoreCommit {
    const h = this.handle;
    const key = next instanceof Uint8Array ? next : (next as { key?: Key }).key;
    const passphrase = next instanceof Uint8Array ? undefined : (next as { passphrase?: string }).passphrase;
    if ((key === undefined) === (passphrase === undefined)) throw new TypeError('quire: rotateOwnerKey takes a new key (Uint8Array) or { passphrase }');
    if (key !== undefined && !(key instanceof Uint8Array)) throw new TypeError('quire: a key is a Uint8Array of 32 bytes');
    if (passphrase !== undefined && typeof passphrase !== 'string') throw new TypeError('quire: a passphrase is a string');
    const r = this.#commit((hooks, s) => h.rotate(s, hooks, key ?? new Uint8Array(0), passphrase ?? ''));
    this.#options = { ...this.#options, ownerKey: key, ownerPassphrase: passphrase };
    return r;
  }

  /** Where the bytes go: commits, partitions, segments, garbage, and whether compacting pays. */
  storage(): StoreStorage {
    const r = this.handle.storage(settings(this.#options));
    if (r.error.code) throw QuireError.fromRecord(r.error);
    return JSON.parse(r.text) as StoreStorage;
  }

  override close(): void {
    if (this.closed) return;
    super.close();
    this.#file?.close();
  }

  #schema(): ColumnDef[] {
    const r = this.handle.info(settings(this.#options));
    if (r.error.code) throw QuireError.fromRecord(r.error);
    return (JSON.parse(r.text) as FileInfo).columns;
  }

  #commit(run: (hooks: CallHooks, s: StoreSettings) => CommitRecord): StoreCommit {
    const hooks = new CallHooks(this.#options);
    return hooks.commit(run(hooks, settings(this.#options)));
  }
}

function whereJson(where: Where, method: string): string {
  if (typeof where !== 'string' && (where === null || typeof where !== 'object' || Array.isArray(where))) {
    throw new TypeError(`quire: ${method} takes a filter: an expression ("id < 100") or the object form ({ id: { '<': 100 } })`);
  }
  return JSON.stringify({ where });
}

/**
 * Opens a version-2 file to change it: bytes (copied into wasm memory; bytes() gives the new
 * ones), or in Node a path (changed in place, commit by commit). `options` names the owner (a
 * sealed file's changes need the owner's key or passphrase: KEY_REQUIRED without, WRONG_KEY for
 * another) and where new partitions' keys come from. Nothing is read until the first call.
 */
export function openStore(source: Uint8Array | ArrayBuffer | string, options: StoreOptions = {}): QuireStore {
  checkKeyOptions(options);
  const m = bindings();
  if (typeof source === 'string') {
    const file = new NodeFileTarget(source, 'r+');
    return new QuireStore(INTERNAL, m.storeThrough(file), options, file);
  }
  if (!(source instanceof Uint8Array) && !(source instanceof ArrayBuffer)) throw new TypeError('quire: format.store takes a .quire file\'s bytes or, in Node, its path');
  const h = m.storeInMemory();
  withInput(source instanceof ArrayBuffer ? new Uint8Array(source) : source, (pointer, length) => h.load(pointer, length));
  return new QuireStore(INTERNAL, h, options);
}

/**
 * The storage report of a version-2 file (what `quire inspect --storage` prints) as the key in
 * `options` sees it: the owner's key every partition, a partition's key its own (byPartition then
 * names the partition it reads). `source` as for format.open: bytes, a RangeReader, or in Node a
 * path. Throws QuireError (KEY_REQUIRED, WRONG_KEY; INVALID_ARGUMENT for a version-1 file).
 */
export function storeStorage(source: Uint8Array | ArrayBuffer | RangeReader | string, options: OpenOptions = {}): StoreStorage {
  const m = bindings();
  const key = options.key ?? new Uint8Array(0);
  const passphrase = options.passphrase ?? '';
  if (!(key instanceof Uint8Array)) throw new TypeError("quire: a key is a Uint8Array of 32 bytes (a key file's bytes)");
  if (typeof passphrase !== 'string') throw new TypeError('quire: a passphrase is a string');
  let r: TextRecord;
  if (source instanceof Uint8Array || source instanceof ArrayBuffer) {
    r = withInput(source instanceof ArrayBuffer ? new Uint8Array(source) : source, (pointer, length) => m.storeStorageOfBytes(pointer, length, key, passphrase));
  } else {
    const reader = typeof source === 'string' ? nodeFileReader(source) : source;
    try {
      r = m.storeStorageOfReader(reader.size, { read: (offset, length, pointer) => reader.read(offset, length, bindings().HEAPU8.subarray(pointer, pointer + length)) }, key, passphrase);
    } finally {
      if (typeof source === 'string') reader.close?.();
    }
  }
  if (r.error.code) throw QuireError.fromRecord(r.error);
  return JSON.parse(r.text) as StoreStorage;
}
