// The CSV view: the file goes through the package's CSV writer in slices (progress, cancel)
// into a .quire file held in the page; the table is that file's rows, read by the shared grid a
// block at a time with queryText, so each value shows exactly as core reads and writes it (a
// decimal keeps its digits); the same bytes are the download.
import { createGrid } from '../grid.mjs';
import { JsonModel } from './json-model.mjs';
import { el, quireName, slices, useStyle } from './kinds-common.mjs';

const encoder = new TextEncoder();

/** The display strings of each row of core's JSON-array text (values as written; null as null). */
export function rowsFromText(text, columns) {
  const model = new JsonModel(encoder.encode(text));
  const out = [];
  for (const row of model.children(model.root)) {
    const byKey = new Map(model.children(row).map((c) => [c.key, c]));
    out.push(columns.map((c) => {
      const v = byKey.get(c.name);
      if (!v || v.kind === 'null') return null;
      return v.kind === 'string' ? model.stringValue(v) : model.scalarText(v);
    }));
  }
  return out;
}

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
    getRows: async (start, count) => rowsFromText(file.queryText({ offset: start, limit: count }), columns),
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
