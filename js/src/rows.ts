// Row objects into core's columnar write (core: write_columns, format_columns.cpp) in one call:
// each column is walked once in JavaScript into buffers in the wasm heap — a value kind a row
// (the JSON value JSON.stringify would write for the key), numbers as doubles, and the column's
// text as one UTF-8 buffer with offsets (encodeInto straight into the heap; one call for a column
// whose text is ASCII) — and core reads them as write_ndjson reads the NDJSON of the same rows,
// so the file is the same, byte for byte. No JSON text is made per row.
//
// Rows this path does not take as they are (not plain objects, a toJSON of their own, a string
// with a lone surrogate...) go the NDJSON way (undefined is returned), which refuses them or
// writes them as before.
import { QuireError } from './errors.js';
import { allocate, wasm } from './module.js';

interface BytesHandle {
  error(): { code: number };
  pointer(): number;
  size(): number;
  delete(): void;
}
interface ColumnBindings {
  HEAPU8: Uint8Array;
  _free(pointer: number): void;
  formatWriteColumns(descriptors: number, columns: number, rows: number, optionsJson: string): BytesHandle;
}

// core's value_kind (quire/format.h)
const ABSENT = 0;
const NULL = 1;
const FALSE = 2;
const TRUE = 3;
const REAL = 5;
const NUMBER_TEXT = 6;
const TEXT = 7;
const JSON_TEXT = 8;
/** 32-bit words of one column's descriptor (wasm/bind_format.cpp: COLUMN_WORDS). */
const COLUMN_WORDS = 8;

const encoder = new TextEncoder();
const objectProto = Object.prototype;

/** Skipped by JSON.stringify as an object member: no key at all. */
function skipped(v: unknown): boolean {
  return v === undefined || typeof v === 'function' || typeof v === 'symbol';
}

function isWellFormed(s: string): boolean {
  const f = (s as unknown as { isWellFormed?: () => boolean }).isWellFormed;
  return f ? f.call(s) : /^(?:[^\uD800-\uDFFF]|[\uD800-\uDBFF][\uDC00-\uDFFF])*$/.test(s);
}

/** The keys of the rows in the order JSON.stringify first meets them; undefined when a row is not taken here. */
function columnNames(rows: readonly object[]): string[] | undefined {
  for (const _ in {}) return undefined; // Object.prototype has enumerable members: for-in would see them
  const names: string[] = [];
  const seen = new Set<string>();
  for (let r = 0; r < rows.length; r++) {
    const row = rows[r] as Record<string, unknown>;
    if (row === null || typeof row !== 'object') return undefined;
    const proto = Object.getPrototypeOf(row);
    if (proto !== objectProto && proto !== null) return undefined;
    for (const k in row) {
      if (seen.has(k)) continue;
      const v = row[k];
      if (k === 'toJSON' && typeof v === 'function') return undefined;
      if (skipped(v)) continue;
      seen.add(k);
      names.push(k);
    }
  }
  return names;
}

/** A column's buffers in the heap: reals (8 a row), offsets (4 a row + 4), kinds (1 a row), one block. */
interface ColumnBlock {
  block: number;
  reals: number;
  offsets: number;
  kinds: number;
  text: number;
  textLength: number;
  hasReals: boolean;
  hasText: boolean;
}

/**
 * Writes `rows` through core's columnar entry; undefined when they are to go the NDJSON way.
 * Throws QuireError for what core refuses (SCHEMA_MISMATCH with the row as `line`...).
 */
export function writeRowColumns(rows: readonly object[], optionsJson: string): Uint8Array | undefined {
  const names = columnNames(rows);
  if (!names) return undefined;
  const m = wasm() as unknown as ColumnBindings;
  const n = rows.length;
  const blocks: ColumnBlock[] = [];
  const owned: number[] = [];
  try {
    for (const name of names) {
      const b = fillColumn(m, rows, name, n, owned);
      if (!b) return undefined;
      blocks.push(b);
    }
    // Names, then the descriptors, after every other allocation.
    const nameBytes = names.map((s) => encoder.encode(s));
    let nameTotal = 0;
    for (const b of nameBytes) nameTotal += b.length;
    const namesAt = allocate(m as never, nameTotal + 1, 'column names');
    owned.push(namesAt);
    const descAt = allocate(m as never, COLUMN_WORDS * 4 * Math.max(1, names.length), 'column descriptors');
    owned.push(descAt);
    const heap = m.HEAPU8;
    const words = new Uint32Array(heap.buffer, descAt, COLUMN_WORDS * names.length);
    let at = namesAt;
    for (let c = 0; c < names.length; c++) {
      heap.set(nameBytes[c], at);
      const b = blocks[c];
      const d = c * COLUMN_WORDS;
      words[d] = at;
      words[d + 1] = nameBytes[c].length;
      words[d + 2] = b.kinds;
      words[d + 3] = 0;
      words[d + 4] = b.hasReals ? b.reals : 0;
      words[d + 5] = b.hasText ? b.text : 0;
      words[d + 6] = b.hasText ? b.textLength : 0;
      words[d + 7] = b.hasText ? b.offsets : 0;
      at += nameBytes[c].length;
    }
    const out = m.formatWriteColumns(descAt, names.length, n, optionsJson);
    try {
      const err = out.error();
      if (err.code) throw QuireError.fromRecord(err as never);
      const pointer = out.pointer();
      return m.HEAPU8.slice(pointer, pointer + out.size());
    } finally {
      out.delete();
    }
  } finally {
    for (const p of owned) m._free(p);
  }
}

/** One column's kinds, numbers and text into the heap; undefined when a value sends the rows the NDJSON way. */
function fillColumn(m: ColumnBindings, rows: readonly object[], name: string, n: number, owned: number[]): ColumnBlock | undefined {
  const realsBytes = 8 * n;
  const offsetsBytes = 4 * (n + 1);
  const block = allocate(m as never, realsBytes + offsetsBytes + n + 8, `column '${name}'`);
  owned.push(block);
  const b: ColumnBlock = {
    block,
    reals: block,
    offsets: block + realsBytes,
    kinds: block + realsBytes + offsetsBytes,
    text: 0,
    textLength: 0,
    hasReals: false,
    hasText: false,
  };
  let heap = m.HEAPU8;
  const reals = new Float64Array(heap.buffer, b.reals, n);
  let offsets = new Uint32Array(heap.buffer, b.offsets, n + 1);
  let kinds = new Uint8Array(heap.buffer, b.kinds, n);
  const strings: string[] = [];
  let units = 0;
  offsets[0] = 0;
  for (let r = 0; r < n; r++) {
    let v = (rows[r] as Record<string, unknown>)[name];
    let kind: number;
    if (typeof v === 'object' && v !== null) {
      // What JSON.stringify writes for it: an object or array's text, or (toJSON, boxed
      // primitives) the primitive that text stands for.
      const t = JSON.stringify(v);
      if (t === undefined) v = undefined;
      else if (t.charCodeAt(0) === 123 /* { */ || t.charCodeAt(0) === 91 /* [ */) {
        kinds[r] = JSON_TEXT;
        strings.push(t);
        units += t.length;
        offsets[r + 1] = units;
        b.hasText = true;
        continue;
      } else v = JSON.parse(t) as unknown;
      if (typeof v === 'number') {
        kinds[r] = NUMBER_TEXT;
        strings.push(t!);
        units += t!.length;
        offsets[r + 1] = units;
        b.hasText = true;
        continue;
      }
    }
    switch (typeof v) {
      case 'number':
        if (v - v === 0) {
          kind = REAL;
          reals[r] = v;
          b.hasReals = true;
        } else kind = NULL; // NaN and the infinities: JSON's null
        break;
      case 'string':
        kind = TEXT;
        strings.push(v);
        units += v.length;
        b.hasText = true;
        break;
      case 'boolean':
        kind = v ? TRUE : FALSE;
        break;
      case 'bigint': {
        // Its digits, as a JSON number: exact where a double is not.
        const t = v.toString();
        kind = NUMBER_TEXT;
        strings.push(t);
        units += t.length;
        b.hasText = true;
        break;
      }
      default:
        kind = v === null ? NULL : ABSENT;
        break;
    }
    kinds[r] = kind;
    offsets[r + 1] = units;
  }
  if (!b.hasText) return b;
  // ASCII text: one encodeInto of the whole column, and its UTF-16 offsets are its byte offsets.
  const joined = strings.join('');
  const asciiAt = allocate(m as never, units + 1, `text of column '${name}'`);
  owned.push(asciiAt);
  heap = m.HEAPU8;
  const done = encoder.encodeInto(joined, heap.subarray(asciiAt, asciiAt + units));
  if (done.read === units && done.written === units) {
    b.text = asciiAt;
    b.textLength = units;
    return b;
  }
  // Not ASCII: each value on its own, offsets in bytes (a UTF-16 unit is at most 3 bytes).
  const textAt = allocate(m as never, 3 * units + 1, `text of column '${name}'`);
  owned.push(textAt);
  heap = m.HEAPU8;
  offsets = new Uint32Array(heap.buffer, b.offsets, n + 1);
  kinds = new Uint8Array(heap.buffer, b.kinds, n);
  let pos = 0;
  let s = 0;
  for (let r = 0; r < n; r++) {
    const k = kinds[r];
    if (k === TEXT || k === NUMBER_TEXT || k === JSON_TEXT) {
      const str = strings[s++];
      if (!isWellFormed(str)) return undefined; // a lone surrogate: JSON.stringify escapes it, core's JSON refuses it
      pos += encoder.encodeInto(str, heap.subarray(textAt + pos, textAt + 3 * units)).written;
    }
    offsets[r + 1] = pos;
  }
  b.text = textAt;
  b.textLength = pos;
  return b;
}
