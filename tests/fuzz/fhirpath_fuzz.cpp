// Fuzz target for the FHIRPath engine: the input is an expression, compiled and evaluated over a
// small fixed Patient. Compiling must never crash (a typed error or a program), evaluating must
// end with a collection or a typed error, and evaluating the same program twice with one
// evaluator must give the same bytes (the evaluator's reused buffers leak nothing between runs).
// Build with -DQUIRE_FUZZ=ON and clang; run `make fuzz`.
#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>

#include "quire/fhirpath.h"

namespace {
const char *PATIENT = R"({"resourceType":"Patient","id":"f1","active":true,"gender":"male","birthDate":"1974-12-25",
"_birthDate":{"extension":[{"url":"http://example.org/t","valueTime":"14:35:45"}]},
"name":[{"use":"official","family":"Chalmers","given":["Peter",null],"_given":[null,{"id":"x"}]},{"given":["Jim"]}],
"telecom":[{"system":"phone","value":"555"}],"multipleBirthInteger":2,
"contained":[{"resourceType":"Observation","status":"final","valueQuantity":{"value":0.700,"code":"kg"}}]})";
}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  static const quire::json::document doc = quire::json::parse(PATIENT).value();
  std::string_view text(reinterpret_cast<const char *>(data), size);
  quire::fhirpath::limits lim;
  lim.max_collection = 10000;
  lim.max_string_bytes = 1 << 20;
  auto expr = quire::fhirpath::compile(text, lim);
  if (!expr) {
    if (expr.code() == quire::error_code::OK) std::abort();
    return 0;
  }
  quire::fhirpath::evaluator ev(lim);
  auto first = ev.evaluate(*expr, doc.root());
  std::string a = first ? quire::fhirpath::to_json(**first) : std::string(quire::error_name(first.code()));
  auto second = ev.evaluate(*expr, doc.root());
  std::string b = second ? quire::fhirpath::to_json(**second) : std::string(quire::error_name(second.code()));
  // now(), today() and timeOfDay() may tick between the two runs.
  if (a != b && text.find("now") == std::string_view::npos && text.find("today") == std::string_view::npos &&
      text.find("timeOfDay") == std::string_view::npos)
    std::abort();
  return 0;
}
