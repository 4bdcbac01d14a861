// A lazy index of a JSON document's bytes for the FHIR view: where each value starts and ends,
// its children on demand, and the line and column of any byte. The page never parses the
// document into JavaScript values (that would round decimals and cost memory for every node):
// a node is an offset range of the bytes core already checked (json.check, with its depth
// bound), and what the tree shows of a scalar is its text exactly as written. Iterative, no
// recursion, so no depth reaches the JavaScript stack. No DOM: test/kinds_model.test.mjs runs
// it in Node.

const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const utf8 = new TextDecoder('utf-8', { fatal: false });

function isSpace(c) {
  return c === 0x20 || c === 0x0a || c === 0x0d || c === 0x09;
}

export function skipSpace(b, i) {
  while (i < b.length && isSpace(b[i])) i++;
  return i;
}

/** The end (exclusive) of the string that starts at the quote at `i`. */
function stringEnd(b, i) {
  // indexOf finds the next quote natively; one preceded by an odd run of backslashes is escaped.
  for (let from = i + 1; ; ) {
    const q = b.indexOf(QUOTE, from);
    if (q === -1) return b.length;
    let k = q - 1;
    while (k > i && b[k] === BACKSLASH) k--;
    if ((q - 1 - k) % 2 === 0) return q + 1;
    from = q + 1;
  }
}

/** The end (exclusive) of the value starting at `i` (no leading space). */
export function valueEnd(b, i) {
  const c = b[i];
  if (c === QUOTE) return stringEnd(b, i);
  if (c === 0x7b || c === 0x5b) {
    let depth = 0;
    while (i < b.length) {
      const d = b[i];
      if (d === QUOTE) {
        i = stringEnd(b, i);
        continue;
      }
      if (d === 0x7b || d === 0x5b) depth++;
      else if (d === 0x7d || d === 0x5d) {
        depth--;
        if (depth === 0) return i + 1;
      }
      i++;
    }
    return b.length;
  }
  while (i < b.length) {
    const d = b[i];
    if (d === 0x2c || d === 0x7d || d === 0x5d || isSpace(d)) break;
    i++;
  }
  return i;
}

function kindOf(c) {
  if (c === 0x7b) return 'object';
  if (c === 0x5b) return 'array';
  if (c === QUOTE) return 'string';
  if (c === 0x74 || c === 0x66) return 'boolean';
  if (c === 0x6e) return 'null';
  return 'number';
}

/**
 * Bytes of text with a line index built on first use: the text of a range, the byte range of a
 * line, and the line and column of a byte as core counts them. The raw pane of the FHIR view
 * reads its document (JSON, or XML as written) through this.
 */
export class TextLines {
  constructor(bytes) {
    this.bytes = bytes;
  }

  #lineStarts = null;

  /** The text of bytes [start, end) (UTF-8). */
  text(start, end) {
    return utf8.decode(this.bytes.subarray(start, end));
  }

  #lines() {
    if (this.#lineStarts) return this.#lineStarts;
    const b = this.bytes;
    const starts = [0];
    for (let i = b.indexOf(0x0a); i !== -1; i = b.indexOf(0x0a, i + 1)) starts.push(i + 1);
    this.#lineStarts = starts;
    return starts;
  }

  get lineCount() {
    return this.#lines().length;
  }

  /** Byte range [start, end) of line `n` (1-based), without its line end. */
  lineRange(n) {
    const s = this.#lines();
    const start = s[n - 1];
    let end = n < s.length ? s[n] - 1 : this.bytes.length;
    if (end > start && this.bytes[end - 1] === 0x0d) end--;
    return [start, end];
  }

  /** 1-based line and column (in bytes, as core counts) of a byte offset. */
  position(offset) {
    const s = this.#lines();
    let lo = 0;
    let hi = s.length - 1;
    while (lo < hi) {
      const mid = (lo + hi + 1) >> 1;
      if (s[mid] <= offset) lo = mid;
      else hi = mid - 1;
    }
    return { line: lo + 1, column: offset - s[lo] + 1 };
  }
}

/** The document's bytes with a lazily built tree of nodes `{ kind, start, end, key, index, parent, path, depth }`. */
export class JsonModel extends TextLines {
  constructor(bytes) {
    super(bytes);
    const start = skipSpace(bytes, 0);
    this.root = this.#node(start, null, undefined, undefined);
  }

  #node(start, parent, key, index) {
    const kind = kindOf(this.bytes[start]);
    // The root ends where the document's last value byte is (core checked there is one value):
    // no scan of the whole document just to open it.
    let end;
    if (parent) end = valueEnd(this.bytes, start);
    else {
      end = this.bytes.length;
      while (end > start && isSpace(this.bytes[end - 1])) end--;
    }
    let path;
    if (!parent) path = '';
    else if (index !== undefined) path = `${parent.path}[${index}]`;
    else path = parent.path === '' && parent.parent === null ? key : `${parent.path}.${key}`;
    return { kind, start, end, key, index, parent, path, depth: parent ? parent.depth + 1 : 0, children: null };
  }

  /** A node's text as written (for a string without its quotes; escapes kept). */
  scalarText(node) {
    if (node.kind === 'string') return this.text(node.start + 1, node.end - 1);
    return this.text(node.start, node.end);
  }

  /** A string node's value with JSON escapes decoded (keys, references, resourceType). */
  stringValue(node) {
    if (!node || node.kind !== 'string') return undefined;
    const raw = this.text(node.start, node.end);
    if (!raw.includes('\\')) return raw.slice(1, -1);
    try {
      return JSON.parse(raw);
    } catch {
      return raw.slice(1, -1);
    }
  }

  /** The children of an object or array node, built on first call. */
  children(node) {
    if (node.children) return node.children;
    const b = this.bytes;
    const out = [];
    if (node.kind === 'object') {
      let i = skipSpace(b, node.start + 1);
      while (i < node.end && b[i] === QUOTE) {
        const keyEnd = stringEnd(b, i);
        const keyNode = { kind: 'string', start: i, end: keyEnd };
        const key = this.stringValue(keyNode);
        i = skipSpace(b, keyEnd);
        i = skipSpace(b, i + 1); // the colon
        const child = this.#node(i, node, key, undefined);
        out.push(child);
        i = skipSpace(b, child.end);
        if (b[i] === 0x2c) i = skipSpace(b, i + 1);
      }
    } else if (node.kind === 'array') {
      let i = skipSpace(b, node.start + 1);
      let index = 0;
      while (i < node.end && b[i] !== 0x5d) {
        const child = this.#node(i, node, undefined, index++);
        out.push(child);
        i = skipSpace(b, child.end);
        if (b[i] === 0x2c) i = skipSpace(b, i + 1);
      }
    }
    node.children = out;
    // The root of a resource names its FHIRPath: `Patient`, then `Patient.name[0].given[1]`.
    if (node === this.root && node.kind === 'object' && node.path === '') {
      const rt = out.find((c) => c.key === 'resourceType');
      const name = rt ? this.stringValue(rt) : undefined;
      if (name) {
        node.path = name;
        for (const c of out) c.path = `${name}.${c.key}`;
      }
    }
    return out;
  }

  /** The member `key` of an object node. */
  member(node, key) {
    if (!node || node.kind !== 'object') return undefined;
    return this.children(node).find((c) => c.key === key);
  }

  /** The deepest node whose bytes contain `offset`. */
  nodeAt(offset) {
    let node = this.root;
    for (;;) {
      if (node.kind !== 'object' && node.kind !== 'array') return node;
      const next = this.children(node).find((c) => offset >= c.start && offset < c.end);
      if (!next) return node;
      node = next;
    }
  }

  /**
   * The node a FHIRPath location names (`Bundle.entry[3].resource.name[0].given[1]`), or the
   * nearest ancestor that exists (an issue on a missing element pins to its parent).
   */
  nodeForPath(expression) {
    this.children(this.root);
    const parts = String(expression).split('.');
    let node = this.root;
    if (this.root.path && parts[0] === this.root.path) parts.shift();
    for (const part of parts) {
      const m = /^([^[\]]+)((?:\[\d+\])*)$/.exec(part);
      if (!m) break;
      let next = this.member(node, m[1]);
      if (!next) break;
      for (const idx of m[2].match(/\d+/g) ?? []) {
        if (next.kind !== 'array') break;
        const item = this.children(next)[Number(idx)];
        if (!item) break;
        next = item;
      }
      node = next;
    }
    return node;
  }

  /** The chain of nodes from the root to `node`. */
  static ancestry(node) {
    const chain = [];
    for (let n = node; n; n = n.parent) chain.unshift(n);
    return chain;
  }
}

/**
 * The targets of references inside a Bundle: `fullUrl` and `Type/id` of each entry's resource,
 * each mapped to its entry's resource node. Empty for anything that is not a Bundle.
 */
export function bundleTargets(model) {
  const targets = new Map();
  const root = model.root;
  if (root.kind !== 'object') return targets;
  if (model.stringValue(model.member(root, 'resourceType')) !== 'Bundle') return targets;
  const entries = model.member(root, 'entry');
  if (!entries || entries.kind !== 'array') return targets;
  for (const entry of model.children(entries)) {
    const resource = model.member(entry, 'resource');
    const target = resource ?? entry;
    const fullUrl = model.stringValue(model.member(entry, 'fullUrl'));
    if (fullUrl) targets.set(fullUrl, target);
    if (resource) {
      const type = model.stringValue(model.member(resource, 'resourceType'));
      const id = model.stringValue(model.member(resource, 'id'));
      if (type && id) {
        targets.set(`${type}/${id}`, target);
        // A fullUrl of a server's base with Type/id: a relative reference matches its tail.
        if (fullUrl && fullUrl.endsWith(`/${type}/${id}`)) targets.set(`${type}/${id}`, target);
      }
    }
  }
  return targets;
}

/** The node a `reference` string points to among the targets, or undefined. `Type/id/_history/n` matches `Type/id`. */
export function resolveReference(targets, reference) {
  if (typeof reference !== 'string' || targets.size === 0) return undefined;
  if (targets.has(reference)) return targets.get(reference);
  const m = /^(?:.*\/)?([A-Z][A-Za-z]+\/[A-Za-z0-9\-.]{1,64})(?:\/_history\/[A-Za-z0-9\-.]+)?$/.exec(reference);
  if (m && targets.has(m[1])) return targets.get(m[1]);
  return undefined;
}

/**
 * The contained resource a local reference (`#id`) names: the `contained` entry with that id in the
 * nearest enclosing resource that has a `contained` list. Undefined when there is none.
 */
export function containedTarget(model, node, reference) {
  if (typeof reference !== 'string' || !reference.startsWith('#') || reference.length < 2) return undefined;
  const id = reference.slice(1);
  for (let n = node.parent; n; n = n.parent) {
    if (n.kind !== 'object') continue;
    const contained = model.member(n, 'contained');
    if (!contained || contained.kind !== 'array') continue;
    return model.children(contained).find((c) => model.stringValue(model.member(c, 'id')) === id);
  }
  return undefined;
}
