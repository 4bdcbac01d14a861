// Row objects into core's columnar write (core: write_columns, format_columns.cpp) in one call:
// the rows are walked once (for-in, which reads each value through V8's enum cache: 2-3x faster
// than a keyed load per column) into typed arrays per column — a value kind a row (the JSON value
// JSON.stringify would write for the key), numbers as doubles, the column's strings — which are
// then copied into the wasm heap, the text as one UTF-8 buffer with offsets (encodeInto straight
// into the heap; one call for a column whose text is ASCII). Core reads them as write_ndjson reads
// the NDJSON of the same rows, so the file is the same, byte for byte. No JSON text per row.
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

/** One column while the rows are walked: typed arrays in JavaScript, copied into the heap after. */
class Column {
  readonly kinds: Uint8Array;
  reals: Float64Array | undefined;
  offsets: Uint32Array | undefined; // UTF-16 units until the text is encoded
  joined = ''; // the column's strings one after another (a rope: += is cheaper than a join)
  units = 0;
  filled = 0; // rows whose end offset is set

  constructor(
    readonly name: string,
    readonly rows: number,
  ) {
    this.kinds = new Uint8Array(rows); // ABSENT
  }

  real(r: number, v: number): void {
    (this.reals ??= new Float64Array(this.rows))[r] = v;
    this.kinds[r] = REAL;
  }

  text(r: number, kind: number, s: string): void {
    const offsets = (this.offsets ??= new Uint32Array(this.rows + 1));
    for (let j = this.filled; j < r; j++) offsets[j + 1] = this.units;
    this.units += s.length;
    offsets[r + 1] = this.units;
    this.filled = r + 1;
    this.joined += s;
    this.kinds[r] = kind;
  }

  /** Row r's value `v` (a member JSON.stringify writes); false when the rows are to go the NDJSON way. */
  put(r: number, v: unknown): boolean {
    switch (typeof v) {
      case 'number':
        if (v - v === 0) this.real(r, v);
        else this.kinds[r] = NULL; // NaN and the infinities: JSON's null
        return true;
      case 'string':
        this.text(r, TEXT, v);
        return true;
      case 'boolean':
        this.kinds[r] = v ? TRUE : FALSE;
        return true;
      case 'bigint':
        // Its digits, as a JSON number: exact where a double is not.
        this.text(r, NUMBER_TEXT, v.toString());
        return true;
      case 'object': {
        if (v === null) {
          this.kinds[r] = NULL;
          return true;
        }
        // What JSON.stringify writes for it: an object or array's text, or (toJSON, boxed
        // primitives) the primitive that text stands for.
        const t = JSON.stringify(v);
        if (t === undefined) return true;
        const first = t.charCodeAt(0);
        if (first === 123 /* { */ || first === 91 /* [ */) {
          this.text(r, JSON_TEXT, t);
          return true;
        }
        const p = JSON.parse(t) as unknown;
        if (typeof p === 'number') {
          this.text(r, NUMBER_TEXT, t);
          return true;
        }
        return this.put(r, p);
      }
      default:
        return true; // undefined, functions, symbols: no member
    }
  }
}

/** The rows as columns in first-seen key order; undefined when a row is not taken here. */
function walkRows(rows: readonly object[]): Column[] | undefined {
  for (const _ in {}) return undefined; // Object.prototype has enumerable members: for-in would see them
  const n = rows.length;
  const cols: Column[] = [];
  const byName = new Map<string, Column>();
  for (let r = 0; r < n; r++) {
    const row = rows[r] as Record<string, unknown>;
    if (row === null || typeof row !== 'object') return undefined;
    const proto = Object.getPrototypeOf(row);
    if (proto !== objectProto && proto !== null) return undefined;
    let i = 0;
    for (const k in row) {
      const v = row[k];
      // Rows of one shape meet their keys at the same positions: no lookup.
      let c: Column | undefined = cols[i];
      if (c === undefined || c.name !== k) {
        c = byName.get(k);
        if (c === undefined) {
          if (k === 'toJSON' && typeof v === 'function') return undefined;
          if (skipped(v)) continue;
          c = new Column(k, n);
          byName.set(k, c);
          cols.push(c);
        }
      }
      i++;
      if (!c.put(r, v)) return undefined;
    }
  }
  return cols;
}

/**
 * Writes `rows` through core's columnar entry; undefined when they are to go the NDJSON way.
 * Throws QuireError for what core refuses (SCHEMA_MISMATCH with the row as `line`...).
 */
export function writeRowColumns(rows: readonly object[], optionsJson: string): Uint8Array | undefined {
  const cols = walkRows(rows);
  if (!cols) return undefined;
  const m = wasm('format') as unknown as ColumnBindings;
  const n = rows.length;
  const owned: number[] = [];
  try {
    const blocks: ColumnBlock[] = [];
    for (const c of cols) {
      const b = copyColumn(m, c, n, owned);
      if (!b) return undefined;
      blocks.push(b);
    }
    // Names, then the descriptors, after every other allocation.
    const nameBytes = cols.map((c) => encoder.encode(c.name));
    let nameTotal = 0;
    for (const b of nameBytes) nameTotal += b.length;
    const namesAt = allocate(m as never, nameTotal + 1, 'column names');
    owned.push(namesAt);
    const descAt = allocate(m as never, COLUMN_WORDS * 4 * Math.max(1, cols.length), 'column descriptors');
    owned.push(descAt);
    const heap = m.HEAPU8;
    const words = new Uint32Array(heap.buffer, descAt, COLUMN_WORDS * cols.length);
    let at = namesAt;
    for (let c = 0; c < cols.length; c++) {
      heap.set(nameBytes[c], at);
      const b = blocks[c];
      const d = c * COLUMN_WORDS;
      words[d] = at;
      words[d + 1] = nameBytes[c].length;
      words[d + 2] = b.kinds;
      words[d + 3] = 0;
      words[d + 4] = b.reals;
      words[d + 5] = b.text;
      words[d + 6] = b.textLength;
      words[d + 7] = b.offsets;
      at += nameBytes[c].length;
    }
    const out = m.formatWriteColumns(descAt, cols.length, n, optionsJson);
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

/** Heap pointers of one column's buffers (0: not given). */
interface ColumnBlock {
  kinds: number;
  reals: number;
  offsets: number;
  text: number;
  textLength: number;
}

/** One column into the heap; undefined when its text sends the rows the NDJSON way. */
function copyColumn(m: ColumnBindings, c: Column, n: number, owned: number[]): ColumnBlock | undefined {
  const b: ColumnBlock = { kinds: 0, reals: 0, offsets: 0, text: 0, textLength: 0 };
  const realsBytes = c.reals ? 8 * n : 0;
  const offsetsBytes = c.offsets ? 4 * (n + 1) : 0;
  const block = allocate(m as never, realsBytes + offsetsBytes + n + 8, `column '${c.name}'`);
  owned.push(block);
  b.reals = c.reals ? block : 0;
  b.offsets = c.offsets ? block + realsBytes : 0;
  b.kinds = block + realsBytes + offsetsBytes;
  let heap = m.HEAPU8;
  heap.set(c.kinds, b.kinds);
  if (c.reals) new Float64Array(heap.buffer, b.reals, n).set(c.reals);
  if (!c.offsets) return b;
  const offsets = c.offsets;
  for (let j = c.filled; j < n; j++) offsets[j + 1] = c.units;
  const units = c.units;
  // ASCII text: one encodeInto of the whole column, and its UTF-16 offsets are its byte offsets.
  const joined = c.joined;
  const asciiAt = allocate(m as never, units + 1, `text of column '${c.name}'`);
  owned.push(asciiAt);
  heap = m.HEAPU8;
  const done = encoder.encodeInto(joined, heap.subarray(asciiAt, asciiAt + units));
  if (done.read === units && done.written === units) {
    new Uint32Array(heap.buffer, b.offsets, n + 1).set(offsets);
    b.text = asciiAt;
    b.textLength = units;
    return b;
  }
  // Not ASCII: each value on its own, offsets in bytes (a UTF-16 unit is at most 3 bytes).
  const textAt = allocate(m as never, 3 * units + 1, `text of column '${c.name}'`);
  owned.push(textAt);
  heap = m.HEAPU8;
  const bytes = new Uint32Array(heap.buffer, b.offsets, n + 1);
  bytes[0] = 0;
  let pos = 0;
  for (let r = 0; r < n; r++) {
    if (offsets[r + 1] !== offsets[r]) {
      const str = joined.slice(offsets[r], offsets[r + 1]);
      if (!isWellFormed(str)) return undefined; // a lone surrogate: JSON.stringify escapes it, core's JSON refuses it
      pos += encoder.encodeInto(str, heap.subarray(textAt + pos, textAt + 3 * units)).written;
    }
    bytes[r + 1] = pos;
  }
  b.text = textAt;
  b.textLength = pos;
  return b;
}
