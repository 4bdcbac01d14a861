// Errors: bad input is a QuireError with a stable code; misuse (calling before init(), using a
// closed handle) is a plain Error that says what to do.
import type { ErrorRecord } from './quire.mjs';

/** The stable error codes of quire (see core/include/quire/error.h for one line on each). */
export type ErrorCode =
  | 'IO_ERROR' | 'FILE_NOT_FOUND' | 'NOT_A_FILE' | 'EMPTY_INPUT' | 'OUT_OF_MEMORY' | 'OUT_OF_RANGE'
  | 'INVALID_ARGUMENT' | 'MAX_DEPTH_EXCEEDED' | 'DOCUMENT_TOO_LARGE' | 'LINE_TOO_LONG' | 'INVALID_JSON'
  | 'INVALID_UTF8' | 'INVALID_STRING' | 'INVALID_NUMBER' | 'TRAILING_CONTENT' | 'WRONG_TYPE' | 'NO_SUCH_KEY'
  | 'UNKNOWN_ELEMENT' | 'INVALID_RESOURCE' | 'INVALID_HL7' | 'INVALID_ESCAPE' | 'FRAME_TOO_LARGE'
  | 'NOT_A_QUIRE_FILE' | 'UNSUPPORTED_VERSION' | 'CORRUPT_FILE' | 'CORRUPT_BLOCK' | 'WRONG_KEY' | 'INVALID_CSV'
  | 'SCHEMA_MISMATCH' | 'INVALID_QUERY' | 'TOO_MANY_CONTAINED' | (string & {});

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

  /** @internal Builds a QuireError from a record the wasm module returned. */
  static fromRecord(r: ErrorRecord): QuireError {
    let where = '';
    if (r.offset >= 0) where = ` at offset ${r.offset}` + (r.line ? ` (line ${r.line}, column ${r.column})` : '');
    if (r.path) where += ` (${r.path})`;
    return new QuireError(r.code, `${r.code}${where}: ${r.message}`, {
      offset: r.offset >= 0 ? r.offset : undefined,
      line: r.line || undefined,
      column: r.column || undefined,
      path: r.path || undefined,
    });
  }
}
