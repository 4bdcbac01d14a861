// The result battery through the `quire` CLI (ctest cli_battery, native only): each call of
// tests/data/battery/battery.tsv runs as the command line that asks for it, and the digest of what
// it prints (stdout; for a failing call its stderr line without the `FILE: ` prefix) must equal
// tests/data/battery/digests.tsv, the table core's own test (result_battery_test.cpp) checks.
//   node tests/cli_battery.mjs path/to/quire
// Also a module: js/test/battery.test.mjs reads the battery and the table with these functions.
import { readFileSync } from 'node:fs';
import { spawnSync } from 'node:child_process';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

export const batteryDir = path.join(path.dirname(fileURLToPath(import.meta.url)), 'data', 'battery');

/** The calls of battery.tsv: { id, file (under tests/data), op, where, columns[], order, descending, offset, limit, column, key }; absent fields are undefined. */
export function readBattery() {
  const lines = readFileSync(path.join(batteryDir, 'battery.tsv'), 'utf8').split('\n').filter((l) => l && !l.startsWith('#'));
  const calls = [];
  for (const line of lines.slice(1)) {
    const f = line.split('\t').map((x) => (x === '-' ? undefined : x));
    if (f.length !== 11) throw new Error(`battery.tsv: 11 fields expected: ${line}`);
    calls.push({
      id: f[0], file: f[1], op: f[2], where: f[3], columns: f[4]?.split(','), order: f[5],
      descending: f[6] === '1', offset: Number(f[7]), limit: f[8] === undefined ? undefined : Number(f[8]), column: f[9], key: f[10],
    });
  }
  return calls;
}

/** digests.tsv: id → { digest, bytes, status } (status "ok" or an error code). */
export function readDigests() {
  const table = new Map();
  for (const line of readFileSync(path.join(batteryDir, 'digests.tsv'), 'utf8').split('\n')) {
    if (!line || line.startsWith('#')) continue;
    const [id, digest, bytes, status] = line.split('\t');
    table.set(id, { digest, bytes: Number(bytes), status });
  }
  return table;
}

/** FNV-1a 64 of bytes (a Uint8Array, or a string as UTF-8), as 16 hex digits; 16-bit limbs keep every product exact in a double. */
export function fnv1a64(input) {
  const bytes = typeof input === 'string' ? new TextEncoder().encode(input) : input;
  let h0 = 0x2325, h1 = 0x8422, h2 = 0x9ce4, h3 = 0xcbf2;
  for (let i = 0; i < bytes.length; i++) {
    h0 ^= bytes[i];
    // h * 0x100000001b3 = h * 0x1b3 + (h << 40), modulo 2^64.
    const t0 = h0 * 0x1b3;
    const t1 = h1 * 0x1b3 + (t0 >>> 16);
    const t2 = h2 * 0x1b3 + h0 * 0x100 + Math.floor(t1 / 0x10000);
    const t3 = h3 * 0x1b3 + h1 * 0x100 + Math.floor(t2 / 0x10000);
    h0 = t0 & 0xffff;
    h1 = t1 & 0xffff;
    h2 = t2 & 0xffff;
    h3 = t3 & 0xffff;
  }
  return [h3, h2, h1, h0].map((x) => x.toString(16).padStart(4, '0')).join('');
}

/** The quire command line that asks for a call (after `quire`). */
export function commandLine(call, file) {
  if (call.op === 'storage') return ['inspect', file, '--json'];
  if (call.op === 'chunks') return ['inspect', file, '--chunks', call.column];
  const args = ['query', file];
  if (call.where !== undefined) args.push('--where', call.where);
  if (call.op === 'find') args.push('--find', `${call.column}=${call.key}`);
  if (call.columns) args.push('--columns', call.columns.join(','));
  if (call.order !== undefined) args.push('--order', call.order);
  if (call.descending) args.push('--desc');
  if (call.offset) args.push('--offset', String(call.offset));
  if (call.limit !== undefined) args.push('--limit', String(call.limit));
  if (call.op === 'count') args.push('--count');
  if (call.op === 'sum') args.push('--sum', call.column);
  if (call.op === 'explain' || call.op === 'explain-analyze') args.push('--explain');
  if (call.op === 'explain-analyze') args.push('--analyze');
  return args;
}

// Lines where the CLI does not print core's text yet, and why. Each must still differ (so a fix
// takes its line off this list).
const CLI_DIFFERENCES = new Map([]);

function main(quire) {
  const dataDir = path.dirname(batteryDir);
  const table = readDigests();
  let failures = 0;
  const calls = readBattery();
  for (const call of calls) {
    const file = path.join(dataDir, call.file);
    const args = commandLine(call, file);
    const run = spawnSync(quire, args, { maxBuffer: 64 << 20 });
    if (run.error) throw run.error;
    const want = table.get(call.id);
    let text = run.stdout;
    let problem;
    if (!want) problem = 'not in digests.tsv';
    else if (want.status === 'ok') {
      if (run.status !== 0) problem = `exited ${run.status}: ${run.stderr}`;
    } else {
      // The error line is `WHERE: describe()`, WHERE the file, or the option at fault (--where, --find).
      const err = run.stderr.toString('utf8');
      const prefix = [file, '--where', '--find'].map((p) => `${p}: `).find((p) => err.startsWith(p));
      if (run.status === 0) problem = 'succeeded, expected ' + want.status;
      else if (!prefix) problem = `stderr has no FILE: prefix: ${err}`;
      else text = Buffer.from(err.slice(prefix.length));
    }
    if (!problem && (fnv1a64(text) !== want.digest || text.length !== want.bytes)) {
      problem = `digest ${fnv1a64(text)} (${text.length} bytes), table ${want.digest} (${want.bytes} bytes); printed: ${text.toString('utf8').slice(0, 300)}`;
    }
    if (CLI_DIFFERENCES.has(call.id)) {
      if (!problem) {
        failures++;
        console.log(`FAIL: ${call.id} now agrees: take it off CLI_DIFFERENCES`);
      } else {
        console.log(`known difference: ${call.id}: ${CLI_DIFFERENCES.get(call.id)}`);
      }
      continue;
    }
    if (problem) {
      failures++;
      console.log(`FAIL: ${call.id}: quire ${args.join(' ')}: ${problem}`);
    }
  }
  if (calls.length !== table.size) {
    failures++;
    console.log(`FAIL: ${calls.length} calls in battery.tsv, ${table.size} lines in digests.tsv`);
  }
  console.log(`cli battery: ${calls.length} calls, ${calls.length - failures - CLI_DIFFERENCES.size} agree with digests.tsv, ${CLI_DIFFERENCES.size} known differences`);
  return failures ? 1 : 0;
}

if (process.argv[1] && import.meta.url === pathToFileURL(path.resolve(process.argv[1])).href) {
  if (!process.argv[2]) {
    console.error('usage: node tests/cli_battery.mjs path/to/quire');
    process.exit(2);
  }
  process.exitCode = main(path.resolve(process.argv[2]));
}
