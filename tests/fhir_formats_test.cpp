// The primitive format checks (fhir_formats.cpp) that test several bytes at once, against the rule
// read one character at a time.
#include <catch2/catch.hpp>

#include <string>

#include "../core/src/fhir/fhir_internal.h"
#include "test_support.h"

using namespace quire::fhir::detail;

TEST_CASE("fhir formats: urn:uuid checked eight bytes at a time, as character by character", "[fhir]") {
  // urn:uuid: then 36 characters: lowercase hex digits, '-' at places 8, 13, 18 and 23.
  auto reference = [](std::string_view s) {
    if (s.size() != 45 || s.substr(0, 9) != "urn:uuid:") return false;
    for (size_t i = 0; i < 36; ++i) {
      const char c = s[9 + i];
      const bool dash_place = i == 8 || i == 13 || i == 18 || i == 23;
      const bool ok = dash_place ? c == '-' : ((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'));
      if (!ok) return false;
    }
    return true;
  };
  quire_test::xorshift next;
  const std::string hex = "0123456789abcdef";
  // Every byte value at every place of a valid UUID: the edges of each range ('/' '0' '9' ':',
  // '`' 'a' 'f' 'g', ',' '-' '.'), uppercase, and bytes from 0x80 up, whose carries would cross
  // into the next byte of a word if they were not excluded first.
  size_t valid = 0, checked = 0;
  for (int round = 0; round < 40; ++round) {
    std::string s = "urn:uuid:";
    for (int i = 0; i < 36; ++i) s += (i == 8 || i == 13 || i == 18 || i == 23) ? '-' : hex[next() % 16];
    REQUIRE(reference(s));
    CHECK(is_valid_uuid(s));
    for (size_t place = 9; place < s.size(); ++place) {
      for (int b = 0; b < 256; b += round % 2 ? 1 : 3) {
        std::string t = s;
        t[place] = static_cast<char>(b);
        const bool want = reference(t);
        valid += want;
        ++checked;
        if (is_valid_uuid(t) != want) {
          INFO(t << " (byte " << b << " at " << place << ")");
          CHECK(is_valid_uuid(t) == want);
        }
      }
    }
    // Two bytes changed at once, anywhere, and the prefix and length.
    for (int k = 0; k < 200; ++k) {
      std::string t = s;
      t[next() % t.size()] = static_cast<char>(next() % 256);
      t[next() % t.size()] = static_cast<char>(next() % 256);
      if (k % 50 == 0) t.pop_back();
      if (k % 50 == 1) t += 'a';
      ++checked;
      if (is_valid_uuid(t) != reference(t)) {
        INFO(t);
        CHECK(is_valid_uuid(t) == reference(t));
      }
    }
  }
  CHECK(valid > 1000);
  CHECK(checked - valid > 100000);
  CHECK_FALSE(is_valid_uuid("urn:uuid:"));
  CHECK_FALSE(is_valid_uuid("urn:uuid:322F69AF-A8A7-4BEA-BCB9-71F459C962EC"));
  CHECK(is_valid_uuid("urn:uuid:322f69af-a8a7-4bea-bcb9-71f459c962ec"));
}
