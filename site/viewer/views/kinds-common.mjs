// What the FHIR, NDJSON, HL7 and CSV views share: reading a source in slices (with progress and
// cancel between slices, so the tab never waits on one long read), a small element builder, and
// the error line every view shows (core's code and message, as the package gives them).

/** Bytes read per slice: small enough that progress moves and cancel lands within a frame or two. */
export const SLICE_BYTES = 1 << 20;

export function abortError() {
  return new DOMException('cancelled', 'AbortError');
}

/** Throws AbortError when the signal fired. */
export function checkAbort(signal) {
  if (signal?.aborted) throw abortError();
}

/** Lets the event loop run (input, paint) between slices of long work. */
export function yieldToPage() {
  return new Promise((resolve) => setTimeout(resolve, 0));
}

/** The source's bytes [start, end) as slices, with progress(done, total, label) and cancel. */
export async function* slices(ctx, label, start = 0, end = ctx.source.size) {
  // The shell's ctx.signal is a fresh one after each Cancel: this work listens to the one of its start.
  const signal = ctx.signal;
  const total = end - start;
  ctx.progress?.(0, total, label);
  for (let at = start; at < end; ) {
    checkAbort(signal);
    const stop = Math.min(end, at + SLICE_BYTES);
    const bytes = await ctx.source.read(at, stop);
    checkAbort(signal);
    yield bytes;
    at = stop;
    ctx.progress?.(at - start, total, label);
    await yieldToPage();
  }
}

/** The whole source (the FHIR and HL7 views need the document whole), read in slices. */
export async function readAll(ctx, label) {
  const out = new Uint8Array(ctx.source.size);
  let at = 0;
  for await (const part of slices(ctx, label)) {
    out.set(part, at);
    at += part.length;
  }
  return out;
}

/** `el('div', { class: 'x', onclick }, child, 'text')`: attributes, `on*` listeners, children. */
export function el(tag, attrs = {}, ...children) {
  const node = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs ?? {})) {
    if (v === undefined || v === null || v === false) continue;
    if (k.startsWith('on') && typeof v === 'function') node.addEventListener(k.slice(2), v);
    else if (k === 'class') node.className = v;
    else if (k === 'text') node.textContent = v;
    else node.setAttribute(k, v === true ? '' : String(v));
  }
  for (const c of children.flat()) {
    if (c === undefined || c === null || c === false) continue;
    node.append(c instanceof Node ? c : document.createTextNode(String(c)));
  }
  return node;
}

/** Core's one-line message of a QuireError (it starts with the code), else the error's text. */
export function errorLine(err) {
  if (err && typeof err === 'object' && 'code' in err && err.message) return err.message.startsWith(err.code) ? err.message : `${err.code}: ${err.message}`;
  return String(err?.message ?? err);
}

/** A base name for a download: `Patient.000.ndjson` becomes `Patient.000.quire`. */
export function quireName(name) {
  const base = String(name || 'table').replace(/^.*[\\/]/, '');
  return `${base.replace(/\.[^.]*$/, '') || base}.quire`;
}

/** Loads a view's stylesheet once. */
export function useStyle(href) {
  const url = new URL(href, import.meta.url).href;
  if (document.querySelector(`link[data-kinds-style="${url}"]`)) return;
  document.head.append(el('link', { rel: 'stylesheet', href: url, 'data-kinds-style': url }));
}

/** A filter box's text as a query's where: the object form when it is JSON, else core's expression syntax; null when empty. */
export function filterOfText(value) {
  const text = value.trim();
  if (!text) return null;
  if (text.startsWith('{')) {
    try {
      return JSON.parse(text);
    } catch {
      return text;
    }
  }
  return text;
}
