// Shared inside core/src/json only.
#pragma once

#include <cstdint>
#include <string_view>

#include "quire/json.h"

namespace quire::json {

/// Offset of the first byte that does not start a valid UTF-8 sequence; s.size() when all are valid.
uint64_t first_invalid_utf8(std::string_view s) noexcept;

/// The simdjson kernel in use ("haswell", "fallback"...).
std::string_view simd_kernel() noexcept;

// Each kernel's entry points (json_walk.h): `padded` has simdjson's 64 bytes of padding after it.
result<stats> baseline_check(std::string_view padded, const limits &lim);
result<void> baseline_build(std::string_view padded, const limits &lim, detail::tape_data &data);
std::string_view baseline_name() noexcept;
#if QUIRE_HAVE_HASWELL_KERNEL
result<stats> haswell_check(std::string_view padded, const limits &lim);
result<void> haswell_build(std::string_view padded, const limits &lim, detail::tape_data &data);
std::string_view haswell_name() noexcept;
#endif

}  // namespace quire::json
