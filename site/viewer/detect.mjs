// What kind of file a source is, by core's rule (quire/detect.h, the npm package's detect(): the
// one the `quire` CLI applies), and the view that opens each kind. Only names are mapped here. No
// DOM: the tests run it in Node too, with the package loaded there.

/**
 * The view (views/<name>.mjs) of each kind core names; a kind not here opens in none. FHIR XML
 * ('fhir-xml') opens in the FHIR view, which reads it as XML by this kind.
 */
export const VIEW_OF_KIND = { quire: 'quire', fhir: 'fhir', json: 'fhir', 'fhir-xml': 'fhir', ndjson: 'ndjson', hl7: 'hl7', csv: 'csv' };

/**
 * Core's kind of `source` ({ name, size, read(start, end), kind? }), with the view that opens it
 * (null when none does): its first DETECT_BYTES, then, while core asks for more (a first line
 * longer than that which may be JSON), twice as many, up to the whole file. A child source that
 * names its kind (one NDJSON line opened in the FHIR view, which core's rule calls NDJSON) is
 * that kind.
 * @returns {Promise<{ kind: string, reason: string, view: string|null }>}
 */
export async function detectSource(pkg, source) {
  if (source.kind) return { kind: source.kind, reason: `opened as ${source.kind}`, view: VIEW_OF_KIND[source.kind] ?? null };
  let end = Math.min(source.size, pkg.DETECT_BYTES);
  for (;;) {
    const first = await source.read(0, end);
    const d = pkg.detect(first, { complete: end >= source.size, name: source.name });
    if (d.kind !== 'need-more' || end >= source.size) return { ...d, view: VIEW_OF_KIND[d.kind] ?? null };
    end = Math.min(source.size, end * 2);
  }
}
