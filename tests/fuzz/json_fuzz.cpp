// Fuzz target for the JSON layer: parse (tape), check (counts) and write back must agree, and
// nothing may crash. Build with -DQUIRE_FUZZ=ON and clang; run `make fuzz`.
#include <cstdint>
#include <cstdlib>
#include <string_view>

#include "quire/json.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  std::string_view input(reinterpret_cast<const char *>(data), size);
  quire::json::limits lim;
  lim.max_depth = 256;
  auto doc = quire::json::parse(input, lim);
  auto stats = quire::json::check(input, lim);
  if (doc.ok() != stats.ok()) std::abort();  // the two walks must agree on validity
  if (!doc) {
    if (doc.code() != stats.code()) std::abort();
    return 0;
  }
  if (doc->value_count() != stats->values()) std::abort();
  // Writing back and parsing again gives the same text.
  std::string once = quire::json::to_json(doc->root());
  auto again = quire::json::parse(once, lim);
  if (!again || quire::json::to_json(again->root()) != once) std::abort();
  // ... and the same value: as many values, and a written document passes the counting walk too.
  if (again->value_count() != doc->value_count()) std::abort();
  auto counted = quire::json::check(once, lim);
  if (!counted || counted->values() != doc->value_count()) std::abort();
  return 0;
}
