// The .quire view: the file opened in a Worker (quire-worker.mjs) by ranges, never read whole;
// panels for the schema, the footer's facts, storage by column and index (core's StorageReport),
// chunk statistics, find by key, a filter builder beside an expression box, text search, explain
// (core's ExplainReport, analyzed) and export; the matching rows in the virtualised grid. Every
// figure and message is core's, shown as the package returns it. State in the URL hash: `q` (the
// filter: expression text or the object form's JSON), `row` (the selected row), `find` (col=key).
// A sealed file (version 2) asks for its key first (askForKey): a key file or a passphrase, kept
// in the page and its worker; a partition's key shows that partition's rows and says so.
// A listener's store (the rows of quire listen and hl7.listen, listen-model.mjs) opens as a list
// of its messages instead (listen.mjs), each opened in the HL7 v2 view; `as=table` in the hash
// (or its button) shows this table of every column.
import { createGrid } from '../grid.mjs';
import { LINE_COLUMNS, isListenerSchema } from './listen-model.mjs';
import { filterOfText } from './kinds-common.mjs';
import { compiled } from '../wasm.mjs';

const PKG_URL = new URL('/pkg/index.js', location.href).href;
const WORKER_URL = new URL('../quire-worker.mjs', import.meta.url);

/** The worker and its calls; restart() terminates it and reopens the same source (a hard cancel). */
// A worker made before its file's kind was known (prewarm), taken by the next view that opens.
let warm = null;

function makeWorker() {
  return new Worker(WORKER_URL, { type: 'module', name: 'quire' });
}

/** Makes the worker and starts the package's module in it now, while the page detects the file's
 * kind: a .quire file's first rows then wait for the open alone (the worker's start and the
 * module's compile and start take about as long as the rest of the open). */
export function prewarm() {
  if (warm) return;
  const worker = (warm = makeWorker());
  compiled().then(
    (module) => worker.postMessage({ id: 0, op: 'start', args: { pkgUrl: PKG_URL, module } }),
    () => {}, // the open reports it
  );
}

class Client {
  constructor(source) {
    this.source = source;
    this.next = 1;
    this.pending = new Map();
    this.worker = null;
    this.keys = null; // a sealed file's { key } or { passphrase }: kept here and in the worker only
  }
  spawn() {
    this.worker = warm ?? makeWorker();
    warm = null;
    this.worker.onmessage = (e) => {
      const { id, ok, value, error, chunk } = e.data;
      const p = this.pending.get(id);
      if (!p) return;
      if (chunk !== undefined) return p.onChunk?.(chunk, e.data.done, e.data.total);
      this.pending.delete(id);
      if (ok) p.resolve(value);
      else p.reject(Object.assign(new Error(error.message), { code: error.code, name: error.code === 'AbortError' ? 'AbortError' : 'QuireError' }));
    };
    this.worker.onerror = (e) => {
      for (const p of this.pending.values()) p.reject(Object.assign(new Error(e.message || 'the worker failed'), { code: 'WORKER_ERROR' }));
      this.pending.clear();
    };
  }
  async open() {
    if (!this.worker) this.spawn();
    const s = this.source;
    return this.call('open', { blob: s.blob, url: s.blob ? undefined : s.url, size: s.size, pkgUrl: PKG_URL, module: await compiled(), ...this.keys });
  }
  call(op, args, { onChunk, signal } = {}) {
    const id = this.next++;
    return new Promise((resolve, reject) => {
      this.pending.set(id, { resolve, reject, onChunk });
      if (signal) {
        if (signal.aborted) return this.abort(id, op);
        signal.addEventListener('abort', () => this.pending.has(id) && this.abort(id, op), { once: true });
      }
      this.worker.postMessage({ id, op, args });
    });
  }
  abort(id, op) {
    if (op === 'export') {
      this.worker.postMessage({ id: 0, op: 'cancel', args: { id } });
      return;
    }
    // Core's calls are synchronous in the worker: the only way to stop one is to end the worker.
    // The source is kept, so the file opens again (its footer: a few hundred bytes).
    const stopped = [...this.pending.values()];
    this.pending.clear();
    this.worker.terminate();
    this.worker = null;
    for (const p of stopped) p.reject(Object.assign(new Error('cancelled'), { name: 'AbortError', code: 'CANCELLED' }));
    this.reopened = this.open();
  }
  close() {
    this.worker?.terminate();
    this.worker = null;
  }
}

function el(tag, attrs = {}, ...children) {
  const e = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs)) {
    if (k === 'class') e.className = v;
    else if (k === 'text') e.textContent = v;
    else if (k.startsWith('on')) e.addEventListener(k.slice(2), v);
    else if (v !== undefined && v !== null && v !== false) e.setAttribute(k, v === true ? '' : v);
  }
  e.append(...children.filter((c) => c !== null && c !== undefined));
  return e;
}

/**
 * A table of objects: `cols` as [key, heading, numeric?]; values shown as core wrote them. A table
 * of more than four columns stacks each row's cells under their headings on a narrow screen
 * (viewer.css), where it would be wider than its panel.
 */
function table(rows, cols, caption) {
  const t = el('table', { class: cols.length > 4 ? 'stack' : '' });
  if (caption) t.append(el('caption', { class: 'visually-hidden', text: caption }));
  t.append(el('thead', {}, el('tr', {}, ...cols.map(([, h, num]) => el('th', { class: num ? 'num' : '', scope: 'col', text: h })))));
  const body = el('tbody');
  for (const r of rows) {
    body.append(el('tr', {}, ...cols.map(([k, heading, num]) => {
      const v = typeof k === 'function' ? k(r) : r[k];
      return el('td', { class: num ? 'num' : '', 'data-label': heading, text: v === null || v === undefined ? '—' : typeof v === 'object' ? JSON.stringify(v) : String(v) });
    })));
  }
  t.append(body);
  return el('div', { class: 'scroll' }, t);
}

/**
 * Asks for a sealed file's key in a modal dialog: a key file (the picker; its bytes are read here)
 * or the owner's passphrase. Resolves to { key } or { passphrase }, or null when cancelled. The key
 * goes to the view's worker and nowhere else: the page sends nothing to any server.
 */
let asks = 0; // dialogs shown, for the tests (dataset.ask): a new one is a new question

function askForKey(name, message) {
  return new Promise((resolve) => {
    const keyFile = el('input', { type: 'file', id: 'key-file', 'aria-describedby': 'key-help' });
    const passphrase = el('input', { type: 'password', id: 'key-passphrase', autocomplete: 'off', 'aria-describedby': 'key-help' });
    const note = el('p', { id: 'key-message', class: message ? 'key-error' : 'muted', role: message ? 'alert' : null, text: message ?? '' });
    const form = el('form', { id: 'key-form' },
      el('h2', { id: 'key-title', text: `${name} is sealed` }),
      el('p', { id: 'key-help', text: "It opens with a key file — the owner's, or one partition's, which shows that partition only — or with the owner's passphrase. The key stays in this page: nothing is sent anywhere." }),
      el('label', { for: 'key-file', text: 'Key file' }), keyFile,
      el('label', { for: 'key-passphrase', text: 'or passphrase' }), passphrase,
      note,
      el('div', { class: 'controls' }, el('button', { type: 'submit', id: 'key-open', text: 'Open' }), el('button', { type: 'button', id: 'key-cancel', text: 'Cancel' })));
    const dialog = el('dialog', { id: 'key-dialog', 'aria-labelledby': 'key-title', 'data-ask': String(++asks) }, form);
    let answered = false;
    const finish = (value) => {
      if (answered) return;
      answered = true;
      dialog.close();
      dialog.remove();
      resolve(value);
    };
    form.addEventListener('submit', async (e) => {
      e.preventDefault();
      const file = keyFile.files?.[0];
      if (file) return finish({ key: new Uint8Array(await file.arrayBuffer()) });
      if (passphrase.value) return finish({ passphrase: passphrase.value });
      note.className = 'key-error';
      note.setAttribute('role', 'alert');
      note.textContent = 'Choose a key file or type the passphrase.';
    });
    form.querySelector('#key-cancel').addEventListener('click', () => finish(null));
    dialog.addEventListener('cancel', (e) => {
      e.preventDefault();
      finish(null);
    });
    document.body.append(dialog);
    dialog.showModal();
    (message ? passphrase : keyFile).focus();
  });
}

/** What the dialog says when a key did not open the file (core's message follows the code). */
function keyRefusal(err, name) {
  if (err.code === 'WRONG_KEY') return `That key opens nothing in ${name} (WRONG_KEY). Try another key file or passphrase.`;
  return `${err.code}: ${err.message}`;
}

const OPERATORS = ['=', '!=', '<', '<=', '>', '>=', 'contains', 'startsWith', 'isNull'];

/** A typed key or literal from what was typed, by the column's type (core checks it: WRONG_KEY). */
function literal(text, type) {
  if (type === 'integer' || type === 'float' || type === 'decimal') return text.trim() === '' ? text : Number(text);
  if (type === 'boolean') return text === 'true' ? true : text === 'false' ? false : text;
  return text;
}

export async function mount(ctx) {
  const client = new Client(ctx.source);
  let opened;
  for (;;) {
    try {
      opened = await client.open();
      break;
    } catch (err) {
      // A sealed file without a key, or a key that opens nothing (or is no key): ask (again).
      const keyProblem = err.code === 'KEY_REQUIRED' || (client.keys && ['WRONG_KEY', 'INVALID_ARGUMENT'].includes(err.code));
      if (!keyProblem) {
        client.close();
        throw err;
      }
      ctx.progress(null);
      const keys = await askForKey(ctx.source.name, client.keys ? keyRefusal(err, ctx.source.name) : null);
      if (!keys) {
        client.close();
        throw err.code === 'KEY_REQUIRED' ? err : Object.assign(new Error(`${ctx.source.name} is sealed: it opens with a key file or the owner's passphrase`), { code: 'KEY_REQUIRED' });
      }
      client.keys = keys;
      ctx.progress(0, 0, `Opening ${ctx.source.name} with the key…`);
    }
  }
  const info = opened.info;
  // A listener's store (the rows of quire listen and hl7.listen) opens as its messages
  // (listen.mjs); "as=table" in the hash, or its button, shows the table of every column instead.
  const listener = isListenerSchema(info.columns);
  const asMessages = listener && ctx.hash.get('as') !== 'table';
  // The first rows are read before the view is up: a file whose first pages are corrupt fails
  // to open (CORRUPT_BLOCK), and the file open before it stays. (The message list's columns
  // only: its `message` cells are read one opened message at a time.)
  try {
    await client.call('rows', { query: { limit: 64 }, names: asMessages ? LINE_COLUMNS : info.columns.map((c) => c.name) });
  } catch (err) {
    client.close();
    throw err;
  }
  let view = null;
  async function show(mode) {
    view?.unmount();
    view = null;
    ctx.root.replaceChildren();
    if (mode === 'messages') {
      const { mountMessages } = await import('./listen.mjs');
      view = await mountMessages(ctx, client, opened, {
        sealed: sealedNote(info, opened, client),
        asTable: () => switchTo('table'),
      });
    } else {
      view = await tableView(ctx, client, opened, listener ? () => switchTo('messages') : null);
    }
  }
  function switchTo(mode) {
    for (const key of ['q', 'row', 'find', 'msg']) ctx.hash.set(key, null);
    ctx.hash.set('as', mode === 'table' ? 'table' : null);
    ctx.clearError?.();
    return show(mode).catch((err) => ctx.showError(err));
  }
  try {
    await show(asMessages ? 'messages' : 'table');
  } catch (err) {
    view?.unmount();
    client.close();
    throw err;
  }
  return {
    unmount() {
      view?.unmount();
      client.close();
    },
  };
}

/** What a sealed file's key shows (a partition's key: that partition's rows only), or null. */
function sealedNote(info, opened, client) {
  if (!info.sealed) return null;
  const text = info.partitionKey
    ? `Sealed. Opened with a partition's key: only the rows of partition ${opened.partition === null ? 'null' : JSON.stringify(opened.partition)} — 1 of the ${info.partitions} partitions in the file; the other ${info.partitions - 1} are sealed under their own keys and not shown.`
    : `Sealed. Opened with the owner's ${client.keys?.passphrase !== undefined ? 'passphrase' : 'key'}: every row${info.partitionBy ? `, all ${info.partitions} partitions (by ${info.partitionBy})` : ''}.`;
  return el('p', { class: info.partitionKey ? 'sealed partition' : 'sealed', id: 'quire-sealed', role: 'note', text });
}

/** The table of every column, with its panels; `asMessages` (a listener's store) switches back. */
async function tableView(ctx, client, opened, asMessages) {
  const info = opened.info;
  const names = info.columns.map((c) => c.name);
  const typeOf = new Map(info.columns.map((c) => [c.name, c.type]));
  const indexed = (kind) => info.indexes.filter((i) => kind === undefined || i.kind === kind).map((i) => i.column);

  // Calls that may take long show the bar after a moment and can be cancelled.
  async function longCall(op, args, label, extra = {}) {
    const timer = setTimeout(() => ctx.progress(0, 0, label), 150);
    try {
      return await client.call(op, args, { signal: ctx.signal, ...extra });
    } finally {
      clearTimeout(timer);
      ctx.progress(null);
      if (client.reopened) {
        await client.reopened;
        client.reopened = null;
      }
    }
  }
  async function guarded(fn) {
    try {
      ctx.clearError?.();
      status.textContent = summary;
      return await fn();
    } catch (err) {
      if (err.name === 'AbortError') {
        status.textContent = 'Cancelled; the file is still open.';
        return undefined;
      }
      ctx.showError(err);
      return undefined;
    }
  }

  const many = (n, word) => `${n} ${word}${n === 1 ? '' : 's'}`;
  const summary = `${many(info.rows, 'row')}, ${many(info.columns.length, 'column')}, ${many(info.chunks, 'chunk')}; read by ranges in a worker.`;
  const root = ctx.root;
  root.classList.add('quire-view');
  const status = el('p', { class: 'muted', id: 'quire-status', 'aria-live': 'polite' });
  root.append(asMessages ? el('div', { class: 'listen-head' }, el('h2', { text: `${ctx.source.name}` }), el('button', { type: 'button', id: 'listen-as-messages', onclick: asMessages, text: 'Show as messages' })) : el('h2', { text: `${ctx.source.name}` }), status);
  // Which rows the key shows: a partition's key reads its partition only, and the view says so.
  const sealed = sealedNote(info, opened, client);
  if (sealed) root.append(sealed);

  // --- the facts: footer, schema, storage, chunks ---------------------------------------------
  const facts = el('section', { class: 'panel', 'aria-labelledby': 'q-facts' }, el('h3', { id: 'q-facts', text: 'File' }),
    table([
      ['rows', info.rows], ['chunks', info.chunks], ['rows per chunk', info.chunkRows], ['bytes', info.bytes],
      ['sorted by', info.sortedBy], ['format version', info.version], ['created by', info.createdBy],
      ...(info.version >= 2 ? [['commit', info.commit], ['sealed', info.sealed ? 'yes' : 'no'], ['partitioned by', info.partitionBy],
        ...(info.partitionKey ? [['partition this key reads', opened.partition === null ? 'null' : JSON.stringify(opened.partition)]] : []),
        ['partitions (read / in the file)', `${info.partitionsRead} / ${info.partitions}`], ['segments', info.segments], ['deleted rows', info.deletedRows]] : []),
      ['opened in (ms)', opened.openMs.toFixed(1)],
    ].map(([k, v]) => ({ k, v })), [['k', 'fact'], ['v', 'value', true]], 'file facts'));
  facts.querySelector('tbody').parentElement.dataset.facts = '';
  const schema = el('section', { class: 'panel', 'aria-labelledby': 'q-schema' }, el('h3', { id: 'q-schema', text: `Schema (${info.columns.length} columns)` }),
    table(info.columns.map((c) => ({ ...c, idx: info.indexes.filter((i) => i.column === c.name).map((i) => i.kind).join(', ') })),
      [['name', 'column'], ['type', 'type'], ['idx', 'indexes']], 'schema'));
  const storage = el('section', { class: 'panel', id: 'q-storage', 'aria-labelledby': 'q-storage-h' }, el('h3', { id: 'q-storage-h', text: 'Storage' }), el('p', { class: 'muted', text: 'reading…' }));
  const chunkSelect = el('select', { 'aria-label': 'column for chunk statistics' }, ...names.map((n) => el('option', { value: n, text: n })));
  const chunkOut = el('div');
  const chunks = el('section', { class: 'panel', 'aria-labelledby': 'q-chunks' }, el('h3', { id: 'q-chunks', text: 'Chunks' }),
    el('div', { class: 'controls' }, el('label', { text: 'Statistics of ' }), chunkSelect), chunkOut);
  const factsPanels = el('div', { class: 'panels facts' }, facts, schema, storage, chunks);

  // --- find, filter, text search, explain, export ------------------------------------------------
  const findColumn = el('select', { id: 'find-column', 'aria-label': 'find: column' },
    ...[...new Set([...indexed('hash'), ...indexed('sorted'), ...names])].map((n) => el('option', { value: n, text: n })));
  const findKey = el('input', { type: 'text', id: 'find-key', 'aria-label': 'find: key', placeholder: 'key' });
  const findOut = el('div', { id: 'find-out', 'aria-live': 'polite' });
  const findForm = el('form', { class: 'controls', id: 'find-form' }, findColumn, findKey, el('button', { type: 'submit', text: 'Find' }));

  const fColumn = el('select', { id: 'filter-column', 'aria-label': 'filter: column' }, ...names.map((n) => el('option', { value: n, text: n })));
  const fOp = el('select', { id: 'filter-op', 'aria-label': 'filter: operator' }, ...OPERATORS.map((o) => el('option', { value: o, text: o })));
  const fValue = el('input', { type: 'text', id: 'filter-value', 'aria-label': 'filter: value', placeholder: 'value' });
  const builder = el('form', { class: 'controls', id: 'filter-form' }, fColumn, fOp, fValue, el('button', { type: 'submit', text: 'Add condition' }));
  const expression = el('textarea', { id: 'filter-expr', class: 'wide', rows: '2', 'aria-label': 'filter expression', placeholder: "country = 'NA' and age > 80" });
  const exprForm = el('form', { class: 'controls', id: 'expr-form' }, expression, el('button', { type: 'submit', text: 'Apply' }), el('button', { type: 'button', id: 'filter-clear', text: 'Clear', onclick: () => apply(null) }));
  const textColumns = [...new Set([...indexed('text'), ...info.columns.filter((c) => c.type === 'string').map((c) => c.name)])];
  const sColumn = el('select', { id: 'search-column', 'aria-label': 'search: column' }, ...textColumns.map((n) => el('option', { value: n, text: indexed('text').includes(n) ? `${n} (text index)` : n })));
  const sText = el('input', { type: 'search', id: 'search-text', 'aria-label': 'search text', placeholder: 'contains…' });
  const searchForm = el('form', { class: 'controls', id: 'search-form' }, sColumn, sText, el('button', { type: 'submit', text: 'Search' }));
  const activeQuery = el('pre', { class: 'out', id: 'query-json', 'aria-label': 'the query' });
  const matches = el('p', { id: 'match-count', 'aria-live': 'polite' });

  const explainOut = el('div', { id: 'explain-out' });
  const exportFormat = el('select', { id: 'export-format', 'aria-label': 'export format' }, el('option', { value: 'csv', text: 'CSV' }), el('option', { value: 'ndjson', text: 'NDJSON' }));
  const exportForm = el('form', { class: 'controls', id: 'export-form' }, exportFormat, el('button', { type: 'submit', text: 'Export matching rows' }));

  root.append(el('div', { class: 'panels' },
    el('section', { class: 'panel', 'aria-labelledby': 'q-find' }, el('h3', { id: 'q-find', text: 'Find by key' }), findForm, findOut),
    el('section', { class: 'panel', 'aria-labelledby': 'q-filter' }, el('h3', { id: 'q-filter', text: 'Filter' }), builder, exprForm,
      el('h3', { text: 'Text search' }), searchForm, activeQuery, matches),
    el('section', { class: 'panel', 'aria-labelledby': 'q-explain' }, el('h3', { id: 'q-explain', text: 'Explain' }),
      el('p', { class: 'muted', text: 'What the current query reads: the index used, bytes, pages, chunks and columns.' }),
      el('div', { class: 'controls' }, el('button', { type: 'button', id: 'explain-run', text: 'Explain the query', onclick: () => explain() })), explainOut,
      el('h3', { text: 'Export' }), exportForm)));

  // --- the rows ---------------------------------------------------------------------------------
  let where = null; // string | object | null
  let rowCount = info.rows;
  const query = () => (where === null ? {} : { where });
  // The rows right under the query that selects them; the file's facts below.
  const gridBox = el('div', { class: 'grid-box' });
  root.append(gridBox, factsPanels);
  const grid = createGrid(gridBox, {
    label: `rows of ${ctx.source.name}`,
    columns: info.columns,
    rowCount,
    getRows: (start, count) => client.call('rows', { query: { ...query(), offset: start, limit: count }, names }).catch((err) => {
      if (err.name !== 'AbortError') ctx.showError(err);
      throw err;
    }),
    onSelect: (row) => ctx.hash.set('row', row),
  });

  function showQuery() {
    activeQuery.textContent = where === null ? 'all rows' : typeof where === 'string' ? where : JSON.stringify(where);
    matches.textContent = `${rowCount} ${where === null ? 'rows' : 'matching rows'}`;
    matches.dataset.count = String(rowCount);
    matches.dataset.seq = String(Number(matches.dataset.seq ?? 0) + 1); // for the tests: a new answer
  }

  async function apply(next, { keepRow = false } = {}) {
    const previous = where;
    where = next;
    const n = await guarded(() => longCall('count', { query: query() }, 'Counting the matching rows…'));
    if (n === undefined) {
      where = previous; // a filter core refused (or a cancelled count) leaves the rows as they were
      showQuery();
      return false;
    }
    rowCount = n;
    ctx.hash.set('q', where === null ? null : typeof where === 'string' ? where : JSON.stringify(where));
    if (!keepRow) ctx.hash.set('row', null);
    grid.setRowCount(rowCount);
    showQuery();
    return true;
  }

  let conditions = {};
  builder.addEventListener('submit', (e) => {
    e.preventDefault();
    const col = fColumn.value;
    const op = fOp.value;
    const value = op === 'isNull' ? true : literal(fValue.value, typeOf.get(col));
    const cond = op === '=' ? value : { [op]: value };
    if (typeof where === 'object' && where !== null) conditions = { ...where };
    else conditions = {};
    conditions[col] = cond;
    expression.value = JSON.stringify(conditions);
    apply({ ...conditions });
  });
  exprForm.addEventListener('submit', (e) => {
    e.preventDefault();
    apply(filterOfText(expression.value));
  });
  searchForm.addEventListener('submit', (e) => {
    e.preventDefault();
    const text = sText.value;
    if (!text) return apply(null);
    const next = { [sColumn.value]: { contains: text } };
    expression.value = JSON.stringify(next);
    apply(next);
  });

  findForm.addEventListener('submit', async (e) => {
    e.preventDefault();
    const column = findColumn.value;
    const key = literal(findKey.value, typeOf.get(column));
    delete findOut.dataset.found;
    const r = await guarded(() => longCall('find', { column, key, names }, 'Finding…'));
    if (!r) {
      findOut.dataset.found = 'error';
      return;
    }
    ctx.hash.set('find', `${column}=${findKey.value}`);
    findOut.replaceChildren();
    findOut.dataset.found = String(r.found);
    findOut.dataset.ms = r.ms.toFixed(3);
    if (!r.found) {
      findOut.append(el('p', { text: `No row has ${column} = ${findKey.value}.` }));
      return;
    }
    findOut.append(table(names.map((n, i) => ({ n, v: r.cells[i] === null ? 'null' : r.cells[i] })), [['n', 'column'], ['v', 'value']], 'the row found'),
      el('p', { class: 'muted', text: `found in ${r.ms.toFixed(1)} ms` }));
    findOut.querySelector('table').id = 'find-row';
  });

  async function explain() {
    delete explainOut.dataset.done;
    const r = await guarded(() => longCall('explain', { query: query() }, 'Running the query to explain it…'));
    explainOut.dataset.done = r ? 'ok' : 'error';
    if (!r) return;
    const rep = r.report;
    const read = rep.read ?? {};
    const lines = [
      ['index used', rep.index ? `${rep.index.column} (${rep.index.kind}, ${rep.index.use}, ${rep.index.candidates} candidates)` : 'none'],
      ['rows matched', rep.rowsMatched], ['chunks', `${rep.chunks.scanned} scanned of ${rep.chunks.total}; skipped ${rep.chunks.skippedByStatistics} by statistics, ${rep.chunks.skippedByBloom} by Bloom, ${rep.chunks.skippedByIndex} by index`],
      ['bytes read', read.bytes], ['pages read', `${read.dataPages} data, ${read.valuePages} for one value, ${read.indexPages} index, ${read.directoryPages} directory; ${read.cacheHits} cache hits`],
      ['column chunks decoded', read.blocks], ['columns read', read.columns], ['filter columns', rep.filterColumns.join(', ') || '—'],
      ['source reads (page cache misses)', `${r.source.reads} reads, ${r.source.bytes} bytes, ${r.source.cacheHits} cache hits`],
    ].map(([k, v]) => ({ k, v }));
    explainOut.replaceChildren(table(lines, [['k', 'what'], ['v', 'read']], 'explain'), el('pre', { class: 'out', id: 'explain-json', text: JSON.stringify(rep, null, 1) }));
  }

  exportForm.addEventListener('submit', async (e) => {
    e.preventDefault();
    const format = exportFormat.value;
    const name = `${ctx.source.name.replace(/\.quire$/i, '')}${where === null ? '' : '-filtered'}.${format}`;
    const parts = [];
    const r = await guarded(() => client.call('export', { query: query(), format }, {
      signal: ctx.signal,
      onChunk: (chunk, done, total) => {
        parts.push(chunk);
        ctx.progress(done, total + 1, `Exporting ${done} of ${total} rows…`);
      },
    }));
    ctx.progress(null);
    if (!r) return;
    // The pieces become Blob parts as they come: no single string of the whole export.
    await ctx.download(name, new Blob(parts, { type: format === 'csv' ? 'text/csv' : 'application/x-ndjson' }));
    status.textContent = `Exported ${r.rows} rows as ${format.toUpperCase()}.`;
  });

  chunkSelect.addEventListener('change', () => chunkStats());
  async function chunkStats() {
    const stats = await guarded(() => client.call('chunkStatistics', { column: chunkSelect.value }));
    if (!stats) return;
    chunkOut.replaceChildren(table(stats, [['chunk', 'chunk', true], ['rows', 'rows', true], ['nulls', 'nulls', true], ['min', 'min'], ['max', 'max'], ['bytes', 'bytes', true]], 'chunk statistics'));
  }

  async function storageReport() {
    const s = await guarded(() => client.call('storage', {}));
    if (!s) return;
    storage.replaceChildren(el('h3', { id: 'q-storage-h', text: `Storage (${s.bytes} bytes, footer ${s.footerBytes})` }),
      table(s.columns, [['name', 'column'], ['type', 'type'], ['encodedBytes', 'encoded bytes', true], ['dataBytes', 'stored bytes', true], ['pages', 'pages', true], ['nulls', 'nulls', true],
        [(c) => Object.entries(c.encodings).map(([k, v]) => `${k} ×${v}`).join(', '), 'encodings']], 'storage by column'),
      s.indexes.length ? table(s.indexes, [[(i) => `${i.column}:${i.kind}`, 'index'], ['entries', 'entries', true], ['leaves', 'leaves', true], ['bytes', 'bytes', true], ['bloomBytes', 'Bloom bytes', true]], 'storage by index') : el('p', { class: 'muted', text: 'no indexes' }));
  }

  // --- restore the view from the hash ------------------------------------------------------------
  showQuery();
  await Promise.all([storageReport(), chunkStats()]);
  const q = ctx.hash.get('q');
  const w = q && filterOfText(q);
  if (w) {
    expression.value = typeof w === 'string' ? w : JSON.stringify(w);
    await apply(w, { keepRow: true });
  }
  const row = Number(ctx.hash.get('row'));
  if (ctx.hash.get('row') !== null && Number.isInteger(row)) grid.select(row);
  const find = ctx.hash.get('find');
  if (find && find.includes('=')) {
    const at = find.indexOf('=');
    if (names.includes(find.slice(0, at))) {
      findColumn.value = find.slice(0, at);
      findKey.value = find.slice(at + 1);
      findForm.requestSubmit();
    }
  }
  status.textContent = summary;

  // For the tests: the worker's memory and the grid.
  root.quire = { client, grid, memory: () => client.call('memory', {}), apply };
  return {
    unmount() {
      grid.destroy();
      root.classList.remove('quire-view');
      delete root.quire;
    },
  };
}
