// The HL7 view's logic without DOM: the rows of one message's table (decoded from core's JSON
// shape, or raw from its bytes), and the test for binary bytes in a file. Node runs it in
// test/kinds_model.test.mjs.
import { fieldName } from '../hl7-fields.mjs';

/**
 * True when `bytes` hold control bytes no ER7 text has: anything below 0x20 but TAB, LF, CR and
 * MLLP's VT and FS, or DEL. Such a file is rejected with core's strict error rather than shown with
 * the junk silently skipped; a tolerant read still skips comments and stray text lines.
 */
export function hasBinary(bytes, limit = bytes.length) {
  const n = Math.min(limit, bytes.length);
  for (let i = 0; i < n; i++) {
    const c = bytes[i];
    if (c < 0x20 ? c !== 0x09 && c !== 0x0a && c !== 0x0d && c !== 0x0b && c !== 0x1c : c === 0x7f) return true;
  }
  return false;
}

/** The parts of a decoded field (core's JSON shape) with their paths: `5`, `5[2]`, `5[2].1`, `5[2].1.3`. */
export function fieldParts(value) {
  if (value === null) return [{ path: '', text: null }];
  if (typeof value === 'string') return [{ path: '', text: value }];
  const out = [];
  const reps = value;
  reps.forEach((rep, r) => {
    const rp = reps.length > 1 ? `[${r + 1}]` : '';
    if (rep === null || typeof rep === 'string') {
      out.push({ path: rp, text: rep });
      return;
    }
    rep.forEach((comp, c) => {
      const cp = `${rp}.${c + 1}`;
      if (comp === null || typeof comp === 'string') {
        out.push({ path: cp, text: comp });
        return;
      }
      comp.forEach((sub, s) => out.push({ path: `${cp}.${s + 1}`, text: sub }));
    });
  });
  return out;
}

/**
 * The table of one message: one row per field present, `{ segment, index, field, name, parts }`
 * where index counts segments from 1 and parts are fieldParts (decoded) or one raw part.
 */
export function messageRows(json, rawText) {
  const rows = [];
  const rawSegs = rawText === undefined ? null : rawSegments(rawText, json.delimiters);
  json.segments.forEach((seg, si) => {
    const raw = rawSegs ? rawSegs[si] : null;
    seg.fields.forEach((value, fi) => {
      const n = fi + 1;
      const empty = value === '' || (Array.isArray(value) && value.length === 0);
      if (empty) return;
      const parts = raw ? [{ path: '', text: raw[n] ?? '' }] : fieldParts(value);
      rows.push({ segment: seg.id, index: si + 1, field: n, name: fieldName(seg.id, n), parts });
    });
  });
  return rows;
}

/**
 * Each segment of the raw text split at the field separator: `fields[n]` is field n as written
 * (escapes kept). For MSH, field 1 is the separator itself and field 2 the encoding characters.
 */
export function rawSegments(text, delimiters) {
  const fs = delimiters ? delimiters[0] : '|';
  const out = [];
  for (const line of text.split(/\r\n|\r|\n/)) {
    if (line === '' || !/^[A-Z0-9]{3}/.test(line)) continue;
    const parts = line.split(fs);
    const fields = [];
    if (parts[0] === 'MSH' || parts[0] === 'FHS' || parts[0] === 'BHS') {
      fields[1] = fs;
      for (let i = 1; i < parts.length; i++) fields[i + 1] = parts[i];
    } else {
      for (let i = 1; i < parts.length; i++) fields[i] = parts[i];
    }
    out.push(fields);
  }
  return out;
}
