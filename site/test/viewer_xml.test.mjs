// The FHIR view opening R4's XML form in headless Chromium (the site's own server, Debian's
// Chromium through playwright-core), as a user does: through the page's one file input. An
// official example (tests/data/fhir-xml/xml/) shows the tree of its canonical JSON
// (fhir.format(bytes, { to: 'json' }) in Node), the XML as written in the raw pane, the issues of
// fhir.validate at their XML lines and columns, and a summary naming it XML; an issue clicked
// selects its element in the tree and marks its XML line; a Bundle's references are followed; a
// Bundle over 1 MiB is read in the Worker; a DOCTYPE and a truncated document give core's
// INVALID_XML (line and column) in the banner while the file open before stays. Screenshots:
// build/site-screenshots/viewer-fhir-xml*.png.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { corpusDir, cspViolations, loadPackage, repo, screenshotPath, viewerSuite, waitInPage } from './helpers.mjs';

const corpus = corpusDir();
const pkg = await loadPackage();
const suite = viewerSuite();

const xmlDir = path.join(repo, 'tests', 'data', 'fhir-xml', 'xml');
const readXml = (name) => readFileSync(path.join(xmlDir, name));

async function viewer(options) {
  const { page, errors } = await suite.viewer(options);
  page.xmlErrors = errors;
  return page;
}

/** Resolves once the shell shows `name` in the FHIR view, opened as core's kind 'fhir-xml'. */
async function shown(page, name) {
  await waitInPage(page, (n) => window.quireViewer?.current?.name === n && window.quireViewer.current.kind === 'fhir' && window.quireViewer.current.detected === 'fhir-xml' && !document.querySelector('#views > .view[hidden]'), name, 60000);
}

/** Opens a file by its path through the one file input, as the File picker gives it. */
async function openPath(page, file) {
  await page.setInputFiles('#file', file);
  await shown(page, path.basename(file));
}

/** Opens bytes that must fail; resolves to the banner's code and text. */
async function openBad(page, name, buffer) {
  await page.evaluate(() => {
    const b = document.querySelector('#banner');
    b.hidden = true;
    delete b.dataset.code;
  });
  await page.setInputFiles('#file', { name, mimeType: 'application/xml', buffer });
  await waitInPage(page, () => !document.querySelector('#banner').hidden && document.querySelector('#banner').dataset.code, null, 60000);
  return page.$eval('#banner', (b) => ({ code: b.dataset.code, text: b.querySelector('.error-message').textContent }));
}

async function shoot(page, name) {
  await page.screenshot({ path: screenshotPath(name), fullPage: false });
}

/** Each issue's text as the list shows it (as in viewer_kinds.test.mjs). */
function issueText(issue) {
  return `${issue.severity}${issue.code === 'informational' ? ' ' : ` ${issue.code} `}${issue.expression || '(document)'} line ${issue.line}, column ${issue.column}: ${issue.details}`;
}

/** The keys of the top node's children as the tree shows them. */
const topKeys = (page) => page.$$eval('#views [role=tree] > [role=treeitem] > [role=group] > [role=treeitem] > .kf-row > .kf-key', (k) => k.map((x) => x.textContent));

/** The XML text of line `n` (1-based) of `bytes`. */
const xmlLine = (bytes, n) => bytes.toString('utf8').split('\n')[n - 1].replace(/\r$/, '');

test('FHIR XML: an official example opened by the file input: the tree of its canonical JSON, the XML as written, XML issues, screenshots', async () => {
  const file = path.join(xmlDir, 'patient-example.xml');
  const bytes = readFileSync(file);
  const outcome = pkg.fhir.validate(bytes);
  const json = JSON.parse(pkg.fhir.format(bytes, { to: 'json' }));
  const page = await viewer();
  await openPath(page, file);
  assert.equal(await page.textContent('#status'), `patient-example.xml — fhir-xml — ${await page.evaluate(() => document.querySelector('#status').textContent.split(' — ')[2])}`);
  // The summary names the resource and says it is XML.
  assert.equal(await page.textContent('[data-testid=fhir-summary]'), `Patient · XML · ${outcome.errors} errors, ${outcome.warnings} warnings`);
  // The tree is the canonical JSON's: its members in its order (resourceType among them, from the element name).
  assert.deepEqual(await topKeys(page), Object.keys(json));
  const top = page.locator('#views [role=tree] > [role=treeitem]');
  assert.equal(await top.locator(':scope > .kf-row > .kf-val').textContent(), `{${Object.keys(json).length}} Patient/${json.id}`);
  // The raw pane is the XML as written, line by line, named XML.
  const raw = page.locator('[data-testid=fhir-raw]');
  const lines = bytes.toString('utf8').split('\n').length;
  assert.equal(await raw.getAttribute('aria-label'), `Raw XML, ${lines} lines`);
  assert.equal(await page.locator('section.kf-raw-pane').getAttribute('aria-label'), 'Raw XML');
  assert.equal(await raw.locator('.kf-line[data-line="1"] .kf-text').textContent(), xmlLine(bytes, 1));
  assert.equal(await raw.locator('.kf-line[data-line="2"] .kf-text').textContent(), xmlLine(bytes, 2));
  // The issues are core's for the XML, at XML lines and columns (the narrative's invariants, not checked).
  assert.ok(outcome.issues.length > 0, 'the example has issues to list');
  assert.deepEqual(await page.$$eval('[data-testid=fhir-issues] button', (b) => b.map((x) => x.textContent)), outcome.issues.map(issueText));
  // A primitive with its XML value: birthDate from <birthDate value="..."/>.
  const birth = page.locator('#views [role=tree] > [role=treeitem] > [role=group] > [role=treeitem]', { has: page.locator(':scope > .kf-row > .kf-key', { hasText: /^birthDate$/ }) });
  assert.equal(await birth.locator('.kf-val').textContent(), `"${json.birthDate}"`);
  // By keyboard, as the JSON tree.
  await top.focus();
  await page.keyboard.press('ArrowDown');
  assert.equal(await page.evaluate(() => document.activeElement.querySelector(':scope > .kf-row > .kf-key')?.textContent), Object.keys(json)[0]);
  await page.keyboard.press('Home');
  await shoot(page, 'viewer-fhir-xml-1280-light');
  await page.setViewportSize({ width: 390, height: 844 });
  await page.emulateMedia({ colorScheme: 'dark' });
  await waitInPage(page, () => document.documentElement.scrollWidth <= 390, null, 5000).catch(() => {});
  assert.ok(await page.evaluate(() => document.documentElement.scrollWidth) <= 390, 'the page is not wider than 390 px');
  await shoot(page, 'viewer-fhir-xml-390-dark');
  // Below the tree at 390 px: the raw XML, scrolling inside its own box.
  await raw.scrollIntoViewIfNeeded();
  assert.equal(await raw.locator('.kf-line[data-line="2"] .kf-text').textContent(), xmlLine(bytes, 2));
  await shoot(page, 'viewer-fhir-xml-raw-390-dark');
  assert.deepEqual(page.xmlErrors, []);
  await page.context().close();
});

test('FHIR XML: an issue clicked selects its element in the tree and marks its XML line and column', async () => {
  // The official example with one value broken: its issue is at the element's XML line.
  const original = readXml('patient-example.xml').toString('utf8');
  const broken = original.replace(/<birthDate value="[^"]*"/, '<birthDate value="1974-13-45"');
  assert.notEqual(broken, original);
  const bytes = Buffer.from(broken);
  const outcome = pkg.fhir.validate(bytes);
  const issue = outcome.issues.find((i) => i.severity === 'error');
  assert.ok(issue, 'the broken date is an error');
  assert.equal(issue.expression, 'Patient.birthDate');
  assert.match(xmlLine(bytes, issue.line), /<birthDate value="1974-13-45"/);
  assert.equal(xmlLine(bytes, issue.line)[issue.column - 1], '<', "the column is the element's <");
  const dir = mkdtempSync(path.join(tmpdir(), 'quire-xml-'));
  const file = path.join(dir, 'patient-broken.xml');
  writeFileSync(file, bytes);
  const page = await viewer();
  await openPath(page, file);
  assert.equal(await page.textContent('[data-testid=fhir-summary]'), `Patient · XML · ${outcome.errors} errors, ${outcome.warnings} warnings`);
  assert.ok(outcome.errors >= 1);
  const k = outcome.issues.indexOf(issue);
  await page.locator('[data-testid=fhir-issues] button').nth(k).click();
  const selected = page.locator('#views [role=treeitem][aria-selected=true]');
  assert.equal(await selected.locator(':scope > .kf-row > .kf-key').textContent(), 'birthDate');
  assert.equal(await selected.locator(':scope > .kf-row > [data-testid=fhir-pin]').textContent(), `${issue.severity} line ${issue.line}, column ${issue.column}: ${issue.details}`);
  assert.equal(await page.evaluate(() => location.hash), '#node=Patient.birthDate');
  // The raw XML jumped to the issue's line, its column (the element's <) marked.
  const mark = page.locator('[data-testid=fhir-raw] .kf-line-mark');
  assert.equal(await mark.getAttribute('data-line'), String(issue.line));
  assert.equal(await mark.locator('mark').textContent(), '<');
  assert.equal(await mark.locator('.kf-text').textContent(), xmlLine(bytes, issue.line));
  assert.ok(await page.evaluate(() => {
    const m = document.querySelector('[data-testid=fhir-raw] .kf-line-mark').getBoundingClientRect();
    const v = document.querySelector('[data-testid=fhir-raw]').getBoundingClientRect();
    return m.top >= v.top && m.bottom <= v.bottom;
  }), 'the marked line is in view');
  await shoot(page, 'viewer-fhir-xml-issue-1280-light');
  assert.deepEqual(page.xmlErrors, []);
  await page.context().close();
});

test('FHIR XML: a Bundle\'s references are followed; a Bundle over 1 MiB of XML is read in the Worker', async () => {
  const page = await viewer();
  const workers = [];
  page.on('worker', (w) => workers.push(w.url()));
  const small = path.join(xmlDir, 'bundle-example.xml');
  const smallOutcome = pkg.fhir.validate(readFileSync(small));
  const smallJson = JSON.parse(pkg.fhir.format(readFileSync(small), { to: 'json' }));
  await openPath(page, small);
  assert.match(await page.textContent('[data-testid=fhir-summary]'), new RegExp(`^Bundle · XML · ${smallOutcome.errors} errors, ${smallOutcome.warnings} warnings · \\d+ reference targets$`));
  assert.deepEqual(await topKeys(page), Object.keys(smallJson));
  assert.equal(workers.length, 0, 'a small document is checked on the page');
  // Synthea's encounters as one Bundle in XML (core's writer), over the Worker's threshold.
  const lines = readFileSync(path.join(corpus, 'bulk-ndjson-synthea', 'Encounter.000.ndjson'), 'utf8').split('\n').filter(Boolean);
  const entries = lines.map((l, k) => `{"fullUrl":"urn:uuid:e-${k}","resource":${l}}`);
  const bundle = Buffer.from(pkg.fhir.format(Buffer.from(`{"resourceType":"Bundle","type":"collection","entry":[${entries.join(',')}]}`), { to: 'xml', pretty: true }));
  assert.ok(bundle.length > 1 << 20, `${bundle.length} bytes of XML`);
  const outcome = pkg.fhir.validate(bundle);
  const dir = mkdtempSync(path.join(tmpdir(), 'quire-xml-'));
  const file = path.join(dir, 'encounters.xml');
  writeFileSync(file, bundle);
  const t0 = Date.now();
  await openPath(page, file);
  console.log(`a ${bundle.length}-byte XML Bundle of ${entries.length} entries opened in ${Date.now() - t0} ms`);
  assert.ok(workers.some((u) => u.endsWith('/viewer/views/fhir-worker.mjs')), workers.join());
  assert.equal(await page.textContent('[data-testid=fhir-summary]'), `Bundle · XML · ${outcome.errors} errors, ${outcome.warnings} warnings · ${entries.length + lines.length} reference targets${outcome.truncated ? ' · issue list cut' : ''}`);
  assert.deepEqual(await page.$$eval('[data-testid=fhir-issues] button', (b) => b.map((x) => x.textContent)), outcome.issues.map(issueText));
  assert.match(await page.getAttribute('[data-testid=fhir-raw]', 'aria-label'), /^Raw XML, \d+ lines$/);
  assert.deepEqual(page.xmlErrors, []);
  await page.context().close();
});

test('FHIR XML: a DOCTYPE and a truncated document give core\'s INVALID_XML with line and column; the open file stays', async () => {
  const page = await viewer();
  await openPath(page, path.join(xmlDir, 'patient-example.xml'));
  const good = readXml('patient-example.xml').toString('utf8');
  const cases = [
    ['doctype.xml', Buffer.from(good.replace('<Patient ', '<!DOCTYPE Patient [ <!ENTITY x "y"> ]>\n<Patient '))],
    ['truncated.xml', Buffer.from(good.slice(0, Math.floor(good.length / 2)))],
  ];
  for (const [name, bytes] of cases) {
    let expected;
    try {
      pkg.fhir.format(bytes, { to: 'json' });
    } catch (err) {
      expected = err;
    }
    assert.equal(expected?.code, 'INVALID_XML', `${name}: core refuses it in Node`);
    assert.match(expected.message, /line \d+, column \d+/, `${name}: core's message has a line and column`);
    const banner = await openBad(page, name, bytes);
    assert.equal(banner.code, 'INVALID_XML', `${name}: ${banner.text}`);
    assert.equal(banner.text, `${name}: ${expected.message}`);
    assert.equal(await page.evaluate(() => window.quireViewer.current.name), 'patient-example.xml', 'the file open before stays open');
    assert.equal(await page.locator('#views [role=tree]').count(), 1);
  }
  await shoot(page, 'viewer-fhir-xml-invalid-1280-light');
  assert.deepEqual(page.xmlErrors, []);
  assert.deepEqual(suite.foreign, [], 'no request left the site');
  assert.deepEqual(cspViolations, [], 'no Content-Security-Policy violation');
  await page.context().close();
});
