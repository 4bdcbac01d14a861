// Placeholder for the ndjson view (viewer-kinds replaces this file): shows the kind and the size, so
// the shell's detection and routing can be tested before the real view exists.
export async function mount(ctx) {
  const h = document.createElement('h2');
  h.textContent = `${ctx.source.name}: ndjson`;
  const p = document.createElement('p');
  p.className = 'muted';
  p.dataset.placeholder = 'ndjson';
  p.textContent = `${ctx.detected?.reason ?? 'ndjson'}; ${ctx.source.size} bytes. The ndjson view is coming.`;
  ctx.root.append(h, p);
  return { unmount() {} };
}
