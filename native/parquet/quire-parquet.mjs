// What `quire view run ... --out rows.parquet` hands Parquet writing to (native/parquet/README.md):
// DuckDB's Parquet writer through @duckdb/node-api, a kept library, never a hand-written one.
// The CLI writes the rows to this script's standard input as core's CSV (a header of the column
// names; null an empty field, "" an empty string) while it runs the view, and passes each
// column's name and .quire type; this maps the types and moves the bytes:
//   integer -> BIGINT, float -> DOUBLE, boolean -> BOOLEAN, date -> DATE, timestamp -> TIMESTAMPTZ (UTC),
//   decimal -> DECIMAL(38,18) cast from the exact text (a value that needs more is an error),
//   string, json -> VARCHAR.
//   ... | node quire-parquet.mjs --names '["id","n"]' --types string,integer --out OUT.parquet [--row-group-rows N]
//        [--to arrow]   (an Arrow IPC file instead, written by apache-arrow from DuckDB's casts)
//        [--temp PATH]  (the temporary name the file is written under before it is renamed)
// On failure the reason goes to stderr and the exit code is 1; the output is written under a
// temporary name, renamed at the end.
import { renameSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { DuckDBInstance } from '@duckdb/node-api';
import * as arrow from 'apache-arrow';

function argsOf(argv) {
  const out = {};
  for (let i = 0; i < argv.length; i += 2) {
    if (!argv[i].startsWith('--') || i + 1 >= argv.length) throw new Error(`bad argument ${argv[i]}`);
    out[argv[i].slice(2)] = argv[i + 1];
  }
  for (const k of ['names', 'types', 'out']) if (!out[k]) throw new Error(`--${k} is needed`);
  return out;
}

const quoteText = (s) => `'${s.replaceAll("'", "''")}'`;
const quoteName = (s) => `"${s.replaceAll('"', '""')}"`;

// Every decimal column is DECIMAL(38,18): one type for every file, whatever its values (the parts
// of a dataset are written apart), and exact: a value it cannot hold is an error, never rounded.
const DECIMAL = { precision: 38, scale: 18 };

async function main() {
  const a = argsOf(process.argv.slice(2));
  const names = JSON.parse(a.names);
  const types = a.types.split(',');
  if (names.length !== types.length) throw new Error(`--names has ${names.length} columns and --types ${types.length}`);
  const rowGroup = Number(a['row-group-rows'] ?? 122880);
  const db = await DuckDBInstance.create(':memory:');
  const c = await db.connect();
  await c.run("SET TimeZone = 'UTC'");
  // The CSV comes on standard input as core writes it, read once; every column as text, so the
  // casts below decide each type, not DuckDB's sniffer.
  const columns = names.map((n) => `${quoteText(n)}: 'VARCHAR'`).join(', ');
  const source = `read_csv('/dev/stdin', header = true, auto_detect = false, columns = {${columns}}, delim = ',', ` +
    `quote = '"', escape = '"', allow_quoted_nulls = false)`;
  const casts = names.map((n, i) => {
    const q = quoteName(n);
    switch (types[i]) {
      case 'integer': return `CAST(${q} AS BIGINT) AS ${q}`;
      case 'float': return `CAST(${q} AS DOUBLE) AS ${q}`;
      case 'boolean': return `CAST(${q} AS BOOLEAN) AS ${q}`;
      case 'date': return `CAST(${q} AS DATE) AS ${q}`;
      case 'timestamp': return `CAST(${q} AS TIMESTAMPTZ) AS ${q}`;
      case 'decimal': {
        const whole = DECIMAL.precision - DECIMAL.scale;
        const misfit = `length(split_part(${q}, '.', 2)) > ${DECIMAL.scale} OR ` +
          `length(ltrim(split_part(ltrim(${q}, '-+'), '.', 1), '0')) > ${whole} OR ${q} ILIKE '%e%'`;
        const message = `'column ' || ${quoteText(n)} || ': ' || ${q} || ' does not fit DECIMAL(${DECIMAL.precision},` +
          `${DECIMAL.scale}) exactly (at most ${whole} integer and ${DECIMAL.scale} fraction digits, no exponent)'`;
        return `CASE WHEN ${misfit} THEN error(${message}) ` +
          `ELSE CAST(${q} AS DECIMAL(${DECIMAL.precision}, ${DECIMAL.scale})) END AS ${q}`;
      }
      case 'string':
      case 'json': return `${q}`;
      default: throw new Error(`unknown column type ${types[i]}`);
    }
  });
  // The caller names the temporary (--temp) so that it can remove it if it stops this process.
  const temp = a.temp ?? `${a.out}.tmp-${process.pid}`;
  try {
    const select = `SELECT ${casts.join(', ')} FROM ${source}`;
    if (a.to === 'arrow') await writeArrow(c, select, names, types, temp, rowGroup);
    else await c.run(`COPY (${select}) TO ${quoteText(temp)} (FORMAT PARQUET, COMPRESSION ZSTD, ROW_GROUP_SIZE ${rowGroup})`);
    renameSync(temp, a.out);
    console.log(JSON.stringify({ bytes: statSync(a.out).size }));
  } catch (e) {
    rmSync(temp, { force: true });
    throw e;
  }
}

// --- Arrow IPC (--to arrow): DuckDB casts as above, apache-arrow writes the IPC file ----------------

// The Arrow type of a .quire type, as the Parquet file has it.
function arrowType(type) {
  switch (type) {
    case 'integer': return new arrow.Int64();
    case 'float': return new arrow.Float64();
    case 'boolean': return new arrow.Bool();
    case 'date': return new arrow.DateDay();
    case 'timestamp': return new arrow.TimestampMicrosecond('UTC');
    case 'decimal': return new arrow.Decimal(DECIMAL.scale, DECIMAL.precision, 128);
    default: return new arrow.Utf8();
  }
}

// One column of a batch: DuckDB's values (null, bigint, number, boolean, string, decimal, date,
// timestamp values) into the buffers Arrow's layout has for the type.
function columnData(type, values) {
  const length = values.length;
  const bitmap = new Uint8Array((length + 7) >> 3);
  let nulls = 0;
  values.forEach((v, i) => {
    if (v === null) nulls++;
    else bitmap[i >> 3] |= 1 << (i & 7);
  });
  const base = { type, length, nullCount: nulls, nullBitmap: nulls ? bitmap : undefined };
  switch (type.typeId) {
    case arrow.Type.Int:
      return arrow.makeData({ ...base, data: BigInt64Array.from(values, (v) => (v === null ? 0n : v)) });
    case arrow.Type.Float:
      return arrow.makeData({ ...base, data: Float64Array.from(values, (v) => (v === null ? 0 : v)) });
    case arrow.Type.Bool: {
      const bits = new Uint8Array((length + 7) >> 3);
      values.forEach((v, i) => { if (v) bits[i >> 3] |= 1 << (i & 7); });
      return arrow.makeData({ ...base, data: bits });
    }
    case arrow.Type.Date:
      return arrow.makeData({ ...base, data: Int32Array.from(values, (v) => (v === null ? 0 : v.days)) });
    case arrow.Type.Timestamp:
      return arrow.makeData({ ...base, data: BigInt64Array.from(values, (v) => (v === null ? 0n : v.micros)) });
    case arrow.Type.Decimal: {
      // 128-bit two's complement, little-endian: the unscaled value DuckDB holds exactly.
      const words = new BigUint64Array(length * 2);
      values.forEach((v, i) => {
        if (v === null) return;
        words[2 * i] = BigInt.asUintN(64, v.value);
        words[2 * i + 1] = BigInt.asUintN(64, v.value >> 64n);
      });
      return arrow.makeData({ ...base, data: new Uint32Array(words.buffer) });
    }
    default: {
      const encoder = new TextEncoder();
      const parts = values.map((v) => (v === null ? new Uint8Array(0) : encoder.encode(v)));
      const offsets = new Int32Array(length + 1);
      parts.forEach((p, i) => { offsets[i + 1] = offsets[i] + p.length; });
      const bytes = new Uint8Array(offsets[length]);
      parts.forEach((p, i) => bytes.set(p, offsets[i]));
      return arrow.makeData({ ...base, valueOffsets: offsets, data: bytes });
    }
  }
}

async function writeArrow(c, select, names, types, path, batchRows) {
  const fields = names.map((n, i) => new arrow.Field(n, arrowType(types[i]), true));
  const schema = new arrow.Schema(fields);
  const batches = [];
  const columns = names.map(() => []);
  let held = 0;
  const flush = () => {
    if (!held) return;
    const children = columns.map((vals, i) => columnData(fields[i].type, vals));
    const struct = arrow.makeData({ type: new arrow.Struct(fields), length: held, nullCount: 0, children });
    batches.push(new arrow.RecordBatch(schema, struct));
    columns.forEach((vals) => { vals.length = 0; });
    held = 0;
  };
  const result = await c.stream(select);
  for (;;) {
    const chunk = await result.fetchChunk();
    if (!chunk || chunk.rowCount === 0) break;
    for (let col = 0; col < names.length; col++) {
      const v = chunk.getColumnVector(col);
      for (let r = 0; r < chunk.rowCount; r++) columns[col].push(v.getItem(r));
    }
    held += chunk.rowCount;
    if (held >= batchRows) flush();
  }
  flush();
  // The IPC file format (Feather v2): schema, the batches, a footer to find them.
  writeFileSync(path, arrow.tableToIPC(new arrow.Table(schema, batches), 'file'));
}

main().catch((e) => {
  process.stderr.write(`${e.message}\n`);
  process.exit(1);
});
