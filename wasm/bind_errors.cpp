// Embind: the error codes this build knows, so the npm package's tests can hold the generated
// TypeScript list (js/src/error_codes.ts) to the core's own names and values.
#include <emscripten/bind.h>

#include <cstdint>
#include <limits>

#include "quire/error.h"

namespace {

// Asks error_name() about every uint16_t value rather than walking ALL_ERROR_CODES, so a code
// that error_name() knows but the list lost (or the reverse) shows up as a difference in JS.
emscripten::val error_codes() {
  auto out = emscripten::val::array();
  for (uint32_t v = 0; v <= std::numeric_limits<uint16_t>::max(); ++v) {
    auto name = quire::error_name(static_cast<quire::error_code>(v));
    if (name == "UNKNOWN") continue;
    auto pair = emscripten::val::object();
    pair.set("name", std::string(name));
    pair.set("value", v);
    out.call<void>("push", pair);
  }
  return out;
}

}  // namespace

EMSCRIPTEN_BINDINGS(quire_errors) { emscripten::function("errorCodes", &error_codes); }
