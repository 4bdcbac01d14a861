// Views and FHIRPath in headless Chromium: a page runs a view over a Bundle, streams it over a
// Blob's NDJSON, writes it to .quire bytes and CSV, evaluates FHIRPath and gets a view's error,
// with the same answers (rows, exact text, table bytes, codes) as Node gives for the same calls.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { cpSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { dist, loadQuire } from './helpers.mjs';
import { serve, launchChromium } from './browser.mjs';

const work = mkdtempSync(path.join(tmpdir(), 'quire-view-browser-'));
test.after(() => rmSync(work, { recursive: true, force: true }));

// Shared by Node and the browser: the data and the calls whose answers must match.
const SHARED = `
export const VIEW = {
  resource: 'Observation',
  select: [{ column: [{ name: 'id', path: 'id' }, { name: 'value', path: 'value.ofType(Quantity).value' }, { name: 'codes', path: 'code.coding.code', collection: true }] }],
};
export function makeNdjson(n) {
  const lines = [];
  for (let i = 0; i < n; i++) {
    lines.push('{"resourceType":"Observation","id":"o' + i + '","status":"final","code":{"coding":[{"code":"c' + (i % 7) + '"},{"code":"x"}]},"valueQuantity":{"value":' + (i % 50) + '.' + String(i % 1000).padStart(3, '0') + '}}');
  }
  return lines.join('\\n') + '\\n';
}
export async function calls(quire, blob) {
  const text = makeNdjson(500);
  const bundle = { resourceType: 'Bundle', type: 'collection', entry: text.trim().split('\\n').slice(0, 20).map((l) => ({ resource: JSON.parse(l) })) };
  const streamed = [];
  for await (const row of quire.view.stream(VIEW, blob)) streamed.push(row);
  let error = null;
  try { quire.view.compile({ resource: 'Patient', select: [{ column: [{ name: '1bad', path: 'id' }] }] }); } catch (e) { error = { isQuireError: e instanceof quire.QuireError, code: e.code, path: e.path, message: e.message }; }
  const table = await quire.view.toQuire(VIEW, blob, { indexes: { id: 'hash' }, chunkRows: 64 });
  const file = quire.format.open(table);
  const found = file.find('id', 'o42');
  file.close();
  let digest = 0x811c9dc5;
  for (let i = 0; i < table.length; i++) digest = Math.imul(digest ^ table[i], 0x01000193) >>> 0;
  return {
    table: { size: table.length, digest, found },
    csv: await quire.view.toCsv(VIEW, text.slice(0, 2000).slice(0, text.slice(0, 2000).lastIndexOf('\\n') + 1)),
    bundle: quire.view.run(VIEW, bundle),
    text: quire.view.runText(VIEW, text),
    streamed,
    fhirpath: quire.fhirpath.evaluateText("code.coding.where(code != 'x').code | value.value", text.split('\\n')[3]),
    viewError: error,
  };
}
`;

test('views in Chromium: the same rows, text, FHIRPath results and errors as Node', async () => {
  cpSync(dist, path.join(work, 'dist'), { recursive: true });
  writeFileSync(path.join(work, 'shared.js'), SHARED);
  writeFileSync(
    path.join(work, 'index.html'),
    `<!doctype html><html><head></head><body><script type="module">
      import * as quire from './dist/index.js';
      import { calls, makeNdjson } from './shared.js';
      try {
        await quire.init();
        window.result = await calls(quire, new Blob([makeNdjson(500)]));
      } catch (e) { window.result = { error: String(e && e.stack || e) }; }
    </script></body></html>`,
  );

  const quire = await loadQuire();
  const shared = await import(pathToFileURL(path.join(work, 'shared.js')).href);
  const expected = await shared.calls(quire, new Blob([shared.makeNdjson(500)]));
  assert.equal(expected.streamed.length, 500);
  assert.equal(expected.bundle.length, 20);
  assert.ok(expected.text.startsWith('{"id":"o0","value":0.000,"codes":["c0","x"]}\n'), expected.text.slice(0, 80));
  assert.equal(expected.fhirpath, '["c3",3.003]');
  assert.equal(expected.viewError.code, 'INVALID_VIEW');
  // value declares no type: a string column, holding the number's JSON text (quire/view.h's rules).
  assert.deepEqual(expected.table.found, { id: 'o42', value: '42.042', codes: ['c0', 'x'] });
  assert.ok(expected.csv.startsWith('id,value,codes\n'), expected.csv.slice(0, 40));

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
    assert.deepEqual(result, expected);
  } finally {
    await browser.close();
    await server.close();
  }
});
