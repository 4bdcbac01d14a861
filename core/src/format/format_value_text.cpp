// Values as text and back: dates, timestamps, doubles, decimals scaled to integers, how number text
// classifies for inference, and the comparison domain of each column type.
#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <cstdlib>

#include "../common/decimal_text.h"
#include "format_internal.h"

namespace quire::format::detail {

// --- dates, timestamps, numbers -------------------------------------------------------------------

namespace {

using quire::detail::civil_from_days;

bool digits(std::string_view s, size_t at, size_t count, unsigned &out) {
  if (at + count > s.size()) return false;
  unsigned v = 0;
  for (size_t i = at; i < at + count; ++i) {
    if (s[i] < '0' || s[i] > '9') return false;
    v = v * 10 + static_cast<unsigned>(s[i] - '0');
  }
  out = v;
  return true;
}

std::optional<int64_t> date_prefix(std::string_view s) {
  unsigned y, m, d;
  if (s.size() < 10 || !digits(s, 0, 4, y) || s[4] != '-' || !digits(s, 5, 2, m) || s[7] != '-' || !digits(s, 8, 2, d))
    return std::nullopt;
  if (m < 1 || m > 12 || d < 1) return std::nullopt;
  if (d > static_cast<unsigned>(quire::detail::days_in_month(y, static_cast<int>(m)))) return std::nullopt;
  return days_from_civil(y, m, d);
}

int64_t floor_div(int64_t a, int64_t b) { return a / b - ((a % b != 0) && ((a < 0) != (b < 0))); }

// printf's "%0*lld" without printf (dates and times print per value, millions of times a query):
// zero-padded to `width` characters, a minus sign counting towards the width.
void append_padded(std::string &out, int64_t v, int width) {
  char buf[24];
  char *p = buf + sizeof buf;
  uint64_t u = v < 0 ? 0 - static_cast<uint64_t>(v) : static_cast<uint64_t>(v);
  do {
    *--p = static_cast<char>('0' + u % 10);
    u /= 10;
  } while (u);
  const int sign = v < 0 ? 1 : 0;
  while (buf + sizeof buf - p + sign < width) *--p = '0';
  if (sign) *--p = '-';
  out.append(p, static_cast<size_t>(buf + sizeof buf - p));
}

}  // namespace

std::optional<int64_t> parse_date(std::string_view s) noexcept {
  if (s.size() != 10) return std::nullopt;
  return date_prefix(s);
}

std::optional<int64_t> parse_timestamp(std::string_view s, bool allow_date) noexcept {
  auto day = date_prefix(s);
  if (!day) return std::nullopt;
  if (s.size() == 10) {
    if (!allow_date) return std::nullopt;
    return *day * 86400000000LL;
  }
  unsigned hh, mm, ss;
  if (s.size() < 20 || s[10] != 'T' || !digits(s, 11, 2, hh) || s[13] != ':' || !digits(s, 14, 2, mm) || s[16] != ':' ||
      !digits(s, 17, 2, ss) || hh > 23 || mm > 59 || ss > 59) {
    return std::nullopt;
  }
  size_t i = 19;
  int64_t micros = 0;
  if (s[i] == '.') {
    size_t start = ++i;
    while (i < s.size() && s[i] >= '0' && s[i] <= '9') ++i;
    size_t n = i - start;
    if (n < 1 || n > 6) return std::nullopt;
    unsigned frac = 0;
    digits(s, start, n, frac);
    micros = frac;
    for (size_t k = n; k < 6; ++k) micros *= 10;
  }
  int64_t offset_seconds = 0;
  if (i < s.size() && s[i] == 'Z' && i + 1 == s.size()) {
    // UTC
  } else if (i + 6 == s.size() && (s[i] == '+' || s[i] == '-') && s[i + 3] == ':') {
    unsigned oh, om;
    if (!digits(s, i + 1, 2, oh) || !digits(s, i + 4, 2, om) || oh > 23 || om > 59) return std::nullopt;
    offset_seconds = (s[i] == '+' ? 1 : -1) * static_cast<int64_t>(oh * 3600 + om * 60);
  } else {
    return std::nullopt;
  }
  int64_t seconds = *day * 86400 + hh * 3600 + mm * 60 + ss - offset_seconds;
  return seconds * 1000000 + micros;
}

void append_date(std::string &out, int64_t days) {
  int64_t y;
  unsigned m, d;
  civil_from_days(days, y, m, d);
  append_padded(out, y, 4);
  out.push_back('-');
  append_padded(out, m, 2);
  out.push_back('-');
  append_padded(out, d, 2);
}

void append_timestamp(std::string &out, int64_t micros) {
  int64_t seconds = floor_div(micros, 1000000);
  int64_t frac = micros - seconds * 1000000;
  int64_t days = floor_div(seconds, 86400);
  int64_t rest = seconds - days * 86400;
  append_date(out, days);
  out.push_back('T');
  append_padded(out, rest / 3600, 2);
  out.push_back(':');
  append_padded(out, (rest / 60) % 60, 2);
  out.push_back(':');
  append_padded(out, rest % 60, 2);
  if (frac) {
    out.push_back('.');
    if (frac % 1000 == 0) append_padded(out, frac / 1000, 3);
    else append_padded(out, frac, 6);
  }
  out.push_back('Z');
}

namespace {

// The powers of ten a double holds exactly (5^22 < 2^53; 10^23 is not exact).
constexpr double EXACT_POWERS_OF_TEN[] = {1e0,  1e1,  1e2,  1e3,  1e4,  1e5,  1e6,  1e7,  1e8,  1e9,  1e10, 1e11,
                                          1e12, 1e13, 1e14, 1e15, 1e16, 1e17, 1e18, 1e19, 1e20, 1e21, 1e22};

// The usual decimal text of a column (an optional sign, digits, at most one point, no exponent)
// whose digits make an integer m of at most 2^53 with at most 22 of them after the point: m and
// 10^f are then exact doubles, and one IEEE division rounds m / 10^f correctly, to the double
// strtod's correct rounding reads (Clinger's fast path). Anything else: nullopt, for strtod. In
// wasm, musl's strtod computes in software 128-bit long double (fmodl, __multf3): most of the
// time of writing and summing a decimal column there, before this path.
std::optional<double> exact_decimal(std::string_view s) noexcept {
  size_t i = 0;
  bool negative = false;
  if (i < s.size() && (s[i] == '-' || s[i] == '+')) negative = s[i++] == '-';
  uint64_t m = 0;
  int significant = 0, after_point = 0;
  bool point = false, digit = false;
  for (; i < s.size(); ++i) {
    const char c = s[i];
    if (c == '.' && !point) {
      point = true;
      continue;
    }
    if (c < '0' || c > '9') return std::nullopt;
    digit = true;
    if (point) ++after_point;
    if (m == 0 && c == '0') continue;             // a leading zero
    if (++significant > 19) return std::nullopt;  // 19 digits still fit uint64_t
    m = m * 10 + static_cast<uint64_t>(c - '0');
  }
  if (!digit || m > (uint64_t{1} << 53) || after_point >= static_cast<int>(std::size(EXACT_POWERS_OF_TEN))) {
    return std::nullopt;
  }
  const double v = static_cast<double>(m) / EXACT_POWERS_OF_TEN[after_point];
  return negative ? -v : v;
}

}  // namespace

double parse_double(std::string_view s) noexcept {
  if (auto v = exact_decimal(s)) return *v;
  char buf[128];
  if (s.size() < sizeof buf) {
    std::memcpy(buf, s.data(), s.size());
    buf[s.size()] = 0;
    return std::strtod(buf, nullptr);
  }
  std::string copy(s);
  return std::strtod(copy.c_str(), nullptr);
}

namespace {

constexpr double TWO_53 = 9007199254740992.0;

// The fewest places k with v == m / 10^k for an integer m (|m| < 2^53), or -1. Division of two
// exactly represented integers is correctly rounded, so m / 10^k == v means the decimal m·10^-k
// reads back as v: storing m and k loses nothing, on every target.
int decimal_places(double v, int64_t &m) {
  if (!std::isfinite(v) || (v == 0 && std::signbit(v))) return -1;
  for (unsigned k = 0; k <= MAX_DECIMAL_PLACES; ++k) {
    const double scaled = std::nearbyint(v * POWERS_OF_TEN[k]);
    if (!(std::fabs(scaled) < TWO_53)) return -1;
    if (scaled / POWERS_OF_TEN[k] == v) {
      m = static_cast<int64_t>(scaled);
      return static_cast<int>(k);
    }
  }
  return -1;
}

}  // namespace

bool scale_decimals(std::span<const double> values, unsigned &places, std::vector<int64_t> &scaled) {
  places = 0;
  int64_t m = 0;
  for (double v : values) {
    const int k = decimal_places(v, m);
    if (k < 0) return false;
    places = std::max(places, static_cast<unsigned>(k));
  }
  scaled.clear();
  scaled.reserve(values.size());
  for (double v : values) {
    const double s = std::nearbyint(v * POWERS_OF_TEN[places]);
    if (!(std::fabs(s) < TWO_53)) return false;
    scaled.push_back(static_cast<int64_t>(s));
  }
  return true;
}

std::optional<int64_t> scale_decimal_text(std::string_view t, unsigned &places) {
  quire::detail::decimal_text parts;
  if (!quire::detail::split_decimal_text(t, quire::detail::DECIMAL_NO_LEADING_ZERO, parts)) return std::nullopt;
  const size_t int_digits = parts.integer.size(), frac_digits = parts.fraction.size();
  if (places == UINT32_MAX) places = static_cast<unsigned>(frac_digits);
  if (frac_digits != places || int_digits + frac_digits > MAX_SCALED_DIGITS) return std::nullopt;
  int64_t m = 0;
  for (char c : parts.integer) m = m * 10 + (c - '0');
  for (char c : parts.fraction) m = m * 10 + (c - '0');
  if (parts.negative && m == 0) return std::nullopt;  // "-0.00" would print back as "0.00"
  return parts.negative ? -m : m;
}

void append_scaled_decimal(std::string &out, int64_t m, unsigned places) {
  char buf[48];
  char *p = buf + sizeof buf;
  uint64_t u = m < 0 ? 0 - static_cast<uint64_t>(m) : static_cast<uint64_t>(m);
  for (unsigned k = 0; k < places; ++k) {
    *--p = static_cast<char>('0' + u % 10);
    u /= 10;
  }
  if (places) *--p = '.';
  do {
    *--p = static_cast<char>('0' + u % 10);
    u /= 10;
  } while (u);
  if (m < 0) *--p = '-';
  out.append(p, static_cast<size_t>(buf + sizeof buf - p));
}

number_class classify_number(std::string_view s) noexcept {
  quire::detail::decimal_text parts;
  if (!quire::detail::split_decimal_text(s, quire::detail::DECIMAL_EXPONENT | quire::detail::DECIMAL_NO_LEADING_ZERO,
                                         parts))
    return number_class::not_a_number;
  if (!parts.has_point && !parts.has_exponent) {
    int64_t v;
    auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
    return ec == std::errc() && p == s.data() + s.size() ? number_class::integer : number_class::decimal;
  }
  // Significant digits: the integer and fraction digits without leading zeros.
  size_t significant = 0;
  bool leading = true;
  for (std::string_view part : {parts.integer, parts.fraction}) {
    for (char c : part) {
      if (leading && c == '0') continue;
      leading = false;
      ++significant;
    }
  }
  // `12.50`, `0.700`: a fixed number of places that a double would lose.
  if (parts.fraction.size() >= 2 && parts.fraction.back() == '0') return number_class::decimal;
  if (significant > 15) return number_class::decimal;
  if (!std::isfinite(parse_double(s))) return number_class::decimal;
  return number_class::real;
}

domain domain_of(column_type t) noexcept {
  switch (t) {
    case column_type::float64:
    case column_type::decimal: return domain::reals;
    case column_type::string:
    case column_type::json: return domain::text;
    default: return domain::ints;
  }
}

}  // namespace quire::format::detail
