// Peers of the .quire format's customers cases (format.*/customers-200k), measured in Node in the
// same run as quire, on the same 200,000 customers. Versions are pinned in bench/package.json and
// read at run time into each peer's label.
//
// Each peer builds ITS OWN file once, outside the timing, from the customers' rows (parsed once
// from quire.bench.input('format.write/customers-200k'), the NDJSON every format case starts from):
//   JSON     the NDJSON text itself is the file. Each read call decodes it, JSON.parse's every line,
//            then searches the objects (newest-50 orders by Date.parse(created_at): milliseconds,
//            which is all the customers' timestamps carry).
//   sqlite   better-sqlite3: one table of the 8 columns (id, age INTEGER; balance REAL; created_at
//            INTEGER microseconds; the rest TEXT) in id order, plus an index on id; the -indexed
//            shape adds an index on created_at and an FTS5 trigram table on name (case_sensitive 1,
//            so that it matches bytes as quire's contains does). The database is built in memory,
//            serialised and written to a temporary file (os.tmpdir(), removed at exit). Each read
//            call opens it read-only (a new connection: empty page cache), prepares and runs the
//            SQL, returns objects and closes. Text search without FTS5 is instr(name, ...) > 0:
//            LIKE would be case-insensitive.
//   arrow    apache-arrow: one IPC file (tableToIPC(table, 'file'), one record batch, no body
//            compression: Arrow JS bundles no LZ4/ZSTD codec). Types: id Int32, name and email Utf8,
//            country and city Dictionary<Int8, Utf8>, age Int8, balance Float64, created_at
//            Timestamp<MICROSECOND>; the vectors are made from buffers (makeData), as vectorFromArray
//            is twenty times slower on strings. Each read call: tableFromIPC(bytes), then the
//            operation on the vectors' data (typed arrays; dictionary codes for country; a byte
//            search through the name column's UTF-8 buffer for text search; get(i) for the strings
//            of the rows returned, toArray() of every column for read-all).
//   parquet  written with hyparquet-writer, read with hyparquet: row groups of 65,536 rows and
//            pages of 8 KiB (as quire's chunks and pages), SNAPPY (the writer's one built-in codec;
//            hyparquet reads only it and uncompressed without hyparquet-compressors), the writer's
//            default encodings (PLAIN, or a dictionary where it at least halves a column), row-group
//            statistics and offset indexes. Types: id and age INT32, strings UTF8, balance DOUBLE,
//            created_at INT64 TIMESTAMP(MICROS). find picks row groups by their id statistics, reads
//            their id column, then the one row; deep-page and newest-50 read row ranges through the
//            offset index; the scans read only the columns they need (onChunk, no row objects) and
//            build objects only for the rows found; read-all is parquetReadObjects.
//   msgpack  msgpackr: pack(array of row objects) with the default (plain MessagePack maps, no
//            records extension); each read call unpack()s everything, then searches.
// The write cases (input: the NDJSON, as quire's) write from the row objects already in memory,
// as quire's format.write writes from rows in memory: created_at is a number of microseconds in
// them (quire's rows hold it as an integer too), so JSON's write emits it as a number.
//
// Each peer's answer to each case is checked against quire's (quire.format on the quire case's own
// file) before anything is measured: rows compared on all 8 fields (created_at as quire's ISO 8601
// text, balance exactly), row sets as lists sorted by id (filter, text-search, read-all) or in
// order (deep-page, newest-50), sums to 1e-9 relative (the order of summation differs), columns
// value by value, writes by reading the written bytes back and counting rows. A difference throws.
// Checksums are fnv() over the normalised answer (not comparable with quire's own).
import { fnv } from './peers.mjs';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import os from 'node:os';
import path from 'node:path';

const require = createRequire(import.meta.url);
const decoder = new TextDecoder();
const encoder = new TextEncoder();

const SHAPE = 'customers-200k';
const INDEXED = 'customers-200k-indexed';
const FIND_ID = 123456;
const FILTER = "country = 'NA' and age > 80";
const TEXT = 'Okafor';
const PAGE_OFFSET = 150000;
const PAGE_LIMIT = 10;
const NEWEST = 50;
const COLUMNS = ['id', 'name', 'email', 'country', 'city', 'age', 'balance', 'created_at'];
const SQL_COLUMNS = COLUMNS.join(', ');
const OPS = ['find', 'filter-count', 'filter', 'text-search', 'read-all', 'sum', 'column', 'deep-page', 'newest-50', 'write'];
// On the indexed shape only SQLite has something to add (its own indexes).
const INDEXED_OPS = ['find', 'text-search', 'newest-50', 'write'];

function version(pkg) {
  return JSON.parse(readFileSync(new URL(`./node_modules/${pkg}/package.json`, import.meta.url), 'utf8')).version;
}

// --- shared helpers ----------------------------------------------------------------------------

const matchesFilter = (country, age) => country === 'NA' && age > 80;

/**
 * The row numbers of the k largest keys, largest first (ties: the earlier row first): a min-heap
 * of k in typed arrays, O(n log k). The customers' created_at arrive ascending, so every key enters.
 */
function topK(n, key, k) {
  const keys = new Float64Array(k), rows = new Int32Array(k);
  let size = 0;
  // The heap's root is the worst kept: the smallest key, the later row among equal keys.
  for (let i = 0; i < n; i++) {
    const v = key(i);
    if (size < k) {
      let c = size++;
      while (c > 0) {
        const p = (c - 1) >> 1;
        if (!(v < keys[p] || (v === keys[p] && i > rows[p]))) break;
        keys[c] = keys[p];
        rows[c] = rows[p];
        c = p;
      }
      keys[c] = v;
      rows[c] = i;
    } else if (keys[0] < v || (keys[0] === v && rows[0] > i)) {
      let p = 0;
      for (;;) {
        const l = 2 * p + 1, r = l + 1;
        let m = -1, mk = v, mr = i;
        if (l < k && (keys[l] < mk || (keys[l] === mk && rows[l] > mr))) { m = l; mk = keys[l]; mr = rows[l]; }
        if (r < k && (keys[r] < mk || (keys[r] === mk && rows[r] > mr))) { m = r; mk = keys[r]; mr = rows[r]; }
        if (m < 0) break;
        keys[p] = keys[m];
        rows[p] = rows[m];
        p = m;
      }
      keys[p] = v;
      rows[p] = i;
    }
  }
  const order = Array.from({ length: size }, (_, j) => j);
  order.sort((a, b) => keys[b] - keys[a] || rows[a] - rows[b]);
  return order.map((j) => rows[j]);
}

/** A BigInt64Array of non-negative values below 2^53 as numbers, without a BigInt per value. */
function int64Numbers(values) {
  const words = new Uint32Array(values.buffer, values.byteOffset, values.length * 2);
  const out = new Float64Array(values.length);
  for (let i = 0; i < values.length; i++) out[i] = words[2 * i + 1] * 0x100000000 + words[2 * i];
  return out;
}

function aggregate(values) {
  let count = 0, sum = 0, min = Infinity, max = -Infinity;
  for (let i = 0; i < values.length; i++) {
    const v = values[i];
    if (v === null || v === undefined) continue;
    count++;
    sum += v;
    if (v < min) min = v;
    if (v > max) max = v;
  }
  return { rows: values.length, count, sum, min: count ? min : null, max: count ? max : null };
}

function balances(rows) {
  const out = new Float64Array(rows.length);
  for (let i = 0; i < rows.length; i++) out[i] = rows[i].balance;
  return out;
}

/** The operations on an array of row objects (JSON and MessagePack); `created(row)` orders newest. */
function rowOps(created) {
  return {
    find: (rows) => rows.find((r) => r.id === FIND_ID),
    'filter-count': (rows) => {
      let n = 0;
      for (const r of rows) if (matchesFilter(r.country, r.age)) n++;
      return n;
    },
    filter: (rows) => rows.filter((r) => matchesFilter(r.country, r.age)),
    'text-search': (rows) => rows.filter((r) => r.name.includes(TEXT)),
    'read-all': (rows) => rows,
    sum: (rows) => aggregate(balances(rows)),
    column: (rows) => balances(rows),
    'deep-page': (rows) => rows.slice(PAGE_OFFSET, PAGE_OFFSET + PAGE_LIMIT),
    'newest-50': (rows) => topK(rows.length, (i) => created(rows[i]), NEWEST).map((i) => rows[i]),
  };
}

// --- normalised answers ----------------------------------------------------------------------

/** ISO 8601 as quire writes a timestamp: seconds, then .mmm or .uuuuuu only when non-zero. */
function isoFromMicros(us) {
  let micros = BigInt(us);
  let seconds = micros / 1000000n;
  let frac = micros - seconds * 1000000n;
  if (frac < 0n) {
    frac += 1000000n;
    seconds -= 1n;
  }
  const base = new Date(Number(seconds) * 1000).toISOString().slice(0, 19);
  if (frac === 0n) return `${base}Z`;
  return frac % 1000n === 0n ? `${base}.${String(frac / 1000n).padStart(3, '0')}Z` : `${base}.${String(frac).padStart(6, '0')}Z`;
}

/** created_at in whatever form a peer returns it (ISO text, microseconds, a Date) as quire's text. */
function normTime(v) {
  if (typeof v === 'string') return v;
  if (v instanceof Date) return isoFromMicros(BigInt(v.getTime()) * 1000n);
  return isoFromMicros(v);
}

function normRow(r) {
  if (r === undefined || r === null) return null;
  return [Number(r.id), r.name, r.email, r.country, r.city, Number(r.age), Number(r.balance), normTime(r.created_at)];
}

const byId = (a, b) => a[0] - b[0];

/** An answer in one comparable form, per op (rows as arrays of the 8 fields, created_at as text). */
function normalise(op, answer) {
  switch (op) {
    case 'find':
      return JSON.stringify(normRow(answer));
    case 'filter-count':
      return String(answer);
    case 'filter':
    case 'text-search':
    case 'read-all':
      return Array.from(answer, normRow).sort(byId);
    case 'deep-page':
    case 'newest-50':
      return Array.from(answer, normRow);
    case 'sum':
      return [answer.rows, answer.count, Number(answer.sum), Number(answer.min), Number(answer.max)];
    case 'column':
      return answer;
    default:
      throw new Error(`no normal form for ${op}`);
  }
}

function checksumOf(op, normal) {
  if (op === 'column') {
    const bytes = new Uint8Array(normal.buffer, normal.byteOffset, normal.byteLength);
    let text = '';
    for (let i = 0; i < bytes.length; i += 8192) text += String.fromCharCode(...bytes.subarray(i, i + 8192));
    return fnv(text);
  }
  return fnv(typeof normal === 'string' ? normal : JSON.stringify(normal));
}

/** Undefined when equal, else what differs. */
function difference(op, mine, quire) {
  if (op === 'find' || op === 'filter-count') return mine === quire ? undefined : `${mine} against ${quire}`;
  if (op === 'sum') {
    const [r, c, s, lo, hi] = mine;
    const [qr, qc, qs, qlo, qhi] = quire;
    if (r !== qr || c !== qc || lo !== qlo || hi !== qhi) return `rows/count/min/max ${mine} against ${quire}`;
    return Math.abs(s - qs) <= 1e-9 * Math.abs(qs) ? undefined : `sum ${s} against ${qs}`;
  }
  if (op === 'column') {
    if (mine.length !== quire.length) return `${mine.length} values against ${quire.length}`;
    for (let i = 0; i < mine.length; i++) if (!Object.is(mine[i], quire[i])) return `value ${i}: ${mine[i]} against ${quire[i]}`;
    return undefined;
  }
  if (mine.length !== quire.length) return `${mine.length} rows against ${quire.length}`;
  for (let i = 0; i < mine.length; i++) {
    const a = JSON.stringify(mine[i]), b = JSON.stringify(quire[i]);
    if (a !== b) return `row ${i}: ${a} against ${b}`;
  }
  return undefined;
}

// --- the customers, and quire's answers --------------------------------------------------------

const state = {};

function ndjson(quire) {
  return (state.ndjson ??= quire.bench.input(`format.write/${SHAPE}`));
}

/** The rows in memory: objects as JSON.parse gives them, created_at as microseconds (a number). */
function rows(quire) {
  if (!state.rows) {
    state.rows = decoder
      .decode(ndjson(quire))
      .split('\n')
      .filter((l) => l.length > 0)
      .map((l) => {
        const r = JSON.parse(l);
        r.created_at = microsFromIso(r.created_at);
        return r;
      });
  }
  return state.rows;
}

function microsFromIso(text) {
  const m = /^(.*?)(?:\.(\d{1,6}))?Z$/.exec(text);
  if (!m) throw new Error(`peers_format: unexpected timestamp ${text}`);
  return Date.parse(`${m[1]}Z`) * 1000 + (m[2] ? Number(m[2].padEnd(6, '0')) : 0);
}

function quireAnswer(quire, op) {
  state.quire ??= {};
  if (op in state.quire) return state.quire[op];
  const f = quire.format.open(quire.bench.input(`format.find/${SHAPE}`));
  let answer;
  try {
    switch (op) {
      case 'find': answer = f.find('id', FIND_ID); break;
      case 'filter-count': answer = f.count({ where: FILTER }); break;
      case 'filter': answer = f.query({ where: FILTER }); break;
      case 'text-search': answer = f.query({ where: `name contains '${TEXT}'` }); break;
      case 'read-all': answer = f.query({}); break;
      case 'sum': answer = f.aggregate('balance'); break;
      case 'column': answer = f.columns({ columns: ['balance'] }).columns.balance; break;
      case 'deep-page': answer = f.query({ offset: PAGE_OFFSET, limit: PAGE_LIMIT }); break;
      case 'newest-50': answer = f.query({ orderBy: 'created_at', descending: true, limit: NEWEST }); break;
      case 'write': answer = f.rowCount; break;
    }
  } finally {
    f.close();
  }
  state.quire[op] = op === 'write' ? answer : normalise(op, answer);
  return state.quire[op];
}

// --- the peers -----------------------------------------------------------------------------------

function jsonPeer() {
  const ops = rowOps((r) => Date.parse(r.created_at));
  const parse = (bytes) => decoder.decode(bytes).split('\n').filter((l) => l.length > 0).map((l) => JSON.parse(l));
  return {
    key: 'JSON',
    label: `JSON.parse + JSON.stringify (V8 ${process.versions.v8})`,
    file: (quire) => ndjson(quire),
    read: Object.fromEntries(Object.entries(ops).map(([op, fn]) => [op, (bytes) => fn(parse(bytes))])),
    write: (all) => {
      const lines = new Array(all.length);
      for (let i = 0; i < all.length; i++) lines[i] = JSON.stringify(all[i]);
      return encoder.encode(lines.join('\n') + '\n');
    },
    count: (bytes) => parse(bytes).length,
  };
}

function sqlitePeer() {
  const Database = require('better-sqlite3');
  const probe = new Database(':memory:');
  const sqliteVersion = probe.prepare('SELECT sqlite_version()').pluck().get();
  probe.close();
  const files = {};
  process.on('exit', () => {
    for (const f of Object.values(files)) rmSync(f, { force: true });
  });
  const create = (db) => {
    db.exec('CREATE TABLE customers (id INTEGER, name TEXT, email TEXT, country TEXT, city TEXT, age INTEGER, balance REAL, created_at INTEGER)');
  };
  const index = (db, shape) => {
    db.exec('CREATE INDEX customers_id ON customers (id)');
    if (shape === INDEXED) {
      db.exec('CREATE INDEX customers_created_at ON customers (created_at)');
      db.exec(`CREATE VIRTUAL TABLE customers_name USING fts5(name, content='customers', content_rowid='rowid', tokenize='trigram case_sensitive 1')`);
      db.exec(`INSERT INTO customers_name (customers_name) VALUES ('rebuild')`);
    }
  };
  // One transaction of prepared inserts, then the indexes, in a new in-memory database.
  const write = (all, shape) => {
    const db = new Database(':memory:');
    try {
      create(db);
      const insert = db.prepare('INSERT INTO customers VALUES (?, ?, ?, ?, ?, ?, ?, ?)');
      db.transaction(() => {
        for (const r of all) insert.run(r.id, r.name, r.email, r.country, r.city, r.age, r.balance, r.created_at);
        index(db, shape);
      })();
      return new Uint8Array(db.serialize());
    } finally {
      db.close();
    }
  };
  const withDb = (shape, fn) => {
    const db = new Database(files[shape], { readonly: true });
    try {
      return fn(db);
    } finally {
      db.close();
    }
  };
  const read = (shape) => ({
    find: () => withDb(shape, (db) => db.prepare(`SELECT ${SQL_COLUMNS} FROM customers WHERE id = ?`).get(FIND_ID)),
    'filter-count': () => withDb(shape, (db) => db.prepare(`SELECT count(*) FROM customers WHERE country = 'NA' AND age > 80`).pluck().get()),
    filter: () => withDb(shape, (db) => db.prepare(`SELECT ${SQL_COLUMNS} FROM customers WHERE country = 'NA' AND age > 80`).all()),
    'text-search': () =>
      withDb(shape, (db) =>
        db
          .prepare(
            shape === INDEXED
              ? `SELECT ${SQL_COLUMNS} FROM customers WHERE rowid IN (SELECT rowid FROM customers_name WHERE customers_name MATCH '"${TEXT}"')`
              : `SELECT ${SQL_COLUMNS} FROM customers WHERE instr(name, '${TEXT}') > 0`,
          )
          .all(),
      ),
    'read-all': () => withDb(shape, (db) => db.prepare(`SELECT ${SQL_COLUMNS} FROM customers`).all()),
    sum: () =>
      withDb(shape, (db) =>
        db.prepare('SELECT count(*) AS rows, count(balance) AS count, sum(balance) AS sum, min(balance) AS min, max(balance) AS max FROM customers').get(),
      ),
    column: () => withDb(shape, (db) => Float64Array.from(db.prepare('SELECT balance FROM customers').pluck().all())),
    'deep-page': () => withDb(shape, (db) => db.prepare(`SELECT ${SQL_COLUMNS} FROM customers ORDER BY id LIMIT ? OFFSET ?`).all(PAGE_LIMIT, PAGE_OFFSET)),
    'newest-50': () => withDb(shape, (db) => db.prepare(`SELECT ${SQL_COLUMNS} FROM customers ORDER BY created_at DESC LIMIT ?`).all(NEWEST)),
  });
  return {
    key: 'sqlite',
    label: `better-sqlite3 ${version('better-sqlite3')} (SQLite ${sqliteVersion})`,
    shapes: [SHAPE, INDEXED],
    file: (quire, shape) => {
      const bytes = write(rows(quire), shape);
      files[shape] = path.join(os.tmpdir(), `quire-bench-${process.pid}-${shape}.sqlite`);
      writeFileSync(files[shape], bytes);
      return bytes;
    },
    readFor: read,
    write,
    count: (bytes) => {
      const db = new Database(Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength));
      try {
        return db.prepare('SELECT count(*) FROM customers').pluck().get();
      } finally {
        db.close();
      }
    },
  };
}

async function arrowPeer() {
  const A = await import('apache-arrow');
  // Columns are built from buffers (makeData): vectorFromArray's builder takes about a second per
  // 200,000 strings, twenty times this.
  const utf8 = (strings) => {
    const offsets = new Int32Array(strings.length + 1);
    for (let i = 0; i < strings.length; i++) offsets[i + 1] = offsets[i] + Buffer.byteLength(strings[i], 'utf8');
    const data = Buffer.from(strings.join(''), 'utf8');
    return A.makeData({ type: new A.Utf8(), length: strings.length, nullCount: 0, valueOffsets: offsets, data: new Uint8Array(data.buffer, data.byteOffset, data.byteLength) });
  };
  const dictionary = (strings) => {
    const codes = new Int8Array(strings.length), seen = new Map(), values = [];
    for (let i = 0; i < strings.length; i++) {
      let code = seen.get(strings[i]);
      if (code === undefined) {
        code = values.length;
        if (code > 127) throw new Error('peers_format: more than 128 values for an Int8 dictionary');
        seen.set(strings[i], code);
        values.push(strings[i]);
      }
      codes[i] = code;
    }
    return A.makeVector(A.makeData({ type: new A.Dictionary(new A.Utf8(), new A.Int8()), length: strings.length, nullCount: 0, data: codes, dictionary: A.makeVector(utf8(values)) }));
  };
  const write = (all) => {
    const n = all.length;
    const id = new Int32Array(n), age = new Int8Array(n), balance = new Float64Array(n), created = new BigInt64Array(n);
    const name = new Array(n), email = new Array(n), country = new Array(n), city = new Array(n);
    for (let i = 0; i < n; i++) {
      const r = all[i];
      id[i] = r.id;
      name[i] = r.name;
      email[i] = r.email;
      country[i] = r.country;
      city[i] = r.city;
      age[i] = r.age;
      balance[i] = r.balance;
      created[i] = BigInt(r.created_at);
    }
    const table = new A.Table({
      id: A.makeVector(id),
      name: A.makeVector(utf8(name)),
      email: A.makeVector(utf8(email)),
      country: dictionary(country),
      city: dictionary(city),
      age: A.makeVector(age),
      balance: A.makeVector(balance),
      created_at: A.makeVector({ type: new A.TimestampMicrosecond(), data: created }),
    });
    return A.tableToIPC(table, 'file');
  };
  // Row objects of the given row numbers (all when absent), read from the columns.
  const rowsOf = (t, indices) => {
    const vec = Object.fromEntries(COLUMNS.map((c) => [c, t.getChild(c)]));
    const created = vec.created_at.toArray(); // BigInt64Array of microseconds
    if (!indices) {
      const cols = Object.fromEntries(COLUMNS.map((c) => [c, c === 'created_at' ? created : vec[c].toArray()]));
      const out = new Array(t.numRows);
      for (let i = 0; i < t.numRows; i++) {
        out[i] = {
          id: cols.id[i], name: cols.name[i], email: cols.email[i], country: cols.country[i], city: cols.city[i],
          age: cols.age[i], balance: cols.balance[i], created_at: Number(cols.created_at[i]),
        };
      }
      return out;
    }
    return indices.map((i) => ({
      id: vec.id.get(i), name: vec.name.get(i), email: vec.email.get(i), country: vec.country.get(i), city: vec.city.get(i),
      age: vec.age.get(i), balance: vec.balance.get(i), created_at: Number(created[i]),
    }));
  };
  // Row numbers where country = 'NA' and age > 80: dictionary codes, chunk by chunk.
  const filterRows = (t) => {
    const age = t.getChild('age').toArray();
    const out = [];
    let base = 0;
    for (const d of t.getChild('country').data) {
      const code = d.dictionary.toArray().indexOf('NA');
      const codes = d.values;
      if (code >= 0) for (let i = 0; i < d.length; i++) if (codes[i] === code && age[base + i] > 80) out.push(base + i);
      base += d.length;
    }
    return out;
  };
  // Row numbers whose name contains TEXT: a byte search through each chunk's UTF-8 buffer.
  const pattern = Buffer.from(TEXT);
  const searchRows = (t) => {
    const out = [];
    let base = 0;
    for (const d of t.getChild('name').data) {
      const offsets = d.valueOffsets;
      const bytes = Buffer.from(d.values.buffer, d.values.byteOffset, d.values.byteLength);
      let row = 0;
      for (let at = bytes.indexOf(pattern, offsets[0]); at >= 0 && at < offsets[d.length]; ) {
        while (offsets[row + 1] <= at) row++;
        if (at + pattern.length <= offsets[row + 1]) {
          out.push(base + row);
          at = bytes.indexOf(pattern, offsets[row + 1]);
        } else {
          at = bytes.indexOf(pattern, at + 1);
        }
      }
      base += d.length;
    }
    return out;
  };
  const table = (bytes) => A.tableFromIPC(bytes);
  return {
    key: 'arrow',
    label: `apache-arrow ${version('apache-arrow')}`,
    file: (quire) => write(rows(quire)),
    read: {
      find: (bytes) => {
        const t = table(bytes);
        const i = t.getChild('id').toArray().indexOf(FIND_ID);
        return i < 0 ? undefined : rowsOf(t, [i])[0];
      },
      'filter-count': (bytes) => filterRows(table(bytes)).length,
      filter: (bytes) => {
        const t = table(bytes);
        return rowsOf(t, filterRows(t));
      },
      'text-search': (bytes) => {
        const t = table(bytes);
        return rowsOf(t, searchRows(t));
      },
      'read-all': (bytes) => rowsOf(table(bytes)),
      sum: (bytes) => aggregate(table(bytes).getChild('balance').toArray()),
      column: (bytes) => table(bytes).getChild('balance').toArray(),
      'deep-page': (bytes) => {
        const t = table(bytes);
        const indices = [];
        for (let i = PAGE_OFFSET; i < Math.min(t.numRows, PAGE_OFFSET + PAGE_LIMIT); i++) indices.push(i);
        return rowsOf(t, indices);
      },
      'newest-50': (bytes) => {
        const t = table(bytes);
        const created = int64Numbers(t.getChild('created_at').toArray());
        return rowsOf(t, topK(created.length, (i) => created[i], NEWEST));
      },
    },
    write,
    count: (bytes) => table(bytes).numRows,
  };
}

async function parquetPeer() {
  const { parquetWriteBuffer } = await import('hyparquet-writer');
  const { parquetRead, parquetReadObjects, parquetMetadata } = await import('hyparquet');
  // Pages of 8 KiB (quire's page size; the writer's default is 1 MB): a read of a few rows then
  // decodes a few pages (through the offset index, written by default), not whole column chunks.
  const PAGE_SIZE = 8192;
  // created_at stays a bigint of microseconds (hyparquet's default makes a Date of milliseconds).
  const parsers = { timestampFromMicroseconds: (us) => us };
  const schema = [
    { name: 'root', num_children: 8 },
    { name: 'id', type: 'INT32', repetition_type: 'REQUIRED' },
    { name: 'name', type: 'BYTE_ARRAY', converted_type: 'UTF8', repetition_type: 'REQUIRED' },
    { name: 'email', type: 'BYTE_ARRAY', converted_type: 'UTF8', repetition_type: 'REQUIRED' },
    { name: 'country', type: 'BYTE_ARRAY', converted_type: 'UTF8', repetition_type: 'REQUIRED' },
    { name: 'city', type: 'BYTE_ARRAY', converted_type: 'UTF8', repetition_type: 'REQUIRED' },
    { name: 'age', type: 'INT32', repetition_type: 'REQUIRED' },
    { name: 'balance', type: 'DOUBLE', repetition_type: 'REQUIRED' },
    { name: 'created_at', type: 'INT64', repetition_type: 'REQUIRED', logical_type: { type: 'TIMESTAMP', isAdjustedToUTC: true, unit: 'MICROS' } },
  ];
  const write = (all) => {
    const n = all.length;
    const id = new Int32Array(n), age = new Int32Array(n), balance = new Float64Array(n), created = new BigInt64Array(n);
    const name = new Array(n), email = new Array(n), country = new Array(n), city = new Array(n);
    for (let i = 0; i < n; i++) {
      const r = all[i];
      id[i] = r.id;
      name[i] = r.name;
      email[i] = r.email;
      country[i] = r.country;
      city[i] = r.city;
      age[i] = r.age;
      balance[i] = r.balance;
      created[i] = BigInt(r.created_at);
    }
    const data = { id, name, email, country, city, age, balance, created_at: created };
    return new Uint8Array(
      parquetWriteBuffer({ columnData: COLUMNS.map((c) => ({ name: c, data: data[c] })), schema, codec: 'SNAPPY', rowGroupSize: 65536, pageSize: PAGE_SIZE }),
    );
  };
  const file = (bytes) => (bytes.byteOffset === 0 && bytes.byteLength === bytes.buffer.byteLength ? bytes.buffer : bytes.slice().buffer);
  // Whole columns, row group by row group (no row objects), concatenated.
  // Returns { <column>: values..., rowStart: the row of the first value } (with a range, the chunks
  // hold whole row groups, which may begin before it).
  const readColumns = async (buffer, columns, range = {}) => {
    const parts = Object.fromEntries(columns.map((c) => [c, []]));
    await parquetRead({ file: buffer, columns, parsers, ...range, onChunk: (chunk) => parts[chunk.columnName].push(chunk) });
    const out = { rowStart: Math.min(...columns.map((c) => parts[c][0]?.rowStart ?? 0)) };
    for (const c of columns) {
      const chunks = parts[c].sort((a, b) => a.rowStart - b.rowStart);
      if (chunks.length === 1) {
        out[c] = chunks[0].columnData;
        continue;
      }
      const n = chunks.reduce((s, ch) => s + ch.columnData.length, 0);
      const first = chunks[0].columnData;
      const all = ArrayBuffer.isView(first) ? new first.constructor(n) : new Array(n);
      let at = 0;
      for (const ch of chunks) {
        if (ArrayBuffer.isView(all)) all.set(ch.columnData, at);
        else for (let i = 0; i < ch.columnData.length; i++) all[at + i] = ch.columnData[i];
        at += ch.columnData.length;
      }
      out[c] = all;
    }
    return out;
  };
  const objectsAt = (cols, indices) =>
    indices.map((i) => Object.fromEntries(COLUMNS.map((c) => [c, cols[c][i]])));
  return {
    key: 'parquet',
    label: `hyparquet ${version('hyparquet')} + hyparquet-writer ${version('hyparquet-writer')}`,
    file: (quire) => write(rows(quire)),
    read: {
      // The row groups whose id statistics admit the key, their id column, then the one row.
      // (hyparquet's own `filter` skips the same row groups but turns all 65,536 rows of the one
      // left into objects before filtering: three times slower.)
      find: async (bytes) => {
        const buffer = file(bytes);
        const metadata = parquetMetadata(buffer);
        let groupStart = 0;
        for (const group of metadata.row_groups) {
          const groupEnd = groupStart + Number(group.num_rows);
          const stats = group.columns.find((c) => c.meta_data.path_in_schema[0] === 'id').meta_data.statistics;
          if (!stats || (stats.min_value <= FIND_ID && FIND_ID <= stats.max_value)) {
            const { id, rowStart } = await readColumns(buffer, ['id'], { metadata, rowStart: groupStart, rowEnd: groupEnd });
            const i = id.indexOf(FIND_ID);
            if (i >= 0) {
              const at = rowStart + i;
              return (await parquetReadObjects({ file: buffer, metadata, parsers, rowStart: at, rowEnd: at + 1, useOffsetIndex: true }))[0];
            }
          }
          groupStart = groupEnd;
        }
        return undefined;
      },
      'filter-count': async (bytes) => {
        const { country, age } = await readColumns(file(bytes), ['country', 'age']);
        let n = 0;
        for (let i = 0; i < age.length; i++) if (matchesFilter(country[i], age[i])) n++;
        return n;
      },
      filter: async (bytes) => {
        const cols = await readColumns(file(bytes), COLUMNS);
        const hits = [];
        for (let i = 0; i < cols.age.length; i++) if (matchesFilter(cols.country[i], cols.age[i])) hits.push(i);
        return objectsAt(cols, hits);
      },
      'text-search': async (bytes) => {
        const cols = await readColumns(file(bytes), COLUMNS);
        const hits = [];
        for (let i = 0; i < cols.name.length; i++) if (cols.name[i].includes(TEXT)) hits.push(i);
        return objectsAt(cols, hits);
      },
      'read-all': (bytes) => parquetReadObjects({ file: file(bytes), parsers }),
      sum: async (bytes) => aggregate((await readColumns(file(bytes), ['balance'])).balance),
      column: async (bytes) => (await readColumns(file(bytes), ['balance'])).balance,
      'deep-page': (bytes) =>
        parquetReadObjects({ file: file(bytes), parsers, rowStart: PAGE_OFFSET, rowEnd: PAGE_OFFSET + PAGE_LIMIT, useOffsetIndex: true }),
      'newest-50': async (bytes) => {
        const buffer = file(bytes);
        const { created_at: created } = await readColumns(buffer, ['created_at']);
        const top = topK(created.length, (i) => Number(created[i]), NEWEST);
        const start = Math.min(...top), end = Math.max(...top) + 1;
        const span = await parquetReadObjects({ file: buffer, parsers, rowStart: start, rowEnd: end, useOffsetIndex: true });
        return top.map((i) => span[i - start]);
      },
    },
    write,
    count: (bytes) => Number(parquetMetadata(file(bytes)).num_rows),
  };
}

async function msgpackPeer() {
  const { pack, unpack } = await import('msgpackr');
  const ops = rowOps((r) => r.created_at);
  return {
    key: 'msgpack',
    label: `msgpackr ${version('msgpackr')}`,
    file: (quire) => pack(rows(quire)),
    read: Object.fromEntries(Object.entries(ops).map(([op, fn]) => [op, (bytes) => fn(unpack(bytes))])),
    write: (all) => pack(all),
    count: (bytes) => unpack(bytes).length,
  };
}

/**
 * quire itself through the npm package's API, as a JS user calls it: format.write(rows) of the same
 * row objects (the customers' schema given: created_at microseconds into a timestamp column; the
 * indexed shape with the three indexes), checked byte for byte against the benchmark's own file of
 * the shape (the C++ writer's, from cells); and one column to JS as core holds it
 * (columns(..., { typed: true })) and as doubles (columns()).
 */
function npmPeer(quire) {
  const schema = COLUMNS.map((name) => ({
    name,
    type: name === 'id' || name === 'age' ? 'integer' : name === 'balance' ? 'float' : name === 'created_at' ? 'timestamp' : 'string',
  }));
  const indexes = { id: 'hash', name: 'text', created_at: 'sorted' };
  const column = (typed) => (bytes) => {
    const f = quire.format.open(bytes);
    try {
      return typed ? f.columns({ columns: ['balance'] }, { typed: true }).columns.balance : f.columns({ columns: ['balance'] }).columns.balance;
    } finally {
      f.close();
    }
  };
  // Each call opens the bytes (format.open reads them where they are), answers, closes.
  const opened = (fn) => (bytes) => {
    const f = quire.format.open(bytes);
    try {
      return fn(f);
    } finally {
      f.close();
    }
  };
  // sum-decimal: the same balances in a decimal column (format.write of the objects, their
  // JavaScript text kept exactly), summed exactly — against the peers' double sums.
  let decimalFile;
  const sumDecimal = (bytes) => {
    decimalFile ??= quire.format.write(rows(quire), { schema: schema.map((c) => (c.name === 'balance' ? { ...c, type: 'decimal' } : c)) });
    return opened((f) => f.aggregate('balance'))(decimalFile);
  };
  return {
    key: 'npm',
    label: `quire-health ${JSON.parse(readFileSync(new URL('../js/package.json', import.meta.url), 'utf8')).version} (the npm package's API)`,
    only: ['write', 'column', 'column-doubles', 'find', 'filter-count', 'filter', 'text-search', 'sum', 'sum-decimal', 'deep-page', 'newest-50'],
    file: (q, shape) => q.bench.input(`format.find/${shape}`),
    read: {
      column: column(true),
      'column-doubles': column(false),
      find: opened((f) => f.find('id', FIND_ID)),
      'filter-count': opened((f) => f.count({ where: FILTER })),
      filter: opened((f) => f.query({ where: FILTER })),
      'text-search': opened((f) => f.query({ where: `name contains '${TEXT}'` })),
      sum: opened((f) => f.aggregate('balance')),
      'sum-decimal': sumDecimal,
      'deep-page': opened((f) => f.query({ offset: PAGE_OFFSET, limit: PAGE_LIMIT })),
      'newest-50': opened((f) => f.query({ orderBy: 'created_at', descending: true, limit: NEWEST })),
    },
    write: (all, shape) => quire.format.write(all, shape === INDEXED ? { schema, indexes } : { schema }),
    count: (bytes) => {
      const f = quire.format.open(bytes);
      try {
        return f.rowCount;
      } finally {
        f.close();
      }
    },
    same: (bytes, shape) => {
      const want = quire.bench.input(`format.find/${shape}`);
      if (bytes.length !== want.length || !bytes.every((b, i) => b === want[i])) {
        throw new Error(`peer.npm.write/${shape}: format.write(rows) gives ${bytes.length} bytes, not the benchmark's file of ${want.length}`);
      }
    },
  };
}

/**
 * DuckDB through @duckdb/node-api (native DuckDB inside Node), two peers: `duckdb` on a table it
 * loaded (a database file) and `duckdb-parquet` on a Parquet file DuckDB wrote. One in-memory
 * DuckDB instance and connection live across calls (as a server keeps its engine); each read call
 * opens the file anew: `ATTACH ... (READ_ONLY)`, the query, `DETACH` (the attached database's
 * buffers go with it), or a query over `read_parquet(...)` with DuckDB's external file cache and
 * Parquet metadata cache off, so that no call reads what an earlier one cached. DuckDB runs a
 * query on its own threads (as many as the machine's cores, its default: what a user gets); quire
 * in Node runs on one. Writes append the row objects through DuckDB's Appender (a value at a time,
 * as its API offers from JavaScript) into a new database file, checkpointed and closed, or into a
 * table then `COPY ... (FORMAT parquet)` with DuckDB's defaults (Snappy, row groups of 122,880).
 * Types: id and age INTEGER, balance DOUBLE, created_at TIMESTAMP (microseconds), the rest VARCHAR;
 * rows come back as getRowObjectsJS() objects, created_at as epoch_us (a bigint), one column as the
 * result chunks' Float64Array items copied into one array.
 */
async function duckdbPeers() {
  const { DuckDBInstance, DuckDBTimestampValue } = await import('@duckdb/node-api');
  const dir = mkdtempSync(path.join(os.tmpdir(), `quire-bench-duckdb-${process.pid}-`));
  process.on('exit', () => rmSync(dir, { recursive: true, force: true }));
  const reader = await DuckDBInstance.create(':memory:');
  const conn = await reader.connect();
  for (const setting of ['enable_external_file_cache', 'parquet_metadata_cache']) {
    try {
      await conn.run(`SET ${setting} = false`);
    } catch {
      // not a setting of this DuckDB: nothing cached to turn off
    }
  }
  const duckdbVersion = (await conn.runAndReadAll('SELECT version() AS v')).getRowObjectsJS()[0].v;
  const TABLE = 'CREATE TABLE customers (id INTEGER, name VARCHAR, email VARCHAR, country VARCHAR, city VARCHAR, age INTEGER, balance DOUBLE, created_at TIMESTAMP)';
  const SELECT = 'id, name, email, country, city, age, balance, epoch_us(created_at) AS created_at';
  let serial = 0;
  const fill = async (db, all) => {
    const c = await db.connect();
    try {
      await c.run(TABLE);
      const a = await c.createAppender('customers');
      for (const r of all) {
        a.appendInteger(r.id);
        a.appendVarchar(r.name);
        a.appendVarchar(r.email);
        a.appendVarchar(r.country);
        a.appendVarchar(r.city);
        a.appendInteger(r.age);
        a.appendDouble(r.balance);
        a.appendTimestamp(new DuckDBTimestampValue(BigInt(r.created_at)));
        a.endRow();
      }
      a.flushSync();
      a.closeSync();
      return c;
    } catch (e) {
      c.closeSync();
      throw e;
    }
  };
  const writeTable = async (all) => {
    const file = path.join(dir, `write-${serial++}.duckdb`);
    const db = await DuckDBInstance.create(file);
    try {
      const c = await fill(db, all);
      await c.run('CHECKPOINT');
      c.closeSync();
    } finally {
      db.closeSync();
    }
    const bytes = readFileSync(file);
    rmSync(file, { force: true });
    rmSync(`${file}.wal`, { force: true });
    return new Uint8Array(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  };
  const writeParquet = async (all) => {
    const file = path.join(dir, `write-${serial++}.parquet`);
    const db = await DuckDBInstance.create(':memory:');
    try {
      const c = await fill(db, all);
      await c.run(`COPY customers TO '${file}' (FORMAT parquet)`);
      c.closeSync();
    } finally {
      db.closeSync();
    }
    const bytes = readFileSync(file);
    rmSync(file, { force: true });
    return new Uint8Array(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  };
  const count = async (bytes, ext) => {
    const file = path.join(dir, `count-${serial++}.${ext}`);
    writeFileSync(file, bytes);
    try {
      if (ext === 'parquet') return Number((await conn.runAndReadAll(`SELECT count(*) AS n FROM read_parquet('${file}')`)).getRowObjectsJS()[0].n);
      await conn.run(`ATTACH '${file}' AS counted (READ_ONLY)`);
      try {
        return Number((await conn.runAndReadAll('SELECT count(*) AS n FROM counted.customers')).getRowObjectsJS()[0].n);
      } finally {
        await conn.run('DETACH counted');
      }
    } finally {
      rmSync(file, { force: true });
    }
  };
  const objects = async (sql) => (await conn.runAndReadAll(sql)).getRowObjectsJS();
  const one = async (sql) => (await objects(sql))[0];
  const doubles = async (sql) => {
    const result = await conn.run(sql);
    const chunks = [];
    let n = 0;
    for (let i = 0; i < result.chunkCount; i++) {
      const items = result.getChunk(i).getColumnVector(0).items;
      chunks.push(items);
      n += items.length;
    }
    const out = new Float64Array(n);
    let at = 0;
    for (const items of chunks) {
      out.set(items, at);
      at += items.length;
    }
    return out;
  };
  const queries = (from) => ({
    find: async () => one(`SELECT ${SELECT} FROM ${from} WHERE id = ${FIND_ID}`),
    'filter-count': async () => Number((await one(`SELECT count(*) AS n FROM ${from} WHERE country = 'NA' AND age > 80`)).n),
    filter: () => objects(`SELECT ${SELECT} FROM ${from} WHERE country = 'NA' AND age > 80`),
    'text-search': () => objects(`SELECT ${SELECT} FROM ${from} WHERE contains(name, '${TEXT}')`),
    'read-all': () => objects(`SELECT ${SELECT} FROM ${from}`),
    sum: async () => {
      const r = await one(`SELECT count(*) AS rows, count(balance) AS count, sum(balance) AS sum, min(balance) AS min, max(balance) AS max FROM ${from}`);
      return { rows: Number(r.rows), count: Number(r.count), sum: r.sum, min: r.min, max: r.max };
    },
    column: () => doubles(`SELECT balance FROM ${from}`),
    'deep-page': () => objects(`SELECT ${SELECT} FROM ${from} ORDER BY id LIMIT ${PAGE_LIMIT} OFFSET ${PAGE_OFFSET}`),
    'newest-50': () => objects(`SELECT ${SELECT} FROM ${from} ORDER BY created_at DESC, id LIMIT ${NEWEST}`),
  });
  const tableFile = path.join(dir, 'customers.duckdb');
  const parquetFile = path.join(dir, 'customers.parquet');
  const attached = (fn) => async () => {
    await conn.run(`ATTACH '${tableFile}' AS c (READ_ONLY)`);
    try {
      return await fn();
    } finally {
      await conn.run('DETACH c');
    }
  };
  const table = queries('c.customers');
  const parquet = queries(`read_parquet('${parquetFile}')`);
  const label = `@duckdb/node-api ${version('@duckdb/node-api')} (DuckDB ${duckdbVersion})`;
  return [
    {
      key: 'duckdb',
      label,
      file: async (quire) => {
        const bytes = await writeTable(rows(quire));
        writeFileSync(tableFile, bytes);
        return bytes;
      },
      read: Object.fromEntries(Object.entries(table).map(([op, fn]) => [op, attached(fn)])),
      write: writeTable,
      count: (bytes) => count(bytes, 'duckdb'),
    },
    {
      key: 'duckdb-parquet',
      label: `${label}, Parquet`,
      file: async (quire) => {
        const bytes = await writeParquet(rows(quire));
        writeFileSync(parquetFile, bytes);
        return bytes;
      },
      read: parquet,
      write: writeParquet,
      count: (bytes) => count(bytes, 'parquet'),
    },
  ];
}

// --- the cases -----------------------------------------------------------------------------------

export async function peerCases(quire, cases) {
  const wanted = new Set(cases.map((c) => c.name));
  const selected = (shape, ops) => ops.filter((op) => wanted.has(`format.${op}/${shape}`));
  const plainOps = selected(SHAPE, OPS);
  const indexedOps = selected(INDEXED, INDEXED_OPS);
  if (plainOps.length === 0 && indexedOps.length === 0) return [];

  const peers = [jsonPeer(), npmPeer(quire), sqlitePeer(), await arrowPeer(), await parquetPeer(), await msgpackPeer(), ...(await duckdbPeers())];
  const out = [];
  for (const peer of peers) {
    const shapes = [[SHAPE, plainOps]];
    if (peer.key === 'sqlite' || peer.key === 'npm') shapes.push([INDEXED, indexedOps]);
    let equal = 0;
    for (const [shape, allOps] of shapes) {
      // The npm peer adds column-doubles (columns() as doubles) beside column, and sum-decimal (an
      // exact sum of the balances in a decimal column) beside sum, wherever those run.
      const extra = [...(allOps.includes('column') ? ['column-doubles'] : []), ...(allOps.includes('sum') ? ['sum-decimal'] : [])];
      // The npm peer's write is timed before its reads: after them (their row objects on the heap,
      // the wasm memory grown) the same write ran 1.6x slower in one run, where alone it ran at
      // JSON.stringify's time.
      const ops = peer.only
        ? [...allOps, ...extra].filter((op) => peer.only.includes(op)).sort((a, b) => (b === 'write') - (a === 'write'))
        : allOps;
      if (ops.length === 0) continue;
      const fileBytes = ops.some((op) => op !== 'write') ? await peer.file(quire, shape) : undefined;
      const read = peer.readFor ? peer.readFor(shape) : peer.read;
      for (const op of ops) {
        const name = `peer.${peer.key}.${op}/${shape}`;
        let input, run, checksum;
        const asked = { 'column-doubles': 'column', 'sum-decimal': 'sum' }[op] ?? op;
        if (op === 'write') {
          input = () => ndjson(quire);
          run = () => peer.write(rows(quire), shape);
          checksum = async (bytes) => fnv(`rows ${await peer.count(bytes)}, bytes ${bytes.length}`);
          const bytes = await run();
          const n = await peer.count(bytes);
          if (n !== quireAnswer(quire, 'write')) throw new Error(`${name}: the written file reads back as ${n} rows, quire's has ${quireAnswer(quire, 'write')}`);
          peer.same?.(bytes, shape);
        } else {
          input = () => fileBytes;
          run = read[op];
          checksum = (answer) => checksumOf(asked, normalise(asked, answer));
          const diff = difference(asked, normalise(asked, await run(fileBytes)), quireAnswer(quire, asked));
          if (diff) throw new Error(`${name}: the answer differs from quire's: ${diff}`);
        }
        equal++;
        out.push({ name, op: `peer.${peer.key}.${op}`, shape, peer: peer.label, mirrors: `format.${asked}/${shape}`, input, run, checksum });
      }
    }
    process.stderr.write(`peer.${peer.key}: ${equal} answers equal to quire's\n`);
  }
  return out;
}
