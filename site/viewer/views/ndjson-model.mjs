// The NDJSON view's line index without DOM: the byte offset where each line starts, built from
// slices of any size as they arrive (a line may span slices), in a growing Float64Array (offsets
// past 4 GiB stay exact). Node runs it in test/kinds_model.test.mjs.
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
