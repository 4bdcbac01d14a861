// The byte sources ndjson.stream() and the view functions read, cut into the pieces that are fed
// to the wasm side one at a time: each piece is one copy into the heap, so a large source never
// sits in the heap whole.

/** @internal Bytes or text whole, a WHATWG ReadableStream, or any async iterable of chunks (a Node Readable). */
export type ByteSource = Uint8Array | ArrayBuffer | string | AsyncIterable<Uint8Array | string> | ReadableStream<Uint8Array>;

/** Bytes fed to the wasm side at once when the source is one big buffer. */
const SLICE = 1 << 20;
const encoder = new TextEncoder();

/**
 * @internal The source in pieces, each at most as large as what the source gives at once (a
 * buffer in slices of 1 MiB); text and string chunks are encoded as UTF-8. Anything else is a
 * TypeError with `refusal` as its message, thrown at the first read.
 */
export async function* byteChunks(source: ByteSource, refusal: string): AsyncGenerator<Uint8Array> {
  if (typeof source === 'string') source = encoder.encode(source);
  if (source instanceof ArrayBuffer) source = new Uint8Array(source);
  if (source instanceof Uint8Array) {
    for (let at = 0; at < source.length; at += SLICE) yield source.subarray(at, at + SLICE);
    return;
  }
  if (typeof (source as ReadableStream<Uint8Array>).getReader === 'function') {
    // Not every browser makes ReadableStream async-iterable: read it through its reader.
    const reader = (source as ReadableStream<Uint8Array>).getReader();
    try {
      for (;;) {
        const { done, value } = await reader.read();
        if (done) return;
        yield typeof value === 'string' ? encoder.encode(value) : value;
      }
    } finally {
      reader.releaseLock();
    }
  }
  if (Symbol.asyncIterator in (source as object)) {
    for await (const chunk of source as AsyncIterable<Uint8Array | string>) yield typeof chunk === 'string' ? encoder.encode(chunk) : chunk;
    return;
  }
  throw new TypeError(refusal);
}
