// The text of a decimal number cut into its parts: [sign] digits [. digits] [(e|E) [sign] digits].
// One scanner for every module that reads such text — FHIRPath's decimals (literals, JSON numbers,
// toDecimal()), the file format's exact decimal sums, scaled decimal columns and number classes,
// the view's decimal constants — each asking for the grammar it accepts through the flags.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string_view>

namespace quire::detail {

enum : unsigned {
  DECIMAL_PLUS = 1,             ///< a leading '+' is allowed (FHIRPath); '-' always is
  DECIMAL_EXPONENT = 2,         ///< an exponent is allowed (JSON numbers)
  DECIMAL_NO_LEADING_ZERO = 4,  ///< `0` or a digit 1-9 first, as JSON asks (`01` is refused)
};

/// The parts of a decimal text; views into the text given.
struct decimal_text {
  bool negative = false;
  std::string_view integer;   ///< the digits before the point: never empty
  std::string_view fraction;  ///< the digits after it: empty when there is no point
  bool has_point = false;     ///< a point (then `fraction` is not empty)
  bool has_exponent = false;
  /// The exponent's value with its sign; saturated past 2^40 so that `1e99999999999999999999`
  /// stays far beyond any limit instead of wrapping.
  int64_t exponent = 0;
};

/// Cuts `t` into its parts; false when it is not of the form the flags allow (nothing around it,
/// no empty integer or fraction part, no exponent without digits).
inline bool split_decimal_text(std::string_view t, unsigned flags, decimal_text &out) noexcept {
  auto digit = [](char c) { return c >= '0' && c <= '9'; };
  size_t i = 0;
  const size_t n = t.size();
  out = decimal_text{};
  if (i < n && (t[i] == '-' || (t[i] == '+' && (flags & DECIMAL_PLUS)))) out.negative = t[i++] == '-';
  const size_t int_start = i;
  while (i < n && digit(t[i])) ++i;
  if (i == int_start) return false;
  if ((flags & DECIMAL_NO_LEADING_ZERO) && i - int_start > 1 && t[int_start] == '0') return false;
  out.integer = t.substr(int_start, i - int_start);
  if (i < n && t[i] == '.') {
    const size_t frac_start = ++i;
    while (i < n && digit(t[i])) ++i;
    if (i == frac_start) return false;
    out.has_point = true;
    out.fraction = t.substr(frac_start, i - frac_start);
  }
  if (i < n && (t[i] == 'e' || t[i] == 'E') && (flags & DECIMAL_EXPONENT)) {
    ++i;
    const bool negative_exponent = i < n && t[i] == '-';
    if (i < n && (t[i] == '+' || t[i] == '-')) ++i;
    const size_t exp_start = i;
    for (; i < n && digit(t[i]); ++i) {
      if (out.exponent < (int64_t{1} << 40)) out.exponent = out.exponent * 10 + (t[i] - '0');
    }
    if (i == exp_start) return false;
    if (negative_exponent) out.exponent = -out.exponent;
    out.has_exponent = true;
  }
  return i == n;
}

}  // namespace quire::detail
