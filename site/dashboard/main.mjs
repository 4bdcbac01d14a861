// The readings dashboard: loads the reading files the server lists in /readings/index.json (or
// files dropped on the page), merges them by case name (model.mjs) and draws the active view as
// SVG (charts.mjs) above a table with the exact figures. No wasm, no framework, no network
// beyond this server.
import { LADDER_TARGET, TARGETS, TARGET_LABELS, buildModel, checkReading, filterCases, sortByRatio } from './model.mjs';
import { barChart, ladderChart } from './charts.mjs';
import { bytes, count, duration, esc, millis, ratio, tickBytes, tickDuration, tickRatio } from './format.mjs';

const $ = (id) => document.getElementById(id);
const state = {
  readings: [],
  model: null,
  dropped: false,
  view: 'times',
  log: true,
  sort: 'wasm-node',
  filter: { module: '', op: '', text: '', peers: true, problems: false },
};
// Read by the end-to-end test: how long the last full render took, and of how many cases.
const stats = { renders: 0, renderMs: 0, cases: 0, rows: 0, loaded: false, view: 'times' };
window.quireDashboard = stats;

const VIEWS = {
  times: { title: 'Median time per call', note: 'Bars: median per call on each target; tick: its p99. Hover a case for its figures; the table below has them all.' },
  ratio: { title: 'wasm / native, by case', note: 'How many times slower (above 1×) or faster (below 1×) a case runs in WebAssembly than natively, by median. Largest first.' },
  memory: { title: 'Peak memory of one call', note: 'Bars: peak live bytes during one call on each target; dashed mark: the advisory budget (20× the input, or the data a case generated, 3× for opaque payloads; none for peers). Allocations per call are in the table.' },
  startup: { title: 'Start-up and artifact size', note: 'What a target costs before its first case (process start, package import, wasm compile + instantiate), and the size of what it loads.' },
};

const series = (t) => ({ native: 's-native', 'wasm-node': 's-node', 'wasm-browser': 's-browser' })[t];

function caseTitle(c) {
  const parts = c.targets.map((t) => {
    const x = c.byTarget[t];
    return `${TARGET_LABELS[t]} ${duration(x.time_ns.median)} (p99 ${duration(x.time_ns.p99)})`;
  });
  return `${c.name}${c.peer ? ` [${c.peer}]` : ''}\n${parts.join('\n')}`;
}

function problemOf(c, view) {
  if (c.checksumsDiffer) {
    // Which targets agree with which: "native ≠ Node = browser" (the digests are in the table).
    const groups = new Map();
    for (const t of c.targets) groups.set(c.checksums[t], [...(groups.get(c.checksums[t]) ?? []), TARGET_LABELS[t]]);
    return `checksums differ: ${[...groups.values()].map((g) => g.join(' = ')).join(' ≠ ')}`;
  }
  if (c.errors.length) return `failed: ${c.errors.map((e) => `${TARGET_LABELS[e.target]}: ${e.error}`).join('; ')}`;
  if (view === 'memory' && c.overBudget.length) return `over budget on ${c.overBudget.map((t) => TARGET_LABELS[t]).join(', ')}`;
  return null;
}

function groupByModule(cases) {
  const groups = new Map();
  for (const c of cases) {
    if (!groups.has(c.module)) groups.set(c.module, []);
    groups.get(c.module).push(c);
  }
  return groups;
}

function chartWidth() {
  return Math.max(280, Math.floor($('charts').clientWidth || 800));
}

function section(title, svg, extra = '') {
  return `<figure class="chart-block"><figcaption>${esc(title)}</figcaption>${extra}${svg}</figure>`;
}

function targetsShown() {
  return TARGETS.filter((t) => state.model.runs.some((r) => r.target === t));
}

function renderTimes(cases, width) {
  const targets = targetsShown();
  let html = '';
  for (const [module, group] of groupByModule(cases)) {
    const rows = group.map((c) => ({
      label: c.name,
      title: caseTitle(c),
      problem: problemOf(c, 'times'),
      bars: targets.map((t) => {
        const x = c.byTarget[t];
        return x
          ? { cls: series(t), value: x.time_ns.median, p99: x.time_ns.p99 }
          : { cls: series(t), value: null };
      }),
    }));
    const svg = barChart({
      rows, width, log: state.log, tick: tickDuration, barsPerRow: targets.length,
      ariaLabel: `${module}: median and p99 time per call of ${group.length} cases on ${targets.map((t) => TARGET_LABELS[t]).join(', ')}, ${state.log ? 'log' : 'linear'} scale. The table of cases below lists every figure.`,
    });
    html += section(`${module} — ${group.length} case${group.length === 1 ? '' : 's'}`, svg);
  }
  return html;
}

function renderRatio(cases, width) {
  const sorted = sortByRatio(cases, state.sort);
  const without = cases.length - sorted.length;
  const rows = sorted.map((c) => ({
    label: c.name,
    title: `${c.name}\n${['wasm-node', 'wasm-browser'].filter((t) => c.ratio[t] !== undefined).map((t) => `${TARGET_LABELS[t]} / native ${ratio(c.ratio[t])} (${duration(c.byTarget[t].time_ns.median)} vs ${duration(c.byTarget.native.time_ns.median)})`).join('\n')}`,
    problem: problemOf(c, 'ratio'),
    bars: ['wasm-node', 'wasm-browser'].map((t) => ({
      cls: series(t), value: c.ratio[t] ?? null, text: c.ratio[t] === undefined ? '' : ratio(c.ratio[t]),
    })),
  }));
  const svg = barChart({
    rows, width, log: state.log, tick: tickRatio, reference: 1, barsPerRow: 2, barHeight: 8,
    ariaLabel: `wasm over native median time of ${sorted.length} cases, sorted by ${TARGET_LABELS[state.sort]} / native, largest first, ${state.log ? 'log' : 'linear'} scale. The table of cases below lists every ratio.`,
  });
  const note = without ? `<p class="note">${without} case${without === 1 ? '' : 's'} without both a native and a wasm figure (peer libraries, or cases run on one target) are not in this chart.</p>` : '';
  return sorted.length ? section(`${sorted.length} cases, by ${TARGET_LABELS[state.sort]} / native`, svg, note) : `<p class="placeholder">No case has a native and a wasm figure.</p>${note}`;
}

function renderMemory(cases, width) {
  const targets = targetsShown();
  const measured = cases.filter((c) => c.targets.some((t) => c.byTarget[t].alloc?.peak_bytes !== undefined));
  let html = '';
  for (const [module, group] of groupByModule(measured)) {
    const rows = group.map((c) => ({
      label: c.name,
      title: `${c.name}\n${c.targets.map((t) => `${TARGET_LABELS[t]} peak ${bytes(c.byTarget[t].alloc?.peak_bytes)}, ${count(c.byTarget[t].alloc?.calls_per_op)} allocations and ${bytes(c.byTarget[t].alloc?.bytes_per_op)} per call`).join('\n')}\nbudget ${bytes(Object.values(c.budget)[0]?.limit)}`,
      problem: problemOf(c, 'memory'),
      warn: !c.checksumsDiffer && !c.errors.length,
      limit: Object.values(c.budget)[0]?.limit,
      bars: targets.map((t) => {
        const a = c.byTarget[t]?.alloc;
        return { cls: series(t), value: a?.peak_bytes ?? null };
      }),
    }));
    const svg = barChart({
      rows, width, log: state.log, tick: tickBytes, binary: true, barsPerRow: targets.length,
      ariaLabel: `${module}: peak live bytes of one call for ${group.length} cases on ${targets.map((t) => TARGET_LABELS[t]).join(', ')}, with the advisory budget, ${state.log ? 'log' : 'linear'} scale. The table of cases below lists every figure.`,
    });
    html += section(`${module} — ${group.length} case${group.length === 1 ? '' : 's'}`, svg);
  }
  const skipped = cases.length - measured.length;
  if (skipped) html += `<p class="note">${skipped} case${skipped === 1 ? '' : 's'} without allocation counts (peer libraries are not counted) are not shown.</p>`;
  return html || '<p class="placeholder">No case has allocation counts.</p>';
}

function runLabel(r) {
  return `${r.run ? `${r.run}/` : ''}${r.target}`;
}

function renderStartup(width) {
  const runs = state.model.runs;
  const timeRows = runs.map((r) => ({
    label: runLabel(r),
    title: `${runLabel(r)}: process start ${millis(r.startup.process_start_ms)}, import ${millis(r.startup.import_ms)}, compile + instantiate ${millis(r.startup.instantiate_ms)}`,
    bars: [
      { cls: 's-start', value: r.startup.process_start_ms ?? null },
      { cls: 's-import', value: r.startup.import_ms ?? null },
      { cls: 's-instantiate', value: r.startup.instantiate_ms ?? null },
    ],
  }));
  const sizeRows = runs.map((r) => ({
    label: runLabel(r),
    title: `${runLabel(r)}: ${bytes(r.startup.artifact_bytes)}, ${bytes(r.startup.artifact_gzip_bytes)} gzipped`,
    bars: [
      { cls: 's-artifact', value: r.startup.artifact_bytes ?? null },
      { cls: 's-gzip', value: r.startup.artifact_gzip_bytes ?? null },
    ],
  }));
  const ms = (v) => (v >= 1000 ? `${v / 1000} s` : `${v >= 1 ? v.toFixed(0) : v} ms`);
  return (
    section('Start-up, per run', barChart({ rows: timeRows, width, log: state.log, tick: ms, ariaLabel: `Start-up of ${runs.length} runs: process start, package import and wasm compile + instantiate in milliseconds. The table of runs below lists every figure.` })) +
    section('Artifact size, per run', barChart({ rows: sizeRows, width, log: state.log, tick: tickBytes, binary: true, ariaLabel: `Artifact size of ${runs.length} runs: the native binary or the wasm module with its glue, raw and gzipped. The table of runs below lists every figure.` }))
  );
}

const LEGENDS = {
  times: () => [...targetsShown().map((t) => [series(t), TARGET_LABELS[t]]), ['k-p99', 'p99']],
  ratio: () => [['s-node', 'Node / native'], ['s-browser', 'browser / native'], ['k-reference', '1× = native']],
  memory: () => [...targetsShown().map((t) => [series(t), `${TARGET_LABELS[t]} peak`]), ['k-limit', 'budget']],
  startup: () => [['s-start', 'process start'], ['s-import', 'import'], ['s-instantiate', 'compile + instantiate'], ['s-artifact', 'artifact'], ['s-gzip', 'gzipped']],
};

function renderCharts(cases) {
  const width = chartWidth();
  const view = state.view;
  $('view-h').textContent = VIEWS[view].title;
  $('view-note').textContent = VIEWS[view].note;
  $('legend').innerHTML = LEGENDS[view]().map(([cls, text]) => `<li><span class="swatch ${cls}" aria-hidden="true"></span>${esc(text)}</li>`).join('');
  $('ratio-sort').hidden = view !== 'ratio';
  // Start-up and size are per run, not per case: the case filters do not apply there.
  for (const id of ['module', 'op', 'text', 'peers', 'problems']) $(id).disabled = view === 'startup';
  let html;
  if (view === 'startup') html = renderStartup(width);
  else if (!cases.length) html = '<p class="placeholder">No case matches the filter.</p>';
  else if (view === 'ratio') html = renderRatio(cases, width);
  else if (view === 'memory') html = renderMemory(cases, width);
  else html = renderTimes(cases, width);
  $('charts').innerHTML = html;
  state.drawnWidth = width;
}

const rateText = (r) => (r >= 1000 ? `${Number((r / 1000).toPrecision(3))}k` : `${Number(r.toPrecision(3))}`);
const msText = (v) => (v === null || v === undefined ? '—' : v >= 1000 ? `${Number((v / 1000).toPrecision(3))} s` : `${Number(v.toPrecision(3))} ms`);

/** The loopback readings' capacity ladders: a chart (latency against offered rate) and a table each. */
function renderLadders() {
  const ladders = state.model.ladders;
  $('ladder-section').hidden = !ladders.length;
  if (!ladders.length) {
    $('ladders').innerHTML = '';
    return;
  }
  const width = chartWidth();
  const systems = ladders[0].systems;
  $('ladder-legend').innerHTML = [
    ...systems.map((s, i) => `<li class="l-${i % 9}"><span class="swatch ladder" aria-hidden="true"></span>${esc(s.system)} — ${s.maxHeld ? `held up to ${count(s.maxHeld)} msg/s` : 'no rate held'}</li>`),
    '<li><span class="swatch k-held" aria-hidden="true"></span>p99, held</li>',
    '<li><span class="swatch k-not-held" aria-hidden="true"></span>p99, not held</li>',
    '<li><span class="swatch k-p50" aria-hidden="true"></span>p50</li>',
    '<li><span class="swatch k-bound" aria-hidden="true"></span>p99 bound</li>',
  ].join('');
  let html = '';
  for (const l of ladders) {
    const bound = l.ladder.p99_bound_ms ?? 100;
    const svg = ladderChart({
      systems: l.systems, width, bound, tickRate: rateText, tickMs: msText,
      ariaLabel: `Capacity ladder of ${l.systems.length} systems: p99 and p50 latency against offered rate, log scales; highest rate held: ${l.systems.map((s) => `${s.system} ${s.maxHeld || 'none'}`).join(', ')}. The table below lists every figure.`,
    });
    const load = l.machine.load_average_1_5_15?.start;
    const caption = `${l.source} — ${l.startedAt}${load ? `, load average ${load.join(' ')} at the start` : ''}, ${l.ladder.connections ?? '?'} connections, ${l.ladder.seconds ?? '?'} s a rate`;
    let rows = '';
    for (const s of l.systems) {
      for (const p of s.points) {
        rows += `<tr data-ladder="${esc(p.name)}"><th scope="row">${esc(s.system)}${s.peer ? `<br><small>${esc(s.peer)}</small>` : ''}</th><td>${count(p.rate)}</td><td>${count(p.aa)} of ${count(p.sent)}</td>` +
          `<td>${msText(p.p50)}</td><td>${msText(p.p99)}</td><td>${msText(p.p999)}</td><td>${msText(p.max)}</td><td>${p.cpu === null ? '—' : p.cpu.toFixed(1)}</td>` +
          `<td class="${p.held ? 'ok' : 'no'}">${p.held ? 'held' : 'no'}</td></tr>`;
      }
    }
    const table = `<div class="table-wrap ladder-wrap" tabindex="0" role="region" aria-label="${esc(l.source)}: the ladder's figures"><table class="ladder-table"><caption>${esc(l.source)}: every system and rate</caption><thead><tr><th scope="col">system</th><th scope="col">offered msg/s</th><th scope="col">AA</th><th scope="col">p50</th><th scope="col">p99</th><th scope="col">p99.9</th><th scope="col">max</th><th scope="col">server CPU µs/msg</th><th scope="col">held</th></tr></thead><tbody>${rows}</tbody></table></div>`;
    html += `<figure class="ladder-block"><figcaption>${esc(caption)}</figcaption>${svg}</figure>${table}`;
  }
  $('ladders').innerHTML = html;
}

function renderTable(cases) {
  const targets = targetsShown();
  const ordered = state.view === 'ratio' ? [...sortByRatio(cases, state.sort), ...cases.filter((c) => !sortByRatio([c], state.sort).length)] : cases;
  // Checksums right after the name: a mismatch is the one figure that is an error.
  let head = '<thead><tr><th scope="col">case</th><th scope="col">checksums</th><th scope="col">input</th>';
  for (const t of targets) head += `<th scope="col">${TARGET_LABELS[t]} median</th><th scope="col">${TARGET_LABELS[t]} p99</th>`;
  head += '<th scope="col">Node / native</th><th scope="col">browser / native</th><th scope="col">allocs / call</th><th scope="col">peak</th><th scope="col">budget</th></tr></thead>';
  let body = '<tbody>';
  for (const c of ordered) {
    const problem = c.checksumsDiffer || c.errors.length;
    body += `<tr id="case-${esc(c.name)}" data-case="${esc(c.name)}"${problem ? ' class="problem"' : c.overBudget.length ? ' class="over"' : ''}>`;
    body += `<th scope="row">${problem ? '<span class="flag" aria-hidden="true">⚠ </span>' : ''}${esc(c.name)}${c.peer ? `<br><small>${esc(c.peer)}${c.peerRatio['wasm-node'] ? ` — ${ratio(c.peerRatio['wasm-node'])} quire's time in Node` : ''}</small>` : ''}</th>`;
    if (c.checksumsDiffer) body += `<td class="bad">differ:${c.targets.map((t) => `<br>${TARGET_LABELS[t]} <code>${esc(c.checksums[t])}</code>`).join('')}</td>`;
    else if (c.errors.length) body += `<td class="bad">${c.errors.map((e) => `${TARGET_LABELS[e.target]}: ${esc(e.error)}`).join('<br>')}</td>`;
    else body += `<td class="ok">${c.peer ? 'peer, not compared' : c.targets.length > 1 ? 'equal' : 'one target'}</td>`;
    body += `<td>${bytes(c.inputBytes)}</td>`;
    for (const t of targets) {
      const x = c.byTarget[t];
      body += x ? `<td>${x.error ? '<span class="bad">failed</span>' : duration(x.time_ns.median)}</td><td>${x.error ? '' : duration(x.time_ns.p99)}</td>` : '<td>—</td><td>—</td>';
    }
    const first = c.targets.map((t) => c.byTarget[t]).find((x) => x.alloc);
    body += `<td>${ratio(c.ratio['wasm-node'])}</td><td>${ratio(c.ratio['wasm-browser'])}</td>`;
    body += `<td>${count(first?.alloc?.calls_per_op)}</td><td>${bytes(first?.alloc?.peak_bytes)}</td>`;
    const budget = Object.values(c.budget)[0];
    body += `<td>${!budget ? '—' : c.overBudget.length ? `<span class="bad">over on ${c.overBudget.map((t) => TARGET_LABELS[t]).join(', ')}</span> (${bytes(budget.limit)})` : `within (${budget.factor}×)`}</td>`;
    body += '</tr>';
  }
  body += '</tbody>';
  $('cases-table').innerHTML = `<caption>${ordered.length} of ${state.model.cases.length} cases${state.view === 'ratio' ? ', by wasm / native ratio' : ''}</caption>${head}${body}`;
  return ordered.length;
}

function renderRuns() {
  const rows = state.model.runs.map((r) => {
    const s = r.startup;
    return `<tr><th scope="row">${esc(runLabel(r))}</th><td>${esc(r.source)}</td><td>${esc(`${r.runtime.name ?? ''} ${r.runtime.version && r.runtime.version !== r.runtime.name ? r.runtime.version : ''}`)}</td><td><code>${esc((r.build.commit ?? '').slice(0, 10))}</code>${r.build.dirty ? ' (dirty)' : ''}</td><td>${esc(r.startedAt)}</td><td>${esc(r.machine.cpu ?? '')}</td><td>${r.caseCount}</td><td>${millis(s.process_start_ms)}</td><td>${millis(s.import_ms)}</td><td>${millis(s.instantiate_ms)}</td><td>${bytes(s.artifact_bytes)}</td><td>${bytes(s.artifact_gzip_bytes)}</td></tr>`;
  });
  // The loopback readings (capacity ladders) are runs too: no start-up figures.
  for (const l of state.model.ladders) {
    rows.push(`<tr><th scope="row">${esc(LADDER_TARGET)}</th><td>${esc(l.source)}</td><td>${esc(`${l.runtime.name ?? ''} ${l.runtime.version ?? ''}`)}</td><td><code>${esc((l.build.commit ?? '').slice(0, 10))}</code>${l.build.dirty ? ' (dirty)' : ''}</td><td>${esc(l.startedAt)}</td><td>${esc(l.machine.cpu ?? '')}</td><td>${l.caseCount}</td><td>—</td><td>—</td><td>—</td><td>—</td><td>—</td></tr>`);
  }
  $('runs-table').innerHTML = `<thead><tr><th scope="col">run</th><th scope="col">file</th><th scope="col">runtime</th><th scope="col">commit</th><th scope="col">started</th><th scope="col">cpu</th><th scope="col">cases</th><th scope="col">process start</th><th scope="col">import</th><th scope="col">compile + instantiate</th><th scope="col">artifact</th><th scope="col">gzipped</th></tr></thead><tbody>${rows.join('')}</tbody>`;
}

function renderAlerts(loadErrors = []) {
  const m = state.model;
  let html = '';
  const list = (names) => names.map((n) => `<a href="#case-${esc(n)}">${esc(n)}</a>`).join(', ');
  if (m.mismatches.length) html += `<p class="alert error"><strong>Checksums differ between targets</strong> for ${m.mismatches.length} case${m.mismatches.length === 1 ? '' : 's'}: ${list(m.mismatches)}. The same case must compute the same result everywhere.</p>`;
  if (m.failed.length) html += `<p class="alert error"><strong>Failed</strong> on some target: ${list(m.failed)}.</p>`;
  // Advisory, and possibly many: a few names, then one control that filters the table to them, so
  // that a keyboard user does not tab through dozens of links before the page's controls.
  if (m.overBudget.length) {
    const named = m.overBudget.slice(0, BUDGET_ALERT_NAMES);
    const more = m.overBudget.length - named.length;
    html += `<p class="alert warn"><strong>Over the advisory memory budget</strong> (${m.overBudget.length}): ${list(named)}${more ? ` and ${more} more` : ''}. <button type="button" id="show-problems">Show only problems</button></p>`;
  }
  if (m.duplicates.length) html += `<p class="alert warn">A case appears in two readings of one target (the later file wins): ${esc(m.duplicates.slice(0, 5).join('; '))}${m.duplicates.length > 5 ? '…' : ''}</p>`;
  for (const e of loadErrors) html += `<p class="alert error">${esc(e)}</p>`;
  $('alerts').innerHTML = html;
  $('show-problems')?.addEventListener('click', () => {
    $('problems').checked = true;
    state.filter.problems = true;
    render();
    $('cases-table').scrollIntoView();
  });
}

// How many cases over the memory budget the alert names before "and N more".
const BUDGET_ALERT_NAMES = 5;

function fillFilters() {
  const m = state.model;
  const moduleSel = $('module');
  if (!m.modules.includes(state.filter.module)) state.filter.module = '';
  moduleSel.innerHTML = `<option value="">all</option>${m.modules.map((x) => `<option${x === state.filter.module ? ' selected' : ''}>${esc(x)}</option>`).join('')}`;
  const ops = m.ops.filter((o) => !state.filter.module || o.split('.')[0] === state.filter.module);
  if (!ops.includes(state.filter.op)) state.filter.op = '';
  $('op').innerHTML = `<option value="">all</option>${ops.map((x) => `<option${x === state.filter.op ? ' selected' : ''}>${esc(x)}</option>`).join('')}`;
}

function render() {
  if (!state.model) return;
  const t0 = performance.now();
  performance.mark('dashboard:render:start');
  const cases = filterCases(state.model.cases, state.filter);
  renderCharts(cases);
  const t1 = performance.now();
  // The table depends on the cases and their order only: a scale or view switch keeps it.
  const key = `${state.view === 'ratio' ? `ratio:${state.sort}` : 'name'}|${cases.length}|${cases[0]?.name}|${cases.at(-1)?.name}`;
  let rows = stats.rows;
  if (key !== state.tableKey || state.model !== state.tableModel) {
    rows = renderTable(cases);
    state.tableKey = key;
    state.tableModel = state.model;
  }
  stats.chartsMs = t1 - t0;
  stats.tableMs = performance.now() - t1;
  performance.mark('dashboard:render:end');
  performance.measure('dashboard:render', 'dashboard:render:start', 'dashboard:render:end');
  stats.renders += 1;
  stats.renderMs = performance.now() - t0;
  stats.cases = cases.length;
  stats.rows = rows;
  stats.view = state.view;
  renderLadders();
  $('status').textContent = `${cases.length} of ${state.model.cases.length} cases shown (drawn in ${stats.renderMs.toFixed(0)} ms).`;
}

function setReadings(readings, { dropped, loadErrors = [] }) {
  state.readings = readings;
  state.dropped = dropped;
  state.model = buildModel(readings);
  const files = readings.map((r) => r.source);
  $('source-line').innerHTML = readings.length
    ? `${dropped ? 'Showing the files you opened' : 'Showing the checked-in readings'}: ${files.map((f) => `<code>${esc(f)}</code>`).join(', ')} — ${state.model.cases.length} cases on ${targetsShown().map((t) => TARGET_LABELS[t]).join(', ')}.`
    : 'No readings loaded.';
  $('defaults').hidden = !dropped;
  fillFilters();
  renderAlerts(loadErrors);
  renderRuns();
  render();
  stats.loaded = true;
  document.documentElement.dataset.loaded = dropped ? 'dropped' : 'defaults';
}

async function loadDefaults() {
  const loadErrors = [];
  const readings = [];
  try {
    const res = await fetch('../readings/index.json');
    if (!res.ok) throw new Error(`the server's list of readings: HTTP ${res.status}`);
    const index = await res.json();
    const texts = await Promise.all(index.readings.map(async (entry) => {
      const r = await fetch(`../readings/${entry.path.split('/').map(encodeURIComponent).join('/')}`);
      return { entry, ok: r.ok, status: r.status, text: r.ok ? await r.text() : '' };
    }));
    for (const { entry, ok, status, text } of texts) {
      if (!ok) {
        loadErrors.push(`${entry.path}: HTTP ${status}`);
        continue;
      }
      try {
        const reading = JSON.parse(text);
        const why = checkReading(reading);
        if (why) loadErrors.push(`${entry.path}: ${why}`);
        else readings.push({ source: entry.path, run: entry.run, reading });
      } catch (e) {
        loadErrors.push(`${entry.path}: not JSON (${e.message})`);
      }
    }
  } catch (e) {
    loadErrors.push(`Cannot load the checked-in readings: ${e.message}. Open reading files instead.`);
  }
  setReadings(readings, { dropped: false, loadErrors });
}

async function openFiles(fileList) {
  const files = [...fileList];
  if (!files.length) return;
  const loadErrors = [];
  const readings = [];
  for (const f of files) {
    try {
      const reading = JSON.parse(await f.text());
      const why = checkReading(reading);
      if (why) loadErrors.push(`${f.name}: ${why}`);
      else readings.push({ source: f.name, run: '', reading });
    } catch (e) {
      loadErrors.push(`${f.name}: not JSON (${e.message})`);
    }
  }
  if (!readings.length) {
    renderAlerts(loadErrors.length ? loadErrors : ['No reading in those files.']);
    return;
  }
  setReadings(readings, { dropped: true, loadErrors });
}

function wire() {
  for (const input of document.querySelectorAll('input[name="view"]')) {
    input.addEventListener('change', () => { state.view = input.value; render(); });
  }
  for (const input of document.querySelectorAll('input[name="scale"]')) {
    input.addEventListener('change', () => { state.log = input.value === 'log'; render(); });
  }
  for (const input of document.querySelectorAll('input[name="sort"]')) {
    input.addEventListener('change', () => { state.sort = input.value; render(); });
  }
  $('module').addEventListener('change', (e) => { state.filter.module = e.target.value; fillFilters(); render(); });
  $('op').addEventListener('change', (e) => { state.filter.op = e.target.value; render(); });
  let typing;
  $('text').addEventListener('input', (e) => {
    clearTimeout(typing);
    typing = setTimeout(() => { state.filter.text = e.target.value; render(); }, 120);
  });
  $('peers').addEventListener('change', (e) => { state.filter.peers = e.target.checked; render(); });
  $('problems').addEventListener('change', (e) => { state.filter.problems = e.target.checked; render(); });
  $('files').addEventListener('change', (e) => { openFiles(e.target.files); e.target.value = ''; });
  $('defaults').addEventListener('click', () => loadDefaults());
  // Drop anywhere on the page.
  let depth = 0;
  document.addEventListener('dragenter', (e) => { e.preventDefault(); depth += 1; document.body.classList.add('dragging'); });
  document.addEventListener('dragleave', () => { depth = Math.max(0, depth - 1); if (!depth) document.body.classList.remove('dragging'); });
  document.addEventListener('dragover', (e) => e.preventDefault());
  document.addEventListener('drop', (e) => {
    e.preventDefault();
    depth = 0;
    document.body.classList.remove('dragging');
    if (e.dataTransfer?.files?.length) openFiles(e.dataTransfer.files);
  });
  let resizing;
  window.addEventListener('resize', () => {
    clearTimeout(resizing);
    resizing = setTimeout(() => { if (state.model && chartWidth() !== state.drawnWidth) render(); }, 150);
  });
}

wire();
loadDefaults();
