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

interface NdjsonBindings {
  NdjsonStream: new (maxLineBytes: number, continueOnError: boolean, strict: boolean, maxDepth: number, maxIssues: number) => NdjsonStreamHandle;
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
    const m = wasm() as unknown as NdjsonBindings;
    const handle = new m.NdjsonStream(options?.maxLineBytes ?? 0, options?.continueOnError ?? false, options?.strict ?? false, options?.maxDepth ?? 0, options?.maxIssues ?? 0);
    return new NdjsonStream(INTERNAL, handle, source);
  },
};
