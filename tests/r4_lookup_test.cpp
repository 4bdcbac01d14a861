// The r4 lookups by hash (r4_lookup.cpp) against a plain scan of the generated tables: every
// resource type and every code of every value set found, and the near misses (a byte changed,
// added or dropped, another set's codes, other types' names) not.
#include <catch2/catch.hpp>

#include <string>
#include <vector>

#include "../core/src/r4/r4_tables.h"

using namespace quire::r4;

namespace {

uint16_t scan_resource_type(std::string_view name) {
  for (size_t r = 0; r < RESOURCE_TYPE_COUNT; ++r)
    if (TYPES[RESOURCE_TYPES[r]].name.view() == name) return RESOURCE_TYPES[r];
  return NO_TYPE;
}

bool scan_code(int32_t set, std::string_view code) {
  const code_set_def &c = CODE_SETS[set];
  for (uint32_t k = 0; k < c.count; ++k)
    if (CODES[c.first + k].view() == code) return true;
  return false;
}

// The text itself and its near misses.
std::vector<std::string> variants(std::string_view text) {
  std::vector<std::string> out{std::string(text), std::string(text) + "x", std::string(text) + " ", ""};
  if (!text.empty()) {
    out.emplace_back(text.substr(1));
    out.emplace_back(text.substr(0, text.size() - 1));
    for (size_t i = 0; i < text.size(); ++i) {
      std::string t(text);
      t[i] = static_cast<char>(t[i] ^ 0x20);  // case flipped, or another character
      out.push_back(t);
      t[i] = static_cast<char>(t[i] ^ 0x21);
      out.push_back(t);
    }
  }
  return out;
}

}  // namespace

TEST_CASE("r4 lookups: resource types by hash, as a scan of the table finds them", "[fhir]") {
  size_t found = 0, checked = 0;
  for (size_t t = 0; t < TYPE_COUNT; ++t) {
    for (const std::string &name : variants(TYPES[t].name.view())) {
      const uint16_t want = scan_resource_type(name);
      ++checked;
      found += want != NO_TYPE;
      if (find_resource_type(name) != want) {
        INFO(name);
        CHECK(find_resource_type(name) == want);
      }
    }
  }
  CHECK(found >= RESOURCE_TYPE_COUNT);
  CHECK(checked > 10000);
  CHECK(find_resource_type("Patient") != NO_TYPE);
  CHECK(find_resource_type("HumanName") == NO_TYPE);  // a data type, not a resource
  CHECK(find_resource_type("Patient.contact") == NO_TYPE);
}

TEST_CASE("r4 lookups: value sets' codes by hash, as a scan of the table finds them", "[fhir]") {
  size_t in = 0, checked = 0;
  for (size_t s = 0; s < CODE_SET_COUNT; ++s) {
    const auto set = static_cast<int32_t>(s);
    const code_set_def &c = CODE_SETS[s];
    for (uint32_t k = 0; k < c.count; ++k) {
      for (const std::string &code : variants(CODES[c.first + k].view())) {
        const bool want = scan_code(set, code);
        ++checked;
        in += want;
        if (code_in_set(set, code) != want) {
          INFO(code << " in set " << s);
          CHECK(code_in_set(set, code) == want);
        }
        // The same text asked of the next set: a code of one set is not in another unless listed.
        const auto other = static_cast<int32_t>((s + 1) % CODE_SET_COUNT);
        if (code_in_set(other, code) != scan_code(other, code)) {
          INFO(code << " in set " << other);
          CHECK(code_in_set(other, code) == scan_code(other, code));
        }
      }
    }
  }
  CHECK(in > 1000);
  CHECK(checked > 10000);
  CHECK(code_in_set(-1, "anything"));  // no set: nothing to check
}
