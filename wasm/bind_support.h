// Shared by the Embind binding files: the records that cross the boundary.
#pragma once

#include <emscripten/emscripten.h>

#include <cstdint>
#include <span>
#include <string>

#include "quire/error.h"

/// An area's Embind registrations (json, fhir, format...), made when the wrapper first uses the area
/// (js/src/module.ts: `wasm('format')` calls the export `quire_register_format` once), not by a
/// static constructor when the module is instantiated as EMSCRIPTEN_BINDINGS does: the 390 calls
/// into Embind's JS and the one large constructor function V8 compiled for them were a third of a
/// fresh `init()` (docs/performance.md, "What quire.wasm is made of"). The areas are independent of
/// one another; each depends only on bind_core.cpp's records (ErrorRecord...), which stay eager.
/// Used as `QUIRE_BINDINGS(format) { using namespace emscripten; class_<...>(...); }`.
#define QUIRE_BINDINGS(area)                                     \
  static void quire_bindings_##area();                           \
  extern "C" EMSCRIPTEN_KEEPALIVE void quire_register_##area() { \
    static bool registered = false;                              \
    if (registered) return;                                      \
    registered = true;                                           \
    quire_bindings_##area();                                     \
  }                                                              \
  static void quire_bindings_##area()

namespace quire::wasm {

struct version_record {
  std::string version, target, compiler, flags, build_type, simd;
};

struct memory_record {
  double heap_bytes = 0;
  double heap_capacity_bytes = 0;
};

/// An error as JS sees it; code is "" on success. offset is -1 when unknown. `text` is core's one
/// line (quire::error::describe()), which QuireError takes as its message: JS formats none itself.
struct error_record {
  std::string code;
  std::string message;
  double offset = -1;
  uint32_t line = 0;
  uint32_t column = 0;
  std::string path;
  std::string text;
};

inline error_record to_record(const quire::error &e) {
  return {std::string(error_name(e.code)),
          e.message,
          e.offset == quire::error::NO_OFFSET ? -1.0 : static_cast<double>(e.offset),
          e.line,
          e.column,
          e.path,
          e.describe()};
}

/// Bytes the JS wrapper placed in the wasm heap: `pointer` from malloc, `length` bytes, followed by
/// `padding` zeroed bytes.
inline std::span<const uint8_t> heap_bytes(uintptr_t pointer, size_t length) {
  return {reinterpret_cast<const uint8_t *>(pointer), length};
}

/// The padding the wrapper adds after input bytes (simdjson's read-ahead).
constexpr size_t INPUT_PADDING = 64;

}  // namespace quire::wasm
