// Shared by the Embind binding files: the records that cross the boundary.
#pragma once

#include <cstdint>
#include <span>
#include <string>

#include "quire/error.h"

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
