// Fuzz target for the FHIR XML reader and writer: read_xml must never crash and always give a
// typed error with a place, validate must agree with it, and what it reads writes to XML that
// reads back to the same canonical JSON. Build with -DQUIRE_FUZZ=ON and clang; run `make fuzz`.
#include <cstdint>
#include <cstdlib>
#include <string_view>

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
