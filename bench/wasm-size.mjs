#!/usr/bin/env node
// What quire.wasm is made of: its sections, its code by source file and its data by table.
//
// The shipped module carries no names, so this relinks it from the wasm build's own objects into
// a temporary folder with the same flags plus `--emit-symbol-map` (function names, kept by
// Emscripten through wasm-opt and then stripped: the .wasm is checked byte for byte against the
// shipped one) and wasm-ld's link map (`-Wl,--Map`: every function and data symbol with the object
// it came from). Code is the size of each function body after wasm-opt (inlined code counts to the
// function it was inlined into); data is the bytes each data symbol keeps in the final data
// segments (wasm-opt's memory packing drops runs of zeros, so a table of zeros costs nothing).
//
//   node bench/wasm-size.mjs [--build build/wasm] [--top N] [--json] [--markdown]
import { execFileSync, spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { gzipSync } from 'node:zlib';
import { flag, option as commonOption, repo } from './runner-common.mjs';

const option = (name, fallback) => commonOption(name) ?? fallback;
const build = path.resolve(option('--build', path.join(repo, 'build', 'wasm')));
const top = Number(option('--top', '25'));

// ---- the wasm binary ------------------------------------------------------------------------

/** Sections, function bodies (index in the function space, size with its length prefix) and data segments. */
function parseWasm(bytes) {
  let p = 8;
  const u32 = () => {
    let result = 0;
    let shift = 0;
    for (;;) {
      const b = bytes[p++];
      result += (b & 0x7f) * 2 ** shift;
      shift += 7;
      if (!(b & 0x80)) return result;
    }
  };
  const name = () => {
    const n = u32();
    const s = new TextDecoder().decode(bytes.subarray(p, p + n));
    p += n;
    return s;
  };
  const sections = [];
  const functions = [];
  const segments = [];
  let importedFunctions = 0;
  const SECTION = ['custom', 'type', 'import', 'function', 'table', 'memory', 'global', 'export', 'start', 'element', 'code', 'data', 'datacount'];
  while (p < bytes.length) {
    const id = bytes[p++];
    const size = u32();
    const start = p;
    const end = p + size;
    let label = SECTION[id] ?? `section ${id}`;
    if (id === 0) label = `custom "${name()}"`;
    sections.push({ name: label, bytes: end - start + 1 + lebLength(size) });
    if (id === 2) {
      for (let n = u32(), i = 0; i < n; i++) {
        name();
        name();
        const kind = bytes[p++];
        if (kind === 0) {
          u32();
          importedFunctions++;
        } else if (kind === 1) {
          p++;
          const flags = u32();
          u32();
          if (flags & 1) u32();
        } else if (kind === 2) {
          const flags = u32();
          u32();
          if (flags & 1) u32();
        } else if (kind === 3) {
          p += 2;
        }
      }
    } else if (id === 10) {
      for (let n = u32(), i = 0; i < n; i++) {
        const at = p;
        const body = u32();
        p += body;
        functions.push({ index: importedFunctions + i, at, bytes: p - at });
      }
    } else if (id === 11) {
      for (let n = u32(), i = 0; i < n; i++) {
        const flags = u32();
        let offset = null;
        if (flags === 0 || flags === 2) {
          if (flags === 2) u32();
          // i32.const N end
          if (bytes[p++] !== 0x41) throw new Error('wasm-size: a data segment offset that is not i32.const');
          let result = 0;
          let shift = 0;
          let b;
          do {
            b = bytes[p++];
            result |= (b & 0x7f) << shift;
            shift += 7;
          } while (b & 0x80);
          offset = result >>> 0;
          p++;
        }
        const length = u32();
        segments.push({ offset, length, at: p });
        p += length;
      }
    }
    p = end;
  }
  return { sections, functions, segments };
}

function lebLength(n) {
  let k = 1;
  while (n >= 128) {
    n = Math.floor(n / 128);
    k++;
  }
  return k;
}

// ---- the side link ----------------------------------------------------------------------------

/** Relinks the shipped module into `dir` with a symbol map and a link map; returns their paths. */
function sideLink(dir) {
  const commands = execFileSync('ninja', ['-C', build, '-t', 'commands', 'wasm/quire.mjs'], { encoding: 'utf8' }).trim().split('\n');
  const link = commands[commands.length - 1];
  if (!/ -o wasm\/quire\.mjs\b/.test(link)) throw new Error(`wasm-size: unexpected link command: ${link.slice(0, 200)}`);
  const out = path.join(dir, 'quire.mjs');
  const command = link.replace(/^: && /, '').replace(/ && :$/, '').replace(' -o wasm/quire.mjs', ` -o ${out}`) + ' --emit-symbol-map -v';
  // -v prints each sub-command Emscripten runs; EM_FORCE_RESPONSE_FILES=0 keeps wasm-ld's whole.
  const env = { ...process.env, NODE_PATH: process.env.NODE_PATH ?? '/usr/share/nodejs', EM_FORCE_RESPONSE_FILES: '0' };
  const { stderr } = spawnChecked('/bin/sh', ['-c', command], { cwd: build, env });
  // Emscripten 3.1.6 drops every linker flag that starts with -M (it takes them for -M, which
  // wasm-ld lacks), --Map included: wasm-ld runs again here, on its own, for the link map. The
  // data addresses it gives are the final ones (wasm-opt moves no data).
  const ld = stderr.split('\n').find((l) => /^ "[^"]*wasm-ld[^"/]*" /.test(l));
  if (!ld) throw new Error('wasm-size: emcc -v printed no wasm-ld command');
  const ldCommand = ld.trim().replace(/ -o \S+/, ` -o ${path.join(dir, 'ld.wasm')}`) + ` --Map=${path.join(dir, 'quire.map')}`;
  spawnChecked('/bin/sh', ['-c', ldCommand], { cwd: build, env });
  return sideFiles(dir);
}

function sideFiles(dir) {
  return { wasm: path.join(dir, 'quire.wasm'), symbols: path.join(dir, 'quire.mjs.symbols'), map: path.join(dir, 'quire.map') };
}

function spawnChecked(file, argv, options) {
  const r = spawnSync(file, argv, { ...options, encoding: 'utf8', maxBuffer: 64 * 1024 * 1024 });
  if (r.status !== 0) throw new Error(`wasm-size: ${argv.join(' ').slice(0, 300)} failed (${r.status}): ${r.stderr.slice(-2000)}`);
  return r;
}

// ---- where each symbol came from ---------------------------------------------------------------

/** The link map's input files per symbol: code symbols by name, data symbols by address range. */
function readLinkMap(text) {
  const code = new Map();
  const data = [];
  let section = '';
  let input = '';
  for (const line of text.split('\n')) {
    // "     VA     Off    Size Out     In      Symbol": Out at column 25, In at 33, Symbol at 41.
    const m = /^\s*([0-9a-f]+|-)\s+([0-9a-f]+)\s+([0-9a-f]+) (.*)$/.exec(line);
    if (!m) continue;
    const rest = m[4];
    const depth = rest.length - rest.trimStart().length;
    const va = m[1] === '-' ? null : parseInt(m[1], 16);
    const size = parseInt(m[3], 16);
    const what = rest.trim();
    if (depth === 0) section = what;
    else if (depth === 8) input = what;
    else if (depth >= 16) {
      if (section === 'CODE') code.set(what, sourceOf(input));
      else if ((section === '.rodata' || section === '.data' || section.startsWith('.rodata') || section.startsWith('.data')) && va !== null)
        data.push({ name: what, va, size, source: sourceOf(input) });
    }
  }
  data.sort((a, b) => a.va - b.va);
  return { code, data };
}

/** A link map input ("core/libquire_core.a(parse.cpp.o):(.text.f)") as a source file or library. */
const MODULE_OF = new Map();
for (const m of readdirSync(path.join(repo, 'core', 'src'), { withFileTypes: true })) {
  if (!m.isDirectory()) continue;
  for (const f of readdirSync(path.join(repo, 'core', 'src', m.name))) MODULE_OF.set(f, m.name);
}
MODULE_OF.set('r4_definitions_generated.cpp', 'r4');

function sourceOf(input) {
  const file = input.replace(/:\(.*\)$/, '');
  const member = /^(.*)\(([^()]*)\)$/.exec(file);
  const archive = member ? member[1] : file;
  const object = member ? member[2] : file;
  if (/emscripten\/cache|sysroot|\.emscripten_cache|\/cache\/sysroot/.test(archive)) return `system: ${path.basename(archive).replace(/\.a$/, '')}`;
  const source = object.replace(/^.*CMakeFiles\/[^/]+\.dir\//, '').replace(/\.o$/, '');
  if (!member) return file.startsWith('wasm/') ? `wasm/${source}` : source;
  const library = path.basename(archive).replace(/\.a$/, '').replace(/^libquire_/, '');
  if (library === 'core') return `core/${MODULE_OF.get(source) ?? '?'}/${source}`;
  if (library === 'wasm_platform') return `wasm/${source}`;
  return `${library}: ${source}`;
}

// ---- the report ------------------------------------------------------------------------------

function analyse() {
  const shipped = readFileSync(path.join(build, 'wasm', 'quire.wasm'));
  // --keep DIR keeps the side link there, and a later run with the same DIR reuses it.
  const keep = option('--keep');
  const dir = keep ? path.resolve(keep) : mkdtempSync(path.join(os.tmpdir(), 'quire-wasm-size-'));
  if (keep) mkdirSync(dir, { recursive: true });
  try {
    const files = keep && existsSync(path.join(dir, 'quire.map')) ? sideFiles(dir) : sideLink(dir);
    const wasm = readFileSync(files.wasm);
    // The side link's names change the order wasm-opt leaves functions and types in, never a size.
    const identical = wasm.length === shipped.length;
    const parsed = parseWasm(wasm);
    const names = new Map();
    for (const line of readFileSync(files.symbols, 'utf8').split('\n')) {
      const i = line.indexOf(':');
      // wasm-opt escapes a name's bytes outside [A-Za-z0-9_...] as \\XX (hex).
      if (i > 0) names.set(Number(line.slice(0, i)), line.slice(i + 1).replace(/\\([0-9a-f]{2})/g, (_, h) => String.fromCharCode(parseInt(h, 16))));
    }
    const map = readLinkMap(readFileSync(files.map, 'utf8'));
    // Objects named by their archive member only are ambiguous when two sources share a file
    // name; the object's own symbols decide.
    const codeBySource = new Map();
    const codeChunks = new Map();
    const dataChunks = new Map();
    const codeFunctions = [];
    let codeTotal = 0;
    for (const f of parsed.functions) {
      const name = names.get(f.index) ?? `function ${f.index}`;
      const source = map.code.get(name) ?? map.code.get(name.replace(/\\/g, '')) ?? classifyUnknown(name);
      codeTotal += f.bytes;
      add(codeBySource, source, f.bytes);
      push(codeChunks, areaOf(source), wasm.subarray(f.at, f.at + f.bytes));
      codeFunctions.push({ name, source, bytes: f.bytes });
    }
    // Data: the final segments' bytes per data symbol (address ranges from the link map).
    const dataBySource = new Map();
    const dataSymbols = [];
    let dataTotal = 0;
    const segs = parsed.segments.filter((s) => s.offset !== null).sort((a, b) => a.offset - b.offset);
    for (const s of segs) dataTotal += s.length;
    for (const sym of map.data) {
      let kept = 0;
      for (const s of segs) {
        const lo = Math.max(sym.va, s.offset);
        const hi = Math.min(sym.va + sym.size, s.offset + s.length);
        if (hi > lo) {
          kept += hi - lo;
          push(dataChunks, areaOf(sym.source), wasm.subarray(s.at + lo - s.offset, s.at + hi - s.offset));
        }
      }
      if (kept === 0) continue;
      add(dataBySource, sym.source, kept);
      dataSymbols.push({ name: sym.name, source: sym.source, bytes: kept });
    }
    const attributed = dataSymbols.reduce((a, s) => a + s.bytes, 0);
    if (dataTotal > attributed) add(dataBySource, '(unnamed: string literals and padding)', dataTotal - attributed);
    return {
      wasm_bytes: shipped.length,
      wasm_gzip_bytes: gzipSync(shipped, { level: 9 }).length,
      side_link_identical: identical,
      sections: parsed.sections,
      code_by_area: withGzip(sorted(byArea(codeBySource)), codeChunks),
      data_by_area: withGzip(sorted(byArea(dataBySource)), dataChunks),
      code: { bytes: codeTotal, functions: parsed.functions.length, by_source: sorted(codeBySource), largest: codeFunctions.sort((a, b) => b.bytes - a.bytes).slice(0, top) },
      data: { bytes: dataTotal, segments: parsed.segments.length, by_source: sorted(dataBySource), largest: dataSymbols.sort((a, b) => b.bytes - a.bytes).slice(0, top) },
    };
  } finally {
    if (!keep) rmSync(dir, { recursive: true, force: true });
  }
}

/** A source's area: core's module, a dependency, the bindings, the system libraries. */
function areaOf(source) {
  if (source.startsWith('(')) return source;
  if (source.startsWith('core/')) return source.split('/').slice(0, 2).join('/');
  if (source.startsWith('wasm/bind_')) return 'wasm/bind_*.cpp (bindings, Embind templates inlined)';
  if (source.startsWith('system: libembind')) return 'Embind runtime (libembind)';
  if (source.startsWith('system: ')) return 'system libraries (libc, libc++, dlmalloc, compiler-rt)';
  return source.split(':')[0];
}

function byArea(bySource) {
  const m = new Map();
  for (const [source, bytes] of bySource) add(m, areaOf(source), bytes);
  return m;
}

function push(map, key, bytes) {
  if (!map.has(key)) map.set(key, []);
  map.get(key).push(bytes);
}

/** Each area's bytes gzipped on their own (zlib level 9): what the area costs a download, roughly. */
function withGzip(rows, chunks) {
  return rows.map((r) => ({ ...r, gzip_alone: chunks.has(r.source) ? gzipSync(Buffer.concat(chunks.get(r.source)), { level: 9 }).length : null }));
}

function classifyUnknown(name) {
  // The static constructors, merged into one by wasm-opt: nearly all of it is the bindings'
  // EMSCRIPTEN_BINDINGS blocks (one call to an _embind_register_* import per class, function,
  // field...).
  if (name === '__wasm_call_ctors') return '(static constructors: Embind registrations)';
  if (/^(dynCall_|legalstub\$|legalfunc\$|byn\$)/.test(name)) return 'generated by Emscripten / binaryen';
  return '(not in the link map)';
}

function add(map, key, n) {
  map.set(key, (map.get(key) ?? 0) + n);
}

function sorted(map) {
  return [...map].map(([source, bytes]) => ({ source, bytes })).sort((a, b) => b.bytes - a.bytes);
}

const result = analyse();
if (flag('--json')) {
  console.log(JSON.stringify(result, null, 1));
} else {
  const kib = (b) => `${(b / 1024).toFixed(1)} KiB`;
  const pct = (b, t) => `${((100 * b) / t).toFixed(1)}%`;
  const md = flag('--markdown');
  const table = (title, head, rows) => {
    console.log(md ? `\n**${title}**\n` : `\n${title}`);
    if (md) {
      console.log(`| ${head.join(' | ')} |`);
      console.log(`|${head.map(() => '---').join('|')}|`);
      for (const r of rows) console.log(`| ${r.join(' | ')} |`);
    } else {
      for (const r of rows) console.log(`  ${r[0].padEnd(60)} ${r.slice(1).join('  ')}`);
    }
  };
  console.log(`quire.wasm: ${result.wasm_bytes} bytes, ${result.wasm_gzip_bytes} gzipped (zlib level 9); side link ${result.side_link_identical ? 'the same size' : 'NOT the size of the shipped build'}`);
  table('sections', ['section', 'bytes', 'share'], result.sections.map((s) => [s.name, kib(s.bytes), pct(s.bytes, result.wasm_bytes)]));
  const gzAlone = (s) => (s.gzip_alone === null ? '—' : kib(s.gzip_alone));
  table('code by area', ['area', 'bytes', 'share of code', 'gzipped alone'], result.code_by_area.map((s) => [s.source, kib(s.bytes), pct(s.bytes, result.code.bytes), gzAlone(s)]));
  table('data by area', ['area', 'bytes', 'share of data', 'gzipped alone'], result.data_by_area.map((s) => [s.source, kib(s.bytes), pct(s.bytes, result.data.bytes), gzAlone(s)]));
  table(`code by source (${result.code.functions} functions)`, ['source', 'bytes', 'share of code'], result.code.by_source.slice(0, top).map((s) => [s.source, kib(s.bytes), pct(s.bytes, result.code.bytes)]));
  table('data by source', ['source', 'bytes', 'share of data'], result.data.by_source.slice(0, top).map((s) => [s.source, kib(s.bytes), pct(s.bytes, result.data.bytes)]));
  table('largest data symbols', ['symbol', 'source', 'bytes'], result.data.largest.map((s) => [s.name, s.source, kib(s.bytes)]));
  table('largest functions', ['function', 'source', 'bytes'], result.code.largest.map((s) => [s.name.slice(0, 100), s.source, kib(s.bytes)]));
}
