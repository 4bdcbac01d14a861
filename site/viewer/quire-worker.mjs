// The .quire view's worker: the wasm module and one open QuireFile, read by ranges as the queries
// need them — File slices with FileReaderSync, or HTTP Range requests with synchronous XHR (both
// exist only in a Worker, which is why the file lives here) — through a bounded page cache. The
// file is never read whole. Messages: { id, op, args } in; { id, ok, value } or { id, ok: false,
// error: { code, message } } out; exports also send { id, chunk } pieces as they are made.
const PAGE = 64 * 1024; // bytes a cache page holds
const MAX_PAGES = 256; // 16 MiB of cached file bytes at most
const DIRECT = 1024 * 1024; // reads larger than this go past the cache (a big page read once)

let pkg = null;
let file = null;
let cache = null;
let cancelled = new Set(); // ids of exports asked to stop

/** What the page cache has done, for the explain panel: the source's own reads. */
const io = { reads: 0, bytes: 0, hits: 0, misses: 0 };

/** A range reader over fetch(start, length) → Uint8Array, through an LRU cache of PAGE-byte pages. */
function cachedReader(size, fetchRange) {
  const pages = new Map();
  const page = (index) => {
    let bytes = pages.get(index);
    if (bytes) {
      io.hits++;
      pages.delete(index);
      pages.set(index, bytes);
      return bytes;
    }
    io.misses++;
    const start = index * PAGE;
    bytes = fetchRange(start, Math.min(PAGE, size - start));
    pages.set(index, bytes);
    if (pages.size > MAX_PAGES) pages.delete(pages.keys().next().value);
    return bytes;
  };
  cache = pages;
  return {
    size,
    read(offset, length, into) {
      if (offset >= size) return 0;
      length = Math.min(length, size - offset);
      if (length > DIRECT) {
        const bytes = fetchRange(offset, length);
        into.set(bytes);
        return bytes.length;
      }
      let done = 0;
      while (done < length) {
        const at = offset + done;
        const p = page(Math.floor(at / PAGE));
        const from = at % PAGE;
        const n = Math.min(p.length - from, length - done);
        if (n <= 0) break;
        into.set(p.subarray(from, from + n), done);
        done += n;
      }
      return done;
    },
  };
}

function blobFetcher(blob) {
  const sync = new FileReaderSync();
  return (start, length) => {
    io.reads++;
    io.bytes += length;
    return new Uint8Array(sync.readAsArrayBuffer(blob.slice(start, start + length)));
  };
}

function urlFetcher(url) {
  return (start, length) => {
    io.reads++;
    io.bytes += length;
    const xhr = new XMLHttpRequest();
    xhr.open('GET', url, false); // synchronous: core's reads are synchronous (no Asyncify)
    xhr.responseType = 'arraybuffer';
    xhr.setRequestHeader('Range', `bytes=${start}-${start + length - 1}`);
    xhr.send();
    if (xhr.status !== 206) throw new Error(`${url}: HTTP ${xhr.status} for a range`);
    return new Uint8Array(xhr.response);
  };
}

// --- rows: core's cells, one JSON array of each cell's text a line (core's digits kept) -----------

const rowsOf = (text) => text.split('\n').filter(Boolean).map((line) => JSON.parse(line));

// --- operations ---------------------------------------------------------------------------------

function errorOf(err) {
  return { code: err?.code ?? err?.name ?? 'ERROR', message: err?.message ?? String(err) };
}

function memory() {
  const heap = pkg.memory();
  const js = self.performance?.memory?.usedJSHeapSize ?? null;
  // reads and bytesRead: the source's own reads since the file was opened (requests, for a URL).
  return { wasmHeapBytes: heap.heapCapacityBytes, wasmHeapUsedBytes: heap.heapBytes, jsHeapBytes: js, cachePages: cache?.size ?? 0, cacheBytes: (cache?.size ?? 0) * PAGE, reads: io.reads, bytesRead: io.bytes };
}

/** Imports the package and starts its module, once: at the first open, or earlier when asked. */
let starting = null;
async function start(pkgUrl, module) {
  starting ??= (async () => {
    const m = await import(pkgUrl);
    await m.init(module);
    pkg = m;
  })();
  try {
    await starting;
  } catch (err) {
    starting = null; // the next open tries again, and reports its own failure
    throw err;
  }
}

const ops = {
  // Sent as the worker is made, before the file is known to be .quire: the module starts while the
  // page detects the file's kind (site/README.md, quire-worker.mjs).
  start: ({ pkgUrl, module }) => start(pkgUrl, module),
  // `key` (a key file's bytes) or `passphrase` opens a sealed file; they stay in this worker's
  // memory and go nowhere else (the page's CSP allows no other origin).
  async open({ blob, url, size, pkgUrl, module, key, passphrase }) {
    await start(pkgUrl, module);
    file?.close();
    file = null;
    Object.assign(io, { reads: 0, bytes: 0, hits: 0, misses: 0 });
    const reader = cachedReader(size, blob ? blobFetcher(blob) : urlFetcher(url));
    const t0 = performance.now();
    file = pkg.format.open(reader, { key, passphrase });
    const info = file.info;
    // A partition's key reads one partition: core's storage report, as that key sees it, names it.
    let partition;
    if (info.partitionKey) partition = pkg.format.storeStorage(reader, { key, passphrase }).byPartition[0]?.value;
    return { info, partition, openMs: performance.now() - t0, memory: memory() };
  },
  storage: () => file.storage(),
  chunkStatistics: ({ column }) => file.chunkStatistics(column),
  count: ({ query }) => file.count(query),
  rows({ query, names }) {
    return rowsOf(file.queryText({ ...query, columns: names }, { form: 'cells' }));
  },
  find({ column, key, names }) {
    const t0 = performance.now();
    const row = file.findText(column, key, { columns: names, form: 'cells' });
    const ms = performance.now() - t0;
    if (row === undefined) return { found: false, ms, memory: memory() };
    return { found: true, ms, cells: JSON.parse(row), memory: memory() };
  },
  explain({ query }) {
    const before = { ...io };
    const report = file.explain(query, { analyze: true });
    return { report, source: { reads: io.reads - before.reads, bytes: io.bytes - before.bytes, cacheHits: io.hits - before.hits } };
  },
  memory,
  async export({ query, format, batch = 20000 }, id) {
    // In batches of rows (offset, limit), each piece posted as soon as it is made; a cancel asked
    // between batches stops it (a cancel during one batch terminates the worker: views/quire.mjs).
    // A batch aims at about 8 MB of text, so wide rows make smaller batches and narrow ones fewer
    // (with a filter, each batch scans again from the start: fewer batches cost less). The text is
    // core's: queryText's NDJSON, or queryCsv's CSV (its header row once, from a query of no rows).
    const total = file.count(query);
    let done = 0;
    const header = format === 'csv' ? file.queryCsv({ ...query, limit: 0 }) : '';
    if (format === 'csv') self.postMessage({ id, chunk: header, done, total });
    while (done < total) {
      if (cancelled.has(id)) {
        cancelled.delete(id);
        throw Object.assign(new Error('export cancelled'), { name: 'AbortError' });
      }
      const part = { ...query, offset: (query.offset ?? 0) + done, limit: Math.min(batch, total - done) };
      const text = format === 'csv' ? file.queryCsv(part).slice(header.length) : file.queryText(part, { ndjson: true });
      // A CSV record may span lines (a quoted line break): its rows are the ones asked for.
      const rows = format === 'csv' ? (text ? part.limit : 0) : text.split('\n').filter(Boolean).length;
      done += rows;
      if (rows > 0) batch = Math.max(1000, Math.min(200000, Math.round((8 << 20) / (text.length / rows))));
      self.postMessage({ id, chunk: text, done, total });
      if (rows === 0) break;
      await new Promise((r) => setTimeout(r, 0)); // lets a cancel message in
    }
    return { rows: done };
  },
};

self.onmessage = async (e) => {
  const { id, op, args } = e.data;
  if (op === 'cancel') {
    cancelled.add(args.id);
    return;
  }
  try {
    if (op !== 'open' && op !== 'start' && !file) throw new Error('no file open');
    const value = await ops[op](args ?? {}, id);
    self.postMessage({ id, ok: true, value });
  } catch (err) {
    self.postMessage({ id, ok: false, error: errorOf(err) });
  }
};
