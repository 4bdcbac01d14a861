// quire — the npm package. One C++ core compiled to WebAssembly; this wrapper only moves bytes in
// and results out. Call `await init()` once, then use the namespaces below.
export { init, version, memory, type InitInput, type Input, type VersionInfo, type MemoryInfo } from './module.js';
export { QuireError, type ErrorCode } from './errors.js';
export { json, JsonDocument, type JsonLimits, type JsonStats, type JsonKind } from './json.js';
export { bench, type BenchRunOptions, type GateResult } from './bench.js';
// Each further module adds its export line here.
