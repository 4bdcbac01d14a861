// The FHIR view, JSON or XML: a collapsible ARIA tree of a resource or Bundle (rendered lazily: a
// node's children exist in the DOM once it is expanded), each issue of the package's fhir.validate
// pinned to its node with its line and column, references between Bundle entries followed by a
// click, and the raw document beside it with line numbers (virtualised: only the lines in view
// exist). An XML file (core's kind 'fhir-xml') is validated as XML, its issues at XML lines and
// columns; its tree is core's canonical JSON of it (fhir.format(bytes, { to: 'json' })) and the
// raw pane shows the XML as written.
import { JsonModel, TextLines, bundleTargets, containedTarget, resolveReference } from './json-model.mjs';
import { el, readAll, useStyle } from './kinds-common.mjs';
import { prepare } from './fhir-worker.mjs';
import { compiled } from '../wasm.mjs';

/** Children rendered at once under one node; a "more" row renders the next page. */
const PAGE = 200;
/** Characters of one raw line shown around the point of interest (a minified document is one line). */
const RAW_WINDOW = 4000;
const LINE_PX = 18;

/** Documents larger than this are checked in a Worker (fhir-worker.mjs); smaller ones at once. */
const WORKER_BYTES = 1 << 20;

export async function mount(ctx) {
  useStyle('./fhir.css');
  const pkg = await ctx.pkg;
  // Core's kind says the syntax: 'fhir-xml' is R4's XML form, any other kind opened here JSON.
  const syntax = ctx.detected?.kind === 'fhir-xml' ? 'xml' : 'json';
  const bytes = await readAll(ctx, syntax === 'xml' ? 'reading XML' : 'reading JSON');
  const raw = syntax === 'xml' ? { syntax, text: new TextLines(bytes) } : undefined;
  // The package checks the document first (depth-bounded, typed errors): the page's own index
  // below only ever walks JSON core accepted or wrote, so a hostile nesting never reaches it.
  if (bytes.length <= WORKER_BYTES) {
    const { json, outcome } = prepare(pkg, bytes, syntax);
    const model = new JsonModel(json);
    return mountModel(ctx, model, outcome, bundleTargets(model), raw);
  }
  const { outcome, targets, json } = await checkInWorker(ctx, pkg, bytes, syntax);
  const model = new JsonModel(json ?? bytes);
  return mountModel(ctx, model, outcome, new EntryTargets(model, targets), raw);
}

/** Reference targets found by the worker: entry indexes turned into nodes when first asked for. */
class EntryTargets extends Map {
  constructor(model, pairs) {
    super(pairs);
    this.model = model;
  }

  get(key) {
    const v = super.get(key);
    if (typeof v !== 'number') return v;
    const m = this.model;
    const entry = m.children(m.member(m.root, 'entry'))[v];
    const node = m.member(entry, 'resource') ?? entry;
    super.set(key, node);
    return node;
  }
}

/** json.check and fhir.validate (for XML: fhir.validate and fhir.format) in a Worker, ended by Cancel; core's error rethrown here. */
function checkInWorker(ctx, pkg, bytes, syntax) {
  const signal = ctx.signal;
  ctx.progress?.(0, 0, 'validating');
  return new Promise((resolve, reject) => {
    const worker = new Worker(new URL('./fhir-worker.mjs', import.meta.url), { type: 'module' });
    const done = () => {
      worker.terminate();
      signal.removeEventListener('abort', onAbort);
      ctx.progress?.(null);
    };
    const onAbort = () => {
      done();
      reject(new DOMException('cancelled', 'AbortError'));
    };
    signal.addEventListener('abort', onAbort);
    worker.onmessage = (e) => {
      done();
      if (e.data.error) reject(new pkg.QuireError(e.data.error.code, e.data.error.message));
      else resolve(e.data);
    };
    worker.onerror = (e) => {
      done();
      reject(new Error(`the validation worker failed: ${e.message}`));
    };
    // The compiled module travels with the bytes (the worker instantiates it, no second compile);
    // without one the worker's init() fetches and compiles its own.
    compiled().then(
      (module) => worker.postMessage({ bytes, syntax, module }),
      () => worker.postMessage({ bytes, syntax }),
    );
  });
}

/**
 * Mounts the view of an indexed document with its validation outcome (used by mount above).
 * `raw`: the document the raw pane shows when it is not the model's JSON — `{ syntax: 'xml', text }`
 * (a TextLines of the XML as written); its issues' lines and columns are that text's, and nothing
 * maps a JSON node back to an XML offset, so choosing a node does not move the raw pane.
 */
export function mountModel(ctx, model, outcome, targets = bundleTargets(model), raw = { syntax: 'json', text: model }) {
  const root = ctx.root;
  const xml = raw.syntax === 'xml';
  const rawName = xml ? 'Raw XML' : 'Raw JSON';
  const items = new Map(); // node -> its <li>
  const pinned = new Map(); // node -> issues pinned to it
  const inside = new Map(); // node -> number of issues in its subtree
  // An issue's offset is into the bytes as given: for XML it names no JSON node (the root takes it).
  const nodeOf = (issue) => (issue.expression ? model.nodeForPath(issue.expression) : xml ? model.root : model.nodeAt(issue.offset));
  for (const issue of outcome.issues) {
    const node = nodeOf(issue);
    if (!pinned.has(node)) pinned.set(node, []);
    pinned.get(node).push(issue);
    for (let n = node; n; n = n.parent) inside.set(n, (inside.get(n) ?? 0) + 1);
  }

  const tree = el('ul', { role: 'tree', class: 'kf-tree', 'aria-label': 'Resource tree', 'aria-multiselectable': 'false' });
  const pane = rawPane(raw.text, rawName);
  const rtNode = model.member(model.root, 'resourceType');
  const summary = el('p', { class: 'kf-summary', 'data-testid': 'fhir-summary' },
    el('strong', {}, rtNode ? model.stringValue(rtNode) : model.root.kind),
    xml ? ' · XML' : '',
    ` · ${outcome.errors} errors, ${outcome.warnings} warnings`,
    targets.size ? ` · ${targets.size} reference targets` : '',
    outcome.truncated ? ' · issue list cut' : '');
  const issueList = el('ol', { class: 'kf-issues', 'aria-label': 'Validation issues', 'data-testid': 'fhir-issues' });
  outcome.issues.forEach((issue, k) => {
    // The number is the item's own first column (not the list's marker, which sits on the last
    // line of a button that wraps), hidden from assistive technology, which counts the items. The
    // issue type "informational" (an invariant not checked) says again what the severity
    // "information" says: the severity alone names it.
    issueList.append(el('li', {}, el('span', { class: 'kf-issue-no', 'aria-hidden': 'true' }, `${k + 1}.`),
      el('button', {
        type: 'button', class: `kf-issue kf-${issue.severity}`,
        onclick: () => {
          reveal(nodeOf(issue), true);
          pane.jump(issue.line, issue.column);
        },
      }, el('span', { class: 'kf-sev' }, issue.severity), issue.code === 'informational' ? ' ' : ` ${issue.code} `, el('code', {}, issue.expression || '(document)'),
      ` line ${issue.line}, column ${issue.column}: `, issue.details)));
  });
  const layout = el('div', { class: 'kf-view' },
    el('header', { class: 'kf-head' }, summary, outcome.issues.length ? issueList : el('p', { class: 'kf-ok' }, 'No validation issues.')),
    el('div', { class: 'kf-split' },
      el('section', { class: 'kf-tree-pane', 'aria-label': 'Tree' }, tree),
      el('section', { class: 'kf-raw-pane', 'aria-label': rawName }, pane.element)));
  root.replaceChildren(layout);

  function label(node) {
    if (node.key !== undefined) return node.key;
    if (node.index !== undefined) return `[${node.index}]`;
    return rtNode ? model.stringValue(rtNode) : 'document';
  }

  function valueText(node) {
    if (node.kind === 'object') {
      const kids = model.children(node);
      const rt = kids.find((c) => c.key === 'resourceType');
      const id = kids.find((c) => c.key === 'id');
      const name = rt ? model.stringValue(rt) : '';
      return `{${kids.length}}${name ? ` ${name}${id ? `/${model.stringValue(id)}` : ''}` : ''}`;
    }
    if (node.kind === 'array') return `[${model.children(node).length}]`;
    if (node.kind === 'string') return `"${model.scalarText(node)}"`;
    return model.scalarText(node);
  }

  function itemFor(node) {
    const container = node.kind === 'object' || node.kind === 'array';
    const row = el('div', { class: 'kf-row' },
      el('span', { class: 'kf-twisty', 'aria-hidden': 'true' }, container ? '▸' : ''),
      el('span', { class: 'kf-key' }, label(node)),
      el('span', { class: `kf-val kf-${node.kind}` }, valueText(node)));
    if (!xml) {
      const pos = model.position(node.start);
      row.title = `line ${pos.line}, column ${pos.column}`;
    }
    if (node.kind === 'string' && node.key === 'reference') {
      const value = model.stringValue(node);
      const target = containedTarget(model, node, value) ?? resolveReference(targets, value);
      if (target) {
        row.append(el('button', {
          type: 'button', class: 'kf-ref', tabindex: '-1', 'data-testid': 'fhir-ref',
          onclick: (e) => {
            e.stopPropagation();
            reveal(target, true);
          },
        }, `→ ${target.parent?.key === 'contained' ? `contained[${target.index}]` : target.parent?.index !== undefined ? `entry[${target.parent.index}]` : target.path}`));
      }
    }
    const own = pinned.get(node);
    if (own) {
      for (const issue of own) {
        row.append(el('span', { class: `kf-pin kf-${issue.severity}`, 'data-testid': 'fhir-pin' },
          `${issue.severity} line ${issue.line}, column ${issue.column}: ${issue.details}`));
      }
    } else if (container && inside.get(node)) {
      row.append(el('span', { class: 'kf-inside', title: 'issues inside' }, `${inside.get(node)} inside`));
    }
    const li = el('li', { role: 'treeitem', tabindex: '-1', 'aria-level': String(node.depth + 1), 'aria-selected': 'false' }, row);
    if (container) li.setAttribute('aria-expanded', 'false');
    li.kfNode = node;
    items.set(node, li);
    row.addEventListener('click', () => {
      select(li);
      if (container) toggle(li);
      if (!xml) pane.jumpOffset(node.start);
    });
    return li;
  }

  function renderChildren(li, upTo = 0) {
    const node = li.kfNode;
    let group = li.querySelector(':scope > [role=group]');
    if (!group) {
      group = el('ul', { role: 'group' });
      li.append(group);
      group.kfShown = 0;
    }
    const kids = model.children(node);
    const want = Math.min(kids.length, Math.max(group.kfShown + PAGE, Math.ceil((upTo + 1) / PAGE) * PAGE));
    if (want <= group.kfShown) return group;
    group.querySelector(':scope > .kf-more')?.remove();
    const frag = document.createDocumentFragment();
    for (let i = group.kfShown; i < want; i++) frag.append(itemFor(kids[i]));
    group.append(frag);
    group.kfShown = want;
    if (want < kids.length) {
      const more = el('li', { role: 'treeitem', tabindex: '-1', class: 'kf-more', 'aria-level': String(node.depth + 2) },
        `${kids.length - want} more…`);
      more.kfMore = () => {
        renderChildren(li, want);
        const next = items.get(kids[want]);
        if (next) select(next, true);
      };
      more.addEventListener('click', more.kfMore);
      group.append(more);
    }
    return group;
  }

  function expand(li, open = true) {
    if (!li.hasAttribute('aria-expanded')) return;
    if (open) renderChildren(li);
    li.setAttribute('aria-expanded', String(open));
    li.querySelector(':scope > .kf-row > .kf-twisty').textContent = open ? '▾' : '▸';
    const group = li.querySelector(':scope > [role=group]');
    if (group) group.hidden = !open;
  }

  function toggle(li) {
    expand(li, li.getAttribute('aria-expanded') !== 'true');
  }

  let selected = null;
  function select(li, focus = true) {
    if (selected) {
      selected.setAttribute('aria-selected', 'false');
      selected.tabIndex = -1;
    }
    selected = li;
    li.setAttribute('aria-selected', 'true');
    li.tabIndex = 0;
    // The selected node is part of a shared link (the root is the default).
    const path = li.kfNode && li.kfNode !== model.root ? li.kfNode.path : null;
    if (focus && ctx.hash?.get('node') !== path) ctx.hash?.set('node', path);
    if (focus) li.focus({ preventScroll: false });
  }

  /** Expands every ancestor of `node`, selects it and, with flash, highlights it for a moment. */
  function reveal(node, flash) {
    const chain = JsonModel.ancestry(node);
    for (let i = 0; i < chain.length - 1; i++) {
      const li = items.get(chain[i]);
      const next = chain[i + 1];
      const index = model.children(chain[i]).indexOf(next);
      renderChildren(li, index);
      expand(li, true);
    }
    const li = items.get(node);
    if (!li) return;
    select(li);
    li.scrollIntoView({ block: 'center' });
    if (flash) {
      for (const old of tree.querySelectorAll('.kf-flash')) old.classList.remove('kf-flash');
      li.classList.add('kf-flash');
      ctx.hash?.set('node', node.path || '');
    }
    if (!xml) pane.jumpOffset(node.start);
  }

  function visibleItems() {
    return [...tree.querySelectorAll('[role=treeitem]')].filter((li) => !li.parentElement.closest('[role=group][hidden]'));
  }

  tree.addEventListener('keydown', (e) => {
    const li = e.target.closest('[role=treeitem]');
    if (!li) return;
    const node = li.kfNode;
    const open = li.getAttribute('aria-expanded') === 'true';
    let handled = true;
    if (e.key === 'ArrowDown' || e.key === 'ArrowUp') {
      const all = visibleItems();
      const next = all[all.indexOf(li) + (e.key === 'ArrowDown' ? 1 : -1)];
      if (next) select(next);
    } else if (e.key === 'ArrowRight') {
      if (li.hasAttribute('aria-expanded') && !open) expand(li, true);
      else if (open) {
        const first = li.querySelector(':scope > [role=group] > [role=treeitem]');
        if (first) select(first);
      }
    } else if (e.key === 'ArrowLeft') {
      if (open) expand(li, false);
      else {
        const parent = li.parentElement.closest('[role=treeitem]');
        if (parent) select(parent);
      }
    } else if (e.key === 'Home') {
      select(visibleItems()[0]);
    } else if (e.key === 'End') {
      const all = visibleItems();
      select(all[all.length - 1]);
    } else if (e.key === 'Enter' || e.key === ' ') {
      if (li.kfMore) li.kfMore();
      else {
        const ref = li.querySelector(':scope > .kf-row > .kf-ref');
        if (ref && e.key === 'Enter') ref.click();
        else if (li.hasAttribute('aria-expanded')) toggle(li);
        if (node && !xml) pane.jumpOffset(node.start);
      }
    } else handled = false;
    if (handled) e.preventDefault();
  });

  const top = itemFor(model.root);
  tree.append(top);
  expand(top, true);
  select(top, false);
  // A shared link names a node: open the tree down to it.
  const wanted = ctx.hash?.get('node');
  if (wanted) reveal(model.nodeForPath(wanted), true);

  return {
    unmount() {
      pane.close();
      root.replaceChildren();
    },
    /** For tests and the NDJSON view: reveal a node by its FHIRPath location. */
    reveal: (path) => reveal(model.nodeForPath(path), true),
  };
}

/** The raw document (a TextLines) with line numbers; only the lines in view are in the DOM. */
function rawPane(model, name) {
  const lines = model.lineCount;
  const viewport = el('div', { class: 'kf-raw', tabindex: '0', role: 'region', 'aria-label': `${name}, ${lines} lines`, 'data-testid': 'fhir-raw' });
  const spacer = el('div', { class: 'kf-raw-spacer' });
  const layer = el('div', { class: 'kf-raw-lines' });
  viewport.append(spacer, layer);
  spacer.style.height = `${lines * LINE_PX}px`;
  const gutter = String(lines).length;
  let mark = null; // { line, column }
  let frame = 0;

  function lineElement(n) {
    const [start, end] = model.lineRange(n);
    let text;
    let before = '';
    let marked = '';
    let after = '';
    const long = end - start > RAW_WINDOW;
    if (mark && mark.line === n) {
      const at = Math.min(end, start + mark.column - 1);
      const from = long ? Math.max(start, at - RAW_WINDOW / 4) : start;
      const to = long ? Math.min(end, at + RAW_WINDOW) : end;
      before = (from > start ? '…' : '') + model.text(from, at);
      // One character marked: a UTF-8 lead byte takes its continuation bytes with it.
      let markEnd = Math.min(to, at + 1);
      while (markEnd < to && (model.bytes[markEnd] & 0xc0) === 0x80) markEnd++;
      marked = model.text(at, markEnd) || ' ';
      after = model.text(markEnd, to) + (to < end ? '…' : '');
    } else {
      text = model.text(start, long ? start + RAW_WINDOW : end) + (long ? '…' : '');
    }
    const row = el('div', { class: `kf-line${mark && mark.line === n ? ' kf-line-mark' : ''}`, 'data-line': String(n) },
      el('span', { class: 'kf-no', 'aria-hidden': 'true' }, String(n).padStart(gutter, ' ')));
    const body = el('span', { class: 'kf-text' });
    if (text !== undefined) body.textContent = text;
    else body.append(before, el('mark', {}, marked), after);
    row.append(body);
    row.style.top = `${(n - 1) * LINE_PX}px`;
    return row;
  }

  function draw() {
    frame = 0;
    const first = Math.max(1, Math.floor(viewport.scrollTop / LINE_PX) - 5);
    const count = Math.ceil((viewport.clientHeight || 600) / LINE_PX) + 10;
    const last = Math.min(lines, first + count);
    const frag = document.createDocumentFragment();
    for (let n = first; n <= last; n++) frag.append(lineElement(n));
    layer.replaceChildren(frag);
  }
  const schedule = () => {
    if (!frame) frame = requestAnimationFrame(draw);
  };
  viewport.addEventListener('scroll', schedule);
  const observer = new ResizeObserver(schedule);
  observer.observe(viewport);
  draw();

  return {
    element: viewport,
    jump(line, column) {
      mark = { line, column };
      viewport.scrollTop = Math.max(0, (line - 1) * LINE_PX - viewport.clientHeight / 3);
      draw();
      const m = layer.querySelector('mark');
      if (m) viewport.scrollLeft = Math.max(0, m.offsetLeft - viewport.clientWidth / 3);
    },
    jumpOffset(offset) {
      const p = model.position(offset);
      this.jump(p.line, p.column);
    },
    close() {
      observer.disconnect();
      if (frame) cancelAnimationFrame(frame);
    },
  };
}

