// The viewer's shell: opens a file (drop, the file input, ?url= or #url=), asks core its kind from
// its first bytes and name (detect.mjs: the package's detect(), so the package loads here), mounts that kind's view (views/<kind>.mjs), and owns the URL hash, the progress
// bar with its Cancel button and the error banner. A file that fails to open leaves the one open
// before it in place: the new view is mounted beside the old one and swapped in only once it has
// mounted.
//
// The contract with the views (site/viewer/views/<kind>.mjs: `export async function mount(ctx)`
// returning `{ unmount() }`):
//   ctx.root       the view's element (empty; the view fills it)
//   ctx.source     { name, size, async read(start, end) → Uint8Array, blob?, url? }
//   ctx.pkg        Promise of the npm package module (/pkg/index.js), init() already done
//   ctx.signal     an AbortSignal for the view's current long work: Cancel (or unmounting) aborts
//                  it, and ctx.signal is then a fresh signal, so the view stays usable
//   ctx.progress(done, total, label)   shows the bar; progress(null) or done >= total hides it
//   ctx.hash       { get(key), set(key, value) } — the view's state in the URL hash (value null
//                  removes the key); `url` is the shell's
//   ctx.open(source)                   opens a child source (one NDJSON line, one HL7 message)
//   ctx.download(name, blobOrStream)   saves a Blob, or a ReadableStream collected in parts
//   ctx.showError(err)                 the banner: err.code and core's message
import { detectSource } from './detect.mjs';
import { compiled } from './wasm.mjs';

const $ = (sel) => document.querySelector(sel);

// --- sources ------------------------------------------------------------------------------------

/** A source over a File or Blob: reads slices, never the whole file. */
export function blobSource(blob, name = blob.name ?? 'file') {
  return {
    name,
    size: blob.size,
    blob,
    async read(start, end) {
      return new Uint8Array(await blob.slice(start, end).arrayBuffer());
    },
  };
}

/** A source over a file beside the site, read with HTTP Range requests. */
export async function urlSource(url) {
  const href = new URL(url, location.href).href;
  const head = await fetch(href, { method: 'HEAD' });
  if (!head.ok) throw Object.assign(new Error(`${url}: HTTP ${head.status}`), { code: 'HTTP_' + head.status });
  const size = Number(head.headers.get('content-length'));
  return {
    name: decodeURIComponent(new URL(href).pathname.split('/').pop() || url),
    size,
    url: href,
    async read(start, end) {
      if (end <= start) return new Uint8Array(0);
      const r = await fetch(href, { headers: { Range: `bytes=${start}-${end - 1}` } });
      if (r.status !== 206 && r.status !== 200) throw Object.assign(new Error(`${url}: HTTP ${r.status} for bytes ${start}-${end - 1}`), { code: 'HTTP_' + r.status });
      const bytes = new Uint8Array(await r.arrayBuffer());
      return r.status === 200 ? bytes.subarray(start, end) : bytes;
    },
  };
}

// --- the URL hash -------------------------------------------------------------------------------

function hashParams() {
  return new URLSearchParams(location.hash.slice(1));
}

const hash = {
  get(key) {
    return hashParams().get(key);
  },
  set(key, value) {
    const p = hashParams();
    if (value === null || value === undefined || value === '') p.delete(key);
    else p.set(key, String(value));
    const text = p.toString();
    history.replaceState(null, '', text ? `#${text}` : location.pathname + location.search);
  },
  /** Keeps only the shell's keys (a new file starts with a clean view). */
  reset(keep = {}) {
    const p = new URLSearchParams();
    for (const [k, v] of Object.entries(keep)) if (v) p.set(k, v);
    const text = p.toString();
    history.replaceState(null, '', text ? `#${text}` : location.pathname + location.search);
  },
};

// --- the package, loaded on first use -----------------------------------------------------------

let pkgPromise = null;
function pkg() {
  pkgPromise ??= Promise.all([import('/pkg/index.js'), compiled()]).then(async ([m, module]) => {
    await m.init(module);
    return m;
  });
  return pkgPromise;
}

// --- banner and progress ------------------------------------------------------------------------

function showError(err, context) {
  const banner = $('#banner');
  // QuireError.code is core's name (CORRUPT_BLOCK); a DOMException's code is a legacy number
  // (20 for AbortError), so those show their name.
  const code = typeof err?.code === 'string' ? err.code : (err?.name ?? 'ERROR');
  const message = err?.message ?? String(err);
  banner.replaceChildren();
  const strong = document.createElement('strong');
  strong.className = 'error-code';
  strong.textContent = code;
  const text = document.createElement('span');
  text.className = 'error-message';
  text.textContent = context ? `${context}: ${message}` : message;
  const close = document.createElement('button');
  close.type = 'button';
  close.className = 'banner-close';
  close.textContent = 'Dismiss';
  close.addEventListener('click', () => {
    banner.hidden = true;
  });
  banner.append(strong, ' ', text, ' ', close);
  banner.dataset.code = code;
  banner.hidden = false;
}

function clearError() {
  $('#banner').hidden = true;
  delete $('#banner').dataset.code;
}

// Each view's context has its own AbortController: Cancel aborts those of the open view and of
// one being opened (and gives each a fresh one); replacing a view aborts the old one's only, so
// work a new view starts in mount keeps running.
const controllers = new Set();

function makeController() {
  const c = {
    controller: new AbortController(),
    abort() {
      c.controller.abort(new DOMException('cancelled', 'AbortError'));
      c.controller = new AbortController();
    },
  };
  controllers.add(c);
  return c;
}

function progress(done, total, label) {
  const box = $('#progress');
  if (done === null || done === undefined || (total && done >= total)) {
    box.hidden = true;
    return;
  }
  box.hidden = false;
  const bar = $('#progress-bar');
  if (total) {
    bar.max = total;
    bar.value = done;
  } else bar.removeAttribute('value');
  $('#progress-label').textContent = label ?? '';
}

function cancel() {
  for (const c of controllers) c.abort();
  progress(null);
}

// --- opening ------------------------------------------------------------------------------------

let current = null; // { source, kind, view, root }
let opening = 0;

function kindModule(kind) {
  return import(`./views/${kind}.mjs`);
}

function sizeText(bytes) {
  // Layout only: the byte count itself is the source's.
  return `${bytes.toLocaleString('en')} bytes`;
}

/** Opens a source; on failure the previous view stays. Resolves to true when the new view is up. */
export async function open(source, options) {
  const ok = await openSource(source, options);
  // For the tests: how many opens have ended, and how the last one did.
  viewer.lastOpenOk = ok;
  viewer.opens++;
  return ok;
}

async function openSource(source, { fromHash = false } = {}) {
  const ticket = ++opening;
  clearError();
  progress(0, 0, `Opening ${source.name}…`);
  const root = document.createElement('section');
  root.className = 'view';
  root.hidden = true;
  let view = null;
  let ctx = null;
  let kind = 'unknown';
  let reason = '';
  const previousHash = location.hash;
  const drop = () => {
    if (!ctx) return;
    ctx.control.abort();
    controllers.delete(ctx.control);
  };
  try {
    // A name ending in .quire starts the .quire view's worker and its module now, beside the
    // page's own: the kind is still detected from the bytes, and a worker not used stays for the
    // next .quire file.
    if (/\.quire$/i.test(source.name)) kindModule('quire').then((m) => m.prewarm());
    const detected = await detectSource(await pkg(), source);
    kind = detected.view ?? 'unknown';
    reason = detected.reason;
    $('#views').append(root);
    if (!fromHash) hash.reset({ url: source.url ? new URL(source.url).pathname + new URL(source.url).search : '' });
    ctx = makeContext(root, source, detected);
    // A file no view reads goes to the .quire view anyway: core names what is wrong
    // (NOT_A_QUIRE_FILE...) from the header and tail alone, without reading the file.
    const mod = await kindModule(kind === 'unknown' ? 'quire' : kind);
    view = await mod.mount(ctx);
    if (ticket !== opening) {
      view.unmount();
      drop();
      root.remove();
      return false;
    }
  } catch (err) {
    drop();
    root.remove();
    if (ticket === opening) {
      // The view still open keeps its state in the hash.
      if (current) history.replaceState(null, '', previousHash || location.pathname + location.search);
      progress(null);
      // A file of no known kind: say what its first bytes look like, then core's verdict.
      showError(err, kind === 'unknown' ? `${source.name} (not a kind the viewer reads: ${reason})` : source.name);
      $('#status').textContent = current ? `Still open: ${current.source.name}` : '';
    }
    return false;
  }
  progress(null);
  if (current) {
    current.control.abort(); // the old view's long work stops with it
    controllers.delete(current.control);
    current.view.unmount();
    current.root.remove();
  }
  current = { source, kind, detected: ctx.detected.kind, view, root, control: ctx.control };
  root.hidden = false;
  document.body.dataset.kind = kind;
  $('#drop').classList.add('compact');
  $('#status').textContent = `${source.name} — ${kind === 'unknown' ? '?' : ctx.detected.kind} — ${sizeText(source.size)}`;
  return true;
}

function makeContext(root, source, detected) {
  const control = makeController();
  return {
    control,
    root,
    source,
    detected,
    // Loaded by the first open (detection is core's); the .quire view runs its queries in its worker.
    get pkg() {
      return pkg();
    },
    get signal() {
      return control.controller.signal;
    },
    progress,
    hash,
    open: (child) => open(child),
    download,
    showError: (err) => showError(err),
    clearError,
  };
}

async function download(name, data) {
  let blob = data;
  if (!(data instanceof Blob)) {
    // A stream: collected as Blob parts piece by piece (the browser may keep them on disk).
    const parts = [];
    const reader = data.getReader();
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      parts.push(value);
    }
    blob = new Blob(parts);
  }
  const a = document.createElement('a');
  a.href = URL.createObjectURL(blob);
  a.download = name;
  document.body.append(a);
  a.click();
  a.remove();
  setTimeout(() => URL.revokeObjectURL(a.href), 60_000);
}

async function openUrl(url, options) {
  try {
    return await open(await urlSource(url), options);
  } catch (err) {
    progress(null);
    showError(err, url);
    viewer.lastOpenOk = false;
    viewer.opens++;
    return false;
  }
}

// --- wiring -------------------------------------------------------------------------------------

function wire() {
  const input = $('#file');
  input.addEventListener('change', () => {
    if (input.files?.[0]) open(blobSource(input.files[0]));
    input.value = '';
  });
  const drop = document.documentElement;
  drop.addEventListener('dragover', (e) => {
    e.preventDefault();
    document.body.classList.add('dragging');
  });
  drop.addEventListener('dragleave', (e) => {
    if (e.target === document.documentElement || e.relatedTarget === null) document.body.classList.remove('dragging');
  });
  drop.addEventListener('drop', (e) => {
    e.preventDefault();
    document.body.classList.remove('dragging');
    const file = e.dataTransfer?.files?.[0];
    if (file) open(blobSource(file));
  });
  $('#cancel').addEventListener('click', cancel);
  document.addEventListener('keydown', (e) => {
    if (e.key === 'Escape' && !$('#progress').hidden) cancel();
  });
  const url = new URLSearchParams(location.search).get('url') ?? hash.get('url');
  if (url) openUrl(url, { fromHash: !!hash.get('url') });
}


// For the tests and the console: the shell's entry points.
const viewer = {
  opens: 0,
  lastOpenOk: null,
  open,
  openUrl,
  blobSource,
  urlSource,
  detect: async (source) => detectSource(await pkg(), source),
  get current() {
    return current && { name: current.source.name, kind: current.kind, detected: current.detected, size: current.source.size };
  },
  cancel,
};
window.quireViewer = viewer;

wire();
