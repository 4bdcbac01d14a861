// A virtualised ARIA grid: only the rows in sight are in the DOM, fetched in blocks through
// getRows(start, count). The scroll height is capped (browsers stop laying out near 2^25 px), and
// past the cap the scroll position maps linearly onto the row range, as HighTable does, so tens
// of millions of rows scroll with the same few dozen elements.
//
//   const grid = createGrid(root, { columns: [{ name, type }], rowCount, getRows, onSelect });
//   grid.setRowCount(n); grid.refresh(); grid.scrollToRow(i); grid.select(i); grid.destroy();
//
// Keyboard (focus on the grid; the active cell is aria-activedescendant): arrows, PageUp/PageDown,
// Home/End (first/last column), Ctrl+Home/Ctrl+End (first/last row), Enter or Space selects.

const ROW_HEIGHT = 28; // px; viewer.css gives .grid-row the same height
/** The tallest scroll area the grid makes (well under Chromium's and Firefox's layout limits). */
export const MAX_SCROLL_PX = 8_000_000;
const BLOCK = 64; // rows fetched at once
const MAX_BLOCKS = 64; // blocks kept: a bounded cache, least recently used dropped first

let gridCount = 0;

/**
 * @param {HTMLElement} root
 * @param {{ columns: {name: string, type?: string, minRem?: number}[], rowCount: number,
 *           getRows: (start: number, count: number) => Promise<string[][]>,
 *           onSelect?: (rowIndex: number) => void, label?: string }} options
 */
export function createGrid(root, options) {
  const id = `grid${++gridCount}`;
  let columns = options.columns;
  let rowCount = options.rowCount;
  let active = { row: 0, col: 0 };
  let selected = -1;
  let generation = 0; // bumped by refresh(): answers to older fetches are dropped
  const blocks = new Map(); // block index -> string[][] | Promise

  const grid = document.createElement('div');
  grid.className = 'grid';
  grid.id = id;
  grid.setAttribute('role', 'grid');
  grid.setAttribute('aria-label', options.label ?? 'rows');
  grid.setAttribute('aria-readonly', 'true');
  grid.tabIndex = 0;

  const head = document.createElement('div');
  head.className = 'grid-head';
  head.setAttribute('role', 'rowgroup');
  const body = document.createElement('div');
  body.className = 'grid-body';
  body.setAttribute('role', 'rowgroup');
  const spacer = document.createElement('div');
  spacer.className = 'grid-spacer';
  spacer.setAttribute('aria-hidden', 'true');
  const rowsBox = document.createElement('div');
  rowsBox.className = 'grid-rows';
  // The header sits in the scroll box (sticky) so that it scrolls sideways with the rows.
  body.append(head, spacer, rowsBox);
  grid.append(body);
  root.append(grid);

  // Bounded widths: a column of 1000-character values must not make a row thousands of pixels
  // wide (a long value is cut with an ellipsis; its full text is the cell's title).
  // Every row is its own CSS grid, so the tracks must not depend on a row's content: fixed minimums
  // sharing the rest of the width (fr), and rows exactly as wide as the grid or the sum of the
  // minimums. A column of 1000-character values then cannot widen a row (a long value is cut
  // with an ellipsis; its text is the cell's title).
  const minRem = (c) => c.minRem ?? (/^(integer|float|decimal|boolean|date)$/.test(c.type ?? '') ? 7 : 10);
  const numRem = () => String(rowCount).length * 0.62 + 1.4; // rem, not ch: the header is bold
  const template = () => `${numRem().toFixed(2)}rem ${columns.map((c) => `minmax(${minRem(c)}rem, ${minRem(c) / 7}fr)`).join(' ')}`;
  const minWidth = () => `${(numRem() + columns.reduce((t, c) => t + minRem(c), 0)).toFixed(2)}rem`;

  function drawHead() {
    head.replaceChildren();
    const row = document.createElement('div');
    row.className = 'grid-row grid-header';
    row.setAttribute('role', 'row');
    row.setAttribute('aria-rowindex', '1');
    row.style.gridTemplateColumns = template();
    head.style.minWidth = minWidth();
    const num = document.createElement('div');
    num.className = 'grid-cell grid-num';
    num.setAttribute('role', 'columnheader');
    num.textContent = '#';
    row.append(num);
    columns.forEach((c, i) => {
      const cell = document.createElement('div');
      cell.className = 'grid-cell';
      cell.setAttribute('role', 'columnheader');
      cell.setAttribute('aria-colindex', String(i + 2));
      cell.textContent = c.name;
      if (c.type) cell.title = `${c.name}: ${c.type}`;
      row.append(cell);
    });
    head.append(row);
    grid.setAttribute('aria-colcount', String(columns.length + 1));
  }

  const virtualHeight = () => Math.min(rowCount * ROW_HEIGHT, MAX_SCROLL_PX);
  const visibleRows = () => Math.max(1, Math.floor((body.clientHeight - ROW_HEIGHT) / ROW_HEIGHT));

  /** The first row in sight for a scroll position, and where its element goes. */
  function firstRow() {
    const top = body.scrollTop;
    if (rowCount * ROW_HEIGHT <= MAX_SCROLL_PX) return { row: Math.floor(top / ROW_HEIGHT), y: Math.floor(top / ROW_HEIGHT) * ROW_HEIGHT };
    const range = Math.max(1, virtualHeight() + ROW_HEIGHT - body.clientHeight);
    const last = Math.max(0, rowCount - visibleRows());
    return { row: Math.min(last, Math.round((top / range) * last)), y: top };
  }

  /** The scroll position that puts `row` first (the inverse of firstRow). */
  function topFor(row) {
    if (rowCount * ROW_HEIGHT <= MAX_SCROLL_PX) return row * ROW_HEIGHT;
    const range = Math.max(1, virtualHeight() + ROW_HEIGHT - body.clientHeight);
    const last = Math.max(1, rowCount - visibleRows());
    return Math.round((Math.min(row, last) / last) * range);
  }

  function block(index) {
    const have = blocks.get(index);
    if (have) {
      blocks.delete(index);
      blocks.set(index, have);
      return have;
    }
    const gen = generation;
    const start = index * BLOCK;
    const count = Math.min(BLOCK, rowCount - start);
    const pending = options.getRows(start, count).then(
      (rows) => {
        if (gen === generation && blocks.get(index) === pending) blocks.set(index, rows);
        return rows;
      },
      (err) => {
        if (blocks.get(index) === pending) blocks.delete(index);
        throw err;
      },
    );
    blocks.set(index, pending);
    while (blocks.size > MAX_BLOCKS) blocks.delete(blocks.keys().next().value);
    pending.then(() => gen === generation && draw(), () => {});
    return pending;
  }

  function cellId(row, col) {
    return `${id}-r${row}-c${col}`;
  }

  function draw() {
    spacer.style.height = `${virtualHeight()}px`;
    const { row: first, y } = firstRow();
    const n = Math.min(rowCount - first, visibleRows() + 2);
    rowsBox.style.transform = `translateY(${y}px)`;
    rowsBox.style.minWidth = minWidth();
    spacer.style.width = minWidth();
    const out = [];
    const template_ = template();
    for (let r = first; r < first + n; r++) {
      const b = block(Math.floor(r / BLOCK));
      const values = Array.isArray(b) ? b[r % BLOCK] : null;
      const row = document.createElement('div');
      row.className = 'grid-row';
      row.setAttribute('role', 'row');
      row.setAttribute('aria-rowindex', String(r + 2));
      row.dataset.row = String(r);
      row.style.gridTemplateColumns = template_;
      if (r === selected) {
        row.classList.add('selected');
        row.setAttribute('aria-selected', 'true');
      }
      const num = document.createElement('div');
      num.className = 'grid-cell grid-num';
      num.setAttribute('role', 'rowheader');
      num.id = cellId(r, 0);
      num.textContent = String(r + 1);
      row.append(num);
      for (let c = 0; c < columns.length; c++) {
        const cell = document.createElement('div');
        cell.className = 'grid-cell';
        cell.setAttribute('role', 'gridcell');
        cell.setAttribute('aria-colindex', String(c + 2));
        cell.id = cellId(r, c + 1);
        cell.dataset.col = String(c + 1);
        if (values) {
          const v = values[c];
          if (v === null || v === undefined) {
            cell.classList.add('null');
            cell.textContent = 'null';
          } else {
            cell.textContent = v;
            if (v.length > 24) cell.title = v.length > 2000 ? `${v.slice(0, 2000)}…` : v;
          }
        } else {
          cell.classList.add('loading');
          cell.textContent = '…';
        }
        row.append(cell);
      }
      if (r === active.row) row.children[active.col]?.classList.add('active');
      out.push(row);
    }
    rowsBox.replaceChildren(...out);
    grid.setAttribute('aria-rowcount', String(rowCount + 1));
    if (rowCount > 0 && active.row >= first && active.row < first + n) grid.setAttribute('aria-activedescendant', cellId(active.row, active.col));
    else grid.removeAttribute('aria-activedescendant');
  }

  /** Scrolls the least needed so that `row` is in sight. */
  function reveal(row) {
    const { row: first } = firstRow();
    const seen = visibleRows();
    if (row < first) body.scrollTop = topFor(row);
    else if (row >= first + seen) body.scrollTop = topFor(row - seen + 1);
  }

  function moveTo(row, col) {
    if (rowCount === 0) return;
    active = { row: Math.max(0, Math.min(rowCount - 1, row)), col: Math.max(0, Math.min(columns.length, col)) };
    reveal(active.row);
    draw();
  }

  function select(row) {
    if (row < 0 || row >= rowCount) return;
    selected = row;
    active.row = row;
    reveal(row);
    draw();
    options.onSelect?.(row);
  }

  grid.addEventListener('keydown', (e) => {
    const page = Math.max(1, visibleRows() - 1);
    const { row, col } = active;
    const keys = {
      ArrowDown: () => moveTo(row + 1, col),
      ArrowUp: () => moveTo(row - 1, col),
      ArrowRight: () => moveTo(row, col + 1),
      ArrowLeft: () => moveTo(row, col - 1),
      PageDown: () => moveTo(row + page, col),
      PageUp: () => moveTo(row - page, col),
      Home: () => (e.ctrlKey ? moveTo(0, col) : moveTo(row, 0)),
      End: () => (e.ctrlKey ? moveTo(rowCount - 1, col) : moveTo(row, columns.length)),
      Enter: () => select(row),
      ' ': () => select(row),
    };
    const act = keys[e.key];
    if (!act) return;
    e.preventDefault();
    act();
  });
  rowsBox.addEventListener('click', (e) => {
    const rowEl = e.target.closest('.grid-row');
    if (!rowEl) return;
    const cell = e.target.closest('.grid-cell');
    active.col = cell?.dataset.col ? Number(cell.dataset.col) : 0;
    select(Number(rowEl.dataset.row));
    grid.focus({ preventScroll: true });
  });
  let frame = 0;
  body.addEventListener('scroll', () => {
    if (frame) return;
    frame = requestAnimationFrame(() => {
      frame = 0;
      draw();
    });
  });
  const resize = new ResizeObserver(() => draw());
  resize.observe(body);

  drawHead();
  draw();

  return {
    element: grid,
    get activeRow() {
      return active.row;
    },
    get selectedRow() {
      return selected;
    },
    /** The rows in sight now: [first, count]. */
    visible() {
      return [firstRow().row, Math.min(rowCount - firstRow().row, visibleRows())];
    },
    setRowCount(n, newColumns) {
      rowCount = n;
      if (newColumns) {
        columns = newColumns;
        drawHead();
      }
      selected = -1;
      active = { row: 0, col: Math.min(active.col, columns.length) };
      body.scrollTop = 0;
      this.refresh();
    },
    refresh() {
      generation++;
      blocks.clear();
      draw();
    },
    scrollToRow(row) {
      moveTo(row, active.col);
    },
    select,
    focus() {
      grid.focus();
    },
    destroy() {
      generation++;
      resize.disconnect();
      grid.remove();
    },
  };
}
