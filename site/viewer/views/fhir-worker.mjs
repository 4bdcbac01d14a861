// The FHIR view's checks of a large document, off the page's thread: json.check (depth-bounded)
// then fhir.validate, so a big Bundle does not freeze the tab and Cancel can end the work (the
// view terminates this worker). Answers { outcome, targets } or { error: { code, message } }
// (core's); targets are a Bundle's reference targets as [key, entry index] pairs, found here so the
// page does not scan every entry before it shows the tree.
import { JsonModel, bundleTargets } from './json-model.mjs';

let pkg = null;

function load() {
  pkg ??= import('/pkg/index.js').then(async (m) => {
    await m.init();
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
  const outcome = m.fhir.validate(bytes);
  const fatal = outcome.issues.find((i) => i.error);
  if (fatal) {
    // The same input through fhir.format throws core's own QuireError (code and message line).
    m.fhir.format(bytes);
    throw new m.QuireError(fatal.error, `${fatal.error}: ${fatal.details}`);
  }
  return outcome;
}

if (typeof WorkerGlobalScope !== 'undefined' && self instanceof WorkerGlobalScope) {
  self.onmessage = async (e) => {
    let answer;
    try {
      const outcome = check(await load(), e.data.bytes);
      const targets = [...bundleTargets(new JsonModel(e.data.bytes))].map(([key, node]) => [key, node.key === 'resource' ? node.parent.index : node.index]);
      answer = { outcome, targets };
    } catch (err) {
      answer = fail(err);
    }
    self.postMessage(answer);
  };
}
