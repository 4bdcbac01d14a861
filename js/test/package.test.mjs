// The packed tarball: `npm pack`, installed into an empty folder, imported by name in Node and in
// headless Chromium (a page and a module Worker), and called.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { cpSync, mkdirSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { dist, repo } from './helpers.mjs';
import { serve, launchChromium } from './browser.mjs';

const work = mkdtempSync(path.join(tmpdir(), 'quire-pack-'));
const app = path.join(work, 'app');

test.after(() => rmSync(work, { recursive: true, force: true }));

test('npm pack makes a tarball that installs into an empty folder', () => {
  // Stage the package from the build being tested (QUIRE_DIST may point outside js/).
  const stage = path.join(work, 'stage');
  cpSync(path.join(repo, 'js', 'package.json'), path.join(stage, 'package.json'));
  cpSync(dist, path.join(stage, 'dist'), { recursive: true });
  execFileSync('npm', ['pack', '--pack-destination', work, '--loglevel=error'], { cwd: stage, encoding: 'utf8' });
  const tarball = readdirSync(work).find((f) => f.endsWith('.tgz'));
  assert.ok(tarball, 'npm pack wrote no tarball');
  const listing = execFileSync('tar', ['-tzf', path.join(work, tarball)], { encoding: 'utf8' });
  for (const f of ['package/dist/index.js', 'package/dist/index.d.ts', 'package/dist/quire.wasm', 'package/dist/quire.mjs']) {
    assert.ok(listing.includes(f), `${f} missing from the tarball`);
  }
  cpSync(path.join(work, tarball), path.join(work, 'quire.tgz'));
  mkdirSync(app);
  writeFileSync(path.join(app, 'package.json'), JSON.stringify({ name: 'app', private: true, type: 'module' }));
  execFileSync('npm', ['install', '--no-audit', '--no-fund', '--offline', '--loglevel=error', path.join(work, 'quire.tgz')], { cwd: app });
});

test('the installed package imports by name in Node and works', () => {
  writeFileSync(
    path.join(app, 'check.mjs'),
    `import { init, json, version, QuireError } from 'quire-health';
     await init();
     const e = json.check('[1, 2,]');
     console.log(JSON.stringify({ target: version().target, numbers: json.stats('[1, 2.50]').numbers, code: e.code, isQuireError: e instanceof QuireError }));`,
  );
  const out = JSON.parse(execFileSync(process.execPath, ['check.mjs'], { cwd: app, encoding: 'utf8' }));
  assert.deepEqual(out, { target: 'wasm', numbers: 2, code: 'INVALID_JSON', isQuireError: true });
});

test('the installed package works in headless Chromium, in a page and in a Worker', async () => {
  const importMap = `<script type="importmap">{"imports":{"quire-health":"./node_modules/quire-health/dist/index.js"}}</script>`;
  writeFileSync(
    path.join(app, 'index.html'),
    `<!doctype html><html><head>${importMap}</head><body><script type="module">
      import { init, json, version } from 'quire-health';
      try {
        await init();
        const doc = json.parse('{"v": 0.700}');
        const page = { target: version().target, text: doc.text('/v'), code: json.check('{').code };
        doc.close();
        const worker = new Worker('./worker.js', { type: 'module' });
        const fromWorker = await new Promise((resolve) => { worker.onmessage = (m) => resolve(m.data); worker.onerror = (e) => resolve({ error: e.message }); });
        window.result = { page, worker: fromWorker };
      } catch (e) { window.result = { error: String(e && e.stack || e) }; }
    </script></body></html>`,
  );
  writeFileSync(
    path.join(app, 'worker.js'),
    `import { init, json } from './node_modules/quire-health/dist/index.js';
     await init();
     postMessage({ numbers: json.stats('[1,2,3]').numbers });`,
  );
  const server = await serve(app);
  const browser = await launchChromium();
  try {
    const page = await browser.newPage();
    const errors = [];
    page.on('pageerror', (e) => errors.push(String(e)));
    await page.goto(`${server.url}/index.html`);
    await page.waitForFunction(() => window.result !== undefined, null, { timeout: 30000 });
    const result = await page.evaluate(() => window.result);
    assert.deepEqual(errors, []);
    assert.deepEqual(result, { page: { target: 'wasm', text: '0.700', code: 'INVALID_JSON' }, worker: { numbers: 3 } });
  } finally {
    await browser.close();
    await server.close();
  }
});
