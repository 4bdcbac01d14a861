// The .quire format: write tables (rows, CSV, NDJSON) into indexed, column-compressed bytes, open
// them from memory or by ranges (a Node file, a Blob in a Worker), and query them with the same
// core as native quire.
import type { EmbindHandle, ErrorRecord } from './quire.mjs';
import { QuireError } from './errors.js';
import { byteChunks } from './chunks.js';
import { Handle } from './handles.js';
import { INTERNAL, checkInternal } from './internal.js';
import { wasm, withInput, type Input } from './module.js';
import { concatBytes, driveWriter, nodeFs, writeThroughTemp, type StreamWriterHandle } from './files.js';
import { openDataset, type QuireDataset } from './dataset.js';
import { writeRowColumns } from './rows.js';
import { keygen, openStore, storeStorage, writeStoreBytes, type QuireStore, type StoreOptions, type StoreWriteOptions } from './store.js';

// --- the Embind functions this module binds (wasm/bind_format.cpp) ---------------------------------

interface TextResult {
  error: ErrorRecord;
  text: string;
  present: boolean;
}
interface NumberResult {
  error: ErrorRecord;
  value: number;
}
interface ColumnRecord {
  name: string;
  type: string;
  rows: number;
  valid: number;
  numbers: number;
  ints: number;
  text: number;
  textLength: number;
  offsets: number;
}
interface FormatFileHandle extends EmbindHandle {
  error(): ErrorRecord;
  info(): string;
  query(queryJson: string, form: RowText): TextResult;
  /** The row's UTF-8 text, a view of the heap valid until the next call; undefined: no row has the key; null: an error (lastError()). */
  findRow(column: string, keyJson: string, queryJson: string, form: RowText): Uint8Array | undefined | null;
  /** info() as a view of the heap, valid until the next call. */
  infoBytes(): Uint8Array;
  lastError(): ErrorRecord;
  ok(): boolean;
  count(queryJson: string): NumberResult;
  aggregate(column: string, queryJson: string): TextResult;
  explain(queryJson: string, analyze: boolean): TextResult;
  storage(): TextResult;
  chunkStatistics(column: string): TextResult;
  verify(): NumberResult;
  counters(): string;
  loadColumns(queryJson: string, typed: boolean): NumberResult;
  column(index: number): ColumnRecord;
  releaseColumns(): void;
}
interface FormatBytesHandle extends EmbindHandle {
  error(): ErrorRecord;
  pointer(): number;
  size(): number;
  rows(): number;
}
interface FormatBindings {
  HEAPU8: Uint8Array;
  _malloc(size: number): number;
  _free(pointer: number): void;
  formatOpenReader(size: number, reader: { read(offset: number, length: number, pointer: number): number }, key: Uint8Array, passphrase: string): FormatFileHandle;
  formatWrite(pointer: number, length: number, from: string, optionsJson: string): FormatBytesHandle;
}

function bindings(): FormatBindings {
  return wasm('format') as unknown as FormatBindings;
}

interface FormatStreamBindings {
  FormatStreamWriter: new (from: string, optionsJson: string) => StreamWriterHandle;
}

// --- public types ----------------------------------------------------------------------------------

export type ColumnType = 'integer' | 'float' | 'decimal' | 'string' | 'boolean' | 'date' | 'timestamp' | 'json';
export type IndexKind = 'sorted' | 'hash' | 'text';

export interface ColumnDef {
  name: string;
  type: ColumnType;
}

export interface WriteOptions {
  /** What the input is: objects (default for arrays), CSV or NDJSON (default for text). */
  from?: 'rows' | 'csv' | 'ndjson';
  /** Column types; inferred from the input when absent (docs/format.md lists the rules). */
  schema?: ColumnDef[];
  /** Sort the rows by this column (stable, nulls last). */
  sortedBy?: string;
  /**
   * Indexes to build: `{ id: 'hash', name: ['text', 'sorted'] }` or `[{ column, kind }]`. A sorted or
   * hash index on the `sortedBy` column is not written: the order answers its lookups in fewer reads.
   */
  indexes?: Record<string, IndexKind | IndexKind[]> | { column: string; kind: IndexKind }[];
  /** Rows per chunk (default 65536). */
  chunkRows?: number;
  /** Target page size before compression (default 8192). */
  pageBytes?: number;
  /** zstd level 1..19 (default 3). */
  compressionLevel?: number;
  /** Memory for sorting before runs are compressed (default 64 MiB). */
  sortMemoryBytes?: number;
}

/** Options of format.writeStream() and of format.writeFile() with a stream. */
export interface StreamWriteOptions extends Omit<WriteOptions, 'from'> {
  /** What the input is: NDJSON (default) or CSV. */
  from?: 'ndjson' | 'csv';
  /** Without a schema: rows read to infer it before any is written (default 10000). A later value the inferred types cannot hold is a SCHEMA_MISMATCH error naming its line; give `schema` to avoid that. */
  inferRows?: number;
}

/** What format.writeStream() reads: a Node Readable (any async iterable of chunks), a WHATWG ReadableStream, or bytes / text whole. */
export type WriteSource = AsyncIterable<Uint8Array | string> | ReadableStream<Uint8Array | string> | Uint8Array | ArrayBuffer | string;

/** A filter: an expression (`"country = 'NA' and age > 80"`) or the object form (`{ country: 'NA', age: { '>': 80 } }`). */
export type Where = string | Record<string, unknown>;

/**
 * The texts core writes rows in: `ndjson`, one object a line; `array`, one JSON array of objects;
 * `csv` (queryCsv); `cells`, what a grid shows: one JSON array a line of each cell's text as
 * CSV has it (strings their text, numbers core's digits, `true`/`false`, dates ISO text, json
 * columns their JSON text), null as null.
 */
export type RowText = 'ndjson' | 'array' | 'csv' | 'cells';

/**
 * What to read: the one shape query(), count(), aggregate(), columns() and explain() take. count
 * and aggregate see the rows query() would return (where, then offset and limit); columns returns
 * `columns` of those rows in their order.
 */
export interface Query {
  where?: Where;
  /** Columns to return, in this order (default: all). */
  columns?: string[];
  /** Order by a column (cheap when it is the file's sortedBy column). */
  orderBy?: string;
  descending?: boolean;
  offset?: number;
  limit?: number;
}

/**
 * count, sum, min, max and avg of one column. Integer and boolean sums are exact; decimal columns
 * give their sum, average, min and max as exact decimal strings (`"1250075.00"`; the average has
 * max(scale, 6) places, rounded half away from zero); floats are numbers (a non-finite float
 * result is null with `finite: false`). With no values, sum, avg, min and max are null.
 */
export interface Aggregate {
  column: string;
  type: ColumnType;
  /** Rows selected. */
  rows: number;
  /** Non-null values of the column among them. */
  count: number;
  /** number (integer, boolean, float), string (decimal), null (no values, or text columns). Integer sums beyond 2^53 lose precision as JavaScript numbers. */
  sum: number | string | null;
  /** The least value: number, boolean, string (decimal, string, date, timestamp), a JSON value (json columns), or null. */
  min: unknown;
  max: unknown;
  /** number (integer, boolean, float), string (decimal), or null. */
  avg: number | string | null;
  /** false when a float sum, avg, min or max is infinite or NaN (those are then null). */
  finite: boolean;
}

/** The plan of a query, and with `analyze` what running it read. */
export interface ExplainReport {
  /** The filter as expression text. */
  where: string | null;
  /** The index the filter used. */
  index: { column: string; kind: IndexKind; use: string; candidates: number } | null;
  filterColumns: string[];
  columns: string[];
  order: { column: string; descending: boolean; bySortedColumn: boolean } | null;
  offset: number;
  limit: number | null;
  chunks: { total: number; skippedByStatistics: number; skippedByBloom: number; skippedByIndex: number; scanned: number };
  analyzed: boolean;
  /** Analyzed only. */
  rowsMatched?: number;
  rowsReturned?: number;
  stoppedEarly?: boolean;
  read?: ReadCounters;
}

/** What a file's footer says of it: the members FileInfo and StorageReport share (core writes both with one function). */
export interface FileFacts {
  version: number;
  bytes: number;
  rows: number;
  chunkRows: number;
  chunks: number;
  sortedBy: string | null;
  createdBy: string;
}

/** Bytes by column and by index. */
export interface StorageReport extends FileFacts {
  footerBytes: number;
  columns: {
    name: string;
    type: ColumnType;
    dataBytes: number;
    encodedBytes: number;
    directoryBytes: number;
    nulls: number;
    pages: number;
    /** Pages by encoding name ("DELTA", "DICT+FOR", "SCALED+FOR"...). */
    encodings: Record<string, number>;
  }[];
  indexes: { column: string; kind: IndexKind; entries: number; leaves: number; bytes: number; bloomBytes: number }[];
}

/** Statistics of one column in one chunk. */
export interface ChunkStatistic {
  chunk: number;
  rows: number;
  nulls: number;
  min: unknown;
  max: unknown;
  bytes: number;
}

/** A column in bulk: numbers (NaN at nulls), booleans as 0/1, text as strings (null at nulls). */
export type ColumnArray = Float64Array | Uint8Array | (string | null)[];

export interface ColumnsResult {
  /** One array per asked column. Integers, floats, decimals and dates (days since 1970) are Float64Array; timestamps are milliseconds since 1970 (Float64Array); booleans Uint8Array (0/1); strings and json arrays of strings. */
  columns: Record<string, ColumnArray>;
  /** 1 where the column has a value, 0 where it is null. */
  valid: Record<string, Uint8Array>;
  rows: number;
}

/** Text in bulk: value r is the UTF-8 `bytes.subarray(offsets[r], offsets[r + 1])` (empty at nulls); `textAt` decodes one. */
export interface TextColumn {
  offsets: Uint32Array;
  bytes: Uint8Array;
}

/**
 * A column as core holds it (columns(q, { typed: true })): integers and timestamps (microseconds
 * since 1970) BigInt64Array, dates (days since 1970) Int32Array, floats Float64Array, booleans
 * Uint8Array (0/1), strings, json and decimals (their exact text) a TextColumn; 0 or empty at nulls.
 */
export type TypedColumn = BigInt64Array | Int32Array | Float64Array | Uint8Array | TextColumn;

export interface TypedColumnsResult {
  columns: Record<string, TypedColumn>;
  /** 1 where the column has a value, 0 where it is null. */
  valid: Record<string, Uint8Array>;
  types: Record<string, ColumnType>;
  rows: number;
}

/** Value `row` of a TextColumn as a string. */
export function textAt(column: TextColumn, row: number): string {
  return decoder.decode(column.bytes.subarray(column.offsets[row], column.offsets[row + 1]));
}

export interface ReadCounters {
  bytes: number;
  reads: number;
  /** Data and dictionary pages decoded whole. */
  dataPages: number;
  /** Data and dictionary pages read for one row's value, not decoded whole (a find's row). */
  valuePages: number;
  indexPages: number;
  directoryPages: number;
  cacheHits: number;
  blocks: number;
  chunks: number;
  columns: number;
}

export interface FileInfo extends FileFacts {
  columns: ColumnDef[];
  indexes: { column: string; kind: IndexKind }[];
  /** Version 2 (format.store): the commit opened (0 for version 1). */
  commit: number;
  /** Whether the pages are sealed (opened with `key` or `passphrase`). */
  sealed: boolean;
  /** The column the rows are partitioned by, or null. */
  partitionBy: string | null;
  /** The file's partitions (1 when not partitioned), and those the key reads (all for the owner; 1 for a partition's key). */
  partitions: number;
  partitionsRead: number;
  /** Segments read (one per partition and commit until compacted). */
  segments: number;
  /** Rows deleted and not yet compacted away (not counted in rows). */
  deletedRows: number;
  /** Whether a partition's key opened it (it then reads that partition only). */
  partitionKey: boolean;
}

/** How format.open opens a sealed (version-2) file; plain files ignore both. */
export interface OpenOptions {
  /** A key file's 32 bytes: the owner's (every partition) or one partition's (that partition only). */
  key?: Uint8Array;
  /** The owner's passphrase. */
  passphrase?: string;
}

/** Reads ranges synchronously: copy `length` bytes at `offset` into `into` and return how many were copied. */
export interface RangeReader {
  size: number;
  read(offset: number, length: number, into: Uint8Array): number;
  close?(): void;
}

// --- helpers -----------------------------------------------------------------------------------------

const decoder = new TextDecoder();

/** @internal Throws the QuireError of a result's error record, if it has one. */
export function check(r: { error: ErrorRecord }): void {
  if (r.error.code) throw QuireError.fromRecord(r.error);
}

/** @internal The query as core reads it (parse_query_json); a plain Error for what is not a query object. */
export function queryJson(q: Query | undefined, method: string): string {
  if (q === undefined) return '';
  if (q === null || typeof q !== 'object' || Array.isArray(q)) {
    throw new TypeError(`quire: ${method} takes a query object, e.g. ${method}({ where: "age > 80" })`);
  }
  return JSON.stringify(q);
}

function indexList(indexes: WriteOptions['indexes']): { column: string; kind: IndexKind }[] | undefined {
  if (!indexes) return undefined;
  if (Array.isArray(indexes)) return indexes;
  const out: { column: string; kind: IndexKind }[] = [];
  for (const [column, kinds] of Object.entries(indexes)) {
    for (const kind of Array.isArray(kinds) ? kinds : [kinds]) out.push({ column, kind });
  }
  return out;
}

// --- the file handle ------------------------------------------------------------------------------------

/** An open .quire file. close() it when done (a finalizer frees it otherwise). */
export class QuireFile extends Handle<FormatFileHandle> {
  // Core's to_json(file_info), parsed when first asked for: a cold open + find never reads it.
  readonly #infoText: string;
  #info: FileInfo | undefined;
  readonly #onClose: (() => void) | undefined;

  /** @internal */
  constructor(token: typeof INTERNAL, handle: FormatFileHandle, onClose?: () => void) {
    checkInternal(token, 'QuireFile', 'format.open()');
    super(handle, 'QuireFile');
    // Core's to_json(file_info) holds version 2's members too: the bytes `quire inspect` prints.
    this.#infoText = decoder.decode(handle.infoBytes());
    this.#onClose = onClose;
  }

  /** Columns and their types. */
  get schema(): ColumnDef[] {
    return this.info.columns;
  }
  /** Rows, chunks, size, sortedBy and indexes. */
  get info(): FileInfo {
    return (this.#info ??= JSON.parse(this.#infoText) as FileInfo);
  }
  get rowCount(): number {
    return this.info.rows;
  }

  /** The first row whose `column` equals `key`, or undefined. */
  find(column: string, key: string | number | boolean, options: { columns?: string[] } = {}): Record<string, unknown> | undefined {
    const text = this.findText(column, key, options);
    return text === undefined ? undefined : (JSON.parse(text) as Record<string, unknown>);
  }

  /**
   * The row find() finds as core's text, unparsed, or undefined: one JSON object, or with
   * `form: 'cells'` one array of the cells' texts (as a line of queryText's cells, without its
   * line end).
   */
  findText(column: string, key: string | number | boolean, options: { columns?: string[]; form?: 'ndjson' | 'cells' } = {}): string | undefined {
    const h = this.handle;
    const row = h.findRow(column, JSON.stringify(key), options.columns ? JSON.stringify({ columns: options.columns }) : '', options.form ?? 'ndjson');
    if (row === null) throw QuireError.fromRecord(h.lastError());
    return row === undefined ? undefined : decoder.decode(row);
  }

  /** Rows a query selects, as plain objects (large integers beyond 2^53 lose precision in JavaScript numbers; decimals are numbers here, their exact text is in aggregate()). */
  query(q: Query = {}): Record<string, unknown>[] {
    const r = this.handle.query(queryJson(q, 'query'), 'array');
    check(r);
    return JSON.parse(r.text) as Record<string, unknown>[];
  }

  /**
   * The rows query(q) selects as core's text, unparsed: a JSON array, or with `ndjson: true` (or
   * `form: 'ndjson'`) one object a line, each ending in a newline (exactly what `quire query`
   * prints), or with `form: 'cells'` one array of the cells' texts a line (RowText). Numbers keep
   * core's digits (a decimal `12.50`, integers beyond 2^53), which parsing would change.
   */
  queryText(q: Query = {}, options: { ndjson?: boolean; form?: RowText } = {}): string {
    const r = this.handle.query(queryJson(q, 'queryText'), options.form ?? (options.ndjson ? 'ndjson' : 'array'));
    check(r);
    return r.text;
  }

  /**
   * The rows query(q) selects as core's CSV (RFC 4180, what `quire query --csv` prints and the
   * view's CSV output writes): a header row of the column names, then a record a row, each ending
   * in a newline; a null is an empty field, an empty string `""`.
   */
  queryCsv(q: Query = {}): string {
    const r = this.handle.query(queryJson(q, 'queryCsv'), 'csv');
    check(r);
    return r.text;
  }

  /** The number of rows query(q) would return; no rows are built. */
  count(q?: Query): number {
    const r = this.handle.count(queryJson(q, 'count'));
    check(r);
    return r.value;
  }

  /** count, sum, min, max and avg of a column over the rows query(q) would return (see Aggregate for exactness). */
  aggregate(column: string, q?: Query): Aggregate {
    const r = this.handle.aggregate(column, queryJson(q, 'aggregate'));
    check(r);
    return JSON.parse(r.text) as Aggregate;
  }

  /**
   * The columns `q.columns` (all when absent) of the rows query(q) would return, as typed arrays
   * copied out of wasm memory. With `{ typed: true }` each column is the array core holds
   * (TypedColumn: BigInt64Array for integers, text as one UTF-8 buffer with offsets), copied once,
   * no value converted — as Arrow's `getChild(name).toArray()`.
   */
  columns(q?: Query): ColumnsResult;
  columns(q: Query | undefined, options: { typed: true }): TypedColumnsResult;
  columns(q?: Query, options?: { typed?: boolean }): ColumnsResult | TypedColumnsResult {
    if (options?.typed) return this.#typedColumns(q);
    const h = this.handle;
    const n = h.loadColumns(queryJson(q, 'columns'), false);
    check(n);
    const out: ColumnsResult = { columns: {}, valid: {}, rows: 0 };
    try {
      for (let i = 0; i < n.value; i++) {
        const c = h.column(i);
        // Views are made after the last call that may grow memory, and copied at once.
        const heap = bindings().HEAPU8;
        out.rows = c.rows;
        const valid = heap.slice(c.valid, c.valid + c.rows);
        out.valid[c.name] = valid;
        if (c.type === 'string' || c.type === 'json') {
          const text = decoder.decode(heap.subarray(c.text, c.text + c.textLength));
          const offsets = new Uint32Array(heap.buffer, c.offsets, c.rows + 1).slice();
          const values: (string | null)[] = new Array(c.rows);
          for (let r = 0; r < c.rows; r++) values[r] = valid[r] ? text.slice(offsets[r], offsets[r + 1]) : null;
          out.columns[c.name] = values;
        } else if (c.type === 'boolean') {
          const numbers = new Float64Array(heap.buffer, c.numbers, c.rows);
          const flags = new Uint8Array(c.rows);
          for (let r = 0; r < c.rows; r++) flags[r] = numbers[r] === 1 ? 1 : 0;
          out.columns[c.name] = flags;
        } else {
          out.columns[c.name] = c.rows ? new Float64Array(heap.buffer, c.numbers, c.rows).slice() : new Float64Array(0);
        }
      }
    } finally {
      h.releaseColumns();
    }
    return out;
  }

  #typedColumns(q: Query | undefined): TypedColumnsResult {
    const h = this.handle;
    const n = h.loadColumns(queryJson(q, 'columns'), true);
    check(n);
    const out: TypedColumnsResult = { columns: {}, valid: {}, types: {}, rows: 0 };
    try {
      for (let i = 0; i < n.value; i++) {
        const c = h.column(i);
        const heap = bindings().HEAPU8;
        const rows = c.rows;
        out.rows = rows;
        out.types[c.name] = c.type as ColumnType;
        out.valid[c.name] = heap.slice(c.valid, c.valid + rows);
        switch (c.type as ColumnType) {
          case 'string':
          case 'json':
          case 'decimal':
            out.columns[c.name] = {
              offsets: new Uint32Array(heap.buffer, c.offsets, rows + 1).slice(),
              bytes: heap.slice(c.text, c.text + c.textLength),
            };
            break;
          case 'float':
            out.columns[c.name] = rows ? new Float64Array(heap.buffer, c.numbers, rows).slice() : new Float64Array(0);
            break;
          case 'boolean':
          case 'date': {
            const ints = rows ? new BigInt64Array(heap.buffer, c.ints, rows) : new BigInt64Array(0);
            // Low words: booleans are 0/1, days fit 32 bits.
            const words = new Int32Array(ints.buffer, ints.byteOffset, 2 * rows);
            const narrow = c.type === 'boolean' ? new Uint8Array(rows) : new Int32Array(rows);
            for (let r = 0; r < rows; r++) narrow[r] = words[2 * r];
            out.columns[c.name] = narrow;
            break;
          }
          default:
            out.columns[c.name] = rows ? new BigInt64Array(heap.buffer, c.ints, rows).slice() : new BigInt64Array(0);
        }
      }
    } finally {
      h.releaseColumns();
    }
    return out;
  }

  /** The plan of a query; with `analyze` the query runs and the report adds what it read. */
  explain(q: Query = {}, options: { analyze?: boolean } = {}): ExplainReport {
    const r = this.handle.explain(queryJson(q, 'explain'), options.analyze ?? false);
    check(r);
    return JSON.parse(r.text) as ExplainReport;
  }

  /** Bytes by column and by index, encodings, chunks. */
  storage(): StorageReport {
    const r = this.handle.storage();
    check(r);
    return JSON.parse(r.text) as StorageReport;
  }

  /** Statistics of one column in each chunk (min and max as the file keeps them: decimals as numbers). */
  chunkStatistics(column: string): ChunkStatistic[] {
    const r = this.handle.chunkStatistics(column);
    check(r);
    return JSON.parse(r.text) as ChunkStatistic[];
  }

  /** Reads every page and checks its checksum; returns the number of pages checked. */
  verify(): number {
    const r = this.handle.verify();
    check(r);
    return r.value;
  }

  /** What the file has read since it was opened. */
  counters(): ReadCounters {
    return JSON.parse(this.handle.counters()) as ReadCounters;
  }

  override close(): void {
    if (this.closed) return;
    super.close();
    this.#onClose?.();
  }
}

function openHandle(handle: FormatFileHandle, onClose?: () => void): QuireFile {
  if (!handle.ok()) {
    const err = handle.error();
    handle.delete();
    onClose?.();
    throw QuireError.fromRecord(err);
  }
  return new QuireFile(INTERNAL, handle, onClose);
}

const NO_KEY = new Uint8Array(0);

/** The key and passphrase as the binding takes them (a key that is not a Uint8Array is misuse). */
function openKeys(options: OpenOptions): [Uint8Array, string] {
  if (options === null || typeof options !== 'object') throw new TypeError('quire: format.open takes options { key?: Uint8Array, passphrase?: string }');
  const { key, passphrase } = options;
  if (key !== undefined && !(key instanceof Uint8Array)) throw new TypeError("quire: a key is a Uint8Array of 32 bytes (a key file's bytes)");
  if (passphrase !== undefined && typeof passphrase !== 'string') throw new TypeError('quire: a passphrase is a string');
  return [key ?? NO_KEY, passphrase ?? ''];
}

/**
 * Bytes in JavaScript memory read where they are, range by range, as a file on disk is: an open
 * copies only the tail and footer into wasm memory and a query only the pages it reads, so a cold
 * open + find costs the pages it touches, not a copy of the whole file (2-3x less on the 200,000
 * customers; a whole scan costs the same). As with apache-arrow's tableFromIPC, the bytes must not
 * change while the file is open.
 */
function bytesReader(bytes: Uint8Array): BytesReader {
  const clamp = (offset: number, length: number) => Math.max(0, Math.min(length, bytes.length - offset));
  return {
    size: bytes.length,
    read(offset, length, into) {
      const n = clamp(offset, length);
      into.set(bytes.subarray(offset, offset + n));
      return n;
    },
    // What the binding calls for each range: one view of the bytes set into the heap, where read()
    // would make a view of the heap too (a cold find reads 28 ranges).
    readToHeap(offset, length, pointer) {
      const n = clamp(offset, length);
      bindings().HEAPU8.set(bytes.subarray(offset, offset + n), pointer);
      return n;
    },
  };
}

/** A RangeReader over bytes in JavaScript memory, which the binding can copy into the heap at once. */
interface BytesReader extends RangeReader {
  readToHeap(offset: number, length: number, pointer: number): number;
}

function openReader(reader: RangeReader, options: OpenOptions = {}): QuireFile {
  const m = bindings();
  let keys: [Uint8Array, string];
  try {
    keys = openKeys(options);
  } catch (e) {
    reader.close?.();
    throw e;
  }
  const toHeap = (reader as Partial<BytesReader>).readToHeap;
  const handle = m.formatOpenReader(
    reader.size,
    toHeap
      ? { read: toHeap }
      : {
          read(offset: number, length: number, pointer: number): number {
            // HEAPU8 is taken inside the call: memory may have grown since the file was opened.
            return reader.read(offset, length, bindings().HEAPU8.subarray(pointer, pointer + length));
          },
        },
    keys[0],
    keys[1],
  );
  return openHandle(handle, () => reader.close?.());
}

/** A RangeReader over a Node file descriptor (fs.readSync): only the ranges asked for are read. */
export function nodeFileReader(path: string): RangeReader {
  const fs = nodeFs();
  const fd = fs.openSync(path, 'r');
  const size = fs.fstatSync(fd).size;
  let open = true;
  return {
    size,
    read(offset, length, into) {
      let done = 0;
      while (done < length) {
        const n = fs.readSync(fd, into, done, length - done, offset + done);
        if (n <= 0) break;
        done += n;
      }
      return done;
    },
    close() {
      if (open) fs.closeSync(fd);
      open = false;
    },
  };
}

/** A RangeReader over a Blob or File with FileReaderSync: only in a Worker (it does not exist on the main thread). */
export function blobReader(blob: Blob): RangeReader {
  const Sync = (globalThis as unknown as { FileReaderSync?: new () => { readAsArrayBuffer(b: Blob): ArrayBuffer } }).FileReaderSync;
  if (!Sync) throw new Error('quire: reading a Blob by ranges needs FileReaderSync, which exists only in a Worker; use `await format.openBlob(blob)`');
  const sync = new Sync();
  return {
    size: blob.size,
    read(offset, length, into) {
      const part = new Uint8Array(sync.readAsArrayBuffer(blob.slice(offset, offset + length)));
      into.set(part);
      return part.length;
    },
  };
}

// --- writing from a stream --------------------------------------------------------------------------

/** A write source in pieces (chunks.ts), refused with format's own message. */
async function* sourceChunks(source: WriteSource): AsyncGenerator<Uint8Array> {
  yield* byteChunks(source, 'quire: a stream source is a Node Readable, a ReadableStream, an async iterable of chunks, or bytes / text');
}

function isStreamSource(input: unknown): input is AsyncIterable<Uint8Array | string> | ReadableStream<Uint8Array | string> {
  if (input === null || typeof input !== 'object' || Array.isArray(input) || input instanceof ArrayBuffer || ArrayBuffer.isView(input)) return false;
  return Symbol.asyncIterator in input || typeof (input as { getReader?: unknown }).getReader === 'function';
}

/** @internal The write options as the wasm writers read them (one JSON text; view.ts's writer too). */
export function writeOptionsJson(options: WriteOptions): string {
  return JSON.stringify({
    schema: options.schema,
    sortedBy: options.sortedBy,
    indexes: indexList(options.indexes),
    chunkRows: options.chunkRows,
    pageBytes: options.pageBytes,
    compressionLevel: options.compressionLevel,
    sortMemoryBytes: options.sortMemoryBytes,
    inferRows: (options as StreamWriteOptions).inferRows,
  });
}

/** Feeds the source to core's streaming writer (files.ts drives it); each piece of the file goes to `emit` as it is written. Returns the rows. */
async function streamTable(source: WriteSource, options: StreamWriteOptions, emit: (bytes: Uint8Array) => void): Promise<number> {
  const from = options.from ?? 'ndjson';
  if (from !== 'ndjson' && from !== 'csv') throw new TypeError('quire: a stream is read as from "ndjson" or "csv"');
  const handle = new (wasm('format_stream') as unknown as FormatStreamBindings).FormatStreamWriter(from, writeOptionsJson(options));
  return driveWriter(handle, sourceChunks(source), emit);
}

async function writeFileFromStream(path: string, source: WriteSource, options: StreamWriteOptions): Promise<void> {
  await writeThroughTemp(path, (write) => streamTable(source, options, write));
}

function writeFileWhole(path: string, input: readonly object[] | Input, options: WriteOptions): void {
  // Written before the temporary is made: a table core refuses leaves nothing behind at all.
  const bytes = format.write(input, options);
  writeThroughTemp(path, (write) => write(bytes));
}

/** Node: writes a table to `path` through a temporary name renamed at the end. */
function writeFile(path: string, input: readonly object[] | Input, options?: WriteOptions): void;
/** Node: writes a table from a stream (a Node Readable, a ReadableStream...) to `path` through a temporary name renamed at the end; the file is never whole in memory. */
function writeFile(path: string, input: AsyncIterable<Uint8Array | string> | ReadableStream<Uint8Array | string>, options?: StreamWriteOptions): Promise<void>;
function writeFile(path: string, input: readonly object[] | Input | AsyncIterable<Uint8Array | string> | ReadableStream<Uint8Array | string>, options: WriteOptions | StreamWriteOptions = {}): void | Promise<void> {
  if (isStreamSource(input)) {
    if ((options as StoreWriteOptions).store) throw new TypeError('quire: a store (store: true) is written from rows or text whole, not from a stream');
    return writeFileFromStream(path, input, options as StreamWriteOptions);
  }
  writeFileWhole(path, input as readonly object[] | Input, options as WriteOptions);
}

function toNdjson(rows: readonly object[]): string {
  let out = '';
  for (const r of rows) out += JSON.stringify(r) + '\n';
  return out;
}

/** The .quire format. */
export const format = {
  /**
   * Writes a table and returns the file's bytes. `input`: an array of plain objects, or CSV /
   * NDJSON text (or its UTF-8 bytes). Throws QuireError (SCHEMA_MISMATCH, INVALID_CSV...).
   * With `store: true` the file is version 2 (it can grow: format.store), partitioned and sealed
   * as StoreWriteOptions say.
   */
  write(input: readonly object[] | Input, options: WriteOptions | StoreWriteOptions = {}): Uint8Array {
    if ((options as StoreWriteOptions).store) return writeStoreBytes(input, options as StoreWriteOptions);
    const m = bindings();
    let from = options.from;
    let data: Input;
    const opts = writeOptionsJson(options);
    if (Array.isArray(input)) {
      // Columns in bulk (rows.ts); rows it does not take go as NDJSON, as they always did.
      const bytes = writeRowColumns(input, opts);
      if (bytes) return bytes;
      data = toNdjson(input);
      from = 'ndjson';
    } else {
      data = input as Input;
      from ??= 'ndjson';
      if (from === 'rows') throw new TypeError('quire: from "rows" needs an array of objects');
    }
    const out = withInput(data, (pointer, length) => m.formatWrite(pointer, length, from === 'csv' ? 'csv' : 'ndjson', opts));
    try {
      const err = out.error();
      if (err.code) throw QuireError.fromRecord(err);
      const pointer = out.pointer();
      return bindings().HEAPU8.slice(pointer, pointer + out.size());
    } finally {
      out.delete();
    }
  },

  /**
   * Node: writes a table to `path` through a temporary name renamed at the end (an error leaves
   * no file). `input` as for write() — or a stream as for writeStream(), and then it returns a
   * Promise and the file's bytes go to disk as they are written.
   */
  writeFile,

  /**
   * Writes a table from NDJSON or CSV arriving in chunks — a Node Readable, a WHATWG
   * ReadableStream (a Blob's `stream()`, a `fetch` body), any async iterable of Uint8Array or
   * string chunks — and resolves to the file's bytes. Chunks may split lines, quoted fields and
   * UTF-8 sequences anywhere. Memory holds one line plus the writer's chunk, and, without a
   * schema, the first `inferRows` rows until their types are known. Same bytes as write() for
   * the same input when the first rows give the same schema. Rejects with QuireError.
   */
  async writeStream(source: WriteSource, options: StreamWriteOptions = {}): Promise<Uint8Array> {
    const parts: Uint8Array[] = [];
    await streamTable(source, options, (bytes) => parts.push(bytes));
    return concatBytes(parts);
  },

  /**
   * Opens a file, reading only its footer. `source`: bytes (read where they are, range by range,
   * never copied whole: they must not change while the file is open), a RangeReader (read synchronously, range by range), or in Node a path (read by ranges with
   * fs.readSync; close() closes the descriptor). A sealed file needs `key` or `passphrase`
   * (KEY_REQUIRED without; WRONG_KEY for a key that opens nothing).
   */
  open(source: Uint8Array | ArrayBuffer | RangeReader | string, options: OpenOptions = {}): QuireFile {
    if (typeof source === 'string') return openReader(nodeFileReader(source), options);
    if (source instanceof Uint8Array || source instanceof ArrayBuffer) return openReader(bytesReader(source instanceof ArrayBuffer ? new Uint8Array(source) : source), options);
    return openReader(source, options);
  },

  /**
   * Opens a version-2 file (written with `store: true`) to change it commit by commit: bytes in
   * memory (bytes() gives the new ones) or, in Node, a path changed in place (store.ts).
   */
  store(source: Uint8Array | ArrayBuffer | string, options: StoreOptions = {}): QuireStore {
    return openStore(source, options);
  },

  /** A new random 256-bit key (crypto.getRandomValues), as `quire keygen` writes to a key file. */
  keygen,

  /** A version-2 file's commits, partitions, segments and garbage as a key sees it (`quire inspect --storage`; store.ts). */
  storeStorage,

  /** Node: opens a partitioned dataset's folder (see openDataset in dataset.ts, docs/format.md §9). */
  openDataset(dir: string): QuireDataset {
    return openDataset(dir);
  },

  /** Opens a Blob or File: by ranges in a Worker (FileReaderSync); on the main thread it is read whole first. `options` as for open(). */
  async openBlob(blob: Blob, options: OpenOptions = {}): Promise<QuireFile> {
    if ((globalThis as { FileReaderSync?: unknown }).FileReaderSync) return openReader(blobReader(blob), options);
    return openReader(bytesReader(new Uint8Array(await blob.arrayBuffer())), options);
  },
};
