// FHIRPath (N1 with FHIR R4's additions): an expression is compiled once by core into a handle;
// each evaluation copies the resource into the wasm heap once and gets core's JSON text of the
// result collection back, which this module parses (or, with evaluateText, hands over unparsed).
import type { EmbindHandle, ErrorRecord } from './quire.mjs';
import { QuireError } from './errors.js';
import { Handle } from './handles.js';
import { INTERNAL, checkInternal } from './internal.js';
import { wasm, withInput, type Input } from './module.js';
import type { FhirResource } from './fhir.js';

/**
 * One item of a result collection, as core writes it: booleans, integers and decimals as numbers;
 * strings, dates and times (`"2015-02-04"`, no `@`) as strings; a computed quantity as its
 * FHIRPath text (`"1 'cm'"`); an element (an object of the resource) as its JSON object; a type
 * (from `type()`) as `{ namespace, name }`.
 */
export type FhirpathValue = boolean | number | string | { [key: string]: unknown } | unknown[];

interface ViewTextRecord {
  error: ErrorRecord;
  text: string;
}

interface FhirpathHandle extends EmbindHandle {
  error(): ErrorRecord;
  text(): string;
  evaluate(pointer: number, length: number): ViewTextRecord;
}

interface FhirpathBindings {
  FhirpathExpression: new (pointer: number, length: number) => FhirpathHandle;
}

function resourceInput(resource: FhirResource | object | Input): Input {
  if (typeof resource === 'string' || resource instanceof Uint8Array || resource instanceof ArrayBuffer) return resource;
  if (resource === null || typeof resource !== 'object') throw new TypeError('quire: a FHIRPath context is a resource object, JSON text or bytes');
  return JSON.stringify(resource);
}

/** A compiled FHIRPath expression: evaluate it over any number of resources; close() frees it (or `using`). */
export class FhirpathExpression extends Handle<FhirpathHandle> {
  readonly #text: string;

  /** @internal */
  constructor(token: typeof INTERNAL, handle: FhirpathHandle) {
    checkInternal(token, 'FhirpathExpression', 'fhirpath.compile()');
    super(handle, 'FhirpathExpression');
    this.#text = handle.text();
  }

  /** The expression's text. */
  get expression(): string {
    return this.#text;
  }

  /**
   * The result collection over one resource (an object, or JSON text / bytes), as an array.
   * Decimals become JS numbers (`0.700` is 0.7): evaluateText() keeps their exact text. Throws
   * QuireError: FHIRPATH_TYPE_ERROR (an operand of the wrong type, `offset` in the expression),
   * or the resource's INVALID_JSON.
   */
  evaluate(resource: FhirResource | object | Input): FhirpathValue[] {
    return JSON.parse(this.evaluateText(resource)) as FhirpathValue[];
  }

  /** The result collection as core's JSON text (`[1.0,"a"]`), numbers exactly as core has them. */
  evaluateText(resource: FhirResource | object | Input): string {
    const r = withInput(resourceInput(resource), (pointer, length) => this.handle.evaluate(pointer, length));
    if (r.error.code) throw QuireError.fromRecord(r.error);
    return r.text;
  }

  /** Same as close(), for `using e = fhirpath.compile(...)`. */
  [Symbol.dispose](): void {
    this.close();
  }
}

/** The FHIRPath module. */
export const fhirpath = {
  /**
   * Parses and checks an expression once. Throws QuireError: INVALID_FHIRPATH (syntax; `offset` of
   * the token), UNKNOWN_FUNCTION (no such function, or a wrong number of arguments).
   */
  compile(expression: string): FhirpathExpression {
    if (typeof expression !== 'string') throw new TypeError('quire: a FHIRPath expression is a string');
    const m = wasm('view') as unknown as FhirpathBindings;
    const handle = withInput(expression, (pointer, length) => new m.FhirpathExpression(pointer, length));
    const err = handle.error();
    if (err.code) {
      handle.delete();
      throw QuireError.fromRecord(err);
    }
    return new FhirpathExpression(INTERNAL, handle);
  },

  /** Compiles `expression`, evaluates it over `resource` and frees it: the result collection as an array (see FhirpathExpression.evaluate()). */
  evaluate(expression: string, resource: FhirResource | object | Input): FhirpathValue[] {
    const e = fhirpath.compile(expression);
    try {
      return e.evaluate(resource);
    } finally {
      e.close();
    }
  },

  /** As evaluate(), returning core's JSON text of the collection. */
  evaluateText(expression: string, resource: FhirResource | object | Input): string {
    const e = fhirpath.compile(expression);
    try {
      return e.evaluateText(resource);
    } finally {
      e.close();
    }
  },
};
