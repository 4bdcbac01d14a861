// The next line end (`\n`) in a text: what every NDJSON reader in core (ndjson's reader, the view
// runner and table_writer) looks for before each line. Natively it is memchr (glibc's is
// vectorised already); in wasm musl's memchr reads four bytes a step, and this reads sixteen with
// SIMD128 (about 6% of a view run over NDJSON went to memchr in Node).
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstring>
#include <string_view>
#include <vector>

#if defined(__wasm_simd128__)
#include <wasm_simd128.h>
#endif

namespace quire::detail {

/// The index of the first `\n` in text[from, end), or std::string_view::npos.
inline size_t find_line_end(std::string_view text, size_t from, size_t end) noexcept {
  if (end > text.size()) end = text.size();
  if (from >= end) return std::string_view::npos;
  const char *base = text.data();
#if defined(__wasm_simd128__)
  size_t i = from;
  const v128_t nl = wasm_i8x16_splat('\n');
  for (; i + 16 <= end; i += 16) {
    const uint32_t bits = wasm_i8x16_bitmask(wasm_i8x16_eq(wasm_v128_load(base + i), nl));
    if (bits) return i + static_cast<size_t>(__builtin_ctz(bits));
  }
  for (; i < end; ++i) {
    if (base[i] == '\n') return i;
  }
  return std::string_view::npos;
#else
  const void *p = std::memchr(base + from, '\n', end - from);
  return p ? static_cast<size_t>(static_cast<const char *>(p) - base) : std::string_view::npos;
#endif
}

/// The first `\n` in text from `from` on.
inline size_t find_line_end(std::string_view text, size_t from = 0) noexcept {
  return find_line_end(text, from, text.size());
}

/// Where to cut a text of whole lines into `parts` runs of about equal size, each ending just past
/// a line end (or at the text's end): parts + 1 offsets from 0 to text.size(); a run may be empty
/// (a line longer than a share).
inline std::vector<size_t> cut_at_line_ends(std::string_view text, unsigned parts) {
  std::vector<size_t> cut(parts + 1, text.size());
  cut[0] = 0;
  for (unsigned k = 1; k < parts; ++k) {
    const size_t nl = find_line_end(text, std::max(cut[k - 1], text.size() / parts * k));
    cut[k] = nl == std::string_view::npos ? text.size() : nl + 1;
  }
  return cut;
}

}  // namespace quire::detail
