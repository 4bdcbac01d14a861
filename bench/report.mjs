#!/usr/bin/env node
// Writes the tables of docs/performance.md from the checked-in readings in bench/readings/
// (native.json, wasm-node.json, wasm-browser.json), between the `<!-- readings:begin -->` and
// `<!-- readings:end -->` markers. Tables are never typed by hand.   node bench/report.mjs
// The readings of each run are merged case by case by the dashboard's merge (site/dashboard/
// model.mjs, the one the page uses, tested against `quire-bench compare`): this file only lays
// out its rows.
import { existsSync, readFileSync, readdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { buildModel, ladderOf } from '../site/dashboard/model.mjs';

const repo = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const dir = path.join(repo, 'bench', 'readings');
const targets = ['native', 'wasm-node', 'wasm-browser'];
const readings = Object.fromEntries(targets.filter((t) => existsSync(path.join(dir, `${t}.json`))).map((t) => [t, JSON.parse(readFileSync(path.join(dir, `${t}.json`), 'utf8'))]));

const ms = (ns) => (ns === undefined ? '—' : ns < 1e3 ? `${ns.toFixed(0)} ns` : ns < 1e6 ? `${(ns / 1e3).toFixed(1)} µs` : ns < 1e9 ? `${(ns / 1e6).toFixed(2)} ms` : `${(ns / 1e9).toFixed(2)} s`);
const size = (b) => (b === undefined ? '—' : b < 1024 ? `${b} B` : b < 1048576 ? `${(b / 1024).toFixed(1)} KiB` : `${(b / 1048576).toFixed(1)} MiB`);
const mbs = (c) => (c?.throughput?.bytes_per_s ? `${(c.throughput.bytes_per_s / 1e6).toFixed(0)}` : '—');
/** One run's readings ({ target: reading }) merged: the rows of quire's cases, and of the peers, in first-seen order. */
function merged(byTarget) {
  const { cases } = buildModel(Object.entries(byTarget).map(([t, reading]) => ({ source: t, reading })));
  return { quire: cases.filter((c) => !c.peer), peers: cases.filter((c) => c.peer) };
}
/** A case's median on `t`, with its ratio to native for the other targets. */
const medianCell = (row, t) => {
  const c = row.byTarget[t];
  if (!c) return '—';
  return `${ms(c.time_ns.median)}${row.byTarget.native && t !== 'native' ? ` (${(c.time_ns.median / row.byTarget.native.time_ns.median).toFixed(2)}x)` : ''}`;
};
const checksumCell = (row) => (row.checksumsDiffer ? '**DIFFER**' : 'equal');

let out = '';
const first = Object.values(readings)[0];
if (!first) {
  out = '_No readings checked in yet: run `make bench` and `make report`._\n';
} else {
  out += '**Runs**\n\n| target | runtime | commit | started | cpu | cores | simd kernel |\n|---|---|---|---|---|---|---|\n';
  for (const [t, r] of Object.entries(readings)) {
    out += `| ${t} | ${r.runtime.name} ${r.runtime.name === r.runtime.version ? '' : r.runtime.version} | ${r.build.commit.slice(0, 10)}${r.build.dirty ? ' (dirty)' : ''} | ${r.started_at} | ${r.machine.cpu} | ${r.machine.logical_cores} | ${r.build.simd ?? '—'} |\n`;
  }
  out += '\n**Start-up and size**\n\n| target | process start | import | compile + instantiate | fresh import + init() | artifact | gzipped |\n|---|---|---|---|---|---|---|\n';
  for (const [t, r] of Object.entries(readings)) {
    const s = r.startup ?? {};
    const f = (v) => (v === undefined ? '—' : `${v.toFixed(1)} ms`);
    out += `| ${t} | ${f(s.process_start_ms)} | ${f(s.import_ms)} | ${f(s.instantiate_ms)} | ${f(s.cold_import_init_ms)} | ${size(s.artifact_bytes)} | ${size(s.artifact_gzip_bytes)} |\n`;
  }
  const { quire, peers } = merged(readings);
  const present = targets.filter((t) => readings[t]);
  for (const family of [...new Set(quire.map((row) => row.name.split('.')[0]))]) {
    out += `\n**${family}** — median time per call (ratio to native), throughput native MB/s, allocations per call and peak live bytes of one call (native)\n\n`;
    out += `| case | input | ${present.join(' | ')} | MB/s native | allocs | peak | checksums |\n`;
    out += `|---|---|${present.map(() => '---|').join('')}---|---|---|---|\n`;
    for (const row of quire.filter((r) => r.name.startsWith(`${family}.`))) {
      const native = row.byTarget.native;
      out += `| ${row.name} | ${size(row.inputBytes)} | ${present.map((t) => medianCell(row, t)).join(' | ')} | ${mbs(native)} | ${native?.alloc?.calls_per_op ?? '—'} | ${size(native?.alloc?.peak_bytes)} | ${checksumCell(row)} |\n`;
    }
  }
  if (peers.length) {
    out += '\n**Peers** (Node, same run, same input bytes; ratio = peer / quire in wasm)\n\n| peer case | peer | median | quire case | quire median | ratio |\n|---|---|---|---|---|---|\n';
    for (const t of present) {
      for (const row of peers.filter((p) => p.byTarget[t])) {
        const c = row.byTarget[t];
        const q = quire.find((x) => x.name === row.mirrors)?.byTarget[t];
        out += `| ${row.name} | ${c.peer} | ${ms(c.time_ns.median)} | ${row.mirrors} | ${ms(q?.time_ns.median)} | ${row.peerRatio[t] !== undefined ? row.peerRatio[t].toFixed(2) + 'x' : '—'} |\n`;
      }
    }
  }
}

// The .quire format's run (bench/readings/format/: `make bench BENCH_ARGS="--filter format.,peer."
// READINGS=bench/readings/format`): its cases, and the table of issue 6 — quire on each target and
// every peer on the 200,000 customers, one row each.
const formatDir = path.join(dir, 'format');
const formatReadings = Object.fromEntries(targets.filter((t) => existsSync(path.join(formatDir, `${t}.json`))).map((t) => [t, JSON.parse(readFileSync(path.join(formatDir, `${t}.json`), 'utf8'))]));
let formatOut = '';
if (Object.keys(formatReadings).length === 0) {
  formatOut = '_No format readings checked in yet._\n';
} else {
  formatOut += '**Runs**\n\n| target | runtime | commit | started |\n|---|---|---|---|\n';
  for (const [t, r] of Object.entries(formatReadings)) {
    formatOut += `| ${t} | ${r.runtime.name} ${r.runtime.name === r.runtime.version ? '' : r.runtime.version} | ${r.build.commit.slice(0, 10)}${r.build.dirty ? ' (dirty)' : ''} | ${r.started_at} |\n`;
  }
  const columns = [
    ['find', 'find by id (open → row)'], ['filter-count', 'count'], ['filter', 'filter (rows)'], ['text-search', 'text search'],
    ['read-all', 'read all'], ['sum', 'sum one column'], ['sum-decimal', 'exact decimal sum'], ['column', 'one column as an array'], ['deep-page', 'deep page'],
    ['newest-50', 'newest 50'], ['write', 'write'],
  ];
  const shapes = [['customers-200k', ''], ['customers-200k-indexed', ', 3 indexes']];
  formatOut += '\n**200,000 customers: quire and its peers** (median per call, each call from a cold open of the file\'s bytes; file size = the bytes each one keeps; — = not measured)\n\n';
  formatOut += `| who | target | file size | ${columns.map(([, label]) => label).join(' | ')} |\n|---|---|---|${columns.map(() => '---|').join('')}\n`;
  for (const [shape, suffix] of shapes) {
    for (const [t, r] of Object.entries(formatReadings)) {
      const groups = new Map([['format', { label: `quire${suffix}`, cases: [] }]]);
      for (const c of r.cases) {
        if (!c.name.endsWith(`/${shape}`)) continue;
        const group = c.peer ? c.op.slice(0, c.op.lastIndexOf('.')) : c.op.split('.')[0];
        if (!groups.has(group)) groups.set(group, { label: `${c.peer}${suffix}`, cases: [] });
        groups.get(group).cases.push(c);
      }
      for (const [group, g] of groups) {
        if (g.cases.length === 0) continue;
        const at = (op) => g.cases.find((c) => c.op === `${group}.${op}`);
        const sizeCase = at('find') ?? at('filter');
        formatOut += `| ${g.label} | ${t} | ${sizeCase ? size(sizeCase.input_bytes) : '—'} | ${columns.map(([op]) => (at(op) ? ms(at(op).time_ns.median) : '—')).join(' | ')} |\n`;
      }
    }
  }
  const present = targets.filter((t) => formatReadings[t]);
  formatOut += `\n**Every format case** — median per call (ratio to native), allocations and peak live bytes of one call (native)\n\n| case | input | ${present.join(' | ')} | allocs | peak | checksums |\n|---|---|${present.map(() => '---|').join('')}---|---|---|\n`;
  for (const row of merged(formatReadings).quire) {
    const native = row.byTarget.native;
    formatOut += `| ${row.name} | ${size(row.inputBytes)} | ${present.map((t) => medianCell(row, t)).join(' | ')} | ${native?.alloc?.calls_per_op ?? '—'} | ${size(native?.alloc?.peak_bytes)} | ${checksumCell(row)} |\n`;
  }
}

// The views' run (bench/readings/views/: `make bench BENCH_ARGS="--filter view.,fhirpath."
// READINGS=bench/readings/views`): per case and target, resources/s, rows are the case's own
// (quire's rows and the peer's are checked equal before timing), MB/s of NDJSON and peak memory.
const viewsDir = path.join(dir, 'views');
const viewsReadings = Object.fromEntries(targets.filter((t) => existsSync(path.join(viewsDir, `${t}.json`))).map((t) => [t, JSON.parse(readFileSync(path.join(viewsDir, `${t}.json`), 'utf8'))]));
let viewsOut = '';
if (Object.keys(viewsReadings).length === 0) {
  viewsOut = '_No view readings checked in yet._\n';
} else {
  viewsOut += '**Runs**\n\n| target | runtime | commit | started |\n|---|---|---|---|\n';
  for (const [t, r] of Object.entries(viewsReadings)) {
    viewsOut += `| ${t} | ${r.runtime.name} ${r.runtime.name === r.runtime.version ? '' : r.runtime.version} | ${r.build.commit.slice(0, 10)}${r.build.dirty ? ' (dirty)' : ''} | ${r.started_at} |\n`;
  }
  const perS = (c) => (c?.items ? `${Math.round((c.items * 1e9) / c.time_ns.median).toLocaleString('en-US')}` : '—');
  viewsOut += '\n**Views and FHIRPath from NDJSON bytes** (median per call; resources/s = resources in the input / median; MB/s of NDJSON; peak live bytes of one call, — where not counted)\n\n';
  viewsOut += '| case | target | who | resources | input | median | resources/s | MB/s | peak | checksum |\n|---|---|---|---|---|---|---|---|---|---|\n';
  const { quire, peers } = merged(viewsReadings);
  for (const row of quire) {
    for (const t of Object.keys(viewsReadings)) {
      // quire's case, then the peers that mirror it, on this target.
      for (const [c, check] of [[row.byTarget[t], checksumCell(row)], ...peers.filter((p) => p.mirrors === row.name).map((p) => [p.byTarget[t], 'rows equal'])]) {
        if (!c) continue;
        const mbps = c.throughput?.bytes_per_s ? (c.throughput.bytes_per_s / 1e6).toFixed(1) : '—';
        viewsOut += `| ${row.name} | ${t} | ${c.peer ?? 'quire'} | ${c.items ?? '—'} | ${size(c.input_bytes)} | ${ms(c.time_ns.median)} | ${perS(c)} | ${mbps} | ${c.alloc?.peak_bytes !== undefined ? size(c.alloc.peak_bytes) : '—'} | ${check} |\n`;
      }
    }
  }
}

// The MLLP capacity ladder (bench/readings/listen/: `node bench/mllp-load.mjs --out ...`, target
// loopback): a row a system and offered rate, and each system's highest rate held.
const listenDir = path.join(dir, 'listen');
const ladderFiles = existsSync(listenDir) ? readdirSync(listenDir).filter((f) => f.endsWith('.json')).sort() : [];
let ladderOut = '';
if (!ladderFiles.length) {
  ladderOut = '_No ladder reading checked in yet._\n';
} else {
  const lms = (v) => (v === null || v === undefined ? '—' : v >= 1000 ? `${(v / 1000).toFixed(2)} s` : `${v.toFixed(v < 10 ? 2 : 1)} ms`);
  const n = (x) => (x === null || x === undefined ? '—' : Math.round(x).toLocaleString('en-US'));
  for (const f of ladderFiles) {
    const reading = JSON.parse(readFileSync(path.join(listenDir, f), 'utf8'));
    const l = ladderOf(`listen/${f}`, reading);
    const load = l.machine.load_average_1_5_15 ?? { start: [], end: [] };
    ladderOut += `**listen/${f}**: ${l.startedAt} to ${l.ladder.finished_at ?? '?'}, ${l.machine.cpu}, ${l.machine.logical_cores} cores, load average ${load.start.join(' / ')} at the start and ${load.end.join(' / ')} at the end; ${l.ladder.connections} connections on ${l.ladder.sender_threads} sender threads, ${l.ladder.seconds} s a rate, ${l.ladder.repeats} run${l.ladder.repeats === 1 ? '' : 's'} a rate; commit ${(l.build.commit ?? '').slice(0, 10)}${l.build.dirty ? ' (dirty)' : ''}.\n\n`;
    const fs2 = reading.disk?.fsync_2kib_ms;
    if (fs2?.length) ladderOut += `The disk under the stores (\`${reading.disk.where}\`), fsync of a 2 KiB append: ${fs2.map((f, i) => `${i ? 'at the end' : 'at the start'} p50 ${f.p50} ms, p99 ${f.p99} ms`).join('; ')}.\n\n`;
    ladderOut += `\`${l.ladder.command}\`\n\n`;
    ladderOut += '| system | highest rate held (msg/s) | what it is |\n|---|---:|---|\n';
    for (const s of l.systems) ladderOut += `| ${s.system} | ${s.maxHeld ? n(s.maxHeld) : 'none'} | ${s.what}${s.peer ? ` (${s.peer})` : ''} |\n`;
    ladderOut += '\n| system | offered msg/s | AA of sent | unanswered | AA msg/s | p50 | p99 | p99.9 | max | queue at half → end | server CPU µs/msg | held |\n|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|\n';
    for (const s of l.systems) {
      for (const p of s.points) {
        const c = reading.cases.find((x) => x.name === p.name).ladder;
        const extra = c.duplicates ? ` (${n(c.duplicates)} ACKs twice)` : '';
        ladderOut += `| ${s.system} | ${n(p.rate)} | ${n(p.aa)} of ${n(p.sent)}${extra} | ${n(p.missing)} | ${n(p.aaPerS)} | ${lms(p.p50)} | ${lms(p.p99)} | ${lms(p.p999)} | ${lms(p.max)} | ${p.queue ? `${n(p.queue.at_half)} → ${n(p.queue.at_end)}` : '—'} | ${p.cpu === null ? '—' : p.cpu.toFixed(1)} | ${p.held ? 'yes' : 'no'} |\n`;
      }
    }
  }
}

const doc = path.join(repo, 'docs', 'performance.md');
let text = readFileSync(doc, 'utf8');
function fill(begin, end, body, from) {
  const a = text.indexOf(begin), b = text.indexOf(end);
  if (a < 0 || b < a) {
    console.error(`${doc} has no ${begin} ... ${end} markers`);
    process.exit(1);
  }
  text = text.slice(0, a + begin.length) + `\n<!-- generated by bench/report.mjs from ${from}; do not edit by hand -->\n\n` + body + '\n' + text.slice(b);
}
fill('<!-- readings:begin -->', '<!-- readings:end -->', out, 'bench/readings/*.json');
fill('<!-- format-readings:begin -->', '<!-- format-readings:end -->', formatOut, 'bench/readings/format/*.json');
fill('<!-- views-readings:begin -->', '<!-- views-readings:end -->', viewsOut, 'bench/readings/views/*.json');
fill('<!-- ladder-readings:begin -->', '<!-- ladder-readings:end -->', ladderOut, 'bench/readings/listen/*.json');
writeFileSync(doc, text);
console.log(`wrote the tables of ${path.relative(repo, doc)} from ${Object.keys(readings).join(', ')}, format/ ${Object.keys(formatReadings).join(', ')} and views/ ${Object.keys(viewsReadings).join(', ')}`);
