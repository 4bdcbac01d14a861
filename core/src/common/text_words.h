// Short texts compared and hashed a word at a time, for the validator's hot lookups (member keys,
// resource types, codes, issue strings). std::string_view's == calls memcmp, which Emscripten's
// libc compares a byte at a time in a call of its own; and a hash of a whole details text reads
// every byte. These read at most the first and last eight bytes to hash, and eight a step to
// compare.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string_view>

namespace quire::detail {

/// Whether the n bytes at a and b are equal, eight at a time.
inline bool same_bytes(const char *a, const char *b, size_t n) noexcept {
  for (; n >= 8; a += 8, b += 8, n -= 8) {
    uint64_t x, y;
    std::memcpy(&x, a, 8);
    std::memcpy(&y, b, 8);
    if (x != y) return false;
  }
  for (; n > 0; ++a, ++b, --n)
    if (*a != *b) return false;
  return true;
}

/// Whether two texts are equal: their lengths, then eight bytes at a time.
inline bool same_text(std::string_view a, std::string_view b) noexcept {
  return a.size() == b.size() && (a.data() == b.data() || same_bytes(a.data(), b.data(), a.size()));
}

/// A text's first and last eight bytes (four and four, or three single bytes, for shorter texts):
/// for a text of at most 16 bytes they are the whole text, so with its length they decide
/// equality; a longer text compares its middle too.
struct text_words {
  uint64_t lo = 0, hi = 0;
};

inline text_words words_of(std::string_view s) noexcept {
  const size_t n = s.size();
  const auto *p = reinterpret_cast<const unsigned char *>(s.data());
  text_words w;
  if (n >= 8) {
    std::memcpy(&w.lo, p, 8);
    std::memcpy(&w.hi, p + n - 8, 8);
  } else if (n >= 4) {
    uint32_t a = 0, b = 0;
    std::memcpy(&a, p, 4);
    std::memcpy(&b, p + n - 4, 4);
    w.lo = a;
    w.hi = b;
  } else if (n > 0) {
    w.lo = uint64_t{p[0]} | uint64_t{p[n / 2]} << 8 | uint64_t{p[n - 1]} << 16;
  }
  return w;
}

/// A hash of a text's words (one multiply: the product's high half mixes every bit of them).
/// `salt` is the text's length, with anything else that keeps texts apart (a table's group).
inline uint32_t words_hash(text_words w, uint64_t salt) noexcept {
  const uint64_t h = (w.lo ^ ((w.hi << 29) | (w.hi >> 35)) ^ salt) * 0x9E3779B97F4A7C15ull;
  return static_cast<uint32_t>(h >> 32);
}

}  // namespace quire::detail
