#include "format_decimal.h"

#include <algorithm>

#include "../common/decimal_text.h"

namespace quire::format::detail {
namespace {

constexpr uint32_t BASE = 1000000000u;
constexpr uint64_t POW10[] = {1ull,
                              10ull,
                              100ull,
                              1000ull,
                              10000ull,
                              100000ull,
                              1000000ull,
                              10000000ull,
                              100000000ull,
                              1000000000ull,
                              10000000000ull,
                              100000000000ull,
                              1000000000000ull,
                              10000000000000ull,
                              100000000000000ull,
                              1000000000000000ull,
                              10000000000000000ull,
                              100000000000000000ull,
                              1000000000000000000ull};
// Flush the 128-bit lane before it could overflow: each value added is below 10^18 < 2^60.
constexpr int128 PENDING_LIMIT = static_cast<int128>(1) << 125;

void trim(std::vector<uint32_t> &v) {
  while (!v.empty() && v.back() == 0) v.pop_back();
}

int compare_limbs(const std::vector<uint32_t> &a, const std::vector<uint32_t> &b) {
  if (a.size() != b.size()) return a.size() < b.size() ? -1 : 1;
  for (size_t i = a.size(); i-- > 0;) {
    if (a[i] != b[i]) return a[i] < b[i] ? -1 : 1;
  }
  return 0;
}

// a -= b, with a >= b.
void subtract(std::vector<uint32_t> &a, const std::vector<uint32_t> &b) {
  int64_t borrow = 0;
  for (size_t i = 0; i < a.size(); ++i) {
    int64_t d = static_cast<int64_t>(a[i]) - borrow - (i < b.size() ? static_cast<int64_t>(b[i]) : 0);
    borrow = d < 0;
    if (d < 0) d += BASE;
    a[i] = static_cast<uint32_t>(d);
  }
  trim(a);
}

}  // namespace

result<void> parse_decimal(std::string_view t, uint32_t max_digits, decimal_parts &out) {
  auto quote = [&] {
    std::string m = "the text '";
    m += t.substr(0, 40);
    m += "'";
    return m;
  };
  auto bad = [&] { return quire::error(error_code::INVALID_NUMBER, quote() + " is not a decimal number"); };
  quire::detail::decimal_text parts;
  if (!quire::detail::split_decimal_text(t, quire::detail::DECIMAL_EXPONENT, parts)) return bad();
  out.negative = parts.negative;
  // digits = int part + fraction, scale = fraction length - exponent.
  out.digits.clear();
  out.digits.append(parts.integer);
  out.digits.append(parts.fraction);
  int64_t scale = static_cast<int64_t>(parts.fraction.size()) - parts.exponent;
  size_t lead = out.digits.find_first_not_of('0');
  if (lead == std::string::npos) out.digits.clear();
  else out.digits.erase(0, lead);
  const auto limit = static_cast<int64_t>(max_digits);
  auto overflow = [&] {
    return quire::error(error_code::NUMERIC_OVERFLOW, quote() + " needs more than " + std::to_string(max_digits) +
                                                          " digits as an exact decimal (MAX_EXACT_DECIMAL_DIGITS)");
  };
  if (scale < 0) {
    // 15e2: the exponent moves the point right, into zeros.
    if (!out.digits.empty()) {
      if (static_cast<int64_t>(out.digits.size()) - scale > limit) return overflow();
      out.digits.append(static_cast<size_t>(-scale), '0');
    }
    scale = 0;
  }
  if (scale > limit || static_cast<int64_t>(out.digits.size()) > limit) return overflow();
  if (out.digits.empty()) out.negative = false;
  out.scale = static_cast<uint32_t>(scale);
  return {};
}

bool parse_plain_decimal(std::string_view t, int64_t &m, uint32_t &places) noexcept {
  // One pass: digits are accumulated as they are checked (a value past 18 digits wraps, unsigned,
  // and is refused after).
  const char *p = t.data(), *const end = p + t.size();
  const bool negative = p != end && *p == '-';
  p += negative;
  const char *const integer = p;
  uint64_t v = 0;
  while (p != end && static_cast<unsigned char>(*p - '0') < 10) v = v * 10 + static_cast<uint64_t>(*p++ - '0');
  const auto integer_digits = static_cast<size_t>(p - integer);
  if (integer_digits == 0 || (integer_digits > 1 && *integer == '0')) return false;
  size_t fraction_digits = 0;
  if (p != end && *p == '.') {
    const char *const fraction = ++p;
    while (p != end && static_cast<unsigned char>(*p - '0') < 10) v = v * 10 + static_cast<uint64_t>(*p++ - '0');
    fraction_digits = static_cast<size_t>(p - fraction);
    if (fraction_digits == 0) return false;
  }
  if (p != end || integer_digits + fraction_digits > 18) return false;
  m = negative ? -static_cast<int64_t>(v) : static_cast<int64_t>(v);
  places = static_cast<uint32_t>(fraction_digits);
  return true;
}

int compare_scaled(int64_t a, uint32_t pa, int64_t b, uint32_t pb) noexcept {
  // One scale (the usual case): the integers themselves; 128-bit products are calls in wasm.
  if (pa == pb) return a < b ? -1 : a > b ? 1 : 0;
  // Both at the larger scale: below 10^18 x 10^18, inside 128 bits.
  const int128 x = static_cast<int128>(a) * static_cast<int128>(POW10[pa < pb ? pb - pa : 0]);
  const int128 y = static_cast<int128>(b) * static_cast<int128>(POW10[pb < pa ? pa - pb : 0]);
  return x < y ? -1 : x > y ? 1 : 0;
}

int compare_decimals(const decimal_parts &a, const decimal_parts &b) noexcept {
  const bool a_zero = a.digits.empty(), b_zero = b.digits.empty();
  const int sa = a_zero ? 0 : a.negative ? -1 : 1, sb = b_zero ? 0 : b.negative ? -1 : 1;
  if (sa != sb) return sa < sb ? -1 : 1;
  if (sa == 0) return 0;
  // Same sign: compare magnitudes by the digits before the point, then digit by digit.
  const int64_t ia = static_cast<int64_t>(a.digits.size()) - a.scale,
                ib = static_cast<int64_t>(b.digits.size()) - b.scale;
  int mag = 0;
  if (ia != ib) mag = ia < ib ? -1 : 1;
  else {
    const size_t len = std::max(a.digits.size(), b.digits.size());
    for (size_t k = 0; k < len && mag == 0; ++k) {
      char ca = k < a.digits.size() ? a.digits[k] : '0', cb = k < b.digits.size() ? b.digits[k] : '0';
      if (ca != cb) mag = ca < cb ? -1 : 1;
    }
  }
  return sa > 0 ? mag : -mag;
}

std::string int128_text(int128 v) {
  const bool negative = v < 0;
  uint128 m = negative ? static_cast<uint128>(-(v + 1)) + 1 : static_cast<uint128>(v);
  char buf[48];
  char *p = buf + sizeof buf;
  do {
    *--p = static_cast<char>('0' + static_cast<int>(m % 10));
    m /= 10;
  } while (m);
  if (negative) *--p = '-';
  return std::string(p, static_cast<size_t>(buf + sizeof buf - p));
}

decimal_sum::limbs decimal_sum::from_digits(std::string_view digits, uint32_t zeros) {
  std::string all(digits);
  all.append(zeros, '0');
  limbs out;
  for (size_t end = all.size(); end > 0;) {
    size_t start = end >= 9 ? end - 9 : 0;
    uint32_t limb = 0;
    for (size_t k = start; k < end; ++k) limb = limb * 10 + static_cast<uint32_t>(all[k] - '0');
    out.push_back(limb);
    end = start;
  }
  trim(out);
  return out;
}

std::string decimal_sum::to_digits(const limbs &v) {
  if (v.empty()) return "0";
  std::string out = std::to_string(v.back());
  for (size_t i = v.size() - 1; i-- > 0;) {
    std::string part = std::to_string(v[i]);
    out.append(9 - part.size(), '0');
    out += part;
  }
  return out;
}

void decimal_sum::add_to(limbs &acc, const limbs &v) {
  if (acc.size() < v.size()) acc.resize(v.size(), 0);
  uint32_t carry = 0;
  for (size_t i = 0; i < acc.size(); ++i) {
    uint64_t s = static_cast<uint64_t>(acc[i]) + carry + (i < v.size() ? v[i] : 0);
    acc[i] = static_cast<uint32_t>(s % BASE);
    carry = static_cast<uint32_t>(s / BASE);
    if (!carry && i >= v.size()) break;
  }
  if (carry) acc.push_back(carry);
}

void decimal_sum::multiply_pow10(limbs &v, uint32_t k) {
  if (v.empty()) return;
  v.insert(v.begin(), k / 9, 0u);
  const uint64_t f = POW10[k % 9];
  if (f == 1) return;
  uint64_t carry = 0;
  for (auto &limb : v) {
    uint64_t p = static_cast<uint64_t>(limb) * f + carry;
    limb = static_cast<uint32_t>(p % BASE);
    carry = p / BASE;
  }
  if (carry) v.push_back(static_cast<uint32_t>(carry));
}

void decimal_sum::flush() {
  if (pending_ == 0) return;
  const bool negative = pending_ < 0;
  std::string digits = int128_text(pending_);
  add_to(negative ? neg_ : pos_, from_digits(std::string_view(digits).substr(negative ? 1 : 0), 0));
  pending_ = 0;
}

void decimal_sum::rescale(uint32_t new_scale) {
  flush();
  multiply_pow10(pos_, new_scale - scale_);
  multiply_pow10(neg_, new_scale - scale_);
  scale_ = new_scale;
}

result<void> decimal_sum::add(const decimal_parts &v) {
  if (v.scale > scale_) rescale(v.scale);
  if (v.digits.empty()) return {};
  const uint32_t shift = scale_ - v.scale;
  // A sum of n values needs at most the widest value's digits plus 20 (n < 2^64): bounding each
  // value bounds the sum.
  if (v.digits.size() + shift > max_digits_) {
    return quire::error(error_code::NUMERIC_OVERFLOW, "a decimal sum needs more than " + std::to_string(max_digits_) +
                                                          " digits (MAX_EXACT_DECIMAL_DIGITS)");
  }
  if (v.digits.size() + shift <= 18) {
    uint64_t m = 0;
    for (char c : v.digits) m = m * 10 + static_cast<uint64_t>(c - '0');
    m *= POW10[shift];
    pending_ += v.negative ? -static_cast<int128>(m) : static_cast<int128>(m);
    if (pending_ > PENDING_LIMIT || pending_ < -PENDING_LIMIT) flush();
    return {};
  }
  add_to(v.negative ? neg_ : pos_, from_digits(v.digits, shift));
  return {};
}

quire::error decimal_sum::overflow() const {
  return quire::error(error_code::NUMERIC_OVERFLOW, "a decimal sum needs more than " + std::to_string(max_digits_) +
                                                        " digits (MAX_EXACT_DECIMAL_DIGITS)");
}

bool decimal_sum::add_scaled(int64_t m, uint32_t places) noexcept {
  // add()'s steps on the value's digits, without making them.
  if (places > scale_) rescale(places);
  if (m == 0) return true;
  const uint64_t u = m < 0 ? 0 - static_cast<uint64_t>(m) : static_cast<uint64_t>(m);
  const uint32_t shift = scale_ - places;
  // |m| < 2^63 has at most 19 digits: they are counted only where the limit could be passed.
  if (shift + 19 > max_digits_) {
    uint32_t digits = 1;
    while (digits < 19 && u >= POW10[digits]) ++digits;
    if (digits + shift > max_digits_) return false;
  }
  if (shift <= 18 && u < POW10[18 - shift]) {  // digits + shift <= 18
    const uint64_t shifted = u * POW10[shift];
    pending_ += m < 0 ? -static_cast<int128>(shifted) : static_cast<int128>(shifted);
    if (pending_ > PENDING_LIMIT || pending_ < -PENDING_LIMIT) flush();
    return true;
  }
  add_to(m < 0 ? neg_ : pos_, from_digits(std::to_string(u), shift));
  return true;
}

bool decimal_sum::add_scaled_run(std::span<const int64_t> m, uint32_t places) noexcept {
  if (places > scale_) rescale(places);
  const uint32_t shift = scale_ - places;
  // Values of at most 19 digits cannot pass the limit here, and their sum (below 2^95 for fewer
  // than 2^32 of them) shifted stays inside 2^126: one addition to pending_, which is below 2^125.
  if (shift + 19 <= max_digits_ && shift <= 18) {
    int128 total = 0;
    for (int64_t v : m) total += v;
    const int128 bound = (static_cast<int128>(1) << 126) / static_cast<int128>(POW10[shift]);
    if (total < bound && total > -bound) {
      pending_ += total * static_cast<int128>(POW10[shift]);
      if (pending_ > PENDING_LIMIT || pending_ < -PENDING_LIMIT) flush();
      return true;
    }
  }
  for (int64_t v : m)
    if (!add_scaled(v, places)) return false;
  return true;
}

decimal_sum::limbs decimal_sum::total(bool &negative) {
  flush();
  limbs t;
  if (compare_limbs(pos_, neg_) >= 0) {
    t = pos_;
    subtract(t, neg_);
    negative = false;
  } else {
    t = neg_;
    subtract(t, pos_);
    negative = true;
  }
  if (t.empty()) negative = false;
  return t;
}

namespace {

std::string with_point(bool negative, const std::string &digits, uint32_t places) {
  std::string out;
  out.reserve(digits.size() + places + 3);
  if (negative) out.push_back('-');
  if (digits.size() <= places) {
    out += "0.";
    out.append(places - digits.size(), '0');
    out += digits;
    return out;
  }
  out.append(digits, 0, digits.size() - places);
  if (places) {
    out.push_back('.');
    out.append(digits, digits.size() - places, places);
  }
  return out;
}

}  // namespace

std::string decimal_sum::text() {
  bool negative = false;
  limbs t = total(negative);
  return with_point(negative, to_digits(t), scale_);
}

std::string decimal_sum::average(uint64_t count, uint32_t places) {
  bool negative = false;
  limbs t = total(negative);
  multiply_pow10(t, places - scale_);
  // Long division by a 64-bit count, most significant limb first.
  uint128 rem = 0;
  for (size_t i = t.size(); i-- > 0;) {
    uint128 cur = rem * BASE + t[i];
    t[i] = static_cast<uint32_t>(cur / count);
    rem = cur % count;
  }
  trim(t);
  if (rem * 2 >= count) add_to(t, limbs{1});  // half away from zero
  if (t.empty()) negative = false;
  return with_point(negative, to_digits(t), places);
}

}  // namespace quire::format::detail
