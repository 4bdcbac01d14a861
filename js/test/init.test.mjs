// init() in Node without the fetch API (node --no-experimental-fetch): the package must not touch
// fetch or Response when it reads its own .wasm from disk.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { dist } from './helpers.mjs';

test('init() works in Node run with --no-experimental-fetch', () => {
  const entry = pathToFileURL(path.join(dist, 'index.js')).href;
  const script = `const q = await import(${JSON.stringify(entry)}); await q.init(); console.log(typeof Response, q.json.check(new TextEncoder().encode('[1]')) === null);`;
  const out = execFileSync(process.execPath, ['--no-experimental-fetch', '--input-type=module', '-e', script], { encoding: 'utf8' });
  assert.equal(out.trim(), 'undefined true');
});
