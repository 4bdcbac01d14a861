// SQL on FHIR v2 ViewDefinitions: a view is compiled once by core into a handle; each run copies
// its resources into the wasm heap once and gets the rows back as core's NDJSON text, which this
// module parses (or, with the text forms, hands over unparsed). For Arrow and Parquet the rows
// come back as batches of typed columns in Arrow's layout, which arrow.ts wraps.
import type { EmbindHandle, ErrorRecord } from './quire.mjs';
import { QuireError } from './errors.js';
import { byteChunks } from './chunks.js';
import { Handle } from './handles.js';
import { INTERNAL, checkInternal } from './internal.js';
import { wasm, withInput, type Input } from './module.js';
import type { FhirResource } from './fhir.js';
import type { NdjsonSource } from './ndjson.js';
import { writeOptionsJson, type WriteOptions } from './format.js';
import { concatBytes, driveWriter, writeThroughTemp, type StreamWriterHandle } from './files.js';
import { buildTable, checkArrow, checkParquet, parquetOf, type ArrowModule, type ColumnBatch, type ColumnBuffers, type ParquetModule } from './arrow.js';

/** A column of a select: `name` and the FHIRPath `path` that gives its value. */
export interface ViewColumn {
  name: string;
  path: string;
  /** The FHIR type of the value (`id`, `string`, `integer`...). */
  type?: string;
  /** The cell is an array of every value (else more than one value is a FHIRPATH_TYPE_ERROR). */
  collection?: boolean;
  description?: string;
  [key: string]: unknown;
}

/** A select: columns, nested selects and unionAll branches, over each item of forEach / forEachOrNull / repeat. */
export interface ViewSelect {
  column?: ViewColumn[];
  select?: ViewSelect[];
  forEach?: string;
  forEachOrNull?: string;
  repeat?: string[];
  unionAll?: ViewSelect[];
  [key: string]: unknown;
}

/** A SQL on FHIR v2 ViewDefinition (the members quire reads; others are kept and ignored). */
export interface ViewDefinition {
  resourceType?: 'ViewDefinition';
  /** The resource type the view reads (`Patient`); resources of other types give no rows. */
  resource: string;
  name?: string;
  select: ViewSelect[];
  /** FHIRPath filters, each giving one boolean. */
  where?: Array<{ path: string; description?: string }>;
  /** Named values the paths read as `%name` (`{ name, valueString }`, `{ name, valueInteger }`...). */
  constant?: Array<{ name: string; [value: string]: unknown }>;
  [key: string]: unknown;
}

/** One output row: a value per column, keys in the view's column order (null when the path gives nothing). */
export type Row = Record<string, unknown>;

/** One output column of a compiled view. */
export interface ColumnInfo {
  name: string;
  /** The declared FHIR type; "" when the view declares none. */
  type: string;
  /** The cell is an array of every value. */
  collection: boolean;
}

/** A view as view.run() and the others take it: a ViewDefinition object, its JSON text or bytes, or a compiled view. */
export type ViewInput = ViewDefinition | CompiledView | Input;

/**
 * Resources as view.run() takes them: one resource object, an array of them, or JSON text / bytes
 * of a resource, a Bundle (its entries are read), a JSON array of resources, or NDJSON.
 */
export type ViewResources = FhirResource | readonly FhirResource[] | Input;

/** What view.stream() reads: what ndjson.stream() reads (bytes or text whole, a Node Readable or any async iterable of chunks, a ReadableStream), or a Blob / File. */
export type ViewSource = NdjsonSource | Blob;

/** What view.toQuire(), toCsv() and toNdjson() read: NDJSON as view.stream() reads it, or resource objects (one, or an array). */
export type ViewWriteSource = ViewSource | FhirResource | readonly FhirResource[];

/** Options of view.toQuire(): the .quire writer's (see format.write()); the column types come from the view (docs/views.md). */
export interface ViewWriteOptions extends Pick<WriteOptions, 'sortedBy' | 'indexes' | 'chunkRows' | 'pageBytes' | 'compressionLevel' | 'sortMemoryBytes'> {
  /** Node: write the file here (through a temporary name renamed at the end) instead of returning its bytes. */
  out?: string;
}

/** What a table written to a file gives back. */
export interface ViewWriteResult {
  /** Rows written. */
  rows: number;
}

/** Options of view.toArrow() and view.toArrowTable(). */
export interface ViewArrowOptions {
  /** The apache-arrow module (`import * as arrow from 'apache-arrow'`): quire does not bundle it. */
  arrow: ArrowModule;
  /** Rows of a record batch (and of a Parquet row group); default 122,880, DuckDB's row group and the CLI's. */
  batchRows?: number;
  /** toArrow() and toParquet() in Node: write the file here (through a temporary name renamed at the end, none left on an error) and resolve to an empty Uint8Array. */
  out?: string;
}

/** Options of view.toParquet(): view.toArrow()'s, and the parquet-wasm module. */
export interface ViewParquetOptions extends ViewArrowOptions {
  /** The parquet-wasm module (`import * as parquet from 'parquet-wasm'`; in a browser `parquet-wasm/esm` after its init()). */
  parquet: ParquetModule;
}

/** Options of view.stream() and the other streaming calls. */
export interface ViewStreamOptions {
  /** Longest NDJSON line in bytes (default 16 MiB); a longer one is a LINE_TOO_LONG error. */
  maxLineBytes?: number;
}

interface ViewTextRecord {
  error: ErrorRecord;
  text: string;
}

interface CompiledViewHandle extends EmbindHandle {
  error(): ErrorRecord;
  resource(): string;
  name(): string;
  columns(): string;
  run(pointer: number, length: number): ViewTextRecord;
}

interface ViewStreamHandle extends EmbindHandle {
  feed(pointer: number, length: number): ViewTextRecord;
  finish(): ViewTextRecord;
}

type OutputKind = 'quire' | 'csv' | 'ndjson';

interface BatchColumnRecord {
  nulls: number;
  validity: number;
  validityBytes: number;
  values: number;
  valuesBytes: number;
  offsets: number;
}

interface ViewBatchWriterHandle extends EmbindHandle {
  error(): ErrorRecord;
  types(): string;
  feed(pointer: number, length: number): ErrorRecord;
  finish(): ErrorRecord;
  rows(): number;
  batches(): number;
  batchRows(batch: number): number;
  column(batch: number, column: number): BatchColumnRecord;
  clearBatches(): void;
}

interface ViewBindings {
  CompiledView: new (pointer: number, length: number) => CompiledViewHandle;
  ViewStream: new (view: CompiledViewHandle, maxLineBytes: number) => ViewStreamHandle;
  ViewWriter: new (view: CompiledViewHandle, kind: OutputKind, optionsJson: string) => StreamWriterHandle;
  ViewBatchWriter: new (view: CompiledViewHandle, batchRows: number) => ViewBatchWriterHandle;
  HEAPU8: Uint8Array;
}

function bindings(): ViewBindings {
  return wasm('view') as unknown as ViewBindings;
}

function text(r: ViewTextRecord): string {
  if (r.error.code) throw QuireError.fromRecord(r.error);
  return r.text;
}

/** A stream's record: the rows of the lines before a bad one, then its error. */
function* rowsThenError(r: ViewTextRecord): Generator<string> {
  yield r.text;
  if (r.error.code) throw QuireError.fromRecord(r.error);
}

/** Rows from core's NDJSON text (one row object per line; JSON strings never hold a raw line end). */
function parseRows(ndjson: string, out: Row[] = []): Row[] {
  let at = 0;
  while (at < ndjson.length) {
    const end = ndjson.indexOf('\n', at);
    out.push(JSON.parse(ndjson.slice(at, end)) as Row);
    at = end + 1;
  }
  return out;
}

function isInput(value: unknown): value is Input {
  return typeof value === 'string' || value instanceof Uint8Array || value instanceof ArrayBuffer;
}

function resourcesInput(resources: ViewResources): Input {
  if (isInput(resources)) return resources;
  if (resources === null || typeof resources !== 'object') throw new TypeError('quire: resources must be a resource object, an array of them, JSON text or bytes');
  return JSON.stringify(resources);
}

/** A ViewDefinition compiled by core: run it any number of times; close() frees it (or `using`). */
export class CompiledView extends Handle<CompiledViewHandle> {
  #columns: ColumnInfo[] | undefined;
  readonly #resource: string;
  readonly #name: string;

  /** @internal */
  constructor(token: typeof INTERNAL, handle: CompiledViewHandle) {
    checkInternal(token, 'CompiledView', 'view.compile()');
    super(handle, 'CompiledView');
    this.#resource = handle.resource();
    this.#name = handle.name();
  }

  /** The resource type the view reads (`Patient`). */
  get resource(): string {
    return this.#resource;
  }

  /** The view's `name`; "" when it has none. */
  get name(): string {
    return this.#name;
  }

  /** The output columns in order: a select's columns, then its nested selects', then its unionAll's. */
  get columns(): ColumnInfo[] {
    this.#columns ??= JSON.parse(this.handle.columns()) as ColumnInfo[];
    return this.#columns.map((c) => ({ ...c }));
  }

  /**
   * The rows of the resources, as objects. A Bundle (a whole document, an array element or an
   * NDJSON line) gives the rows of its entries' resources unless the view is over Bundle itself:
   * core's one Bundle walk, the same in every call here (stream, toNdjson, toCsv, toQuire) and in
   * the CLI. NDJSON lines are cut by core (`LINE_TOO_LONG` past 16 MiB, as everywhere). Values
   * are what JSON.parse makes of core's cells: a
   * decimal `0.700` becomes the number 0.7 and an integer beyond 2^53 is rounded; runText() keeps
   * the exact text. Throws QuireError (FHIRPATH_TYPE_ERROR with `path` the place in the view, or
   * the resources' INVALID_JSON with its line).
   */
  run(resources: ViewResources): Row[] {
    return parseRows(this.runText(resources));
  }

  /** The rows as core's text: one JSON object per row and line (NDJSON), numbers exactly as in the resources. */
  runText(resources: ViewResources): string {
    return text(withInput(resourcesInput(resources), (pointer, length) => this.handle.run(pointer, length)));
  }

  /** Rows of an NDJSON source one by one (see view.stream()). The view must be open when iteration starts; the stream keeps what it needs after that. */
  stream(source: ViewSource, options?: ViewStreamOptions): AsyncGenerator<Row> {
    return rowsOf(this.streamText(source, options));
  }

  /** As stream(), yielding core's NDJSON text of the rows each piece completed (possibly ""). */
  async *streamText(source: ViewSource, options?: ViewStreamOptions): AsyncGenerator<string> {
    // Made on the first next(), so that a stream never iterated holds no wasm memory.
    const handle = new (bindings().ViewStream)(this.handle, options?.maxLineBytes ?? 0);
    try {
      for await (const piece of pieces(source)) {
        yield* rowsThenError(withInput(piece, (pointer, length) => handle.feed(pointer, length)));
      }
      yield* rowsThenError(handle.finish());
    } finally {
      handle.delete();
    }
  }

  /**
   * The rows as a .quire table (core's table_writer: column types from the view, indexes and
   * chunking from the options), read from NDJSON or resource objects piece by piece: the heap
   * holds one piece, the writer's state and the output since the last piece, never the input.
   * Throws QuireError: SCHEMA_MISMATCH (a value its column cannot hold, `path` the column),
   * NO_SUCH_COLUMN (an index on a column the view lacks), a bad line's error with its `line`.
   */
  async toQuire(source: ViewWriteSource, options: ViewWriteOptions = {}): Promise<Uint8Array> {
    return concatBytes(await this.#collect('quire', source, options));
  }

  /** Node: writes the .quire table to `path` (a temporary name renamed at the end); the file is never whole in memory. */
  async writeFile(path: string, source: ViewWriteSource, options: ViewWriteOptions = {}): Promise<ViewWriteResult> {
    return { rows: await writeThroughTemp(path, (write) => this.#write('quire', source, options, write)) };
  }

  /** The rows as CSV (RFC 4180, LF line ends, a header of the column names; null an empty field), as core writes it. */
  async toCsv(source: ViewWriteSource): Promise<string> {
    return decoder.decode(concatBytes(await this.#collect('csv', source, {})));
  }

  /** The rows as NDJSON text, one row object a line, as core writes it (the bytes of runText()). */
  async toNdjson(source: ViewWriteSource): Promise<string> {
    return decoder.decode(concatBytes(await this.#collect('ndjson', source, {})));
  }

  /**
   * The rows as an apache-arrow Table made with the module in `options.arrow`: a RecordBatch per
   * `batchRows` rows, typed as the CLI's `--out rows.arrow` (integers Int64, booleans Bool,
   * decimals Decimal128(38,18) exact, strings and json columns Utf8). Core makes every buffer in
   * Arrow's layout; this only wraps them. Throws QuireError: INVALID_ARGUMENT without apache-arrow,
   * SCHEMA_MISMATCH for a value its column cannot hold (a decimal DECIMAL(38,18) cannot hold
   * exactly, with the CLI's message), a bad line's error with its `line`.
   */
  async toArrowTable<T = unknown>(source: ViewWriteSource, options: ViewArrowOptions): Promise<T> {
    const arrow = checkArrow(options?.arrow, 'view.toArrowTable()');
    const { types, batches } = await this.#batches(source, options.batchRows);
    return buildTable(arrow, this.columns.map((c) => c.name), types, batches) as T;
  }

  /** The rows as an Arrow IPC file (the file format, as the CLI's `--out rows.arrow`), written by apache-arrow; see toArrowTable(). With `out` (Node) written there. */
  async toArrow(source: ViewWriteSource, options: ViewArrowOptions): Promise<Uint8Array> {
    const arrow = checkArrow(options?.arrow, 'view.toArrow()');
    return toFileOrBytes(options.out, arrow.tableToIPC(await this.toArrowTable(source, options), 'file'));
  }

  /**
   * The rows as a Parquet file written by parquet-wasm from the Arrow table (toArrowTable()): the
   * CLI's types (BIGINT, BOOLEAN, DECIMAL(38,18), VARCHAR), ZSTD, row groups of `batchRows` rows,
   * statistics per column chunk and page. With `out` (Node) written there. Throws as
   * toArrowTable(), and INVALID_ARGUMENT without parquet-wasm.
   */
  async toParquet(source: ViewWriteSource, options: ViewParquetOptions): Promise<Uint8Array> {
    const arrow = checkArrow(options?.arrow, 'view.toParquet()');
    const parquet = checkParquet(options?.parquet, 'view.toParquet()');
    const table = await this.toArrowTable(source, options);
    return toFileOrBytes(options.out, parquetOf(arrow, parquet, table, options.batchRows || DEFAULT_BATCH_ROWS));
  }

  /** Core's batch writer fed the source; each batch copied out of the heap as soon as a piece completes it. */
  async #batches(source: ViewWriteSource, batchRows: number | undefined): Promise<{ types: string[]; batches: ColumnBatch[] }> {
    if (batchRows !== undefined && !(Number.isInteger(batchRows) && batchRows >= 1 && batchRows <= 2 ** 31)) {
      throw new RangeError(`quire: batchRows is a whole number of rows from 1 to 2^31, not ${String(batchRows)}`);
    }
    const m = bindings();
    const width = this.columns.length;
    const handle = new m.ViewBatchWriter(this.handle, batchRows ?? 0);
    const batches: ColumnBatch[] = [];
    const take = () => {
      const n = handle.batches();
      for (let b = 0; b < n; b++) {
        const rows = handle.batchRows(b);
        const columns: ColumnBuffers[] = [];
        for (let c = 0; c < width; c++) {
          const r = handle.column(b, c);
          // HEAPU8 is taken after the calls: memory may have grown; every buffer is copied at once.
          const heap = m.HEAPU8;
          columns.push({
            nulls: r.nulls,
            validity: heap.slice(r.validity, r.validity + r.validityBytes),
            values: heap.slice(r.values, r.values + r.valuesBytes),
            offsets: r.offsets ? new Int32Array(heap.buffer, r.offsets, rows + 1).slice() : undefined,
          });
        }
        batches.push({ rows, columns });
      }
      handle.clearBatches();
    };
    const check = (e: ErrorRecord) => {
      if (e.code) throw QuireError.fromRecord(e);
    };
    try {
      check(handle.error());
      const types = handle.types().split(',');
      for await (const piece of pieces(writeSource(source))) {
        if (piece.length === 0) continue;
        const err = withInput(piece, (pointer, length) => handle.feed(pointer, length));
        take();
        check(err);
      }
      const err = handle.finish();
      take();
      check(err);
      return { types, batches };
    } finally {
      handle.delete();
    }
  }

  async #collect(kind: OutputKind, source: ViewWriteSource, options: ViewWriteOptions): Promise<Uint8Array[]> {
    const parts: Uint8Array[] = [];
    await this.#write(kind, source, options, (bytes) => parts.push(bytes));
    return parts;
  }

  /** Feeds the source to core's table_writer (files.ts drives it); each piece of output goes to `emit` as soon as it is written. */
  async #write(kind: OutputKind, source: ViewWriteSource, options: ViewWriteOptions, emit: (bytes: Uint8Array) => void): Promise<number> {
    const { out: _out, ...writeOptions } = options;
    const handle = new (bindings().ViewWriter)(this.handle, kind, writeOptionsJson(writeOptions));
    return driveWriter(handle, pieces(writeSource(source)), emit);
  }

  /** Same as close(), for `using v = view.compile(...)`. */
  [Symbol.dispose](): void {
    this.close();
  }
}

const decoder = new TextDecoder();
/** Rows of a record batch and a Parquet row group by default (core's batch_options::DEFAULT_BATCH_ROWS). */
const DEFAULT_BATCH_ROWS = 122_880;


/** Node: `bytes` written to `out` through a temporary name, and an empty array; else the bytes. */
function toFileOrBytes(out: string | undefined, bytes: Uint8Array): Uint8Array {
  if (out === undefined) return bytes;
  writeThroughTemp(out, (write) => write(bytes));
  return new Uint8Array(0);
}

/** Resource objects become NDJSON (JSON.stringify writes no raw line end), one line each. */
function writeSource(source: ViewWriteSource): ViewSource {
  if (Array.isArray(source)) return source.map((r) => JSON.stringify(r) + '\n').join('');
  if (source !== null && typeof source === 'object' && 'resourceType' in source && !(source instanceof Uint8Array)) return JSON.stringify(source) + '\n';
  return source as ViewSource;
}

/** The source in pieces, each at most as large as what the source gives at once; a Blob (a File) is read as its stream. */
async function* pieces(source: ViewSource): AsyncGenerator<Uint8Array> {
  const bytes = typeof Blob !== 'undefined' && source instanceof Blob ? (source.stream() as ReadableStream<Uint8Array>) : (source as Exclude<ViewSource, Blob>);
  yield* byteChunks(bytes, 'quire: a view streams a Uint8Array, an ArrayBuffer, a string, a Blob, a Node Readable or a ReadableStream');
}

async function* rowsOf(texts: AsyncGenerator<string>): AsyncGenerator<Row> {
  for await (const t of texts) yield* parseRows(t);
}

function compileView(definition: ViewDefinition | Input): CompiledView {
  const input = isInput(definition) ? definition : JSON.stringify(definition);
  if (!isInput(definition) && (definition === null || typeof definition !== 'object')) throw new TypeError('quire: a ViewDefinition is an object, JSON text or bytes');
  const handle = withInput(input, (pointer, length) => new (bindings().CompiledView)(pointer, length));
  const err = handle.error();
  if (err.code) {
    handle.delete();
    throw QuireError.fromRecord(err);
  }
  return new CompiledView(INTERNAL, handle);
}

/** Runs `fn` with the compiled view: the given one, or one compiled for the call and closed after it. */
function withView<T>(v: ViewInput, fn: (compiled: CompiledView) => T): T {
  if (v instanceof CompiledView) return fn(v);
  const compiled = compileView(v);
  try {
    return fn(compiled);
  } finally {
    compiled.close();
  }
}

async function withViewAsync<T>(v: ViewInput, fn: (compiled: CompiledView) => Promise<T>): Promise<T> {
  if (v instanceof CompiledView) return fn(v);
  const compiled = compileView(v);
  try {
    return await fn(compiled);
  } finally {
    compiled.close();
  }
}

async function* streamWith<T>(v: ViewInput, fn: (compiled: CompiledView) => AsyncGenerator<T>): AsyncGenerator<T> {
  if (v instanceof CompiledView) {
    yield* fn(v);
    return;
  }
  const compiled = compileView(v);
  try {
    yield* fn(compiled);
  } finally {
    compiled.close();
  }
}

/** The ViewDefinition module (SQL on FHIR v2). */
export const view = {
  /**
   * Checks and compiles a ViewDefinition (an object, or its JSON text or bytes) once. Throws
   * QuireError: INVALID_VIEW (a rule of the specification broken), INVALID_FHIRPATH or
   * UNKNOWN_FUNCTION (an expression in it), each with `path` the place in the view
   * (`select[0].column[1].name`).
   */
  compile(definition: ViewDefinition | Input): CompiledView {
    return compileView(definition);
  },

  /**
   * The rows of a view over resources, as objects (see CompiledView.run(): decimals become JS
   * numbers; runText() keeps their text). `definition` may be a compiled view (left open) or a
   * definition (compiled for the call).
   */
  run(definition: ViewInput, resources: ViewResources): Row[] {
    return withView(definition, (v) => v.run(resources));
  },

  /** The rows as core's NDJSON text, one row object per line, every number exactly as in the resources. */
  runText(definition: ViewInput, resources: ViewResources): string {
    return withView(definition, (v) => v.runText(resources));
  },

  /**
   * The rows of an NDJSON source (bytes or text whole, a Blob or File, a ReadableStream, a Node
   * Readable or any async iterable of chunks) one by one: `for await (const row of view.stream(v,
   * source))`. Memory stays bounded by one piece of the source plus the longest line. A bad line
   * throws QuireError, after the rows of the lines before it, with its `line`: a line that is not
   * JSON has its `offset` in the whole stream too; an error of the view on a line (`path` in the
   * view) names the line in its message.
   */
  stream(definition: ViewInput, source: ViewSource, options?: ViewStreamOptions): AsyncGenerator<Row> {
    return streamWith(definition, (v) => v.stream(source, options));
  },

  /** As stream(), yielding core's NDJSON text of the rows of each piece of the source (possibly ""). */
  streamText(definition: ViewInput, source: ViewSource, options?: ViewStreamOptions): AsyncGenerator<string> {
    return streamWith(definition, (v) => v.streamText(source, options));
  },

  /**
   * The rows as a .quire table's bytes (see CompiledView.toQuire()): `format.open()` reads them.
   * With `out` (Node), writes the file there instead and resolves to an empty Uint8Array; use
   * CompiledView.writeFile() for the row count.
   */
  async toQuire(definition: ViewInput, source: ViewWriteSource, options: ViewWriteOptions = {}): Promise<Uint8Array> {
    return withViewAsync(definition, async (v) => {
      if (options.out === undefined) return v.toQuire(source, options);
      await v.writeFile(options.out, source, options);
      return new Uint8Array(0);
    });
  },

  /**
   * The rows as an Arrow IPC file's bytes (see CompiledView.toArrow()), made with the apache-arrow
   * module the caller passes as `options.arrow`. With `out` (Node), writes the file there instead
   * and resolves to an empty Uint8Array.
   */
  async toArrow(definition: ViewInput, source: ViewWriteSource, options: ViewArrowOptions): Promise<Uint8Array> {
    return withViewAsync(definition, (v) => v.toArrow(source, options));
  },

  /** The rows as an apache-arrow Table (see CompiledView.toArrowTable()). */
  toArrowTable<T = unknown>(definition: ViewInput, source: ViewWriteSource, options: ViewArrowOptions): Promise<T> {
    return withViewAsync(definition, (v) => v.toArrowTable<T>(source, options));
  },

  /**
   * The rows as a Parquet file's bytes (see CompiledView.toParquet()), written by the parquet-wasm
   * module passed as `options.parquet` from apache-arrow's table. With `out` (Node), as toArrow().
   */
  async toParquet(definition: ViewInput, source: ViewWriteSource, options: ViewParquetOptions): Promise<Uint8Array> {
    return withViewAsync(definition, (v) => v.toParquet(source, options));
  },

  /** The rows as CSV text, as core writes it (see CompiledView.toCsv()). */
  toCsv(definition: ViewInput, source: ViewWriteSource): Promise<string> {
    return withViewAsync(definition, (v) => v.toCsv(source));
  },

  /** The rows as NDJSON text, as core writes it (see CompiledView.toNdjson()). */
  toNdjson(definition: ViewInput, source: ViewWriteSource): Promise<string> {
    return withViewAsync(definition, (v) => v.toNdjson(source));
  },
};
