// The JSON layer: check, count and walk JSON documents with the same core as native quire.
import type { JsonDocumentHandle, JsonStatsRecord } from './quire.mjs';
import { QuireError } from './errors.js';
import { Handle } from './handles.js';
import { INTERNAL, checkInternal } from './internal.js';
import { wasm, withInput, type Input } from './module.js';

/** Bounds that make hostile input cost a bounded amount. */
export interface JsonLimits {
  /** Deepest nesting allowed (default 1024; at most 4096). */
  maxDepth?: number;
  /** Largest document in bytes (default 1 GiB). */
  maxDocumentBytes?: number;
}

/** Counts of a document's values by kind, and its deepest nesting. */
export interface JsonStats {
  objects: number;
  arrays: number;
  strings: number;
  numbers: number;
  booleans: number;
  nulls: number;
  /** Object members. */
  keys: number;
  /** All values (keys are not values). */
  values: number;
  /** A scalar document has depth 0, `[]` has 1. */
  maxDepth: number;
  bytes: number;
}

export type JsonKind = 'null' | 'boolean' | 'number' | 'string' | 'array' | 'object';

function toStats(r: JsonStatsRecord): JsonStats {
  return {
    objects: r.objects,
    arrays: r.arrays,
    strings: r.strings,
    numbers: r.numbers,
    booleans: r.booleans,
    nulls: r.nulls,
    keys: r.keys,
    values: r.objects + r.arrays + r.strings + r.numbers + r.booleans + r.nulls,
    maxDepth: r.maxDepth,
    bytes: r.bytes,
  };
}

function run(input: Input, limits: JsonLimits | undefined): JsonStatsRecord {
  return withInput(input, (pointer, length) => wasm('json').jsonCheck(pointer, length, limits?.maxDepth ?? 0, limits?.maxDocumentBytes ?? 0));
}

/** A parsed document held in wasm memory. close() it when done (a finalizer frees it otherwise). */
export class JsonDocument extends Handle<JsonDocumentHandle> {
  /** @internal */
  constructor(token: typeof INTERNAL, handle: JsonDocumentHandle) {
    checkInternal(token, 'JsonDocument', 'json.parse()');
    super(handle, 'JsonDocument');
  }

  /** Number of values in the document. */
  get valueCount(): number {
    return this.handle.valueCount();
  }

  /** Deepest nesting. */
  get maxDepth(): number {
    return this.handle.maxDepth();
  }

  /** Bytes of wasm memory the document holds (its tape, strings and input). */
  get memoryBytes(): number {
    return this.handle.memoryBytes();
  }

  /**
   * The value at a JSON Pointer (RFC 6901; `''` is the whole document) as compact JSON text,
   * numbers exactly as written (`0.700` stays `0.700`); undefined when there is none.
   */
  text(pointer = ''): string | undefined {
    const t = this.handle.textAt(pointer);
    return t === '' ? undefined : t;
  }

  /** The value at a JSON Pointer as a JavaScript value (numbers become JS numbers); undefined when absent. */
  get(pointer = ''): unknown {
    const t = this.text(pointer);
    return t === undefined ? undefined : JSON.parse(t);
  }

  /** The kind of the value at a JSON Pointer; undefined when absent. */
  kind(pointer = ''): JsonKind | undefined {
    const k = this.handle.kindAt(pointer);
    return k === '' ? undefined : (k as JsonKind);
  }
}

/** The JSON layer. */
export const json = {
  /** Validates a document: null when it is valid JSON, else the QuireError that says what and where. */
  check(input: Input, limits?: JsonLimits): QuireError | null {
    const r = run(input, limits);
    return r.error.code ? QuireError.fromRecord(r.error) : null;
  },

  /** Counts a document's values by kind. Throws QuireError when it is not valid JSON. */
  stats(input: Input, limits?: JsonLimits): JsonStats {
    const r = run(input, limits);
    if (r.error.code) throw QuireError.fromRecord(r.error);
    return toStats(r);
  },

  /** Parses a document into wasm memory for repeated lookups. Throws QuireError when it is not valid JSON. */
  parse(input: Input, limits?: JsonLimits): JsonDocument {
    const m = wasm('json');
    let handle: JsonDocumentHandle | undefined;
    // The document keeps the heap copy of the input (numbers' exact text points into it) and frees it with itself.
    withInput(
      input,
      (pointer, length) => {
        handle = new m.JsonDocument(pointer, length, limits?.maxDepth ?? 0, limits?.maxDocumentBytes ?? 0);
        return handle;
      },
      () => true,
    );
    const err = handle!.error();
    if (err.code) {
      handle!.delete();
      throw QuireError.fromRecord(err);
    }
    return new JsonDocument(INTERNAL, handle!);
  },
};
