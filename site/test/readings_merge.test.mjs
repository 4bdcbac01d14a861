// The one JS merge of readings (site/dashboard/model.mjs, used by the dashboard and by
// bench/report.mjs) against `quire-bench compare` (bench/runner/bench_compare.cpp) over the same
// files: every case line of compare's table (medians, p99s, ratios, allocations, peak, checksum
// verdict), the cases over the memory budget (with generated_bytes as the budget's base), the
// missing cases and the wasm/native summary are rebuilt from the merge and must be compare's,
// character for character. Over each checked-in run (bench/readings/, format/, views/) and over
// doctored copies that give the wide cases generated_bytes and drop a case from one target.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { repo } from './helpers.mjs';
import { TARGETS, buildModel } from '../dashboard/model.mjs';

const compareBin = process.env.QUIRE_BENCH_BIN ?? path.join(repo, 'build', 'native', 'bench', 'quire-bench');

/**
 * `x` with `d` decimals as C's printf writes it: like toFixed, except that an exact tie (41.25 to
 * one decimal) goes to the even digit (41.2) where toFixed goes up (41.3).
 */
function fixed(x, d) {
  const [whole, frac = ''] = x.toFixed(Math.min(100, d + 60)).split('.');
  if (!/^50*$/.test(frac.slice(d))) return x.toFixed(d);
  const last = Number(d ? frac[d - 1] : whole.at(-1));
  return last % 2 === 0 ? `${whole}${d ? `.${frac.slice(0, d)}` : ''}` : x.toFixed(d);
}

// compare's figures, as its snprintf calls print them.
const duration = (ns) => (!(ns > 0) ? '-' : ns < 1e3 ? `${fixed(ns, 0)} ns` : ns < 1e6 ? `${fixed(ns / 1e3, 2)} us` : ns < 1e9 ? `${fixed(ns / 1e6, 2)} ms` : `${fixed(ns / 1e9, 2)} s`);
const bytes = (b) => (b < 0 ? '-' : b < 1024 ? `${fixed(b, 0)} B` : b < 1048576 ? `${fixed(b / 1024, 1)} KiB` : `${fixed(b / 1048576, 1)} MiB`);
const pad = (s, width, right = false) => (s.length >= width ? s : right ? s.padStart(width) : s.padEnd(width));

/** Runs compare over `files` (one per target, in TARGETS order); its output split into the parts checked. */
function runCompare(files) {
  assert.ok(existsSync(compareBin), `quire-bench is not built: expected ${compareBin} (make native, or set QUIRE_BENCH_BIN)`);
  const text = execFileSync(compareBin, ['compare', ...files], { encoding: 'utf8' });
  const lines = text.split('\n');
  const caseLines = lines.slice(2, lines.indexOf('', 2));
  const missingAt = lines.findIndex((l) => l.startsWith('Missing ('));
  const missing = [];
  for (let i = missingAt + 1; missingAt >= 0 && lines[i]?.startsWith('  '); ++i) missing.push(lines[i].slice(2));
  return {
    caseLines,
    missing,
    over: lines.filter((l) => l.startsWith('  over: ')).map((l) => l.slice('  over: '.length)),
    summary: lines.filter((l) => / median ratio over \d+ cases: /.test(l)),
    differ: text.includes('ERROR: checksums differ'),
  };
}

/** The same parts, rebuilt from the merge of the same readings. */
function fromModel(readings) {
  const m = buildModel(readings.map((reading) => ({ source: reading.target, reading })));
  const shown = TARGETS.filter((t) => readings.some((r) => r.target === t));
  const quire = m.cases.filter((c) => !c.peer);
  const width = Math.max(12, ...quire.map((c) => c.name.length));
  const caseLines = quire.map((row) => {
    let line = pad(row.name, width + 2);
    shown.forEach((t, i) => {
      const c = row.byTarget[t];
      if (!c) return (line += pad('(missing)', i ? 31 : 22));
      line += pad(duration(c.time_ns.median), 10, true) + pad(duration(c.time_ns.p99), 11, true);
      line += i ? `${pad(`${fixed(row.ratio[t], 2)}x`, 9, true)} ` : ' ';
    });
    const first = row.byTarget[row.targets[0]];
    line += `${pad(first.alloc ? fixed(first.alloc.calls_per_op, 0) : '-', 10, true)}  ${pad(bytes(first.alloc ? first.alloc.peak_bytes ?? 0 : -1), 10, true)}`;
    return row.checksumsDiffer ? `${line}  CHECKSUM DIFFERS` : line;
  });
  const over = m.cases.flatMap((row) => row.overBudget.map((t) => {
    const b = row.budget[t];
    const base = b.limit / b.factor;
    return `${row.name} in ${t}: peak ${bytes(b.peak)} is ${fixed(b.peak / base, 1)}x the ${b.of === 'generated' ? 'data it generated' : 'input'} (budget ${b.factor}x)`;
  }));
  const summary = shown.slice(1).flatMap((t) => {
    const ratios = quire.map((c) => c.ratio[t]).filter((r) => r !== undefined).sort((a, b) => a - b);
    if (!ratios.length) return [];
    return [`  ${t} / native median ratio over ${ratios.length} cases: ${fixed(ratios[ratios.length >> 1], 2)}x (min ${fixed(ratios[0], 2)}x, max ${fixed(ratios.at(-1), 2)}x)`];
  });
  return { caseLines, missing: m.missing, over, summary, differ: m.mismatches.length > 0, model: m };
}

const RUNS = ['', 'format', 'views'];
const runFiles = (run) => TARGETS.map((t) => path.join(repo, 'bench', 'readings', run, `${t}.json`)).filter((f) => existsSync(f));

function assertAgree(files) {
  const readings = files.map((f) => JSON.parse(readFileSync(f, 'utf8')));
  const want = runCompare(files);
  const got = fromModel(readings);
  assert.ok(want.caseLines.length > 0, 'compare printed case lines');
  assert.deepEqual(got.caseLines, want.caseLines);
  assert.deepEqual(got.over, want.over);
  assert.deepEqual(got.missing, want.missing);
  assert.deepEqual(got.summary, want.summary);
  assert.equal(got.differ, want.differ);
  return got;
}

for (const run of RUNS) {
  test(`the merge gives compare's figures for bench/readings/${run || '.'}`, () => {
    const files = runFiles(run);
    assert.equal(files.length, 3, `three targets' readings in bench/readings/${run}`);
    assertAgree(files);
  });
}

test('generated_bytes is the budget\'s base, a case missing on one target is listed: as compare says', () => {
  const dir = mkdtempSync(path.join(tmpdir(), 'quire-readings-merge-'));
  try {
    const files = runFiles('format').map((f) => {
      const reading = JSON.parse(readFileSync(f, 'utf8'));
      for (const c of reading.cases) {
        // The wide write's input is a six-byte row count: against the ~37 MB it wrote it is within budget.
        if (c.name === 'format.write/wide-100k') c.generated_bytes = 37302519;
        // And a case whose generated data is small is over it, named "the data it generated".
        if (c.name === 'format.read-all/wide-100k') c.generated_bytes = 1000000;
      }
      if (reading.target === 'wasm-browser') reading.cases = reading.cases.filter((c) => c.name !== 'format.sum-3/wide-100k');
      const out = path.join(dir, path.basename(f));
      writeFileSync(out, JSON.stringify(reading));
      return out;
    });
    const got = assertAgree(files);
    assert.ok(!got.over.some((l) => l.startsWith('format.write/wide-100k ')), got.over.join('\n'));
    assert.ok(got.over.some((l) => l.startsWith('format.read-all/wide-100k in native: ') && l.includes('the data it generated')), got.over.join('\n'));
    assert.deepEqual(got.missing, ['format.sum-3/wide-100k in wasm-browser']);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
