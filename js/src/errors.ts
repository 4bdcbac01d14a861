// Errors: bad input is a QuireError with a stable code; misuse (calling before init(), using a
// closed handle) is a plain Error that says what to do.
import type { ErrorRecord } from './quire.mjs';

// The codes are generated from core/include/quire/error_list.h (js/scripts/gen-error-codes.mjs).
import type { ErrorCode } from './error_codes.js';
export { ERROR_CODES, type ErrorCode } from './error_codes.js';

/** Bad input: what went wrong (`code`), and where (`offset` in bytes, `line`, `column`, `path`). */
export class QuireError extends Error {
  override name = 'QuireError';
  /** Stable code, e.g. `INVALID_JSON`. */
  readonly code: ErrorCode;
  /** Byte offset into the input, when known. */
  readonly offset: number | undefined;
  /** 1-based line, when known. */
  readonly line: number | undefined;
  /** 1-based column, when known. */
  readonly column: number | undefined;
  /** A location such as `Bundle.entry[3].resource`, when one exists. */
  readonly path: string | undefined;

  constructor(code: ErrorCode, message: string, where: { offset?: number; line?: number; column?: number; path?: string } = {}) {
    super(message);
    this.code = code;
    this.offset = where.offset;
    this.line = where.line;
    this.column = where.column;
    this.path = where.path;
  }

  /** @internal Builds a QuireError from a record the wasm module returned; its message is the core's one line (`text`). */
  static fromRecord(r: ErrorRecord): QuireError {
    return new QuireError(r.code, r.text, {
      offset: r.offset >= 0 ? r.offset : undefined,
      line: r.line || undefined,
      column: r.column || undefined,
      path: r.path || undefined,
    });
  }
}
