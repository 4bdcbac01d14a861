// The byte sources ndjson.stream(), the view functions and format's streaming writers read, cut
// into the pieces that are fed to the wasm side one at a time: each piece is one copy into the
// heap, so a large source never sits in the heap whole.

/** @internal Bytes or text whole, a WHATWG ReadableStream, or any async iterable of chunks (a Node Readable). */
export type ByteSource =
  | Uint8Array
  | ArrayBuffer
  | string
  | AsyncIterable<Uint8Array | string>
  | ReadableStream<Uint8Array | string>;

/** Bytes fed to the wasm side at once when the source is one big buffer. */
const SLICE = 1 << 20;
const encoder = new TextEncoder();

/**
 * Encodes string chunks as UTF-8. A chunk may end between the two halves of a surrogate pair
 * (text cut by UTF-16 units): the first half waits for the next chunk instead of becoming U+FFFD.
 */
class ChunkEncoder {
  #pending = '';
  encode(chunk: Uint8Array | string): Uint8Array {
    if (typeof chunk !== 'string') return chunk;
    let text = this.#pending + chunk;
    this.#pending = '';
    const last = text.charCodeAt(text.length - 1);
    if (last >= 0xd800 && last <= 0xdbff) {
      this.#pending = text.slice(-1);
      text = text.slice(0, -1);
    }
    return encoder.encode(text);
  }
  flush(): Uint8Array {
    const rest = encoder.encode(this.#pending);
    this.#pending = '';
    return rest;
  }
}

/**
 * @internal The source in pieces, each at most as large as what the source gives at once (a
 * buffer in slices of 1 MiB); text and string chunks are encoded as UTF-8, a surrogate pair cut
 * between two chunks kept whole; no piece is empty. Anything else is a TypeError with
 * `refusal` as its message, thrown at the first read.
 */
export async function* byteChunks(source: ByteSource, refusal: string): AsyncGenerator<Uint8Array> {
  if (typeof source === 'string') source = encoder.encode(source);
  if (source instanceof ArrayBuffer) source = new Uint8Array(source);
  if (source instanceof Uint8Array) {
    for (let at = 0; at < source.length; at += SLICE) yield source.subarray(at, at + SLICE);
    return;
  }
  const text = new ChunkEncoder();
  if (source !== null && typeof source === 'object' && typeof (source as ReadableStream).getReader === 'function') {
    // Not every browser makes ReadableStream async-iterable: read it through its reader.
    const reader = (source as ReadableStream<Uint8Array | string>).getReader();
    try {
      for (;;) {
        const { done, value } = await reader.read();
        if (done) break;
        const piece = text.encode(value);
        if (piece.length > 0) yield piece;
      }
    } finally {
      reader.releaseLock();
    }
    const rest = text.flush();
    if (rest.length > 0) yield rest;
    return;
  }
  if (source !== null && typeof source === 'object' && Symbol.asyncIterator in source) {
    for await (const chunk of source as AsyncIterable<Uint8Array | string>) {
      const piece = text.encode(chunk);
      if (piece.length > 0) yield piece;
    }
    const rest = text.flush();
    if (rest.length > 0) yield rest;
    return;
  }
  throw new TypeError(refusal);
}
