// Error codes: the checked-in js/src/error_codes.ts is what the generator writes from the core's
// list; the wasm module's own names and values equal ERROR_CODES; and a QuireError's message is
// the core's one line (error::describe()), not one formatted in JS.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { dist, loadQuire, dataDir } from './helpers.mjs';
import { generate, parseList, LIST_PATH, OUTPUT_PATH } from '../scripts/gen-error-codes.mjs';

test('js/src/error_codes.ts is what gen-error-codes.mjs writes from error_list.h (run it when this fails)', () => {
  assert.equal(readFileSync(OUTPUT_PATH, 'utf8'), generate(readFileSync(LIST_PATH, 'utf8')));
});

test('the generator refuses a malformed line, a reused value and a reused name', () => {
  const ok = 'QUIRE_ERROR_CODE(OK, 0, "no error")\n';
  assert.equal(parseList(ok + 'QUIRE_ERROR_CODE(A, 1, "a")\n').length, 2);
  assert.throws(() => parseList(ok + 'QUIRE_ERROR_CODE(A, 1)\n'), /not of the shape/);
  assert.throws(() => parseList(ok + 'QUIRE_ERROR_CODE(A, 0, "a")\n'), /unique and ascending/);
  assert.throws(() => parseList(ok + 'QUIRE_ERROR_CODE(A, 1, "a")\nQUIRE_ERROR_CODE(A, 2, "b")\n'), /listed twice/);
});

test('ERROR_CODES holds the pinned values of tests/data/error_codes.tsv', async () => {
  const { ERROR_CODES } = await loadQuire();
  const pinned = readFileSync(path.join(dataDir, 'error_codes.tsv'), 'utf8')
    .split('\n')
    .filter((l) => l && !l.startsWith('#'))
    .map((l) => l.split('\t'));
  assert.deepEqual(Object.entries(ERROR_CODES), pinned.map(([value, name]) => [name, Number(value)]));
  assert.ok(Object.isFrozen(ERROR_CODES));
  assert.equal(ERROR_CODES.NO_SUCH_COLUMN, 32);
});

test("the wasm module's error names and values equal ERROR_CODES", async () => {
  const { ERROR_CODES } = await loadQuire();
  // The raw Emscripten module, loaded beside the package's own instance: errorCodes() is not part of the public API.
  const { default: createQuireModule } = await import(pathToFileURL(path.join(dist, 'quire.mjs')).href);
  const m = await createQuireModule({ wasmBinary: readFileSync(path.join(dist, 'quire.wasm')) });
  const fromWasm = Object.fromEntries(m.errorCodes().map(({ name, value }) => [name, value]));
  assert.deepEqual(fromWasm, { ...ERROR_CODES });
});

test("a QuireError's message is the core's one error line", async () => {
  const { json, QuireError } = await loadQuire();
  const e = json.check('[1,\n  2,]\n');
  assert.ok(e instanceof QuireError);
  assert.equal(e.code, 'INVALID_JSON');
  assert.equal(e.offset, 8);
  // The same document and line as tests/cli_exit_codes.sh expects from the CLI.
  assert.equal(e.message, 'INVALID_JSON at offset 8, line 2, column 5: unexpected character or structure');
});
