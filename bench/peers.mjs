// Peer libraries measured in Node in the same run as quire, on the same input bytes, with the same
// method as the C++ runner (batched samples of at least 1 ms, percentiles by nearest rank). Each
// peer case is named after the quire case it mirrors and carries a `peer` field.
//
// Each family's peers live in bench/peers_<family>.mjs, exporting
//   peerCases(quire, cases) -> [{ name, op, shape, peer, mirrors, input(), run(bytes), checksum(result) }]
// where `quire` is the npm package's API (js/dist: format, json...) with `bench` added, the
// benchmark module's harness (bench-module.mjs: list, input), and `cases` are the selected quire
// cases ({ name, large }); run() may return a promise, which is awaited (and timed to its
// settling). Their npm packages are pinned in bench/package.json (installed by scripts/bootstrap).
import { readdirSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { fnv, measure } from './peer-measure.mjs';

const here = path.dirname(fileURLToPath(import.meta.url));
const decoder = new TextDecoder();

export { fnv, measure };

/** The peer cases available for the quire cases that `options` selects. */
export async function peerCases(quire, options) {
  const cases = quire.bench.list().filter((c) => (options.large || !c.large) && matches(c.name, options.filter));
  const peers = [];
  for (const c of cases) {
    // JSON.parse, the engine's own parser, against quire's check and parse.
    if (c.name.startsWith('json.parse/')) {
      peers.push({
        name: `peer.JSON.parse/${c.name.slice('json.parse/'.length)}`,
        op: 'peer.JSON.parse',
        shape: c.name.slice('json.parse/'.length),
        peer: `JSON.parse (V8 ${process.versions.v8})`,
        mirrors: c.name,
        input: () => quire.bench.input(c.name),
        // Decoding the bytes is part of the job: quire's case also starts from bytes.
        run: (bytes) => JSON.parse(decoder.decode(bytes)),
        checksum: (result) => fnv(JSON.stringify(result).slice(0, 4096)),
      });
    }
  }
  for (const file of readdirSync(here).filter((f) => /^peers_.+\.mjs$/.test(f)).sort()) {
    const family = await import(pathToFileURL(path.join(here, file)).href);
    peers.push(...(await family.peerCases(quire, cases)));
  }
  return peers;
}

function matches(name, filter) {
  if (!filter) return true;
  return filter.split(',').some((part) => part && name.includes(part));
}
