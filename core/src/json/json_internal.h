// Shared inside core/src/json only.
#pragma once

#include <cstdint>
#include <string_view>

#include "quire/json.h"

namespace quire::json {

/// Offset of the first byte that does not start a valid UTF-8 sequence; s.size() when all are valid.
uint64_t first_invalid_utf8(std::string_view s) noexcept;

/// The simdjson kernel in use ("haswell", "westmere", "fallback"...).
std::string_view simd_kernel() noexcept;

}  // namespace quire::json
