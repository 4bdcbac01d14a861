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

/** ../shared/corpus beside the checkout (or QUIRE_CORPUS); undefined when absent. */
export function corpusDir() {
  const dir = process.env.QUIRE_CORPUS ?? path.resolve(repo, '..', 'shared', 'corpus');
  return existsSync(dir) ? dir : undefined;
}

export const dataDir = path.join(repo, 'tests', 'data');
