// Placeholder for the fhir view (viewer-kinds replaces this file): shows the kind and the size, so
// the shell's detection and routing can be tested before the real view exists.
export async function mount(ctx) {
  const h = document.createElement('h2');
  h.textContent = `${ctx.source.name}: fhir`;
  const p = document.createElement('p');
  p.className = 'muted';
  p.dataset.placeholder = 'fhir';
  p.textContent = `${ctx.detected?.reason ?? 'fhir'}; ${ctx.source.size} bytes. The fhir view is coming.`;
  ctx.root.append(h, p);
  return { unmount() {} };
}
