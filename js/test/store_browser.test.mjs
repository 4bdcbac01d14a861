// Sealed, growing .quire files in headless Chromium: a page seals a partitioned file with keys
// from crypto.getRandomValues, changes it through format.store in memory, and gives the rows Node
// gives for the same steps; a file the CLI sealed (served beside the page with its key files)
// opens there with the CLI's keys and gives `quire query`'s rows; missing and wrong keys are the
// same QuireError codes.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { cpSync, existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { execFileSync } from 'node:child_process';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { dist, loadQuire, repo } from './helpers.mjs';
import { serve, launchChromium } from './browser.mjs';

const work = mkdtempSync(path.join(tmpdir(), 'quire-store-browser-'));
test.after(() => rmSync(work, { recursive: true, force: true }));
const cli = process.env.QUIRE_CLI ?? path.join(repo, 'build', 'native', 'native', 'quire');

// The steps, run in the page and in Node: their answers must match.
const SHARED = `
export function rows(from, to, clinic) {
  const out = [];
  for (let i = from; i < to; i++) out.push({ id: i, clinic: clinic ?? ['north', 'south', 'east'][i % 3], name: 'Mensah-' + i });
  return out;
}
function codeOf(fn) {
  try { fn(); return null; } catch (e) { return e.code ?? String(e); }
}
export function steps(format) {
  const owner = format.keygen();
  const keys = new Map();
  const bytes = format.write(rows(0, 90), { store: true, partitionBy: 'clinic', ownerKey: owner, onNewKey: (v, k) => keys.set(v, k) });
  const s = format.store(bytes, { ownerKey: owner, partitionKeys: keys, onNewKey: (v, k) => keys.set(v, k) });
  const appended = s.append(rows(90, 100, 'west'));
  s.delete('id < 9');
  s.update({ id: 30 }, 'name', 'Renamed');
  const changed = s.bytes();
  s.compact();
  const compacted = s.bytes();
  s.close();
  const read = (b, key) => { const f = format.open(b, { key }); try { return { text: f.queryText({ orderBy: 'id' }, { ndjson: true }), info: f.info }; } finally { f.close(); } };
  const north = read(compacted, keys.get('north'));
  return {
    keyLength: owner.length,
    newKeys: [...appended.newKeys.keys()],
    owner: read(changed, owner).text,
    north: north.text,
    northInfo: { partitionKey: north.info.partitionKey, partitionsRead: north.info.partitionsRead, partitions: north.info.partitions },
    west: read(compacted, keys.get('west')).text,
    missing: codeOf(() => format.open(compacted)),
    wrong: codeOf(() => format.open(compacted, { key: format.keygen() })),
    shrank: compacted.length < changed.length,
  };
}
`;

test('store in Chromium: the same steps give the rows Node gives; a CLI-sealed file opens with its keys', async (t) => {
  cpSync(dist, path.join(work, 'dist'), { recursive: true });
  writeFileSync(path.join(work, 'shared.js'), SHARED);
  const haveCli = existsSync(cli);
  let native = null;
  if (haveCli) {
    const run = (...args) => execFileSync(cli, args, { cwd: work, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });
    let text = '';
    for (let i = 0; i < 120; i++) text += JSON.stringify({ id: i, clinic: ['north', 'south'][i % 2], balance: `${i}.25` }) + '\n';
    writeFileSync(path.join(work, 'in.ndjson'), text);
    run('keygen', 'owner.key');
    run('convert', 'in.ndjson', 'cli.quire', '--partition-by', 'clinic', '--owner-key', 'owner.key', '--keys-dir', 'keys', '--quiet');
    native = { owner: run('query', 'cli.quire', '--key', 'owner.key'), south: run('query', 'cli.quire', '--key', 'keys/south.key') };
  } else {
    t.diagnostic(`${cli} is absent: the CLI half is skipped (make native builds it)`);
  }
  writeFileSync(
    path.join(work, 'index.html'),
    `<!doctype html><html><head></head><body><script type="module">
      import { init, format } from './dist/index.js';
      import { steps } from './shared.js';
      try {
        await init();
        const out = { steps: steps(format) };
        if (${haveCli}) {
          const get = async (p) => new Uint8Array(await (await fetch(p)).arrayBuffer());
          const bytes = await get('./cli.quire');
          const open = (key) => { const f = format.open(bytes, { key }); try { return f.queryText({}, { ndjson: true }); } finally { f.close(); } };
          out.cli = { owner: open(await get('./owner.key')), south: open(await get('./keys/south.key')) };
        }
        window.result = out;
      } catch (e) { window.result = { error: String(e && e.stack || e) }; }
    </script></body></html>`,
  );

  const quire = await loadQuire();
  const shared = await import(pathToFileURL(path.join(work, 'shared.js')).href);
  const expected = shared.steps(quire.format);

  const server = await serve(work);
  const browser = await launchChromium();
  try {
    const page = await browser.newPage();
    const errors = [];
    page.on('pageerror', (e) => errors.push(String(e)));
    await page.goto(`${server.url}/index.html`);
    await page.waitForFunction(() => window.result !== undefined, null, { timeout: 60000 });
    const result = await page.evaluate(() => window.result);
    assert.deepEqual(errors, []);
    assert.equal(result.error, undefined, result.error);
    assert.deepEqual(result.steps, expected);
    assert.equal(expected.keyLength, 32);
    assert.deepEqual(expected.newKeys, ['west']);
    assert.equal(expected.missing, 'KEY_REQUIRED');
    assert.equal(expected.wrong, 'WRONG_KEY');
    assert.equal(expected.shrank, true);
    assert.deepEqual(expected.northInfo, { partitionKey: true, partitionsRead: 1, partitions: 4 });
    assert.ok(expected.north.split('\n').filter(Boolean).every((l) => JSON.parse(l).clinic === 'north'));
    assert.match(expected.owner, /"name":"Renamed"/);
    if (native) {
      assert.equal(result.cli.owner, native.owner);
      assert.equal(result.cli.south, native.south);
      assert.equal(native.south.split('\n').filter(Boolean).length, 60);
    }
  } finally {
    await browser.close();
    await server.close();
  }
});
