#include "quire/number_text.h"

#include <cfloat>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>

namespace quire {
namespace {

// A value that is an integer of at most 15 digits divided by 10^k (k <= 6) — prices,
// measurements, every double that came from short decimal text. That decimal reads back as `v`
// (m and 10^k are exact doubles and the division rounds correctly), and it is the shortest that
// does: doubles are more than 10^-15 apart relative to their size, so no other decimal of 15
// digits or fewer reads back as `v`, and a shorter one would have been found with a smaller k.
// Written without printf's cost; plain IEEE arithmetic, so the same digits on every target.
bool append_short_decimal(std::string &out, double v) {
  constexpr double LIMIT = 1e15;
  const bool negative = v < 0;
  const double a = negative ? -v : v;
  if (!(a < LIMIT)) return false;
  double scale = 1;
  for (int k = 0; k <= 6; ++k, scale *= 10) {
    const double m = std::nearbyint(a * scale);
    if (m >= LIMIT) return false;
    if (m / scale != a) continue;
    uint64_t digits = static_cast<uint64_t>(m);
    if (digits == 0) return false;
    char buf[32];
    char *p = buf + sizeof buf;
    for (int i = 0; i < k; ++i) {
      *--p = static_cast<char>('0' + digits % 10);
      digits /= 10;
    }
    if (k) *--p = '.';
    if (digits == 0) *--p = '0';  // 0.25: ECMAScript's fixed form for exponents down to -7
    while (digits) {
      *--p = static_cast<char>('0' + digits % 10);
      digits /= 10;
    }
    if (negative) *--p = '-';
    out.append(p, static_cast<size_t>(buf + sizeof buf - p));
    return true;
  }
  return false;
}

}  // namespace

void append_double(std::string &out, double v) {
  if (!std::isfinite(v)) {
    out += "null";
    return;
  }
  if (v == 0) {
    out.push_back('0');
    return;
  }
  if (append_short_decimal(out, v)) return;
  // The shortest digits: the correctly rounded 15-digit form when it reads back (then it is the
  // only decimal of 15 digits or fewer that does, so its trailing zeros go), else 16, else 17.
  // Subnormals have fewer bits than that argument needs (5e-324 is one digit): they count up
  // from 1. printf's %e rounds correctly on glibc and on Emscripten's musl alike.
  char buf[40];
  int precision = std::fabs(v) < DBL_MIN ? 1 : 15;
  for (; precision <= 17; ++precision) {
    std::snprintf(buf, sizeof buf, "%.*e", precision - 1, v);
    if (precision == 17 || std::strtod(buf, nullptr) == v) break;
  }
  // buf is [-]d.ddde[+-]xx: take the digits and the exponent.
  const char *p = buf;
  const bool negative = *p == '-';
  if (negative) ++p;
  char digits[20];
  int n = 0;
  for (; *p && *p != 'e'; ++p) {
    if (*p != '.') digits[n++] = *p;
  }
  const int exponent = std::atoi(p + 1);  // value = d.ddd x 10^exponent
  while (n > 1 && digits[n - 1] == '0') --n;
  // ECMAScript Number::toString with k digits and point position e10 = exponent + 1.
  const int point = exponent + 1;
  if (negative) out.push_back('-');
  if (n <= point && point <= 21) {
    out.append(digits, static_cast<size_t>(n));
    out.append(static_cast<size_t>(point - n), '0');
  } else if (0 < point && point <= 21) {
    out.append(digits, static_cast<size_t>(point));
    out.push_back('.');
    out.append(digits + point, static_cast<size_t>(n - point));
  } else if (-6 < point && point <= 0) {
    out += "0.";
    out.append(static_cast<size_t>(-point), '0');
    out.append(digits, static_cast<size_t>(n));
  } else {
    out.push_back(digits[0]);
    if (n > 1) {
      out.push_back('.');
      out.append(digits + 1, static_cast<size_t>(n - 1));
    }
    out.push_back('e');
    out.push_back(point - 1 < 0 ? '-' : '+');
    out += std::to_string(point - 1 < 0 ? -(point - 1) : point - 1);
  }
}

}  // namespace quire
