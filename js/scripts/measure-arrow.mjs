// Times Parquet and Arrow IPC out of a view through the npm package (Node) against the CLI's
// `quire view run --out rows.parquet|rows.arrow` and against .quire through the npm package, on
// inputs of 100,000+ rows (docs/scale.md, "Parquet and Arrow from the npm package"). Prints one
// JSON line per case: the median and the range of RUNS runs, in milliseconds, and the output size.
// With --browser, the npm calls also run in headless Chromium (the same wasm; apache-arrow's UMD
// build and parquet-wasm's ES module passed in), over the same input as a Blob.
//   node js/scripts/measure-arrow.mjs [RUNS=5] [--browser]     (after make native and make js)
import { execFileSync, spawnSync } from 'node:child_process';
import { cpSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import * as arrow from 'apache-arrow';
import * as parquet from 'parquet-wasm';

const args = process.argv.slice(2);
const browser = args.includes('--browser');
const runs = Number(args.find((a) => a !== '--browser') ?? 5);
const repo = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..');
const cli = path.join(repo, 'build', 'native', 'native', 'quire');
const quire = await import(pathToFileURL(path.join(repo, 'js', 'dist', 'index.js')).href);
await quire.init();
const work = mkdtempSync(path.join(tmpdir(), 'quire-measure-arrow-'));

// 200,000 Observations: a decimal, a json column, strings.
function observations(n) {
  const lines = [];
  for (let i = 0; i < n; i++) {
    lines.push(`{"resourceType":"Observation","id":"o${i}","status":"${i % 5 ? 'final' : 'amended'}","code":{"text":"test ${i % 40}",` +
      `"coding":[{"system":"http://loinc.org","code":"${1000 + (i % 300)}-${i % 10}"}]},"valueQuantity":{"value":${(i % 9000) / 100 + 0.005},"unit":"mmol/L"},` +
      `"issued":"2024-01-${String(1 + (i % 28)).padStart(2, '0')}T03:04:05.123Z"}`);
  }
  return lines.join('\n') + '\n';
}
const obsFile = path.join(work, 'obs.ndjson');
writeFileSync(obsFile, observations(200_000));
// Synthetic Patients (tests/gen_patients.mjs, seeded): booleans, integers, strings, json.
const patFile = path.join(work, 'patients.ndjson');
execFileSync('node', [path.join(repo, 'tests', 'gen_patients.mjs'), patFile, '64']);

const cases = [
  { name: 'observations', view: path.join(repo, 'tests', 'data', 'parquet', 'observation_view.json'), input: obsFile },
  { name: 'patients', view: path.join(repo, 'tests', 'data', 'view_output', 'patient_view.json'), input: patFile },
];

const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];

async function time(fn) {
  const ms = [];
  let bytes = 0;
  for (let i = 0; i < runs; i++) {
    const t0 = performance.now();
    bytes = await fn();
    ms.push(performance.now() - t0);
  }
  return { median: Math.round(median(ms)), min: Math.round(Math.min(...ms)), max: Math.round(Math.max(...ms)), bytes };
}

for (const k of cases) {
  const viewText = readFileSync(k.view, 'utf8');
  const input = readFileSync(k.input);
  const rows = (await quire.view.toArrowTable(viewText, input, { arrow })).numRows;
  const report = (what, r) => console.log(JSON.stringify({ case: k.name, rows, inputBytes: input.length, what, ...r }));
  report('npm toArrowTable', await time(async () => { await quire.view.toArrowTable(viewText, input, { arrow }); return 0; }));
  report('npm toArrow', await time(async () => (await quire.view.toArrow(viewText, input, { arrow })).length));
  report('npm toParquet', await time(async () => (await quire.view.toParquet(viewText, input, { arrow, parquet })).length));
  report('npm toQuire', await time(async () => (await quire.view.toQuire(viewText, input)).length));
  for (const ext of ['arrow', 'parquet', 'quire']) {
    for (const threads of ['1', '0']) {
      const out = path.join(work, `cli.${ext}`);
      report(`CLI --out .${ext} --threads ${threads}`, await time(async () => {
        const r = spawnSync(cli, ['view', 'run', k.view, k.input, '--out', out, '--threads', threads, '--quiet']);
        if (r.status !== 0) throw new Error(r.stderr.toString());
        return statSync(out).size;
      }));
    }
  }
}
if (browser) await inChromium();
rmSync(work, { recursive: true, force: true });

// The npm calls in a page: each timed there with performance.now(), the input a Blob of the file.
async function inChromium() {
  const { serve, launchChromium } = await import(pathToFileURL(path.join(repo, 'js', 'test', 'browser.mjs')).href);
  const site = path.join(work, 'site');
  const modules = path.join(repo, 'js', 'node_modules');
  cpSync(path.join(repo, 'js', 'dist'), path.join(site, 'dist'), { recursive: true });
  cpSync(path.join(modules, 'apache-arrow', 'Arrow.es2015.min.js'), path.join(site, 'arrow.js'));
  cpSync(path.join(modules, 'parquet-wasm', 'esm'), path.join(site, 'parquet-wasm'), { recursive: true });
  for (const k of cases) {
    cpSync(k.input, path.join(site, `${k.name}.ndjson`));
    cpSync(k.view, path.join(site, `${k.name}.json`));
  }
  writeFileSync(path.join(site, 'index.html'), `<!doctype html><html><head><script src="./arrow.js"></script></head><body><script type="module">
    import * as quire from './dist/index.js';
    import initParquet, * as parquet from './parquet-wasm/parquet_wasm.js';
    window.measure = async (name, runs) => {
      await quire.init();
      await initParquet();
      const arrow = window.Arrow;
      const view = await (await fetch(name + '.json')).text();
      const blob = await (await fetch(name + '.ndjson')).blob();
      const calls = {
        'npm toArrow': async () => (await quire.view.toArrow(view, blob, { arrow })).length,
        'npm toParquet': async () => (await quire.view.toParquet(view, blob, { arrow, parquet })).length,
        'npm toQuire': async () => (await quire.view.toQuire(view, blob)).length,
      };
      const out = [];
      for (const [what, call] of Object.entries(calls)) {
        const ms = [];
        let bytes = 0;
        for (let i = 0; i < runs; i++) {
          const t0 = performance.now();
          bytes = await call();
          ms.push(performance.now() - t0);
        }
        ms.sort((a, b) => a - b);
        out.push({ what: 'Chromium ' + what, median: Math.round(ms[Math.floor(ms.length / 2)]), min: Math.round(ms[0]), max: Math.round(ms[ms.length - 1]), bytes });
      }
      return out;
    };
  </script></body></html>`);
  const server = await serve(site);
  const chromium = await launchChromium();
  try {
    const page = await chromium.newPage();
    await page.goto(`${server.url}/index.html`);
    await page.waitForFunction(() => typeof window.measure === 'function');
    for (const k of cases) {
      for (const r of await page.evaluate(([name, n]) => window.measure(name, n), [k.name, runs])) {
        console.log(JSON.stringify({ case: k.name, ...r }));
      }
    }
  } finally {
    await chromium.close();
    await server.close();
  }
}
