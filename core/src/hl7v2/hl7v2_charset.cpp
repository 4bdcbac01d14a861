// hl7v2_charset.cpp — MSH-18 character sets, decoded to UTF-8.

#include <algorithm>

#include "../common/alloc.h"
#include "hl7v2_internal.h"

namespace quire::hl7v2 {

namespace {

bool equals_ignoring_case(std::string_view a, std::string_view b) noexcept {
  return a.size() == b.size() && std::equal(a.begin(), a.end(), b.begin(), [](char x, char y) {
           auto lower = [](char c) { return c >= 'A' && c <= 'Z' ? static_cast<char>(c - 'A' + 'a') : c; };
           return lower(x) == lower(y);
         });
}

// Length of the valid UTF-8 sequence starting at s[i], or 0 when it is not one (overlong forms,
// surrogates and code points above U+10FFFF are invalid, as RFC 3629 says).
size_t utf8_sequence_length(std::string_view s, size_t i) noexcept {
  const auto b0 = static_cast<unsigned char>(s[i]);
  if (b0 < 0x80) return 1;
  size_t len;
  unsigned char lo = 0x80, hi = 0xBF;
  if (b0 >= 0xC2 && b0 <= 0xDF) {
    len = 2;
  } else if (b0 >= 0xE0 && b0 <= 0xEF) {
    len = 3;
    if (b0 == 0xE0) lo = 0xA0;
    if (b0 == 0xED) hi = 0x9F;
  } else if (b0 >= 0xF0 && b0 <= 0xF4) {
    len = 4;
    if (b0 == 0xF0) lo = 0x90;
    if (b0 == 0xF4) hi = 0x8F;
  } else {
    return 0;
  }
  if (s.size() - i < len) return 0;
  const auto b1 = static_cast<unsigned char>(s[i + 1]);
  if (b1 < lo || b1 > hi) return 0;
  for (size_t k = 2; k < len; ++k) {
    const auto b = static_cast<unsigned char>(s[i + k]);
    if (b < 0x80 || b > 0xBF) return 0;
  }
  return len;
}

}  // namespace

bool detail::is_valid_utf8(std::string_view text) noexcept {
  for (size_t i = 0; i < text.size();) {
    const size_t len = utf8_sequence_length(text, i);
    if (len == 0) return false;
    i += len;
  }
  return true;
}

charset charset_from_name(std::string_view name) noexcept {
  while (!name.empty() && name.front() == ' ') name.remove_prefix(1);
  while (!name.empty() && name.back() == ' ') name.remove_suffix(1);
  for (std::string_view latin1 :
       {"8859/1", "ISO-8859-1", "ISO8859-1", "ISO_8859-1", "ISO IR100", "ISO_IR 100", "LATIN1"})
    if (equals_ignoring_case(name, latin1)) return charset::ISO_8859_1;
  return charset::UTF8;
}

result<std::string> decode_text(std::string_view text, charset cs, bool strict) {
  std::string out;
  // A value can be as large as the message: its copy is OUT_OF_MEMORY when the heap cannot hold it.
  if (cs == charset::ISO_8859_1) {
    if (auto r = quire::detail::reserve_or_oom(out, text.size(), "a decoded value"); !r) return std::move(r).error();
    for (const char c : text) {
      const auto u = static_cast<unsigned char>(c);
      if (u < 0x80) {
        out.push_back(c);
      } else {
        out.push_back(static_cast<char>(0xC0 | (u >> 6)));
        out.push_back(static_cast<char>(0x80 | (u & 0x3F)));
      }
    }
    return out;
  }
  // Most text is ASCII or valid UTF-8: check first and copy once.
  size_t i = 0;
  while (i < text.size()) {
    const size_t len = utf8_sequence_length(text, i);
    if (len == 0) break;
    i += len;
  }
  if (i == text.size()) {
    // Exactly the size: a short value stays in the string's inline buffer, as std::string(text) would.
    if (auto r = quire::detail::reserve_or_oom(out, text.size(), "a decoded value"); !r) return std::move(r).error();
    out.assign(text);
    return out;
  }
  if (strict) return quire::error(error_code::INVALID_UTF8, "invalid UTF-8 byte in a value", i);
  if (auto r = quire::detail::reserve_or_oom(out, text.size() + 16, "a decoded value"); !r) return std::move(r).error();
  out.append(text.substr(0, i));
  while (i < text.size()) {
    const size_t len = utf8_sequence_length(text, i);
    if (len == 0) {
      out += "\xEF\xBF\xBD";  // U+FFFD for each byte that starts no valid sequence
      ++i;
    } else {
      out.append(text.substr(i, len));
      i += len;
    }
  }
  return out;
}

}  // namespace quire::hl7v2
