// Writes synthetic FHIR Patients as NDJSON, for measuring `quire view run` on a large input
// (docs/views.md, "Memory and speed"). Seeded: the same arguments give the same bytes.
//   node tests/gen_patients.mjs OUT.ndjson [MEGABYTES=1024] [SEED=1]
import { createWriteStream } from 'node:fs';

const [out, megabytes = '1024', seedText = '1'] = process.argv.slice(2);
if (!out) {
  console.error('usage: node tests/gen_patients.mjs OUT.ndjson [MEGABYTES] [SEED]');
  process.exit(2);
}
const target = Number(megabytes) * 1024 * 1024;
let seed = Number(seedText) >>> 0 || 1;
// xorshift32: small, seeded, the same sequence everywhere.
const next = () => {
  seed ^= seed << 13; seed >>>= 0;
  seed ^= seed >>> 17;
  seed ^= seed << 5; seed >>>= 0;
  return seed;
};
const pick = (list) => list[next() % list.length];
const FAMILIES = ['Smith', 'Okafor', 'García', 'Nguyen', 'Müller', "O'Neil", 'Kowalski', 'Haddad', 'Tanaka', 'Silva'];
const GIVEN = ['Ann', 'Bo', 'Chidi', 'Dana', 'Eve', 'Femi', 'Gus', 'Hana', 'Ivo', 'Zoë'];
const CITIES = ['Oslo', 'Lagos', 'Lima', 'Hanoi', 'Kraków', 'Beirut', 'Osaka', 'Recife'];
const GENDERS = ['female', 'male', 'other', 'unknown'];

const stream = createWriteStream(out);
let written = 0;
let n = 0;
const pad = (v, w) => String(v).padStart(w, '0');
function patient() {
  const id = `pt${n++}`;
  const year = 1920 + (next() % 100);
  const p = {
    resourceType: 'Patient',
    id,
    meta: { lastUpdated: `2024-0${1 + (next() % 9)}-1${next() % 10}T10:00:00Z` },
    identifier: [{ system: 'urn:oid:1.2.36.146.595.217.0.1', value: String(100000 + n) }],
    active: next() % 5 !== 0,
    name: [
      { use: 'official', family: pick(FAMILIES), given: [pick(GIVEN), pick(GIVEN)] },
      ...(next() % 3 === 0 ? [{ use: 'nickname', given: [pick(GIVEN)] }] : []),
    ],
    telecom: [
      { system: 'phone', value: `+1 555 ${pad(next() % 10000, 4)}`, use: 'home' },
      { system: 'email', value: `${id}@example.org` },
    ],
    gender: pick(GENDERS),
    // FHIR dates may be partial: every tenth birth date is a year, every tenth a year and month.
    birthDate: n % 10 === 0 ? `${year}` : n % 10 === 1 ? `${year}-${pad(1 + (next() % 12), 2)}`
      : `${year}-${pad(1 + (next() % 12), 2)}-${pad(1 + (next() % 28), 2)}`,
    address: [{ line: [`${next() % 999} Main St`], city: pick(CITIES), postalCode: pad(next() % 100000, 5) }],
  };
  if (next() % 7 === 0) p.multipleBirthInteger = 1 + (next() % 3);
  return JSON.stringify(p) + '\n';
}
function write() {
  let ok = true;
  while (written < target && ok) {
    let batch = '';
    for (let i = 0; i < 1000 && written + batch.length < target; i++) batch += patient();
    written += Buffer.byteLength(batch);
    ok = stream.write(batch);
  }
  if (written < target) stream.once('drain', write);
  else stream.end(() => console.error(`${out}: ${n} patients, ${written} bytes`));
}
write();
