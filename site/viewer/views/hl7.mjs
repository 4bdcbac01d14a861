// Placeholder for the hl7 view (viewer-kinds replaces this file): shows the kind and the size, so
// the shell's detection and routing can be tested before the real view exists.
export async function mount(ctx) {
  const h = document.createElement('h2');
  h.textContent = `${ctx.source.name}: hl7`;
  const p = document.createElement('p');
  p.className = 'muted';
  p.dataset.placeholder = 'hl7';
  p.textContent = `${ctx.detected?.reason ?? 'hl7'}; ${ctx.source.size} bytes. The hl7 view is coming.`;
  ctx.root.append(h, p);
  return { unmount() {} };
}
