// Loading the one .wasm in Node and in the browser, and moving bytes into its heap.
import type { ModuleOptions, QuireModule, VersionRecord } from './quire.mjs';
import { QuireError } from './errors.js';

/** What init() accepts: nothing (the .wasm beside this file), a compiled module, its bytes, or where to fetch it. */
export type InitInput = WebAssembly.Module | ArrayBuffer | Uint8Array | URL | string | Response | Promise<Response>;

let loaded: QuireModule | undefined;
let loading: Promise<QuireModule> | undefined;

const isNode = typeof process !== 'undefined' && typeof process.versions?.node === 'string';

/**
 * Loads and instantiates the WebAssembly module. Call it once before anything else; later calls
 * return at once (the first one's input wins). In Node the default reads `quire.wasm` beside this
 * file; in the browser it is fetched from there with `WebAssembly.instantiateStreaming`.
 */
export async function init(input?: InitInput): Promise<void> {
  if (loaded) return;
  loading ??= instantiate(input).catch((e: unknown) => {
    loading = undefined;
    throw e;
  });
  loaded = await loading;
}

async function instantiate(input: InitInput | undefined): Promise<QuireModule> {
  // The Emscripten glue is imported here, not at the package's import: its fetch (browser) or
  // read (Node) and evaluation overlap the .wasm's, and importing the package costs one module.
  const glue = import('./quire.mjs');
  glue.catch(() => {}); // its failure is reported where it is awaited, below
  // The glue calls instantiateWasm and waits for done(); a compile that fails must reject init()
  // instead of leaving it waiting forever.
  let failed: (reason: unknown) => void = () => {};
  const failure = new Promise<never>((_, reject) => (failed = reject));
  const options: ModuleOptions = {
    print: (text) => console.log(text),
    printErr: (text) => console.error(text),
  };
  // Bytes are compiled here, not handed to the glue as `wasmBinary`: Emscripten 3.1.6's glue makes
  // `new Uint8Array(wasmBinary)` of them, which copies the whole module (2.8 MB) when they are a
  // Uint8Array (Node's readFile gives a Buffer), before compiling it.
  let bytes: BufferSource | undefined;
  if (input instanceof ArrayBuffer || ArrayBuffer.isView(input)) {
    bytes = input instanceof ArrayBuffer ? input : new Uint8Array(input.buffer as ArrayBuffer, input.byteOffset, input.byteLength);
  } else if (isNode && (input === undefined || input instanceof URL || typeof input === 'string')) {
    // Emscripten 3.1.6's own Node loader calls fetch() on a file path and uses __dirname in its ES
    // module output (docs/architecture.md, section 4), so in Node the bytes are read here. (Not
    // `instanceof Response`: Node run with --no-experimental-fetch has no Response.)
    const { readFile } = await import('node:fs/promises');
    bytes = await readFile(input === undefined ? new URL('./quire.wasm', import.meta.url) : input);
  }
  // Compiling starts now, while the glue is still being fetched and evaluated, not when the glue
  // asks for the instance: V8 decodes and validates the module off the main thread.
  let compiled: Promise<WebAssembly.Module>;
  if (input instanceof WebAssembly.Module) {
    compiled = Promise.resolve(input);
  } else if (bytes !== undefined) {
    compiled = WebAssembly.compile(bytes);
  } else {
    // (What is left: a URL, a string or a Response. The cast because `instanceof WebAssembly.Module`
    // narrows structurally, and WebAssembly.Module's type has no members.)
    const given = input as URL | string | Response | Promise<Response> | undefined;
    const source = given === undefined ? fetch(new URL('./quire.wasm', import.meta.url)) : given instanceof URL || typeof given === 'string' ? fetch(given) : given;
    compiled = Promise.resolve(source).then(async (response) => {
      try {
        return await WebAssembly.compileStreaming(response.clone());
      } catch {
        // A server that sends the wrong MIME type: compile from the bytes instead.
        return await WebAssembly.compile(await response.arrayBuffer());
      }
    });
  }
  compiled.catch(() => {}); // its failure is reported through `failed`, below
  options.instantiateWasm = (imports, done) => {
    compiled
      .then(async (module) => done(await WebAssembly.instantiate(module, imports), module))
      .catch(failed);
    return {};
  };
  const { default: createQuireModule } = await glue;
  return Promise.race([createQuireModule(options), failure]);
}

/**
 * @internal The areas whose bindings the module registers on first use (wasm/bind_support.h,
 * QUIRE_BINDINGS), so that init() does not pay for the ones a program never calls.
 */
export type Area = 'json' | 'ndjson' | 'fhir' | 'hl7v2' | 'listen' | 'format' | 'format_stream' | 'store' | 'dataset' | 'view';

const registered: Partial<Record<Area, true>> = {};

/**
 * @internal The instantiated module, with `area`'s bindings registered; a plain Error when init()
 * has not finished.
 */
export function wasm(area?: Area): QuireModule {
  if (!loaded) throw new Error('quire: call `await init()` before using the library');
  if (area !== undefined && !registered[area]) {
    (loaded as unknown as Record<string, () => void>)[`_quire_register_${area}`]();
    registered[area] = true;
  }
  return loaded;
}

/** Bytes quire can read: a Uint8Array (Node's Buffer included), an ArrayBuffer, or a string (encoded as UTF-8). */
export type Input = Uint8Array | ArrayBuffer | string;

const encoder = new TextEncoder();

/** simdjson reads up to 64 bytes past the end of its input: every copy into the heap carries them. */
export const INPUT_PADDING = 64;

/**
 * The most a wasm32 heap can address (MAXIMUM_MEMORY=4GB in cmake/wasm.cmake; Emscripten 3.1.6
 * stops one 64 KiB page short of it). A request above this cannot be met, and must not be passed
 * to `_malloc` at all: its size_t argument is 32 bits, so 2^32 + 10 would wrap to 10 bytes.
 */
export const MAX_HEAP_BYTES = 2 ** 32 - 65536;

/**
 * @internal `_malloc(size)` as an unsigned address, or a QuireError OUT_OF_MEMORY (naming `what`)
 * when the heap cannot give it. wasm exports return i32, which JS reads as signed: an address at
 * or above 2^31 comes back negative, and every view made with it throws RangeError (`offset is
 * out of bounds`). `>>> 0` gives the real address. With memory growth on, Emscripten's malloc
 * returns 0 when memory cannot grow (ABORTING_MALLOC is off), and nothing has changed in the heap.
 */
export function allocate(m: QuireModule, size: number, what: string): number {
  if (!Number.isSafeInteger(size) || size < 0 || size + HEAP_HEADROOM > MAX_HEAP_BYTES) throw outOfMemory(size, what);
  // Asked with headroom first, then freed and asked again without: dlmalloc (single-threaded,
  // never trimming) serves the second request from the chunk the first one freed, and at least
  // HEAP_HEADROOM bytes stay free above it for the call's own small allocations, which core makes
  // with operator new and which abort the module when they fail (core/src/common/alloc.h).
  const probe = m._malloc(size + HEAP_HEADROOM) >>> 0;
  if (probe === 0) throw outOfMemory(size, what);
  m._free(probe);
  const pointer = m._malloc(size) >>> 0;
  if (pointer === 0) throw outOfMemory(size, what);
  return pointer;
}

/**
 * Bytes left free after each input copy: what a call's small allocations (records, strings,
 * directories) need, so that the heap runs out at a copy, which is a QuireError, and not inside
 * core, where a small allocation that fails aborts the module.
 */
export const HEAP_HEADROOM = 16 * 1024 * 1024;

function outOfMemory(size: number, what: string): QuireError {
  return new QuireError('OUT_OF_MEMORY', `OUT_OF_MEMORY: cannot allocate ${size} bytes in the wasm heap for ${what} (it holds at most 4 GB)`);
}

/** @internal A pointer or size that a binding returned, as the unsigned number it is (see allocate()). */
export function unsigned(value: number): number {
  return value >>> 0;
}

/**
 * @internal Copies `input` into the wasm heap (one copy, zero padding after it) and calls `fn`
 * with its pointer and length. The copy is freed afterwards unless `fn` takes it (returns true
 * from `keep`).
 */
export function withInput<T>(input: Input, fn: (pointer: number, length: number) => T, keep?: (result: T) => boolean): T {
  const m = wasm();
  let bytes: Uint8Array;
  if (typeof input === 'string') bytes = encoder.encode(input);
  else if (input instanceof ArrayBuffer) bytes = new Uint8Array(input);
  else if (input instanceof Uint8Array) bytes = input;
  else throw new TypeError('quire: input must be a Uint8Array, an ArrayBuffer or a string');
  const pointer = allocate(m, bytes.length + INPUT_PADDING, `${bytes.length} bytes of input`);
  let kept = false;
  try {
    // Views of wasm memory go stale when it grows: take HEAPU8 after the allocation.
    const heap = m.HEAPU8;
    heap.set(bytes, pointer);
    heap.fill(0, pointer + bytes.length, pointer + bytes.length + INPUT_PADDING);
    const result = fn(pointer, bytes.length);
    kept = keep ? keep(result) : false;
    return result;
  } finally {
    if (!kept) m._free(pointer);
  }
}

/** Memory of the wasm instance: bytes allocated and not freed, and the size of linear memory. */
export interface MemoryInfo {
  heapBytes: number;
  heapCapacityBytes: number;
}

/** The wasm heap's use now. */
export function memory(): MemoryInfo {
  return wasm().memory();
}

/** What this build is: the glue's record as core fills it (quire.d.mts). */
export type VersionInfo = VersionRecord;

/** This build's version, compiler and flags. */
export function version(): VersionInfo {
  return wasm().version();
}
