// The file format's decimal reader (format_internal.h parse_double): plain decimal text by exact
// double division, the rest by strtod; every text must read as the same double, bit for bit, as
// strtod reads it (correctly rounded on both targets: glibc natively, musl in wasm).
#include <catch2/catch.hpp>

#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <string>
#include <string_view>
#include <vector>

// Declared here: format_internal.h includes zstd.h, which the tests do not see.
namespace quire::format::detail {
double parse_double(std::string_view s) noexcept;
}
using quire::format::detail::parse_double;

namespace {

// memcpy, not std::bit_cast: Emscripten 3.1.6's libc++ has none.
uint64_t bits_of(double d) {
  uint64_t b;
  std::memcpy(&b, &d, sizeof b);
  return b;
}
uint64_t strtod_bits(const std::string &s) { return bits_of(std::strtod(s.c_str(), nullptr)); }

}  // namespace

TEST_CASE("parse_double: plain decimals read as strtod reads them", "[format][parse_double]") {
  const std::vector<std::string> texts = {
      "0", "-0", "+0", "0.0", "-0.000", "00012", "1.", ".5", "-.5", "12345.67", "99999.99", "0.1", "0.2", "0.3", "1.15",
      "2.675", "-1234.5678",
      // 2^53, 2^53 + 1 (over the fast path), 15-19 significant digits
      "9007199254740992", "9007199254740993", "900719925474099.2", "0.9007199254740993", "123456789012345",
      "1234567890123456789", "12345678901234567890", "1.234567890123456789",
      // 22 digits after the point and 23 (over the fast path)
      "0.0000000000000000000001", "0.00000000000000000000001", "1.0000000000000000000000", "3.1415926535897932384626",
      "0.1234567890123456789012"};
  for (const auto &t : texts) {
    INFO(t);
    CHECK(bits_of(parse_double(t)) == strtod_bits(t));
  }
}

TEST_CASE("parse_double: other text goes to strtod", "[format][parse_double]") {
  for (std::string t : {"", "-", "+", ".", "-.", "1e5", "1E-3", " 7", "7 ", "12abc", "1.2.3", "inf", "-nan", "0x10",
                        "1_000", "--1", "+-1", "1e400", "4.9e-324"}) {
    INFO(t);
    const double a = parse_double(t), b = std::strtod(t.c_str(), nullptr);
    if (b != b) CHECK(a != a);  // NaN: its payload's sign is strtod's business
    else CHECK(bits_of(a) == bits_of(b));
  }
  // Longer than the bounded copy's buffer: 300 digits.
  const std::string long_text = "0." + std::string(299, '3');
  CHECK(bits_of(parse_double(long_text)) == strtod_bits(long_text));
}

TEST_CASE("parse_double: seeded random decimals read as strtod reads them", "[format][parse_double]") {
  uint64_t state = 20;
  auto next = [&] {
    uint64_t z = (state += 0x9E3779B97F4A7C15ULL);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
    return z ^ (z >> 31);
  };
  size_t differ = 0;
  for (int n = 0; n < 200000; ++n) {
    std::string t;
    const uint64_t shape = next();
    if (shape % 4 == 0) t.push_back('-');
    const size_t digits = 1 + next() % 20;
    const size_t zeros = shape % 7 == 0 ? next() % 3 : 0;
    t.append(zeros, '0');
    for (size_t d = 0; d < digits; ++d) t.push_back(static_cast<char>('0' + next() % 10));
    if (shape % 5 != 0) t.insert(t.size() - next() % (digits + 1), 1, '.');
    if (bits_of(parse_double(t)) != strtod_bits(t)) {
      if (++differ <= 5) FAIL_CHECK(t);
    }
  }
  CHECK(differ == 0);
}
