// Requests the wasm heap cannot meet are a QuireError OUT_OF_MEMORY, wherever they fail (the
// wrapper's copy of the input, or a buffer core sizes from the input), and the next ordinary call
// succeeds. Its own file, so its own process and module instance (node --test runs each file apart).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { loadQuire } from './helpers.mjs';

const quire = await loadQuire();
const { json, format, fhir, memory, QuireError } = quire;

const MAX = 2 ** 32 - 65536; // Emscripten 3.1.6 stops one wasm page short of 4 GB

function ordinaryCallsWork() {
  const doc = json.parse('{"a":[1,2,3],"b":"x"}');
  try {
    assert.equal(doc.text('/a/2'), '3');
  } finally {
    doc.close();
  }
  assert.equal(fhir.parse('{"resourceType":"Patient","id":"p"}').id, 'p');
  const f = format.open(format.write([{ id: 1 }]));
  try {
    assert.deepEqual(f.query(), [{ id: 1 }]);
  } finally {
    f.close();
  }
}

function assertOutOfMemory(fn, what) {
  assert.throws(fn, (e) => {
    assert.ok(e instanceof QuireError, `${what}: ${e}`);
    assert.equal(e.code, 'OUT_OF_MEMORY', `${what}: ${e.message}`);
    return true;
  });
}

test('memory: an input larger than a 32-bit heap is OUT_OF_MEMORY (not a wrapped size)', () => {
  // 2^32 - 16 bytes plus the 64 bytes of padding would wrap to 48 in malloc's 32-bit size_t.
  // Buffer.alloc maps zero pages: nothing is touched, so this costs no memory.
  const huge = Buffer.alloc(2 ** 32 - 16);
  json.check('[]'); // the json bindings' first use registers them, which allocates (module.ts, wasm(area))
  const before = memory().heapBytes;
  assertOutOfMemory(() => json.parse(huge), 'input of 2^32 - 16 bytes');
  assertOutOfMemory(() => json.check(huge), 'check of 2^32 - 16 bytes');
  assert.equal(memory().heapBytes, before, 'a refused copy takes nothing');
  ordinaryCallsWork();
});

test('memory: an input the heap cannot grow to hold is OUT_OF_MEMORY from malloc', () => {
  // Under the wrapper's own bound, so _malloc is asked, and returns 0: the heap would have to
  // grow past its 4 GB maximum.
  const big = Buffer.alloc(MAX - 32 * 2 ** 20);
  assertOutOfMemory(() => json.check(big), 'check of almost 4 GB');
  // format.open reads bytes where they are, copying none: the answer is the bytes' own.
  const before = memory().heapBytes;
  assert.throws(() => format.open(big), (e) => e instanceof QuireError && e.code === 'NOT_A_QUIRE_FILE');
  assert.ok(memory().heapBytes < before + 2 ** 20, 'an open copies nothing');
  assertOutOfMemory(() => fhir.validate(big), 'validate of almost 4 GB');
  ordinaryCallsWork();
});

test("memory: a document whose tape cannot be allocated is OUT_OF_MEMORY from core, and the module goes on", () => {
  // One string of 205 million commas: the tape is reserved before the walk for one entry per
  // `,` `:` `[` `{` (an upper bound that does not look inside strings), 20 bytes each: 4.1 GB,
  // which the heap cannot give. Core probes with a non-throwing malloc first
  // (core/src/common/alloc.h): without that, operator new aborts the module under -fno-exceptions.
  const text = Buffer.alloc(205_000_000, ',');
  text[0] = 0x22; // "
  text[text.length - 1] = 0x22;
  const before = memory().heapBytes;
  assertOutOfMemory(() => json.parse(text), 'tape of 205M entries');
  assert.ok(memory().heapBytes < before + 2 ** 20, `${memory().heapBytes - before} bytes left behind`);
  ordinaryCallsWork();
  // The same bytes are fine where no tape is built.
  assert.equal(json.stats(text).strings, 1);
  ordinaryCallsWork();
});
