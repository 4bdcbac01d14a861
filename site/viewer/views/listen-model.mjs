// A listener's store in the .quire view, without DOM: the test for the row schema `quire listen`
// and the npm package's hl7.listen write (docs/listen.md "Rows", core's listen::row_schema()), the
// columns a message's line reads and how they are laid out. The package has no call that names a
// listener's store, so the schema it returns for the file (names and types) is what is checked:
// layout, not data. Node runs it in test/viewer_listen.test.mjs.

/** The columns of a listener's store, as docs/listen.md "Rows" lists them: [name, type]. */
export const LISTEN_COLUMNS = [
  ['control_id', 'string'],
  ['type', 'string'],
  ['sending_application', 'string'],
  ['sending_facility', 'string'],
  ['receiving_application', 'string'],
  ['receiving_facility', 'string'],
  ['message_time', 'string'],
  ['receive_time', 'timestamp'],
  ['patient_id', 'string'],
  ['ack_code', 'string'],
  ['message', 'string'],
];

/** True when `columns` (a file's `info.columns`: { name, type }) are exactly a listener's rows. */
export function isListenerSchema(columns) {
  if (!Array.isArray(columns) || columns.length !== LISTEN_COLUMNS.length) return false;
  const types = new Map(columns.map((c) => [c.name, c.type]));
  return LISTEN_COLUMNS.every(([name, type]) => types.get(name) === type);
}

/** The columns a line of the list reads (never `message`: that is fetched for the opened row only). */
export const LINE_COLUMNS = ['receive_time', 'type', 'control_id', 'sending_application', 'sending_facility', 'patient_id', 'ack_code'];

/** The list's columns, as the grid shows them (minRem: a column's least width, its share of the rest). */
export const LINE_HEADINGS = [
  { name: 'received', type: 'timestamp', minRem: 15.5 }, // core's text: 2026-12-03T07:30:00.123456Z
  { name: 'type', type: 'string', minRem: 9 },
  { name: 'control ID', type: 'string', minRem: 10 },
  { name: 'sender (application^facility)', type: 'string', minRem: 14 },
  { name: 'patient ID', type: 'string', minRem: 8 },
  { name: 'ACK', type: 'string', minRem: 3.5 },
];

/** The string columns a search may look in, with what the form calls them. */
export const SEARCH_COLUMNS = [
  ['control_id', 'control ID'],
  ['patient_id', 'patient ID'],
  ['type', 'type'],
  ['sending_application', 'sending application'],
  ['sending_facility', 'sending facility'],
  ['receiving_application', 'receiving application'],
  ['ack_code', 'ACK code'],
];

/**
 * One line of the list from core's cells of LINE_COLUMNS (each value's text, or null): the sender
 * is MSH-3 and MSH-4 as written, joined by `^`; the rest as core gives them.
 */
export function lineOf(cells) {
  const [received, type, controlId, app, facility, patientId, ack] = cells;
  const sender = app === null && facility === null ? null : [app ?? '', facility ?? ''].filter((s, i) => i === 0 || s !== '').join('^');
  return [received, type, controlId, sender, patientId, ack];
}
