// JSONTestSuite (../shared/corpus/json-test-suite/test_parsing): every y_ file accepted, every n_
// file rejected with a typed error, and every file's outcome equal to the checked-in table
// tests/data/json/json_test_suite_outcomes.tsv — which is how both targets are held to identical
// outcomes, i_ files included. QUIRE_WRITE_OUTCOMES=1 rewrites the table.
#include <algorithm>
#include <catch2/catch.hpp>
#include <cstdio>
#include <fstream>
#include <map>
#include <sstream>

#include "quire/json.h"
#include "test_support.h"

using namespace quire;

TEST_CASE("json conformance: JSONTestSuite") {
  auto corpus = quire_test::corpus_dir();
  auto dir = corpus / "json-test-suite" / "test_parsing";
  std::vector<std::filesystem::path> files;
  for (const auto &e : std::filesystem::directory_iterator(dir)) {
    if (e.path().extension() == ".json") files.push_back(e.path());
  }
  std::sort(files.begin(), files.end());
  REQUIRE(files.size() == 318);

  auto table_path = quire_test::data_dir() / "json" / "json_test_suite_outcomes.tsv";
  std::map<std::string, std::string> expected;
  {
    std::istringstream in(quire_test::read_text(table_path));
    std::string line;
    while (std::getline(in, line)) {
      if (line.empty() || line[0] == '#') continue;
      auto tab = line.find('\t');
      expected[line.substr(0, tab)] = line.substr(tab + 1);
    }
  }

  int y_total = 0, y_ok = 0, n_total = 0, n_ok = 0, i_total = 0, i_accepted = 0, same = 0;
  std::string table =
      "# file\toutcome (accept, or the error code) — JSONTestSuite test_parsing, identical on native and wasm\n";
  for (const auto &path : files) {
    std::string name = path.filename().string();
    std::string bytes = quire_test::read_text(path);
    auto checked = json::check(bytes);
    auto parsed = json::parse(bytes);
    INFO(name);
    CHECK(checked.code() == parsed.code());  // both walks agree
    std::string outcome = checked ? "accept" : std::string(error_name(checked.code()));
    table += name + "\t" + outcome + "\n";
    if (name[0] == 'y') {
      ++y_total;
      y_ok += checked.ok();
      CHECK(checked.ok());
    } else if (name[0] == 'n') {
      ++n_total;
      n_ok += !checked.ok();
      CHECK_FALSE(checked.ok());
    } else {
      ++i_total;
      i_accepted += checked.ok();
    }
    auto it = expected.find(name);
    if (it != expected.end() && it->second == outcome) ++same;
    else if (!std::getenv("QUIRE_WRITE_OUTCOMES"))
      FAIL_CHECK(name << ": outcome " << outcome << ", table says " << (it == expected.end() ? "nothing" : it->second));
  }
  if (std::getenv("QUIRE_WRITE_OUTCOMES")) { std::ofstream(table_path) << table; }
  std::printf(
      "JSONTestSuite: y_ %d/%d accepted, n_ %d/%d rejected, i_ %d (%d accepted, %d rejected); %d/%zu outcomes as in "
      "the table\n",
      y_ok, y_total, n_ok, n_total, i_total, i_accepted, i_total - i_accepted, same, files.size());
  CHECK(y_total == 95);
  CHECK(n_total == 188);
}
