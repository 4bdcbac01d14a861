// Floats come back as the text printf's "%.15g" (then 16, then 17 digits) would give: the shortest
// of those that reads back as the same double. quire prints short decimals (prices, measurements)
// without printf; this checks that fast path against printf itself on values of every kind.
#include <catch2/catch.hpp>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "quire/format.h"

using namespace quire;
using namespace quire::format;

namespace {

std::string printf_reference(double v) {
  if (v == 0) return "0";
  char buf[40];
  for (int precision = 15; precision <= 17; ++precision) {
    std::snprintf(buf, sizeof buf, "%.*g", precision, v);
    if (precision == 17 || std::strtod(buf, nullptr) == v) break;
  }
  return buf;
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

TEST_CASE("format: floats print as printf's shortest %.15g-%.17g text", "[format]") {
  std::vector<double> values = {0.1, 0.2, 0.3, 1.0 / 3, 100, 1e14, 1e15, 1e16, 123456789012345.6, 0.0001, 0.00001, 0.00012,
                                1e-7, 5e-324, 1.7976931348623157e308, 2.5, 0.05, 99999.99, -0.07, -1234.5, 4503599627370496.5,
                                9007199254740993.0, 0.000999999, 12.000001, 1234567.891234, 1e21, 123e-20};
  splitmix r{7};
  for (int i = 0; i < 20000; ++i) {
    const uint64_t kind = r.next() % 5;
    const uint64_t n = r.next();
    double v = 0;
    if (kind == 0) v = static_cast<double>(n % 10000000) / 100.0;                       // cents
    else if (kind == 1) v = static_cast<double>(n % 100000000000ull) / 1e6;            // micro units
    else if (kind == 2) v = -static_cast<double>(n % 1000) / 1000.0;                   // negative thousandths
    else if (kind == 3) std::memcpy(&v, &n, sizeof v);                                 // any bits
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
    if (got != printf_reference(v)) {
      if (++mismatches <= 5) FAIL_CHECK("value " << printf_reference(v) << " printed as " << got);
    }
  }
  CHECK(mismatches == 0);
}
