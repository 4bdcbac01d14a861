// The one decimal-text scanner of core (common/decimal_text.h), and the grammars its users ask of
// it: FHIRPath (a '+', an exponent), the file format's sums (JSON numbers with leading zeros),
// scaled columns and number classes (JSON's no-leading-zero rule).
#include <catch2/catch.hpp>

#include <string>

#include "../core/src/common/decimal_text.h"
#include "quire/fhirpath.h"

using quire::detail::DECIMAL_EXPONENT;
using quire::detail::DECIMAL_NO_LEADING_ZERO;
using quire::detail::DECIMAL_PLUS;
using quire::detail::decimal_text;
using quire::detail::split_decimal_text;

namespace {
bool accepts(std::string_view t, unsigned flags) {
  decimal_text parts;
  return split_decimal_text(t, flags, parts);
}
}  // namespace

TEST_CASE("decimal text: the parts of a number", "[decimal_text]") {
  decimal_text p;
  REQUIRE(split_decimal_text("-12.50", 0, p));
  CHECK(p.negative);
  CHECK(p.integer == "12");
  CHECK(p.fraction == "50");
  CHECK(p.has_point);
  CHECK_FALSE(p.has_exponent);

  REQUIRE(split_decimal_text("-0.0", 0, p));
  CHECK(p.negative);
  CHECK(p.integer == "0");
  CHECK(p.fraction == "0");

  REQUIRE(split_decimal_text("1e5", DECIMAL_EXPONENT, p));
  CHECK(p.integer == "1");
  CHECK(p.fraction.empty());
  CHECK_FALSE(p.has_point);
  CHECK(p.has_exponent);
  CHECK(p.exponent == 5);

  REQUIRE(split_decimal_text("2.5E-3", DECIMAL_EXPONENT, p));
  CHECK(p.exponent == -3);
  REQUIRE(split_decimal_text("2.5e+03", DECIMAL_EXPONENT, p));
  CHECK(p.exponent == 3);

  REQUIRE(split_decimal_text("+7", DECIMAL_PLUS, p));
  CHECK_FALSE(p.negative);
  CHECK(p.integer == "7");
}

TEST_CASE("decimal text: a huge exponent saturates instead of wrapping", "[decimal_text]") {
  decimal_text p;
  REQUIRE(split_decimal_text("1e99999999999999999999", DECIMAL_EXPONENT, p));
  CHECK(p.exponent >= (int64_t{1} << 40));
  REQUIRE(split_decimal_text("1e-99999999999999999999", DECIMAL_EXPONENT, p));
  CHECK(p.exponent <= -(int64_t{1} << 40));
}

TEST_CASE("decimal text: the grammar the flags allow", "[decimal_text]") {
  for (const char *bad : {"", "-", "+", ".5", "1.", "1.e5", "--1", "1..2", "1.2.3", " 1", "1 ", "0x10", "1e", "1e+",
                          "e5", "1,5", "NaN", "Infinity"}) {
    INFO(bad);
    CHECK_FALSE(accepts(bad, DECIMAL_PLUS | DECIMAL_EXPONENT));
  }
  CHECK(accepts("007", 0));
  CHECK(accepts("007.50", DECIMAL_EXPONENT));
  CHECK_FALSE(accepts("007", DECIMAL_NO_LEADING_ZERO));
  CHECK_FALSE(accepts("-01.5", DECIMAL_NO_LEADING_ZERO));
  CHECK(accepts("0.5", DECIMAL_NO_LEADING_ZERO));
  CHECK(accepts("-0", DECIMAL_NO_LEADING_ZERO));
  CHECK_FALSE(accepts("+1", 0));
  CHECK(accepts("+1", DECIMAL_PLUS));
  CHECK_FALSE(accepts("1e5", 0));
  CHECK_FALSE(accepts("1e5", DECIMAL_PLUS));
  CHECK(accepts("1e5", DECIMAL_EXPONENT));
}

TEST_CASE("decimal text: FHIRPath's toDecimal() takes a sign and a fraction, never an exponent", "[decimal_text]") {
  auto eval = [](const char *text) {
    auto e = quire::fhirpath::compile(text);
    REQUIRE(e);
    auto doc = quire::json::parse("{}");
    REQUIRE(doc);
    quire::fhirpath::evaluator ev;
    auto r = ev.evaluate(*e, doc->root());
    REQUIRE(r);
    return quire::fhirpath::to_json(**r);
  };
  CHECK(eval("'+1.50'.toDecimal()") == "[1.50]");
  CHECK(eval("'-0.0'.toDecimal()") == "[0.0]");
  CHECK(eval("'007'.toDecimal()") == "[7]");
  CHECK(eval("'1e5'.toDecimal()") == "[]");
  CHECK(eval("'1.'.toDecimal()") == "[]");
  CHECK(eval("'.5'.toDecimal()") == "[]");
}
