// What `quire view run ... --out rows.parquet` hands Parquet writing to (native/parquet/README.md):
// DuckDB's Parquet writer through @duckdb/node-api, a kept library, never a hand-written one.
// The CLI writes the rows as core's CSV (a header of the column names; null an empty field, ""
// an empty string) and passes each column's .quire type; this maps the types and moves the bytes:
//   integer -> BIGINT, float -> DOUBLE, boolean -> BOOLEAN, date -> DATE, timestamp -> TIMESTAMPTZ (UTC),
//   decimal -> DECIMAL(p,s) cast from the exact text, p and s the widest the column's values need
//              (VARCHAR, the text kept, when they need more than 38 digits or use an exponent),
//   string, json -> VARCHAR.
//   node quire-parquet.mjs --csv ROWS.csv --types integer,string,... --out OUT.parquet [--row-group-rows N]
//        [--decimal P,S]   (every decimal column DECIMAL(P,S); a value that needs more is an error)
// Prints one JSON line ({"rows", "bytes", "columns": [{"name", "type"}]}) on success; on failure
// the reason on stderr and exit 1 (the output is written under a temporary name, renamed at the end).
import { renameSync, rmSync, statSync } from 'node:fs';
import { DuckDBInstance } from '@duckdb/node-api';

function argsOf(argv) {
  const out = {};
  for (let i = 0; i < argv.length; i += 2) {
    if (!argv[i].startsWith('--') || i + 1 >= argv.length) throw new Error(`bad argument ${argv[i]}`);
    out[argv[i].slice(2)] = argv[i + 1];
  }
  for (const k of ['csv', 'types', 'out']) if (!out[k]) throw new Error(`--${k} is needed`);
  return out;
}

const quoteText = (s) => `'${s.replaceAll("'", "''")}'`;
const quoteName = (s) => `"${s.replaceAll('"', '""')}"`;

async function main() {
  const a = argsOf(process.argv.slice(2));
  const types = a.types.split(',');
  const rowGroup = Number(a['row-group-rows'] ?? 122880);
  // --decimal P,S: every decimal column DECIMAL(P,S) (a dataset's files must agree on their types).
  const fixed = a.decimal ? (([p, sc]) => ({ precision: Number(p), scale: Number(sc) }))(a.decimal.split(',')) : null;
  const db = await DuckDBInstance.create(':memory:');
  const c = await db.connect();
  await c.run("SET TimeZone = 'UTC'");
  // Every column read as text first: the casts below decide each type, not DuckDB's sniffer.
  const source = `read_csv(${quoteText(a.csv)}, header = true, all_varchar = true, delim = ',', quote = '"', ` +
    `escape = '"', allow_quoted_nulls = false, null_padding = false, sample_size = 1)`;
  const names = (await c.runAndReadAll(`DESCRIBE SELECT * FROM ${source}`)).getRowObjects().map((r) => r.column_name);
  if (names.length !== types.length) {
    throw new Error(`the CSV has ${names.length} columns and --types names ${types.length}`);
  }
  // Decimal columns: the digits their values need, before and after the point.
  const decimals = names.map((n, i) => (types[i] === 'decimal' ? n : null)).filter(Boolean);
  const widths = new Map();
  if (decimals.length) {
    const parts = decimals.map((n) => {
      const q = quoteName(n);
      return `max(CASE WHEN position('.' IN ${q}) > 0 THEN length(${q}) - position('.' IN ${q}) ELSE 0 END)::BIGINT, ` +
        `max(length(ltrim(split_part(ltrim(${q}, '-+'), '.', 1), '0')))::BIGINT, ` +
        `bool_or(${q} ILIKE '%e%')`;
    });
    const row = (await c.runAndReadAll(`SELECT ${parts.join(', ')} FROM ${source}`)).getRows()[0];
    decimals.forEach((n, k) => {
      const scale = Number(row[3 * k] ?? 0), whole = Number(row[3 * k + 1] ?? 0), exponent = row[3 * k + 2] === true;
      widths.set(n, { scale, precision: Math.max(1, whole + scale), exponent });
    });
  }
  const casts = names.map((n, i) => {
    const q = quoteName(n);
    switch (types[i]) {
      case 'integer': return `CAST(${q} AS BIGINT) AS ${q}`;
      case 'float': return `CAST(${q} AS DOUBLE) AS ${q}`;
      case 'boolean': return `CAST(${q} AS BOOLEAN) AS ${q}`;
      case 'date': return `CAST(${q} AS DATE) AS ${q}`;
      case 'timestamp': return `CAST(${q} AS TIMESTAMPTZ) AS ${q}`;
      case 'decimal': {
        const w = widths.get(n);
        if (fixed) {
          // One width for every file of a dataset: a value it cannot hold exactly is an error, never rounded.
          if (w.exponent || w.scale > fixed.scale || w.precision - w.scale > fixed.precision - fixed.scale) {
            throw new Error(`column ${n} holds a decimal that DECIMAL(${fixed.precision},${fixed.scale}) cannot hold ` +
              `exactly (it needs ${w.exponent ? 'an exponent' : `${w.precision - w.scale} integer and ${w.scale} fraction digits`})`);
          }
          return `CAST(${q} AS DECIMAL(${fixed.precision}, ${fixed.scale})) AS ${q}`;
        }
        if (w.exponent || w.precision > 38) return `${q}`;
        return `CAST(${q} AS DECIMAL(${w.precision}, ${w.scale})) AS ${q}`;
      }
      case 'string':
      case 'json': return `${q}`;
      default: throw new Error(`unknown column type ${types[i]}`);
    }
  });
  const temp = `${a.out}.tmp-${process.pid}`;
  try {
    await c.run(`COPY (SELECT ${casts.join(', ')} FROM ${source}) TO ${quoteText(temp)} ` +
      `(FORMAT PARQUET, COMPRESSION ZSTD, ROW_GROUP_SIZE ${rowGroup})`);
    const described = (await c.runAndReadAll(`DESCRIBE SELECT * FROM read_parquet(${quoteText(temp)})`)).getRowObjects();
    const rows = (await c.runAndReadAll(`SELECT count(*)::BIGINT FROM read_parquet(${quoteText(temp)})`)).getRows()[0][0];
    renameSync(temp, a.out);
    console.log(JSON.stringify({
      rows: Number(rows),
      bytes: statSync(a.out).size,
      columns: described.map((d) => ({ name: d.column_name, type: d.column_type })),
    }));
  } catch (e) {
    rmSync(temp, { force: true });
    throw e;
  }
}

main().catch((e) => {
  process.stderr.write(`${e.message}\n`);
  process.exit(1);
});
