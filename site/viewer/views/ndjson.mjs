// The NDJSON view: one pass over the file in slices, in the background, with progress and
// cancel, that builds the line index and feeds the package's ndjson.stream (core parses and
// validates every line: counts by resourceType, per-line parse errors and validation issues);
// a grid of the lines; jump to a line; one line opened in the FHIR view (inline, or on its own);
// convert to .quire with the package's NDJSON writer (the plain flattening) or through a SQL on
// FHIR ViewDefinition (core's view writer, fed slice by slice), download it and open it.
import { createGrid } from '../grid.mjs';
import { mount as mountFhir } from './fhir.mjs';
import { LineIndex, UncheckedNotes, trimLineEnd, uncheckedText } from './ndjson-model.mjs';
import { el, errorLine, quireName, slices, useStyle } from './kinds-common.mjs';

/** Issues kept for the list (each line's count is kept whatever this is). */
const MAX_LISTED_ISSUES = 2000;

export async function mount(shellCtx) {
  useStyle('./kinds.css');
  // Unmounting stops this view's background pass too, not only the shell's Cancel.
  const stop = new AbortController();
  const ctx = {
    ...shellCtx,
    get signal() {
      return AbortSignal.any ? AbortSignal.any([shellCtx.signal, stop.signal]) : shellCtx.signal;
    },
  };
  const pkg = await ctx.pkg;
  const source = ctx.source;
  let index = new LineIndex();
  const typeNames = [];
  const typeIds = new Map();
  let lineType = new Int32Array(1024).fill(-1); // line -> index in typeNames, -1 none
  const lineId = []; // line -> id
  const lineIssues = new Map(); // line -> number of issues and errors
  const listed = []; // { line, severity, code, text }
  // Core reports each invariant it cannot evaluate once per validation, so once per line here:
  // those fold into one note per reason for the file; the real issues stay listed by line.
  const unchecked = new UncheckedNotes();
  let stats = null;
  let state = 'indexing';
  let child = null; // the inline FHIR view

  const status = el('p', { class: 'kn-status', role: 'status', 'data-testid': 'ndjson-status' }, 'Indexing…');
  const counts = el('table', { class: 'kn-counts', 'data-testid': 'ndjson-counts' });
  const notesBox = el('ul', { class: 'kn-notes', 'aria-label': 'Invariants not checked', 'data-testid': 'ndjson-unchecked' });
  const issuesBox = el('ul', { class: 'kn-issues', 'aria-label': 'Line issues', 'data-testid': 'ndjson-issues' });
  const jumpInput = el('input', { type: 'number', min: '1', inputmode: 'numeric', 'aria-label': 'Line number', class: 'kn-jump', 'data-testid': 'ndjson-jump' });
  const convertButton = el('button', { type: 'button', 'data-testid': 'ndjson-convert', disabled: true }, 'Convert to .quire');
  // ViewDefinitions (SQL on FHIR v2) when the package has its `view` module: a definition picked
  // from the built-in examples, pasted or opened shapes the table, with an index per column if
  // wanted; left empty, the plain flattening.
  const hasViews = Boolean(pkg.view && typeof pkg.view.compile === 'function');
  const viewText = el('textarea', { rows: '6', class: 'kn-viewdef', spellcheck: 'false', 'aria-label': 'ViewDefinition (JSON)', placeholder: '{"resource": "Patient", "select": [{"column": [{"name": "id", "path": "id"}]}]}', 'data-testid': 'ndjson-viewdef' });
  const viewFile = el('input', { type: 'file', accept: '.json,application/json', 'aria-label': 'Open a ViewDefinition file' });
  const examplePick = el('select', { 'aria-label': 'Built-in ViewDefinition', 'data-testid': 'ndjson-view-example' });
  const viewError = el('p', { class: 'kn-error kn-view-error', role: 'alert', hidden: true, 'data-testid': 'ndjson-view-error' });
  const viewColumns = el('div', { class: 'kn-view-columns', 'data-testid': 'ndjson-view-columns' });
  const viewBox = el('details', { class: 'kn-view-def', open: hasViews, hidden: !hasViews, 'data-testid': 'ndjson-view-box' },
    el('summary', {}, 'Convert through a ViewDefinition'),
    el('div', { class: 'kn-actions' }, el('label', {}, 'Example: ', examplePick), el('label', {}, 'or open one: ', viewFile)),
    viewText, viewError, viewColumns);
  const views = createViewChooser();
  const resumeButton = el('button', { type: 'button', hidden: true, 'data-testid': 'ndjson-resume' }, 'Index again');
  // The last conversion's file, to open in the .quire view (the shell swaps the views).
  let result = null;
  const openResultButton = el('button', { type: 'button', hidden: true, 'data-testid': 'ndjson-open-quire', onclick: () => result && ctx.open(result) }, 'Open the .quire');
  const detail = el('section', { class: 'kn-detail', 'aria-label': 'Selected line', 'data-testid': 'ndjson-detail' });
  const gridBox = el('div', { class: 'kn-grid' });
  ctx.root.replaceChildren(el('div', { class: 'kn-view' },
    el('header', { class: 'kn-head' }, status,
      el('div', { class: 'kn-actions' },
        el('form', { class: 'kn-jump-form', onsubmit: (e) => { e.preventDefault(); jumpTo(Number(jumpInput.value)); } },
          el('label', {}, 'Line ', jumpInput), el('button', { type: 'submit' }, 'Go')),
        convertButton, openResultButton, resumeButton), viewBox),
    el('div', { class: 'kn-side' }, el('section', { 'aria-label': 'Resources by type' }, el('h3', {}, 'By resourceType'), counts),
      el('section', { 'aria-label': 'Issues' }, el('h3', {}, 'Issues'), notesBox, issuesBox)),
    gridBox, detail));

  const grid = createGrid(gridBox, {
    label: `${source.name}: lines`,
    // The long id last, so the short columns stay in sight on a narrow grid.
    columns: [{ name: 'resourceType', type: 'string' }, { name: 'issues', type: 'integer' }, { name: 'bytes', type: 'integer' }, { name: 'id', type: 'string' }],
    rowCount: 0,
    getRows: async (start, count) => {
      const rows = [];
      for (let i = start; i < Math.min(start + count, index.count); i++) {
        const n = i + 1;
        const t = n < lineType.length ? lineType[n] : -1;
        const r = index.range(n, source.size);
        rows.push([t >= 0 ? typeNames[t] : '', lineIssues.has(n) ? String(lineIssues.get(n)) : '', String(r[1] - r[0]), lineId[n] ?? '']);
      }
      return rows;
    },
    onSelect: (row) => showLine(row + 1),
  });

  function typeIndex(name) {
    let t = typeIds.get(name);
    if (t === undefined) {
      t = typeNames.length;
      typeNames.push(name);
      typeIds.set(name, t);
    }
    return t;
  }

  function setType(line, name) {
    if (line >= lineType.length) {
      let size = lineType.length;
      while (size <= line) size *= 2;
      const grown = new Int32Array(size).fill(-1);
      grown.set(lineType);
      lineType = grown;
    }
    lineType[line] = typeIndex(name);
  }

  function note(line, severity, code, text) {
    lineIssues.set(line, (lineIssues.get(line) ?? 0) + 1);
    if (listed.length >= MAX_LISTED_ISSUES) return;
    listed.push({ line, severity, code, text });
    // Core's message of an unreadable line starts with its code: show the code once, in bold.
    const rest = text.startsWith(code) ? text.slice(code.length) : ` ${text}`;
    issuesBox.append(el('li', {}, el('button', { type: 'button', class: `kn-issue kn-${severity}`, onclick: () => jumpTo(line) },
      `line ${line}: `, el('strong', {}, code), rest)));
  }

  function drawUnchecked() {
    notesBox.replaceChildren(...unchecked.notes().map((n) => el('li', { class: 'kn-note' }, uncheckedText(n))));
  }

  function drawCounts() {
    const byType = stats?.byType ?? {};
    const rows = Object.entries(byType).sort((a, b) => b[1] - a[1] || (a[0] < b[0] ? -1 : 1));
    views.counted(byType);
    counts.replaceChildren(el('thead', {}, el('tr', {}, el('th', { scope: 'col' }, 'resourceType'), el('th', { scope: 'col' }, 'resources'))),
      el('tbody', {}, rows.map(([type, n]) => el('tr', { 'data-type': type }, el('td', {}, type), el('td', { class: 'num' }, String(n))))));
  }

  function drawStatus() {
    const s = stats;
    const parts = [`${index.count} lines`];
    if (s) parts.push(`${s.resources} resources`, `${s.badLines} unreadable lines`, `${s.invalidResources} invalid resources`, `${s.issues} issues`);
    const what = state === 'indexing' ? 'Indexing… ' : state === 'cancelled' ? 'Indexing cancelled (the lines so far are usable): ' : '';
    status.textContent = `${what}${parts.join(' · ')}`;
    status.dataset.state = state;
  }

  async function build() {
    // A pass starts from the top: the index, counts and issues are rebuilt, not appended to.
    index = new LineIndex();
    lineType.fill(-1);
    lineId.length = 0;
    lineIssues.clear();
    listed.length = 0;
    unchecked.clear();
    notesBox.replaceChildren();
    issuesBox.replaceChildren();
    grid.setRowCount(0);
    state = 'indexing';
    resumeButton.hidden = true;
    convertButton.disabled = true;
    drawStatus();
    // Each slice goes to the line index and on to core's stream, in file order.
    const feed = (async function* () {
      for await (const part of slices(ctx, `Indexing ${source.name}`)) {
        index.push(part);
        yield part;
      }
    })();
    const stream = pkg.ndjson.stream(feed, { continueOnError: true });
    let lastDraw = 0;
    const redraw = () => {
      stats = stream.stats;
      grid.setRowCount(index.count);
      grid.refresh();
      drawStatus();
      drawCounts();
      drawUnchecked();
    };
    try {
      for await (const item of stream) {
        if (item.resource) {
          if (typeof item.resource.resourceType === 'string') setType(item.line, item.resource.resourceType);
          if (typeof item.resource.id === 'string') lineId[item.line] = item.resource.id;
        } else if (item.issue) {
          const i = item.issue;
          if (!unchecked.add(item.line, i)) note(item.line, i.severity, i.code, `${i.expression} (column ${i.column}): ${i.details}`);
        } else if (item.error) {
          note(item.line, 'error', item.error.code, errorLine(item.error));
        }
        const now = performance.now();
        if (now - lastDraw > 100) {
          lastDraw = now;
          redraw();
        }
      }
      state = 'done';
    } catch (err) {
      if (err?.name === 'AbortError') state = 'cancelled';
      else {
        state = 'failed';
        ctx.showError(err);
      }
    }
    redraw();
    convertButton.disabled = false;
    resumeButton.hidden = state === 'done';
    const wanted = Number(ctx.hash?.get('line'));
    if (wanted) jumpTo(wanted);
    return state;
  }

  function jumpTo(n) {
    if (!Number.isInteger(n) || n < 1 || n > index.count) {
      status.textContent = `No line ${n} (${index.count} lines indexed).`;
      return;
    }
    grid.scrollToRow(n - 1);
    grid.select(n - 1);
    showLine(n);
  }

  async function lineBytes(n) {
    const r = index.range(n, source.size);
    return trimLineEnd(await source.read(r[0], r[1]));
  }

  async function showLine(n) {
    ctx.hash?.set('line', n);
    child?.unmount();
    child = null;
    const bytes = await lineBytes(n);
    const own = listed.filter((i) => i.line === n);
    const name = `${source.name} line ${n}`;
    const lineSource = { name, kind: 'fhir', size: bytes.length, read: async (s, e) => bytes.slice(s, e) };
    const fhirBox = el('div', { class: 'kn-fhir' });
    detail.replaceChildren(
      el('h3', {}, `Line ${n}`),
      own.length ? el('ul', { class: 'kn-line-issues' }, own.map((i) => el('li', { class: `kn-${i.severity}` }, el('strong', {}, i.code), ` ${i.text}`))) : '',
      el('div', { class: 'kn-actions' },
        el('button', { type: 'button', 'data-testid': 'ndjson-open-inline', onclick: () => openInline(lineSource, fhirBox) }, 'Show as FHIR here'),
        el('button', { type: 'button', 'data-testid': 'ndjson-open', onclick: () => ctx.open(lineSource) }, 'Open in the FHIR view')),
      fhirBox);
  }

  async function openInline(lineSource, box) {
    child?.unmount();
    child = null;
    try {
      child = await mountFhir({ ...ctx, root: box, source: lineSource, hash: { get: () => null, set: () => {} } });
    } catch (err) {
      box.replaceChildren(el('p', { class: 'kn-error', role: 'alert' }, errorLine(err)));
    }
  }

  convertButton.addEventListener('click', async () => {
    convertButton.disabled = true;
    openResultButton.hidden = true;
    result = null;
    const name = quireName(source.name);
    let throughView = false;
    try {
      let bytes;
      throughView = hasViews && viewText.value.trim() !== '';
      if (throughView) {
        // Through the view: core's view writer takes the file a slice at a time (the wasm heap
        // holds one slice, the writer's state and the output since the last slice).
        const compiled = views.compiled();
        if (!compiled) return;
        bytes = await compiled.toQuire(slices(ctx, `Converting ${source.name} through ${compiled.name || 'the view'}`), { indexes: views.indexes() });
      } else {
        bytes = await pkg.format.writeStream(slices(ctx, `Converting ${source.name} to .quire`), { from: 'ndjson' });
      }
      const blob = new Blob([bytes], { type: 'application/octet-stream' });
      await ctx.download(name, blob);
      result = { name, size: blob.size, blob, read: async (s, e) => new Uint8Array(await blob.slice(s, e).arrayBuffer()) };
      openResultButton.hidden = false;
      status.textContent = `Converted: ${name}, ${bytes.length} bytes.`;
    } catch (err) {
      if (err?.name === 'AbortError') status.textContent = 'Conversion cancelled.';
      else {
        if (throughView) views.showError(err);
        ctx.showError(err);
      }
    } finally {
      ctx.progress(null);
      convertButton.disabled = false;
    }
  });

  /**
   * The ViewDefinition box: the built-in examples (views/view-examples.json) listed with the
   * file's own resourceTypes first, the definition compiled by core as it is typed (its error
   * code, path and message shown here, the NDJSON untouched), one index choice per column.
   */
  function createViewChooser() {
    let examples = [];
    let byType = {};
    let compiled = null;
    let compiledText = null;
    let timer = 0;
    const chosen = new Map(); // column -> index kind, kept across edits of the definition
    if (hasViews) {
      fetch(new URL('./view-examples.json', import.meta.url))
        .then((r) => r.json())
        .then((data) => {
          examples = data.examples ?? [];
          drawExamples();
        })
        .catch(() => {}); // the box still takes a pasted definition
    }
    function drawExamples() {
      const has = (e) => (byType[e.definition.resource] ?? 0) > 0;
      const order = [...examples.keys()].sort((a, b) => Number(has(examples[b])) - Number(has(examples[a])) || a - b);
      const keep = examplePick.value;
      examplePick.replaceChildren(el('option', { value: '' }, '(none: paste or open one)'),
        ...order.map((i) => {
          const e = examples[i];
          const n = byType[e.definition.resource];
          return el('option', { value: String(i) }, `${e.label} — ${e.definition.resource}${n ? ` (${n} in this file)` : ' (none in this file)'}`);
        }));
      examplePick.value = keep;
    }
    examplePick.addEventListener('change', () => {
      const e = examples[Number(examplePick.value)];
      if (!examplePick.value || !e) return;
      viewText.value = JSON.stringify(e.definition, null, 2);
      chosen.clear();
      for (const [column, kind] of Object.entries(e.indexes ?? {})) chosen.set(column, kind);
      check();
    });
    viewFile.addEventListener('change', async () => {
      const f = viewFile.files?.[0];
      if (f) viewText.value = await f.text();
      viewFile.value = '';
      examplePick.value = '';
      check();
    });
    viewText.addEventListener('input', () => {
      // Until the pause in typing ends, what the box says (error, columns) is of the text before.
      viewBox.dataset.state = 'editing';
      clearTimeout(timer);
      timer = setTimeout(check, 250);
    });
    function showError(err) {
      const parts = [];
      if (err && typeof err === 'object' && 'code' in err) {
        // Core's message starts with its code: the code once, in bold, then the rest as core wrote it.
        const line = errorLine(err);
        parts.push(el('strong', {}, err.code), line.startsWith(err.code) ? line.slice(err.code.length) : ` ${line}`);
        if (err.path) parts.push(el('br'), 'in the view at ', el('code', { 'data-testid': 'ndjson-view-error-path' }, err.path));
      } else parts.push(errorLine(err));
      viewError.replaceChildren(...parts);
      viewError.dataset.code = err?.code ?? '';
      viewError.hidden = false;
    }
    function drawColumns() {
      if (!compiled) return viewColumns.replaceChildren();
      const kinds = ['', 'hash', 'sorted', 'text'];
      viewColumns.replaceChildren(
        el('p', {}, `${compiled.resource} → ${compiled.columns.length} columns; an index on a column makes find and filters on it read less:`),
        el('ul', { class: 'kn-view-cols' }, compiled.columns.map((c) => {
          const pick = el('select', { 'aria-label': `Index on ${c.name}`, 'data-column': c.name },
            kinds.map((k) => el('option', { value: k }, k || 'no index')));
          pick.value = chosen.get(c.name) ?? '';
          pick.addEventListener('change', () => (pick.value ? chosen.set(c.name, pick.value) : chosen.delete(c.name)));
          return el('li', {}, el('label', {}, el('code', {}, c.name), ' ', c.type ? el('span', { class: 'kn-type' }, `${c.type}${c.collection ? '[]' : ''}`) : '', ' ', pick));
        })));
    }
    /** Compiles the box's definition if it changed; null (and the error shown) when core refuses it. */
    function check() {
      clearTimeout(timer);
      const textNow = viewText.value.trim();
      if (textNow === compiledText) {
        viewBox.dataset.state = compiled ? 'compiled' : textNow ? 'refused' : 'empty';
        return compiled;
      }
      compiled?.close();
      compiled = null;
      compiledText = textNow;
      viewError.hidden = true;
      convertButton.textContent = textNow ? 'Convert to .quire through the view' : 'Convert to .quire';
      if (textNow) {
        try {
          compiled = pkg.view.compile(textNow);
        } catch (err) {
          showError(err);
        }
      }
      drawColumns();
      viewBox.dataset.state = compiled ? 'compiled' : textNow ? 'refused' : 'empty';
      return compiled;
    }
    return {
      counted(types) {
        byType = types;
        if (examples.length) drawExamples();
      },
      compiled: check,
      showError,
      /** The chosen indexes of the compiled view's columns, in the package's form. */
      indexes() {
        const names = new Set(compiled?.columns.map((c) => c.name));
        return [...chosen].filter(([c]) => names.has(c)).map(([column, kind]) => ({ column, kind }));
      },
      close() {
        clearTimeout(timer);
        compiled?.close();
        compiled = null;
      },
    };
  }
  let done = build();
  resumeButton.addEventListener('click', () => {
    done = build();
    api.indexed = done;
  });

  const api = {
    unmount() {
      stop.abort();
      views.close();
      child?.unmount();
      grid.destroy?.();
      ctx.root.replaceChildren();
    },
    /** Resolves with 'done', 'cancelled' or 'failed' when the first pass ends (tests wait on it). */
    indexed: done,
  };
  return api;
}
