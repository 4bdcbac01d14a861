// Doubles print as ECMAScript's Number::toString prints them (what JSON.stringify gives in
// JavaScript): the shortest digits that read back as the same double, in JS's fixed or exponent
// layout. Checked two ways: against a table Node wrote (tests/data/numbers/ecmascript_doubles.tsv,
// made by tests/data/numbers/generate.mjs), and, through the rows of a .quire file, against
// an independent reference here (printf's %.Ne for N = 1..17, the first that reads back).
#include <catch2/catch.hpp>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <string>
#include <vector>

#include "quire/format.h"
#include "quire/number_text.h"
#include "test_support.h"

using namespace quire;
using namespace quire::format;

namespace {

std::string ecmascript_reference(double v) {
  if (!std::isfinite(v)) return "null";
  if (v == 0) return "0";
  char buf[40];
  for (int p = 1; p <= 17; ++p) {
    std::snprintf(buf, sizeof buf, "%.*e", p - 1, v);
    if (std::strtod(buf, nullptr) == v) break;
  }
  std::string t = buf, digits;
  bool negative = t[0] == '-';
  size_t e = t.find('e');
  for (size_t i = negative ? 1 : 0; i < e; ++i) {
    if (t[i] != '.') digits.push_back(t[i]);
  }
  while (digits.size() > 1 && digits.back() == '0') digits.pop_back();
  const int k = static_cast<int>(digits.size()), n = std::atoi(t.c_str() + e + 1) + 1;
  std::string out = negative ? "-" : "";
  if (k <= n && n <= 21) out += digits + std::string(static_cast<size_t>(n - k), '0');
  else if (0 < n && n <= 21)
    out += digits.substr(0, static_cast<size_t>(n)) + "." + digits.substr(static_cast<size_t>(n));
  else if (-6 < n && n <= 0) out += "0." + std::string(static_cast<size_t>(-n), '0') + digits;
  else
    out += digits.substr(0, 1) + (k > 1 ? "." + digits.substr(1) : "") + "e" + (n - 1 < 0 ? "-" : "+") +
           std::to_string(std::abs(n - 1));
  return out;
}

struct splitmix {
  uint64_t s;
  uint64_t next() {
    uint64_t z = (s += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
  }
};

}  // namespace

TEST_CASE("format: floats in rows print as ECMAScript prints them", "[format][numbers]") {
  std::vector<double> values = {0.1,
                                0.2,
                                0.3,
                                1.0 / 3,
                                100,
                                1e14,
                                1e15,
                                1e16,
                                123456789012345.6,
                                0.0001,
                                0.00001,
                                0.00012,
                                1e-7,
                                5e-324,
                                1.7976931348623157e308,
                                2.5,
                                0.05,
                                99999.99,
                                -0.07,
                                -1234.5,
                                4503599627370496.5,
                                9007199254740993.0,
                                0.000999999,
                                12.000001,
                                1234567.891234,
                                1e21,
                                123e-20};
  splitmix r{7};
  for (int i = 0; i < 20000; ++i) {
    const uint64_t kind = r.next() % 5;
    const uint64_t n = r.next();
    double v = 0;
    if (kind == 0) v = static_cast<double>(n % 10000000) / 100.0;            // cents
    else if (kind == 1) v = static_cast<double>(n % 100000000000ull) / 1e6;  // micro units
    else if (kind == 2) v = -static_cast<double>(n % 1000) / 1000.0;         // negative thousandths
    else if (kind == 3) std::memcpy(&v, &n, sizeof v);                       // any bits
    else v = static_cast<double>(n % 1000000) * std::pow(10.0, static_cast<double>(n % 41) - 20);  // every magnitude
    if (std::isfinite(v)) values.push_back(v);
  }
  schema s{{{"f", column_type::float64}}};
  vector_sink sink;
  auto w = writer::create(s, {}, sink);
  REQUIRE(w);
  for (double v : values) REQUIRE(w.value()->append_row(std::vector<cell>{cell::of(v)}));
  REQUIRE(w.value()->finish());
  auto f = file::open(borrow_bytes(sink.bytes));
  REQUIRE(f);
  auto rows = f->query({});
  REQUIRE(rows);
  size_t at = 0, mismatches = 0;
  for (double v : values) {
    size_t end = rows->json.find('\n', at);
    REQUIRE(end != std::string::npos);
    std::string got = rows->json.substr(at + 5, end - at - 6);  // {"f":...}
    at = end + 1;
    if (got != ecmascript_reference(v)) {
      if (++mismatches <= 5) FAIL_CHECK("value " << ecmascript_reference(v) << " printed as " << got);
    }
  }
  CHECK(mismatches == 0);
}

TEST_CASE("numbers: append_double gives JavaScript's text for every double of the table", "[numbers]") {
  std::ifstream in(quire_test::data_dir() / "numbers" / "ecmascript_doubles.tsv");
  REQUIRE(in);
  std::string line;
  size_t checked = 0, mismatches = 0;
  while (std::getline(in, line)) {
    if (line.empty() || line[0] == '#') continue;
    auto tab = line.find('\t');
    uint64_t bits = std::strtoull(line.substr(0, tab).c_str(), nullptr, 16);
    double v;
    std::memcpy(&v, &bits, sizeof v);
    std::string got;
    append_double(got, v);
    ++checked;
    if (got != line.substr(tab + 1) && ++mismatches <= 5) FAIL_CHECK(line << " printed as " << got);
  }
  CHECK(checked > 3000);
  CHECK(mismatches == 0);
  std::string special;
  append_double(special, -0.0);
  special.push_back(' ');
  append_double(special, HUGE_VAL);
  special.push_back(' ');
  append_double(special, std::nan(""));
  CHECK(special == "0 null null");
}
