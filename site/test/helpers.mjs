// Shared by the site's tests: the site's own server on a free port (started as `make site` starts
// it, in a child process, so the tests see what a person sees) and Debian's Chromium driven by
// playwright-core, resolved from the npm package's devDependencies (js/node_modules; the site adds
// no dependency of its own and `npx playwright install` cannot work here).
import { spawn } from 'node:child_process';
import { createRequire } from 'node:module';
import { mkdirSync } from 'node:fs';
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
