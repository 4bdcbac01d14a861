// The CSV view: the file goes through the package's CSV writer in slices (progress, cancel)
// into a .quire file held in the page; the table is that file's rows, read by the shared grid a
// block at a time as core's cells (each value's text as core writes it: a decimal keeps its
// digits); the same bytes are the download.
import { createGrid } from '../grid.mjs';
import { el, quireName, slices, useStyle } from './kinds-common.mjs';

/** The rows of core's cells text (queryText's `cells` form): a JSON array of display texts a line. */
const rowsOfCells = (text) => text.split('\n').filter(Boolean).map((line) => JSON.parse(line));

export async function mount(ctx) {
  useStyle('./kinds.css');
  const pkg = await ctx.pkg;
  const source = ctx.source;
  const bytes = await pkg.format.writeStream(slices(ctx, `Reading ${source.name} as CSV`), { from: 'csv' });
  ctx.progress?.(null);
  const file = pkg.format.open(bytes);
  const columns = file.schema;
  const status = el('p', { class: 'kc-status', role: 'status', 'data-testid': 'csv-status' },
    `${file.rowCount} rows · ${columns.length} columns (${columns.map((c) => `${c.name}: ${c.type}`).join(', ')}) · as .quire: ${bytes.length} bytes`);
  const download = el('button', { type: 'button', 'data-testid': 'csv-convert' }, 'Download as .quire');
  const gridBox = el('div', { class: 'kc-grid' });
  ctx.root.replaceChildren(el('div', { class: 'kc-view' }, el('header', { class: 'kn-head' }, status, el('div', { class: 'kn-actions' }, download)), gridBox));
  const grid = createGrid(gridBox, {
    label: `${source.name}: rows`,
    columns: columns.map((c) => ({ name: c.name, type: c.type })),
    rowCount: file.rowCount,
    getRows: async (start, count) => rowsOfCells(file.queryText({ offset: start, limit: count }, { form: 'cells' })),
    onSelect: (row) => ctx.hash?.set('row', row + 1),
  });
  const wanted = Number(ctx.hash?.get('row'));
  if (wanted >= 1 && wanted <= file.rowCount) {
    grid.scrollToRow?.(wanted - 1);
    grid.select?.(wanted - 1);
  }
  download.addEventListener('click', () => ctx.download(quireName(source.name), new Blob([bytes], { type: 'application/octet-stream' })));
  return {
    unmount() {
      grid.destroy?.();
      file.close();
      ctx.root.replaceChildren();
    },
  };
}
