// Fuzz target for the FHIR reader: read + validate + write must never crash, validate must agree
// with read, and writing is a fixed point (write(read(write(x))) == write(x)). Build with
// -DQUIRE_FUZZ=ON and clang; run `make fuzz`.
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
  auto r = quire::fhir::read(input, opts);
  auto o = quire::fhir::validate(input, opts);
  if (!r) {
    if (o.issues.size() != 1 || o.issues[0].error != r.code()) std::abort();
    return 0;
  }
  if (o.errors != r->outcome().errors || o.issues.size() != r->issues().size()) std::abort();
  std::string compact = quire::fhir::write(*r);
  auto again = quire::fhir::read(compact, opts);
  if (!again || quire::fhir::write(*again) != compact) std::abort();
  if (again->outcome().errors != r->outcome().errors && !r->outcome().truncated) std::abort();
  auto pretty = quire::fhir::format(input, {.pretty = true}, opts);
  if (!pretty) std::abort();
  auto from_pretty = quire::fhir::format(*pretty, {}, opts);
  if (!from_pretty || *from_pretty != compact) std::abort();
  return 0;
}
