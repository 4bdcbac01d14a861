// NDJSON (FHIR Bulk Data) streaming: bytes go to a wasm-side stream handle chunk by chunk; each
// chunk's results come back as one JSON text. Memory stays bounded by the chunk size plus the
// longest line (maxLineBytes).
import type { EmbindHandle, ErrorRecord } from './quire.mjs';
import { QuireError } from './errors.js';
import { byteChunks } from './chunks.js';
import { Handle } from './handles.js';
import { INTERNAL, checkInternal } from './internal.js';
import { wasm, withInput } from './module.js';
import type { FhirIssue, FhirResource } from './fhir.js';
import { nodeFileReader, type RangeReader } from './format.js';

/** Options of ndjson.stream(). */
export interface NdjsonOptions {
  /** Longest line in bytes (default 16 MiB); a longer one is a LINE_TOO_LONG error. */
  maxLineBytes?: number;
  /** Yield `{ line, error }` for a line that cannot be read and go on (default false: throw QuireError). */
  continueOnError?: boolean;
  /** Fail a line with UNKNOWN_ELEMENT when its resource has elements R4 does not define. */
  strict?: boolean;
  /** Per-resource JSON nesting bound (default 256). */
  maxDepth?: number;
  /** Issues kept per resource (default 1000). */
  maxIssues?: number;
}

/** What the stream yields, in line order: a resource, one of its validation issues, or (with continueOnError) a line that could not be read. */
export type NdjsonItem =
  | { line: number; offset: number; resource: FhirResource }
  | { line: number; issue: FhirIssue }
  | { line: number; error: QuireError };

/** Counts over the stream so far. */
export interface NdjsonStats {
  bytes: number;
  lines: number;
  blankLines: number;
  resources: number;
  badLines: number;
  invalidResources: number;
  issues: number;
  longestLine: number;
  byType: Record<string, number>;
}

/** What ndjson.stream() reads: bytes or text whole, a Node Readable (any async iterable of chunks), or a WHATWG ReadableStream. */
export type NdjsonSource = Uint8Array | ArrayBuffer | string | AsyncIterable<Uint8Array | string> | ReadableStream<Uint8Array>;

interface NdjsonStreamHandle extends EmbindHandle {
  feed(pointer: number, length: number): string;
  finish(): string;
  stats(): string;
}

/** Bytes [start, end) of an input. */
export interface ByteRange {
  start: number;
  end: number;
}

/** One of ndjson.split()'s ranges: part number, bounds at line starts and size. */
export interface SplitRange extends ByteRange {
  part: number;
  bytes: number;
}

/** What ndjson.split(), lineRange() and range() read: bytes whole, a RangeReader (only the bytes near each bound are read), or in Node a file's path. */
export type RangeSource = Uint8Array | RangeReader | string;

interface RangeRecord {
  error: ErrorRecord;
  start: number;
  end: number;
}

interface JsReader {
  read(offset: number, length: number, pointer: number): number;
}

interface NdjsonBindings {
  NdjsonStream: new (maxLineBytes: number, continueOnError: boolean, strict: boolean, maxDepth: number, maxIssues: number) => NdjsonStreamHandle;
  ndjsonLineRange(size: number, reader: JsReader, start: number, end: number): RangeRecord;
  ndjsonSplit(size: number, reader: JsReader, parts: number): { error: ErrorRecord; text: string };
  HEAPU8: Uint8Array;
}

const PIECE_BYTES = 1 << 20;

function rangeReader(source: RangeSource): RangeReader {
  if (typeof source === 'string') return nodeFileReader(source);
  if (source instanceof Uint8Array) {
    const bytes = source;
    return {
      size: bytes.length,
      read(offset, length, into) {
        into.set(bytes.subarray(offset, offset + length));
        return Math.min(length, Math.max(0, bytes.length - offset));
      },
    };
  }
  if (source === null || typeof source !== 'object' || typeof source.read !== 'function' || !Number.isSafeInteger(source.size)) {
    throw new TypeError('quire: a byte range is of a Uint8Array, a RangeReader ({ size, read(offset, length, into) }) or a file path (Node)');
  }
  return source;
}

/** Runs `fn` with the source as a reader; a reader opened here (a path) is closed after. */
function withReader<T>(source: RangeSource, fn: (r: RangeReader) => T): T {
  const reader = rangeReader(source);
  try {
    return fn(reader);
  } finally {
    if (typeof source === 'string') reader.close?.();
  }
}

function heapReader(reader: RangeReader): JsReader {
  return {
    read(offset: number, length: number, pointer: number): number {
      // HEAPU8 is taken inside the call: memory may have grown since.
      const heap = (wasm() as unknown as NdjsonBindings).HEAPU8;
      return reader.read(offset, length, heap.subarray(pointer, pointer + length));
    },
  };
}

function offsetOf(value: unknown, what: string): number {
  if (typeof value !== 'number' || !Number.isSafeInteger(value) || value < 0) throw new TypeError(`quire: ${what} is a whole number of bytes, 0 or more`);
  return value;
}

function lineRangeOf(reader: RangeReader, range: ByteRange): ByteRange {
  if (range === null || typeof range !== 'object') throw new TypeError('quire: a byte range is { start, end }');
  const start = offsetOf(range.start, 'a range\'s start'), end = offsetOf(range.end, 'a range\'s end');
  const r = (wasm('ndjson') as unknown as NdjsonBindings).ndjsonLineRange(reader.size, heapReader(reader), start, end);
  if (r.error.code) throw QuireError.fromRecord(r.error);
  return { start: r.start, end: r.end };
}

/** A feed's results: its errors are core's error record as JSON, the fields of ErrorRecord. */
interface FeedJson {
  items: Array<{ line: number; offset?: number; resource?: FhirResource; issue?: FhirIssue; error?: ErrorRecord }>;
  error: ErrorRecord | null;
}

const NOT_A_SOURCE = 'quire: ndjson.stream() reads a Uint8Array, an ArrayBuffer, a string, a Node Readable or a ReadableStream';

function toError(e: ErrorRecord): QuireError {
  return QuireError.fromRecord({ ...e });
}

/** A stream being read: iterate it with `for await`; `stats` counts what has been read so far. */
export class NdjsonStream extends Handle<NdjsonStreamHandle> implements AsyncIterable<NdjsonItem> {
  readonly #source: NdjsonSource;
  #stats: NdjsonStats | undefined;
  #started = false;

  /** @internal */
  constructor(token: typeof INTERNAL, handle: NdjsonStreamHandle, source: NdjsonSource) {
    checkInternal(token, 'NdjsonStream', 'ndjson.stream()');
    super(handle, 'NdjsonStream');
    this.#source = source;
  }

  /** Counts so far (final once iteration ends). */
  get stats(): NdjsonStats {
    if (!this.closed) this.#stats = JSON.parse(this.handle.stats()) as NdjsonStats;
    return this.#stats ?? { bytes: 0, lines: 0, blankLines: 0, resources: 0, badLines: 0, invalidResources: 0, issues: 0, longestLine: 0, byType: {} };
  }

  async *[Symbol.asyncIterator](): AsyncGenerator<NdjsonItem> {
    if (this.#started) throw new Error('quire: an NdjsonStream can be iterated once');
    this.#started = true;
    try {
      for await (const chunk of byteChunks(this.#source, NOT_A_SOURCE)) {
        const text = withInput(chunk, (pointer, length) => this.handle.feed(pointer, length));
        yield* this.#decode(text);
      }
      yield* this.#decode(this.handle.finish());
    } finally {
      if (!this.closed) this.#stats = JSON.parse(this.handle.stats()) as NdjsonStats;
      this.close();
    }
  }

  *#decode(text: string): Generator<NdjsonItem> {
    const r = JSON.parse(text) as FeedJson;
    for (const item of r.items) {
      if (item.resource) yield { line: item.line, offset: item.offset ?? 0, resource: item.resource };
      else if (item.issue) yield { line: item.line, issue: item.issue };
      else if (item.error && !r.error) yield { line: item.line, error: toError(item.error) };
    }
    if (r.error) throw toError(r.error);
  }
}

/** The NDJSON module. */
export const ndjson = {
  /**
   * Streams FHIR NDJSON (Bulk Data): `for await (const item of ndjson.stream(source)) ...` yields
   * `{ line, resource }` for each resource, `{ line, issue }` for each of its validation issues, and,
   * with continueOnError, `{ line, error }` for a line that cannot be read (else that throws a
   * QuireError with the line number). Blank lines are skipped.
   */
  stream(source: NdjsonSource, options?: NdjsonOptions): NdjsonStream {
    const m = wasm('ndjson') as unknown as NdjsonBindings;
    const handle = new m.NdjsonStream(options?.maxLineBytes ?? 0, options?.continueOnError ?? false, options?.strict ?? false, options?.maxDepth ?? 0, options?.maxIssues ?? 0);
    return new NdjsonStream(INTERNAL, handle, source);
  },

  /**
   * `parts` byte ranges (1..65536) that meet at line starts, each near size / parts bytes, covering
   * the input in order: what `quire split INPUT --parts N` prints. Give one to each task; a task
   * runs its lines with ndjson.range() (as `quire view run --range` does), and every line is run
   * exactly once. Only the bytes near each bound are read.
   */
  split(source: RangeSource, parts: number): SplitRange[] {
    const n = offsetOf(parts, 'parts');
    return withReader(source, (reader) => {
      const r = (wasm('ndjson') as unknown as NdjsonBindings).ndjsonSplit(reader.size, heapReader(reader), n);
      if (r.error.code) throw QuireError.fromRecord(r.error);
      return r.text.split('\n').filter(Boolean).map((line) => JSON.parse(line) as SplitRange);
    });
  },

  /**
   * The bytes that hold exactly the lines starting inside `range`: from the first line start at or
   * after range.start to the first at or after range.end (or the end). Ranges that meet give every
   * line to exactly one of them, wherever they are cut. A start past the end is INVALID_ARGUMENT.
   */
  lineRange(source: RangeSource, range: ByteRange): ByteRange {
    return withReader(source, (reader) => lineRangeOf(reader, range));
  },

  /**
   * The bytes of the lines starting inside `range`, in pieces of at most 1 MiB, read as they are
   * asked for: a source for ndjson.stream() or view.stream() (`view.stream(v, ndjson.range(path,
   * r))`). Line numbers in their errors count from the range's first line.
   */
  async *range(source: RangeSource, range: ByteRange): AsyncGenerator<Uint8Array> {
    const reader = rangeReader(source);
    try {
      const lines = lineRangeOf(reader, range);
      for (let at = lines.start; at < lines.end; ) {
        const piece = new Uint8Array(Math.min(PIECE_BYTES, lines.end - at));
        const got = reader.read(at, piece.length, piece);
        if (got !== piece.length) throw new QuireError('IO_ERROR', `IO_ERROR: the reader returned ${got} of ${piece.length} bytes`, { offset: at });
        yield piece;
        at += got;
      }
    } finally {
      if (typeof source === 'string') reader.close?.();
    }
  },
};
