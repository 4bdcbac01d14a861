// FHIR R4: validate, parse and format resources (JSON or XML) with the same core as native quire.
import type { ErrorRecord } from './quire.mjs';
import { QuireError } from './errors.js';
import { wasm, withInput, type Input } from './module.js';

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
  fhirValidate(pointer: number, length: number, options: FhirOptionsRecord): FhirTextRecord;
  fhirWrite(pointer: number, length: number, pretty: boolean, toXml: boolean, options: FhirOptionsRecord): FhirTextRecord;
  fhirDefinitionsVersion(): string;
}

function bindings(): FhirBindings {
  return wasm() as unknown as FhirBindings;
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

function write(input: Input, pretty: boolean, toXml: boolean, options: FhirOptions | undefined): FhirTextRecord {
  const r = withInput(input, (pointer, length) => bindings().fhirWrite(pointer, length, pretty, toXml, toRecord(options)));
  if (r.error.code) throw QuireError.fromRecord(r.error);
  return r;
}

/** A resource as a plain object (what JSON.parse gives). */
export type FhirResource = { resourceType: string; [key: string]: unknown };

/** The FHIR module. */
export const fhir = {
  /** Validates a resource or Bundle against the R4 base definitions: every issue up to maxIssues. Never throws on bad input (it becomes an issue). */
  validate(input: Input, options?: FhirOptions): FhirOutcome {
    const r = withInput(input, (pointer, length) => bindings().fhirValidate(pointer, length, toRecord(options)));
    return { issues: JSON.parse(r.issues) as FhirIssue[], errors: r.errors, warnings: r.warnings, truncated: r.truncated, ok: r.errors === 0 };
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

