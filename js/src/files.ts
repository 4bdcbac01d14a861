// Writing tables out, once for the package: the drive of core's streaming writers (format's
// FormatStreamWriter, view's ViewWriter) and, in Node, a file written under a temporary name
// renamed at the end, so that an error leaves no file and a reader never sees half of one.
import type { EmbindHandle, ErrorRecord } from './quire.mjs';
import { QuireError } from './errors.js';
import { wasm, withInput } from './module.js';

const isNode = typeof process !== 'undefined' && typeof process.versions?.node === 'string';

/** @internal */
export type NodeFs = {
  openSync(path: string, flags: string): number;
  closeSync(fd: number): void;
  writeSync(fd: number, buffer: Uint8Array, offset: number, length: number): number;
  fstatSync(fd: number): { size: number };
  readSync(fd: number, buffer: Uint8Array, offset: number, length: number, position: number): number;
  renameSync(from: string, to: string): void;
  rmSync(path: string, options?: { force?: boolean }): void;
};

/** @internal Node's fs, loaded without a static import. */
export function nodeFs(): NodeFs {
  // process.getBuiltinModule (Node 20.16+) loads fs synchronously without a static import that
  // browser bundlers would trip on.
  const get = (process as unknown as { getBuiltinModule?: (id: string) => unknown }).getBuiltinModule;
  if (!isNode || !get) throw new Error('quire: opening a file by path needs Node.js 20.16 or newer');
  return get('node:fs') as NodeFs;
}

/**
 * @internal Node: writes `path` through `${path}.tmp-PID`: `fill` is given a function that appends
 * bytes to it; when `fill` returns (or its Promise resolves) the temporary is closed and renamed
 * to `path`; when it throws (or rejects) the temporary is removed and the error passed on.
 */
export function writeThroughTemp<T>(path: string, fill: (write: (bytes: Uint8Array) => void) => T): T {
  const fs = nodeFs();
  const temp = `${path}.tmp-${process.pid}`;
  const fd = fs.openSync(temp, 'w');
  let open = true;
  const write = (bytes: Uint8Array) => {
    for (let done = 0; done < bytes.length; ) done += fs.writeSync(fd, bytes, done, bytes.length - done);
  };
  const fail = (e: unknown): never => {
    if (open) fs.closeSync(fd);
    open = false;
    fs.rmSync(temp, { force: true });
    throw e;
  };
  const finish = <V>(value: V): V => {
    try {
      fs.closeSync(fd);
      open = false;
      fs.renameSync(temp, path);
      return value;
    } catch (e) {
      return fail(e);
    }
  };
  let result: T;
  try {
    result = fill(write);
  } catch (e) {
    return fail(e);
  }
  if (result instanceof Promise) return result.then(finish, fail) as T;
  return finish(result);
}

/** @internal A wasm-side streaming writer: fed pieces of input, it keeps the output in the heap until cleared. */
export interface StreamWriterHandle extends EmbindHandle {
  error(): ErrorRecord;
  feed(pointer: number, length: number): ErrorRecord;
  finish(): ErrorRecord;
  rows(): number;
  outputPointer(): number;
  outputSize(): number;
  clearOutput(): void;
}

function check(e: ErrorRecord): void {
  if (e.code) throw QuireError.fromRecord(e);
}

/**
 * @internal Feeds `pieces` to `handle`, hands each piece of output to `emit` as soon as it is
 * written (copied out of the heap at once, so the heap holds one piece at a time), and resolves
 * to the rows written. The handle is deleted at the end, whatever happens. Rejects with
 * QuireError: the writer's own error first, then each piece's, then finish()'s.
 */
export async function driveWriter(handle: StreamWriterHandle, pieces: AsyncIterable<Uint8Array>, emit: (bytes: Uint8Array) => void): Promise<number> {
  const drain = () => {
    const size = handle.outputSize();
    if (size === 0) return;
    const pointer = handle.outputPointer();
    // HEAPU8 is taken after the call that wrote: memory may have grown.
    emit((wasm() as unknown as { HEAPU8: Uint8Array }).HEAPU8.slice(pointer, pointer + size));
    handle.clearOutput();
  };
  try {
    check(handle.error());
    for await (const piece of pieces) {
      if (piece.length === 0) continue;
      const err = withInput(piece, (pointer, length) => handle.feed(pointer, length));
      drain();
      check(err);
    }
    const err = handle.finish();
    drain();
    check(err);
    return handle.rows();
  } finally {
    handle.delete();
  }
}

/** @internal The pieces as one array (no copy when there is one). */
export function concatBytes(parts: Uint8Array[]): Uint8Array {
  if (parts.length === 1) return parts[0]!;
  const out = new Uint8Array(parts.reduce((n, p) => n + p.length, 0));
  let at = 0;
  for (const p of parts) {
    out.set(p, at);
    at += p.length;
  }
  return out;
}
