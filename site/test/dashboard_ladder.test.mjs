// The dashboard's capacity ladder in headless Chromium: the checked-in loopback reading
// (bench/readings/listen/, from bench/mllp-load.mjs) drawn as latency against offered rate, one
// line a system, held rates marked, its table with every point; light and dark, 390 px; a run
// without a loopback reading shows no ladder. Screenshots go to build/site-screenshots/.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync, readdirSync } from 'node:fs';
import path from 'node:path';
import { launchChromium, repo, screenshotPath, startSite } from './helpers.mjs';
import { LADDER_TARGET, buildModel, checkReading, ladderOf } from '../dashboard/model.mjs';

const dir = path.join(repo, 'bench', 'readings', 'listen');
const file = readdirSync(dir).filter((f) => f.endsWith('.json')).sort()[0];
const reading = JSON.parse(readFileSync(path.join(dir, file), 'utf8'));
const ladder = ladderOf(`listen/${file}`, reading);
const points = ladder.systems.flatMap((s) => s.points);

let site;
let browser;
before(async () => {
  site = await startSite();
  browser = await launchChromium();
});
after(async () => {
  await browser?.close();
  await site?.close();
});

async function openDashboard({ width = 1280, height = 800, colorScheme = 'light' } = {}) {
  const context = await browser.newContext({ viewport: { width, height }, colorScheme, deviceScaleFactor: 1 });
  const page = await context.newPage();
  const errors = [];
  page.on('pageerror', (e) => errors.push(e.message));
  page.on('console', (m) => m.type() === 'error' && errors.push(m.text()));
  await page.goto(new URL('dashboard/', site.url).href);
  await page.waitForFunction(() => window.quireDashboard?.loaded === true, null, { timeout: 20000 });
  return { page, context, errors };
}

test('the checked-in loopback reading is a ladder: every system and rate, not a per-call case', () => {
  assert.equal(reading.target, LADDER_TARGET);
  assert.equal(checkReading(reading), null);
  assert.ok(ladder.systems.length >= 3, 'quire and at least one peer');
  assert.ok(ladder.systems.some((s) => s.peer), 'a peer in the same run');
  for (const s of ladder.systems) {
    assert.deepEqual(s.points.map((p) => p.rate), [...s.points.map((p) => p.rate)].sort((a, b) => a - b), `${s.system}: rates ascending`);
    assert.equal(s.maxHeld, Math.max(0, ...s.points.filter((p) => p.held).map((p) => p.rate)));
  }
  const model = buildModel([{ source: 'native', reading: { ...reading, target: 'native' } }, { source: 'listen', reading }]);
  assert.equal(model.ladders.length, 1);
  assert.equal(model.runs.length, 1, 'the loopback reading is no run of per-call cases');
  assert.equal(model.cases.length, reading.cases.length, 'only the native copy merged');
});

test('drawn: a p99 and a p50 line a system, a dot a point, held ones filled; the table lists every point', async () => {
  const { page, context, errors } = await openDashboard();
  assert.equal(await page.isVisible('#ladder-section'), true);
  const svg = page.locator('svg.ladder-chart');
  assert.equal(await svg.count(), 1);
  assert.match(await svg.getAttribute('aria-label'), /Capacity ladder of \d+ systems/);
  assert.deepEqual(await page.$$eval('svg.ladder-chart g.system', (g) => g.map((x) => x.dataset.system)), ladder.systems.map((s) => s.system));
  assert.equal(await page.$$eval('svg.ladder-chart polyline.p99-line', (l) => l.length), ladder.systems.length);
  assert.equal(await page.$$eval('svg.ladder-chart polyline.p50-line', (l) => l.length), ladder.systems.length);
  assert.equal(await page.$$eval('svg.ladder-chart circle.point', (c) => c.length), points.filter((p) => p.p99 > 0).length);
  assert.equal(await page.$$eval('svg.ladder-chart circle.point.held', (c) => c.length), points.filter((p) => p.held && p.p99 > 0).length);
  assert.equal(await page.$$eval('svg.ladder-chart line.bound', (l) => l.length), 1, 'the p99 bound');
  // Higher latency is drawn higher: within a system, the dot of a larger p99 has a smaller y.
  const dots = await page.$$eval('svg.ladder-chart g.system', (gs) => gs.map((g) => [...g.querySelectorAll('circle')].map((c) => Number(c.getAttribute('cy')))));
  ladder.systems.forEach((s, i) => {
    const ps = s.points.filter((p) => p.p99 > 0);
    for (let a = 0; a < ps.length; a++) for (let b = 0; b < ps.length; b++) if (ps[a].p99 > ps[b].p99 * 1.01) assert.ok(dots[i][a] < dots[i][b], `${s.system}: p99 ${ps[a].p99} above ${ps[b].p99}`);
  });
  const rows = await page.$$eval('.ladder-table tbody tr', (r) => r.map((x) => [x.dataset.ladder, x.lastElementChild.textContent]));
  assert.deepEqual(rows, points.map((p) => [p.name, p.held ? 'held' : 'no']));
  const legend = await page.textContent('#ladder-legend');
  for (const s of ladder.systems) assert.ok(legend.includes(`${s.system} — ${s.maxHeld ? `held up to ${s.maxHeld.toLocaleString('en-US')} msg/s` : 'no rate held'}`), legend);
  // The loopback cases are not in the table of per-call cases.
  assert.equal(await page.$$eval('#cases-table tbody tr[data-case^="listen.ladder/"]', (r) => r.length), 0);
  await page.locator('#ladder-section').screenshot({ path: screenshotPath('dashboard-ladder-1280-light') });
  assert.deepEqual(errors, []);
  await context.close();
});

test('dark and 390 px: the ladder follows the colour scheme and fits the screen', async () => {
  const colours = {};
  for (const colorScheme of ['light', 'dark']) {
    const { page, context } = await openDashboard({ colorScheme });
    colours[colorScheme] = await page.$eval('svg.ladder-chart polyline.p99-line', (l) => getComputedStyle(l).stroke);
    await page.locator('#ladder-section').screenshot({ path: screenshotPath(`dashboard-ladder-1280-${colorScheme}`) });
    await context.close();
    const narrow = await openDashboard({ width: 390, height: 844, colorScheme });
    assert.ok((await narrow.page.evaluate(() => document.documentElement.scrollWidth)) <= 390, 'nothing wider than the screen');
    assert.ok((await narrow.page.$eval('svg.ladder-chart', (s) => s.getBoundingClientRect().width)) <= 380);
    await narrow.page.locator('#ladder-section').screenshot({ path: screenshotPath(`dashboard-ladder-390-${colorScheme}`) });
    await narrow.context.close();
  }
  assert.notEqual(colours.light, colours.dark);
});

test('files opened without a loopback reading: no ladder', async () => {
  const { page, context } = await openDashboard();
  await page.setInputFiles('#files', path.join(repo, 'bench', 'readings', 'native.json'));
  await page.waitForFunction(() => document.documentElement.dataset.loaded === 'dropped');
  assert.equal(await page.isVisible('#ladder-section'), false);
  await page.setInputFiles('#files', path.join(dir, file));
  await page.waitForFunction(() => !document.getElementById('ladder-section').hidden);
  assert.equal(await page.$$eval('svg.ladder-chart g.system', (g) => g.length), ladder.systems.length);
  await context.close();
});
