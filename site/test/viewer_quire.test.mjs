// The .quire view in headless Chromium against the npm package in Node: a generated file opened
// through the file input and by ?url=; find, the filter builder, the expression box and text
// search give the answers the package gives; explain equals the package's analyzed report; the
// CSV and NDJSON exports are the bytes queryCsv and queryText give; the grid by keyboard; the URL hash
// restores the view after a reload; bad input (truncated, a corrupted block, the wrong kind, 2 GB
// of random bytes) names core's error code and keeps the open file; a ≥ 1 GB file (built once
// with the native CLI, cached in build/viewer-1gb/) opened by ranges, a row found by key (time and
// memory printed), the grid at its last row, a long scan cancelled without losing the file.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { createWriteStream, existsSync, mkdirSync, mkdtempSync, readFileSync, renameSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { once } from 'node:events';
import { randomBytes } from 'node:crypto';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { cspViolations, dist, launchChromium, loadPackage, openBlobInViewer, openFileInViewer, openViewer, repo, screenshotPath, startSite, waitInPage } from './helpers.mjs';

let site;
let bigSite;
let browser;
let dir;
let pkg;
let people; // QuireFile in Node: the reference answers
const requests = [];
const errors = [];
const ROWS = 120000; // two chunks of 65536
const bigDir = path.join(repo, 'build', 'viewer-1gb');
const big = path.join(bigDir, 'big.quire');
const BIG_ROWS = 1400000;

function peopleRows() {
  const rows = [];
  for (let i = 1; i <= ROWS; i++) {
    rows.push({ id: i, name: `customer ${i}`, country: ['NA', 'DE', 'JP', 'BR'][i % 4], age: 18 + (i % 77), note: i % 7 === 0 ? null : `note "${i % 13}", ok` });
  }
  return rows;
}

/** The 1 GB file: NDJSON rows with a 1000-character random payload, converted by the native CLI (the npm writer when there is no native build). */
async function buildBig() {
  if (existsSync(big) && statSync(big).size >= 2 ** 30) return;
  mkdirSync(bigDir, { recursive: true });
  const t0 = Date.now();
  const input = path.join(bigDir, 'big.ndjson');
  const out = createWriteStream(input);
  for (let i = 0; i < BIG_ROWS; i += 2000) {
    let s = '';
    const rnd = randomBytes(750 * 2000).toString('base64');
    for (let j = i; j < Math.min(BIG_ROWS, i + 2000); j++) {
      const k = (j - i) * 1000;
      s += `{"id":${j + 1},"key":"k${(j * 2654435761) % 4294967296}","group":${j % 1000},"payload":"${rnd.slice(k, k + 1000)}"}\n`;
    }
    if (!out.write(s)) await once(out, 'drain');
  }
  out.end();
  await once(out, 'finish');
  const cli = path.join(repo, 'build', 'native', 'native', 'quire');
  if (existsSync(cli)) {
    const r = spawnSync(cli, ['convert', input, `${big}.tmp.quire`, '--from', 'ndjson', '--index', 'id:hash', '--quiet'], { stdio: 'inherit' });
    assert.equal(r.status, 0, 'quire convert');
  } else {
    const { createReadStream } = await import('node:fs');
    await pkg.format.writeFile(`${big}.tmp.quire`, createReadStream(input), { indexes: { id: 'hash' } });
  }
  renameSync(`${big}.tmp.quire`, big);
  rmSync(input, { force: true });
  console.log(`built ${big}: ${statSync(big).size} bytes, ${BIG_ROWS} rows, in ${((Date.now() - t0) / 1000).toFixed(1)} s`);
}

before(async () => {
  dir = mkdtempSync(path.join(tmpdir(), 'quire-viewer-quire-'));
  pkg = await loadPackage();
  const bytes = pkg.format.write(peopleRows(), { indexes: { id: 'hash', name: 'text' } });
  writeFileSync(path.join(dir, 'people.quire'), bytes);
  people = pkg.format.open(bytes);
  writeFileSync(path.join(dir, 'truncated.quire'), bytes.subarray(0, bytes.length - 100));
  const corrupt = Uint8Array.from(bytes);
  for (let i = 20; i < 28; i++) corrupt[i] ^= 0xff; // inside the first data page of the first column
  writeFileSync(path.join(dir, 'corrupt.quire'), corrupt);
  writeFileSync(path.join(dir, 'picture.quire'), Buffer.concat([Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]), randomBytes(4000)]));
  await buildBig();
  site = await startSite(['--pkg', dist, '--extra', dir]);
  // The 1 GB file from its cache folder, on a server of its own (serve.mjs follows no link out of a root).
  bigSite = await startSite(['--pkg', dist, '--extra', bigDir]);
  browser = await launchChromium();
});

after(async () => {
  people?.close();
  await browser?.close();
  await site?.close();
  await bigSite?.close();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

const seq = (page) => page.evaluate(() => Number(document.querySelector('#match-count')?.dataset.seq ?? 0));
async function answered(page, before) {
  await waitInPage(page, (n) => Number(document.querySelector('#match-count')?.dataset.seq ?? 0) > n && document.querySelector('#progress').hidden, before);
  return page.evaluate(() => ({
    count: Number(document.querySelector('#match-count').dataset.count),
    query: document.querySelector('#query-json').textContent,
    banner: document.querySelector('#banner').hidden ? null : document.querySelector('#banner').textContent,
    code: document.querySelector('#banner').hidden ? null : document.querySelector('#banner').dataset.code,
  }));
}

/** The grid's rows in sight, once loaded: [[#, ...cells]]. */
async function gridRows(page) {
  await waitInPage(page, () => document.querySelectorAll('.grid-rows .grid-row').length > 0 && !document.querySelector('.grid-rows .loading'));
  return page.evaluate(() => [...document.querySelectorAll('.grid-rows .grid-row')].map((r) => [...r.children].map((c) => c.textContent)));
}

const cellsOf = (row) => ['id', 'name', 'country', 'age', 'note'].map((k) => (row[k] === null ? 'null' : String(row[k])));

async function find(page, column, key) {
  await page.selectOption('#find-column', column);
  await page.fill('#find-key', String(key));
  await page.click('#find-form button[type=submit]');
  await waitInPage(page, () => document.querySelector('#find-out').dataset.found !== undefined);
  return page.evaluate(() => ({
    found: document.querySelector('#find-out').dataset.found,
    ms: Number(document.querySelector('#find-out').dataset.ms),
    cells: [...document.querySelectorAll('#find-row tbody tr')].map((r) => r.children[1].textContent),
  }));
}

test('.quire: panels, find, filter builder, expression, text search, explain and export equal the npm API', async () => {
  const { page, context } = await openViewer(browser, site.url, '', { requests, errors });
  const opened = await openFileInViewer(page, path.join(dir, 'people.quire'));
  assert.equal(opened.banner, null, opened.banner);
  assert.equal(opened.current.kind, 'quire');
  assert.equal(await page.textContent('#match-count'), `${ROWS} rows`);
  assert.equal(await page.evaluate(() => performance.getEntriesByType('resource').filter((e) => e.name.endsWith('/pkg/quire.wasm')).length), 1,
    'the page loads the package once, for core\'s detection; the file itself is opened and queried in the worker');
  // The facts and storage are core's: the same figures as storage() in Node.
  const storage = people.storage();
  await waitInPage(page, () => document.querySelectorAll('#q-storage table').length === 2);
  const storageRows = await page.$$eval('#q-storage table >> nth=0', (t) => [...t[0].querySelectorAll('tbody tr')].map((r) => [...r.children].slice(0, 6).map((c) => c.textContent)));
  assert.deepEqual(storageRows, storage.columns.map((c) => [c.name, c.type, String(c.encodedBytes), String(c.dataBytes), String(c.pages), String(c.nulls)]));
  assert.deepEqual(await gridRows(page).then((rows) => rows.slice(0, 5).map((r) => r.slice(1))), people.query({ limit: 5 }).map(cellsOf));

  // find by key
  const found = await find(page, 'id', 4242);
  assert.equal(found.found, 'true');
  assert.deepEqual(found.cells, cellsOf(people.find('id', 4242)));
  assert.equal((await find(page, 'id', ROWS + 5)).found, 'false');

  // the filter builder: two conditions, the object form
  let n = await seq(page);
  await page.selectOption('#filter-column', 'country');
  await page.selectOption('#filter-op', '=');
  await page.fill('#filter-value', 'DE');
  await page.click('#filter-form button[type=submit]');
  await answered(page, n);
  n = await seq(page);
  await page.selectOption('#filter-column', 'age');
  await page.selectOption('#filter-op', '>');
  await page.fill('#filter-value', '80');
  await page.click('#filter-form button[type=submit]');
  let a = await answered(page, n);
  const built = { country: 'DE', age: { '>': 80 } };
  assert.equal(a.query, JSON.stringify(built));
  assert.equal(a.count, people.count({ where: built }));
  assert.deepEqual((await gridRows(page)).slice(0, 8).map((r) => r.slice(1)), people.query({ where: built, limit: 8 }).map(cellsOf));

  // the expression box, core's syntax; then one core refuses, which leaves the rows as they were
  n = await seq(page);
  const expr = "country = 'JP' and age between 20 and 30 and not note is null";
  await page.fill('#filter-expr', expr);
  await page.click('#expr-form button[type=submit]');
  a = await answered(page, n);
  assert.equal(a.count, people.count({ where: expr }));
  assert.deepEqual((await gridRows(page)).slice(0, 8).map((r) => r.slice(1)), people.query({ where: expr, limit: 8 }).map(cellsOf));
  n = await seq(page);
  await page.fill('#filter-expr', 'age >>> 3');
  await page.click('#expr-form button[type=submit]');
  a = await answered(page, n);
  assert.equal(a.code, 'INVALID_QUERY', a.banner);
  assert.equal(a.count, people.count({ where: expr }), 'the previous filter stays');

  // text search on the text-indexed column, then explain it
  n = await seq(page);
  await page.selectOption('#search-column', 'name');
  await page.fill('#search-text', 'customer 4242');
  await page.click('#search-form button[type=submit]');
  a = await answered(page, n);
  const search = { name: { contains: 'customer 4242' } };
  assert.equal(a.count, people.count({ where: search }));
  assert.equal(a.count, 11, 'customer 4242 and 42420..42429');
  assert.deepEqual((await gridRows(page)).map((r) => r.slice(1)), people.query({ where: search }).map(cellsOf));
  await page.click('#explain-run');
  await waitInPage(page, () => document.querySelector('#explain-out').dataset.done !== undefined);
  const shown = JSON.parse(await page.textContent('#explain-json'));
  const expected = people.explain({ where: search }, { analyze: true });
  assert.deepEqual(shown, expected, 'the explain panel shows core\'s analyzed report');
  assert.equal(shown.index.column, 'name');
  assert.equal(shown.index.kind, 'text');
  assert.match(await page.textContent('#explain-out table'), /index used\s*name \(text/);
  await page.screenshot({ path: screenshotPath('viewer-quire-1280x800-light'), fullPage: true });

  // export: NDJSON is queryText's bytes; CSV is queryCsv's (core's CSV)
  await page.selectOption('#export-format', 'ndjson');
  const [ndjsonDownload] = await Promise.all([page.waitForEvent('download'), page.click('#export-form button[type=submit]')]);
  assert.equal(readFileSync(await ndjsonDownload.path(), 'utf8'), people.queryText({ where: search }, { ndjson: true }));
  assert.equal(ndjsonDownload.suggestedFilename(), 'people-filtered.ndjson');
  await page.selectOption('#export-format', 'csv');
  const [csvDownload] = await Promise.all([page.waitForEvent('download'), page.click('#export-form button[type=submit]')]);
  const csv = people.queryCsv({ where: search });
  assert.match(csv, /^id,name,country,age,note\n/);
  assert.equal(readFileSync(await csvDownload.path(), 'utf8'), csv);
  // a whole-file export in batches (two chunks, several batches of 20,000 rows)
  await page.fill('#filter-expr', '');
  n = await seq(page);
  await page.click('#expr-form button[type=submit]');
  await answered(page, n);
  await page.selectOption('#export-format', 'ndjson');
  const [all] = await Promise.all([page.waitForEvent('download'), page.click('#export-form button[type=submit]')]);
  assert.equal(readFileSync(await all.path(), 'utf8'), people.queryText({}, { ndjson: true }));
  // the same batches as CSV: the header once, then each batch's records
  await page.selectOption('#export-format', 'csv');
  const [allCsv] = await Promise.all([page.waitForEvent('download'), page.click('#export-form button[type=submit]')]);
  assert.equal(readFileSync(await allCsv.path(), 'utf8'), people.queryCsv());
  await context.close();
});

test('.quire: the grid by keyboard, and the URL hash restores the view after a reload', async () => {
  const { page, context } = await openViewer(browser, site.url, '?url=/files/people.quire', { requests, errors, colorScheme: 'dark' });
  await waitInPage(page, () => window.quireViewer.opens > 0);
  const n = await seq(page);
  await page.fill('#filter-expr', "country = 'BR'");
  await page.click('#expr-form button[type=submit]');
  const a = await answered(page, n);
  assert.equal(a.count, people.count({ where: "country = 'BR'" }));
  await page.focus('.grid');
  const active = () => page.evaluate(() => document.querySelector('.grid').getAttribute('aria-activedescendant'));
  for (let i = 0; i < 3; i++) await page.keyboard.press('ArrowDown');
  assert.match(await active(), /-r3-c0$/);
  await page.keyboard.press('ArrowRight');
  await page.keyboard.press('ArrowRight');
  assert.match(await active(), /-r3-c2$/);
  await page.keyboard.press('End');
  assert.match(await active(), /-r3-c5$/);
  await page.keyboard.press('Home');
  await page.keyboard.press('PageDown');
  const afterPage = Number(/-r(\d+)-/.exec(await active())[1]);
  assert.ok(afterPage > 10, `PageDown moves a screenful (${afterPage})`);
  await page.keyboard.press('Control+End');
  assert.match(await active(), new RegExp(`-r${a.count - 1}-c0$`));
  const lastRows = await gridRows(page);
  assert.equal(lastRows.at(-1)[0], String(a.count), 'the last row is drawn');
  assert.deepEqual(lastRows.at(-1).slice(1), cellsOf(people.query({ where: "country = 'BR'", offset: a.count - 1, limit: 1 })[0]));
  await page.keyboard.press('Control+Home');
  for (let i = 0; i < 5; i++) await page.keyboard.press('ArrowDown');
  await page.keyboard.press('Enter');
  const hash = await page.evaluate(() => location.hash);
  assert.match(hash, /url=%2Ffiles%2Fpeople\.quire/);
  assert.match(hash, /q=country\+%3D\+%27BR%27/);
  assert.match(hash, /row=5/);
  assert.equal(await page.evaluate(() => getComputedStyle(document.querySelector('.grid')).outlineStyle), 'solid', 'visible focus');
  await page.screenshot({ path: screenshotPath('viewer-quire-1280x800-dark'), fullPage: true });
  await page.reload();
  await waitInPage(page, () => window.quireViewer?.opens > 0 && document.querySelector('#match-count')?.dataset.count !== undefined && document.querySelector('.grid-row.selected'));
  assert.equal(await page.inputValue('#filter-expr'), "country = 'BR'");
  assert.equal(Number(await page.getAttribute('#match-count', 'data-count')), a.count);
  assert.equal(await page.getAttribute('.grid-row.selected', 'data-row'), '5');
  await context.close();
});

test('.quire bad input: truncated, a corrupted block, the wrong kind, 2 GB of random bytes — code named, the open file kept', async () => {
  const { page, context } = await openViewer(browser, site.url, "?url=/files/people.quire#url=/files/people.quire&q=age+%3E+90", { requests, errors });
  await waitInPage(page, () => window.quireViewer.opens > 0);
  assert.equal(await page.evaluate(() => window.quireViewer.current?.name), 'people.quire');
  for (const [file, code] of [['truncated.quire', 'NOT_A_QUIRE_FILE'], ['corrupt.quire', 'CORRUPT_BLOCK'], ['picture.quire', 'NOT_A_QUIRE_FILE']]) {
    const r = await openFileInViewer(page, path.join(dir, file));
    assert.equal(r.code, code, `${file}: ${r.banner}`);
    assert.match(r.banner, new RegExp(`${file.replace('.', '\\.')}.*${code}`));
    assert.equal(r.current.name, 'people.quire', `${file}: the file open before stays open`);
  }
  assert.match(await page.evaluate(() => location.hash), /q=age\+%3E\+90/, 'the open view keeps its hash');
  await page.screenshot({ path: screenshotPath('viewer-quire-bad-input-1280x800-light') });
  const t0 = Date.now();
  const random = await openBlobInViewer(page, (mib) => {
    const part = new Uint8Array(1 << 20);
    for (let i = 0; i < part.length; i += 65536) crypto.getRandomValues(part.subarray(i, i + 65536));
    const one = new Blob([part]);
    return new Blob(new Array(mib).fill(one)); // 2 GB by reference: never in memory whole
  }, 2048, 'random.bin');
  const took = Date.now() - t0;
  assert.equal(random.code, 'NOT_A_QUIRE_FILE', random.banner);
  assert.match(random.banner, /random\.bin \(not a kind the viewer reads: binary bytes/);
  assert.equal(random.current.name, 'people.quire');
  const size = await page.evaluate(() => document.querySelector('#status').textContent);
  assert.match(size, /Still open: people\.quire/);
  const tick = Date.now();
  await page.evaluate(() => new Promise((r) => setTimeout(r, 0)));
  console.log(`2 GiB of random bytes refused in ${took} ms; the tab answered in ${Date.now() - tick} ms`);
  const found = await find(page, 'id', 77);
  assert.deepEqual(found.cells, cellsOf(people.find('id', 77)), 'the open file still answers');
  await context.close();
});

test('.quire of ≥ 1 GB by ?url=: open, find by key (time and memory printed), last row, a long scan cancelled', async () => {
  const size = statSync(big).size;
  assert.ok(size >= 2 ** 30, `${size} bytes`);
  const { page, context } = await openViewer(browser, bigSite.url, '', { requests, errors });
  const t0 = Date.now();
  await page.evaluate(() => window.quireViewer.openUrl('/files/big.quire'));
  const openMs = Date.now() - t0;
  assert.equal(await page.evaluate(() => window.quireViewer.current?.kind), 'quire');
  assert.equal(await page.textContent('#match-count'), `${BIG_ROWS} rows`);
  // What the open read (footer, first rows, storage, chunk statistics): the worker's range requests.
  const opened = await page.evaluate(() => document.querySelector('.quire-view').quire.memory());
  assert.ok(opened.reads > 0 && opened.bytesRead > 0, 'the worker counts its reads');
  // Version 4's column summaries: the open reads the footer, the summaries and the first rows'
  // pages, not every chunk's page directory (10.7 MB of them in this file before version 4).
  assert.ok(opened.bytesRead <= 2 ** 20, `the open read ${opened.bytesRead} bytes, more than 1 MiB`);
  const key = 987654;
  const t1 = Date.now();
  const found = await find(page, 'id', key);
  const findMs = Date.now() - t1;
  assert.equal(found.found, 'true');
  assert.equal(found.cells[0], String(key));
  assert.equal(found.cells[1], `k${((key - 1) * 2654435761) % 4294967296}`);
  assert.equal(found.cells[3].length, 1000);
  const mem = await page.evaluate(() => document.querySelector('.quire-view').quire.memory());
  const pageHeap = await page.evaluate(() => performance.memory?.usedJSHeapSize ?? null);
  let uaMemory = null;
  try {
    uaMemory = await page.evaluate(() => Promise.race([performance.measureUserAgentSpecificMemory?.().then((m) => m.bytes), new Promise((r) => setTimeout(() => r(null), 20000))]));
  } catch {
    uaMemory = null;
  }
  const mib = (b) => (b === null || b === undefined ? 'n/a' : `${(b / 2 ** 20).toFixed(1)} MiB`);
  const line = `1 GB file (${size} bytes, ${BIG_ROWS} rows) by ?url=: opened (footer + first rows + storage) in ${openMs} ms, ${opened.reads} range requests, ${(opened.bytesRead / 2 ** 20).toFixed(2)} MiB read; find id=${key}: ${found.ms.toFixed(1)} ms in the worker, ${findMs} ms click to row; worker wasm heap ${mib(mem.wasmHeapBytes)} (used ${mib(mem.wasmHeapUsedBytes)}), worker JS heap ${mib(mem.jsHeapBytes)}, page cache ${mib(mem.cacheBytes)}, page JS heap ${mib(pageHeap)}, measureUserAgentSpecificMemory ${mib(uaMemory)}`;
  console.log(line);
  writeFileSync(path.join(path.dirname(screenshotPath('x')), 'viewer-1gb.json'), JSON.stringify({ size, rows: BIG_ROWS, openMs, openReads: opened.reads, openBytesRead: opened.bytesRead, findWorkerMs: found.ms, findMs, memory: mem, pageHeap, uaMemory }, null, 1));
  assert.ok(mem.cacheBytes <= 16 * 2 ** 20, 'the page cache stays bounded');
  // the last of 1.4 million rows: past the capped scroll height, mapped
  await page.focus('.grid');
  await page.keyboard.press('Control+End');
  const rows = await gridRows(page);
  assert.equal(rows.at(-1)[0], String(BIG_ROWS));
  assert.equal(rows.at(-1)[1], String(BIG_ROWS));
  await page.screenshot({ path: screenshotPath('viewer-quire-1gb-1280x800-light') });
  // a scan of the whole payload column, cancelled: the file stays open and answers
  await page.fill('#filter-expr', "payload contains 'no such text at all'");
  await page.click('#expr-form button[type=submit]');
  await waitInPage(page, () => !document.querySelector('#progress').hidden, undefined, 10000);
  await page.click('#cancel');
  await waitInPage(page, () => /Cancelled/.test(document.querySelector('#quire-status').textContent));
  assert.equal(await page.textContent('#match-count'), `${BIG_ROWS} rows`, 'the rows as before the cancelled filter');
  const again = await find(page, 'id', 5);
  assert.equal(again.cells[0], '5', 'the file answers after the cancel');
  // an export of all 1.1 GB, cancelled between batches: no download, the file still open
  let downloads = 0;
  page.on('download', () => downloads++);
  await page.selectOption('#export-format', 'ndjson');
  await page.click('#export-form button[type=submit]');
  await waitInPage(page, () => /Exporting/.test(document.querySelector('#progress-label').textContent) && !document.querySelector('#progress').hidden, undefined, 30000);
  await page.keyboard.press('Escape');
  await waitInPage(page, () => /Cancelled/.test(document.querySelector('#quire-status').textContent) && document.querySelector('#progress').hidden);
  assert.equal(downloads, 0, 'a cancelled export saves nothing');
  assert.equal((await find(page, 'id', BIG_ROWS)).cells[0], String(BIG_ROWS));
  await context.close();
});

test('.quire: every request went to the site itself, no page error and no CSP violation', () => {
  const origins = [new URL(site.url).origin, new URL(bigSite.url).origin];
  assert.deepEqual(requests.filter((u) => !origins.some((o) => u.startsWith(o)) && !u.startsWith('blob:') && !u.startsWith('data:')), []);
  assert.deepEqual(errors, []);
  // The CSP has no 'unsafe-eval' (the package is linked with -sDYNAMIC_EXECUTION=0): nothing in the page may need it.
  assert.deepEqual(cspViolations, []);
});
