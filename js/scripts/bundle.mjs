#!/usr/bin/env node
// The package's JavaScript as one ES module: js/src/index.ts and every module it imports, bundled
// by esbuild (a pinned devDependency) into DIST/index.js, so that a fresh process resolves, reads
// and links one file of the wrapper instead of twenty (docs/performance.md, "Start-up, session 16").
// The Emscripten glue stays its own file, DIST/quire.mjs, which init() imports: it is what the
// package test and the readers of the glue (js/test/shipped.test.mjs) look for. Type checking and
// the .d.ts files are tsc's (js/tsconfig.json has emitDeclarationOnly; `make js` runs tsc, then this).
//
//   node js/scripts/bundle.mjs DIST
import { build } from 'esbuild';
import { readdirSync, rmSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

const js = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const dist = path.resolve(process.argv[2] ?? path.join(js, 'dist'));

// A dist/ built before the bundle held one .js file per module: left there, a test or a user could
// import a second copy of the wrapper (its own module state, no init() done).
for (const f of readdirSync(dist)) {
  if (f.endsWith('.js') && f !== 'index.js') rmSync(path.join(dist, f));
}

await build({
  entryPoints: [path.join(js, 'src', 'index.ts')],
  outfile: path.join(dist, 'index.js'),
  bundle: true,
  format: 'esm',
  // Node and the browser: node: modules are imported only when running in Node, at the call that
  // needs them (module.ts, listen.ts), so they stay imports and are never bundled.
  platform: 'neutral',
  target: 'es2022',
  external: ['./quire.mjs', 'node:*'],
  // Whitespace and syntax only: identifiers keep their names, and keepNames keeps .name for the
  // functions and classes esbuild renames (QuireError would be _QuireError: its static method
  // refers to it). Without keepNames (125 __name() calls fewer) import + init() measured the same.
  minifyWhitespace: true,
  minifySyntax: true,
  keepNames: true,
  legalComments: 'none',
  logLevel: 'warning',
});

// Every exported function and class keeps its own name (a renamed one would show in stack traces
// and in `.name`): the bundle is imported once here, without init().
const pkg = await import(`${pathToFileURL(path.join(dist, 'index.js')).href}?check=${Date.now()}`);
const renamed = Object.entries(pkg).filter(([k, v]) => typeof v === 'function' && v.name !== k && !k.startsWith('internal'));
if (renamed.length) {
  console.error(`bundle: exports named otherwise in ${dist}/index.js: ${renamed.map(([k, v]) => `${k} is ${v.name}`).join(', ')}`);
  process.exit(1);
}
