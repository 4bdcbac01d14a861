// Shared by the browser tests: a static server on localhost and Debian's Chromium, driven by
// playwright-core (its own browser download cannot work here: executablePath points at Debian's).
import { createServer } from 'node:http';
import { readFile, stat } from 'node:fs/promises';
import path from 'node:path';

const TYPES = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.mjs': 'text/javascript; charset=utf-8',
  '.wasm': 'application/wasm',
  '.json': 'application/json',
};

/** Serves `root` on 127.0.0.1 (a free port); resolves to { url, close }. */
export async function serve(root) {
  const server = createServer(async (req, res) => {
    try {
      const url = new URL(req.url, 'http://localhost');
      const file = path.join(root, decodeURIComponent(url.pathname));
      if (!file.startsWith(path.resolve(root))) throw new Error('outside root');
      const target = (await stat(file)).isDirectory() ? path.join(file, 'index.html') : file;
      const body = await readFile(target);
      // Cross-origin isolation: performance.now() then has 5 us resolution instead of 100 us.
      res.writeHead(200, {
        'content-type': TYPES[path.extname(target)] ?? 'application/octet-stream',
        'cross-origin-opener-policy': 'same-origin',
        'cross-origin-embedder-policy': 'require-corp',
      });
      res.end(body);
    } catch {
      res.writeHead(404);
      res.end('not found');
    }
  });
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address();
  return { url: `http://127.0.0.1:${port}`, close: () => new Promise((r) => server.close(r)) };
}

export const CHROMIUM_ARGS = [
  '--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-component-update',
  '--no-first-run', '--disable-sync', '--disable-quic',
];

/** Headless Chromium (Debian's /usr/bin/chromium, or QUIRE_CHROMIUM). */
export async function launchChromium() {
  const { chromium } = await import('playwright-core');
  return chromium.launch({ executablePath: process.env.QUIRE_CHROMIUM ?? '/usr/bin/chromium', args: CHROMIUM_ARGS, headless: true });
}
