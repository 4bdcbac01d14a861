// The site's server as a browser and a `?url=` reader use it: ranges, HEAD, MIME types,
// cross-origin isolation, its roots, and nothing outside them; bound to 127.0.0.1 only, answering only its own Host.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { request } from 'node:http';
import { connect } from 'node:net';
import { networkInterfaces } from 'node:os';
import { mkdtempSync, mkdirSync, readdirSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { repo, startSite } from './helpers.mjs';
import { ownHost, parseRange } from '../serve.mjs';

let site;
let extra;
let pkg;
const blob = Buffer.alloc(300000);
for (let i = 0; i < blob.length; ++i) blob[i] = (i * 7 + (i >> 8)) & 0xff;

/** A raw request: the path goes out exactly as written (fetch would normalise `..` away). */
function raw(method, urlPath, headers = {}, port = site.port, host = '127.0.0.1') {
  return new Promise((resolve, reject) => {
    const req = request({ host, port, method, path: urlPath, headers }, (res) => {
      const chunks = [];
      res.on('data', (c) => chunks.push(c));
      res.on('end', () => resolve({ status: res.statusCode, headers: res.headers, body: Buffer.concat(chunks) }));
    });
    req.on('error', reject);
    req.end();
  });
}

before(async () => {
  extra = mkdtempSync(path.join(tmpdir(), 'quire-site-extra-'));
  pkg = mkdtempSync(path.join(tmpdir(), 'quire-site-pkg-'));
  writeFileSync(path.join(extra, 'customers.quire'), blob);
  writeFileSync(path.join(extra, 'empty.quire'), '');
  mkdirSync(path.join(extra, 'sub'));
  writeFileSync(path.join(extra, 'sub', 'a b.txt'), 'spaced\n');
  // A link that leads out of the root must not be followed out of it.
  symlinkSync(path.join(repo, 'Makefile'), path.join(extra, 'escape.txt'));
  writeFileSync(path.join(pkg, 'quire.wasm'), Buffer.from([0, 0x61, 0x73, 0x6d, 1, 0, 0, 0]));
  writeFileSync(path.join(pkg, 'quire.mjs'), 'export default 1;\n');
  writeFileSync(path.join(pkg, 'index.js'), 'export const x = 1;\n');
  site = await startSite(['--extra', extra, '--pkg', pkg]);
});

after(async () => {
  await site?.close();
  rmSync(extra, { recursive: true, force: true });
  rmSync(pkg, { recursive: true, force: true });
});

test('parseRange reads single byte ranges and rejects what it cannot satisfy', () => {
  assert.deepEqual(parseRange('bytes=0-9', 100), { start: 0, end: 9 });
  assert.deepEqual(parseRange('bytes=90-', 100), { start: 90, end: 99 });
  assert.deepEqual(parseRange('bytes=-10', 100), { start: 90, end: 99 });
  assert.deepEqual(parseRange('bytes=-500', 100), { start: 0, end: 99 });
  assert.deepEqual(parseRange('bytes=50-5000', 100), { start: 50, end: 99 });
  assert.equal(parseRange('bytes=100-', 100), 'unsatisfiable');
  assert.equal(parseRange('bytes=-0', 100), 'unsatisfiable');
  assert.equal(parseRange('bytes=0-0', 0), 'unsatisfiable');
  assert.equal(parseRange(undefined, 100), null);
  assert.equal(parseRange('bytes=0-1,5-6', 100), null, 'several ranges: the whole file, as RFC 9110 allows');
  assert.equal(parseRange('items=0-1', 100), null);
  assert.equal(parseRange('bytes=9-3', 100), null);
});

test('the landing page and the dashboard are served cross-origin isolated', async () => {
  for (const p of ['/', '/dashboard/', '/style.css', '/dashboard/main.mjs', '/readings/native.json']) {
    const res = await raw('GET', p);
    assert.equal(res.status, 200, p);
    assert.equal(res.headers['cross-origin-opener-policy'], 'same-origin', p);
    assert.equal(res.headers['cross-origin-embedder-policy'], 'require-corp', p);
    assert.equal(res.headers['cross-origin-resource-policy'], 'same-origin', p);
  }
  const home = await raw('GET', '/');
  assert.match(home.headers['content-type'], /^text\/html/);
  assert.match(home.body.toString(), /href="dashboard\/"/);
  const moved = await raw('GET', '/dashboard');
  assert.equal(moved.status, 301);
  assert.equal(moved.headers.location, '/dashboard/');
});

test('MIME types: wasm, modules, scripts, styles, JSON', async () => {
  const cases = [
    ['/pkg/quire.wasm', 'application/wasm'],
    ['/pkg/quire.mjs', 'text/javascript; charset=utf-8'],
    ['/pkg/index.js', 'text/javascript; charset=utf-8'],
    ['/dashboard/main.mjs', 'text/javascript; charset=utf-8'],
    ['/style.css', 'text/css; charset=utf-8'],
    ['/readings/native.json', 'application/json; charset=utf-8'],
    ['/files/customers.quire', 'application/octet-stream'],
  ];
  for (const [p, type] of cases) {
    const res = await raw('GET', p);
    assert.equal(res.status, 200, p);
    assert.equal(res.headers['content-type'], type, p);
    assert.equal(res.headers['x-content-type-options'], 'nosniff', p);
  }
  const wasm = await raw('GET', '/pkg/quire.wasm');
  assert.deepEqual([...wasm.body.subarray(0, 4)], [0, 0x61, 0x73, 0x6d]);
});

test('Range requests: 206 with Content-Range and exactly those bytes', async () => {
  const whole = await raw('GET', '/files/customers.quire');
  assert.equal(whole.status, 200);
  assert.equal(whole.headers['accept-ranges'], 'bytes');
  assert.equal(Number(whole.headers['content-length']), blob.length);
  assert.ok(whole.body.equals(blob));
  const spans = [
    ['bytes=0-0', 0, 0],
    ['bytes=1000-1999', 1000, 1999],
    ['bytes=123457-', 123457, blob.length - 1],
    ['bytes=-4096', blob.length - 4096, blob.length - 1],
    ['bytes=299990-400000', 299990, blob.length - 1],
  ];
  for (const [range, start, end] of spans) {
    const res = await raw('GET', '/files/customers.quire', { range });
    assert.equal(res.status, 206, range);
    assert.equal(res.headers['content-range'], `bytes ${start}-${end}/${blob.length}`, range);
    assert.equal(Number(res.headers['content-length']), end - start + 1, range);
    assert.ok(res.body.equals(blob.subarray(start, end + 1)), range);
    assert.equal(res.headers['cross-origin-embedder-policy'], 'require-corp');
  }
});

test('Range requests past the end: 416 with the size', async () => {
  for (const range of [`bytes=${blob.length}-`, `bytes=${blob.length + 10}-${blob.length + 20}`, 'bytes=-0']) {
    const res = await raw('GET', '/files/customers.quire', { range });
    assert.equal(res.status, 416, range);
    assert.equal(res.headers['content-range'], `bytes */${blob.length}`, range);
  }
  const empty = await raw('GET', '/files/empty.quire', { range: 'bytes=0-10' });
  assert.equal(empty.status, 416);
  const emptyWhole = await raw('GET', '/files/empty.quire');
  assert.equal(emptyWhole.status, 200);
  assert.equal(emptyWhole.body.length, 0);
});

test('HEAD: the headers of GET, no body', async () => {
  const res = await raw('HEAD', '/files/customers.quire');
  assert.equal(res.status, 200);
  assert.equal(Number(res.headers['content-length']), blob.length);
  assert.equal(res.body.length, 0);
  assert.equal(res.headers['cross-origin-opener-policy'], 'same-origin');
  const part = await raw('HEAD', '/files/customers.quire', { range: 'bytes=10-19' });
  assert.equal(part.status, 206);
  assert.equal(part.headers['content-range'], `bytes 10-19/${blob.length}`);
  assert.equal(part.body.length, 0);
  const missing = await raw('HEAD', '/files/nothing.quire');
  assert.equal(missing.status, 404);
  assert.equal(missing.body.length, 0);
  assert.equal((await raw('POST', '/')).status, 405);
});

test('nothing outside the roots: traversal, encoded traversal and links out are 404', async () => {
  const attempts = [
    '/../Makefile',
    '/../../etc/passwd',
    '/%2e%2e/Makefile',
    '/%2E%2E%2FMakefile',
    '/dashboard/../../Makefile',
    '/files/../Makefile',
    '/files/..%2f..%2fMakefile',
    '/files/%2e%2e/%2e%2e/etc/passwd',
    '/readings/..%2f..%2fMakefile',
    '/readings/%2e%2e%2fREADME.md',
    '/readings/%2e%2e/%2e%2e/Makefile',
    '/pkg/..%2f..%2fMakefile',
    '/files/escape.txt',
    '/..%5c..%5cMakefile',
    '/files/%00',
    '/%ff',
    '//etc/passwd',
  ];
  for (const p of attempts) {
    const res = await raw('GET', p);
    assert.equal(res.status, 404, p);
    assert.doesNotMatch(res.body.toString(), /JOBS \?=|root:/, p);
  }
  const spaced = await raw('GET', '/files/sub/a%20b.txt');
  assert.equal(spaced.status, 200);
  assert.equal(spaced.body.toString(), 'spaced\n');
});

test('the readings index lists the checked-in reading files with their targets', async () => {
  const res = await raw('GET', '/readings/index.json');
  assert.equal(res.status, 200);
  const index = JSON.parse(res.body.toString());
  const dir = path.join(repo, 'bench', 'readings');
  const expected = [];
  for (const sub of ['', ...readdirSync(dir, { withFileTypes: true }).filter((e) => e.isDirectory() && e.name !== 'local').map((e) => e.name)]) {
    for (const f of readdirSync(path.join(dir, sub)).filter((n) => n.endsWith('.json')).sort()) {
      const reading = JSON.parse(readFileSync(path.join(dir, sub, f), 'utf8'));
      if (reading.schema === 'quire-reading/1') expected.push({ path: sub ? `${sub}/${f}` : f, run: sub, target: reading.target, cases: reading.cases.length });
    }
  }
  assert.ok(expected.length >= 3, 'bench/readings/ holds the checked-in readings');
  assert.deepEqual(index.readings, expected);
  for (const entry of index.readings) assert.equal((await raw('HEAD', `/readings/${entry.path}`)).status, 200, entry.path);
});

test('only its own Host is answered: any other gets 421 (no DNS rebinding onto its files)', async () => {
  const paths = ['/', '/dashboard/', '/pkg/quire.wasm', '/readings/native.json', '/readings/index.json', '/files/customers.quire'];
  const own = [`127.0.0.1:${site.port}`, `localhost:${site.port}`, `LocalHost:${site.port}`];
  const foreign = [`evil.example:${site.port}`, 'evil.example', `127.0.0.1:${site.port + 1}`, '127.0.0.1', `localhost.evil.example:${site.port}`, `[::1]:${site.port}`, `127.0.0.2:${site.port}`];
  for (const p of paths) {
    for (const host of own) assert.equal((await raw('GET', p, { host })).status, 200, `${host} ${p}`);
    for (const host of foreign) {
      const res = await raw('GET', p, { host });
      assert.equal(res.status, 421, `${host} ${p}`);
      assert.match(res.body.toString(), /^misdirected request/, p);
      assert.ok(res.body.length < 200, 'a short body');
    }
  }
  const head = await raw('HEAD', '/files/customers.quire', { host: `evil.example:${site.port}` });
  assert.equal(head.status, 421);
  assert.equal(head.body.length, 0);
  // A request with no Host header at all (HTTP/1.0 style) names no server either.
  const bare = await new Promise((resolve, reject) => {
    const socket = connect({ host: '127.0.0.1', port: site.port }, () => socket.write('GET /files/customers.quire HTTP/1.0\r\n\r\n'));
    let text = '';
    socket.on('data', (c) => { text += c.toString('latin1'); });
    socket.on('end', () => resolve(text));
    socket.on('error', reject);
  });
  assert.match(bare, /^HTTP\/1\.[01] 421 /);
  assert.equal(ownHost(`127.0.0.1:80`, 80), true);
  assert.equal(ownHost('127.0.0.1', 80), true, 'a browser leaves out port 80');
  assert.equal(ownHost('127.0.0.1', 8080), false);
  assert.equal(ownHost(undefined, 8080), false);
});

test('bound to 127.0.0.1 only', async () => {
  const refused = (host) => new Promise((resolve) => {
    const socket = connect({ host, port: site.port });
    socket.once('connect', () => { socket.destroy(); resolve(false); });
    socket.once('error', () => resolve(true));
  });
  assert.equal(await refused('127.0.0.1'), false, 'reachable on 127.0.0.1');
  // Any other address of this machine, loopback ones included, must refuse the connection.
  assert.equal(await refused('127.0.0.2'), true, '127.0.0.2 must not reach it');
  for (const addrs of Object.values(networkInterfaces())) {
    for (const a of addrs ?? []) {
      if (a.address === '127.0.0.1' || a.family !== 'IPv4' && a.scopeid) continue;
      assert.equal(await refused(a.address), true, `${a.address} must not reach it`);
    }
  }
  assert.match(site.output(), /serving http:\/\/127\.0\.0\.1:\d+\//);
});

test('the .quire files of --extra are printed as viewer URLs', () => {
  assert.ok(site.output().includes(`${site.url}?url=/files/customers.quire`), site.output());
  assert.ok(site.output().includes(`${site.url}?url=/files/empty.quire`));
  assert.ok(!site.output().includes('a%20b.txt'), 'only .quire files');
});

test('PORT in the environment picks the port; a taken port is a clear error', async () => {
  const { spawnSync } = await import('node:child_process');
  const res = spawnSync(process.execPath, [path.join(repo, 'site', 'serve.mjs')], { env: { ...process.env, PORT: String(site.port) }, encoding: 'utf8', timeout: 10000 });
  assert.equal(res.status, 1);
  assert.match(res.stderr, new RegExp(`cannot listen on 127\\.0\\.0\\.1:${site.port}: EADDRINUSE`));
  const bad = spawnSync(process.execPath, [path.join(repo, 'site', 'serve.mjs'), '--port', 'x'], { encoding: 'utf8', timeout: 10000 });
  assert.equal(bad.status, 2);
});
