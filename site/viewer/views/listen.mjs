// A listener's store (the rows `quire listen` and hl7.listen write: docs/listen.md) in the .quire
// view, as messages: one line a stored message in the virtualised grid (received, type, control
// ID, sender, patient ID, ACK), fetched a block at a time from the view's worker without the
// `message` column; a filter (core's expression syntax or the object form) and a search; one
// message opened (Enter, Space or a click) in the HL7 v2 view (hl7.mjs: core's parse through the
// package, as for a dropped .hl7 file) from its `message` cell, fetched for that row only; Back or
// Escape returns to the list. State in the URL hash: `q` (the filter) and `msg` (the opened
// message, from 1). views/quire.mjs opens the file (the key prompt of a sealed store included)
// and mounts this when the schema is a listener's (listen-model.mjs).
import { createGrid } from '../grid.mjs';
import { LINE_COLUMNS, LINE_HEADINGS, SEARCH_COLUMNS, lineOf } from './listen-model.mjs';
import { mount as mountHl7 } from './hl7.mjs';
import { el, errorLine, filterOfText } from './kinds-common.mjs';

const utf8 = new TextEncoder();
const noHash = { get: () => null, set: () => {} };

/**
 * Mounts the message list into ctx.root. `client` is the .quire view's worker client with the file
 * open; `sealed` the line saying what a sealed store's key shows (or null); `asTable()` switches
 * to the .quire view's table of every column.
 */
export async function mountMessages(ctx, client, opened, { sealed, asTable }) {
  const info = opened.info;
  const root = ctx.root;
  root.classList.add('listen-view');
  let where = null;
  let rowCount = info.rows;
  let child = null; // the HL7 view of the opened message
  let openedRow = -1;
  let ticket = 0;

  const about = `${info.rows} message${info.rows === 1 ? '' : 's'} stored by an HL7 v2 listener (quire listen or hl7.listen); read by ranges in a worker.`;
  const status = el('p', { class: 'muted', id: 'listen-status', 'aria-live': 'polite' }, about);
  const tableButton = el('button', { type: 'button', id: 'listen-as-table', onclick: () => asTable() }, 'Show every column as a table');

  // --- the list: filter, search, the grid -----------------------------------------------------------
  const expression = el('input', { type: 'text', id: 'listen-expr', class: 'wide', 'aria-label': 'filter expression', placeholder: "type = 'ADT^A01^ADT_A01' and ack_code = 'AA'" });
  const exprForm = el('form', { class: 'controls', id: 'listen-filter' }, expression,
    el('button', { type: 'submit' }, 'Apply'), el('button', { type: 'button', id: 'listen-clear', onclick: () => clear() }, 'Clear'));
  const sColumn = el('select', { id: 'listen-search-column', 'aria-label': 'search: column' }, SEARCH_COLUMNS.map(([n, label]) => el('option', { value: n }, label)));
  const sText = el('input', { type: 'search', id: 'listen-search-text', 'aria-label': 'search text', placeholder: 'contains…' });
  const searchForm = el('form', { class: 'controls', id: 'listen-search' }, sColumn, sText, el('button', { type: 'submit' }, 'Search'));
  const matches = el('p', { id: 'listen-count', class: 'listen-count', 'aria-live': 'polite' });
  const gridBox = el('div', { class: 'grid-box' });
  const list = el('section', { class: 'listen-list', 'aria-labelledby': 'listen-list-h' },
    el('h3', { id: 'listen-list-h', class: 'visually-hidden' }, 'Messages'),
    el('div', { class: 'listen-filters' }, exprForm, searchForm), matches, gridBox,
    el('p', { class: 'muted listen-hint' }, 'Enter, Space or a click opens a message; Escape comes back to the list.'));

  // --- one message ---------------------------------------------------------------------------------
  const backButton = el('button', { type: 'button', id: 'listen-back', onclick: () => back() }, '← Back to the messages');
  const ownView = el('button', { type: 'button', id: 'listen-open-hl7', onclick: () => child && ctx.open(child.source) }, 'Open in the HL7 view');
  const messageLine = el('div', { id: 'listen-message-line', class: 'listen-message-line' });
  const hl7Box = el('div', { class: 'listen-hl7', id: 'listen-hl7' });
  const detail = el('section', { class: 'listen-detail', id: 'listen-detail', 'aria-label': 'the opened message', hidden: true },
    el('div', { class: 'controls' }, backButton, ownView), messageLine, hl7Box);

  root.append(el('div', { class: 'listen-head' }, el('h2', {}, ctx.source.name), tableButton), status, ...(sealed ? [sealed] : []), list, detail);

  const query = () => (where === null ? {} : { where });
  const grid = createGrid(gridBox, {
    label: `messages of ${ctx.source.name}`,
    columns: LINE_HEADINGS,
    rowCount,
    getRows: (start, count) => client.call('rows', { query: { ...query(), offset: start, limit: count }, names: LINE_COLUMNS }).then((rows) => rows.map(lineOf), (err) => {
      if (err.name !== 'AbortError') ctx.showError(err);
      throw err;
    }),
    onSelect: (row) => openMessage(row),
  });

  function showCount() {
    matches.textContent = where === null ? `${rowCount} messages` : `${rowCount} of ${info.rows} messages match ${typeof where === 'string' ? where : JSON.stringify(where)}`;
    matches.dataset.count = String(rowCount);
    matches.dataset.seq = String(Number(matches.dataset.seq ?? 0) + 1); // for the tests: a new answer
  }

  async function apply(next) {
    ctx.clearError?.();
    let n;
    try {
      n = await client.call('count', { query: next === null ? {} : { where: next } }, { signal: ctx.signal });
    } catch (err) {
      // A filter core refuses (INVALID_QUERY, UNKNOWN_COLUMN...) leaves the list as it was.
      if (err.name !== 'AbortError') ctx.showError(err);
      if (client.reopened) await client.reopened.catch(() => {});
      client.reopened = null;
      showCount();
      return false;
    }
    where = next;
    rowCount = n;
    ctx.hash.set('q', where === null ? null : typeof where === 'string' ? where : JSON.stringify(where));
    grid.setRowCount(rowCount);
    showCount();
    return true;
  }
  function clear() {
    expression.value = '';
    sText.value = '';
    apply(null);
  }
  exprForm.addEventListener('submit', (e) => {
    e.preventDefault();
    apply(filterOfText(expression.value));
  });
  searchForm.addEventListener('submit', (e) => {
    e.preventDefault();
    if (!sText.value) return apply(null);
    const next = { [sColumn.value]: { contains: sText.value } };
    expression.value = JSON.stringify(next);
    apply(next);
  });

  /** Opens row `row` of the list (the current filter's rows): its message cell, then the HL7 view. */
  async function openMessage(row) {
    if (row < 0 || row >= rowCount) return false;
    const mine = ++ticket;
    let cells;
    try {
      [cells] = await client.call('rows', { query: { ...query(), offset: row, limit: 1 }, names: ['message', ...LINE_COLUMNS] });
    } catch (err) {
      if (mine === ticket && err.name !== 'AbortError') ctx.showError(err);
      return false;
    }
    if (mine !== ticket || !cells) return false;
    const [text, ...line] = cells;
    const [received, type, controlId, sender, patientId, ack] = lineOf(line);
    const bytes = utf8.encode(text ?? '');
    const source = { name: `${ctx.source.name} message ${row + 1}`, kind: 'hl7', size: bytes.length, read: async (s, e) => bytes.slice(s, e) };
    child?.view.unmount();
    child = null;
    const box = el('div', { class: 'listen-hl7-view' });
    hl7Box.replaceChildren(box);
    messageLine.replaceChildren(
      el('h3', { id: 'listen-message-title' }, `Message ${row + 1} of ${rowCount}: ${type ?? '—'}`),
      el('p', { id: 'listen-message-facts' }, `control ID ${controlId ?? '—'} · received ${received ?? '—'} · from ${sender || '—'} · patient ${patientId ?? '—'} · ACK ${ack ?? '—'}`));
    openedRow = row;
    list.hidden = true;
    detail.hidden = false;
    detail.dataset.row = String(row);
    ctx.hash.set('msg', row + 1);
    try {
      const view = await mountHl7({ ...ctx, root: box, source, hash: noHash });
      if (mine !== ticket) {
        view.unmount();
        return false;
      }
      child = { view, source };
      detail.dataset.opened = String(row);
    } catch (err) {
      // The stored bytes do not parse (a store is written from what core read, so this is rare):
      // core's error in place of the message.
      box.replaceChildren(el('p', { class: 'kn-error', role: 'alert', 'data-testid': 'listen-hl7-error' }, errorLine(err)));
      detail.dataset.opened = String(row);
    }
    backButton.focus();
    return true;
  }

  function back() {
    if (detail.hidden) return;
    ticket++;
    child?.view.unmount();
    child = null;
    hl7Box.replaceChildren();
    detail.hidden = true;
    delete detail.dataset.opened;
    list.hidden = false;
    ctx.hash.set('msg', null);
    if (openedRow >= 0) grid.scrollToRow(openedRow);
    grid.focus();
  }

  // Escape comes back from a message, unless the shell's Cancel or a dialog has it.
  const onKey = (e) => {
    if (e.key !== 'Escape' || detail.hidden || e.defaultPrevented) return;
    if (!document.querySelector('#progress')?.hidden || document.querySelector('dialog[open]')) return;
    e.preventDefault();
    back();
  };
  document.addEventListener('keydown', onKey);

  // --- restore from the hash -------------------------------------------------------------------------
  showCount();
  const q = ctx.hash.get('q');
  const w = q && filterOfText(q);
  if (w) {
    expression.value = typeof w === 'string' ? w : JSON.stringify(w);
    await apply(w);
  }
  const msg = Number(ctx.hash.get('msg'));
  if (Number.isInteger(msg) && msg >= 1 && msg <= rowCount) {
    grid.select(msg - 1); // selecting opens it
  }

  // For the tests: the worker, the grid, and the calls the keyboard and clicks make.
  root.listen = { client, grid, openMessage, back, apply, get opened() { return detail.hidden ? -1 : openedRow; } };
  return {
    unmount() {
      document.removeEventListener('keydown', onKey);
      ticket++;
      child?.view.unmount();
      child = null;
      grid.destroy();
      root.classList.remove('listen-view');
      delete root.listen;
    },
  };
}
