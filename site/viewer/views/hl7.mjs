// The HL7 v2 view: the messages of a file (one, a batch with FHS/BHS, a file of many, MLLP
// frames) read by the package's hl7 reader and listed with an index; one message as a table of
// segments and fields with the v2.5.1 field names (hl7-fields.mjs), values decoded by core with a
// toggle to the raw text, repetitions, components and subcomponents split out; and the ACK core
// builds for it.
import { createGrid } from '../grid.mjs';
import { HL7_FIELDS_VERSION } from '../hl7-fields.mjs';
import { hasBinary, messageRows } from './hl7-model.mjs';
import { el, errorLine, readAll, useStyle, yieldToPage } from './kinds-common.mjs';

const latin1 = new TextDecoder('latin1');
const utf8 = new TextDecoder();

/** Reads the messages: MLLP frames (first byte VT), else a batch or file of messages. */
async function readMessages(pkg, bytes, ctx) {
  let at = 0;
  if (bytes[0] === 0xef && bytes[1] === 0xbb && bytes[2] === 0xbf) at = 3;
  while (at < bytes.length && (bytes[at] === 0x0a || bytes[at] === 0x0d || bytes[at] === 0x20)) at++;
  if (bytes[at] === 0x0b) {
    const decoder = pkg.mllp.decoder();
    const messages = [];
    const failed = [];
    try {
      for (let i = 0; i < bytes.length; i += 1 << 20) {
        for (const frame of decoder.pushBytes(bytes.subarray(i, i + (1 << 20)))) {
          try {
            messages.push(pkg.hl7.parse(frame));
          } catch (err) {
            failed.push({ frame: messages.length + failed.length + 1, err });
          }
        }
        ctx.progress?.(i, bytes.length, 'Reading MLLP frames');
        await yieldToPage();
      }
      const stats = decoder.stats;
      if (messages.length === 0) throw failed[0]?.err ?? new pkg.QuireError('INVALID_HL7', 'INVALID_HL7: no complete MLLP frame');
      return { messages, envelope: [], skippedBytes: stats.skippedBytes, framed: true, failed };
    } finally {
      decoder.close();
    }
  }
  if (hasBinary(bytes)) {
    // Binary bytes are not something to skip quietly: core's strict read names what and where.
    pkg.hl7.parseBatch(bytes, { strict: true }).messages.forEach((m) => m.close());
  }
  const batch = pkg.hl7.parseBatch(bytes);
  return { ...batch, framed: false, failed: [] };
}

export async function mount(ctx) {
  useStyle('./kinds.css');
  const pkg = await ctx.pkg;
  const bytes = await readAll(ctx, 'reading HL7');
  const file = await readMessages(pkg, bytes, ctx);
  ctx.progress?.(null);
  const { messages } = file;
  let raw = false;
  let current = -1;
  let ackCode = 'AA';

  const summary = el('p', { class: 'kh-summary', 'data-testid': 'hl7-summary' },
    `${messages.length} message${messages.length === 1 ? '' : 's'}`,
    file.framed ? ' in MLLP frames' : '',
    file.envelope.length ? ` · envelope ${file.envelope.map((s) => s.slice(0, 3)).join(', ')}` : '',
    file.skippedBytes ? ` · ${file.skippedBytes} bytes outside messages skipped` : '',
    file.failed.length ? ` · ${file.failed.length} frames unreadable (first: ${errorLine(file.failed[0].err)})` : '');
  const rawToggle = el('input', { type: 'checkbox', role: 'switch', 'data-testid': 'hl7-raw' });
  const ackSelect = el('select', { 'aria-label': 'ACK code', 'data-testid': 'hl7-ack-code' },
    ['AA', 'AE', 'AR', 'CA', 'CE', 'CR'].map((c) => el('option', { value: c }, c)));
  const header = el('div', { class: 'kh-header', 'data-testid': 'hl7-header' });
  const table = el('table', { class: 'kh-table', 'data-testid': 'hl7-table' });
  const ack = el('pre', { class: 'kh-ack', 'data-testid': 'hl7-ack', 'aria-label': 'ACK' });
  const listBox = el('div', { class: 'kh-list' });
  const detail = el('section', { class: 'kh-detail', 'aria-label': 'Message' },
    header,
    el('div', { class: 'kh-controls' },
      el('label', {}, rawToggle, ' Raw text (escapes kept)'),
      el('label', {}, 'ACK ', ackSelect)),
    el('div', { class: 'kh-table-wrap' }, table),
    el('h3', {}, 'The ACK this message gets'), ack,
    el('p', { class: 'kh-note' }, `Field names: HL7 v${HL7_FIELDS_VERSION} segment definitions (see HL7-FIELDS.md).`));
  ctx.root.replaceChildren(el('div', { class: 'kh-view' }, summary, messages.length > 1 ? listBox : '', detail));

  let grid = null;
  if (messages.length > 1) {
    grid = createGrid(listBox, {
      label: `${ctx.source.name}: messages`,
      columns: [{ name: 'type', type: 'string' }, { name: 'control ID', type: 'string' }, { name: 'time', type: 'string' }, { name: 'sender', type: 'string' }, { name: 'version', type: 'string' }, { name: 'segments', type: 'integer' }],
      rowCount: messages.length,
      getRows: async (start, count) => messages.slice(start, start + count).map((m) => [
        [m.messageType, m.trigger].filter(Boolean).join('^'), m.controlId, m.timestamp, m.sendingApplication, m.version, String(m.segmentCount)]),
      onSelect: (row) => show(row),
    });
  }

  function text(m) {
    const b = m.bytes();
    return m.charset === 'ISO-8859-1' ? latin1.decode(b) : utf8.decode(b);
  }

  function show(i) {
    if (i < 0 || i >= messages.length) return;
    current = i;
    ctx.hash?.set('msg', messages.length > 1 ? i + 1 : null);
    const m = messages[i];
    header.replaceChildren(
      el('h3', {}, `Message ${i + 1}: ${[m.messageType, m.trigger].filter(Boolean).join('^')}${m.structure ? ` (${m.structure})` : ''}`),
      el('p', {}, `control ID ${m.controlId} · version ${m.version} · ${m.timestamp} · from ${m.sendingApplication} ${m.sendingFacility} to ${m.receivingApplication} ${m.receivingFacility} · ${m.charset} · ${m.segmentCount} segments${m.skippedLines ? ` · ${m.skippedLines} lines skipped` : ''}`));
    drawTable();
    drawAck();
  }

  function drawTable() {
    const m = messages[current];
    let rows;
    try {
      rows = messageRows(m.toJSON(), raw ? text(m) : undefined);
    } catch (err) {
      table.replaceChildren(el('caption', { class: 'kn-error' }, errorLine(err)));
      return;
    }
    const body = el('tbody');
    let lastSegment = -1;
    for (const r of rows) {
      const first = r.index !== lastSegment;
      lastSegment = r.index;
      const value = el('td', { class: 'kh-value' });
      for (const p of r.parts) {
        value.append(el('div', { class: 'kh-part' },
          p.path ? el('span', { class: 'kh-path' }, p.path) : '',
          p.text === null ? el('span', { class: 'kh-null' }, '"" (null)') : p.text));
      }
      body.append(el('tr', { class: first ? 'kh-seg-first' : '', 'data-field': `${r.segment}-${r.field}` },
        el('th', { scope: 'row', class: 'kh-seg' }, first ? `${r.segment}` : ''),
        el('td', { class: 'kh-field' }, `${r.segment}-${r.field}`),
        el('td', { class: 'kh-name' }, r.name),
        value));
    }
    table.replaceChildren(
      el('thead', {}, el('tr', {}, ['segment', 'field', 'name', raw ? 'raw value' : 'value'].map((h) => el('th', { scope: 'col' }, h)))),
      body);
  }

  function drawAck() {
    try {
      ack.textContent = messages[current].ack(ackCode).split('\r').filter(Boolean).join('\n');
    } catch (err) {
      ack.textContent = errorLine(err);
    }
  }

  rawToggle.addEventListener('change', () => {
    raw = rawToggle.checked;
    drawTable();
  });
  ackSelect.addEventListener('change', () => {
    ackCode = ackSelect.value;
    drawAck();
  });

  const wanted = Number(ctx.hash?.get('msg')) || 1;
  const first = Math.min(Math.max(1, wanted), messages.length) - 1;
  show(first);
  if (grid) grid.select?.(first);

  return {
    unmount() {
      grid?.destroy?.();
      for (const m of messages) m.close();
      ctx.root.replaceChildren();
    },
    messageCount: messages.length,
  };
}
