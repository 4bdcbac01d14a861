#!/usr/bin/env node
// How large the site is, gzipped (level 9, each file on its own, as a server would send it):
// the site's own files (site/, without its tests and tools), the dashboard's JavaScript alone, and
// the npm package's browser files from js/dist/ when they are built (`make js`).
//   node site/size.mjs [--pkg DIR]
import { readdirSync, readFileSync, statSync, existsSync } from 'node:fs';
import { gzipSync } from 'node:zlib';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const site = path.dirname(fileURLToPath(import.meta.url));
const args = process.argv.slice(2);
const pkg = args[0] === '--pkg' && args[1] ? path.resolve(args[1]) : path.join(site, '..', 'js', 'dist');

// What a browser loads: the pages and what they link; not the server, tests or this script.
const SERVED = /\.(html|css|mjs|js|svg)$/;
const NOT_SERVED = new Set(['serve.mjs', 'size.mjs']);

function files(dir, base = dir) {
  const out = [];
  for (const e of readdirSync(dir, { withFileTypes: true })) {
    const full = path.join(dir, e.name);
    if (e.isDirectory()) {
      if (e.name !== 'test' && e.name !== 'node_modules') out.push(...files(full, base));
    } else if (SERVED.test(e.name) && !NOT_SERVED.has(path.relative(base, full))) {
      out.push(full);
    }
  }
  return out;
}

const measure = (list) => list.reduce((t, f) => {
  const bytes = readFileSync(f);
  return { raw: t.raw + bytes.length, gzip: t.gzip + gzipSync(bytes, { level: 9 }).length, files: t.files + 1 };
}, { raw: 0, gzip: 0, files: 0 });

const kib = (b) => `${(b / 1024).toFixed(1)} KiB`;
const row = (label, m) => console.log(`${label.padEnd(44)} ${String(m.files).padStart(3)} files ${kib(m.raw).padStart(12)} ${kib(m.gzip).padStart(12)} gzipped`);

const own = files(site);
row('site (every page, style and module)', measure(own));
row('dashboard JavaScript (dashboard/*.mjs)', measure(own.filter((f) => f.startsWith(path.join(site, 'dashboard')) && f.endsWith('.mjs'))));
row('dashboard page (html, css, mjs)', measure(own.filter((f) => f.startsWith(path.join(site, 'dashboard')) || f.endsWith('style.css'))));
const viewer = own.filter((f) => f.startsWith(path.join(site, 'viewer')));
row('viewer JavaScript (viewer/**/*.mjs)', measure(viewer.filter((f) => f.endsWith('.mjs'))));
const viewerPage = [...viewer, path.join(site, 'index.html'), path.join(site, 'style.css')];
row('viewer page (index.html, css, mjs)', measure(viewerPage));
const browserPkg = ['quire.wasm', 'quire.mjs'].map((f) => path.join(pkg, f));
if (browserPkg.every((f) => existsSync(f))) {
  const js = readdirSync(pkg).filter((f) => f.endsWith('.js')).map((f) => path.join(pkg, f));
  row(`package: quire.wasm (${path.relative(process.cwd(), pkg) || '.'})`, measure([browserPkg[0]]));
  row('package: quire.mjs glue + wrapper *.js', measure([browserPkg[1], ...js]));
  row('site + package (with the wasm)', measure([...own, ...browserPkg, ...js]));
  row('viewer page + package (with the wasm)', measure([...viewerPage, ...browserPkg, ...js]));
  const built = statSync(browserPkg[0]).mtime.toISOString();
  console.log(`(the wasm: ${browserPkg[0]}, built ${built})`);
} else {
  console.log(`(no package build at ${pkg}: run make js to add the wasm's size)`);
}
