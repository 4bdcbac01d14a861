// The viewer's FHIR JSON, NDJSON, HL7 v2 and CSV views in headless Chromium (the site's own
// server, Debian's Chromium through playwright-core): each kind from the corpus opened through the
// page's file input; an issue pinned to its node with core's line and column; a reference between
// Bundle entries followed; NDJSON counts equal to the package's in Node; NDJSON and CSV converted
// and the downloads reopened with the package in Node; HL7 one, many and MLLP-framed with field
// names, raw toggle and the ACK core builds; bad input (HL7 with binary junk, JSON nested 100,000
// deep) named by its error code while the file open before stays open. Screenshots of each view
// at 1280×800 and 390 px, light and dark, go to build/site-screenshots/viewer-<kind>*.png.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { corpusDir, cspViolations, loadPackage, screenshotPath, startSite, viewerSuite, waitInPage, watchCsp } from './helpers.mjs';

// Without the corpus or the package's build this suite fails, naming what is missing, rather than skipping whole.
const corpus = corpusDir();
const pkg = await loadPackage();

const suite = viewerSuite();
const { foreign } = suite;

const examples = () => path.join(corpus, 'fhir-r4', 'examples');
const read = (...parts) => readFileSync(path.join(corpus, ...parts));

/** A page on the viewer, with every request checked to go to the site itself. */
async function viewer(options) {
  const { page, errors } = await suite.viewer(options);
  page.kindsErrors = errors;
  return page;
}

/** Opens bytes through the page's one file input; resolves when the shell shows them. */
async function openBytes(page, name, buffer, kind) {
  // A large file goes by path: Chromium reads it from disk instead of through the protocol.
  let files = { name, mimeType: 'application/octet-stream', buffer };
  if (buffer.length > 4 << 20) {
    files = path.join(mkdtempSync(path.join(tmpdir(), 'quire-kinds-')), name);
    writeFileSync(files, buffer);
  }
  await page.setInputFiles('#file', files);
  await waitInPage(page, ([n, k]) => window.quireViewer?.current?.name === n && window.quireViewer.current.kind === k && !document.querySelector('#views > .view[hidden]'), [name, kind], 60000);
}

/** Opens bytes that must fail; resolves to the banner's code and text. */
async function openBad(page, name, buffer) {
  await page.evaluate(() => {
    const b = document.querySelector('#banner');
    b.hidden = true;
    delete b.dataset.code;
  });
  await page.setInputFiles('#file', { name, mimeType: 'application/octet-stream', buffer });
  await waitInPage(page, () => !document.querySelector('#banner').hidden && document.querySelector('#banner').dataset.code, null, 60000);
  return page.$eval('#banner', (b) => ({ code: b.dataset.code, text: b.textContent }));
}

async function shoot(page, name) {
  await page.screenshot({ path: screenshotPath(name), fullPage: false });
}

/** Screenshots of the open view at 1280×800 and 390 px wide, light and dark. */
async function shootAll(page, name) {
  await shoot(page, `${name}-1280-light`);
  await page.emulateMedia({ colorScheme: 'dark' });
  await shoot(page, `${name}-1280-dark`);
  await page.setViewportSize({ width: 390, height: 844 });
  // Readable at 390 px: wide content scrolls inside its own box, never the page sideways.
  await waitInPage(page, () => document.documentElement.scrollWidth <= 390, null, 5000).catch(() => {});
  assert.ok(await page.evaluate(() => document.documentElement.scrollWidth) <= 390, `${name}: the page is wider than 390 px`);
  await shoot(page, `${name}-390-dark`);
  await page.emulateMedia({ colorScheme: 'light' });
  await shoot(page, `${name}-390-light`);
  await page.setViewportSize({ width: 1280, height: 800 });
}

/** Clicks the tree rows named by `labels`, each inside the one before, expanding as it goes. */
async function expandPath(page, labels) {
  await page.evaluate((names) => {
    let scope = document.querySelector('#views [role=tree] > [role=treeitem]');
    for (const name of names) {
      const group = scope.querySelector(':scope > [role=group]');
      const item = [...group.children].find((li) => li.querySelector(':scope > .kf-row > .kf-key')?.textContent === name);
      if (!item) throw new Error(`no tree item ${name} under ${scope.querySelector('.kf-key').textContent}`);
      if (item.getAttribute('aria-expanded') === 'false') item.querySelector(':scope > .kf-row').click();
      scope = item;
    }
  }, labels);
}

/** Each issue's text as the list shows it: core's severity, its issue type unless that is "informational" (the severity's word again), location, details. */
function issueText(issue) {
  return `${issue.severity}${issue.code === 'informational' ? ' ' : ` ${issue.code} `}${issue.expression || '(document)'} line ${issue.line}, column ${issue.column}: ${issue.details}`;
}

/**
 * The FHIR view's issue list as laid out now: each number on the baseline of its issue's first
 * line (however the text wraps), the numbers right-aligned in one column, the texts starting in one.
 * Resolves to how many of the issues wrap onto more lines.
 */
async function assertIssuesAligned(page, label) {
  const rows = await page.$$eval('[data-testid=fhir-issues] > li', (items) => items.map((li) => {
    const box = (node) => {
      const r = document.createRange();
      r.selectNodeContents(node);
      return r.getClientRects()[0];
    };
    const no = li.querySelector('.kf-issue-no');
    const button = li.querySelector('button');
    const first = box(button.querySelector('.kf-sev'));
    const number = no ? box(no) : null;
    return { no: no?.textContent, noBottom: number?.bottom, noRight: number?.right, firstBottom: first.bottom, textLeft: first.left, wraps: button.getBoundingClientRect().height > 1.5 * first.height };
  }));
  assert.ok(rows.length > 0, `${label}: issues listed`);
  rows.forEach((r, k) => {
    assert.equal(r.no, `${k + 1}.`, `${label}: issue ${k + 1} numbered`);
    assert.ok(Math.abs(r.noBottom - r.firstBottom) <= 1, `${label}: number ${k + 1} on its first line (number ${r.noBottom}, text ${r.firstBottom})`);
    assert.ok(Math.abs(r.noRight - rows[0].noRight) <= 0.5, `${label}: numbers right-aligned`);
    assert.ok(Math.abs(r.textLeft - rows[0].textLeft) <= 0.5, `${label}: texts start in one column`);
    assert.ok(r.noRight <= r.textLeft, `${label}: number ${k + 1} left of its text`);
  });
  return rows.filter((r) => r.wraps).length;
}

test('FHIR: a resource as an ARIA tree beside its raw JSON, by keyboard', async () => {
  const page = await viewer();
  await openBytes(page, 'Patient-example.json', read('fhir-r4', 'examples', 'Patient-example.json'), 'fhir');
  const tree = page.locator('#views [role=tree]');
  await tree.waitFor();
  assert.match(await page.textContent('[data-testid=fhir-summary]'), /Patient · 0 errors/);
  const top = page.locator('#views [role=tree] > [role=treeitem]');
  assert.equal(await top.getAttribute('aria-expanded'), 'true');
  // Lazy: the children of a collapsed node are not in the DOM.
  const nameItem = page.locator('#views [role=tree] > [role=treeitem] > [role=group] > [role=treeitem]', { has: page.locator(':scope > .kf-row > .kf-key', { hasText: /^name$/ }) });
  assert.equal(await nameItem.locator('[role=group]').count(), 0);
  await top.focus();
  await page.keyboard.press('ArrowDown');
  await page.keyboard.press('ArrowDown');
  const focused = () => page.evaluate(() => document.activeElement.querySelector(':scope > .kf-row > .kf-key')?.textContent);
  assert.equal(await focused(), 'id');
  await nameItem.focus();
  await page.keyboard.press('ArrowRight');
  assert.equal(await nameItem.getAttribute('aria-expanded'), 'true');
  await page.keyboard.press('ArrowRight');
  assert.equal(await focused(), '[0]');
  await page.keyboard.press('ArrowLeft');
  await page.keyboard.press('ArrowLeft');
  assert.equal(await focused(), 'name');
  await page.keyboard.press('ArrowLeft');
  assert.equal(await nameItem.getAttribute('aria-expanded'), 'false');
  // The raw JSON: the line of the selected node is marked.
  const raw = page.locator('[data-testid=fhir-raw]');
  assert.match(await raw.textContent(), /"resourceType": "Patient"/);
  // Its issues (txt-1 and txt-2, not checked): core's severity once, numbers beside their text's
  // first line at 1280 px and at 390 px (where the texts wrap), light and dark.
  const outcome = pkg.fhir.validate(read('fhir-r4', 'examples', 'Patient-example.json'));
  assert.ok(outcome.issues.some((i) => i.code === 'informational'), 'the example has an unchecked invariant');
  assert.deepEqual(await page.$$eval('[data-testid=fhir-issues] button', (b) => b.map((x) => x.textContent)), outcome.issues.map(issueText));
  for (const text of await page.$$eval('[data-testid=fhir-issues] button', (b) => b.map((x) => x.textContent))) assert.doesNotMatch(text, /information.*informational/);
  await assertIssuesAligned(page, '1280 light');
  await page.setViewportSize({ width: 390, height: 844 });
  assert.ok(await assertIssuesAligned(page, '390 light') > 0, 'at 390 px an issue wraps');
  await page.emulateMedia({ colorScheme: 'dark' });
  await assertIssuesAligned(page, '390 dark');
  await page.emulateMedia({ colorScheme: 'light' });
  await page.setViewportSize({ width: 1280, height: 800 });
  await shootAll(page, 'viewer-fhir');
  assert.deepEqual(page.kindsErrors, []);
  await page.context().close();
});

test('FHIR: each validation issue is pinned to its node with core\'s line and column', async () => {
  // The example is one line, which core's detection calls NDJSON: over several lines it is a
  // document, and its issues fall on several lines.
  const bytes = Buffer.from(JSON.stringify(JSON.parse(read('fhir-r4', 'examples', 'Questionnaire-qs1.json')), null, 1));
  const outcome = pkg.fhir.validate(bytes);
  assert.ok(outcome.issues.length > 0, 'the example has issues to pin');
  const page = await viewer();
  await openBytes(page, 'Questionnaire-qs1.json', bytes, 'fhir');
  assert.equal(await page.locator('[data-testid=fhir-issues] li').count(), outcome.issues.length);
  // Each issue's text: core's severity and issue type (an error's "required", "structure"... kept).
  assert.deepEqual(await page.$$eval('[data-testid=fhir-issues] button', (b) => b.map((x) => x.textContent)), outcome.issues.map(issueText));
  assert.ok(outcome.issues.some((i) => i.severity === 'error'), 'the example has errors');
  await assertIssuesAligned(page, 'Questionnaire-qs1');
  const issue = outcome.issues[1];
  await page.locator('[data-testid=fhir-issues] button').nth(1).click();
  const selected = page.locator('#views [role=treeitem][aria-selected=true]');
  const pin = selected.locator(':scope > .kf-row > [data-testid=fhir-pin]');
  assert.equal(await pin.count(), 1);
  assert.equal(await pin.textContent(), `${issue.severity} line ${issue.line}, column ${issue.column}: ${issue.details}`);
  // Pinned where the FHIRPath location says: the item of that path.
  assert.ok(issue.expression.endsWith(']'));
  const keys = await page.evaluate(() => {
    const out = [];
    for (let li = document.querySelector('#views [role=treeitem][aria-selected=true]'); li; li = li.parentElement.closest('[role=treeitem]')) out.unshift(li.querySelector(':scope > .kf-row > .kf-key').textContent);
    return out;
  });
  assert.equal(keys.join('.').replace(/\.\[/g, '['), issue.expression);
  // The raw JSON jumped to the issue's line, with its column marked.
  const mark = page.locator('[data-testid=fhir-raw] .kf-line-mark');
  assert.equal(await mark.getAttribute('data-line'), String(issue.line));
  await shoot(page, 'viewer-fhir-issue-1280-light');
  await page.context().close();
});

test('FHIR: a reference between Bundle entries followed by a click', async () => {
  const page = await viewer();
  await openBytes(page, 'Bundle-bundle-references.json', read('fhir-r4', 'examples', 'Bundle-bundle-references.json'), 'fhir');
  await expandPath(page, ['entry', '[2]', 'resource', 'subject']);
  const ref = page.locator('[data-testid=fhir-ref]').first();
  assert.equal(await ref.textContent(), '→ entry[0]');
  await ref.click();
  const flash = page.locator('#views .kf-flash');
  assert.equal(await flash.count(), 1);
  assert.equal(await flash.getAttribute('aria-selected'), 'true');
  assert.match(await flash.locator(':scope > .kf-row').textContent(), /^.resource\{\d+\} Patient\/23/);
  await shootAll(page, 'viewer-fhir-bundle');
  await page.context().close();
});

test('FHIR: a 20 MB Bundle is validated in a Worker (Cancel ends it, the open file stays) and its 12,150 entries render 200 at a time', async () => {
  const lines = read('bulk-ndjson-synthea', 'Encounter.000.ndjson').toString('utf8').split('\n').filter(Boolean);
  const entries = [];
  for (let k = 0; k < 10; k++) for (const l of lines) entries.push(`{"fullUrl":"urn:uuid:${k}-${entries.length}","resource":${l}}`);
  const bytes = Buffer.from(`{"resourceType":"Bundle","type":"collection","entry":[\n${entries.join(',\n')}\n]}`);
  const outcome = pkg.fhir.validate(bytes);
  const page = await viewer();
  const workers = [];
  page.on('worker', (w) => workers.push(w.url()));
  // Cancelled while the worker validates: the worker ends, the file open before stays.
  await openBytes(page, 'Patient-example.json', read('fhir-r4', 'examples', 'Patient-example.json'), 'fhir');
  const dir = mkdtempSync(path.join(tmpdir(), 'quire-kinds-'));
  writeFileSync(path.join(dir, 'big-bundle.json'), bytes);
  await page.setInputFiles('#file', path.join(dir, 'big-bundle.json'));
  await waitInPage(page, () => !document.querySelector('#progress').hidden && document.querySelector('#progress-label').textContent === 'validating');
  await page.click('#cancel');
  await waitInPage(page, () => !document.querySelector('#banner').hidden);
  // The shell names a cancelled open in its banner (its code for a DOMException is the exception's).
  assert.match(await page.textContent('#banner'), /big-bundle\.json: cancelled/);
  assert.ok(workers.length >= 1);
  for (let i = 0; i < 50 && page.workers().some((w) => w.url().endsWith('fhir-worker.mjs')); i++) await page.waitForTimeout(100);
  assert.equal(page.workers().filter((w) => w.url().endsWith('fhir-worker.mjs')).length, 0, 'the worker was ended');
  assert.equal(await page.evaluate(() => window.quireViewer.current.name), 'Patient-example.json');
  assert.equal(await page.locator('#views [role=tree]').count(), 1);
  const t0 = Date.now();
  await openBytes(page, 'big-bundle.json', bytes, 'fhir');
  console.log(`a ${bytes.length}-byte Bundle of ${entries.length} entries opened in ${Date.now() - t0} ms`);
  assert.ok(workers.some((u) => u.endsWith('/viewer/views/fhir-worker.mjs')), workers.join());
  assert.equal(await page.textContent('[data-testid=fhir-summary]'), `Bundle · ${outcome.errors} errors, ${outcome.warnings} warnings · ${entries.length + lines.length} reference targets${outcome.truncated ? ' · issue list cut' : ''}`);
  await expandPath(page, ['entry']);
  const group = page.locator('#views [role=tree] > [role=treeitem] > [role=group] > [role=treeitem]:has(> .kf-row > .kf-key:text-is("entry")) > [role=group]');
  assert.equal(await group.locator(':scope > [role=treeitem]:not(.kf-more)').count(), 200);
  await group.locator(':scope > .kf-more').click();
  assert.equal(await group.locator(':scope > [role=treeitem]:not(.kf-more)').count(), 400);
  assert.equal(await group.locator(':scope > .kf-more').textContent(), `${entries.length - 400} more…`);
  await shoot(page, 'viewer-fhir-big-bundle-1280-light');
  await page.context().close();
});

test('NDJSON: counts by resourceType equal the package\'s; per-line issues; jump to a line; one opened as FHIR', async () => {
  const lines = Buffer.concat([read('bulk-ndjson-synthea', 'Patient.000.ndjson'), read('bulk-ndjson-synthea', 'Organization.000.ndjson'),
    Buffer.from('{"resourceType":"Patient","id":"broken",\n{"resourceType":"Patient","id":"bad-date","birthDate":"1970-13-45"}\n')]);
  const expected = pkg.ndjson.stream(lines, { continueOnError: true });
  // Real issues and unreadable lines by line; the invariants core could not check (reported once a
  // validation, so once a line) folded into one note per reason with the lines it was on.
  const expectedIssues = [];
  const unchecked = new Map(); // reason -> { keys, lines }
  for await (const item of expected) {
    if (item.resource) continue;
    if (item.issue?.code === 'informational') {
      const why = item.issue.details.replace(`invariant ${item.issue.key} not checked: `, '');
      if (!unchecked.has(why)) unchecked.set(why, { keys: new Set(), lines: new Set() });
      unchecked.get(why).keys.add(item.issue.key);
      unchecked.get(why).lines.add(item.line);
    } else expectedIssues.push(item.line);
  }
  const expectedNotes = [...unchecked].map(([why, n]) => `${[...n.keys].join(', ')} not checked on ${n.lines.size.toLocaleString('en-US')} lines: ${why}`);
  assert.ok([...unchecked.values()].some((n) => n.lines.size > 1 && n.keys.size > 1), 'some invariants are not checked on several lines');
  const stats = expected.stats;
  const page = await viewer();
  await openBytes(page, 'mixed.ndjson', lines, 'ndjson');
  await page.waitForSelector('[data-testid=ndjson-status][data-state=done]', { timeout: 60000 });
  const counts = await page.$$eval('[data-testid=ndjson-counts] tbody tr', (rows) => Object.fromEntries(rows.map((r) => [r.dataset.type, Number(r.children[1].textContent)])));
  assert.deepEqual(counts, stats.byType);
  assert.match(await page.textContent('[data-testid=ndjson-status]'), new RegExp(`^${stats.lines} lines · ${stats.resources} resources · ${stats.badLines} unreadable`));
  const listed = await page.$$eval('[data-testid=ndjson-issues] li', (li) => li.map((x) => Number(/line (\d+)/.exec(x.textContent)[1])));
  assert.deepEqual(listed, expectedIssues);
  assert.ok(listed.length >= 2);
  assert.deepEqual(await page.$$eval('[data-testid=ndjson-unchecked] li', (li) => li.map((x) => x.textContent)), expectedNotes);
  assert.doesNotMatch(await page.textContent('[data-testid=ndjson-issues]'), /not checked/);
  assert.match(await page.textContent('[data-testid=ndjson-issues]'), /INVALID_JSON/);
  // The package has views (its `view` module), so a ViewDefinition is offered.
  assert.equal(typeof pkg.view.compile, 'function');
  assert.equal(await page.locator('.kn-view-def').isVisible(), true);
  // Jump to a line, open it as FHIR beside the list.
  const target = stats.lines - 2;
  await page.fill('[data-testid=ndjson-jump]', String(target));
  await page.keyboard.press('Enter');
  await page.waitForSelector(`[data-testid=ndjson-detail] h3:text-is("Line ${target}")`);
  await page.click('[data-testid=ndjson-open-inline]');
  await page.waitForSelector('.kn-fhir [role=tree]');
  assert.match(await page.textContent('.kn-fhir [data-testid=fhir-summary]'), /^Organization/);
  await shootAll(page, 'viewer-ndjson');
  // Patients and Organizations do not flatten into one table: core's error is shown, the view stays.
  let mismatch;
  try {
    pkg.format.write(lines, { from: 'ndjson' });
  } catch (e) {
    mismatch = e;
  }
  assert.ok(mismatch);
  await page.click('[data-testid=ndjson-convert]');
  await waitInPage(page, () => !document.querySelector('#banner').hidden);
  assert.equal(await page.$eval('#banner', (b) => b.dataset.code), mismatch.code);
  assert.ok((await page.textContent('#banner')).includes(mismatch.message));
  assert.equal(await page.evaluate(() => window.quireViewer.current.name), 'mixed.ndjson');
  assert.equal(await page.locator('.kn-fhir [role=tree]').count(), 1);
  await page.context().close();
});

test('NDJSON: the line index is built in the background with progress; Cancel keeps the lines so far, the view usable', async () => {
  // About 31 MB: 16 copies of the Synthea encounters, 32 slices of reading and validating.
  const encounters = read('bulk-ndjson-synthea', 'Encounter.000.ndjson');
  const big = Buffer.concat(Array.from({ length: 16 }, () => encounters));
  const page = await viewer();
  await openBytes(page, 'encounters.ndjson', big, 'ndjson');
  await page.waitForSelector('#progress:not([hidden])');
  await waitInPage(page, () => Number(document.querySelector('#progress-bar').value) > 0);
  assert.equal(await page.getAttribute('[data-testid=ndjson-status]', 'data-state'), 'indexing');
  await shoot(page, 'viewer-ndjson-progress-1280-light');
  await page.click('#cancel');
  await page.waitForSelector('[data-testid=ndjson-status][data-state=cancelled]', { timeout: 30000 });
  const status = await page.textContent('[data-testid=ndjson-status]');
  const lines = Number(/(\d+) lines/.exec(status)[1]);
  const all = big.toString('latin1').split('\n').filter(Boolean).length;
  assert.ok(lines > 0 && lines < all, `${lines} of ${all} lines indexed before the cancel`);
  // The lines indexed so far are usable: jump to one, open it as FHIR.
  await page.fill('[data-testid=ndjson-jump]', String(Math.min(lines - 1, 10)));
  await page.keyboard.press('Enter');
  await page.click('[data-testid=ndjson-open-inline]');
  await page.waitForSelector('.kn-fhir [role=tree]');
  assert.match(await page.textContent('.kn-fhir [data-testid=fhir-summary]'), /^Encounter/);
  assert.equal(await page.evaluate(() => window.quireViewer.current.name), 'encounters.ndjson');
  await page.context().close();
});

test('NDJSON and CSV: conversions in the page reopen in Node with the package\'s rows', async () => {
  const ndjson = read('bulk-ndjson-synthea', 'Condition.000.ndjson');
  const csvRows = ['id,name,price,when,ok'];
  for (let i = 1; i <= 3000; i++) csvRows.push(`${i},"name ${i}, the ${i % 7}th",${(i * 1.25).toFixed(2)},2024-01-${String((i % 28) + 1).padStart(2, '0')},${i % 2 ? 'true' : 'false'}`);
  const csv = Buffer.from(`${csvRows.join('\n')}\n`);
  let page;
  for (const [name, bytes, kind, button, from] of [['synthea.ndjson', ndjson, 'ndjson', 'ndjson-convert', 'ndjson'], ['prices.csv', csv, 'csv', 'csv-convert', 'csv']]) {
    // A page of its own for each: Chromium holds back a page's second download (it asks first).
    await page?.context().close();
    page = await viewer();
    await openBytes(page, name, bytes, kind);
    if (kind === 'ndjson') await page.waitForSelector('[data-testid=ndjson-status][data-state=done]', { timeout: 60000 });
    const [download] = await Promise.all([page.waitForEvent('download', { timeout: 60000 }), page.click(`[data-testid=${button}]`)]);
    assert.equal(download.suggestedFilename(), name.replace(/\.[^.]+$/, '.quire'));
    const got = pkg.format.open(new Uint8Array(readFileSync(await download.path())));
    const want = pkg.format.open(pkg.format.write(bytes, { from }));
    assert.equal(got.rowCount, want.rowCount);
    assert.deepEqual(got.schema, want.schema);
    assert.equal(got.queryText({}, { ndjson: true }), want.queryText({}, { ndjson: true }));
    got.close();
    want.close();
  }
  // The CSV table shows core's values: row 3 of the grid is id 3, its price with both decimals.
  const cells = await page.$$eval('#views .grid-row[data-row="2"] [role=gridcell]', (c) => c.map((x) => x.textContent));
  assert.deepEqual(cells, ['3', 'name 3, the 3th', '3.75', '2024-01-04', 'true']);
  assert.match(await page.textContent('[data-testid=csv-status]'), /^3000 rows · 5 columns/);
  await shootAll(page, 'viewer-csv');
  await page.context().close();
});

test('HL7 v2: one message as segments and fields with names, raw toggle, and core\'s ACK', async () => {
  const bytes = read('hl7v2', 'converter', 'ADT-A01-01.hl7');
  const m = pkg.hl7.parse(bytes);
  const page = await viewer();
  await openBytes(page, 'ADT-A01-01.hl7', bytes, 'hl7');
  assert.match(await page.textContent('[data-testid=hl7-summary]'), /^1 message/);
  const pid5 = page.locator('[data-testid=hl7-table] tr[data-field="PID-5"]');
  assert.equal(await pid5.locator('.kh-name').textContent(), 'Patient Name');
  const decoded = await pid5.locator('.kh-part').allTextContents();
  assert.ok(decoded.length > 1, 'components split out');
  assert.equal(decoded[0], `[1].1.1${m.get('PID-5[1].1.1')}`);
  assert.equal(await page.locator('[data-testid=hl7-table] tr[data-field="MSH-9"] .kh-name').textContent(), 'Message Type');
  const ack = await page.textContent('[data-testid=hl7-ack]');
  assert.equal(ack, m.ack('AA').split('\r').filter(Boolean).join('\n'));
  await page.selectOption('[data-testid=hl7-ack-code]', 'AE');
  assert.equal(await page.textContent('[data-testid=hl7-ack]'), m.ack('AE').split('\r').filter(Boolean).join('\n'));
  await shootAll(page, 'viewer-hl7');
  await page.check('[data-testid=hl7-raw]');
  assert.equal(await pid5.locator('.kh-value').textContent(), m.getRaw('PID-5'));
  await shoot(page, 'viewer-hl7-raw-1280-light');
  m.close();
  await page.context().close();
});

test('HL7 v2: a file of many messages and MLLP frames listed with an index; one opened', async () => {
  const many = read('hl7v2', 'hapi', 'util', 'messages.txt');
  const batch = pkg.hl7.parseBatch(many);
  const page = await viewer();
  await openBytes(page, 'messages.txt', many, 'hl7');
  assert.match(await page.textContent('[data-testid=hl7-summary]'), new RegExp(`^${batch.messages.length} messages`));
  await page.locator('#views .grid-row[data-row="2"]').click();
  await page.waitForSelector('[data-testid=hl7-header] h3:text-matches("^Message 3:")');
  assert.match(await page.textContent('[data-testid=hl7-header]'), new RegExp(`control ID ${batch.messages[2].controlId.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}`));
  // By keyboard: the list's last message, opened with Enter.
  await page.focus('#views [role=grid]');
  await page.keyboard.press('Control+End');
  await page.keyboard.press('Enter');
  await page.waitForSelector(`[data-testid=hl7-header] h3:text-matches("^Message ${batch.messages.length}:")`);
  await page.locator('#views .grid-row[data-row="2"]').click();
  await shootAll(page, 'viewer-hl7-many');
  for (const msg of batch.messages) msg.close();
  const files = ['ADT-A01-01.hl7', 'ORU-R01-01.hl7', 'ADT-A08-01.hl7'].map((f) => read('hl7v2', 'converter', f));
  const framed = Buffer.concat(files.map((f) => Buffer.from(pkg.mllp.encode(f))));
  await openBytes(page, 'frames.mllp', framed, 'hl7');
  assert.match(await page.textContent('[data-testid=hl7-summary]'), /^3 messages in MLLP frames/);
  await page.context().close();
});

test('bad input: HL7 with binary junk and JSON nested 100,000 deep are named by code; the open file stays', async () => {
  const page = await viewer();
  await openBytes(page, 'Patient-example.json', read('fhir-r4', 'examples', 'Patient-example.json'), 'fhir');
  const junk = Buffer.concat([read('hl7v2', 'converter', 'ADT-A01-01.hl7'), Buffer.from(Array.from({ length: 64 * 1024 }, (_, i) => (i * 7919 + (i >> 3)) & 255))]);
  let expected;
  try {
    pkg.hl7.parseBatch(junk, { strict: true });
  } catch (e) {
    expected = e;
  }
  assert.ok(expected, 'core rejects the junk in strict mode');
  let banner = await openBad(page, 'junk.hl7', junk);
  assert.equal(banner.code, expected.code);
  assert.ok(banner.text.includes(expected.message), banner.text);
  assert.equal(await page.evaluate(() => window.quireViewer.current.name), 'Patient-example.json');
  assert.equal(await page.locator('#views [role=tree]').count(), 1);
  await shoot(page, 'viewer-hl7-junk-1280-light');
  const deep = Buffer.from(`${'['.repeat(100000)}${']'.repeat(100000)}`);
  const deepError = pkg.json.check(deep, { maxDepth: 1024 });
  banner = await openBad(page, 'deep.json', deep);
  assert.equal(banner.code, 'MAX_DEPTH_EXCEEDED');
  assert.ok(banner.text.includes(deepError.message), banner.text);
  const deepObject = Buffer.from(`${'{"a":'.repeat(100000)}1${'}'.repeat(100000)}`);
  banner = await openBad(page, 'deep-object.json', deepObject);
  assert.equal(banner.code, 'MAX_DEPTH_EXCEEDED');
  // Refused without breaking the page: no error escaped in it (a recursive walk of 100,000 levels
  // on the page's thread would overflow its stack), and the resource open before is still usable.
  await page.evaluate(() => new Promise((r) => setTimeout(r, 0)));
  assert.deepEqual(page.kindsErrors, []);
  assert.equal(await page.evaluate(() => window.quireViewer.current.name), 'Patient-example.json');
  await page.locator('#views [role=tree] > [role=treeitem] > .kf-row').click();
  assert.equal(await page.locator('#views [role=tree] > [role=treeitem]').getAttribute('aria-expanded'), 'false');
  await shoot(page, 'viewer-fhir-deep-1280-light');
  await page.context().close();
});

test('the URL hash restores each view: a line of an NDJSON file, a message of an HL7 file, a CSV row, a FHIR node', async () => {
  const dir = mkdtempSync(path.join(tmpdir(), 'quire-kinds-files-'));
  writeFileSync(path.join(dir, 'patients.ndjson'), read('bulk-ndjson-synthea', 'Patient.000.ndjson'));
  writeFileSync(path.join(dir, 'messages.txt'), read('hl7v2', 'hapi', 'util', 'messages.txt'));
  writeFileSync(path.join(dir, 'table.csv'), 'id,name\n1,a\n2,b\n3,c\n');
  writeFileSync(path.join(dir, 'bundle.json'), read('fhir-r4', 'examples', 'Bundle-bundle-references.json'));
  const files = await startSite(['--extra', dir]);
  const context = await suite.browser.newContext({ viewport: { width: 1280, height: 800 } });
  await watchCsp(context);
  const page = await context.newPage();
  const open = async (hash) => {
    // A new document each time: a change of hash alone is not a load.
    await page.goto('about:blank');
    await page.goto(`${files.url}#${hash}`);
    await waitInPage(page, (n) => window.quireViewer?.current?.name === n, new URLSearchParams(hash).get('url').split('/').pop(), 60000);
  };
  try {
    await open('url=/files/patients.ndjson&line=7');
    await page.waitForSelector('[data-testid=ndjson-detail] h3:text-is("Line 7")');
    assert.equal(await page.locator('#views .grid-row.selected').getAttribute('data-row'), '6');
    await page.locator('#views .grid-row[data-row="2"]').click();
    await waitInPage(page, () => new URLSearchParams(location.hash.slice(1)).get('line') === '3');
    await open('url=/files/messages.txt&msg=5');
    assert.match(await page.textContent('[data-testid=hl7-header] h3'), /^Message 5:/);
    await open('url=/files/table.csv&row=3');
    assert.equal(await page.locator('#views .grid-row.selected').getAttribute('data-row'), '2');
    await open(`url=/files/bundle.json&node=${encodeURIComponent('Bundle.entry[2].resource.subject')}`);
    const selected = page.locator('#views [role=treeitem][aria-selected=true] > .kf-row > .kf-key');
    assert.equal(await selected.textContent(), 'subject');
  } finally {
    await context.close();
    await files.close();
  }
});

test('every request of the views went to the site itself, and no CSP violation', () => {
  assert.deepEqual(foreign, []);
  // The CSP has no 'unsafe-eval' (the package is linked with -sDYNAMIC_EXECUTION=0): nothing in the page may need it.
  assert.deepEqual(cspViolations, []);
});
