// The viewer's shell: core's detection of every kind from its first bytes (in Node, over the corpus),
// and in headless Chromium the cold first paint (the drop zone before any module or wasm), each
// corpus kind opened through the one file input and routed to its view, ?url= and the hash, a file
// of the wrong kind (core's error code in the banner, the previous file still open), light and
// dark at 1280×800 and 390 px. Every request must go to the site's own server.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { corpusDir, cspViolations, dist, launchChromium, loadPackage, openFileInViewer, openViewer, repo, waitInPage, screenshotPath, startSite, watchCsp } from './helpers.mjs';
import { detectSource } from '../viewer/detect.mjs';

const corpus = corpusDir();
let site;
let browser;
let dir;
let pkg;
const requests = [];
const errors = [];

before(async () => {
  dir = mkdtempSync(path.join(tmpdir(), 'quire-viewer-shell-'));
  pkg = await loadPackage();
  const rows = Array.from({ length: 500 }, (_, i) => ({ id: i + 1, name: `patient ${i + 1}`, country: ['NA', 'DE', 'JP'][i % 3] }));
  writeFileSync(path.join(dir, 'small.quire'), pkg.format.write(rows, { indexes: { id: 'hash' } }));
  writeFileSync(path.join(dir, 'table.csv'), 'id,name,score\n1,ana,3.5\n2,"bo, b",4\n');
  const mllp = Buffer.concat([Buffer.from([0x0b]), readFileSync(path.join(corpus, 'hl7v2/converter/ADT-A01-01.hl7')), Buffer.from([0x1c, 0x0d])]);
  writeFileSync(path.join(dir, 'framed.bin'), mllp);
  writeFileSync(path.join(dir, 'picture.quire'), Buffer.concat([Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]), Buffer.alloc(2000, 7)]));
  site = await startSite(['--pkg', dist, '--extra', dir]);
  browser = await launchChromium();
});

after(async () => {
  await browser?.close();
  await site?.close();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

const xmlDir = path.join(repo, 'tests', 'data', 'fhir-xml', 'xml');
const files = (folder, ext) => readdirSync(folder).filter((f) => f.endsWith(ext)).map((f) => path.join(folder, f));
/** A source as the shell makes one, counting its reads; named `data` so that only the bytes count. */
function bytesSource(bytes, name = 'data') {
  const source = { name, size: bytes.length, reads: [], read: async (s, e) => (source.reads.push([s, e]), bytes.subarray(s, e)) };
  return source;
}
const detect = (bytes, name) => detectSource(pkg, bytesSource(bytes, name));
const kindOf = async (file) => (await detect(readFileSync(file))).kind;
const text = (t) => new TextEncoder().encode(t);

test('detectSource: the kind core gives every corpus file by its first bytes, and the view it opens in', async () => {
  // Three examples are one line (CapabilityStatement-base, -base2, Questionnaire-qs1): by core's
  // rule, NDJSON of one resource; the others are JSON documents over several lines.
  const oneLine = [];
  for (const f of files(path.join(corpus, 'fhir-r4/examples'), '.json')) {
    const kind = await kindOf(f);
    if (kind === 'ndjson') oneLine.push(path.basename(f));
    else assert.equal(kind, 'fhir', f);
  }
  assert.deepEqual(oneLine.sort(), ['CapabilityStatement-base.json', 'CapabilityStatement-base2.json', 'Questionnaire-qs1.json']);
  for (const f of files(path.join(corpus, 'bulk-ndjson-synthea'), '.ndjson')) assert.equal(await kindOf(f), 'ndjson', f);
  for (const f of files(path.join(corpus, 'hl7v2/converter'), '.hl7')) assert.equal(await kindOf(f), 'hl7', f);
  assert.equal(await kindOf(path.join(corpus, 'hl7v2/hapi/util/messages.txt')), 'hl7', 'messages after a comment');
  assert.equal(await kindOf(path.join(dir, 'framed.bin')), 'hl7', 'MLLP-framed');
  // R4's XML form: every official example checked in (tests/data/fhir-xml/xml/) opens in the FHIR view.
  const xmlFiles = files(xmlDir, '.xml');
  assert.ok(xmlFiles.length >= 20, `${xmlDir}: the XML examples`);
  for (const f of xmlFiles) assert.deepEqual((({ kind, view }) => [kind, view])(await detect(readFileSync(f), path.basename(f))), ['fhir-xml', 'fhir'], f);
  assert.deepEqual((({ kind, view }) => [kind, view])(await detect(text('\ufeff \n<Patient xmlns="http://hl7.org/fhir"/>'))), ['fhir-xml', 'fhir'], 'a BOM and white space before the <');
  assert.equal(await kindOf(path.join(dir, 'small.quire')), 'quire');
  assert.equal(await kindOf(path.join(dir, 'table.csv')), 'csv');
  assert.deepEqual(await detect(readFileSync(path.join(dir, 'picture.quire')), 'picture.quire'), { kind: 'unknown', reason: 'binary bytes: control characters within the first 4 KiB', view: null }, 'a PNG named .quire');
  // Each kind core names opens in its view: a JSON array and a JSON object alike in the FHIR view.
  const deep = await detect(text('['.repeat(100000) + ']'.repeat(100000)));
  assert.deepEqual([deep.kind, deep.view], ['json', 'fhir'], 'JSON nested 100,000 deep is JSON (its view reports the depth)');
  const { kind, view } = await detect(text('{\n  "resourceType": "Patient"\n}\n'));
  assert.deepEqual([kind, view], ['fhir', 'fhir']);
  // Core's rule, not the old viewer's: a resource on one line reads the same as NDJSON.
  const one = await detect(text('{"resourceType":"Patient"}'));
  assert.deepEqual([one.kind, one.view], ['ndjson', 'ndjson']);
  assert.equal((await detect(text('{"a":1}\n{"a":2}\n'))).kind, 'ndjson');
  // The name counts where it is .ndjson or .jsonl, and only then.
  assert.equal((await detect(text('{\n "a": 1\n}\n'), 'rows.ndjson')).kind, 'ndjson');
  assert.equal((await detect(text('{\n "a": 1\n}\n'), 'rows.json')).kind, 'fhir');
  // need-more: a first line longer than DETECT_BYTES is read on until it ends.
  const long = bytesSource(text(`{"a":"${'x'.repeat(pkg.DETECT_BYTES * 2)}"}\n{"a":1}\n`));
  assert.equal((await detectSource(pkg, long)).kind, 'ndjson');
  assert.deepEqual(long.reads.map(([, e]) => e), [pkg.DETECT_BYTES, pkg.DETECT_BYTES * 2, long.size]);
  const empty = await detect(new Uint8Array(0));
  assert.deepEqual([empty.kind, empty.view], ['empty', null]);
  const random = new Uint8Array(4096);
  for (let i = 0; i < random.length; i++) random[i] = (i * 2654435761) >>> 24;
  assert.equal((await detect(random)).kind, 'unknown');
  // A child source that names its kind (a line opened in the FHIR view) is not asked about.
  const line = bytesSource(text('{"resourceType":"Patient"}'));
  line.kind = 'fhir';
  assert.deepEqual(await detectSource(pkg, line), { kind: 'fhir', reason: 'opened as fhir', view: 'fhir' });
  assert.deepEqual(line.reads, []);
});

test('first paint: the drop zone paints from HTML and CSS before any module or wasm (cold load)', async () => {
  const context = await browser.newContext({ viewport: { width: 1280, height: 800 } });
  await watchCsp(context);
  const page = await context.newPage();
  const seen = [];
  page.on('request', (r) => seen.push(r.url()));
  await page.goto(site.url);
  const paint = await page.evaluate(() => new Promise((resolve) => {
    const entries = performance.getEntriesByType('paint');
    if (entries.some((e) => e.name === 'first-contentful-paint')) return resolve(Object.fromEntries(entries.map((e) => [e.name, e.startTime])));
    new PerformanceObserver((list, obs) => {
      obs.disconnect();
      resolve(Object.fromEntries(performance.getEntriesByType('paint').map((e) => [e.name, e.startTime])));
    }).observe({ type: 'paint', buffered: true });
  }));
  const nav = await page.evaluate(() => performance.getEntriesByType('navigation')[0].toJSON());
  console.log(`viewer first paint (cold, headless Chromium on localhost): first-paint ${paint['first-paint']?.toFixed(1)} ms, first-contentful-paint ${paint['first-contentful-paint']?.toFixed(1)} ms, DOMContentLoaded ${nav.domContentLoadedEventEnd.toFixed(1)} ms`);
  writeFileSync(path.join(path.dirname(screenshotPath('x')), 'viewer-first-paint.json'), JSON.stringify({ paint, domContentLoaded: nav.domContentLoadedEventEnd }, null, 1));
  assert.ok(paint['first-contentful-paint'] > 0);
  assert.equal(await page.isVisible('#drop'), true);
  assert.equal(await page.isVisible('label[for="file"]'), true);
  assert.equal(await page.locator('input[type=file]').count(), 1, 'one file input');
  await page.waitForLoadState('networkidle');
  assert.ok(!seen.some((u) => u.includes('/pkg/')), 'nothing of the package loads before a file is opened');
  await context.close();
});

test('each corpus kind through the file input: routed to its view; a wrong kind keeps the open file', async () => {
  const { page, context } = await openViewer(browser, site.url, '', { requests, errors });
  const cases = [
    [path.join(corpus, 'fhir-r4/examples/Patient-example.json'), 'fhir'],
    [path.join(xmlDir, 'patient-example.xml'), 'fhir'],
    [path.join(corpus, 'bulk-ndjson-synthea/Patient.000.ndjson'), 'ndjson'],
    [path.join(corpus, 'hl7v2/converter/ADT-A01-01.hl7'), 'hl7'],
    [path.join(dir, 'framed.bin'), 'hl7'],
    [path.join(dir, 'table.csv'), 'csv'],
    [path.join(dir, 'small.quire'), 'quire'],
  ];
  for (const [file, kind] of cases) {
    const r = await openFileInViewer(page, file);
    assert.equal(r.banner, null, `${file}: ${r.banner}`);
    assert.equal(r.current.kind, kind, file);
    assert.equal(r.current.name, path.basename(file));
    assert.equal(await page.locator('#views > .view').count(), 1, 'one view at a time');
  }
  // Dropped on the page: a File in a DataTransfer, as a drag from the desktop gives it.
  const before = await page.evaluate(() => window.quireViewer.opens);
  const transfer = await page.evaluateHandle(() => {
    const dt = new DataTransfer();
    dt.items.add(new File(['a,b\n1,2\n'], 'dropped.txt', { type: 'text/plain' }));
    return dt;
  });
  await page.dispatchEvent('html', 'dragover', { dataTransfer: transfer });
  assert.equal(await page.evaluate(() => document.body.classList.contains('dragging')), true, 'the drop zone shows the drag');
  await page.dispatchEvent('html', 'drop', { dataTransfer: transfer });
  await waitInPage(page, (n) => window.quireViewer.opens > n, before);
  assert.deepEqual(await page.evaluate(() => window.quireViewer.current), { name: 'dropped.txt', kind: 'csv', detected: 'csv', size: 8 });
  assert.equal(await page.evaluate(() => document.body.classList.contains('dragging')), false);
  await openFileInViewer(page, path.join(dir, 'small.quire'));
  const wrong = await openFileInViewer(page, path.join(dir, 'picture.quire'));
  assert.equal(wrong.code, 'NOT_A_QUIRE_FILE', wrong.banner);
  assert.match(wrong.banner, /picture\.quire/);
  assert.match(wrong.banner, /not a kind the viewer reads: binary bytes/);
  assert.equal(wrong.current.name, 'small.quire', 'the file open before stays open');
  assert.equal(await page.locator('#views > .view:not([hidden])').count(), 1);
  await page.screenshot({ path: screenshotPath('viewer-error-1280x800-light') });
  await context.close();
});

test('?url= opens a file beside the site; the hash keeps it; light and dark, 1280×800 and 390 px', async () => {
  for (const colorScheme of ['light', 'dark']) {
    const { page, context } = await openViewer(browser, site.url, '', { requests, errors, colorScheme });
    await page.screenshot({ path: screenshotPath(`viewer-drop-1280x800-${colorScheme}`) });
    await context.close();
    const narrow = await openViewer(browser, site.url, '?url=/files/small.quire', { requests, errors, colorScheme, width: 390, height: 844 });
    await waitInPage(narrow.page, () => window.quireViewer.opens > 0);
    assert.equal(await narrow.page.evaluate(() => window.quireViewer.current?.kind), 'quire');
    assert.match(await narrow.page.evaluate(() => location.hash), /url=%2Ffiles%2Fsmall\.quire/);
    const width = await narrow.page.evaluate(() => document.documentElement.scrollWidth);
    assert.ok(width <= 390, `no sideways scroll of the page at 390 px (${width})`);
    // The Storage tables fit their boxes: no cell past a box's edge, no box that scrolls sideways
    // (a scroll box at 390 px cut the last column off with no scroll bar in sight).
    await waitInPage(narrow.page, () => document.querySelectorAll('#q-storage table').length === 2);
    const clipped = await narrow.page.evaluate(() => [...document.querySelectorAll('#q-storage .scroll')].flatMap((box) => {
      const edge = box.getBoundingClientRect();
      const out = [...box.querySelectorAll('th, td')].filter((c) => c.getBoundingClientRect().width > 1 && c.getBoundingClientRect().right > edge.right + 0.5).map((c) => `${c.dataset.label ?? c.textContent}: ${c.textContent}`);
      if (box.scrollWidth > box.clientWidth) out.push(`a box ${box.scrollWidth} px wide in ${box.clientWidth}`);
      return out;
    }));
    assert.deepEqual(clipped, [], 'the Storage tables fit at 390 px');
    await narrow.page.screenshot({ path: screenshotPath(`viewer-quire-390-${colorScheme}`), fullPage: true });
    await narrow.context.close();
  }
  const { page, context } = await openViewer(browser, site.url, '#url=/files/small.quire', { requests, errors });
  await waitInPage(page, () => window.quireViewer.opens > 0);
  assert.equal(await page.evaluate(() => window.quireViewer.current?.name), 'small.quire', 'the hash alone reopens the file');
  await context.close();
});

test('the grid: 50 million rows behind a capped scroll height, mapped both ways; keyboard to the last row', async () => {
  const { page, context } = await openViewer(browser, site.url, '', { requests, errors });
  const state = await page.evaluate(async () => {
    const { createGrid, MAX_SCROLL_PX } = await import('/viewer/grid.mjs');
    const root = document.createElement('div');
    document.querySelector('#views').append(root);
    const asked = [];
    const grid = createGrid(root, {
      columns: [{ name: 'n', type: 'integer' }, { name: 'text', type: 'string' }],
      rowCount: 50_000_000,
      getRows: async (start, count) => {
        asked.push(count);
        return Array.from({ length: count }, (_, i) => [String(start + i), `row ${start + i}`]);
      },
      onSelect: (row) => (window.__selected = row),
    });
    window.__grid = grid;
    const body = root.querySelector('.grid-body');
    return { height: body.scrollHeight, cap: MAX_SCROLL_PX, maxAsked: Math.max(...asked) };
  });
  assert.ok(state.height <= state.cap + 28 * 2, `scroll height ${state.height} is capped at ${state.cap}`);
  assert.ok(state.maxAsked <= 64, 'rows are asked for in blocks');
  const shown = () => page.evaluate(() => [...document.querySelectorAll('#views .grid-rows .grid-row')].map((r) => r.children[1].textContent));
  await page.evaluate(() => {
    const body = document.querySelector('#views .grid-body');
    body.scrollTop = (body.scrollHeight - body.clientHeight) / 2;
  });
  // The scroll is drawn on the next animation frame: wait for rows other than the first ones.
  await waitInPage(page, () => Number(document.querySelector('#views .grid-rows .grid-row')?.dataset.row) > 0 && !document.querySelector('#views .grid-rows .loading'));
  const middle = Number((await shown())[0]);
  assert.ok(Math.abs(middle - 25_000_000) < 1000, `half way down shows row ${middle}`);
  await page.focus('#views .grid');
  await page.keyboard.press('Control+End');
  await waitInPage(page, () => document.querySelector('#views .grid-rows .grid-row:last-child')?.dataset.row === '49999999' && !document.querySelector('#views .grid-rows .loading'));
  assert.equal((await shown()).at(-1), '49999999');
  await page.keyboard.press('ArrowUp');
  await page.keyboard.press('Enter');
  assert.equal(await page.evaluate(() => window.__selected), 49_999_998);
  const domRows = await page.evaluate(() => document.querySelectorAll('#views .grid-row').length);
  assert.ok(domRows < 60, `only the rows in sight are in the DOM (${domRows})`);
  await context.close();
});

test('a ?url= that is not there: the HTTP status in the banner, the page still usable', async () => {
  const { page, context } = await openViewer(browser, site.url, '?url=/files/missing.quire', { requests, errors: [] });
  await waitInPage(page, () => window.quireViewer.opens > 0);
  assert.equal(await page.getAttribute('#banner', 'data-code'), 'HTTP_404');
  assert.match(await page.textContent('#banner'), /missing\.quire/);
  const r = await openFileInViewer(page, path.join(dir, 'small.quire'));
  assert.equal(r.current.kind, 'quire');
  assert.equal(r.banner, null);
  await context.close();
});

test('every request went to the site itself, no page error and no CSP violation', () => {
  const origin = new URL(site.url).origin;
  const foreign = requests.filter((u) => !u.startsWith(origin) && !u.startsWith('blob:') && !u.startsWith('data:'));
  assert.deepEqual(foreign, []);
  assert.deepEqual(errors, []);
  // The CSP has no 'unsafe-eval' (the package is linked with -sDYNAMIC_EXECUTION=0): nothing in the page may need it.
  assert.deepEqual(cspViolations, []);
});
