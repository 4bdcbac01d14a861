// The SQL on FHIR v2 suite (../shared/corpus/sql-on-fhir/tests, 113 cases in 18 files, and the
// suite's files the corpus lacks, tests/data/view/beyond: fn_join.json's 3 experimental cases): each
// case's view is compiled and run over its file's resources (those of another resourceType give
// no rows), and the rows are compared with `expect` (as a multiset: the specification leaves row
// order to the runner; numbers by value, a missing key the same as null), `expectColumns` (the
// column names, in order) or `expectError` (compiling or running fails). A tally per file is
// printed.
//
// Three checked-in files keep the figure honest:
// - tests/data/view/known_failures.tsv lists the cases that fail (file, title, reason). The test
//   fails when a case fails that is not listed, and when a listed case passes.
// - tests/data/view/test_report.json: the outcomes in the suite's test-report format.
// - tests/data/view/digests.tsv: per case, a digest of its rows' JSON text (or of its error code).
// Native and wasm both compare their regenerated report and digests with the checked-in ones,
// which proves they give the same rows. QUIRE_UPDATE_VIEW_REPORT=1 rewrites both.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>

#include "quire/number_text.h"
#include "quire/view.h"
#include "test_support.h"

using namespace quire;

namespace {

uint64_t digest(std::string_view s) {
  uint64_t h = 1469598103934665603ULL;
  for (unsigned char c : s) {
    h ^= c;
    h *= 1099511628211ULL;
  }
  return h;
}

std::string hex16(uint64_t v) {
  char buf[17];
  std::snprintf(buf, sizeof buf, "%016llx", static_cast<unsigned long long>(v));
  return buf;
}

// A JSON value in a form where equal values give equal text: object keys sorted, null members
// left out, numbers by value.
void canonical(const json::value &v, std::string &out) {
  switch (v.type()) {
    case json::kind::number: append_double(out, v.get_double().value()); break;
    case json::kind::array: {
      out += '[';
      bool first = true;
      for (json::value e : v.get_array().value()) {
        if (!first) out += ',';
        first = false;
        canonical(e, out);
      }
      out += ']';
      break;
    }
    case json::kind::object: {
      std::vector<std::pair<std::string, std::string>> members;
      for (auto [k, e] : v.get_object().value()) {
        if (e.is_null()) continue;
        std::string text;
        canonical(e, text);
        members.emplace_back(std::string(k), std::move(text));
      }
      std::sort(members.begin(), members.end());
      out += '{';
      for (size_t i = 0; i < members.size(); ++i) {
        if (i) out += ',';
        json::append_quoted(out, members[i].first);
        out += ':';
        out += members[i].second;
      }
      out += '}';
      break;
    }
    default: out += json::to_json(v);
  }
}

std::vector<std::string> canonical_rows(const json::value &arr) {
  std::vector<std::string> out;
  for (json::value r : arr.get_array().value()) {
    std::string t;
    canonical(r, t);
    out.push_back(std::move(t));
  }
  std::sort(out.begin(), out.end());
  return out;
}

struct file_tally {
  size_t passed = 0, failed = 0, known = 0;
};

}  // namespace

TEST_CASE("view conformance: the SQL on FHIR v2 suite, tallied per file", "[view][conformance]") {
  // The corpus's copy of the suite, then the suite's files it lacks (tests/data/view/beyond).
  std::vector<std::filesystem::path> files;
  for (const auto &dir :
       {quire_test::corpus_dir() / "sql-on-fhir" / "tests", quire_test::data_dir() / "view" / "beyond"}) {
    std::vector<std::filesystem::path> here;
    for (const auto &e : std::filesystem::directory_iterator(dir)) {
      if (e.path().extension() == ".json") here.push_back(e.path());
    }
    REQUIRE(!here.empty());
    std::sort(here.begin(), here.end());
    files.insert(files.end(), here.begin(), here.end());
  }

  // file \t title \t reason
  std::map<std::string, std::string> known;
  {
    std::istringstream in(quire_test::read_text(quire_test::data_dir() / "view" / "known_failures.tsv"));
    std::string line;
    while (std::getline(in, line)) {
      if (line.empty() || line[0] == '#') continue;
      size_t a = line.find('\t');
      size_t b = a == std::string::npos ? a : line.find('\t', a + 1);
      if (b == std::string::npos) continue;
      known[line.substr(0, b)] = line.substr(b + 1);
    }
  }

  std::string report = "{\n";
  std::string digests = "# file\ttitle\toutcome\trows_fnv1a (of the rows' JSON text, or of the error code)\n";
  std::vector<std::pair<std::string, file_tally>> tallies;
  std::vector<std::string> problems;
  file_tally all;
  size_t total = 0;

  for (size_t fi = 0; fi < files.size(); ++fi) {
    std::string fname = files[fi].filename().string();
    auto text = quire_test::read_text(files[fi]);
    auto doc = json::parse(text);
    REQUIRE(doc);
    auto root = doc->root().get_object().value();
    std::vector<json::value> resources;
    for (json::value r : root.find("resources")->get_array().value()) resources.push_back(r);
    file_tally t;
    if (fi) report += ",\n";
    report += "  ";
    json::append_quoted(report, fname);
    report += ": {\"tests\": [";
    size_t ci = 0;
    for (json::value c : root.find("tests")->get_array().value()) {
      ++total;
      auto cobj = c.get_object().value();
      std::string title(cobj.find("title")->get_string().value());
      std::string view_text = json::to_json(*cobj.find("view"));
      auto want_error = cobj.find("expectError");
      auto want_rows = cobj.find("expect");
      auto want_columns = cobj.find("expectColumns");

      std::string got_text;  // what the digest is of
      std::string why;       // why it failed
      bool ok = false;
      auto v = view::compile(view_text);
      std::vector<view::row> rows;
      if (!v) {
        got_text = "error:" + std::string(error_name(v.code()));
        why = v.error().describe();
        ok = want_error.has_value();
      } else {
        view::runner run(*v);
        result<void> status;
        for (const auto &r : resources) {
          status = run.run(r, rows);
          if (!status) break;
        }
        if (!status) {
          got_text = "error:" + std::string(error_name(status.code()));
          why = status.error().describe();
          ok = want_error.has_value();
        } else {
          got_text = view::rows_to_json(*v, rows);
          if (want_error) {
            why = "no error; rows " + got_text;
          } else if (want_columns) {
            std::vector<std::string> names, wanted;
            for (const auto &col : v->columns()) names.push_back(col.name);
            for (json::value n : want_columns->get_array().value()) wanted.emplace_back(n.get_string().value());
            ok = names == wanted;
            if (!ok) why = "other columns";
          } else if (want_rows) {
            auto got_doc = json::parse(got_text);
            REQUIRE(got_doc);
            ok = canonical_rows(got_doc->root()) == canonical_rows(*want_rows);
            if (!ok) why = "rows " + got_text;
          }
        }
      }
      std::string id = fname + "\t" + title;
      bool listed = known.count(id) > 0;
      if (ok) {
        ++t.passed;
        if (listed) problems.push_back("listed as a known failure but passes: " + id);
      } else if (listed) {
        ++t.known;
      } else {
        ++t.failed;
        problems.push_back("fails: " + id + ": " + why);
      }
      report += ci++ ? ",\n    " : "\n    ";
      report += "{\"name\": ";
      json::append_quoted(report, title);
      report += ", \"result\": {\"passed\": ";
      report += ok ? "true" : "false";
      if (!ok) {
        report += ", \"reason\": ";
        json::append_quoted(report, listed ? known[id] : std::string("unexpected failure"));
      }
      report += "}}";
      digests += fname + "\t" + title + "\t" + (ok ? "pass" : "fail") + "\t" + hex16(digest(got_text)) + "\n";
    }
    report += "\n  ]}";
    all.passed += t.passed;
    all.failed += t.failed;
    all.known += t.known;
    tallies.emplace_back(fname, t);
  }
  report += "\n}\n";

  const char *target =
#ifdef __EMSCRIPTEN__
      "wasm";
#else
      "native";
#endif
  std::printf("view conformance (%s): file, passed, failed, known failures\n", target);
  for (const auto &[name, t] : tallies)
    std::printf("  %-24s %4zu %4zu %4zu\n", name.c_str(), t.passed, t.failed, t.known);
  std::printf("view conformance (%s): %zu cases in %zu files: %zu passed, %zu failed, %zu known failures\n", target,
              total, tallies.size(), all.passed, all.failed, all.known);
  for (const auto &p : problems) UNSCOPED_INFO(p);
  CHECK(problems.empty());

  auto report_path = quire_test::data_dir() / "view" / "test_report.json";
  auto digests_path = quire_test::data_dir() / "view" / "digests.tsv";
  const char *update = std::getenv("QUIRE_UPDATE_VIEW_REPORT");
  if (update && std::string_view(update) == "1") {
    std::ofstream(report_path, std::ios::binary) << report;
    std::ofstream(digests_path, std::ios::binary) << digests;
    WARN("rewrote tests/data/view/test_report.json and digests.tsv");
  } else {
    CHECK(quire_test::read_text(report_path) == report);
    CHECK(quire_test::read_text(digests_path) == digests);
  }
}
