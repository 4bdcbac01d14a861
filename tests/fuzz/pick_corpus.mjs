// Keeps a fuzz corpus small: reads a libFuzzer merge control file (-merge_control_file, which
// lists every input and the coverage features it reaches), keeps every hand-written seed (a file
// name that is not libFuzzer's 40-hex SHA-1), then adds, greedily, the input that reaches the
// most features not yet reached (the smaller on a tie) until --max-files or --max-bytes would be
// passed or no input adds anything. Copies the picks into --out (emptied first). `make fuzz-merge`
// runs it when a merge keeps more than the budget.
//
//   node tests/fuzz/pick_corpus.mjs --control CTL --out DIR [--max-files 60] [--max-bytes 204800]
import fs from 'node:fs';
import path from 'node:path';

const args = process.argv.slice(2);
const opt = (name, fallback) => {
  const i = args.indexOf(`--${name}`);
  return i >= 0 && i + 1 < args.length ? args[i + 1] : fallback;
};
const control = opt('control');
const out = opt('out');
const maxFiles = Number(opt('max-files', '60'));
const maxBytes = Number(opt('max-bytes', String(200 * 1024)));
if (!control || !out) {
  console.error('usage: pick_corpus.mjs --control CTL --out DIR [--max-files N] [--max-bytes N]');
  process.exit(2);
}

// Control file: the number of files, the number in the first corpus, one path a line, then for
// each input run "STARTED i size", "FT i features...", "COV i edges..." (libFuzzer 14).
const lines = fs.readFileSync(control, 'utf8').split('\n');
const count = Number(lines[0]);
const files = lines.slice(2, 2 + count).map((p) => ({ path: p, size: 0, features: [] }));
for (const line of lines.slice(2 + count)) {
  const [tag, index, ...rest] = line.split(' ');
  const f = files[Number(index)];
  if (!f) continue;
  if (tag === 'STARTED') f.size = Number(rest[0]);
  if (tag === 'FT') f.features = rest.filter((x) => x !== '').map(Number);
}

const isSeed = (f) => !/^[0-9a-f]{40}$/.test(path.basename(f.path));
const reached = new Set();
const picked = [];
let bytes = 0;
const take = (f) => {
  picked.push(f);
  bytes += f.size;
  for (const x of f.features) reached.add(x);
};
for (const f of files.filter(isSeed)) take(f);
let rest = files.filter((f) => !isSeed(f));
while (picked.length < maxFiles && rest.length) {
  let best = null;
  let bestGain = 0;
  for (const f of rest) {
    if (bytes + f.size > maxBytes) continue;
    let gain = 0;
    for (const x of f.features) if (!reached.has(x)) gain++;
    if (gain > bestGain || (gain === bestGain && best && gain > 0 && f.size < best.size)) {
      best = f;
      bestGain = gain;
    }
  }
  if (!best) break;
  take(best);
  rest = rest.filter((f) => f !== best);
}

fs.mkdirSync(out, { recursive: true });
for (const name of fs.readdirSync(out)) fs.rmSync(path.join(out, name), { force: true });
for (const f of picked) fs.copyFileSync(f.path, path.join(out, path.basename(f.path)));
const seeds = picked.filter(isSeed).length;
console.log(
  `pick_corpus: kept ${picked.length} of ${files.length} inputs (${seeds} seeds), ${bytes} bytes, ` +
    `${reached.size} features`,
);
