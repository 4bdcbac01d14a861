// The NDJSON view's conversion through a SQL on FHIR ViewDefinition, in headless Chromium: the
// Synthea Patient NDJSON through the built-in Patient example (with its hash index on id), the
// download byte-equal to view.toQuire of the same bytes in Node and opened in the .quire view;
// bad definitions (UNKNOWN_FUNCTION, INVALID_FHIRPATH, INVALID_VIEW) named in the box with core's
// message and path while the NDJSON stays open; a conversion cancelled part-way; and the page's
// CSP, which no longer allows 'unsafe-eval', refusing eval while the package works without it.
// Screenshots: build/site-screenshots/viewer-ndjson-view-{example,bad,quire,390-dark}.png.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { corpusDir, cspViolations, loadPackage, screenshotPath, siteDir, viewerSuite, waitInPage } from './helpers.mjs';

// Without the corpus or the package's build this suite fails, naming what is missing, rather than skipping whole.
const corpus = corpusDir();
const pkg = await loadPackage();
const examples = JSON.parse(readFileSync(path.join(siteDir, 'viewer', 'views', 'view-examples.json'), 'utf8')).examples;
const patientExample = examples.find((e) => e.definition.resource === 'Patient');

const suite = viewerSuite();
const { foreign, pageErrors } = suite;

const patients = () => readFileSync(path.join(corpus, 'bulk-ndjson-synthea', 'Patient.000.ndjson'));

const viewer = (options) => suite.viewer(options);

/** Opens NDJSON bytes through the file input and waits for the line index to finish. */
async function openNdjson(page, name, buffer) {
  let files = { name, mimeType: 'application/octet-stream', buffer };
  if (buffer.length > 4 << 20) {
    files = path.join(mkdtempSync(path.join(tmpdir(), 'quire-views-')), name);
    writeFileSync(files, buffer);
  }
  await page.setInputFiles('#file', files);
  await waitInPage(page, (n) => window.quireViewer?.current?.name === n && window.quireViewer.current.kind === 'ndjson', name, 60000);
  await waitInPage(page, () => document.querySelector('[data-testid=ndjson-status]')?.dataset.state === 'done', null, 120000);
}

/** Types a definition into the box as a person would (the box compiles it as it changes). */
async function typeDefinition(page, text) {
  await page.fill('[data-testid=ndjson-viewdef]', text);
  // The box compiles after a pause in typing: wait for its verdict on this text.
  await waitInPage(page, () => ['compiled', 'refused'].includes(document.querySelector('[data-testid=ndjson-view-box]').dataset.state), null, 10000);
}

/** The box's error: code, path and text, once shown. */
async function viewError(page) {
  await waitInPage(page, () => !document.querySelector('[data-testid=ndjson-view-error]').hidden, null, 10000);
  return page.$eval('[data-testid=ndjson-view-error]', (e) => ({ code: e.dataset.code, path: e.querySelector('[data-testid=ndjson-view-error-path]')?.textContent ?? null, text: e.textContent }));
}

test('every built-in ViewDefinition compiles, indexes only its own columns, and fills each column from data of its type', async () => {
  // The corpus has Patient, Condition and Encounter NDJSON; an Observation like Synthea's stands in for the rest.
  const observation = { resourceType: 'Observation', id: 'o1', status: 'final', subject: { reference: 'Patient/p1' }, effectiveDateTime: '2020-01-02T03:04:05Z',
    valueQuantity: { value: 72.5, unit: 'kg' }, code: { coding: [{ system: 'http://loinc.org', code: '29463-7', display: 'Body weight' }, { system: 'http://snomed.info/sct', code: '27113001', display: 'Body weight' }] } };
  const data = (type) => {
    const f = path.join(corpus, 'bulk-ndjson-synthea', `${type}.000.ndjson`);
    return existsSync(f) ? new Uint8Array(readFileSync(f)) : type === 'Observation' ? JSON.stringify(observation) + '\n' : undefined;
  };
  assert.ok(examples.length >= 2 && examples.some((e) => e.definition.resource === 'Observation' && e.definition.select.some((x) => x.forEach === 'code.coding')));
  for (const e of examples) {
    const v = pkg.view.compile(e.definition);
    const names = v.columns.map((c) => c.name);
    for (const column of Object.keys(e.indexes ?? {})) assert.ok(names.includes(column), `${e.label}: index on ${column}, not a column`);
    const input = data(v.resource);
    assert.ok(input, `${e.label}: no data of type ${v.resource}`);
    const rows = v.run(input);
    assert.ok(rows.length > 0, `${e.label}: no rows`);
    for (const n of names) assert.ok(rows.some((r) => r[n] !== null), `${e.label}: column ${n} is empty in every row`);
    if (v.resource === 'Observation') assert.equal(rows.length, observation.code.coding.length); // one row per coding
    const file = pkg.format.open(await v.toQuire(input, { indexes: e.indexes }));
    assert.equal(file.rowCount, rows.length);
    v.close();
  }
});

test('NDJSON through the built-in Patient view: the download equals view.toQuire in Node, and opens in the .quire view', async () => {
  const bytes = patients();
  const { page, context } = await viewer();
  await openNdjson(page, 'Patient.000.ndjson', bytes);
  assert.equal(await page.isVisible('[data-testid=ndjson-view-box]'), true);

  // The file's own type comes first in the list, with its count from core's stream.
  const stats = await (async () => {
    const s = pkg.ndjson.stream(bytes, { continueOnError: true });
    for await (const _ of s);
    return s.stats;
  })();
  await waitInPage(page, () => document.querySelectorAll('[data-testid=ndjson-view-example] option').length > 1);
  const options = await page.$$eval('[data-testid=ndjson-view-example] option', (os) => os.map((o) => ({ value: o.value, text: o.textContent })));
  assert.equal(options.length, examples.length + 1);
  assert.equal(options[1].text, `${patientExample.label} — Patient (${stats.byType.Patient} in this file)`);
  assert.match(options[2].text, /\(none in this file\)$/);
  await page.selectOption('[data-testid=ndjson-view-example]', options[1].value);

  // The example fills the box, core compiles it: its columns, each with an index choice (id: hash).
  const compiled = pkg.view.compile(patientExample.definition);
  await waitInPage(page, (n) => document.querySelectorAll('[data-testid=ndjson-view-columns] select').length === n, compiled.columns.length);
  const picks = await page.$$eval('[data-testid=ndjson-view-columns] select', (ss) => ss.map((s) => [s.dataset.column, s.value]));
  assert.deepEqual(picks.map((p) => p[0]), compiled.columns.map((c) => c.name));
  assert.deepEqual(picks.filter((p) => p[1]), [['id', 'hash']]);
  assert.deepEqual(JSON.parse(await page.inputValue('[data-testid=ndjson-viewdef]')), patientExample.definition);
  // A second index chosen by hand goes into the file too.
  await page.selectOption('[data-testid=ndjson-view-columns] select[data-column=birth_date]', 'sorted');
  assert.equal(await page.textContent('[data-testid=ndjson-convert]'), 'Convert to .quire through the view');
  await page.screenshot({ path: screenshotPath('viewer-ndjson-view-example') });

  const [download] = await Promise.all([page.waitForEvent('download', { timeout: 60000 }), page.click('[data-testid=ndjson-convert]')]);
  assert.equal(download.suggestedFilename(), 'Patient.000.quire');
  const got = new Uint8Array(readFileSync(await download.path()));
  const want = await pkg.view.toQuire(patientExample.definition, new Uint8Array(bytes), { indexes: [{ column: 'id', kind: 'hash' }, { column: 'birth_date', kind: 'sorted' }] });
  assert.equal(got.length, want.length);
  assert.ok(Buffer.from(got).equals(Buffer.from(want)), 'the page\'s .quire differs from view.toQuire in Node');
  const file = pkg.format.open(got);
  const wantFile = pkg.format.open(want);
  assert.equal(file.queryText({}, { ndjson: true }), wantFile.queryText({}, { ndjson: true }));
  assert.equal(file.rowCount, stats.byType.Patient);
  assert.deepEqual(file.info.indexes.map((i) => [i.column, i.kind]).sort(), [['birth_date', 'sorted'], ['id', 'hash']]);
  assert.match(await page.textContent('[data-testid=ndjson-status]'), new RegExp(`Converted: Patient\\.000\\.quire, ${want.length} bytes`));
  compiled.close();

  // The converted file opens in the .quire view, with the view's rows.
  await page.click('[data-testid=ndjson-open-quire]');
  await waitInPage(page, () => window.quireViewer.current?.kind === 'quire' && window.quireViewer.current.name === 'Patient.000.quire', null, 60000);
  await waitInPage(page, () => document.querySelectorAll('#views [role=row]').length > 2, null, 60000);
  const firstId = wantFile.query({ limit: 1 })[0].id;
  await waitInPage(page, (id) => document.querySelector('#views [role=grid]')?.textContent.includes(id), firstId, 30000);
  await page.screenshot({ path: screenshotPath('viewer-ndjson-view-quire') });
  await context.close();
});

test('a bad ViewDefinition shows core\'s code, path and message in the box; the NDJSON stays open', async () => {
  const bytes = patients();
  const { page, context } = await viewer();
  await openNdjson(page, 'Patient.000.ndjson', bytes);
  const lines = await page.$eval('[data-testid=ndjson-status]', (s) => s.textContent);

  const cases = [
    { path: 'name.nope()', code: 'UNKNOWN_FUNCTION' },
    { path: 'name.given[', code: 'INVALID_FHIRPATH' },
  ];
  for (const c of cases) {
    const def = JSON.stringify({ resource: 'Patient', select: [{ column: [{ name: 'id', path: 'id' }, { name: 'x', path: c.path }] }] });
    const node = (() => {
      try {
        pkg.view.compile(def);
      } catch (e) {
        return e;
      }
      return null;
    })();
    assert.equal(node?.code, c.code);
    await typeDefinition(page, def);
    const shown = await viewError(page);
    assert.equal(shown.code, c.code);
    assert.equal(shown.path, 'select[0].column[1].path');
    assert.ok(shown.text.includes(node.message.slice(c.code.length)), `${shown.text} lacks core's message ${node.message}`);
    assert.equal(await page.$$eval('[data-testid=ndjson-view-columns] select', (s) => s.length), 0);
  }
  // A column without a name: INVALID_VIEW, the place in the view named.
  await typeDefinition(page, '{"resource": "Patient", "select": [{"column": [{"path": "id"}]}]}');
  let shown = await viewError(page);
  assert.equal(shown.code, 'INVALID_VIEW');
  assert.match(shown.path ?? '', /^select\[0\]\.column\[0\]/);
  // Convert refuses the same way: no download, no banner over the file, the NDJSON still open.
  await typeDefinition(page, JSON.stringify({ resource: 'Patient', select: [{ column: [{ name: 'id', path: 'id' }, { name: 'x', path: 'name.nope()' }] }] }));
  shown = await viewError(page);
  let downloaded = false;
  page.on('download', () => (downloaded = true));
  await page.click('[data-testid=ndjson-convert]');
  await page.waitForTimeout(300);
  assert.equal(downloaded, false);
  assert.equal((await viewError(page)).code, 'UNKNOWN_FUNCTION');
  assert.equal(await page.evaluate(() => window.quireViewer.current.kind), 'ndjson');
  assert.equal(await page.$eval('[data-testid=ndjson-status]', (s) => s.textContent), lines);
  await page.screenshot({ path: screenshotPath('viewer-ndjson-view-bad') });
  // A definition core accepts but the data breaks (several given names in a column that is not a
  // collection): FHIRPATH_TYPE_ERROR at conversion, in the box and the banner, the NDJSON kept.
  const typeError = { resource: 'Patient', select: [{ column: [{ name: 'id', path: 'id' }, { name: 'given', path: 'name.given' }] }] };
  const nodeError = await pkg.view.toQuire(typeError, new Uint8Array(bytes)).then(() => null, (e) => e);
  assert.equal(nodeError?.code, 'FHIRPATH_TYPE_ERROR');
  await typeDefinition(page, JSON.stringify(typeError));
  assert.equal(await page.$eval('[data-testid=ndjson-view-box]', (b) => b.dataset.state), 'compiled');
  await page.click('[data-testid=ndjson-convert]');
  shown = await viewError(page);
  assert.equal(shown.code, 'FHIRPATH_TYPE_ERROR');
  assert.equal(shown.path, nodeError.path);
  assert.ok(shown.text.includes(nodeError.message.slice(nodeError.code.length)), `${shown.text} lacks core's message ${nodeError.message}`);
  await waitInPage(page, () => document.querySelector('#banner').dataset.code === 'FHIRPATH_TYPE_ERROR', null, 10000);
  assert.equal(await page.evaluate(() => window.quireViewer.current.kind), 'ndjson');
  assert.equal(downloaded, false);
  // Fixed, the same box converts.
  await typeDefinition(page, JSON.stringify({ resource: 'Patient', select: [{ column: [{ name: 'id', path: 'id' }, { name: 'gender', path: 'gender' }] }] }));
  await waitInPage(page, () => document.querySelector('[data-testid=ndjson-view-error]').hidden && document.querySelectorAll('[data-testid=ndjson-view-columns] select').length === 2, null, 10000);
  const [download] = await Promise.all([page.waitForEvent('download', { timeout: 60000 }), page.click('[data-testid=ndjson-convert]')]);
  const file = pkg.format.open(new Uint8Array(readFileSync(await download.path())));
  assert.deepEqual(file.info.columns.map((c) => c.name), ['id', 'gender']);
  assert.equal(file.rowCount, bytes.toString('utf8').trim().split('\n').length);
  await context.close();
});

test('a conversion through a view is cancelled part-way; the NDJSON stays usable', async () => {
  // About 42 MB of Patient lines: long enough to cancel in the middle (17 MB was converted before
  // the click landed in one run at load 4, once the JSON walk got faster).
  const one = patients();
  const big = Buffer.concat(Array.from({ length: 1000 }, () => one));
  const { page, context } = await viewer();
  await openNdjson(page, 'patients-big.ndjson', big);
  await typeDefinition(page, JSON.stringify(patientExample.definition));
  await waitInPage(page, () => document.querySelectorAll('[data-testid=ndjson-view-columns] select').length > 0, null, 10000);
  let downloaded = false;
  page.on('download', () => (downloaded = true));
  await page.click('[data-testid=ndjson-convert]');
  await waitInPage(page, () => !document.querySelector('#progress').hidden && Number(document.querySelector('#progress-bar').value) > 0, null, 30000);
  await page.click('#cancel');
  await waitInPage(page, () => document.querySelector('[data-testid=ndjson-status]').textContent === 'Conversion cancelled.', null, 30000);
  assert.equal(downloaded, false);
  assert.equal(await page.evaluate(() => window.quireViewer.current.kind), 'ndjson');
  assert.equal(await page.isEnabled('[data-testid=ndjson-convert]'), true);
  // Still usable: a line opens as FHIR.
  await page.fill('[data-testid=ndjson-jump]', '5');
  await page.press('[data-testid=ndjson-jump]', 'Enter');
  await waitInPage(page, () => document.querySelector('[data-testid=ndjson-detail] h3')?.textContent === 'Line 5', null, 10000);
  await context.close();
});

test('the view box at 390 px in the dark', async () => {
  const { page, context } = await viewer({ width: 390, height: 844, dark: true });
  await openNdjson(page, 'Patient.000.ndjson', patients());
  await waitInPage(page, () => document.querySelectorAll('[data-testid=ndjson-view-example] option').length > 1);
  const value = await page.$$eval('[data-testid=ndjson-view-example] option', (os) => os[1].value);
  await page.selectOption('[data-testid=ndjson-view-example]', value);
  await waitInPage(page, () => document.querySelectorAll('[data-testid=ndjson-view-columns] select').length > 0, null, 10000);
  await page.locator('[data-testid=ndjson-view-box]').scrollIntoViewIfNeeded();
  await page.screenshot({ path: screenshotPath('viewer-ndjson-view-390-dark') });
  const wide = await page.evaluate(() => [...document.querySelectorAll('[data-testid=ndjson-view-box], [data-testid=ndjson-view-box] *')].filter((e) => e.getBoundingClientRect().right > 391).map((e) => `${e.tagName}.${e.className} ${Math.round(e.getBoundingClientRect().left)}-${Math.round(e.getBoundingClientRect().right)}`).slice(0, 8));
  assert.deepEqual(wide, [], 'the view box is wider than 390 px');
  assert.ok(await page.evaluate(() => document.documentElement.scrollWidth <= 390));
  await context.close();
});

test('the CSP refuses eval in the page, and nothing the viewer did needed it', async () => {
  const { page, context } = await viewer();
  await openNdjson(page, 'Patient.000.ndjson', patients());
  const before = cspViolations.length;
  // The watcher does see a violation: a string evaluated as code in the page (setTimeout with a
  // string: page.evaluate's own code is exempt from the CSP, a timer's string is not) is refused.
  assert.doesNotMatch(await page.$eval('meta[http-equiv=Content-Security-Policy]', (m) => m.content), /'unsafe-eval'/);
  await page.evaluate(() => setTimeout('window.quireEvalRan = true', 0));
  await new Promise((r) => setTimeout(r, 200));
  assert.equal(await page.evaluate(() => window.quireEvalRan ?? false), false);
  for (let i = 0; i < 50 && cspViolations.length === before; i++) await new Promise((r) => setTimeout(r, 40));
  const seen = cspViolations.splice(before);
  assert.equal(seen.length, 1);
  assert.equal(seen[0].directive, 'script-src');
  assert.equal(seen[0].blocked, 'eval');
  await context.close();
  // Everything else in this file ran under the same CSP.
  assert.deepEqual(cspViolations, []);
  assert.deepEqual(pageErrors, []);
  assert.deepEqual(foreign, []);
});
