// quire/error.h — the error type every quire call returns instead of throwing.
//
// Core never throws. A call that can fail returns quire::result<T> (see result.h): a value or a
// quire::error. Error codes are stable: once released, a code keeps its name, its value and its
// meaning (the list is quire/error_list.h).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace quire {

/// Why a quire call failed. The codes, their fixed values and one line on each are in
/// quire/error_list.h: that list IS the documentation of every code (read each code's line there,
/// or call error_meaning()). This enum, error_name(), the wasm module's list and the TypeScript
/// ErrorCode type are all generated from it. A value is pinned once released
/// (tests/data/error_codes.tsv checks it); new codes are only appended.
enum class error_code : uint16_t {
#define QUIRE_ERROR_CODE(NAME, VALUE, DOC) NAME = VALUE,
#include "quire/error_list.h"
#undef QUIRE_ERROR_CODE
};

/// Every code, in the list's order (ascending values).
inline constexpr error_code ALL_ERROR_CODES[] = {
#define QUIRE_ERROR_CODE(NAME, VALUE, DOC) error_code::NAME,
#include "quire/error_list.h"
#undef QUIRE_ERROR_CODE
};

/// The stable UPPER_SNAKE name of a code ("MAX_DEPTH_EXCEEDED"); "UNKNOWN" for a value not in the list.
std::string_view error_name(error_code code) noexcept;

/// The list's one line on what a code means; "" for a value not in the list.
std::string_view error_meaning(error_code code) noexcept;

/// The code named `name` (exactly, e.g. "INVALID_JSON"); nullopt for a name not in the list.
std::optional<error_code> parse_error_name(std::string_view name) noexcept;

/// What went wrong and where. `offset` is a byte offset into the input (or NO_OFFSET); `line` and
/// `column` are 1-based and 0 when unknown; `path` is a location like `Bundle.entry[3].resource`
/// where one exists.
struct error {
  static constexpr uint64_t NO_OFFSET = UINT64_MAX;

  error_code code = error_code::OK;
  std::string message;
  uint64_t offset = NO_OFFSET;
  uint32_t line = 0;
  uint32_t column = 0;
  std::string path;

  error() = default;
  error(error_code c, std::string msg, uint64_t off = NO_OFFSET) : code(c), message(std::move(msg)), offset(off) {}

  /// One line for people: `CODE at offset N, line L, column C (path): message` (the parts that are
  /// unknown are left out). The one formatter of an error: the CLI prints it after `FILE: `, the wasm
  /// error record carries it as `text` and QuireError uses it as its message.
  std::string describe() const;
};

/// Fills `line` and `column` of `e` from its offset into `text` (counts newlines up to it).
void locate(error &e, std::string_view text) noexcept;

}  // namespace quire
