// Shared inside core/src/json only.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string_view>

#include "quire/json.h"

namespace quire::json {

/// Offset of the first byte that does not start a valid UTF-8 sequence; s.size() when all are valid.
uint64_t first_invalid_utf8(std::string_view s) noexcept;

/// The simdjson kernel in use ("haswell", "fallback"...).
std::string_view simd_kernel() noexcept;

/// An upper bound on the tape entries of a document: one per `,` `:` `[` `{`, plus the root.
size_t tape_entries_bound(std::string_view s) noexcept;

// The fast tape builder (json_tape.cpp). `padded` has simdjson's 64 bytes of padding after it
// (it reads 16 bytes at a time past what it needs). It returns false, with `data`'s tape, strings
// and counts emptied, for anything it does not accept: the caller then runs the reference walk,
// which reports the error. `data.tape` must have capacity for tape_entries_bound(padded) nodes and
// `data.strings` for padded.size() + FAST_STRING_SLACK bytes (strings are copied 16 bytes per
// store); what is in them is replaced.
inline constexpr size_t FAST_STRING_SLACK = 64;
bool fast_build(std::string_view padded, const limits &lim, detail::tape_data &data);
/// As fast_build, counting (check()).
bool fast_check(std::string_view padded, const limits &lim, stats &out);

/// Which parser builds a tape: the fast builder with the reference walk on anything it declines
/// (what parse() does), or one of them alone (tests hold the two to the same results).
/// reference_only walks with the kernel parse() would use (haswell on an x86-64 CPU with AVX2);
/// baseline_only walks with the baseline kernel whatever the CPU has, so that tests and the fuzz
/// target hold the kernels to the same tapes and errors (in wasm the two are the same kernel).
enum class tape_path { automatic, fast_only, reference_only, baseline_only };
/// parse_into()'s work on a bare tape_data, with the given builder. fast_only fails with
/// INVALID_JSON "declined by the fast tape builder" at offset 0 when the fast builder declines.
result<void> parse_tape(detail::tape_data &data, std::string_view input, const limits &lim, tape_path which);
/// check() with the given builder (fast_only fails as parse_tape's does).
result<stats> check_with(std::string_view input, const limits &lim, tape_path which);

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
