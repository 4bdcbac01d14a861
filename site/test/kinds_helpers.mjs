// Helpers of the FHIR, NDJSON, HL7 and CSV view tests (viewer_kinds.test.mjs, kinds_model.test.mjs).
import { existsSync } from 'node:fs';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { repo } from './helpers.mjs';

/** ../shared/corpus beside the checkout (or QUIRE_CORPUS); undefined when absent. */
export function corpusDir() {
  const dir = process.env.QUIRE_CORPUS ?? path.resolve(repo, '..', 'shared', 'corpus');
  return existsSync(dir) ? dir : undefined;
}

/** The npm package as built into js/dist (or QUIRE_DIST), initialised; undefined when not built. */
export async function loadPackage() {
  const dist = process.env.QUIRE_DIST ?? path.join(repo, 'js', 'dist');
  const entry = path.join(dist, 'index.js');
  if (!existsSync(entry)) return undefined;
  const pkg = await import(pathToFileURL(entry).href);
  await pkg.init();
  return pkg;
}
