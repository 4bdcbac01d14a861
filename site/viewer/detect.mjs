// What kind of file the first bytes say it is: the magic of a .quire file, the first characters of
// JSON / NDJSON / HL7 v2 (also MLLP-framed) / CSV. The extension is never looked at: a file named
// .json may be NDJSON, a download may have no name at all. No DOM: the tests run it in Node too.

/** How many bytes of a file detectKind wants (it reads no further). */
export const DETECT_BYTES = 64 * 1024;

const QUIRE_MAGIC = [0x51, 0x55, 0x49, 0x52, 0x45, 0x00]; // "QUIRE\0", docs/format.md §1
const MLLP_START = 0x0b;

function startsWith(bytes, at, ascii) {
  if (at + ascii.length > bytes.length) return false;
  for (let i = 0; i < ascii.length; i++) if (bytes[at + i] !== ascii.charCodeAt(i)) return false;
  return true;
}

function isSpace(b) {
  return b === 0x20 || b === 0x09 || b === 0x0a || b === 0x0d;
}

/** Bytes that no text file has: NUL and the C0 controls other than tab, LF, VT (MLLP), FF, CR, FS (MLLP). */
function binaryBytes(bytes, limit) {
  let bad = 0;
  for (let i = 0; i < limit; i++) {
    const b = bytes[i];
    if (b < 0x20 && b !== 0x09 && b !== 0x0a && b !== 0x0b && b !== 0x0c && b !== 0x0d && b !== 0x1c) bad++;
  }
  return bad;
}

/**
 * Scans JSON from `at` to the end of the first top-level value (strings and escapes skipped).
 * Returns the offset after it, or -1 when the value does not end within the bytes. Depth is a
 * counter, so a document nested 100,000 deep costs nothing here.
 */
function endOfValue(bytes, at) {
  let depth = 0;
  let inString = false;
  for (let i = at; i < bytes.length; i++) {
    const b = bytes[i];
    if (inString) {
      if (b === 0x5c) i++;
      else if (b === 0x22) inString = false;
    } else if (b === 0x22) inString = true;
    else if (b === 0x7b || b === 0x5b) depth++;
    else if (b === 0x7d || b === 0x5d) {
      depth--;
      if (depth === 0) return i + 1;
    }
  }
  return -1;
}

const HL7_HEADERS = ['MSH', 'FHS', 'BHS'];

function hl7At(bytes, at) {
  // MSH|^~\&: the segment name, then the field separator; any separator is allowed, | is usual.
  return HL7_HEADERS.some((h) => startsWith(bytes, at, h)) && at + 3 < bytes.length && bytes[at + 3] > 0x20 && bytes[at + 3] < 0x7f;
}

/** CSV: printable text whose first lines split into the same number (≥ 2) of fields on one delimiter. */
function csvShape(text) {
  const lines = text.split(/\r\n|\n|\r/).filter((l) => l.length > 0);
  if (lines.length === 0) return null;
  // The last line may be cut off by the detection window; judge the complete ones.
  const complete = lines.length > 1 ? lines.slice(0, Math.min(lines.length - 1, 20)) : lines;
  for (const delimiter of [',', '\t', ';']) {
    const counts = complete.map((l) => l.split(delimiter).length);
    if (counts[0] >= 2 && counts.every((c) => c === counts[0])) return delimiter;
  }
  // Quoted fields may hold the delimiter: accept a header of ≥ 2 fields when the rest differ.
  if (complete[0].split(',').length >= 2 && !/[{}]/.test(complete[0])) return ',';
  return null;
}

/**
 * @param {Uint8Array} firstBytes the file's first bytes (up to DETECT_BYTES; fewer for a short file)
 * @returns {{ kind: 'quire'|'fhir'|'ndjson'|'hl7'|'csv'|'unknown', reason: string }}
 */
export function detectKind(firstBytes) {
  const bytes = firstBytes;
  if (bytes.length === 0) return { kind: 'unknown', reason: 'the file is empty' };
  if (QUIRE_MAGIC.every((b, i) => bytes[i] === b)) return { kind: 'quire', reason: 'starts with the .quire magic "QUIRE\\0"' };
  let at = 0;
  if (startsWith(bytes, 0, '\xef\xbb\xbf')) at = 3; // a UTF-8 byte order mark
  if (bytes[at] === MLLP_START && hl7At(bytes, at + 1)) return { kind: 'hl7', reason: 'an MLLP frame (0x0B) around an HL7 v2 header segment' };
  while (at < bytes.length && isSpace(bytes[at])) at++;
  if (at === bytes.length) return { kind: 'unknown', reason: 'the first bytes are all white space' };
  const window = Math.min(bytes.length, 4096);
  if (binaryBytes(bytes, window) > 0) {
    if (hl7At(bytes, at)) return { kind: 'hl7', reason: 'starts with an HL7 v2 header segment (binary bytes follow)' };
    return { kind: 'unknown', reason: 'binary bytes: control characters within the first 4 KiB' };
  }
  if (hl7At(bytes, at)) return { kind: 'hl7', reason: `starts with an HL7 v2 ${String.fromCharCode(...bytes.subarray(at, at + 3))} segment` };
  if (bytes[at] === 0x7b) {
    const end = endOfValue(bytes, at);
    if (end > 0) {
      let next = end;
      let newline = false;
      while (next < bytes.length && isSpace(bytes[next])) {
        if (bytes[next] === 0x0a) newline = true;
        next++;
      }
      if (newline && bytes[next] === 0x7b) return { kind: 'ndjson', reason: 'one JSON object a line (NDJSON)' };
    }
    return { kind: 'fhir', reason: 'a JSON object (a FHIR resource or Bundle)' };
  }
  if (bytes[at] === 0x5b) return { kind: 'fhir', reason: 'a JSON array (read as JSON; FHIR has no top-level arrays)' };
  const text = new TextDecoder('utf-8', { fatal: false }).decode(bytes.subarray(at, Math.min(bytes.length, at + 16384)));
  if (text.includes('\ufffd')) return { kind: 'unknown', reason: 'not UTF-8 text' };
  // A file of messages with notes before them (HAPI's test files open with a comment).
  const later = /(?:^|[\r\n])(MSH|FHS|BHS)\|/.exec(text.slice(0, 4096));
  if (later) return { kind: 'hl7', reason: `an HL7 v2 ${later[1]} segment at line start after ${later.index} characters of other text` };
  const delimiter = csvShape(text);
  if (delimiter) return { kind: 'csv', reason: `text in rows of fields split by ${delimiter === '\t' ? 'tabs' : `"${delimiter}"`} (CSV)` };
  return { kind: 'unknown', reason: 'text that is not JSON, NDJSON, HL7 v2 or CSV' };
}
