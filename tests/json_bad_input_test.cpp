// Hostile JSON: each is a typed error, bounded in memory and time, on every target.
#include <catch2/catch.hpp>
#include <string>

#include "quire/json.h"

using namespace quire;

TEST_CASE("json bad input: truncated documents") {
  for (std::string_view text : {"{\"a\": [1, 2", "{\"a\"", "[\"abc", "{", "[1,", "tru", "-", "\"\\u12"}) {
    INFO(text);
    auto r = json::check(text);
    REQUIRE_FALSE(r);
    CHECK(r.error().offset != error::NO_OFFSET);
    CHECK(r.error().offset <= text.size());
    CHECK(json::parse(text).code() == r.code());
  }
  for (std::string_view text : {"{\"a\": [1, 2", "[[[[[[", "{\"a\":{\"b\":{}"}) {
    INFO(text);
    CHECK(json::check(text).error().offset == text.size());
  }
}

TEST_CASE("json bad input: invalid UTF-8 is located") {
  std::string text = "{\"name\": \"ok\", \"bad\": \"\xc3\x28\"}";
  auto r = json::check(text);
  REQUIRE_FALSE(r);
  CHECK(r.code() == error_code::INVALID_UTF8);
  CHECK(r.error().offset == text.find('\xc3'));
}

TEST_CASE("json bad input: a 100,000-deep array stops at max_depth") {
  std::string deep(100000, '[');
  deep.append(100000, ']');
  auto r = json::check(deep);
  REQUIRE_FALSE(r);
  CHECK(r.code() == error_code::MAX_DEPTH_EXCEEDED);
  CHECK(r.error().offset == json::limits::DEFAULT_MAX_DEPTH);
  json::limits lim;
  lim.max_depth = 10;
  CHECK(json::parse("[[[[[[[[[[1]]]]]]]]]]", lim));
  CHECK(json::parse("[[[[[[[[[[[1]]]]]]]]]]]", lim).code() == error_code::MAX_DEPTH_EXCEEDED);
  // A caller's huge limit is capped so the stack cannot overflow.
  lim.max_depth = 1u << 30;
  CHECK(json::check(deep, lim).code() == error_code::MAX_DEPTH_EXCEEDED);
}

TEST_CASE("json bad input: a number of a million digits is kept exactly") {
  std::string big = "[" + std::string(1000000, '7') + "]";
  auto doc = json::parse(big);
  REQUIRE(doc);
  CHECK(doc->root().get_array()->at(0)->get_number_text()->size() == 1000000);
  CHECK(doc->root().get_array()->at(0)->get_int64().code() == error_code::OUT_OF_RANGE);
  std::string bad = "[" + std::string(1000000, '7') + "x]";
  CHECK(json::check(bad).code() == error_code::INVALID_NUMBER);
}

TEST_CASE("json bad input: max_document_bytes") {
  json::limits lim;
  lim.max_document_bytes = 8;
  auto r = json::check(std::string_view("[1,2,3,4,5]"), lim);
  CHECK(r.code() == error_code::DOCUMENT_TOO_LARGE);
  CHECK(json::check(std::string_view("[1,2,3]"), lim));
}

TEST_CASE("json bad input: an empty input") {
  CHECK(json::parse("").code() == error_code::EMPTY_INPUT);
  CHECK(json::parse("\n\t ").code() == error_code::EMPTY_INPUT);
}

TEST_CASE("json bad input: control characters and bad escapes in strings") {
  CHECK(json::check(std::string_view("[\"a\tb\"]")).code() == error_code::INVALID_STRING);
  CHECK(json::check(std::string_view("[\"\\x41\"]")).code() == error_code::INVALID_STRING);
  CHECK(json::check(std::string_view(std::string("[\"a\0b\"]", 7))).code() == error_code::INVALID_STRING);
}
