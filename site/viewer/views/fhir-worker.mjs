// The FHIR view's checks of a large document, off the page's thread: json.check (depth-bounded)
// then fhir.validate, so a big Bundle does not freeze the tab and Cancel can end the work (the
// view terminates this worker). An XML document (R4's XML form) is validated as XML and turned
// into its canonical JSON by fhir.format, which the tree indexes. Answers { outcome, targets,
// json? } (json: the canonical JSON's bytes, for XML) or { error: { code, message } } (core's);
// targets are a Bundle's reference targets as [key, entry index] pairs, found here so the page
// does not scan every entry before it shows the tree.
import { JsonModel, bundleTargets } from './json-model.mjs';

let pkg = null;

// `module`: quire.wasm as the page compiled it (../wasm.mjs), so this worker only instantiates it.
function load(module) {
  pkg ??= import('/pkg/index.js').then(async (m) => {
    await m.init(module);
    return m;
  });
  return pkg;
}

function fail(err) {
  return { error: { code: err?.code ?? err?.name ?? 'ERROR', message: err?.message ?? String(err) } };
}

/** The checks, the same on either thread: a QuireError thrown for unreadable input, else the outcome. */
export function check(m, bytes) {
  const bad = m.json.check(bytes, { maxDepth: 1024 });
  if (bad) throw bad;
  return validate(m, bytes, 'json');
}

/** fhir.validate in `syntax`; a fatal issue rethrown as core's own QuireError (code and message line). */
function validate(m, bytes, syntax) {
  const outcome = m.fhir.validate(bytes, { syntax });
  const fatal = outcome.issues.find((i) => i.error);
  if (fatal) {
    // The same input through fhir.format throws core's own QuireError (code and message line).
    m.fhir.format(bytes, { syntax });
    throw new m.QuireError(fatal.error, `${fatal.error}: ${fatal.details}`);
  }
  return outcome;
}

const utf8 = new TextEncoder();

/**
 * A document of `syntax` ('json', or 'xml': R4's XML form) made ready for the view, on either
 * thread: `{ json, outcome }`, the JSON bytes the tree indexes (for XML, core's canonical JSON
 * of the resource, fhir.format(bytes, { to: 'json' })) and the validation outcome of the bytes as
 * given (for XML, issues at XML lines and columns). Throws core's QuireError for unreadable input
 * (INVALID_XML with its line and column, INVALID_RESOURCE, UNKNOWN_ELEMENT, MAX_DEPTH_EXCEEDED...).
 */
export function prepare(m, bytes, syntax = 'json') {
  if (syntax !== 'xml') return { json: bytes, outcome: check(m, bytes) };
  const outcome = validate(m, bytes, 'xml');
  return { json: utf8.encode(m.fhir.format(bytes, { syntax: 'xml', to: 'json' })), outcome };
}

if (typeof WorkerGlobalScope !== 'undefined' && self instanceof WorkerGlobalScope) {
  self.onmessage = async (e) => {
    let answer;
    try {
      const { json, outcome } = prepare(await load(e.data.module), e.data.bytes, e.data.syntax);
      const targets = [...bundleTargets(new JsonModel(json))].map(([key, node]) => [key, node.key === 'resource' ? node.parent.index : node.index]);
      answer = { outcome, targets };
      if (json !== e.data.bytes) answer.json = json;
    } catch (err) {
      answer = fail(err);
    }
    self.postMessage(answer, answer.json ? [answer.json.buffer] : []);
  };
}
