// Embind bindings of the FHIR module. Input bytes arrive as one copy in the wasm heap (pointer and
// length, padded by the wrapper); results leave as one record of JSON texts, never value by value.
#include <emscripten/bind.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>

#include "../core/src/common/alloc.h"
#include "bind_support.h"
#include "quire/fhir.h"

namespace {

using quire::wasm::error_record;

/// fhir::options as the wrapper passes them (0 for a limit means its default).
struct fhir_options_record {
  bool strict = false;
  double max_depth = 0, max_bytes = 0, max_issues = 0, max_contained = 0;
  bool check_codes = true, check_references = true, check_invariants = true;
  int syntax = 0;  ///< fhir::syntax: 0 json, 1 xml, 2 detect
};

/// A result: an error, or JSON texts (`text`: the resource or formatted output; `issues`: an array).
struct fhir_text_record {
  error_record error;
  std::string text;
  std::string issues;
  double errors = 0, warnings = 0;
  bool truncated = false;
};

/// validate()'s options as plain numbers (Embind converts them without a record): the flags are
/// bits, FLAG_* below, the syntax in bits 4-5; 0 for a limit means its default.
constexpr int FLAG_STRICT = 1, FLAG_CHECK_CODES = 2, FLAG_CHECK_REFERENCES = 4, FLAG_CHECK_INVARIANTS = 8;

quire::fhir::options make_options(const fhir_options_record &r) {
  quire::fhir::options o;
  o.strict = r.strict;
  if (r.max_depth > 0) o.max_depth = static_cast<size_t>(r.max_depth);
  if (r.max_bytes > 0) o.max_bytes = static_cast<uint64_t>(r.max_bytes);
  if (r.max_issues > 0) o.max_issues = static_cast<size_t>(r.max_issues);
  if (r.max_contained > 0) o.max_contained = static_cast<size_t>(r.max_contained);
  o.check_codes = r.check_codes;
  o.check_references = r.check_references;
  o.check_invariants = r.check_invariants;
  o.input_syntax = r.syntax == 1   ? quire::fhir::syntax::xml
                   : r.syntax == 2 ? quire::fhir::syntax::detect
                                   : quire::fhir::syntax::json;
  return o;
}

void fill_outcome(fhir_text_record &out, const quire::fhir::outcome &o) {
  out.issues = quire::fhir::issues_to_json(o.issues);
  out.errors = static_cast<double>(o.errors);
  out.warnings = static_cast<double>(o.warnings);
  out.truncated = o.truncated;
}

/// validate(): the result in one malloc that the wrapper reads and frees, so that nothing crosses
/// value by value and the issues' text is not scanned for its end: four little-endian uint32
/// (the issues' JSON length, errors, warnings, truncated), then the issues as a JSON array, or
/// nothing when there are none (the wrapper then makes no JSON.parse call). 0 when the heap
/// cannot hold it.
uintptr_t fhir_validate(uintptr_t pointer, size_t length, int flags, double max_depth, double max_bytes,
                        double max_issues, double max_contained) {
  fhir_options_record r;
  r.strict = (flags & FLAG_STRICT) != 0;
  r.check_codes = (flags & FLAG_CHECK_CODES) != 0;
  r.check_references = (flags & FLAG_CHECK_REFERENCES) != 0;
  r.check_invariants = (flags & FLAG_CHECK_INVARIANTS) != 0;
  r.syntax = (flags >> 4) & 3;
  r.max_depth = max_depth;
  r.max_bytes = max_bytes;
  r.max_issues = max_issues;
  r.max_contained = max_contained;
  auto source = quire::borrow_bytes(quire::wasm::heap_bytes(pointer, length), quire::wasm::INPUT_PADDING);
  const quire::fhir::outcome o = quire::fhir::validate(*source, make_options(r));
  const std::string issues = o.issues.empty() ? std::string() : quire::fhir::issues_to_json(o.issues);
  auto *block = static_cast<uint8_t *>(std::malloc(16 + issues.size()));
  if (!block) return 0;
  const uint32_t head[4] = {static_cast<uint32_t>(issues.size()), static_cast<uint32_t>(o.errors),
                            static_cast<uint32_t>(o.warnings), o.truncated ? 1u : 0u};
  std::memcpy(block, head, sizeof head);  // wasm is little-endian
  std::memcpy(block + 16, issues.data(), issues.size());
  return reinterpret_cast<uintptr_t>(block);
}

// read() then write() (write_xml() when to_xml): the canonical text, with the read's issues.
fhir_text_record fhir_write(uintptr_t pointer, size_t length, bool pretty, bool to_xml,
                            const fhir_options_record &opts) {
  auto source = quire::borrow_bytes(quire::wasm::heap_bytes(pointer, length), quire::wasm::INPUT_PADDING);
  fhir_text_record out;
  auto r = quire::fhir::read(*source, make_options(opts));
  if (!r) {
    out.error = quire::wasm::to_record(r.error());
    return out;
  }
  // write() reserves the input's size (half again when pretty) and Embind copies the text once
  // more into a fresh malloc to hand it to JS, whose failure 3.1.6 does not check: both must fit,
  // or this is OUT_OF_MEMORY instead of an abort.
  // XML spells every primitive as an element with a value attribute: up to three times JSON's size.
  const uint64_t bound = to_xml ? 3 * uint64_t{length} : length + (pretty ? length / 2 : 0);
  if (bound >= quire::detail::PROBE_THRESHOLD &&
      !quire::detail::can_allocate(static_cast<size_t>(std::min<uint64_t>(2 * bound, SIZE_MAX - 64)))) {
    out.error = quire::wasm::to_record(quire::detail::out_of_memory(2 * bound, "the written resource"));
    return out;
  }
  if (to_xml) {
    auto xml = quire::fhir::write_xml(r.value(), {.pretty = pretty});
    if (!xml) {
      out.error = quire::wasm::to_record(xml.error());
      return out;
    }
    out.text = std::move(xml).value();
  } else {
    out.text = quire::fhir::write(r.value(), {.pretty = pretty});
  }
  fill_outcome(out, r->outcome());
  return out;
}

std::string fhir_definitions_version() { return std::string(quire::fhir::definitions_version()); }

}  // namespace

QUIRE_BINDINGS(fhir) {
  using namespace emscripten;
  value_object<fhir_options_record>("FhirOptionsRecord")
      .field("strict", &fhir_options_record::strict)
      .field("maxDepth", &fhir_options_record::max_depth)
      .field("maxBytes", &fhir_options_record::max_bytes)
      .field("maxIssues", &fhir_options_record::max_issues)
      .field("maxContained", &fhir_options_record::max_contained)
      .field("checkCodes", &fhir_options_record::check_codes)
      .field("checkReferences", &fhir_options_record::check_references)
      .field("checkInvariants", &fhir_options_record::check_invariants)
      .field("syntax", &fhir_options_record::syntax);
  value_object<fhir_text_record>("FhirTextRecord")
      .field("error", &fhir_text_record::error)
      .field("text", &fhir_text_record::text)
      .field("issues", &fhir_text_record::issues)
      .field("errors", &fhir_text_record::errors)
      .field("warnings", &fhir_text_record::warnings)
      .field("truncated", &fhir_text_record::truncated);
  function("fhirValidate", &fhir_validate);
  function("fhirWrite", &fhir_write);
  function("fhirDefinitionsVersion", &fhir_definitions_version);
}
