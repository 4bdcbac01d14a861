// FHIR R4: validate, parse and format resources (JSON or XML) with the same core as native quire.
import type { ErrorRecord } from './quire.mjs';
import { QuireError } from './errors.js';
import { allocate, INPUT_PADDING, unsigned, wasm, withInput, type Input } from './module.js';

/** How to read and validate, and the bounds that make hostile input cost a bounded amount. */
export interface FhirOptions {
  /** parse()/format(): throw UNKNOWN_ELEMENT on an element the R4 definitions do not know (default false: keep and report it). */
  strict?: boolean;
  /** Deepest JSON nesting (default 256, at most 1024). */
  maxDepth?: number;
  /** Largest input in bytes (default 1 GiB). */
  maxBytes?: number;
  /** Issues kept before a final "too-costly" issue (default 1000). */
  maxIssues?: number;
  /** Contained resources per resource (default 1000); TOO_MANY_CONTAINED beyond. */
  maxContained?: number;
  /** Check codes of required bindings to small closed value sets (default true). */
  checkCodes?: boolean;
  /** Check Reference.reference formats and `#id` targets (default true). */
  checkReferences?: boolean;
  /** Evaluate the R4 invariants (dom-2, ele-1, pat-1...) with the FHIRPath engine (default true). */
  checkInvariants?: boolean;
  /**
   * The input's form: FHIR JSON, R4's XML form, or 'detect' (the default: XML when the first byte
   * after a byte order mark and white space is `<`). Issues of XML input are at XML lines and columns.
   */
  syntax?: 'json' | 'xml' | 'detect';
}

/** One finding, shaped like an OperationOutcome.issue. */
export interface FhirIssue {
  severity: 'error' | 'warning' | 'information';
  /** OperationOutcome issue-type code: "structure", "required", "value", "invalid", "code-invalid", "not-found", "not-supported", "too-costly", "invariant" (a failed invariant), "informational" (an invariant not checked)... */
  code: string;
  /** The invariant's key (`dom-2`, `ele-1`) on issues of invariants, failed or not checked. */
  key?: string;
  details: string;
  /** FHIRPath location, e.g. `Bundle.entry[3].resource.name[0].given[1]`. */
  expression: string;
  line: number;
  column: number;
  offset: number;
  /** Set when the input could not be read at all (INVALID_JSON, INVALID_RESOURCE, MAX_DEPTH_EXCEEDED...). */
  error?: string;
}

/** The result of validate(). */
export interface FhirOutcome {
  issues: FhirIssue[];
  errors: number;
  warnings: number;
  /** maxIssues cut the list (its last issue is a "too-costly" one). */
  truncated: boolean;
  /** No errors. */
  ok: boolean;
}

interface FhirOptionsRecord {
  strict: boolean;
  maxDepth: number;
  maxBytes: number;
  maxIssues: number;
  maxContained: number;
  checkCodes: boolean;
  checkReferences: boolean;
  checkInvariants: boolean;
  syntax: number;
}

interface FhirTextRecord {
  error: ErrorRecord;
  text: string;
  issues: string;
  errors: number;
  warnings: number;
  truncated: boolean;
}

interface FhirBindings {
  /** The address of the result block (wasm/bind_fhir.cpp), which the caller frees; 0 when the heap is full. */
  fhirValidate(pointer: number, length: number, flags: number, maxDepth: number, maxBytes: number, maxIssues: number, maxContained: number): number;
  fhirWrite(pointer: number, length: number, pretty: boolean, toXml: boolean, options: FhirOptionsRecord): FhirTextRecord;
  fhirDefinitionsVersion(): string;
}

function bindings(): FhirBindings {
  return wasm('fhir') as unknown as FhirBindings;
}

function toRecord(o: FhirOptions | undefined): FhirOptionsRecord {
  return {
    strict: o?.strict ?? false,
    maxDepth: o?.maxDepth ?? 0,
    maxBytes: o?.maxBytes ?? 0,
    maxIssues: o?.maxIssues ?? 0,
    maxContained: o?.maxContained ?? 0,
    checkCodes: o?.checkCodes ?? true,
    checkReferences: o?.checkReferences ?? true,
    checkInvariants: o?.checkInvariants ?? true,
    syntax: SYNTAX[o?.syntax ?? 'detect'] ?? 2,
  };
}

const SYNTAX: Record<string, number> = { json: 0, xml: 1, detect: 2 };

// validate()'s options as bits (wasm/bind_fhir.cpp, FLAG_*); the syntax in bits 4-5.
const FLAG_STRICT = 1;
const FLAG_CHECK_CODES = 2;
const FLAG_CHECK_REFERENCES = 4;
const FLAG_CHECK_INVARIANTS = 8;
const DEFAULT_FLAGS = FLAG_CHECK_CODES | FLAG_CHECK_REFERENCES | FLAG_CHECK_INVARIANTS | (2 << 4);

function toFlags(o: FhirOptions | undefined): number {
  if (o === undefined) return DEFAULT_FLAGS;
  return (
    ((o.strict ?? false) ? FLAG_STRICT : 0) |
    ((o.checkCodes ?? true) ? FLAG_CHECK_CODES : 0) |
    ((o.checkReferences ?? true) ? FLAG_CHECK_REFERENCES : 0) |
    ((o.checkInvariants ?? true) ? FLAG_CHECK_INVARIANTS : 0) |
    ((SYNTAX[o.syntax ?? 'detect'] ?? 2) << 4)
  );
}

function write(input: Input, pretty: boolean, toXml: boolean, options: FhirOptions | undefined): FhirTextRecord {
  const r = withInput(input, (pointer, length) => bindings().fhirWrite(pointer, length, pretty, toXml, toRecord(options)));
  if (r.error.code) throw QuireError.fromRecord(r.error);
  return r;
}

const encoder = new TextEncoder();
const decoder = new TextDecoder();

/**
 * Strings up to this many UTF-16 units are encoded straight into the heap (encodeInto, with room
 * for three bytes a unit, UTF-8's most): the text is copied once, not encoded and then copied.
 * Longer ones go through withInput, so that the heap holds their exact size.
 */
const DIRECT_ENCODE_MAX = 8 * 1024 * 1024;

function withText<T>(input: Input, fn: (pointer: number, length: number) => T): T {
  if (typeof input !== 'string' || input.length > DIRECT_ENCODE_MAX) return withInput(input, fn);
  const m = wasm();
  const room = input.length * 3;
  const pointer = allocate(m, room + INPUT_PADDING, `${room} bytes of input`);
  try {
    // Views of wasm memory go stale when it grows: take HEAPU8 after the allocation.
    const heap = m.HEAPU8;
    const { written } = encoder.encodeInto(input, heap.subarray(pointer, pointer + room));
    heap.fill(0, pointer + written, pointer + written + INPUT_PADDING);
    return fn(pointer, written);
  } finally {
    m._free(pointer);
  }
}

const SEVERITIES: FhirIssue['severity'][] = ['error', 'warning', 'information'];
const NONE = 0xffffffff;
const ISSUE_WORDS = 9;
const HEADER_WORDS = 6;

// A view of the whole heap as uint32, made again when the memory grows (its buffer changes): the
// result block's words are read through it, not through two typed arrays made per call.
let heapWords: Uint32Array | undefined;

function wordsOf(heap: Uint8Array): Uint32Array {
  if (heapWords === undefined || heapWords.buffer !== heap.buffer) heapWords = new Uint32Array(heap.buffer);
  return heapWords;
}

// The outcome object, members in this order (a function of the module, not a closure made per call:
// the bundle names each closure it makes with a defineProperty call, __name, a tenth of a small
// resource's validate()).
function outcomeOf(issues: FhirIssue[], errors: number, warnings: number, truncated: boolean): FhirOutcome {
  return { issues, errors, warnings, truncated, ok: errors === 0 };
}

/**
 * validate()'s result block (wasm/bind_fhir.cpp, issues_block): six uint32 (form, errors, warnings,
 * truncated, two sizes), then either the issues as a table of string numbers over one ASCII text
 * (form 0: the issue objects are made here, each repeated string decoded once) or as a JSON array
 * (form 1). Both give the same objects, members in issues_to_json's order.
 */
function readOutcome(heap: Uint8Array, block: number): FhirOutcome {
  const words = wordsOf(heap);
  const head = block >>> 2; // malloc's blocks are aligned
  const errors = words[head + 1]!;
  const warnings = words[head + 2]!;
  const truncated = words[head + 3] !== 0;
  const start = block + 4 * HEADER_WORDS;
  if (words[head]! === 1) return outcomeOf(JSON.parse(decoder.decode(heap.subarray(start, start + words[head + 4]!))) as FhirIssue[], errors, warnings, truncated);
  const count = words[head + 4]!;
  if (count === 0) return outcomeOf([], errors, warnings, truncated);
  const stringCount = words[head + 5]!;
  const first = head + HEADER_WORDS; // the strings' ends, then the issues' words
  const textStart = start + 4 * (stringCount + count * ISSUE_WORDS);
  const text = decoder.decode(heap.subarray(textStart, textStart + (stringCount > 0 ? words[first + stringCount - 1]! : 0)));
  const strings: string[] = new Array<string>(stringCount);
  for (let k = 0, at = 0; k < stringCount; ++k) {
    const end = words[first + k]!;
    strings[k] = text.slice(at, end);
    at = end;
  }
  const issues: FhirIssue[] = new Array<FhirIssue>(count);
  for (let i = 0, w = first + stringCount; i < count; ++i, w += ISSUE_WORDS) {
    const severity = SEVERITIES[words[w]!]!;
    const code = strings[words[w + 1]!]!;
    const key = words[w + 2]!;
    const details = strings[words[w + 3]!]!;
    const expression = strings[words[w + 4]!]!;
    const line = words[w + 5]!;
    const column = words[w + 6]!;
    const offset = words[w + 7]!;
    const issue: FhirIssue =
      key === NONE
        ? { severity, code, details, expression, line, column, offset }
        : { severity, code, key: strings[key]!, details, expression, line, column, offset };
    const error = words[w + 8]!;
    if (error !== NONE) issue.error = strings[error]!;
    issues[i] = issue;
  }
  return outcomeOf(issues, errors, warnings, truncated);
}

/** A resource as a plain object (what JSON.parse gives). */
export type FhirResource = { resourceType: string; [key: string]: unknown };

/** The FHIR module. */
export const fhir = {
  /** Validates a resource or Bundle against the R4 base definitions: every issue up to maxIssues. Never throws on bad input (it becomes an issue). */
  validate(input: Input, options?: FhirOptions): FhirOutcome {
    const flags = toFlags(options);
    const block = unsigned(
      withText(input, (pointer, length) =>
        bindings().fhirValidate(pointer, length, flags, options?.maxDepth ?? 0, options?.maxBytes ?? 0, options?.maxIssues ?? 0, options?.maxContained ?? 0),
      ),
    );
    if (block === 0) throw new QuireError('OUT_OF_MEMORY', 'OUT_OF_MEMORY: the wasm heap cannot hold the issues of fhir.validate');
    const m = wasm();
    try {
      return readOutcome(m.HEAPU8, block);
    } finally {
      m._free(block);
    }
  },

  /**
   * Reads a resource into a plain JavaScript object, keys in the specification's order. Decimals
   * become JS numbers here (`0.700` is 0.7): use format() to keep their exact text. Throws
   * QuireError when the input is not a readable resource (or, with strict, has unknown elements).
   */
  parse(input: Input, options?: FhirOptions): FhirResource {
    return JSON.parse(write(input, false, false, options).text) as FhirResource;
  },

  /**
   * Canonical FHIR JSON: keys in the specification's order, numbers exactly as written; or, with
   * `to: 'xml'`, R4's XML form (elements in the specification's order). JSON or XML input. Throws
   * QuireError on unreadable input (and INVALID_RESOURCE for what XML cannot hold).
   */
  format(input: Input, options?: FhirOptions & { pretty?: boolean; to?: 'json' | 'xml' }): string {
    return write(input, options?.pretty ?? false, options?.to === 'xml', options).text;
  },

  /** The entries of a Bundle one by one: `{ index, fullUrl, resource }` (resource as a plain object). */
  *entries(input: Input, options?: FhirOptions): Generator<{ index: number; fullUrl?: string; resource?: FhirResource }> {
    const bundle = fhir.parse(input, options) as FhirResource & { entry?: Array<{ fullUrl?: string; resource?: FhirResource }> };
    if (bundle.resourceType !== 'Bundle') throw new QuireError('WRONG_TYPE', `WRONG_TYPE: expected a Bundle, found ${bundle.resourceType}`);
    const entries = bundle.entry ?? [];
    for (let index = 0; index < entries.length; ++index) {
      const e = entries[index]!;
      yield { index, fullUrl: e.fullUrl, resource: e.resource };
    }
  },

  /** The FHIR version of the compiled-in definitions ("4.0.1"). */
  get definitionsVersion(): string {
    return bindings().fhirDefinitionsVersion();
  },
};

