// The .quire format in headless Chromium: in a dedicated Worker, a file written there is opened
// from a Blob with blobReader (FileReaderSync, range by range) and answers find, count, query and
// columns exactly as the same file does from a Uint8Array in Node, reading far fewer bytes than the
// file holds; writeStream reads a Blob's ReadableStream. On a page, blobReader refuses with a clear
// Error (FileReaderSync exists only in Workers) and openBlob reads the Blob whole instead.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { cpSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { dist, loadQuire } from './helpers.mjs';
import { serve, launchChromium } from './browser.mjs';

const work = mkdtempSync(path.join(tmpdir(), 'quire-format-browser-'));
test.after(() => rmSync(work, { recursive: true, force: true }));

// Shared by Node and the browser: the rows, the write options, and the calls whose answers must match.
const SHARED = `
export const WRITE_OPTIONS = { indexes: { id: 'hash', name: 'text' }, chunkRows: 512 };
const COUNTRIES = ['NA', 'US', 'DE', 'JP', 'BR'];
export function makeRows(n) {
  const rows = [];
  for (let i = 0; i < n; i++) {
    rows.push({
      id: i,
      name: 'name ' + i + ' ' + 'xyz'.repeat(i % 17) + (i % 11 === 0 ? ' Zoë 😀' : ''),
      country: COUNTRIES[(i * 7) % COUNTRIES.length],
      age: 18 + ((i * 13) % 80),
      balance: i % 10 === 0 ? null : ((i * 37) % 100000) / 100,
      joined: '2021-' + String(1 + (i % 12)).padStart(2, '0') + '-' + String(1 + (i % 28)).padStart(2, '0') + 'T03:04:05Z',
    });
  }
  return rows;
}
export function toCsv(rows) {
  return 'id,name,country,age,balance\\n' + rows.map((r) => [r.id, '"' + r.name + '"', r.country, r.age, r.balance ?? ''].join(',')).join('\\n') + '\\n';
}
function plain(columns) {
  const out = { rows: columns.rows, columns: {}, valid: {} };
  for (const [name, values] of Object.entries(columns.columns)) out.columns[name] = Array.from(values, (v) => (typeof v === 'number' && Number.isNaN(v) ? null : v));
  for (const [name, valid] of Object.entries(columns.valid)) out.valid[name] = Array.from(valid);
  return out;
}
export function fnv(bytes) {
  let h = 0x811c9dc5;
  for (let i = 0; i < bytes.length; i++) h = Math.imul(h ^ bytes[i], 0x01000193) >>> 0;
  return h;
}
/** The calls compared between the Worker (Blob by ranges) and Node (Uint8Array). */
export function calls(f) {
  return {
    find: f.find('id', 1234),
    findName: f.find('name', 'name 1871 xyz', { columns: ['id', 'joined'] }) ?? null,
    missing: f.find('id', 999999) ?? null,
    count: f.count({ where: "country = 'NA' and age > 60" }),
    countAll: f.count(),
    contains: f.count({ where: "name contains 'Zoë'" }),
    query: f.query({ where: "name startsWith 'name 12'", columns: ['id', 'name', 'balance'], orderBy: 'age', limit: 15 }),
    aggregate: f.aggregate('balance', { where: 'age between 30 and 40' }),
    columns: plain(f.columns({ columns: ['age', 'balance', 'country', 'joined'], where: 'age > 92' })),
  };
}
`;

const ROWS = 12000;

test('format in Chromium: a Worker reads a Blob by ranges with the same answers as Node; a page gets a clear Error', async (t) => {
  cpSync(dist, path.join(work, 'dist'), { recursive: true });
  writeFileSync(path.join(work, 'shared.js'), SHARED);
  writeFileSync(
    path.join(work, 'worker.js'),
    `import { init, format, blobReader } from './dist/index.js';
     import { WRITE_OPTIONS, makeRows, toCsv, calls, fnv } from './shared.js';
     try {
       await init();
       const rows = makeRows(${ROWS});
       const bytes = format.write(rows, WRITE_OPTIONS);
       const blob = new Blob([bytes]);
       const f = format.open(blobReader(blob));
       const opened = f.counters().bytes;
       f.find('id', 1234);
       const afterFind = f.counters().bytes;
       const answers = calls(f);
       const total = f.counters().bytes;
       f.close();
       const csv = toCsv(rows);
       const streamed = await format.writeStream(new Blob([csv]).stream(), { from: 'csv', indexes: { id: 'hash' } });
       const whole = format.write(csv, { from: 'csv', indexes: { id: 'hash' } });
       postMessage({ size: bytes.length, checksum: fnv(bytes), opened, afterFind, total, answers,
                     stream: { same: fnv(streamed) === fnv(whole) && streamed.length === whole.length, bytes: streamed.length } });
     } catch (e) {
       postMessage({ error: String(e && e.stack || e) });
     }`,
  );
  writeFileSync(
    path.join(work, 'index.html'),
    `<!doctype html><html><head></head><body><script type="module">
      import { init, format, blobReader, QuireError } from './dist/index.js';
      import { WRITE_OPTIONS, makeRows } from './shared.js';
      try {
        await init();
        const bytes = format.write(makeRows(50), WRITE_OPTIONS);
        let refused = null;
        try { blobReader(new Blob([bytes])); } catch (e) { refused = { isError: e instanceof Error, isQuireError: e instanceof QuireError, message: e.message }; }
        const whole = await format.openBlob(new Blob([bytes]));
        const page = { refused, count: whole.count(), find: whole.find('id', 7, { columns: ['id', 'country'] }) };
        whole.close();
        const worker = new Worker('./worker.js', { type: 'module' });
        const fromWorker = await new Promise((resolve) => { worker.onmessage = (m) => resolve(m.data); worker.onerror = (e) => resolve({ error: e.message }); });
        window.result = { page, worker: fromWorker };
      } catch (e) { window.result = { error: String(e && e.stack || e) }; }
    </script></body></html>`,
  );

  // The same file and calls in Node, from a Uint8Array.
  const quire = await loadQuire();
  const shared = await import(pathToFileURL(path.join(work, 'shared.js')).href);
  const bytes = quire.format.write(shared.makeRows(ROWS), shared.WRITE_OPTIONS);
  const f = quire.format.open(bytes);
  const expected = shared.calls(f);
  f.close();

  const server = await serve(work);
  const browser = await launchChromium();
  try {
    const page = await browser.newPage();
    const errors = [];
    page.on('pageerror', (e) => errors.push(String(e)));
    await page.goto(`${server.url}/index.html`);
    await page.waitForFunction(() => window.result !== undefined, null, { timeout: 60000 });
    const result = await page.evaluate(() => window.result);
    assert.deepEqual(errors, []);
    assert.equal(result.error, undefined, result.error);
    assert.equal(result.worker.error, undefined, result.worker.error);

    // The page: blobReader says why it cannot work there, as a plain Error (misuse, not bad input).
    assert.equal(result.page.refused.isError, true);
    assert.equal(result.page.refused.isQuireError, false);
    assert.match(result.page.refused.message, /FileReaderSync/);
    assert.match(result.page.refused.message, /Worker/);
    assert.match(result.page.refused.message, /openBlob/);
    assert.equal(result.page.count, 50);
    assert.deepEqual(result.page.find, { id: 7, country: 'BR' });

    // The Worker wrote the very bytes Node writes, and its range reads give Node's answers.
    const w = result.worker;
    assert.equal(w.size, bytes.length);
    assert.equal(w.checksum, shared.fnv(bytes));
    assert.deepEqual(w.answers, expected);
    assert.equal(expected.countAll, ROWS);
    assert.ok(expected.find && expected.query.length > 0 && expected.columns.rows > 0 && expected.contains > 0, 'the calls match something');
    // Opening reads the tail and footer; a lookup by the hash index a few pages; everything far less than the file.
    t.diagnostic(`file ${w.size} bytes; the Worker read ${w.opened} to open, ${w.afterFind} to open and find, ${w.total} for all the calls`);
    assert.ok(w.opened < 2000, `opening read ${w.opened} bytes`);
    assert.ok(w.afterFind < w.size / 10, `open + find read ${w.afterFind} of ${w.size} bytes`);
    // All the calls together read about the file once: the contains call alone reads the name
    // pages of the 1,091 rows it finds (66 KB), and version 3's indexes left the file 97.5 KB.
    assert.ok(w.total < w.size * 1.25, `all the calls read ${w.total} of ${w.size} bytes`);
    // writeStream over a Blob's ReadableStream in the Worker gives the bytes of write().
    assert.equal(w.stream.same, true);
  } finally {
    await browser.close();
    await server.close();
  }
});
