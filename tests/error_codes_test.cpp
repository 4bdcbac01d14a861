// Error codes: the one list (quire/error_list.h) maps every value to its name and back, values
// are unique and ascending, and they are the pinned ones (tests/data/error_codes.tsv), so a
// renumbering or a reused value fails here on both targets. Also error::describe(), the one
// formatter of an error line.
#include <catch2/catch.hpp>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "quire/error.h"
#include "test_support.h"

using namespace quire;

namespace {

struct pinned_code {
  unsigned value;
  std::string name;
};

std::vector<pinned_code> read_pinned() {
  std::vector<pinned_code> out;
  std::istringstream in(quire_test::read_text(quire_test::data_dir() / "error_codes.tsv"));
  std::string line;
  while (std::getline(in, line)) {
    if (line.empty() || line[0] == '#') continue;
    auto tab = line.find('\t');
    REQUIRE(tab != std::string::npos);
    out.push_back({static_cast<unsigned>(std::stoul(line.substr(0, tab))), line.substr(tab + 1)});
  }
  return out;
}

}  // namespace

TEST_CASE("errors: every code maps to its name and back, with a meaning") {
  std::set<std::string> names;
  for (error_code code : ALL_ERROR_CODES) {
    auto name = error_name(code);
    INFO("value " << static_cast<unsigned>(code));
    CHECK(name != "UNKNOWN");
    CHECK(names.insert(std::string(name)).second);
    auto back = parse_error_name(name);
    REQUIRE(back.has_value());
    CHECK(*back == code);
    CHECK_FALSE(error_meaning(code).empty());
  }
  CHECK_FALSE(parse_error_name("UNKNOWN").has_value());
  CHECK_FALSE(parse_error_name("invalid_json").has_value());
  CHECK_FALSE(parse_error_name("").has_value());
}

TEST_CASE("errors: values are unique and ascending, and a value outside the list has no name") {
  int previous = -1;
  for (error_code code : ALL_ERROR_CODES) {
    int value = static_cast<int>(code);
    CHECK(value > previous);
    previous = value;
  }
  auto beyond = static_cast<error_code>(previous + 1);
  CHECK(error_name(beyond) == "UNKNOWN");
  CHECK(error_meaning(beyond).empty());
}

TEST_CASE("errors: the values are the pinned ones (tests/data/error_codes.tsv)") {
  auto pinned = read_pinned();
  REQUIRE(pinned.size() == std::size(ALL_ERROR_CODES));
  for (size_t i = 0; i < pinned.size(); ++i) {
    INFO(pinned[i].name);
    CHECK(static_cast<unsigned>(ALL_ERROR_CODES[i]) == pinned[i].value);
    CHECK(error_name(ALL_ERROR_CODES[i]) == pinned[i].name);
  }
  // Spot checks that do not depend on the table: the first, the last of format v1, and the new ones.
  CHECK(static_cast<int>(error_code::OK) == 0);
  CHECK(static_cast<int>(error_code::IO_ERROR) == 1);
  CHECK(static_cast<int>(error_code::WRONG_KEY) == 27);
  CHECK(static_cast<int>(error_code::TOO_MANY_CONTAINED) == 31);
  CHECK(static_cast<int>(error_code::NO_SUCH_COLUMN) == 32);
  CHECK(static_cast<int>(error_code::INVALID_FHIRPATH) == 33);
  CHECK(static_cast<int>(error_code::UNKNOWN_FUNCTION) == 34);
  CHECK(static_cast<int>(error_code::FHIRPATH_TYPE_ERROR) == 35);
  CHECK(static_cast<int>(error_code::INVALID_VIEW) == 36);
}

TEST_CASE("errors: describe() writes the one error line, leaving out what is unknown") {
  CHECK(error(error_code::IO_ERROR, "").describe() == "IO_ERROR");
  CHECK(error(error_code::NO_SUCH_COLUMN, "no column 'x'").describe() == "NO_SUCH_COLUMN: no column 'x'");
  error e(error_code::INVALID_JSON, "expected a value", 7);
  CHECK(e.describe() == "INVALID_JSON at offset 7: expected a value");
  locate(e, "{\"a\":\n  ]");
  CHECK(e.describe() == "INVALID_JSON at offset 7, line 2, column 2: expected a value");
  e.path = std::string_view("entry[0].a");
  CHECK(e.describe() == "INVALID_JSON at offset 7, line 2, column 2 (entry[0].a): expected a value");
}
