// Arrow IPC and Parquet out of a view's rows, through the caller's own libraries: core hands the
// rows over as typed columns already in Arrow's layout (quire/view.h, column_buffer: int64,
// validity and boolean bitmaps, DECIMAL(38,18) as 16-byte little-endian integers, UTF-8 with
// int32 offsets), copied out of the wasm heap once; this module only wraps those buffers with
// apache-arrow's makeData() (no value is converted or parsed here), has apache-arrow write the IPC
// file, and parquet-wasm the Parquet file from Arrow IPC. Neither library is bundled: the caller
// passes the modules (docs/views.md, "Arrow and Parquet", says why).
import { QuireError } from './errors.js';

/**
 * A parameter of a library's function as quire declares it: `any`, so that the library's own
 * (generic, narrower) signatures are assignable to the interfaces below — a parameter type is
 * checked the other way round (js/test/view_arrow.test.mjs compiles a caller that passes the
 * real modules).
 */
type LibraryArgument = any;

/**
 * The parts of apache-arrow (>= 14) quire calls: pass the module itself,
 * `import * as arrow from 'apache-arrow'` (in a page without a bundler, its `Arrow.es2015.min.js`
 * global `Arrow` does too).
 */
export interface ArrowModule {
  makeData(props: LibraryArgument): unknown;
  tableToIPC(table: LibraryArgument, type?: 'file' | 'stream'): Uint8Array;
  Field: new (name: string, type: LibraryArgument, nullable?: boolean) => unknown;
  Schema: new (fields: LibraryArgument) => unknown;
  Struct: new (children: LibraryArgument) => unknown;
  RecordBatch: new (schema: LibraryArgument, data: LibraryArgument) => unknown;
  Table: new (schema: LibraryArgument, batches: LibraryArgument) => unknown;
  Int64: new () => unknown;
  Bool: new () => unknown;
  Utf8: new () => unknown;
  Decimal: new (scale: number, precision: number, bitWidth?: number) => unknown;
}

/**
 * The parts of parquet-wasm (0.6 and later) quire calls: pass the module, `import * as parquet
 * from 'parquet-wasm'` in Node; in a browser the `parquet-wasm/esm` module after its default
 * export (init) has resolved.
 */
export interface ParquetModule {
  Table: { fromIPCStream(ipc: Uint8Array): unknown };
  writeParquet(table: LibraryArgument, properties?: LibraryArgument): Uint8Array;
  WriterPropertiesBuilder: new () => ParquetPropertiesBuilder;
  Compression: { ZSTD: unknown };
  EnabledStatistics: { Page: unknown };
}

/** parquet-wasm's WriterPropertiesBuilder, as far as quire calls it. */
export interface ParquetPropertiesBuilder {
  setCompression(value: LibraryArgument): ParquetPropertiesBuilder;
  setMaxRowGroupSize(value: number): ParquetPropertiesBuilder;
  setStatisticsEnabled(value: LibraryArgument): ParquetPropertiesBuilder;
  setCreatedBy(value: string): ParquetPropertiesBuilder;
  build(): unknown;
}

/** Every decimal column: DECIMAL(38,18), as the CLI writes it (core's quire::view::DECIMAL128_*). */
export const DECIMAL_PRECISION = 38;
export const DECIMAL_SCALE = 18;

/** @internal One column of a batch, copied out of the heap in column_buffer's layout. */
export interface ColumnBuffers {
  nulls: number;
  validity: Uint8Array;
  values: Uint8Array;
  offsets: Int32Array | undefined;
}

/** @internal Some rows, a ColumnBuffers per view column. */
export interface ColumnBatch {
  rows: number;
  columns: ColumnBuffers[];
}

function missing(what: 'arrow' | 'parquet', method: string): never {
  const text =
    what === 'arrow'
      ? `${method} needs apache-arrow, which quire does not bundle: pass the module as { arrow } (import * as arrow from 'apache-arrow')`
      : `${method} needs parquet-wasm, which quire does not bundle: pass the module as { parquet } (import * as parquet from 'parquet-wasm'; in a browser 'parquet-wasm/esm' after its init())`;
  throw new QuireError('INVALID_ARGUMENT', text);
}

/** @internal The apache-arrow module given, checked; a QuireError (INVALID_ARGUMENT) that says what to pass when it is absent or not apache-arrow. */
export function checkArrow(arrow: unknown, method: string): ArrowModule {
  const a = arrow as Partial<ArrowModule> | undefined;
  if (!a || typeof a.makeData !== 'function' || typeof a.tableToIPC !== 'function' || typeof a.RecordBatch !== 'function' || typeof a.Decimal !== 'function') {
    missing('arrow', method);
  }
  return a as ArrowModule;
}

/** @internal The parquet-wasm module given, checked as checkArrow() checks apache-arrow. */
export function checkParquet(parquet: unknown, method: string): ParquetModule {
  const p = parquet as Partial<ParquetModule> | undefined;
  if (!p || typeof p.writeParquet !== 'function' || typeof p.Table?.fromIPCStream !== 'function' || typeof p.WriterPropertiesBuilder !== 'function') {
    missing('parquet', method);
  }
  return p as ParquetModule;
}

/** The Arrow type of a column of table type `type` (core's table_schema: boolean, integer, decimal, string, json). */
function arrowType(arrow: ArrowModule, type: string): unknown {
  switch (type) {
    case 'integer':
      return new arrow.Int64();
    case 'boolean':
      return new arrow.Bool();
    case 'decimal':
      return new arrow.Decimal(DECIMAL_SCALE, DECIMAL_PRECISION, 128);
    default:
      return new arrow.Utf8(); // string, json (its compact text)
  }
}

/** @internal An apache-arrow Table of the batches, each a RecordBatch; the buffers are wrapped, not copied. */
export function buildTable(arrow: ArrowModule, names: string[], types: string[], batches: ColumnBatch[]): unknown {
  const fields = names.map((n, i) => new arrow.Field(n, arrowType(arrow, types[i]!), true));
  const schema = new arrow.Schema(fields);
  const records = batches.map((b) => {
    const children = b.columns.map((c, i) => {
      const type = (fields[i] as { type: unknown }).type;
      const base = { type, length: b.rows, nullCount: c.nulls, nullBitmap: c.nulls ? c.validity : undefined };
      const buffer = c.values.buffer;
      switch (types[i]) {
        case 'integer':
          return arrow.makeData({ ...base, data: new BigInt64Array(buffer, c.values.byteOffset, b.rows) });
        case 'boolean':
          return arrow.makeData({ ...base, data: c.values });
        case 'decimal':
          return arrow.makeData({ ...base, data: new Uint32Array(buffer, c.values.byteOffset, 4 * b.rows) });
        default:
          return arrow.makeData({ ...base, valueOffsets: c.offsets, data: c.values });
      }
    });
    return new arrow.RecordBatch(schema, arrow.makeData({ type: new arrow.Struct(fields), length: b.rows, nullCount: 0, children }));
  });
  return new arrow.Table(schema, records);
}

/** @internal Parquet bytes of an Arrow table: ZSTD, row groups of `rowGroupRows`, statistics per page and column chunk (as DuckDB's writer makes them for the CLI). */
export function parquetOf(arrow: ArrowModule, parquet: ParquetModule, table: unknown, rowGroupRows: number): Uint8Array {
  const wasmTable = parquet.Table.fromIPCStream(arrow.tableToIPC(table, 'stream'));
  const properties = new parquet.WriterPropertiesBuilder()
    .setCompression(parquet.Compression.ZSTD)
    .setMaxRowGroupSize(rowGroupRows)
    .setStatisticsEnabled(parquet.EnabledStatistics.Page)
    .setCreatedBy('quire-health (parquet-wasm)')
    .build();
  return parquet.writeParquet(wasmTable, properties);
}
