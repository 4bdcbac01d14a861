// Shared by the site's tests: the site's own server on a free port (started as `make site` starts
// it, in a child process, so the tests see what a person sees) and Debian's Chromium driven by
// playwright-core, resolved from the npm package's devDependencies (js/node_modules; the site adds
// no dependency of its own and `npx playwright install` cannot work here).
import { spawn } from 'node:child_process';
import { before, after } from 'node:test';
import { createRequire } from 'node:module';
import { existsSync, mkdirSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

export const siteDir = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
export const repo = path.resolve(siteDir, '..');
export const screenshots = path.join(repo, 'build', 'site-screenshots');

/** Starts `node site/serve.mjs --port 0 ...args`; resolves to { url, port, close, output }. */
export async function startSite(args = []) {
  const child = spawn(process.execPath, [path.join(siteDir, 'serve.mjs'), '--port', '0', ...args], { stdio: ['ignore', 'pipe', 'pipe'] });
  // A test that dies before its after() must not leave a server behind.
  const orphan = () => child.kill();
  process.once('exit', orphan);
  let output = '';
  const url = await new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      child.kill();
      reject(new Error(`serve.mjs printed no URL in 10 s:\n${output}`));
    }, 10000);
    const take = (chunk) => {
      output += chunk;
      const m = /serving (http:\/\/127\.0\.0\.1:\d+\/)/.exec(output);
      if (m) {
        clearTimeout(timer);
        resolve(m[1]);
      }
    };
    child.stdout.on('data', take);
    child.stderr.on('data', take);
    child.once('exit', (code) => reject(new Error(`serve.mjs exited (${code}):\n${output}`)));
  });
  const close = () => new Promise((resolve) => {
    process.off('exit', orphan);
    if (child.exitCode !== null) return resolve();
    child.once('exit', resolve);
    child.kill();
  });
  return { url, port: Number(new URL(url).port), close, output: () => output };
}

export const CHROMIUM_ARGS = [
  '--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-component-update',
  '--no-first-run', '--disable-sync', '--disable-quic',
];

export async function launchChromium() {
  const require = createRequire(path.join(repo, 'js', 'package.json'));
  const mod = await import(pathToFileURL(require.resolve('playwright-core')).href);
  const chromium = mod.chromium ?? mod.default.chromium;
  return chromium.launch({ executablePath: process.env.QUIRE_CHROMIUM ?? '/usr/bin/chromium', args: CHROMIUM_ARGS, headless: true });
}

export function screenshotPath(name) {
  mkdirSync(screenshots, { recursive: true });
  return path.join(screenshots, `${name}.png`);
}

// --- the viewer (viewer_*.test.mjs, kinds_model.test.mjs) -------------------------------------------

/** The shared corpus, found as the npm package's tests find it; throws (naming where) when it is absent. */
export { corpusDir } from '../../js/test/helpers.mjs';
/** The npm package's build the site serves at /pkg/ (make js). */
export const dist = process.env.QUIRE_DIST ?? path.join(repo, 'js', 'dist');

/** The npm package as built into `dist`, initialised; throws when it is not built (a suite must not pass without it). */
export async function loadPackage() {
  const entry = path.join(dist, 'index.js');
  if (!existsSync(entry)) throw new Error(`the npm package is not built: expected ${entry} (make js, or set QUIRE_DIST)`);
  const pkg = await import(pathToFileURL(entry).href);
  await pkg.init();
  return pkg;
}

/**
 * Polls `fn(arg)` in the page until it is truthy (or throws after `timeout` ms). Playwright's own
 * waitForFunction compiles its polling function with `new Function` inside the page, which the
 * viewer's CSP (no 'unsafe-eval') refuses with a console error; page.evaluate is not subject to it.
 */
export async function waitInPage(page, fn, arg, timeout = 60000) {
  const end = Date.now() + timeout;
  for (;;) {
    const v = await page.evaluate(fn, arg);
    if (v) return v;
    if (Date.now() > end) throw new Error(`waitInPage: ${fn} still false after ${timeout} ms`);
    await new Promise((r) => setTimeout(r, 40));
  }
}

/** Every Content-Security-Policy violation any watched page reported (watchCsp): a test file ends by asserting it is empty. */
export const cspViolations = [];

/**
 * Records each `securitypolicyviolation` event of the context's pages (the viewer's CSP has no
 * 'unsafe-eval': the package's glue is linked with -sDYNAMIC_EXECUTION=0, and a `new Function`
 * or `eval` anywhere in the page would show up here). Listens before any of the page's scripts.
 */
export async function watchCsp(context) {
  await context.exposeBinding('__quireCspViolation', ({ page }, v) => cspViolations.push({ page: page?.url(), ...v }));
  await context.addInitScript(() => {
    document.addEventListener('securitypolicyviolation', (e) => {
      window.__quireCspViolation({ directive: e.effectiveDirective, blocked: e.blockedURI, source: e.sourceFile, line: e.lineNumber, sample: e.sample });
    });
  });
}

/**
 * Opens the viewer at `urlPath` (e.g. '' or '?url=/files/x.quire') in a new context; records
 * every request and page error into the arrays given. Resolves to { page, context }.
 */
export async function openViewer(browser, siteUrl, urlPath = '', { width = 1280, height = 800, colorScheme = 'light', requests = [], errors = [] } = {}) {
  const context = await browser.newContext({ viewport: { width, height }, colorScheme, deviceScaleFactor: 1, acceptDownloads: true });
  await watchCsp(context);
  const page = await context.newPage();
  page.on('request', (r) => requests.push(r.url()));
  page.on('pageerror', (e) => errors.push(`${urlPath}: ${e.message}`));
  page.on('console', (m) => {
    if (m.type() === 'error') errors.push(`${urlPath}: console: ${m.text()}`);
  });
  await page.goto(new URL(urlPath, siteUrl).href);
  await waitInPage(page, () => window.quireViewer !== undefined);
  return { page, context };
}

/** What the viewer shows after an open: the banner (text and code) and the open file. */
const viewerState = () => ({
  ok: window.quireViewer.lastOpenOk,
  banner: document.querySelector('#banner').hidden ? null : document.querySelector('#banner').textContent,
  code: document.querySelector('#banner').hidden ? null : document.querySelector('#banner').dataset.code ?? null,
  current: window.quireViewer.current,
});

/** Opens a file from disk through the page's one file input; resolves when it is open or has failed. */
export async function openFileInViewer(page, filePath) {
  const before = await page.evaluate(() => window.quireViewer.opens);
  await page.setInputFiles('#file', filePath);
  await waitInPage(page, (n) => window.quireViewer.opens > n, before, 120000);
  return page.evaluate(viewerState);
}

/**
 * Opens a Blob made in the page by `make` (a function run in the page, given `arg`): for files
 * too large to hand over, such as 2 GB of random bytes built from a repeated Blob.
 */
export async function openBlobInViewer(page, make, arg, name = 'file') {
  await page.evaluate(async ([source, a, n]) => {
    const blob = await (0, eval)(`(${source})`)(a);
    await window.quireViewer.open(window.quireViewer.blobSource(blob, n));
  }, [make.toString(), arg, name]);
  return page.evaluate(viewerState);
}

/** Opens a URL (`?url=` style, e.g. '/files/x.quire') in the running page. */
export async function openUrlInViewer(page, url) {
  await page.evaluate((u) => window.quireViewer.openUrl(u), url);
  return page.evaluate(viewerState);
}

/**
 * For a file of viewer tests in Chromium: registers before() and after() that start the site's
 * server (with `siteArgs()`'s arguments, read when it starts) and Chromium, and stop them. `viewer(options)` opens a page on
 * the viewer (at `at`, a URL relative to the site: '?url=/files/x.quire') in a new context (its
 * CSP watched) and resolves to { page, context, errors } (that page's errors, with its console's
 * errors when `consoleErrors`); every request that leaves the site goes into `foreign`, every
 * page's errors into `pageErrors`.
 */
export function viewerSuite({ siteArgs = () => [] } = {}) {
  let site;
  let browser;
  const foreign = [];
  const pageErrors = [];
  before(async () => {
    site = await startSite(siteArgs());
    browser = await launchChromium();
  });
  after(async () => {
    await browser?.close();
    await site?.close();
  });
  async function viewer({ width = 1280, height = 800, dark = false, at = '', consoleErrors = false } = {}) {
    const context = await browser.newContext({ viewport: { width, height }, colorScheme: dark ? 'dark' : 'light', acceptDownloads: true });
    await watchCsp(context);
    const page = await context.newPage();
    const errors = [];
    page.on('pageerror', (e) => {
      errors.push(String(e));
      pageErrors.push(String(e));
    });
    if (consoleErrors) {
      page.on('console', (m) => {
        if (m.type() === 'error') errors.push(`console: ${m.text()}`);
      });
    }
    page.on('request', (r) => {
      const u = r.url();
      if (!u.startsWith(site.url) && !u.startsWith('blob:') && !u.startsWith('data:')) foreign.push(u);
    });
    await page.goto(new URL(at, site.url).href);
    return { page, context, errors };
  }
  return {
    viewer,
    foreign,
    pageErrors,
    get site() {
      return site;
    },
    get browser() {
      return browser;
    },
  };
}
