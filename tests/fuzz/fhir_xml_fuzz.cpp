// Fuzz target for the FHIR XML reader and writer: read_xml must never crash and always give a
// typed error with a place, validate must agree with it, the tape it builds must read as the JSON
// text of the same elements does (the same error, or the same resource and issues), and what it
// reads writes to XML that reads back to the same canonical JSON. Build with -DQUIRE_FUZZ=ON and
// clang; run `make fuzz`.
#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>

#include "../../core/src/fhir/fhir_internal.h"
#include "quire/fhir.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  std::string_view input(reinterpret_cast<const char *>(data), size);
  quire::fhir::options opts;
  opts.max_depth = 128;
  opts.max_issues = 50;
  opts.max_contained = 20;
  auto r = quire::fhir::read_xml(input, opts);
  quire::fhir::options as_xml = opts;
  as_xml.input_syntax = quire::fhir::syntax::xml;
  auto o = quire::fhir::validate(input, as_xml);
  auto text = quire::fhir::detail::read_xml_with(input, opts, quire::fhir::detail::xml_form::text);
  if (r.ok() != text.ok()) std::abort();
  if (!r) {
    const quire::error &a = r.error(), &b = text.error();
    if (a.code != b.code || a.message != b.message || a.offset != b.offset || a.line != b.line ||
        a.column != b.column || a.path != b.path)
      std::abort();
  } else if (quire::fhir::write(*r) != quire::fhir::write(*text) ||
             quire::fhir::issues_to_json(r->issues()) != quire::fhir::issues_to_json(text->issues()) ||
             r->document().value_count() != text->document().value_count() ||
             r->document().max_depth() != text->document().max_depth()) {
    std::abort();
  }
  if (!r) {
    if (r.error().line == 0 || o.issues.size() != 1 || o.issues[0].error != r.code()) std::abort();
    return 0;
  }
  if (o.errors != r->outcome().errors || o.issues.size() != r->issues().size()) std::abort();
  const std::string json = quire::fhir::write(*r);
  auto xml = quire::fhir::write_xml(*r);
  // A value XML cannot hold (a control character, a div that is not XHTML) is refused, typed.
  if (!xml) {
    if (xml.code() != quire::error_code::INVALID_RESOURCE) std::abort();
    return 0;
  }
  auto back = quire::fhir::read_xml(*xml, opts);
  if (!back || quire::fhir::write(*back) != json) std::abort();
  return 0;
}
