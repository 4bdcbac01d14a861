// Partitioned datasets (docs/format.md §9): a folder of .quire parts and the manifest that says
// which files a query can skip. Core reads the manifest, plans and queries; this opens the files
// (Node: by path, range by range) and moves the text out.
import type { EmbindHandle, ErrorRecord } from './quire.mjs';
import { QuireError } from './errors.js';
import { nodeFs } from './files.js';
import { Handle } from './handles.js';
import { INTERNAL, checkInternal } from './internal.js';
import { wasm } from './module.js';
import { check, queryJson, type ColumnType, type Query, type RowText } from './format.js';

/** What the manifest says of one file (docs/format.md §9). */
export interface DatasetFile {
  path: string;
  /** The partition column's value as text; null for the null partition. */
  partition: string | null;
  rows: number;
  bytes: number;
  /** Per column: nulls, and min and max in the column's stored domain (null when unknown). */
  columns: { nulls: number; min: unknown; max: unknown }[];
}

/** A dataset's manifest, as core writes it. */
export interface DatasetManifest {
  quireDataset: number;
  partitionBy: string[];
  rows: number;
  schema: { name: string; type: ColumnType }[];
  files: DatasetFile[];
}

/** Which files a query reads and which the manifest let it skip. */
export interface DatasetPlan {
  files: number;
  skippedByPartition: number;
  skippedByStatistics: number;
  scanned: string[];
}

interface DatasetText {
  error: ErrorRecord;
  text: string;
}

interface DatasetHandle extends EmbindHandle {
  error(): ErrorRecord;
  info(): string;
  query(queryJson: string, form: string): DatasetText;
  count(queryJson: string): { error: ErrorRecord; value: number };
  explain(queryJson: string): DatasetText;
}

interface JsFile {
  size: number;
  read(offset: number, length: number, pointer: number): number;
  close(): void;
}

interface DatasetBindings {
  QuireDataset: new (manifest: string, opener: { open(path: string): JsFile | null }) => DatasetHandle;
  HEAPU8: Uint8Array;
}

const MANIFEST = '_quire_dataset.json';

/** A dataset opened by format.openDataset(). close() it when done (a finalizer frees it otherwise). */
export class QuireDataset extends Handle<DatasetHandle> {
  readonly #manifest: DatasetManifest;

  /** @internal */
  constructor(token: typeof INTERNAL, handle: DatasetHandle) {
    checkInternal(token, 'QuireDataset', 'format.openDataset()');
    super(handle, 'QuireDataset');
    this.#manifest = JSON.parse(handle.info()) as DatasetManifest;
  }

  /** The manifest: schema, partition column, files with their rows and statistics. */
  get manifest(): DatasetManifest {
    return this.#manifest;
  }
  get rowCount(): number {
    return this.#manifest.rows;
  }

  /** Rows a query selects over every file it cannot skip, as objects (QuireFile.query()'s rules); offset and limit run across files. */
  query(q: Query = {}): Record<string, unknown>[] {
    return JSON.parse(this.queryText(q)) as Record<string, unknown>[];
  }

  /** The rows as core's text: a JSON array, or in `form` (RowText; `csv` has one header). */
  queryText(q: Query = {}, options: { form?: RowText } = {}): string {
    const r = this.handle.query(queryJson(q, 'queryText'), options.form ?? 'array');
    check(r);
    return r.text;
  }

  /** The number of rows query(q) would give. */
  count(q?: Query): number {
    const r = this.handle.count(queryJson(q, 'count'));
    check(r);
    return r.value;
  }

  /** Which files query(q) reads, and how many the manifest let it skip (by the partition's value, by other statistics). */
  explain(q: Query = {}): DatasetPlan {
    const r = this.handle.explain(queryJson(q, 'explain'));
    check(r);
    return JSON.parse(r.text) as DatasetPlan;
  }
}

/** Node: a file of the dataset, read range by range with fs.readSync; null when it is not there. */
function openPart(dir: string, path: string): JsFile | null {
  const fs = nodeFs();
  let fd: number;
  try {
    fd = fs.openSync(`${dir}/${path}`, 'r');
  } catch {
    return null;
  }
  const size = fs.fstatSync(fd).size;
  return {
    size,
    read(offset, length, pointer) {
      // HEAPU8 is taken inside the call: memory may have grown since the file was opened.
      const into = (wasm() as unknown as DatasetBindings).HEAPU8.subarray(pointer, pointer + length);
      let done = 0;
      while (done < length) {
        const n = fs.readSync(fd, into, done, length - done, offset + done);
        if (n <= 0) break;
        done += n;
      }
      return done;
    },
    close() {
      fs.closeSync(fd);
    },
  };
}

/**
 * Node: opens the dataset in folder `dir` (its `_quire_dataset.json`, as `quire view run
 * --partition-by` and `quire dataset merge` write it). Files are opened as a query needs them and
 * closed after. Throws QuireError: FILE_NOT_FOUND (no manifest), CORRUPT_FILE or
 * UNSUPPORTED_VERSION (a manifest core refuses), and later, from queries, CORRUPT_FILE for a file
 * that is not what the manifest says.
 */
export function openDataset(dir: string): QuireDataset {
  if (typeof dir !== 'string') throw new TypeError('quire: format.openDataset() takes the folder of a dataset (Node)');
  const fs = nodeFs();
  let text: string;
  try {
    const fd = fs.openSync(`${dir}/${MANIFEST}`, 'r');
    try {
      const bytes = new Uint8Array(fs.fstatSync(fd).size);
      let done = 0;
      while (done < bytes.length) {
        const n = fs.readSync(fd, bytes, done, bytes.length - done, done);
        if (n <= 0) break;
        done += n;
      }
      text = new TextDecoder().decode(bytes.subarray(0, done));
    } finally {
      fs.closeSync(fd);
    }
  } catch (e) {
    throw new QuireError('FILE_NOT_FOUND', `FILE_NOT_FOUND: ${dir}/${MANIFEST} cannot be read (${(e as Error).message})`);
  }
  const m = wasm('dataset') as unknown as DatasetBindings;
  const handle = new m.QuireDataset(text, { open: (path: string) => openPart(dir, path) });
  const err = handle.error();
  if (err.code) {
    handle.delete();
    throw QuireError.fromRecord(err);
  }
  return new QuireDataset(INTERNAL, handle);
}
