// The dashboard and the landing page in headless Chromium, used as a person uses them: the
// checked-in readings drawn, each view, the filters, the scale, a doctored reading opened through
// the file input, light and dark, 390 px and 1280x800, the keyboard alone. Every request the pages
// make is recorded: none may leave the site's own server. Screenshots of each view go to
// build/site-screenshots/; the render time of all cases is printed (a figure, not a gate).
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { launchChromium, repo, screenshotPath, screenshots, startSite } from './helpers.mjs';
import { buildModel, sortByRatio } from '../dashboard/model.mjs';

let site;
let browser;
let doctoredDir;
const requests = [];
const pageErrors = [];
const readingsDir = path.join(repo, 'bench', 'readings');

before(async () => {
  site = await startSite();
  browser = await launchChromium();
  doctoredDir = mkdtempSync(path.join(tmpdir(), 'quire-site-doctored-'));
});

after(async () => {
  await browser?.close();
  await site?.close();
  if (doctoredDir) rmSync(doctoredDir, { recursive: true, force: true });
});

async function openPage(urlPath, { width = 1280, height = 800, colorScheme = 'light' } = {}) {
  const context = await browser.newContext({ viewport: { width, height }, colorScheme, deviceScaleFactor: 1 });
  const page = await context.newPage();
  page.on('request', (r) => requests.push(r.url()));
  page.on('pageerror', (e) => pageErrors.push(`${urlPath}: ${e.message}`));
  page.on('console', (m) => { if (m.type() === 'error') pageErrors.push(`${urlPath}: console: ${m.text()}`); });
  await page.goto(new URL(urlPath, site.url).href);
  return { page, context };
}

async function openDashboard(options) {
  const opened = await openPage('dashboard/', options);
  await opened.page.waitForFunction(() => window.quireDashboard?.loaded === true, null, { timeout: 20000 });
  return opened;
}

// Every checked-in reading, as the server lists them: the run's own files first, then each
// sub-run's folder (format/, views/...) in name order; local/ (git-ignored runs) skipped.
const checkedIn = () => {
  const index = [];
  const files = (dir) => readdirSync(path.join(readingsDir, dir)).filter((f) => f.endsWith('.json')).sort();
  const add = (dir) => {
    for (const f of files(dir)) {
      const reading = JSON.parse(readFileSync(path.join(readingsDir, dir, f), 'utf8'));
      if (reading.schema === 'quire-reading/1') index.push({ source: dir ? `${dir}/${f}` : f, run: dir, reading });
    }
  };
  add('');
  const runs = readdirSync(readingsDir, { withFileTypes: true }).filter((d) => d.isDirectory() && d.name !== 'local').map((d) => d.name).sort();
  for (const r of runs) add(r);
  return index;
};

const tableCases = (page) => page.$$eval('#cases-table tbody tr', (rows) => rows.map((r) => r.dataset.case));

test('the checked-in readings: every case in the table, bars drawn, render time recorded', async () => {
  const { page, context } = await openDashboard();
  const model = buildModel(checkedIn());
  const names = await tableCases(page);
  assert.deepEqual([...names].sort(), model.cases.map((c) => c.name).sort(), 'every checked-in case has its row');
  const stats = await page.evaluate(() => ({ ...window.quireDashboard, measure: performance.getEntriesByName('dashboard:render')[0]?.duration }));
  assert.equal(stats.cases, model.cases.length);
  const bars = await page.$$eval('svg.chart rect.bar', (r) => r.length);
  const expectedBars = model.cases.reduce((n, c) => n + c.targets.length, 0);
  assert.equal(bars, expectedBars, 'one bar per case and target');
  assert.equal(await page.$$eval('svg.chart line.p99', (r) => r.length), expectedBars, 'a p99 mark on every bar');
  for (const label of await page.$$eval('svg.chart', (s) => s.map((x) => [x.getAttribute('role'), x.getAttribute('aria-label')]))) {
    assert.equal(label[0], 'img');
    assert.match(label[1], /median and p99 time per call of \d+ cases/);
  }
  assert.match(await page.textContent('#source-line'), /Showing the checked-in readings: native\.json/);
  assert.equal(await page.$$eval('#alerts .alert.error', (a) => a.length), 0, 'no error for the checked-in run');
  // Warm: the same cases redrawn (linear, then log again: the second draw is the figure).
  await page.check('input[name="scale"][value="linear"]');
  await page.check('input[name="scale"][value="log"]');
  const warm = await page.evaluate(() => window.quireDashboard.chartsMs);
  const line = `dashboard: rendered all ${stats.cases} checked-in cases (${bars} bars, ${names.length} table rows) in ${stats.renderMs.toFixed(1)} ms on first load (charts ${stats.chartsMs.toFixed(1)} ms, table ${stats.tableMs.toFixed(1)} ms), charts redrawn in ${warm.toFixed(1)} ms; target <= 100 ms`;
  console.log(line);
  mkdirSync(screenshots, { recursive: true });
  writeFileSync(path.join(screenshots, 'render-time.json'), `${JSON.stringify({ cases: stats.cases, bars, renderMs: stats.renderMs, chartsMs: stats.chartsMs, tableMs: stats.tableMs, measureMs: stats.measure, redrawChartsMs: warm }, null, 1)}\n`);
  await page.screenshot({ path: screenshotPath('dashboard-times-1280x800-light') });
  await page.locator('.chart-block').first().screenshot({ path: screenshotPath('dashboard-times-chart-fhir') });
  await context.close();
});

test('each view, the ratio order, the scale toggle and the filters', async () => {
  const { page, context } = await openDashboard();
  const model = buildModel(checkedIn());

  await page.check('input[name="view"][value="ratio"]');
  const sorted = sortByRatio(model.cases, 'wasm-node').map((c) => c.name);
  const order = await tableCases(page);
  assert.deepEqual(order.slice(0, sorted.length), sorted, 'table in ratio order, largest first');
  const labels = await page.$$eval('svg.chart .row > title', (t) => t.map((x) => x.textContent.split('\n')[0]));
  assert.deepEqual(labels, sorted, 'chart rows in ratio order');
  assert.ok(await page.isVisible('#ratio-sort'));
  await page.screenshot({ path: screenshotPath('dashboard-ratio-1280x800-light') });
  await page.check('input[name="sort"][value="wasm-browser"]');
  assert.deepEqual((await tableCases(page)).slice(0, 5), sortByRatio(model.cases, 'wasm-browser').slice(0, 5).map((c) => c.name));

  await page.check('input[name="view"][value="memory"]');
  assert.match(await page.textContent('#view-h'), /Peak memory/);
  assert.ok(await page.$$eval('svg.chart line.limit', (l) => l.length) > 0, 'budget marks drawn');
  assert.equal(await page.$$eval('svg.chart .row-warn', (r) => r.length), model.overBudget.length, 'over-budget cases flagged');
  assert.equal(await page.$$eval('svg.chart .row-problem', (r) => r.length), 0, 'as warnings, not errors');
  await page.screenshot({ path: screenshotPath('dashboard-memory-1280x800-light') });

  await page.check('input[name="view"][value="startup"]');
  assert.equal(await page.$$eval('svg.chart', (s) => s.length), 2);
  assert.equal(await page.$$eval('#runs-table tbody tr', (r) => r.length), checkedIn().length, 'a row per reading file');
  await page.screenshot({ path: screenshotPath('dashboard-startup-1280x800-light') });

  // Scale: log by default; linear redraws the same bars at other widths.
  await page.check('input[name="view"][value="times"]');
  const widths = () => page.$$eval('svg.chart rect.bar', (r) => r.slice(0, 40).map((x) => x.getAttribute('width')));
  assert.equal(await page.getAttribute('svg.chart', 'data-scale'), 'log');
  const logWidths = await widths();
  await page.check('input[name="scale"][value="linear"]');
  assert.equal(await page.getAttribute('svg.chart', 'data-scale'), 'linear');
  assert.notDeepEqual(await widths(), logWidths);
  await page.screenshot({ path: screenshotPath('dashboard-times-linear-1280x800-light') });
  await page.check('input[name="scale"][value="log"]');
  assert.deepEqual(await widths(), logWidths);

  // Filters: module, then operation, then peers off.
  await page.selectOption('#module', 'hl7v2');
  const hl7 = await tableCases(page);
  assert.equal(hl7.length, model.cases.filter((c) => c.module === 'hl7v2').length);
  assert.ok(hl7.every((n) => n.startsWith('hl7v2.')));
  assert.equal(await page.$$eval('svg.chart', (s) => s.length), 1, 'one module, one chart');
  await page.selectOption('#op', 'hl7v2.ack');
  const ack = await tableCases(page);
  assert.ok(ack.length > 0 && ack.length < hl7.length && ack.every((n) => n.startsWith('hl7v2.ack/')));
  await page.screenshot({ path: screenshotPath('dashboard-filtered-hl7v2-ack') });
  // Back to every module: the operation stays chosen until it is cleared too.
  await page.selectOption('#module', '');
  assert.deepEqual(await tableCases(page), ack);
  await page.selectOption('#op', '');
  await page.uncheck('#peers');
  assert.equal((await tableCases(page)).length, model.cases.filter((c) => !c.peer).length);
  await page.fill('#text', 'customers-200k');
  await page.waitForFunction(() => document.querySelectorAll('#cases-table tbody tr').length < 60);
  assert.ok((await tableCases(page)).every((n) => n.includes('customers-200k')));
  await context.close();
});

test('a doctored reading opened through the file input: the differing checksum shows on its case', async () => {
  const native = JSON.parse(readFileSync(path.join(readingsDir, 'native.json'), 'utf8'));
  const victim = native.cases.find((c) => c.name.startsWith('hl7v2.parse/'));
  victim.checksum = 'deadbeefdeadbeef';
  const files = ['wasm-node.json', 'wasm-browser.json'].map((f) => path.join(readingsDir, f));
  const doctored = path.join(doctoredDir, 'native-doctored.json');
  writeFileSync(doctored, JSON.stringify(native));
  const notReading = path.join(doctoredDir, 'notes.json');
  writeFileSync(notReading, '{"hello": 1}');

  const { page, context } = await openDashboard();
  await page.setInputFiles('#files', [doctored, ...files, notReading]);
  await page.waitForFunction(() => document.documentElement.dataset.loaded === 'dropped');
  const alerts = await page.textContent('#alerts');
  assert.match(alerts, /Checksums differ between targets for 1 case/);
  assert.ok(alerts.includes(victim.name));
  assert.match(alerts, /notes\.json: schema/, 'the file that is not a reading is named');
  const row = page.locator(`#cases-table tr[data-case="${victim.name}"]`);
  assert.match(await row.getAttribute('class'), /problem/);
  assert.match(await row.textContent(), /differ:native deadbeefdeadbeefNode [0-9a-f]{16}browser [0-9a-f]{16}/);
  const others = await page.$$eval('#cases-table tr.problem', (r) => r.map((x) => x.dataset.case));
  assert.deepEqual(others, [victim.name], 'only that case is in error');
  const flagged = await page.$$eval('svg.chart .row-problem > title', (t) => t.map((x) => x.textContent.split('\n')[0]));
  assert.deepEqual(flagged, [victim.name], 'its bars are flagged in the chart');
  assert.match(await page.textContent('#source-line'), /Showing the files you opened: native-doctored\.json, wasm-node\.json, wasm-browser\.json/);
  await page.screenshot({ path: screenshotPath('dashboard-doctored-alert') });
  await page.locator(`svg.chart .row-problem`).scrollIntoViewIfNeeded();
  await page.screenshot({ path: screenshotPath('dashboard-doctored-checksum-error') });
  await page.click('#alerts a');
  assert.equal(await page.evaluate(() => decodeURIComponent(location.hash)), `#case-${victim.name}`);
  await page.screenshot({ path: screenshotPath('dashboard-doctored-table-row') });

  // "Only problems" keeps that case and the ones over the memory budget.
  const dropped = buildModel([{ source: 'n', reading: native }, ...files.map((f) => ({ source: f, reading: JSON.parse(readFileSync(f, 'utf8')) }))]);
  await page.check('#problems');
  assert.deepEqual((await tableCases(page)).sort(), [...new Set([victim.name, ...dropped.overBudget])].sort());
  await page.click('#defaults');
  await page.waitForFunction(() => document.documentElement.dataset.loaded === 'defaults');
  assert.equal(await page.$$eval('#alerts .alert.error', (a) => a.length), 0);
  await context.close();
});

test('reading files dropped on the page replace the shown ones; one target alone still draws', async () => {
  const { page, context } = await openDashboard();
  assert.equal(await page.evaluate(() => window.crossOriginIsolated), true, 'the page is cross-origin isolated');
  const text = readFileSync(path.join(readingsDir, 'format', 'wasm-browser.json'), 'utf8');
  await page.evaluate((json) => {
    const data = new DataTransfer();
    data.items.add(new File([json], 'wasm-browser.json', { type: 'application/json' }));
    document.querySelector('main').dispatchEvent(new DragEvent('drop', { dataTransfer: data, bubbles: true, cancelable: true }));
  }, text);
  await page.waitForFunction(() => document.documentElement.dataset.loaded === 'dropped');
  const only = JSON.parse(text).cases.map((c) => c.name);
  assert.deepEqual((await tableCases(page)).sort(), [...only].sort());
  assert.equal(await page.$$eval('svg.chart rect.bar', (r) => r.length), only.length, 'one bar per case');
  await page.check('input[name="view"][value="ratio"]');
  assert.match(await page.textContent('#charts'), /No case has a native and a wasm figure/);
  await context.close();
});

test('light and dark follow prefers-color-scheme', async () => {
  const colours = {};
  for (const colorScheme of ['light', 'dark']) {
    const { page, context } = await openDashboard({ colorScheme });
    colours[colorScheme] = await page.evaluate(() => ({
      bg: getComputedStyle(document.documentElement).backgroundColor,
      fg: getComputedStyle(document.body).color,
      bar: getComputedStyle(document.querySelector('rect.bar.s-native')).fill,
    }));
    await page.screenshot({ path: screenshotPath(`dashboard-times-1280x800-${colorScheme}`) });
    await page.check('input[name="view"][value="ratio"]');
    await page.screenshot({ path: screenshotPath(`dashboard-ratio-1280x800-${colorScheme}`) });
    await context.close();
  }
  assert.equal(colours.light.bg, 'rgb(255, 255, 255)');
  assert.notEqual(colours.dark.bg, colours.light.bg);
  const lum = (rgb) => rgb.match(/\d+/g).slice(0, 3).reduce((a, b) => a + Number(b), 0);
  assert.ok(lum(colours.dark.bg) < 100 && lum(colours.dark.fg) > 500, `dark: ${JSON.stringify(colours.dark)}`);
  assert.notEqual(colours.dark.bar, colours.light.bar);
});

test('390 px wide: nothing wider than the screen, labels above their bars', async () => {
  for (const colorScheme of ['light', 'dark']) {
    const { page, context } = await openDashboard({ width: 390, height: 844, colorScheme });
    const overflow = await page.evaluate(() => document.documentElement.scrollWidth);
    assert.ok(overflow <= 390, `page is ${overflow} px wide`);
    const svgWidth = await page.$eval('svg.chart', (s) => s.getBoundingClientRect().width);
    assert.ok(svgWidth <= 380, `chart is ${svgWidth} px wide`);
    await page.screenshot({ path: screenshotPath(`dashboard-390-${colorScheme}`) });
    await page.locator('.chart-block').first().scrollIntoViewIfNeeded();
    await page.screenshot({ path: screenshotPath(`dashboard-390-${colorScheme}-chart`) });
    await page.check('input[name="view"][value="ratio"]');
    await page.locator('.chart-block').first().scrollIntoViewIfNeeded();
    await page.screenshot({ path: screenshotPath(`dashboard-390-${colorScheme}-ratio`) });
    await context.close();
  }
});

test('the budget alert names a few cases and one button filters the table to every problem', async () => {
  const model = buildModel(checkedIn());
  const { page, context } = await openDashboard();
  if (!model.overBudget.length) {
    assert.equal(await page.$('#show-problems'), null, 'no budget alert without a case over it');
    await context.close();
    return;
  }
  const alert = page.locator('#alerts .alert.warn');
  const named = await alert.locator('a').evaluateAll((a) => a.map((x) => x.textContent));
  assert.deepEqual(named, model.overBudget.slice(0, 5), 'at most five cases named, in order');
  if (model.overBudget.length > 5) assert.match(await alert.textContent(), new RegExp(`and ${model.overBudget.length - 5} more`));
  await page.click('#show-problems');
  assert.equal(await page.isChecked('#problems'), true);
  assert.deepEqual((await tableCases(page)).sort(), [...new Set([...model.mismatches, ...model.failed, ...model.overBudget])].sort());
  await page.screenshot({ path: screenshotPath('dashboard-budget-alert-filtered') });
  await context.close();
});

test('the keyboard alone reaches every control and switches the view', async () => {
  const { page, context } = await openDashboard();
  const reached = [];
  for (let i = 0; i < 30; ++i) {
    await page.keyboard.press('Tab');
    reached.push(await page.evaluate(() => {
      const el = document.activeElement;
      const label = el.id || (el.name ? `${el.name}=${el.value}` : '') || el.textContent.trim().slice(0, 30);
      return `${el.tagName.toLowerCase()}:${label}`;
    }));
  }
  for (const want of ['a:Skip to the table of cases', 'input:files', 'input:view=times', 'input:scale=log', 'select:module', 'select:op', 'input:text', 'input:peers', 'input:problems', 'div:']) {
    assert.ok(reached.some((r) => r.startsWith(want)), `Tab reaches ${want}; reached ${reached.join(', ')}`);
  }
  // The focused control shows it: the hidden file input on its label, the radios on theirs.
  await page.focus('body');
  for (let i = 0; i < 40 && (await page.evaluate(() => document.activeElement.id)) !== 'files'; ++i) await page.keyboard.press('Tab');
  assert.equal(await page.evaluate(() => getComputedStyle(document.querySelector('label[for="files"]')).outlineStyle), 'solid');
  await page.focus('input[name="view"][value="times"]');
  await page.keyboard.press('ArrowRight');
  assert.equal(await page.evaluate(() => document.activeElement.value), 'ratio');
  assert.equal(await page.isChecked('input[name="view"][value="ratio"]'), true);
  assert.match(await page.textContent('#view-h'), /wasm \/ native/);
  const outline = await page.evaluate(() => getComputedStyle(document.activeElement.closest('label')).outlineStyle);
  assert.equal(outline, 'solid', 'visible focus on the segmented control');
  await page.screenshot({ path: screenshotPath('dashboard-keyboard-focus') });
  await page.keyboard.press('Shift+Tab');
  await page.keyboard.press('Tab');
  await page.keyboard.press('Tab');
  await page.keyboard.press('ArrowRight');
  assert.equal(await page.isChecked('input[name="scale"][value="linear"]'), true);
  await context.close();
});

test('the landing page links the dashboard and loads no wasm', async () => {
  for (const colorScheme of ['light', 'dark']) {
    const { page, context } = await openPage('', { colorScheme });
    await page.screenshot({ path: screenshotPath(`landing-1280x800-${colorScheme}`) });
    const { page: narrow, context: narrowContext } = await openPage('', { width: 390, height: 844, colorScheme });
    await narrow.screenshot({ path: screenshotPath(`landing-390-${colorScheme}`) });
    await narrowContext.close();
    if (colorScheme === 'dark') {
      await Promise.all([page.waitForURL(/\/dashboard\/$/), page.click('a[href="dashboard/"]')]);
      await page.waitForFunction(() => window.quireDashboard?.loaded === true);
    }
    await context.close();
  }
  assert.ok(!requests.some((u) => u.endsWith('.wasm')), 'no wasm fetched');
});

test('a page reads a file beside the site a range at a time, as ?url= will', async () => {
  const { page, context } = await openPage('');
  const whole = readFileSync(path.join(readingsDir, 'native.json'));
  const got = await page.evaluate(async (size) => {
    const part = await fetch('/readings/native.json', { headers: { Range: 'bytes=100-163' } });
    const tail = await fetch('/readings/native.json', { headers: { Range: 'bytes=-16' } });
    const past = await fetch('/readings/native.json', { headers: { Range: `bytes=${size}-` } });
    const head = await fetch('/readings/native.json', { method: 'HEAD' });
    return {
      isolated: window.crossOriginIsolated,
      part: [part.status, part.headers.get('content-range'), await part.text()],
      tail: [tail.status, await tail.text()],
      past: [past.status, past.headers.get('content-range')],
      head: [head.status, head.headers.get('content-length')],
    };
  }, whole.length);
  assert.equal(got.isolated, true);
  assert.deepEqual(got.part, [206, `bytes 100-163/${whole.length}`, whole.subarray(100, 164).toString()]);
  assert.deepEqual(got.tail, [206, whole.subarray(whole.length - 16).toString()]);
  assert.deepEqual(got.past, [416, `bytes */${whole.length}`]);
  assert.deepEqual(got.head, [200, String(whole.length)]);
  await context.close();
});

test('no request left the site: every one was to this server', () => {
  assert.ok(requests.length > 20, `${requests.length} requests recorded`);
  const foreign = requests.filter((u) => !u.startsWith(site.url) && !u.startsWith('data:'));
  assert.deepEqual(foreign, []);
  // The one error a page may log: Chromium reports the 416 the range test asks for.
  assert.deepEqual(pageErrors.filter((e) => !/status of 416 \(Range Not Satisfiable\)/.test(e)), []);
});
