// What `quire view run ... --out rows.parquet` hands Parquet writing to (native/parquet/README.md):
// DuckDB's Parquet writer through @duckdb/node-api, a kept library, never a hand-written one.
// The CLI writes the rows to this script's standard input as core's CSV (a header of the column
// names; null an empty field, "" an empty string) while it runs the view, and passes each
// column's name and .quire type; this maps the types and moves the bytes:
//   integer -> BIGINT, float -> DOUBLE, boolean -> BOOLEAN, date -> DATE, timestamp -> TIMESTAMPTZ (UTC),
//   decimal -> DECIMAL(38,18) cast from the exact text (a value that needs more is an error),
//   string, json -> VARCHAR.
//   ... | node quire-parquet.mjs --names '["id","n"]' --types string,integer --out OUT.parquet [--row-group-rows N]
// On failure the reason goes to stderr and the exit code is 1; the output is written under a
// temporary name, renamed at the end.
import { renameSync, rmSync, statSync } from 'node:fs';
import { DuckDBInstance } from '@duckdb/node-api';

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
  const temp = `${a.out}.tmp-${process.pid}`;
  try {
    await c.run(`COPY (SELECT ${casts.join(', ')} FROM ${source}) TO ${quoteText(temp)} ` +
      `(FORMAT PARQUET, COMPRESSION ZSTD, ROW_GROUP_SIZE ${rowGroup})`);
    renameSync(temp, a.out);
    console.log(JSON.stringify({ bytes: statSync(a.out).size }));
  } catch (e) {
    rmSync(temp, { force: true });
    throw e;
  }
}

main().catch((e) => {
  process.stderr.write(`${e.message}\n`);
  process.exit(1);
});
