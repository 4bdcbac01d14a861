// Values: exact decimals, partial dates and times, quantities and their units, UTF-8 helpers,
// and the JSON form of a collection (FHIR types are fhirpath_types.cpp's).
//
// Decimals are a 64-bit digit string with a scale, never a double: `0.700` keeps its precision,
// `0.1 + 0.2 = 0.3` holds, and both targets compute the same digits. Products and quotients go
// through 128-bit integers and are rounded back (half away from zero).
#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <cstring>

#include "../common/calendar.h"
#include "../common/decimal_text.h"
#include "fhirpath_internal.h"

namespace quire::fhirpath {

namespace {
constexpr int32_t MAX_SCALE = 18;
__extension__ typedef __int128 i128;

bool fits(i128 v) { return v >= INT64_MIN && v <= INT64_MAX; }

// Callers keep n <= 38 (10^38 is the largest power of ten in 128 bits).
i128 pow10_128(int n) {
  i128 r = 1;
  for (int i = 0; i < n; ++i) r *= 10;
  return r;
}

// Rounds v (at scale `from`) to scale `to` < from, half away from zero.
i128 round_down_scale(i128 v, int from, int to) {
  if (from - to > 37) return 0;  // every value held is below half a unit at that scale
  i128 p = pow10_128(from - to);
  i128 q = v / p, r = v % p;
  if (r < 0) r = -r;
  if (r * 2 >= p) q += v < 0 ? -1 : 1;
  return q;
}

constexpr int32_t MIN_SCALE = -400;  // 10^400: beyond, a value is out of range

// Brings a 128-bit value at `scale` back to 64 bits, dropping its least significant digits if
// needed (the scale may go negative: 18 significant digits of a huge value are kept).
bool narrow(i128 v, int32_t scale, decimal &out) {
  while (scale > MAX_SCALE || !fits(v)) {
    if (scale <= MIN_SCALE) return false;
    v = round_down_scale(v, scale, scale - 1);
    --scale;
  }
  out.digits = static_cast<int64_t>(v);
  out.scale = scale;
  return true;
}
}  // namespace

bool parse_decimal(std::string_view text, decimal &out) noexcept {
  quire::detail::decimal_text parts;
  if (!quire::detail::split_decimal_text(text, quire::detail::DECIMAL_PLUS | quire::detail::DECIMAL_EXPONENT, parts))
    return false;
  i128 v = 0;
  int64_t scale = 0;
  int64_t exp = parts.exponent;
  // More digits than we can hold: the least significant are dropped (an integer digit dropped
  // moves the point).
  for (char c : parts.integer) {
    if (v > (i128(1) << 120) / 10) ++exp;
    else v = v * 10 + (c - '0');
  }
  for (char c : parts.fraction) {
    if (v > (i128(1) << 120) / 10) continue;
    v = v * 10 + (c - '0');
    ++scale;
  }
  scale -= exp;
  if (scale > 400 || scale < MIN_SCALE) return false;
  // Integers up to 18 digits keep scale 0 (`1e2` is 100, not 1 × 10^2).
  while (scale < 0 && v < INT64_MAX / 10 && v > INT64_MIN / 10) {
    v *= 10;
    ++scale;
  }
  if (parts.negative) v = -v;
  return narrow(v, static_cast<int32_t>(scale), out);
}

std::string decimal_text(decimal d) {
  bool neg = d.digits < 0;
  uint64_t mag = neg ? uint64_t(0) - static_cast<uint64_t>(d.digits) : static_cast<uint64_t>(d.digits);
  char digits[24];
  int n = std::snprintf(digits, sizeof digits, "%llu", static_cast<unsigned long long>(mag));
  int scale = d.scale > 0 ? d.scale : 0;
  std::string s;
  if (d.scale < 0 && mag != 0) {
    if (neg) s += '-';
    s.append(digits, static_cast<size_t>(n));
    s.append(static_cast<size_t>(-d.scale), '0');
    return s;
  }
  s.reserve(static_cast<size_t>(n + scale + 3));
  if (neg) s += '-';
  if (n <= scale) {
    s += "0.";
    for (int i = n; i < scale; ++i) s += '0';
    s.append(digits, static_cast<size_t>(n));
  } else {
    s.append(digits, static_cast<size_t>(n - scale));
    if (scale) {
      s += '.';
      s.append(digits + (n - scale), static_cast<size_t>(scale));
    }
  }
  return s;
}

decimal to_decimal(int64_t i) noexcept { return {i, 0}; }

namespace {
int digit_count(int64_t v) {
  uint64_t m = v < 0 ? uint64_t(0) - static_cast<uint64_t>(v) : static_cast<uint64_t>(v);
  int n = 0;
  while (m) {
    m /= 10;
    ++n;
  }
  return n;
}
}  // namespace

int compare_decimal(decimal a, decimal b) noexcept {
  int sa = a.digits < 0 ? -1 : a.digits > 0, sb = b.digits < 0 ? -1 : b.digits > 0;
  if (sa != sb || sa == 0) return sa < sb ? -1 : sa > sb ? 1 : 0;
  // Same sign: order of magnitude first, so that aligning the scales cannot overflow.
  int ea = digit_count(a.digits) - a.scale, eb = digit_count(b.digits) - b.scale;
  if (ea != eb) return (ea < eb ? -1 : 1) * sa;
  int s = std::max(a.scale, b.scale);
  i128 x = i128(a.digits) * pow10_128(s - a.scale), y = i128(b.digits) * pow10_128(s - b.scale);
  return x < y ? -1 : x > y ? 1 : 0;
}

bool rescale(decimal &d, int32_t scale) noexcept {
  if (scale < 0) return false;
  if (scale == d.scale) return true;
  if (scale < d.scale) {
    d.digits = static_cast<int64_t>(round_down_scale(d.digits, d.scale, scale));
    d.scale = scale;
    return true;
  }
  if (scale - d.scale > 19 || scale > MAX_SCALE) return false;
  i128 v = i128(d.digits) * pow10_128(scale - d.scale);
  if (!fits(v)) return false;
  d.digits = static_cast<int64_t>(v);
  d.scale = scale;
  return true;
}

bool add_decimal(decimal a, decimal b, decimal &out, bool subtract) noexcept {
  // Operands more than 19 digits apart: the finer one is rounded first (aligning must fit 128 bits).
  if (a.scale - b.scale > 19)
    a = decimal{static_cast<int64_t>(round_down_scale(a.digits, a.scale, b.scale + 19)), b.scale + 19};
  if (b.scale - a.scale > 19)
    b = decimal{static_cast<int64_t>(round_down_scale(b.digits, b.scale, a.scale + 19)), a.scale + 19};
  int s = std::max(a.scale, b.scale);
  i128 x = i128(a.digits) * pow10_128(s - a.scale), y = i128(b.digits) * pow10_128(s - b.scale);
  return narrow(subtract ? x - y : x + y, s, out);
}

bool mul_decimal(decimal a, decimal b, decimal &out) noexcept {
  return narrow(i128(a.digits) * i128(b.digits), a.scale + b.scale, out);
}

bool div_decimal(decimal a, decimal b, decimal &out) noexcept {
  if (b.digits == 0) return false;
  // Eight digits beyond the operands' precision, then trailing zeros dropped to that precision.
  int32_t want = std::min<int32_t>(std::max(a.scale, b.scale) + 8, MAX_SCALE);
  // a/b at scale `want`: (a.digits * 10^(want - a.scale + b.scale)) / b.digits, with one guard digit.
  int shift = want - a.scale + b.scale + 1;
  i128 num = a.digits;
  if (shift >= 0) {
    for (int i = 0; i < shift; ++i) {
      if (num > (i128(1) << 120) / 10 || num < -((i128(1) << 120) / 10)) return false;
      num *= 10;
    }
  }
  // A divisor more than 37 orders of magnitude above the dividend: the quotient rounds to zero.
  i128 q = shift >= 0 ? num / b.digits : -shift > 37 ? 0 : (num / pow10_128(-shift)) / b.digits;
  i128 r = q % 10;
  q /= 10;
  if (r >= 5) ++q;
  if (r <= -5) --q;
  if (!narrow(q, want, out)) return false;
  trim_decimal(out, std::max(a.scale, b.scale));
  return true;
}

void trim_decimal(decimal &d, int32_t min_scale) noexcept {
  while (d.scale > min_scale && d.digits % 10 == 0) {
    d.digits /= 10;
    --d.scale;
  }
}

double decimal_to_double(decimal d) noexcept {
  // Through the text: strtod is correctly rounded on both targets.
  std::string s = decimal_text(d);
  return std::strtod(s.c_str(), nullptr);
}

bool double_to_decimal(double v, decimal &out) noexcept {
  if (!std::isfinite(v)) return false;
  // 15 significant digits: what a double holds exactly, and what hides the last-bit differences
  // between the targets' math libraries.
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.14e", v);
  if (!parse_decimal(buf, out)) return false;
  trim_decimal(out, 0);
  return true;
}

// --- dates and times ---

namespace {
bool two(std::string_view s, size_t p, int &out) {
  if (p + 2 > s.size() || s[p] < '0' || s[p] > '9' || s[p + 1] < '0' || s[p + 1] > '9') return false;
  out = (s[p] - '0') * 10 + (s[p + 1] - '0');
  return true;
}
using quire::detail::days_from_civil;
using quire::detail::days_in_month;
void civil_from_days(int64_t z, int &y, int &m, int &d) {
  int64_t year;
  unsigned month, day;
  quire::detail::civil_from_days(z, year, month, day);
  y = static_cast<int>(year);
  m = static_cast<int>(month);
  d = static_cast<int>(day);
}
bool parse_time_fields(std::string_view s, size_t &p, moment &m, uint8_t base) {
  if (!two(s, p, m.hour) || m.hour > 23) return false;
  p += 2;
  m.precision = base;
  if (p < s.size() && s[p] == ':') {
    if (!two(s, p + 1, m.minute) || m.minute > 59) return false;
    p += 3;
    m.precision = base + 1;
    if (p < s.size() && s[p] == ':') {
      if (!two(s, p + 1, m.second) || m.second > 59) return false;
      p += 3;
      m.precision = base + 2;
      if (p < s.size() && s[p] == '.') {
        ++p;
        int digits = 0, ms = 0;
        while (p < s.size() && s[p] >= '0' && s[p] <= '9') {
          if (digits < 3) ms = ms * 10 + (s[p] - '0');
          ++digits;
          ++p;
        }
        if (digits == 0) return false;
        for (int k = digits; k < 3; ++k) ms *= 10;
        m.millis = ms;
        m.precision = base + 3;
      }
    }
  }
  return true;
}
}  // namespace

bool parse_date_time(std::string_view s, value_kind kind, moment &m) noexcept {
  m = moment{};
  size_t p = 0;
  if (kind == value_kind::time) {
    m.is_time = true;
    if (!parse_time_fields(s, p, m, 4)) return false;
    return p == s.size();
  }
  if (s.size() < 4) return false;
  for (int k = 0; k < 4; ++k)
    if (s[k] < '0' || s[k] > '9') return false;
  m.year = (s[0] - '0') * 1000 + (s[1] - '0') * 100 + (s[2] - '0') * 10 + (s[3] - '0');
  m.precision = 1;
  p = 4;
  if (p < s.size() && s[p] == '-') {
    if (!two(s, p + 1, m.month) || m.month < 1 || m.month > 12) return false;
    p += 3;
    m.precision = 2;
    if (p < s.size() && s[p] == '-') {
      if (!two(s, p + 1, m.day) || m.day < 1 || m.day > days_in_month(m.year, m.month)) return false;
      p += 3;
      m.precision = 3;
    }
  }
  if (p < s.size() && s[p] == 'T') {
    if (kind == value_kind::date) return false;
    ++p;
    if (p == s.size()) return true;
    if (m.precision != 3) return false;
    if (!parse_time_fields(s, p, m, 4)) return false;
    if (p < s.size() && s[p] == 'Z') {
      m.has_tz = true;
      ++p;
    } else if (p < s.size() && (s[p] == '+' || s[p] == '-')) {
      int h, mi;
      if (!two(s, p + 1, h) || p + 3 >= s.size() || s[p + 3] != ':' || !two(s, p + 4, mi) || h > 14 || mi > 59)
        return false;
      m.has_tz = true;
      m.tz_minutes = (h * 60 + mi) * (s[p] == '-' ? -1 : 1);
      p += 6;
    }
  }
  return p == s.size();
}

std::string moment_text(const moment &m) {
  char buf[64];
  std::string out;
  // A part is written from the precision that holds it on.
  auto part = [&](int from, const char *format, int value) {
    if (m.precision < from) return;
    std::snprintf(buf, sizeof buf, format, value);
    out += buf;
  };
  if (!m.is_time) {
    part(0, "%04d", m.year);
    part(2, "-%02d", m.month);
    part(3, "-%02d", m.day);
    if (m.precision >= 4) out += 'T';
  }
  part(4, "%02d", m.hour);
  part(5, ":%02d", m.minute);
  part(6, ":%02d", m.second);
  part(7, ".%03d", m.millis);
  if (!m.is_time && m.precision >= 4 && m.has_tz) {
    if (m.tz_minutes == 0) {
      out += 'Z';
    } else {
      int t = m.tz_minutes < 0 ? -m.tz_minutes : m.tz_minutes;
      std::snprintf(buf, sizeof buf, "%c%02d:%02d", m.tz_minutes < 0 ? '-' : '+', t / 60, t % 60);
      out += buf;
    }
  }
  return out;
}

namespace {
// The fields of a moment as numbers to compare, after moving a dateTime with a time and a
// timezone to UTC.
void fields(const moment &in, int64_t f[7]) {
  moment m = in;
  if (!m.is_time && m.precision >= 4 && m.has_tz && m.tz_minutes != 0) {
    int64_t minutes = days_from_civil(m.year, m.month, m.day) * 1440 + m.hour * 60 + m.minute - m.tz_minutes;
    int64_t days = minutes >= 0 ? minutes / 1440 : -((-minutes + 1439) / 1440);
    int64_t rest = minutes - days * 1440;
    civil_from_days(days, m.year, m.month, m.day);
    m.hour = static_cast<int>(rest / 60);
    m.minute = static_cast<int>(rest % 60);
  }
  f[0] = m.year;
  f[1] = m.month;
  f[2] = m.day;
  f[3] = m.hour;
  f[4] = m.minute;
  f[5] = m.second;
  f[6] = m.millis;
}
}  // namespace

int compare_moment(const moment &a, const moment &b) noexcept {
  if (a.is_time != b.is_time) return 3;
  // A time of day with a timezone against one without: the order depends on the unknown zone.
  if (!a.is_time && a.precision >= 4 && b.precision >= 4 && a.has_tz != b.has_tz) return 2;
  int64_t x[7], y[7];
  fields(a, x);
  fields(b, y);
  // Seconds and milliseconds are one precision (N1: "seconds ... with fractional seconds").
  int pa = a.precision >= 7 ? 6 : a.precision, pb = b.precision >= 7 ? 6 : b.precision;
  int first = a.is_time ? 3 : 0;
  int common = std::min(pa, pb);
  for (int i = first; i < common; ++i) {
    if (x[i] != y[i]) return x[i] < y[i] ? -1 : 1;
  }
  if (pa != pb) return 2;
  if (common == 6 && x[6] != y[6]) return x[6] < y[6] ? -1 : 1;
  return 0;
}

bool add_to_moment(moment &m, int64_t amount, std::string_view unit) noexcept {
  if (amount > 1000000000 || amount < -1000000000) return false;
  if (unit == "year") {
    m.year += static_cast<int>(amount);
    if (m.year < 1 || m.year > 9999) return false;
    if (m.precision >= 3) m.day = std::min(m.day, days_in_month(m.year, m.month));
    return true;
  }
  if (unit == "month") {
    if (m.is_time) return false;
    int64_t total = static_cast<int64_t>(m.year) * 12 + (m.month - 1) + amount;
    m.year = static_cast<int>(total / 12);
    m.month = static_cast<int>(total % 12) + 1;
    if (m.year < 1 || m.year > 9999) return false;
    if (m.precision >= 3) m.day = std::min(m.day, days_in_month(m.year, m.month));
    return true;
  }
  int64_t ms;
  if (unit == "week") ms = amount * 7 * 86400000LL;
  else if (unit == "day") ms = amount * 86400000LL;
  else if (unit == "hour") ms = amount * 3600000LL;
  else if (unit == "minute") ms = amount * 60000LL;
  else if (unit == "second") ms = amount * 1000LL;
  else if (unit == "millisecond") ms = amount;
  else return false;
  if (m.is_time) {
    int64_t t = ((m.hour * 60LL + m.minute) * 60 + m.second) * 1000 + m.millis + ms;
    t %= 86400000LL;
    if (t < 0) t += 86400000LL;
    m.millis = static_cast<int>(t % 1000);
    m.second = static_cast<int>(t / 1000 % 60);
    m.minute = static_cast<int>(t / 60000 % 60);
    m.hour = static_cast<int>(t / 3600000);
    return true;
  }
  // A date with less precision than the unit: the unit is applied in whole days (or not at all).
  if (m.precision < 3) {
    if (ms % 86400000LL != 0) return true;
    return true;
  }
  if (m.precision == 3) ms -= ms % 86400000LL;
  int64_t t = days_from_civil(m.year, m.month, m.day) * 86400000LL +
              ((m.hour * 60LL + m.minute) * 60 + m.second) * 1000 + m.millis + ms;
  int64_t days = t >= 0 ? t / 86400000LL : -((-t + 86399999LL) / 86400000LL);
  int64_t rest = t - days * 86400000LL;
  civil_from_days(days, m.year, m.month, m.day);
  if (m.year < 1 || m.year > 9999) return false;
  m.millis = static_cast<int>(rest % 1000);
  m.second = static_cast<int>(rest / 1000 % 60);
  m.minute = static_cast<int>(rest / 60000 % 60);
  m.hour = static_cast<int>(rest / 3600000);
  return true;
}

// --- quantities ---

std::string_view calendar_unit(std::string_view u) noexcept {
  static const std::string_view WORDS[] = {"year", "month", "week", "day", "hour", "minute", "second", "millisecond"};
  for (std::string_view w : WORDS) {
    if (u == w) return w;
    if (u.size() == w.size() + 1 && u.substr(0, w.size()) == w && u.back() == 's') return w;
  }
  return {};
}

std::string_view ucum_for_calendar(std::string_view u) noexcept {
  std::string_view w = calendar_unit(u);
  if (w == "week") return "wk";
  if (w == "day") return "d";
  if (w == "hour") return "h";
  if (w == "minute") return "min";
  if (w == "second") return "s";
  if (w == "millisecond") return "ms";
  return {};
}

namespace {
struct unit_def {
  std::string_view code;
  int dimension;       // 1 length, 2 mass, 3 time, 4 volume, 5 dimensionless
  const char *factor;  // to the base unit (m, g, s, L)
};
const unit_def UNITS[] = {
    {"m", 1, "1"},
    {"cm", 1, "0.01"},
    {"mm", 1, "0.001"},
    {"km", 1, "1000"},
    {"um", 1, "0.000001"},
    {"[in_i]", 1, "0.0254"},
    {"[ft_i]", 1, "0.3048"},
    {"[yd_i]", 1, "0.9144"},
    {"[mi_i]", 1, "1609.344"},
    {"g", 2, "1"},
    {"mg", 2, "0.001"},
    {"kg", 2, "1000"},
    {"ug", 2, "0.000001"},
    {"[lb_av]", 2, "453.59237"},
    {"[oz_av]", 2, "28.349523125"},
    {"s", 3, "1"},
    {"ms", 3, "0.001"},
    {"min", 3, "60"},
    {"h", 3, "3600"},
    {"d", 3, "86400"},
    {"wk", 3, "604800"},
    {"L", 4, "1"},
    {"l", 4, "1"},
    {"mL", 4, "0.001"},
    {"ml", 4, "0.001"},
    {"dL", 4, "0.1"},
    {"cL", 4, "0.01"},
    {"1", 5, "1"},
    {"%", 5, "0.01"},
};
const unit_def *find_unit(std::string_view code) {
  for (const unit_def &u : UNITS)
    if (u.code == code) return &u;
  return nullptr;
}
}  // namespace

bool convert_units(decimal value, std::string_view from, std::string_view to, decimal &out) noexcept {
  if (from == to) {
    out = value;
    return true;
  }
  const unit_def *a = find_unit(from), *b = find_unit(to);
  if (!a || !b || a->dimension != b->dimension) return false;
  decimal fa, fb, base;
  if (!parse_decimal(a->factor, fa) || !parse_decimal(b->factor, fb)) return false;
  if (!mul_decimal(value, fa, base) || !div_decimal(base, fb, out)) return false;
  trim_decimal(out, value.scale);
  return true;
}

std::string_view base_unit(std::string_view code) noexcept {
  const unit_def *u = find_unit(code);
  if (!u) return {};
  static const std::string_view BASES[] = {"", "m", "g", "s", "L", "1"};
  return BASES[u->dimension];
}

bool units_comparable(std::string_view a, std::string_view b) noexcept {
  if (a == b) return true;
  const unit_def *x = find_unit(a), *y = find_unit(b);
  return x && y && x->dimension == y->dimension;
}

// --- strings ---

size_t utf8_length(std::string_view s) noexcept {
  size_t n = 0;
  for (char c : s)
    if ((static_cast<unsigned char>(c) & 0xC0) != 0x80) ++n;
  return n;
}

size_t utf8_offset(std::string_view s, size_t index) noexcept {
  size_t n = 0;
  for (size_t i = 0; i < s.size(); ++i) {
    if ((static_cast<unsigned char>(s[i]) & 0xC0) != 0x80) {
      if (n == index) return i;
      ++n;
    }
  }
  return s.size();
}

// --- output ---

std::string quantity_text(decimal value, std::string_view unit) {
  std::string s = decimal_text(value);
  s += ' ';
  bool quote = calendar_unit(unit).empty();
  if (quote) s += '\'';
  s.append(unit.data(), unit.size());
  if (quote) s += '\'';
  return s;
}

json_form append_text(std::string &out, const item &v) {
  switch (v.kind) {
    case value_kind::boolean: out += v.boolean ? "true" : "false"; return json_form::boolean;
    case value_kind::integer:
      if (v.in_tape) {
        out += json::to_json(v.node);
      } else {
        char digits[24];
        auto end = std::to_chars(digits, digits + sizeof digits, v.integer).ptr;
        out.append(digits, end);
      }
      return json_form::number;
    case value_kind::decimal:
      if (v.in_tape && v.node.type() == json::kind::number) {
        out += v.node.get_number_text().value();
      } else {
        out += decimal_text(v.dec);
      }
      return json_form::number;
    case value_kind::string:
    case value_kind::date:
    case value_kind::date_time:
    case value_kind::time: out += v.text; return json_form::string;
    case value_kind::quantity: out += quantity_text(v.dec, v.text); return json_form::string;
    case value_kind::type_info:
      out += "{\"namespace\":";
      json::append_quoted(out, v.text2);
      out += ",\"name\":";
      json::append_quoted(out, v.text);
      out += "}";
      return json_form::json;
    case value_kind::element:
      if (v.in_tape && !v.node.is_null()) {
        switch (v.node.type()) {
          case json::kind::string: out += v.node.get_string().value(); return json_form::string;
          case json::kind::number: out += v.node.get_number_text().value(); return json_form::number;
          case json::kind::boolean: out += v.node.get_bool().value() ? "true" : "false"; return json_form::boolean;
          default: out += json::to_json(v.node); return json_form::json;
        }
      }
      if (v.has_companion) {
        out += json::to_json(v.companion);
        return json_form::json;
      }
      return json_form::null_value;
  }
  return json_form::null_value;
}

namespace {
void append_item(std::string &out, const item &v) {
  // A string's text quoted straight from the item; every other form written in place by
  // append_text, a quantity's or element's string quoted from a copy.
  switch (v.kind) {
    case value_kind::string:
    case value_kind::date:
    case value_kind::date_time:
    case value_kind::time: json::append_quoted(out, v.text); return;
    default: break;
  }
  const size_t at = out.size();
  switch (append_text(out, v)) {
    case json_form::null_value: out += "null"; return;
    case json_form::string: {
      std::string text(out, at);
      out.resize(at);
      json::append_quoted(out, text);
      return;
    }
    default: return;
  }
}
}  // namespace

void append_json(std::string &out, const item &v) { append_item(out, v); }

void append_json(std::string &out, const collection &c) {
  out += '[';
  for (size_t i = 0; i < c.size(); ++i) {
    if (i) out += ',';
    append_item(out, c[i]);
  }
  out += ']';
}

std::string to_json(const item &v) {
  std::string out;
  append_item(out, v);
  return out;
}

std::string to_json(const collection &c) {
  std::string out;
  append_json(out, c);
  return out;
}

}  // namespace quire::fhirpath
