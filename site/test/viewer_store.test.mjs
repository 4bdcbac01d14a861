// A sealed .quire file (version 2) in the viewer, in headless Chromium: files sealed by the native
// CLI in the setup (a partitioned one with a key per clinic, and one under a passphrase) ask for
// a key in a dialog; a wrong key says WRONG_KEY and asks again; a partition's key shows that
// partition's rows only and says so; the owner's passphrase shows every row; Cancel leaves
// KEY_REQUIRED in the banner. The rows are the npm package's in Node with the same key, and no
// request leaves the site (the key never leaves the page).
// Screenshots: build/site-screenshots/viewer-sealed-{key-dialog,wrong-key,partition,390-dialog,390-passphrase}.png.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { cspViolations, loadPackage, repo, screenshotPath, viewerSuite, waitInPage } from './helpers.mjs';

const suite = viewerSuite();
const { foreign, pageErrors } = suite;
const cli = process.env.QUIRE_CLI ?? path.join(repo, 'build', 'native', 'native', 'quire');
const PASSPHRASE = 'a long passphrase for the clinic files';
let dir;
let pkg;

before(() => {
  if (!existsSync(cli)) throw new Error(`the native CLI is not built: expected ${cli} (make native, or set QUIRE_CLI)`);
  dir = mkdtempSync(path.join(tmpdir(), 'quire-viewer-store-'));
  const run = (...args) => execFileSync(cli, args, { cwd: dir, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });
  let rows = '';
  for (let i = 0; i < 300; i++) rows += JSON.stringify({ id: i, clinic: ['north', 'south', 'east'][i % 3], name: `Okafor-${i}`, balance: `${i}.50` }) + '\n';
  writeFileSync(path.join(dir, 'clinics.ndjson'), rows);
  writeFileSync(path.join(dir, 'phrase.txt'), PASSPHRASE);
  run('keygen', 'owner.key');
  run('keygen', 'other.key');
  run('convert', 'clinics.ndjson', 'clinics.quire', '--partition-by', 'clinic', '--owner-key', 'owner.key', '--keys-dir', 'keys', '--quiet');
  run('convert', 'clinics.ndjson', 'phrase.quire', '--passphrase-file', 'phrase.txt', '--quiet');
});
after(() => rmSync(dir, { recursive: true, force: true }));

/** Chooses the file in the page's input; resolves once the key dialog is up. */
async function chooseSealed(page, file) {
  await page.setInputFiles('#file', path.join(dir, file));
  await waitInPage(page, () => document.querySelector('#key-dialog')?.open === true);
}

/** Answers the dialog with a key file or a passphrase; resolves when the open has ended or the dialog asks again. */
async function answer(page, { keyFile, passphrase }) {
  const opens = await page.evaluate(() => window.quireViewer.opens);
  const asked = await page.evaluate(() => Number(document.querySelector('#key-dialog')?.dataset.ask ?? 0));
  if (keyFile) await page.setInputFiles('#key-file', path.join(dir, keyFile));
  if (passphrase) await page.fill('#key-passphrase', passphrase);
  await page.click('#key-open');
  // The dialog closes; then either the view opens, or a new dialog asks again.
  await waitInPage(page, ([n, a]) => window.quireViewer.opens > n || (document.querySelector('#key-dialog')?.open && Number(document.querySelector('#key-dialog').dataset.ask) > a), [opens, asked], 120000);
  return page.evaluate(() => ({
    opens: window.quireViewer.opens,
    ok: window.quireViewer.lastOpenOk,
    dialog: document.querySelector('#key-dialog')?.open === true,
    message: document.querySelector('#key-message')?.textContent ?? null,
    banner: document.querySelector('#banner').hidden ? null : document.querySelector('#banner').dataset.code,
    sealed: document.querySelector('#quire-sealed')?.textContent ?? null,
    count: document.querySelector('#match-count')?.dataset.count ?? null,
  }));
}

/** Every row the view's worker returns for the open file (core's cells), as the grid shows them. */
function viewRows(page) {
  return page.evaluate(() => {
    const view = document.querySelector('.quire-view');
    return view.quire.client.call('rows', { query: {}, names: ['id', 'clinic', 'name', 'balance'] });
  });
}

function packageRows(file, options) {
  const f = pkg.format.open(readFileSync(path.join(dir, file)), options);
  try {
    return f.queryText({}, { form: 'cells' }).split('\n').filter(Boolean).map((l) => JSON.parse(l));
  } finally {
    f.close();
  }
}

test('sealed: a wrong key asks again; a partition key shows its partition only, as the package reads it', async () => {
  pkg = await loadPackage();
  const { page, context, errors } = await suite.viewer({ width: 1280, height: 900 });
  await waitInPage(page, () => window.quireViewer !== undefined);
  await chooseSealed(page, 'clinics.quire');
  assert.match(await page.textContent('#key-dialog'), /clinics\.quire is sealed/);
  assert.match(await page.textContent('#key-help'), /nothing is sent anywhere/);
  await page.screenshot({ path: screenshotPath('viewer-sealed-key-dialog') });

  const wrong = await answer(page, { keyFile: 'other.key' });
  assert.equal(wrong.dialog, true, 'asked again');
  assert.match(wrong.message, /WRONG_KEY/);
  assert.match(wrong.message, /opens nothing in clinics\.quire/);
  await page.screenshot({ path: screenshotPath('viewer-sealed-wrong-key') });

  const north = await answer(page, { keyFile: 'keys/north.key' });
  assert.equal(north.ok, true, north.banner);
  assert.equal(north.dialog, false);
  assert.match(north.sealed, /partition's key: only the rows of partition "north" — 1 of the 3 partitions/);
  assert.equal(north.count, '100');
  const rows = await viewRows(page);
  assert.equal(rows.length, 100);
  assert.ok(rows.every((r) => r[1] === 'north'));
  assert.deepEqual(rows, packageRows('clinics.quire', { key: new Uint8Array(readFileSync(path.join(dir, 'keys', 'north.key'))) }));
  // The facts panel carries version 2's fields.
  const facts = await page.$$eval('[data-facts] tbody tr', (trs) => Object.fromEntries(trs.map((tr) => [tr.children[0].textContent, tr.children[1].textContent])));
  assert.equal(facts['format version'], '2');
  assert.equal(facts.sealed, 'yes');
  // Core tells a partition's key its partition, not the column (info.partitionBy is null then).
  assert.equal(facts['partition this key reads'], '"north"');
  assert.equal(facts['partitions (read / in the file)'], '1 / 3');
  await page.screenshot({ path: screenshotPath('viewer-sealed-partition'), fullPage: true });

  // The owner's key: every row, and the other view replaced.
  await chooseSealed(page, 'clinics.quire');
  const owner = await answer(page, { keyFile: 'owner.key' });
  assert.equal(owner.ok, true, owner.banner);
  assert.equal(owner.count, '300');
  assert.match(owner.sealed, /owner's key: every row, all 3 partitions \(by clinic\)/);
  const ownerFacts = await page.$$eval('[data-facts] tbody tr', (trs) => Object.fromEntries(trs.map((tr) => [tr.children[0].textContent, tr.children[1].textContent])));
  assert.equal(ownerFacts['partitioned by'], 'clinic');
  assert.equal(ownerFacts['partitions (read / in the file)'], '3 / 3');
  assert.deepEqual(await viewRows(page), packageRows('clinics.quire', { key: new Uint8Array(readFileSync(path.join(dir, 'owner.key'))) }));
  assert.deepEqual(errors, []);
  await context.close();
});

test('sealed at 390 px: the passphrase opens every row; Cancel leaves KEY_REQUIRED and the open file', async () => {
  pkg ??= await loadPackage();
  const { page, context, errors } = await suite.viewer({ width: 390, height: 844 });
  await waitInPage(page, () => window.quireViewer !== undefined);
  await chooseSealed(page, 'phrase.quire');
  await page.fill('#key-passphrase', 'not it');
  await page.screenshot({ path: screenshotPath('viewer-sealed-390-dialog') });
  await page.fill('#key-passphrase', '');
  const wrong = await answer(page, { passphrase: 'not it' });
  assert.equal(wrong.dialog, true);
  assert.match(wrong.message, /WRONG_KEY/);
  const opened = await answer(page, { passphrase: PASSPHRASE });
  assert.equal(opened.ok, true, opened.banner);
  assert.equal(opened.count, '300');
  assert.match(opened.sealed, /owner's passphrase: every row\./);
  assert.deepEqual(await viewRows(page), packageRows('phrase.quire', { passphrase: PASSPHRASE }));
  await page.screenshot({ path: screenshotPath('viewer-sealed-390-passphrase') });

  // Cancel: the banner says KEY_REQUIRED, and the file open before stays.
  const opens = await page.evaluate(() => window.quireViewer.opens);
  await chooseSealed(page, 'clinics.quire');
  await page.click('#key-cancel');
  await waitInPage(page, (n) => window.quireViewer.opens > n, opens);
  assert.equal(await page.evaluate(() => window.quireViewer.lastOpenOk), false);
  assert.equal(await page.$eval('#banner', (b) => b.dataset.code), 'KEY_REQUIRED');
  assert.equal(await page.evaluate(() => window.quireViewer.current.name), 'phrase.quire');
  assert.deepEqual(errors, []);
  await context.close();
});

test('sealed: nothing left the site and the CSP held', () => {
  assert.deepEqual(foreign, []);
  assert.deepEqual(pageErrors, []);
  assert.deepEqual(cspViolations, []);
});
