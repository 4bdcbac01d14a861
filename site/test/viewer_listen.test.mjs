// A listener's store in the viewer, in headless Chromium: the npm package's hl7.listen runs in this
// process and is sent ten HL7 v2 messages of the shared corpus (ADT, ORU, VXU, SIU, ORM, MDM, PPR)
// over node:net, each answered AA; then the store (and a sealed one, under a key from keygen())
// is served from --extra and opened by ?url=. The list has one line per message with the control
// IDs, types and patients sent (in order); a message opened by a click and by the keyboard (Enter)
// shows the table of segments and fields the HL7 view gives for that message's bytes (compared
// with the package's parse in Node); Back and Escape return to the list; a filter narrows it; the
// table of every column is one button away; the sealed store opens through the key dialog.
// Screenshots: build/site-screenshots/viewer-listen-{list,message}-{light,dark}.png,
// viewer-listen-table-light.png, viewer-listen-390-dark{,-message}.png, viewer-listen-sealed.png.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import net from 'node:net';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { corpusDir, cspViolations, loadPackage, screenshotPath, screenshots, viewerSuite, waitInPage } from './helpers.mjs';
import { isListenerSchema, LISTEN_COLUMNS } from '../viewer/views/listen-model.mjs';
import { messageRows } from '../viewer/views/hl7-model.mjs';

/** The messages sent: several types; their control IDs differ (the listener stores a resend once). */
const FILES = [
  'ADT-A01-01.hl7', 'ORU-R01-RMGEAD.hl7', 'VXU.hl7', 'SIU-S13-01.hl7', 'ORM-O01-01.hl7',
  'MDM-T01-01.hl7', 'ADT01-23.hl7', 'LAB-ORU-1.hl7', 'ADT-A40-01.hl7', 'PC1-Problem-Add-v2.3.1.hl7',
];
const VT = 0x0b, FS = 0x1c, CR = 0x0d;

// The stores' folder, made now: the site serves it (--extra) from its start.
const dir = mkdtempSync(path.join(tmpdir(), 'quire-viewer-listen-'));
let pkg;
let sent; // [{ file, text, controlId, type, patientId, sender, json }]

/** A corpus file as it goes on the wire: no byte order mark, segments ended by CR (the corpus stores LF). */
function wireText(file) {
  let text = readFileSync(path.join(corpusDir(), 'hl7v2', 'converter', file), 'utf8');
  if (text.charCodeAt(0) === 0xfeff) text = text.slice(1);
  return text.replace(/\r\n|\n|\r/g, '\r').replace(/\r+$/, '') + '\r';
}

/** Sends each text in an MLLP frame on one connection; resolves to the ACKs' MSA fields. */
async function sendAll(port, texts) {
  const s = net.connect(port, '127.0.0.1');
  await new Promise((resolve, reject) => s.once('connect', resolve).once('error', reject));
  const acks = [];
  let pending = Buffer.alloc(0);
  const done = new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`${acks.length} of ${texts.length} ACKs in 20 s`)), 20000);
    s.on('data', (d) => {
      pending = Buffer.concat([pending, d]);
      for (let end; (end = pending.indexOf(Buffer.from([FS, CR]))) >= 0; ) {
        acks.push(pending.subarray(0, end).toString('utf8').split('\r').find((seg) => seg.includes('MSA|')).split('|'));
        pending = pending.subarray(end + 2);
      }
      if (acks.length >= texts.length) {
        clearTimeout(timer);
        resolve();
      }
    });
    s.on('error', reject);
  });
  s.write(Buffer.concat(texts.map((t) => Buffer.concat([Buffer.from([VT]), Buffer.from(t, 'utf8'), Buffer.from([FS, CR])]))));
  await done;
  s.destroy();
  return acks;
}

async function listenInto(store, key) {
  const l = await pkg.hl7.listen({ port: 0, store, ...(key ? { key } : {}) });
  try {
    const acks = await sendAll(l.address().port, sent.map((m) => m.text));
    assert.deepEqual(acks.map((a) => a[1]), sent.map(() => 'AA'), 'every message accepted');
    assert.deepEqual(acks.map((a) => a[2]), sent.map((m) => m.controlId), 'acknowledged in order');
  } finally {
    await l.close();
  }
  assert.equal(l.counters().stored, sent.length);
}

before(async () => {
  pkg = await loadPackage();
  sent = FILES.map((file) => {
    const text = wireText(file);
    const m = pkg.hl7.parse(Buffer.from(text, 'utf8'));
    try {
      const msh = text.split('\r')[0].split('|');
      const pid = text.split('\r').find((s) => s.startsWith('PID|'));
      const patientId = pid ? (pid.split('|')[3] ?? '').split('~')[0].split('^')[0] : null;
      return { file, text, controlId: m.controlId, type: msh[8], sender: [msh[2], msh[3]].filter((s, i) => i === 0 || s).join('^'), patientId: patientId || null, json: m.toJSON() };
    } finally {
      m.close();
    }
  });
  assert.equal(new Set(sent.map((m) => m.controlId)).size, sent.length, 'the control IDs differ');
  await listenInto(path.join(dir, 'adt.quire'));
  const key = pkg.keygen();
  writeFileSync(path.join(dir, 'owner.key'), key);
  await listenInto(path.join(dir, 'sealed.quire'), key);
});
// The site serves the stores' folder (the stores are written by the before() above).
const suite = viewerSuite({ siteArgs: () => ['--extra', dir] });
after(() => rmSync(dir, { recursive: true, force: true }));

// ?url= opens a file with a fresh hash; #url= keeps the view's keys (a reload).
const viewer = ({ width = 1280, height = 900, dark = false, hash = '', file = 'adt.quire' } = {}) =>
  suite.viewer({ width, height, dark, consoleErrors: true, at: hash ? `#url=/files/${file}&${hash}` : `?url=/files/${file}` });

/** Waits for the message list; resolves to its count. */
async function listUp(page) {
  await waitInPage(page, () => document.querySelector('.listen-view #listen-count')?.dataset.count !== undefined, undefined, 120000);
  return Number(await page.$eval('#listen-count', (p) => p.dataset.count));
}

/** The list's lines in sight: [received, type, control ID, sender, patient ID, ACK] each. */
async function lines(page) {
  await waitInPage(page, () => document.querySelector('.listen-view .grid-rows .grid-row') && !document.querySelector('.listen-view .grid-cell.loading'));
  return page.$$eval('.listen-view .grid-rows .grid-row', (rows) => rows.map((r) => [...r.querySelectorAll('[role=gridcell]')].map((c) => (c.classList.contains('null') ? null : c.textContent))));
}

/** Waits until message `row` (from 0) is open; resolves to the HL7 view's table as [field, text] rows. */
async function opened(page, row) {
  await waitInPage(page, (r) => document.querySelector('#listen-detail')?.dataset.opened === String(r) && document.querySelector('#listen-detail [data-testid=hl7-table] tbody'), row);
  return page.$$eval('#listen-detail [data-testid=hl7-table] tbody tr', (trs) => trs.map((tr) => [tr.dataset.field, [...tr.querySelectorAll('.kh-part')].map((p) => p.textContent).join('\n')]));
}

/** What the HL7 view's table must show for a message: messageRows of the package's parse in Node. */
function expectedTable(m) {
  return messageRows(m.json).map((r) => [`${r.segment}-${r.field}`, r.parts.map((p) => `${p.path}${p.text === null ? '"" (null)' : p.text}`).join('\n')]);
}

const listShown = (page) => page.evaluate(() => !document.querySelector('.listen-list').hidden && document.querySelector('#listen-detail').hidden);

test('the schema check: a listener store is one, a table of other columns is not', () => {
  const f = pkg.format.open(readFileSync(path.join(dir, 'adt.quire')));
  try {
    assert.equal(isListenerSchema(f.info.columns), true);
    assert.deepEqual(f.info.columns.map((c) => [c.name, c.type]), LISTEN_COLUMNS);
    assert.equal(f.info.rows, sent.length);
    const other = f.info.columns.map((c) => (c.name === 'receive_time' ? { ...c, type: 'string' } : c));
    assert.equal(isListenerSchema(other), false, 'a type differs');
    assert.equal(isListenerSchema(f.info.columns.slice(1)), false, 'a column missing');
    assert.equal(isListenerSchema([...f.info.columns, { name: 'extra', type: 'string' }]), false, 'a column more');
  } finally {
    f.close();
  }
  const plain = pkg.format.open(pkg.format.write([{ control_id: 'x', message: 'y' }]));
  try {
    assert.equal(isListenerSchema(plain.info.columns), false);
  } finally {
    plain.close();
  }
});

test('the store as messages: one line each, opened by click and by keyboard, back by button and Escape', async () => {
  const { page, context, errors } = await viewer();
  assert.equal(await listUp(page), sent.length);
  const shown = await lines(page);
  assert.equal(shown.length, sent.length, 'every line in sight (ten rows fit)');
  assert.deepEqual(shown.map((l) => l[2]), sent.map((m) => m.controlId), 'control IDs in the order sent');
  assert.deepEqual(shown.map((l) => l[1]), sent.map((m) => m.type), 'MSH-9 as written');
  assert.deepEqual(shown.map((l) => l[3]), sent.map((m) => m.sender), 'MSH-3^MSH-4');
  assert.deepEqual(shown.map((l) => l[4]), sent.map((m) => m.patientId), 'PID-3.1');
  assert.deepEqual(shown.map((l) => l[5]), sent.map(() => 'AA'));
  // The receive time: core's timestamp text, the same as the package gives in Node.
  const f = pkg.format.open(readFileSync(path.join(dir, 'adt.quire')));
  const times = f.queryText({ columns: ['receive_time'] }, { form: 'cells' }).split('\n').filter(Boolean).map((l) => JSON.parse(l)[0]);
  f.close();
  assert.deepEqual(shown.map((l) => l[0]), times);
  await page.screenshot({ path: screenshotPath('viewer-listen-list-light') });

  // What the list asks the worker from here on: the message column is read for an opened message only.
  await page.evaluate(() => {
    const client = document.querySelector('.listen-view').listen.client;
    const call = client.call.bind(client);
    window.__rowsCalls = [];
    client.call = (op, args, options) => {
      if (op === 'rows') window.__rowsCalls.push({ names: args.names, limit: args.query.limit });
      return call(op, args, options);
    };
  });
  // A click opens the second message in the HL7 view: its fields are the package's parse of what was sent.
  await page.click('.listen-view .grid-rows .grid-row[data-row="1"] [aria-colindex="4"]');
  const table = await opened(page, 1);
  assert.deepEqual(table, expectedTable(sent[1]));
  assert.ok(table.some(([f]) => f === 'MSH-10') && table.some(([f]) => f === 'PID-5'), 'MSH and PID shown');
  assert.equal(table.find(([f]) => f === 'MSH-10')[1], sent[1].controlId);
  assert.equal(await page.$eval('#listen-detail tr[data-field="PID-5"] .kh-name', (e) => e.textContent), 'Patient Name');
  assert.equal(await page.textContent('#listen-message-title'), `Message 2 of ${sent.length}: ORU^R01`);
  assert.match(await page.textContent('#listen-message-facts'), new RegExp(`^control ID CNTRL-3456 · received ${shown[1][0]} · from GHH LAB\\^ELAB-3 · patient 555-44-4444 · ACK AA$`));
  assert.equal(await page.evaluate(() => new URLSearchParams(location.hash.slice(1)).get('msg')), '2');
  assert.equal(await page.evaluate(() => document.activeElement?.id), 'listen-back', 'focus on Back');
  await page.screenshot({ path: screenshotPath('viewer-listen-message-light'), fullPage: true });

  // Back (the button): the list again, the line still selected, the hash without msg.
  await page.click('#listen-back');
  assert.equal(await listShown(page), true);
  assert.equal(await page.evaluate(() => new URLSearchParams(location.hash.slice(1)).get('msg')), null);
  assert.equal(await page.$eval('.listen-view .grid-row.selected', (r) => r.dataset.row), '1');
  assert.equal(await page.evaluate(() => document.activeElement?.getAttribute('role')), 'grid', 'focus back on the list');

  // The keyboard: Ctrl+Home, three down, Enter opens the fourth; Escape comes back.
  await page.keyboard.press('Control+Home');
  for (let i = 0; i < 3; i++) await page.keyboard.press('ArrowDown');
  await page.keyboard.press('Enter');
  assert.deepEqual(await opened(page, 3), expectedTable(sent[3]));
  assert.equal(await page.evaluate(() => document.activeElement?.id), 'listen-back');
  await page.keyboard.press('Escape');
  assert.equal(await listShown(page), true);
  assert.equal(await page.evaluate(() => document.activeElement?.getAttribute('role')), 'grid');
  // ...and the last one by Ctrl+End and Space, and Enter on Back.
  await page.keyboard.press('Control+End');
  await page.keyboard.press(' ');
  assert.deepEqual(await opened(page, sent.length - 1), expectedTable(sent[sent.length - 1]));
  await page.keyboard.press('Enter');
  assert.equal(await listShown(page), true);

  // The filter (core's expression syntax): one message; opened, it is that one.
  const seq = await page.$eval('#listen-count', (p) => p.dataset.seq);
  await page.fill('#listen-expr', `control_id = '${sent[6].controlId}'`);
  await page.press('#listen-expr', 'Enter');
  await waitInPage(page, (s) => document.querySelector('#listen-count').dataset.seq !== s, seq);
  assert.equal(await page.$eval('#listen-count', (p) => p.dataset.count), '1');
  assert.deepEqual((await lines(page)).map((l) => l[2]), [sent[6].controlId]);
  await page.click('.listen-view .grid-rows .grid-row[data-row="0"]');
  assert.deepEqual(await opened(page, 0), expectedTable(sent[6]));
  await page.keyboard.press('Escape');
  // A search (contains on a column): the ADT messages.
  const seq2 = await page.$eval('#listen-count', (p) => p.dataset.seq);
  await page.selectOption('#listen-search-column', 'type');
  await page.fill('#listen-search-text', 'ADT');
  await page.press('#listen-search-text', 'Enter');
  await waitInPage(page, (s) => document.querySelector('#listen-count').dataset.seq !== s, seq2);
  assert.deepEqual((await lines(page)).map((l) => l[2]), sent.filter((m) => m.type.includes('ADT')).map((m) => m.controlId));
  // A filter core refuses: its code in the banner, the list as it was.
  const seq3 = await page.$eval('#listen-count', (p) => p.dataset.seq);
  await page.fill('#listen-expr', 'no_such_column = 1');
  await page.press('#listen-expr', 'Enter');
  await waitInPage(page, (s) => document.querySelector('#listen-count').dataset.seq !== s, seq3);
  assert.equal(await page.$eval('#banner', (b) => b.hidden), false);
  assert.ok(await page.$eval('#banner', (b) => b.dataset.code), 'a code in the banner');
  assert.equal(await page.$eval('#listen-count', (p) => p.dataset.count), String(sent.filter((m) => m.type.includes('ADT')).length));
  await page.click('#listen-clear');
  await waitInPage(page, (n) => document.querySelector('#listen-count').dataset.count === String(n), sent.length);
  await lines(page);
  // Four messages were opened, each by one call of one row with `message`; every other call (the
  // list's blocks, again after each filter) left it out.
  const calls = await page.evaluate(() => window.__rowsCalls);
  const withMessage = calls.filter((c) => c.names.includes('message'));
  assert.equal(withMessage.length, 4, JSON.stringify(calls));
  assert.ok(withMessage.every((c) => c.limit === 1));
  assert.ok(calls.length > withMessage.length, 'the list was fetched again after the filters');

  // Every column as a table, and back to the messages.
  await page.click('#listen-as-table');
  await waitInPage(page, () => document.querySelector('.quire-view #match-count')?.dataset.count);
  assert.equal(await page.$eval('#match-count', (p) => p.dataset.count), String(sent.length));
  assert.equal(await page.$$eval('.quire-view .grid-header [role=columnheader]', (h) => h.length), 1 + LISTEN_COLUMNS.length);
  assert.equal(await page.evaluate(() => new URLSearchParams(location.hash.slice(1)).get('as')), 'table');
  await page.screenshot({ path: screenshotPath('viewer-listen-table-light') });
  await page.click('#listen-as-messages');
  assert.equal(await listUp(page), sent.length);
  assert.deepEqual(errors, []);
  await context.close();
});

test('a reload (url and msg=3 in the hash) opens that message; dark and 390 px', async () => {
  const { page, context, errors } = await viewer({ dark: true, hash: 'msg=3' });
  await listUp(page);
  assert.deepEqual(await opened(page, 2), expectedTable(sent[2]));
  await page.screenshot({ path: screenshotPath('viewer-listen-message-dark'), fullPage: true });
  await page.click('#listen-back');
  await lines(page);
  await page.screenshot({ path: screenshotPath('viewer-listen-list-dark') });
  await context.close();

  const narrow = await viewer({ dark: true, width: 390, height: 844 });
  await listUp(narrow.page);
  await lines(narrow.page);
  // Nothing wider than the screen but the grid's own scroll box.
  assert.equal(await narrow.page.evaluate(() => document.documentElement.scrollWidth <= window.innerWidth), true, 'no page-wide horizontal scroll');
  await narrow.page.screenshot({ path: screenshotPath('viewer-listen-390-dark') });
  await narrow.page.click('.listen-view .grid-rows .grid-row[data-row="0"]');
  assert.deepEqual(await opened(narrow.page, 0), expectedTable(sent[0]));
  assert.equal(await narrow.page.evaluate(() => document.documentElement.scrollWidth <= window.innerWidth), true, 'the message fits too');
  await narrow.page.screenshot({ path: screenshotPath('viewer-listen-390-dark-message') });
  // "Open in the HL7 view": the message becomes the open file, in the HL7 view.
  const opens = await narrow.page.evaluate(() => window.quireViewer.opens);
  await narrow.page.click('#listen-open-hl7');
  await waitInPage(narrow.page, (n) => window.quireViewer.opens > n, opens);
  assert.deepEqual(await narrow.page.evaluate(() => window.quireViewer.current), { name: 'adt.quire message 1', kind: 'hl7', detected: 'hl7', size: Buffer.byteLength(sent[0].text) });
  assert.equal(await narrow.page.textContent('[data-testid=hl7-summary]'), '1 message');
  assert.deepEqual([...errors, ...narrow.errors], []);
  await narrow.context.close();
});

test('a sealed store: the key dialog, then the same list and messages', async () => {
  const { page, context, errors } = await viewer({ file: 'sealed.quire' });
  await waitInPage(page, () => document.querySelector('#key-dialog')?.open === true, undefined, 120000);
  await page.setInputFiles('#key-file', path.join(dir, 'owner.key'));
  await page.click('#key-open');
  assert.equal(await listUp(page), sent.length);
  assert.match(await page.textContent('#quire-sealed'), /owner's key: every row/);
  assert.deepEqual((await lines(page)).map((l) => l[2]), sent.map((m) => m.controlId));
  await page.click('.listen-view .grid-rows .grid-row[data-row="4"]');
  assert.deepEqual(await opened(page, 4), expectedTable(sent[4]));
  await page.screenshot({ path: screenshotPath('viewer-listen-sealed'), fullPage: true });
  await page.keyboard.press('Escape');
  assert.equal(await listShown(page), true);
  assert.deepEqual(errors, []);
  await context.close();
});

// A figure, not a gate: 100,000 messages (the ten above in turn, MSH-10 numbered) through hl7.listen,
// then the list opened by ?url=, its last line reached by Ctrl+End and opened. Printed and written
// to build/site-screenshots/viewer-listen-100k.json. Opt in: QUIRE_LISTEN_LARGE=100000.
const LARGE = Number(process.env.QUIRE_LISTEN_LARGE ?? 0);
test('a store of many messages (QUIRE_LISTEN_LARGE): opened, its last message reached and opened', { skip: !LARGE && 'set QUIRE_LISTEN_LARGE=100000 to measure' }, async () => {
  // The ten messages above in turn, each copy's MSH-10 numbered (the listener keeps one of each control ID).
  const textOf = (i) => {
    const base = sent[i % sent.length].text;
    const at = base.indexOf('\r');
    const msh = base.slice(0, at).split('|');
    msh[9] = `L${i}`;
    return msh.join('|') + base.slice(at);
  };
  const store = path.join(dir, 'large.quire');
  const t0 = performance.now();
  const l = await pkg.hl7.listen({ port: 0, store });
  const step = 5000;
  for (let at = 0; at < LARGE; at += step) {
    const acks = await sendAll(l.address().port, Array.from({ length: Math.min(step, LARGE - at) }, (_, k) => textOf(at + k)));
    assert.ok(acks.every((a) => a[1] === 'AA'));
  }
  await l.close();
  const buildMs = performance.now() - t0;
  assert.equal(l.counters().stored, LARGE);
  const f = pkg.format.open(readFileSync(store));
  const segments = f.info.segments;
  f.close();
  const { page, context, errors } = await viewer({ file: 'large.quire' });
  const t1 = performance.now();
  assert.equal(await listUp(page), LARGE);
  await lines(page);
  const openMs = performance.now() - t1;
  const workerMemory = () => page.evaluate(() => document.querySelector('.listen-view').listen.client.call('memory', {}));
  const afterList = await workerMemory();
  await page.focus('.listen-view .grid');
  const t2 = performance.now();
  await page.keyboard.press('Control+End');
  await waitInPage(page, (n) => [...document.querySelectorAll('.listen-view .grid-rows .grid-row')].some((r) => r.dataset.row === String(n - 1) && !r.querySelector('.loading')), LARGE);
  const endMs = performance.now() - t2;
  const t3 = performance.now();
  await page.keyboard.press('Enter');
  const table = await opened(page, LARGE - 1);
  const messageMs = performance.now() - t3;
  assert.equal(table.find(([f]) => f === 'MSH-10')[1], `L${LARGE - 1}`);
  const figures = {
    messages: LARGE, storeBytes: readFileSync(store).length, segments, buildMs: Math.round(buildMs), openMs: Math.round(openMs), ctrlEndMs: Math.round(endMs),
    openLastMessageMs: Math.round(messageMs), workerAfterList: afterList, workerAfterMessage: await workerMemory(),
  };
  console.log(`listen store in the viewer: ${JSON.stringify(figures)}`);
  mkdirSync(screenshots, { recursive: true });
  writeFileSync(path.join(screenshots, 'viewer-listen-100k.json'), JSON.stringify(figures, null, 1) + '\n');
  assert.deepEqual(errors, []);
  await context.close();
});

test('listen: nothing left the site, no page error, the CSP held', () => {
  assert.deepEqual(suite.foreign, []);
  assert.deepEqual(suite.pageErrors, []);
  assert.deepEqual(cspViolations, []);
});
