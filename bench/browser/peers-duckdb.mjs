// DuckDB-Wasm (@duckdb/duckdb-wasm, pinned in bench/package.json) as the browser's peer of the
// .quire format's cold open -> find and open -> sum (format.find and format.sum on the 200,000
// customers), measured on this page after quire's cases, with the method of bench/peer-measure.mjs.
// DuckDB-Wasm runs in its own worker (its EH build: duckdb-browser-eh.worker.js + duckdb-eh.wasm);
// each call is a query through its async API, as a page calls it, so a call's time includes the
// round trip to that worker. Its Parquet file is built once, outside the timing, by DuckDB-Wasm
// itself from the customers' CSV (the input of format.write-csv: DuckDB-Wasm 1.28 reads CSV
// without an extension, not JSON) (types: id and age INTEGER, balance DOUBLE, created_at
// TIMESTAMP, the rest VARCHAR; DuckDB's Parquet defaults), registered once as a file buffer; every
// call reads it anew through read_parquet() (its external file cache and Parquet metadata cache
// off), so each call opens the file: footer, statistics, then the pages it needs. Answers are
// checked against quire's (the npm package's find and aggregate, computed in the bench worker)
// before anything is timed; a difference throws.
import * as duckdb from '/dep/duckdb-wasm/duckdb-browser.mjs';
import { fnv, measure } from '/bench/peer-measure.mjs';

const SHAPE = 'customers-200k';
const FIND_ID = 123456;
const FILE = 'customers.parquet';
const FIELDS = ['id', 'name', 'email', 'country', 'city', 'age', 'balance'];

export async function duckdbWasmPeers(input, options, progress) {
  const worker = new Worker('/dep/duckdb-wasm/duckdb-browser-eh.worker.js');
  const db = new duckdb.AsyncDuckDB(new duckdb.VoidLogger(), worker);
  try {
    await db.instantiate('/dep/duckdb-wasm/duckdb-eh.wasm');
    const conn = await db.connect();
    for (const setting of ['enable_external_file_cache', 'parquet_metadata_cache']) {
      try {
        await conn.query(`SET ${setting} = false`);
      } catch {
        // not a setting of this DuckDB: nothing cached to turn off
      }
    }
    const duckdbVersion = (await conn.query('SELECT version() AS v')).toArray()[0].v;
    const pkg = await (await fetch('/dep/duckdb-wasm/package.json')).json();
    const label = `@duckdb/duckdb-wasm ${pkg.version} (DuckDB ${duckdbVersion}), Parquet`;

    // The file, once: the NDJSON into a table, the table into Parquet, its bytes kept for the size.
    await db.registerFileBuffer('customers.csv', input.csv.slice());
    await conn.query(`CREATE TABLE customers AS SELECT id::INTEGER AS id, name, email, country, city, age::INTEGER AS age,
      balance::DOUBLE AS balance, CAST(replace(created_at, 'Z', '') AS TIMESTAMP) AS created_at
      FROM read_csv('customers.csv', header = true, quote = '"',
        columns = {id: 'BIGINT', name: 'VARCHAR', email: 'VARCHAR', country: 'VARCHAR', city: 'VARCHAR', age: 'BIGINT', balance: 'DOUBLE', created_at: 'VARCHAR'})`);
    await conn.query(`COPY customers TO '${FILE}' (FORMAT parquet)`);
    await conn.query('DROP TABLE customers');
    await db.dropFile('customers.csv');
    const file = await db.copyFileToBuffer(FILE);

    const from = `read_parquet('${FILE}')`;
    const ops = {
      find: {
        run: async () => {
          const rows = (await conn.query(`SELECT ${FIELDS.join(', ')}, epoch_ms(created_at) AS created_ms FROM ${from} WHERE id = ${FIND_ID}`)).toArray();
          return rows.length ? rows[0].toJSON() : undefined;
        },
        normal: (r) => (r ? [Number(r.id), r.name, r.email, r.country, r.city, Number(r.age), Number(r.balance), Number(r.created_ms)] : null),
        quire: (q) => (q ? [q.id, q.name, q.email, q.country, q.city, q.age, q.balance, Date.parse(q.created_at)] : null),
        same: (a, b) => JSON.stringify(a) === JSON.stringify(b),
      },
      sum: {
        run: async () =>
          (await conn.query(`SELECT count(*) AS rows, count(balance) AS count, sum(balance) AS sum, min(balance) AS min, max(balance) AS max FROM ${from}`)).toArray()[0].toJSON(),
        normal: (r) => [Number(r.rows), Number(r.count), Number(r.sum), Number(r.min), Number(r.max)],
        quire: (q) => [Number(q.rows), Number(q.count), Number(q.sum), Number(q.min), Number(q.max)],
        // The order of summation differs: the sum to 1e-9 relative, the rest exactly.
        same: (a, b) => a.every((v, i) => (i === 2 ? Math.abs(v - b[i]) <= 1e-9 * Math.abs(b[i]) : v === b[i])),
      },
    };

    const cases = [];
    for (const op of input.ops) {
      const o = ops[op];
      const mine = o.normal(await o.run());
      const want = o.quire(input[op]);
      if (!o.same(mine, want)) throw new Error(`peer.duckdb-wasm.${op}/${SHAPE}: the answer differs from quire's: ${JSON.stringify(mine)} against ${JSON.stringify(want)}`);
      progress(`[peer] peer.duckdb-wasm.${op}/${SHAPE}`);
      cases.push(
        await measure(
          {
            name: `peer.duckdb-wasm.${op}/${SHAPE}`,
            op: `peer.duckdb-wasm.${op}`,
            shape: SHAPE,
            peer: label,
            mirrors: `format.${op}/${SHAPE}`,
            input: () => file,
            run: o.run,
            checksum: (answer) => fnv(JSON.stringify(o.normal(answer))),
          },
          options,
        ),
      );
    }
    await conn.close();
    return cases;
  } finally {
    await db.terminate();
  }
}
