// The one JavaScript call of js_range_source (bind_sources.h), as an import: val::call made two
// calls out of wasm a range (the call, then its destructors list) and allocated a handle for that
// list; a cold find through the npm package reads 28 ranges.
#include <emscripten/em_js.h>
#include <emscripten/em_macros.h>
#include <stdint.h>

// A reader that returns no number is the caller's error, thrown as Embind's conversion threw it.
// (clang-format would split JavaScript's !== into != =.)
// clang-format off
EM_JS(double, quire_read_range, (uintptr_t reader, double offset, double length, double pointer), {
  var n = Emval.toValue(reader).read(offset, length, pointer);
  if (typeof n !== 'number') throw new TypeError("quire: a reader's read() returns the number of bytes it copied");
  return n;
});
// clang-format on
