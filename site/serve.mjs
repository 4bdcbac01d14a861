#!/usr/bin/env node
// The site's static server (Node, no dependencies). Binds 127.0.0.1 only and serves four roots:
//   /          site/                 the viewer (later) and the dashboard at /dashboard/
//   /pkg/      js/dist/              the npm package's build (--pkg DIR or QUIRE_DIST)
//   /readings/ bench/readings/       reading files (--readings DIR), plus a generated index.json
//   /files/    --extra DIR           optional: files made elsewhere, e.g. the demo's .quire file
// Every response is cross-origin isolated (COOP same-origin + COEP require-corp, CORP same-origin)
// so that the viewer gets SharedArrayBuffer and 5 us timers. Files are streamed with single
// `Range: bytes=` requests (206, or 416 when unsatisfiable) so that `?url=` can read a large .quire
// file a piece at a time.
//   node site/serve.mjs [--port N] [--readings DIR] [--pkg DIR] [--extra DIR]   (PORT=N also works)
// Prints `serving http://127.0.0.1:PORT/` once listening (port 0 picks a free one; tests read it).
// Only requests whose Host is the server's own (127.0.0.1:PORT or localhost:PORT) are answered; any
// other gets 421: a page on another site could otherwise point its own name at 127.0.0.1 (DNS
// rebinding) and read, as same-origin, whatever the server serves, --extra's files included.
import { createServer } from 'node:http';
import { createReadStream } from 'node:fs';
import { readdir, readFile, realpath, stat } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const here = path.dirname(fileURLToPath(import.meta.url));
const repo = path.resolve(here, '..');

export const TYPES = {
  '.html': 'text/html; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.mjs': 'text/javascript; charset=utf-8',
  '.json': 'application/json; charset=utf-8',
  '.map': 'application/json; charset=utf-8',
  '.wasm': 'application/wasm',
  '.svg': 'image/svg+xml',
  '.png': 'image/png',
  '.ico': 'image/x-icon',
  '.txt': 'text/plain; charset=utf-8',
  '.md': 'text/plain; charset=utf-8',
  '.ndjson': 'application/x-ndjson',
  '.csv': 'text/csv; charset=utf-8',
  '.hl7': 'text/plain; charset=utf-8',
  '.d.mts': 'text/plain; charset=utf-8',
  '.ts': 'text/plain; charset=utf-8',
};

const ISOLATION = {
  'cross-origin-opener-policy': 'same-origin',
  'cross-origin-embedder-policy': 'require-corp',
  'cross-origin-resource-policy': 'same-origin',
  'x-content-type-options': 'nosniff',
  // Readings and builds change under a running server (make bench, make js): never serve stale ones.
  'cache-control': 'no-cache',
};

function typeOf(file) {
  const base = path.basename(file);
  for (const ext of ['.d.mts']) if (base.endsWith(ext)) return TYPES[ext];
  return TYPES[path.extname(base).toLowerCase()] ?? 'application/octet-stream';
}

/**
 * Parses one `Range` header against a file of `size` bytes. Returns null when the header is absent
 * or not a single byte range (the whole file is then served, as RFC 9110 allows), 'unsatisfiable'
 * for a range that starts past the end, or { start, end } (inclusive).
 */
export function parseRange(header, size) {
  if (!header) return null;
  const m = /^bytes=(\d*)-(\d*)$/.exec(header.trim());
  if (!m || (m[1] === '' && m[2] === '')) return null;
  if (m[1] === '') {
    const suffix = Number(m[2]);
    if (suffix === 0) return 'unsatisfiable';
    return { start: Math.max(0, size - suffix), end: size - 1 };
  }
  const start = Number(m[1]);
  const end = m[2] === '' ? size - 1 : Math.min(Number(m[2]), size - 1);
  if (m[2] !== '' && Number(m[2]) < start) return null; // invalid range: ignored, whole file
  if (start >= size) return 'unsatisfiable';
  return { start, end };
}

/**
 * Whether a request's Host header names this server: 127.0.0.1 or localhost (any case) with its
 * port; the port may be left out only when it is 80, as a browser leaves it out then.
 */
export function ownHost(header, port) {
  if (typeof header !== 'string') return false;
  const m = /^(127\.0\.0\.1|localhost)(?::(\d+))?$/i.exec(header.trim());
  if (!m) return false;
  return m[2] === undefined ? port === 80 : Number(m[2]) === port;
}

/** Lists the reading files under `dir` (recursively; `local/`, git-ignored local runs, skipped). */
async function readingIndex(dir) {
  const readings = [];
  async function walk(sub) {
    let entries;
    try {
      entries = await readdir(path.join(dir, sub), { withFileTypes: true });
    } catch {
      return;
    }
    // The run's own files first, then its sub-runs (format/...), each in name order.
    entries.sort((a, b) => a.isDirectory() - b.isDirectory() || a.name.localeCompare(b.name));
    for (const e of entries) {
      const rel = sub ? `${sub}/${e.name}` : e.name;
      if (e.isDirectory()) {
        if (e.name !== 'local' && e.name !== 'node_modules' && !e.name.startsWith('.')) await walk(rel);
      } else if (e.name.endsWith('.json')) {
        try {
          const r = JSON.parse(await readFile(path.join(dir, rel), 'utf8'));
          if (r?.schema !== 'quire-reading/1') continue;
          readings.push({ path: rel, run: sub, target: r.target, cases: Array.isArray(r.cases) ? r.cases.length : 0 });
        } catch {
          // not a reading (or not JSON): not listed
        }
      }
    }
  }
  await walk('');
  return { schema: 'quire-reading-index/1', readings };
}

/**
 * Resolves a URL path below `root` to a real file path, or null when it is outside the root (after
 * decoding, normalising and following symbolic links) or names nothing.
 */
async function resolveUnder(root, rest) {
  let decoded;
  try {
    decoded = decodeURIComponent(rest);
  } catch {
    return null;
  }
  if (decoded.includes('\0') || decoded.includes('\\')) return null;
  const parts = decoded.split('/');
  if (parts.some((p) => p === '..')) return null;
  const candidate = path.join(root, ...parts);
  let real;
  try {
    real = await realpath(candidate);
  } catch {
    return null;
  }
  const rel = path.relative(root, real);
  if (rel.startsWith('..') || path.isAbsolute(rel)) return null;
  return real;
}

/** Starts the server; resolves to { server, url, port, close }. */
export async function startServer({ port = 8080, readings, pkg, extra, site = here } = {}) {
  const roots = [];
  const addRoot = async (prefix, dir) => {
    if (!dir) return;
    let real;
    try {
      real = await realpath(dir);
    } catch {
      real = path.resolve(dir); // may appear later (e.g. js/dist before make js): 404 until then
    }
    roots.push({ prefix, dir: real });
  };
  // Longest prefix first: /pkg/ and /readings/ win over /.
  await addRoot('/files/', extra);
  await addRoot('/readings/', readings ?? path.join(repo, 'bench', 'readings'));
  await addRoot('/pkg/', pkg ?? process.env.QUIRE_DIST ?? path.join(repo, 'js', 'dist'));
  await addRoot('/', site);

  const send = (res, status, body, headers = {}) => {
    const text = typeof body === 'string' ? Buffer.from(body) : body;
    res.writeHead(status, { ...ISOLATION, 'content-type': 'text/plain; charset=utf-8', 'content-length': text.length, ...headers });
    res.end(res.req.method === 'HEAD' ? undefined : text);
  };

  const server = createServer(async (req, res) => {
    try {
      if (!ownHost(req.headers.host, server.address().port)) return send(res, 421, 'misdirected request: this server answers only 127.0.0.1 and localhost\n');
      if (req.method !== 'GET' && req.method !== 'HEAD') return send(res, 405, 'method not allowed\n', { allow: 'GET, HEAD' });
      const url = new URL(req.url, 'http://127.0.0.1');
      const root = roots.find((r) => url.pathname.startsWith(r.prefix));
      if (!root) return send(res, 404, 'not found\n');
      const rest = url.pathname.slice(root.prefix.length);
      if (root.prefix === '/readings/' && rest === 'index.json') {
        const body = JSON.stringify(await readingIndex(root.dir), null, 1);
        return send(res, 200, body, { 'content-type': TYPES['.json'] });
      }
      let file = await resolveUnder(root.dir, rest);
      if (!file) return send(res, 404, 'not found\n');
      let info = await stat(file);
      if (info.isDirectory()) {
        // /dashboard → /dashboard/ so that the page's relative URLs resolve inside it
        if (!url.pathname.endsWith('/')) return send(res, 301, 'moved\n', { location: `${url.pathname}/${url.search}` });
        file = path.join(file, 'index.html');
        try {
          info = await stat(file);
        } catch {
          return send(res, 404, 'not found\n');
        }
      }
      if (!info.isFile()) return send(res, 404, 'not found\n');
      const size = info.size;
      const headers = { ...ISOLATION, 'content-type': typeOf(file), 'accept-ranges': 'bytes' };
      const range = parseRange(req.headers.range, size);
      if (range === 'unsatisfiable') {
        return send(res, 416, 'range not satisfiable\n', { 'content-range': `bytes */${size}` });
      }
      let status = 200;
      let start = 0;
      let end = size - 1;
      if (range) {
        status = 206;
        ({ start, end } = range);
        headers['content-range'] = `bytes ${start}-${end}/${size}`;
      }
      headers['content-length'] = size === 0 ? 0 : end - start + 1;
      res.writeHead(status, headers);
      if (req.method === 'HEAD' || size === 0) return res.end();
      const stream = createReadStream(file, { start, end });
      stream.on('error', () => res.destroy());
      stream.pipe(res);
    } catch {
      if (!res.headersSent) send(res, 500, 'server error\n');
      else res.destroy();
    }
  });
  await new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, '127.0.0.1', resolve);
  });
  const actual = server.address().port;
  const url = `http://127.0.0.1:${actual}/`;
  return { server, url, port: actual, roots, close: () => new Promise((r) => server.close(r)) };
}

function parseArgs(argv) {
  const opts = { port: process.env.PORT ? Number(process.env.PORT) : 8080 };
  for (let i = 0; i < argv.length; ++i) {
    const a = argv[i];
    const value = () => {
      if (i + 1 >= argv.length) throw new Error(`${a} needs a value`);
      return argv[++i];
    };
    if (a === '--port') opts.port = Number(value());
    else if (a === '--readings') opts.readings = value();
    else if (a === '--pkg') opts.pkg = value();
    else if (a === '--extra') opts.extra = value();
    else if (a === '--help' || a === '-h') opts.help = true;
    else throw new Error(`unknown option ${a}`);
  }
  if (!Number.isInteger(opts.port) || opts.port < 0 || opts.port > 65535) throw new Error('--port must be 0..65535');
  return opts;
}

if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  let opts;
  try {
    opts = parseArgs(process.argv.slice(2));
  } catch (e) {
    console.error(`serve.mjs: ${e.message}\nusage: node site/serve.mjs [--port N] [--readings DIR] [--pkg DIR] [--extra DIR]`);
    process.exit(2);
  }
  if (opts.help) {
    console.log('usage: node site/serve.mjs [--port N] [--readings DIR] [--pkg DIR] [--extra DIR]   (PORT=N also works)');
    process.exit(0);
  }
  try {
    const { url, roots } = await startServer(opts);
    const shown = (dir) => {
      const rel = path.relative(process.cwd(), dir);
      return rel === '' ? '.' : rel.startsWith('..') ? dir : rel;
    };
    for (const r of roots) console.log(`  ${r.prefix.padEnd(11)} ${shown(r.dir)}`);
    if (opts.extra) {
      // The demo's generated files, as the viewer will open them (?url= of a file beside the site).
      let names = [];
      try {
        names = (await readdir(opts.extra)).filter((n) => n.endsWith('.quire')).sort();
      } catch {
        console.error(`serve.mjs: --extra ${opts.extra} cannot be read; /files/ serves nothing`);
      }
      for (const n of names) console.log(`  ${url}?url=/files/${encodeURIComponent(n)}`);
    }
    console.log(`serving ${url} (dashboard: ${url}dashboard/) — Ctrl-C stops`);
  } catch (e) {
    console.error(`serve.mjs: cannot listen on 127.0.0.1:${opts.port}: ${e.code ?? e.message}`);
    process.exit(1);
  }
}
