// Shared by the package's tests: where the built package is (QUIRE_DIST, else ../dist), the
// corpus, and the repository's test data.
import { existsSync } from 'node:fs';
import { fileURLToPath, pathToFileURL } from 'node:url';
import path from 'node:path';

const here = path.dirname(fileURLToPath(import.meta.url));
export const repo = path.resolve(here, '..', '..');
export const dist = process.env.QUIRE_DIST ? path.resolve(process.env.QUIRE_DIST) : path.join(repo, 'js', 'dist');

/** The built package's entry point, imported and initialised. */
export async function loadQuire() {
  const quire = await import(pathToFileURL(path.join(dist, 'index.js')).href);
  await quire.init();
  return quire;
}

/**
 * The shared corpus: QUIRE_CORPUS, else ../shared/corpus beside the checkout (../../ for a git
 * worktree one folder deeper). A test that needs it fails when it is absent, naming where it was
 * looked for: a corpus that went missing must not turn the tallies into skips that pass.
 */
export function corpusDir() {
  const tried = process.env.QUIRE_CORPUS ? [path.resolve(process.env.QUIRE_CORPUS)] : [path.resolve(repo, '..', 'shared', 'corpus'), path.resolve(repo, '..', '..', 'shared', 'corpus')];
  const dir = tried.find((d) => existsSync(d));
  if (!dir) throw new Error(`the shared corpus is missing: expected at ${tried.join(' or ')} (or set QUIRE_CORPUS)`);
  return dir;
}

export const dataDir = path.join(repo, 'tests', 'data');
