// quire — the npm package. One C++ core compiled to WebAssembly; this wrapper only moves bytes in
// and results out. Call `await init()` once, then use the namespaces below.
export { init, version, memory, type InitInput, type Input, type VersionInfo, type MemoryInfo } from './module.js';
/** @internal The instantiated Emscripten module, for the package's own tests (one bundled index.js: no module.js to import it from). */
export { wasm as internalWasmModule } from './module.js';
export { QuireError, ERROR_CODES, type ErrorCode } from './errors.js';
export { detect, DETECT_BYTES, type InputKind, type Detection, type DetectOptions } from './detect.js';
export { json, JsonDocument, type JsonLimits, type JsonStats, type JsonKind } from './json.js';
export { fhir, type FhirOptions, type FhirIssue, type FhirOutcome, type FhirResource } from './fhir.js';
export { ndjson, NdjsonStream, type NdjsonOptions, type NdjsonItem, type NdjsonStats, type NdjsonSource, type ByteRange, type SplitRange, type RangeSource } from './ndjson.js';
export { format, QuireFile, nodeFileReader, blobReader, textAt, type TextColumn, type TypedColumn, type TypedColumnsResult, type WriteOptions, type StreamWriteOptions, type WriteSource, type Query, type Where, type RowText, type Aggregate, type ExplainReport, type StorageReport, type ChunkStatistic, type ColumnsResult, type ColumnArray, type ColumnDef, type ColumnType, type IndexKind, type ReadCounters, type FileInfo, type FileFacts, type RangeReader, type OpenOptions } from './format.js';
export { QuireStore, keygen, type Key, type PartitionKeys, type StoreOptions, type StoreWriteOptions, type KdfCost, type StoreCommit, type StoreStorage, type NewOwner } from './store.js';
export { hl7, mllp, Hl7Message, MllpDecoder, type Hl7Options, type AckCode, type AckOptions, type ErrorLocation, type Hl7MessageJson, type Hl7Field, type Hl7Repetition, type Hl7Component, type Hl7Value, type Hl7SegmentInfo, type Hl7Batch, type MllpOptions, type MllpStats } from './hl7.js';
export { view, CompiledView, type ViewDefinition, type ViewSelect, type ViewColumn, type ViewInput, type ViewResources, type ViewSource, type ViewStreamOptions, type ViewWriteSource, type ViewWriteOptions, type ViewWriteResult, type ViewArrowOptions, type ViewParquetOptions, type Row, type ColumnInfo } from './view.js';
export { DECIMAL_PRECISION, DECIMAL_SCALE, type ArrowModule, type ParquetModule } from './arrow.js';
export { fhirpath, FhirpathExpression, type FhirpathValue } from './fhirpath.js';
export { openDataset, QuireDataset, type DatasetManifest, type DatasetFile, type DatasetPlan } from './dataset.js';
export { Hl7Listener, type ListenOptions, type ListenCounters, type ListenAddress, type MessageView } from './listen.js';
// Each further module adds its export line here.
