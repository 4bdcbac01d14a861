// Types of the Emscripten 3.1.6 glue (quire.mjs), written by hand: 3.1.6 has no --emit-tsd.
// Internal to the package: the public API is in index.ts.

export interface EmbindHandle {
  delete(): void;
  isDeleted(): boolean;
}

export interface ErrorRecord {
  code: string;
  message: string;
  offset: number;
  line: number;
  column: number;
  path: string;
  /** The core's one line for the error (quire::error::describe()); "" on success. */
  text: string;
}

/** What this build is (the package's VersionInfo). */
export interface VersionRecord {
  version: string;
  target: string;
  compiler: string;
  /** The exact flags core was compiled with. */
  flags: string;
  buildType: string;
  /** simdjson's kernel (wasm has only the fallback kernel). */
  simd: string;
}

export interface MemoryRecord {
  heapBytes: number;
  heapCapacityBytes: number;
}

export interface JsonStatsRecord {
  error: ErrorRecord;
  nulls: number;
  booleans: number;
  numbers: number;
  strings: number;
  arrays: number;
  objects: number;
  keys: number;
  maxDepth: number;
  bytes: number;
}

export interface JsonDocumentHandle extends EmbindHandle {
  error(): ErrorRecord;
  valueCount(): number;
  maxDepth(): number;
  memoryBytes(): number;
  textAt(pointer: string): string;
  kindAt(pointer: string): string;
}

export interface QuireModule {
  HEAPU8: Uint8Array;
  _malloc(size: number): number;
  _free(pointer: number): void;
  version(): VersionRecord;
  memory(): MemoryRecord;
  detect(pointer: number, length: number, whole: boolean, name: string): { kind: string; reason: string };
  /** Every error code the core names, as name/value pairs (tests hold ERROR_CODES to it). */
  errorCodes(): Array<{ name: string; value: number }>;
  jsonCheck(pointer: number, length: number, maxDepth: number, maxBytes: number): JsonStatsRecord;
  JsonDocument: new (pointer: number, length: number, maxDepth: number, maxBytes: number) => JsonDocumentHandle;
  // Other modules' bindings are typed where they are used.
  [name: string]: unknown;
}

export interface ModuleOptions {
  wasmBinary?: ArrayBuffer | Uint8Array;
  instantiateWasm?: (
    imports: WebAssembly.Imports,
    done: (instance: WebAssembly.Instance, module?: WebAssembly.Module) => void,
  ) => object;
  print?: (text: string) => void;
  printErr?: (text: string) => void;
}

declare function createQuireModule(options?: ModuleOptions): Promise<QuireModule>;
export default createQuireModule;
