// Exact decimal arithmetic for aggregates over decimal columns: parsing JSON number text into
// digits and a scale, exact comparison, and a sum that never overflows (base-10^9 limbs, with a
// 128-bit fast lane for values of up to 18 digits). Used by file::aggregate only.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "quire/result.h"

namespace quire::format::detail {

// 128-bit integers (GCC and Clang on both targets); __extension__ keeps -Wpedantic quiet.
__extension__ typedef __int128 int128;
__extension__ typedef unsigned __int128 uint128;

/// A decimal number: (negative ? -1 : 1) x digits x 10^-scale. `digits` has no leading zeros
/// ("" for zero); `scale` counts fraction digits (`1.50` → "150", 2; `1e3` → "1000", 0).
struct decimal_parts {
  bool negative = false;
  std::string digits;
  uint32_t scale = 0;
};

/// Parses JSON number text exactly. NUMERIC_OVERFLOW when the digits plus the scale would pass
/// `max_digits`; INVALID_NUMBER when the text is not a JSON number.
result<void> parse_decimal(std::string_view text, uint32_t max_digits, decimal_parts &out);

/// -1, 0 or 1 as a is less than, equal to or greater than b (exactly: `1.50` equals `1.5`).
int compare_decimals(const decimal_parts &a, const decimal_parts &b) noexcept;

/// A decimal's text in the plain form `-?D+(.D+)?` (no leading zero, no exponent) of at most 18
/// digits, as m x 10^-places: false for any other text (parse_decimal decides those). The value
/// is the one parse_decimal gives: digits |m| without leading zeros, scale `places`.
bool parse_plain_decimal(std::string_view text, int64_t &m, uint32_t &places) noexcept;

/// compare_decimals of a x 10^-pa and b x 10^-pb, for values parse_plain_decimal gives (|m| < 10^18,
/// places <= 18).
int compare_scaled(int64_t a, uint32_t pa, int64_t b, uint32_t pb) noexcept;

/// 128-bit signed integer text ("-170141183460469231731687303715884105728" at most).
std::string int128_text(int128 v);

/// An exact running sum of decimals.
class decimal_sum {
 public:
  explicit decimal_sum(uint32_t max_digits) : max_digits_(max_digits) {}
  /// Adds one value. NUMERIC_OVERFLOW when the sum would need more than max_digits digits.
  result<void> add(const decimal_parts &v);
  /// Adds m x 10^-places: the same as add() of that value's text (append_scaled_decimal's). False,
  /// adding nothing, where add() would be NUMERIC_OVERFLOW (overflow() is that error): no result
  /// object a value on a path taken 200,000 times a sum.
  bool add_scaled(int64_t m, uint32_t places) noexcept;
  /// Adds every m x 10^-places of a run (a scaled page's integers, each below 10^18 in magnitude):
  /// the same sum as add_scaled() of each, in one loop, false where that would be.
  bool add_scaled_run(std::span<const int64_t> m, uint32_t places) noexcept;
  quire::error overflow() const;
  /// The largest scale of the values added (the sum's scale).
  uint32_t scale() const noexcept { return scale_; }
  /// The sum with scale() fraction digits ("15.60", "0.00", "-3").
  std::string text();
  /// The sum divided by `count` (> 0), rounded half away from zero to `places` fraction digits
  /// (places >= scale()).
  std::string average(uint64_t count, uint32_t places);

 private:
  using limbs = std::vector<uint32_t>;  // little-endian, base 10^9
  void flush();
  void rescale(uint32_t new_scale);
  static void add_to(limbs &acc, const limbs &v);
  static void multiply_pow10(limbs &v, uint32_t k);
  static limbs from_digits(std::string_view digits, uint32_t zeros);
  static std::string to_digits(const limbs &v);
  /// pos - neg (sign in `negative`).
  limbs total(bool &negative);

  uint32_t max_digits_;
  uint32_t scale_ = 0;
  int128 pending_ = 0;  // values at scale_ whose digits fit 18, summed before they reach the limbs
  limbs pos_, neg_;
};

}  // namespace quire::format::detail
