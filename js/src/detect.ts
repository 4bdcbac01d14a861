// What kind of input the first bytes say a file is: core's rule (quire/detect.h), the same the
// `quire` CLI applies to its inputs, so that the package and the CLI read a file alike.
import { wasm, withInput, type Input } from './module.js';

/** How many bytes detect() needs at most to decide (the viewer reads this many). */
export const DETECT_BYTES = 64 * 1024;

/**
 * `quire`: a .quire file; `fhir`: one JSON object over several lines (a resource or Bundle);
 * `json`: one JSON array; `ndjson`: a JSON value a line (a resource on one line is one too);
 * `hl7`: HL7 v2 (MLLP-framed too); `csv`; `empty`: no bytes but white space; `unknown`;
 * `need-more`: the bytes end inside a first line that may be JSON (only with `complete: false`);
 * `fhir-xml`: `<` first (after a byte order mark and white space): a resource or Bundle in R4 XML.
 */
export type InputKind = 'quire' | 'fhir' | 'json' | 'ndjson' | 'hl7' | 'csv' | 'empty' | 'unknown' | 'need-more' | 'fhir-xml';

export interface Detection {
  kind: InputKind;
  /** One line for people: why it is that kind. */
  reason: string;
}

export interface DetectOptions {
  /** The bytes are the whole input (default true): a last line without a line end is complete. */
  complete?: boolean;
  /** The file's name: `.ndjson` and `.jsonl` say NDJSON without a look (no other name is looked at). */
  name?: string;
}

/** The kind of an input from its first bytes (up to DETECT_BYTES of them; more are not read). */
export function detect(firstBytes: Input, options: DetectOptions = {}): Detection {
  const r = withInput(firstBytes, (pointer, length) => wasm().detect(pointer, length, options.complete ?? true, options.name ?? ''));
  return { kind: r.kind as InputKind, reason: r.reason };
}
