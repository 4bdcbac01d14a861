// HL7 v2 peers: @medplum/core's Hl7Message (a maintained HL7 v2 parser on npm, pinned in
// bench/package.json), measured on the very same bytes as quire's hl7v2 cases.
//
// What the peer does per call, so that the work is comparable:
//   peer.medplum.parse mirrors hl7v2.parse: decode the bytes to a string, Hl7Message.parse, then
//     touch every segment's fields (medplum parses segments and fields lazily, on first access).
//   peer.medplum.ack mirrors hl7v2.ack: decode, parse, buildAck(), toString().
// Batch files are left out: Hl7Message.parse reads one message.
//
// node-hl7-client 4.0.0 (also pinned) is not used: it is an MLLP client whose Message keeps the
// text and parses on each get(), so no call of its API does a parse comparable to quire's.
import { fnv } from './peers.mjs';
import { readFileSync } from 'node:fs';

const decoder = new TextDecoder();


async function loadMedplum() {
  // @medplum/core 5.2.13 refers to the global WebSocket when it loads; Node 20 has none (Node 22
  // does). Its HL7 classes never use it, so an empty class stands in.
  globalThis.WebSocket ??= class {};
  const { Hl7Message } = await import('@medplum/core');
  // Its package.json is not in its exports map: read it from node_modules beside this file.
  const version = JSON.parse(readFileSync(new URL('./node_modules/@medplum/core/package.json', import.meta.url), 'utf8')).version;
  return { Hl7Message, version };
}

export async function peerCases(quire, cases) {
  const wanted = cases.filter((c) => (c.name.startsWith('hl7v2.parse/') || c.name.startsWith('hl7v2.ack/')) && !c.name.endsWith('/batch-1000'));
  if (wanted.length === 0) return [];
  const { Hl7Message, version } = await loadMedplum();
  const peer = `@medplum/core ${version} Hl7Message`;
  const out = [];
  for (const c of wanted) {
    const [op, shape] = c.name.split('/');
    if (op === 'hl7v2.parse') {
      out.push({
        name: `peer.medplum.parse/${shape}`,
        op: 'peer.medplum.parse',
        shape,
        peer,
        mirrors: c.name,
        input: () => quire.bench.input(c.name),
        run: (bytes) => {
          const m = Hl7Message.parse(decoder.decode(bytes));
          let fields = 0;
          for (const s of m.segments) fields += s.fields.length;
          return { segments: m.segments.length, fields };
        },
        checksum: (r) => fnv(`${r.segments}/${r.fields}`),
      });
    } else {
      out.push({
        name: `peer.medplum.ack/${shape}`,
        op: 'peer.medplum.ack',
        shape,
        peer,
        mirrors: c.name,
        input: () => quire.bench.input(c.name),
        run: (bytes) => Hl7Message.parse(decoder.decode(bytes)).buildAck().toString(),
        // The ACK carries the current time and a random control id: checksum only its MSA.
        checksum: (ack) => fnv(ack.slice(ack.indexOf('MSA'))),
      });
    }
  }
  return out;
}
