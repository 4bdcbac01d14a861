// The NDJSON view's logic without DOM: the line index (the byte offset where each line starts,
// built from slices of any size as they arrive (a line may span slices), in a growing Float64Array:
// offsets past 4 GiB stay exact) and the unchecked invariants' notes folded per file. Node runs it
// in test/kinds_model.test.mjs.
export class LineIndex {
  #starts = new Float64Array(1024);
  #count = 0;
  #bytes = 0;
  #endsWithNewline = true;

  /** Feeds the next slice of the file (slices in order, from offset 0). */
  push(slice) {
    if (slice.length === 0) return;
    if (this.#endsWithNewline) this.#add(this.#bytes);
    let i = slice.indexOf(0x0a);
    while (i !== -1) {
      if (i + 1 < slice.length) this.#add(this.#bytes + i + 1);
      i = slice.indexOf(0x0a, i + 1);
    }
    this.#endsWithNewline = slice[slice.length - 1] === 0x0a;
    this.#bytes += slice.length;
  }

  #add(offset) {
    if (this.#count === this.#starts.length) {
      const grown = new Float64Array(this.#starts.length * 2);
      grown.set(this.#starts);
      this.#starts = grown;
    }
    this.#starts[this.#count++] = offset;
  }

  /** Lines seen so far (a last line without its newline counts). */
  get count() {
    return this.#count;
  }

  /** Bytes fed so far. */
  get bytes() {
    return this.#bytes;
  }

  /** Byte range [start, end) of line n (1-based) without its LF or CRLF, or undefined. */
  range(n, readBytes = this.#bytes) {
    if (n < 1 || n > this.#count) return undefined;
    const start = this.#starts[n - 1];
    const next = n < this.#count ? this.#starts[n] : readBytes;
    return [start, next];
  }
}

/** Trims a line's bytes of its line end (LF, CRLF). */
export function trimLineEnd(bytes) {
  let end = bytes.length;
  if (end && bytes[end - 1] === 0x0a) end--;
  if (end && bytes[end - 1] === 0x0d) end--;
  return bytes.subarray(0, end);
}

/**
 * The invariants core could not evaluate, folded by reason. Core reports each one once per
 * validation, so once per line of an NDJSON file: the same note on every line says nothing more
 * than one note for the file with the number of lines it was on.
 */
export class UncheckedNotes {
  #byReason = new Map(); // core's reason -> { keys, lines, last }
  #max;

  /** `maxReasons` bounds the notes kept (a reason that quotes the data could differ on each line). */
  constructor(maxReasons = 50) {
    this.#max = maxReasons;
  }

  /** True for an issue of an invariant not checked (core's issue type "informational", with its key). */
  static isUnchecked(issue) {
    return issue?.code === 'informational' && typeof issue.key === 'string' && issue.key !== '';
  }

  /**
   * Folds an unchecked invariant's issue of line `line` (lines in order) into its reason's note.
   * False when it is not such an issue, or when it has a new reason and maxReasons notes exist
   * already: the caller lists it as it lists any other issue.
   */
  add(line, issue) {
    if (!UncheckedNotes.isUnchecked(issue)) return false;
    // Core's details: "invariant txt-1 not checked: <why>"; the why is what lines share.
    const prefix = `invariant ${issue.key} not checked: `;
    const why = issue.details.startsWith(prefix) ? issue.details.slice(prefix.length) : issue.details;
    let note = this.#byReason.get(why);
    if (!note) {
      if (this.#byReason.size >= this.#max) return false;
      note = { keys: [], lines: 0, last: 0 };
      this.#byReason.set(why, note);
    }
    if (!note.keys.includes(issue.key)) note.keys.push(issue.key);
    if (note.last !== line) {
      note.lines++;
      note.last = line;
    }
    return true;
  }

  /** The notes in the order their reasons first came: `{ keys, why, lines }`. */
  notes() {
    return [...this.#byReason].map(([why, n]) => ({ keys: [...n.keys], why, lines: n.lines }));
  }

  clear() {
    this.#byReason.clear();
  }
}

const lineCount = new Intl.NumberFormat('en-US');

/** A note as the page shows it: `txt-1, txt-2 not checked on 1,234 lines: <core's reason>`. */
export function uncheckedText(note) {
  return `${note.keys.join(', ')} not checked on ${lineCount.format(note.lines)} ${note.lines === 1 ? 'line' : 'lines'}: ${note.why}`;
}
