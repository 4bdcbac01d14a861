// The formats of FHIR R4's primitive types, hand-written from the regular expressions in the
// specification (profiles-types.json): std::regex is slow and recursion-hungry on long values, and
// these run on every primitive of every resource. Each check reads the value once, in place.
#include <charconv>
#include <cstdint>
#include <cstring>

#include "../common/calendar.h"
#include "fhir_internal.h"

namespace quire::fhir::detail {
namespace {

bool is_digit(char c) { return c >= '0' && c <= '9'; }
bool is_space(char c) { return c == ' ' || c == '\t' || c == '\r' || c == '\n' || c == '\f' || c == '\v'; }

// Whether some byte of the eight at p is below n (n <= 128), eight bytes at a time: strings and
// URIs are checked for control characters and spaces (all below 0x21), and nearly all have none.
inline bool word_has_below(const char *p, uint64_t n) noexcept {
  uint64_t w;
  std::memcpy(&w, p, 8);
  return ((w - 0x0101010101010101ull * n) & ~w & 0x8080808080808080ull) != 0;
}

// Whether `bad` is true of some byte of s, where it can be true only of bytes below n: bytes are
// tested one by one only in the words that have a byte below n.
template <class Bad>
bool any_below(std::string_view s, uint64_t n, Bad bad) noexcept {
  const char *p = s.data();
  size_t left = s.size();
  for (; left >= 8; p += 8, left -= 8) {
    if (!word_has_below(p, n)) continue;
    for (int k = 0; k < 8; ++k)
      if (bad(p[k])) return true;
  }
  for (; left > 0; ++p, --left)
    if (bad(*p)) return true;
  return false;
}

// Reads exactly n digits at s[i] into v.
bool digits(std::string_view s, size_t &i, size_t n, int &v) {
  if (i + n > s.size()) return false;
  v = 0;
  for (size_t k = 0; k < n; ++k) {
    if (!is_digit(s[i + k])) return false;
    v = v * 10 + (s[i + k] - '0');
  }
  i += n;
  return true;
}

// YYYY, YYYY-MM or YYYY-MM-DD; `parts` says how many were present.
const char *date_part(std::string_view s, size_t &i, int &parts) {
  int year, month, day;
  if (!digits(s, i, 4, year)) return "expected a four-digit year";
  if (year == 0) return "year 0000 is not allowed";
  parts = 1;
  if (i == s.size() || s[i] != '-') return nullptr;
  ++i;
  if (!digits(s, i, 2, month) || month < 1 || month > 12) return "expected a month 01-12";
  parts = 2;
  if (i == s.size() || s[i] != '-') return nullptr;
  ++i;
  if (!digits(s, i, 2, day) || day < 1 || day > quire::detail::days_in_month(year, month))
    return "expected a day that exists in that month";
  parts = 3;
  return nullptr;
}

// hh:mm:ss(.fraction)?
const char *time_part(std::string_view s, size_t &i) {
  int h, m, sec;
  if (!digits(s, i, 2, h) || h > 23) return "expected hours 00-23";
  if (i >= s.size() || s[i++] != ':') return "expected ':' after the hours";
  if (!digits(s, i, 2, m) || m > 59) return "expected minutes 00-59";
  if (i >= s.size() || s[i++] != ':') return "expected ':' and seconds after the minutes";
  if (!digits(s, i, 2, sec) || sec > 60) return "expected seconds 00-60";
  if (i < s.size() && s[i] == '.') {
    ++i;
    size_t start = i;
    while (i < s.size() && is_digit(s[i])) ++i;
    if (i == start) return "expected digits after the decimal point of the seconds";
  }
  return nullptr;
}

// Z or (+|-)hh:mm with hh:mm from 00:00 to 14:00.
const char *zone_part(std::string_view s, size_t &i) {
  if (i < s.size() && s[i] == 'Z') {
    ++i;
    return nullptr;
  }
  if (i >= s.size() || (s[i] != '+' && s[i] != '-')) return "a time needs a time zone (Z or +hh:mm)";
  ++i;
  int h, m;
  if (!digits(s, i, 2, h) || i >= s.size() || s[i++] != ':' || !digits(s, i, 2, m) || m > 59 || h > 14 ||
      (h == 14 && m != 0)) {
    return "expected a time zone offset from -14:00 to +14:00";
  }
  return nullptr;
}

const char *check_date(std::string_view s) {
  size_t i = 0;
  int parts = 0;
  if (auto why = date_part(s, i, parts)) return why;
  return i == s.size() ? nullptr : "unexpected characters after the date";
}

const char *check_date_time(std::string_view s, bool instant) {
  size_t i = 0;
  int parts = 0;
  if (auto why = date_part(s, i, parts)) return why;
  if (i == s.size()) return instant ? "an instant needs a full date, a time and a time zone" : nullptr;
  if (s[i] != 'T' || parts < 3) return "unexpected characters after the date";
  ++i;
  if (auto why = time_part(s, i)) return why;
  if (auto why = zone_part(s, i)) return why;
  return i == s.size() ? nullptr : "unexpected characters after the time zone";
}

// Which bytes are base64's alphabet (A-Z a-z 0-9 + /): 0 for those, 1 for every other byte.
struct base64_table {
  uint8_t other[256];
  constexpr base64_table() : other() {
    for (int c = 0; c < 256; ++c) {
      bool alphabet =
          (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '+' || c == '/';
      other[c] = alphabet ? 0 : 1;
    }
  }
};
constexpr base64_table BASE64;

// base64Binary: the alphabet, whitespace anywhere, at most two '=' at the end, a multiple of four
// characters. Payloads run to megabytes and their characters are random, which made the
// per-character branches mispredict (5.7 ns a byte natively): runs of 32 bytes that are all
// alphabet (all of a payload but its lines' ends and its tail) are counted with one table lookup a
// byte and no branch; any other run is read character by character.
const char *check_base64(std::string_view s) {
  size_t count = 0, padding = 0;
  const auto *p = reinterpret_cast<const unsigned char *>(s.data());
  const size_t n = s.size();
  size_t i = 0;
  while (i < n) {
    if (padding == 0 && n - i >= 32) {
      unsigned others = 0;
      for (size_t k = 0; k < 32; ++k) others |= BASE64.other[p[i + k]];
      if (others == 0) {
        i += 32;
        count += 32;
        continue;
      }
    }
    // The run (or the tail) character by character, to its end.
    const size_t end = padding == 0 && n - i >= 32 ? i + 32 : n;
    for (; i < end; ++i) {
      const char c = static_cast<char>(p[i]);
      if (is_space(c)) continue;
      if (c == '=') {
        ++padding;
      } else if (BASE64.other[p[i]]) {
        return "a character that is not base64";
      } else if (padding) {
        return "base64 data after '=' padding";
      }
      ++count;
    }
  }
  if (padding > 2) return "more than two '=' padding characters";
  if (count % 4 != 0) return "base64 data whose length is not a multiple of 4";
  return nullptr;
}

}  // namespace

bool is_valid_id(std::string_view s) noexcept {
  if (s.empty() || s.size() > 64) return false;
  for (char c : s) {
    if (!((c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || is_digit(c) || c == '-' || c == '.')) return false;
  }
  return true;
}

bool is_valid_uuid(std::string_view s) noexcept {
  constexpr std::string_view prefix = "urn:uuid:";
  if (s.size() != prefix.size() + 36 || s.substr(0, prefix.size()) != prefix) return false;
  const char *p = s.data() + prefix.size();
  // Eight bytes at a time, without a branch per character (a UUID's digits are random: a test of
  // digit against letter was mispredicted about every other byte; a table lookup per byte after
  // that was still 1% of a transaction Bundle's validation, whose references are urn:uuid). In a
  // word whose bytes are all below 0x80, x + (0x80 - k) sets a byte's top bit exactly when x >= k,
  // and no byte carries into the next; each byte must be a lowercase hex digit, or '-' where the
  // UUID has one (places 8, 13, 18, 23). Words at 0, 8, 16, 24 and 28 cover the 36 bytes.
  constexpr uint64_t ONES = 0x0101010101010101ull, HIGH = 0x8080808080808080ull;
  auto at = [p](size_t i) {
    uint64_t w;
    std::memcpy(&w, p + i, 8);
    return w;
  };
  auto ge = [](uint64_t w, unsigned k) { return (w + ONES * (0x80 - k)) & HIGH; };
  // The top bit of the bytes of an 8-byte pattern (the places of the dashes), in memory order.
  auto places = [](const char(&bytes)[9]) {
    uint64_t w;
    std::memcpy(&w, bytes, 8);
    return w & HIGH;
  };
  // The top bits of the word's bytes that do not fit (a byte of 0x80 or more sets its own).
  auto misfits = [&](uint64_t w, uint64_t dashes) {
    const uint64_t hex = (ge(w, '0') & ~ge(w, '9' + 1)) | (ge(w, 'a') & ~ge(w, 'f' + 1));
    const uint64_t t = w ^ (ONES * '-');
    const uint64_t dash = ~((t + ONES * 0x7F) | t) & HIGH;  // the bytes equal to '-'
    return (((hex & ~dashes) | (dash & dashes)) ^ HIGH) | (w & HIGH);
  };
  const uint64_t none = 0, second = places("\x80\0\0\0\0\x80\0\0"), third = places("\0\0\x80\0\0\0\0\x80");
  return (misfits(at(0), none) | misfits(at(8), second) | misfits(at(16), third) | misfits(at(24), none) |
          misfits(at(28), none)) == 0;
}

bool is_valid_oid(std::string_view s) noexcept {
  constexpr std::string_view prefix = "urn:oid:";
  if (s.substr(0, prefix.size()) != prefix) return false;
  s.remove_prefix(prefix.size());
  if (s.size() < 3 || s[0] < '0' || s[0] > '2') return false;
  size_t i = 1;
  int arcs = 0;
  while (i < s.size()) {
    if (s[i] != '.') return false;
    ++i;
    size_t start = i;
    while (i < s.size() && is_digit(s[i])) ++i;
    if (i == start || (s[start] == '0' && i - start > 1)) return false;
    ++arcs;
  }
  return arcs > 0;
}

const char *check_string_format(primitive p, std::string_view s) noexcept {
  switch (p) {
    case primitive::string:
    case primitive::markdown:
      // R4 2.24.0.1: strings SHALL NOT contain characters below U+0020 other than tab, CR and LF.
      if (any_below(s, 0x20,
                    [](char c) { return static_cast<unsigned char>(c) < 0x20 && c != '\t' && c != '\r' && c != '\n'; }))
        return "a control character (below U+0020, not tab, CR or LF)";
      return nullptr;
    case primitive::code: {
      if (is_space(s.front()) || is_space(s.back())) return "leading or trailing whitespace";
      // Whitespace is below 0x21, and nearly no code has any: the words without such a byte are
      // passed eight bytes at a time (a byte loop was a tenth of the string checks on a Bundle).
      if (!any_below(s, 0x21, [](char c) { return is_space(c); })) return nullptr;
      for (size_t i = 0; i < s.size(); ++i) {
        if (is_space(s[i]) && (s[i] != ' ' || (i + 1 < s.size() && is_space(s[i + 1]))))
          return "whitespace other than single spaces";
      }
      return nullptr;
    }
    case primitive::id: return is_valid_id(s) ? nullptr : "an id is 1 to 64 of A-Z a-z 0-9 - .";
    case primitive::uri:
    case primitive::url:
    case primitive::canonical:
      if (any_below(s, 0x21, [](char c) { return is_space(c); })) return "whitespace in a URI";
      return nullptr;
    case primitive::oid: return is_valid_oid(s) ? nullptr : "not an OID (urn:oid:1.2.3...)";
    case primitive::uuid:
      return is_valid_uuid(s) ? nullptr : "not a lowercase UUID (urn:uuid:xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx)";
    case primitive::date: return check_date(s);
    case primitive::dateTime: return check_date_time(s, false);
    case primitive::instant: return check_date_time(s, true);
    case primitive::time: {
      size_t i = 0;
      if (auto why = time_part(s, i)) return why;
      return i == s.size() ? nullptr : "unexpected characters after the time";
    }
    case primitive::base64Binary: return check_base64(s);
    case primitive::xhtml: {
      size_t i = 0;
      while (i < s.size() && is_space(s[i])) ++i;
      return s.substr(i, 4) == "<div" ? nullptr : "narrative XHTML must be a <div> element";
    }
    default: return nullptr;
  }
}

const char *check_number_format(primitive p, std::string_view text, bool is_integer) noexcept {
  if (p == primitive::decimal) return nullptr;  // JSON's number grammar is FHIR's decimal grammar
  if (!is_integer) return "an integer has no fraction or exponent";
  int64_t v = 0;
  auto [ptr, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
  if (ec != std::errc() || ptr != text.data() + text.size() || v < INT32_MIN || v > INT32_MAX) {
    return "outside the 32-bit range of integer";
  }
  if (p == primitive::positiveInt && v < 1) return "a positiveInt is at least 1";
  if (p == primitive::unsignedInt && v < 0) return "an unsignedInt is at least 0";
  return nullptr;
}

}  // namespace quire::fhir::detail
