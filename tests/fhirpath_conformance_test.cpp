// The FHIRPath R4 suite (../shared/corpus/fhirpath/tests-fhir-r4.json, 935 cases in 99 groups):
// each case's expression is compiled and evaluated against its input resource, and the result is
// compared with the expected collection (or the expected error). A tally per group is printed.
//
// Two checked-in files keep the figure honest:
// - tests/data/fhirpath/known_failures.tsv lists the cases that fail, each with its reason. The
//   test fails when a case fails that is not listed, and when a listed case passes.
// - tests/data/fhirpath/outcomes.tsv holds every case's outcome and a digest of its result text;
//   native and wasm both compare with it, which proves they give the same bytes.
// QUIRE_UPDATE_GOLDEN=1 rewrites outcomes.tsv (known_failures.tsv is written by hand).
#include <catch2/catch.hpp>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <sstream>

#include "quire/fhirpath.h"
#include "test_support.h"

using namespace quire;

namespace {

uint64_t fnv1a(std::string_view s) {
  uint64_t h = 1469598103934665603ULL;
  for (unsigned char c : s) {
    h ^= c;
    h *= 1099511628211ULL;
  }
  return h;
}

std::string hex(uint64_t v) {
  char buf[17];
  std::snprintf(buf, sizeof buf, "%016llx", static_cast<unsigned long long>(v));
  return buf;
}

// One result item against one expected JSON value. The suite's expected values are JSON as
// fhirpath.js prints them: numbers are compared by value (1 and 1.0 are the same number there),
// dates and quantities as their strings.
bool same_item(const fhirpath::item &got, const json::value &want) {
  auto text = fhirpath::to_json(got);
  auto doc = json::parse(text);
  if (!doc) return false;
  json::value g = doc->root();
  if (g.type() != want.type()) return false;
  switch (want.type()) {
    case json::kind::boolean: return g.get_bool().value() == want.get_bool().value();
    case json::kind::string: return g.get_string().value() == want.get_string().value();
    case json::kind::number: return g.get_double().value() == want.get_double().value();
    default: return json::to_json(g) == json::to_json(want);
  }
}

struct tally {
  size_t passed = 0, failed = 0, expected = 0;
};

}  // namespace

TEST_CASE("fhirpath conformance: the R4 suite, tallied per group", "[fhirpath][conformance]") {
  auto dir = quire_test::corpus_dir() / "fhirpath";
  auto suite_text = quire_test::read_text(dir / "tests-fhir-r4.json");
  auto suite = json::parse(suite_text);
  REQUIRE(suite);

  // group \t case index \t description \t reason
  std::map<std::string, std::string> known;
  {
    std::istringstream in(quire_test::read_text(quire_test::data_dir() / "fhirpath" / "known_failures.tsv"));
    std::string line;
    while (std::getline(in, line)) {
      if (line.empty() || line[0] == '#') continue;
      size_t a = line.find('\t');
      size_t b = line.find('\t', a + 1);
      size_t c = line.find('\t', b + 1);
      if (a == std::string::npos || b == std::string::npos) continue;
      known[line.substr(0, b)] = c == std::string::npos ? "" : line.substr(c + 1);
    }
  }

  std::map<std::string, json::document> resources;
  std::vector<std::pair<std::string, tally>> groups;
  std::vector<std::string> problems;
  std::ostringstream outcomes;
  outcomes << "# case\toutcome\tresult_fnv1a\n";
  fhirpath::evaluator ev;
  size_t total = 0;
  tally all;

  auto root = suite->root().get_object().value();
  for (json::value g : root.find("groups")->get_array().value()) {
    auto gobj = g.get_object().value();
    std::string group(gobj.find("group")->get_string().value());
    tally t;
    size_t index = 0;
    for (json::value c : gobj.find("tests")->get_array().value()) {
      ++index;
      ++total;
      auto cobj = c.get_object().value();
      std::string id = group + "\t" + std::to_string(index);
      std::string desc(cobj.find("desc")->get_string().value());
      std::string expr(cobj.find("expression")->get_string().value());
      auto err = cobj.find("error");
      bool want_error = err && err->type() == json::kind::boolean && err->get_bool().value();
      auto input = cobj.find("inputfile");

      json::value context;
      static const json::document empty_doc = json::parse("{}").value();
      context = empty_doc.root();
      if (input) {
        std::string name(input->get_string().value());
        auto it = resources.find(name);
        if (it == resources.end()) {
          auto d = json::parse(quire_test::read_text(dir / "resources" / name));
          REQUIRE(d);
          it = resources.emplace(name, std::move(d).value()).first;
        }
        context = it->second.root();
      }

      std::string result_text;
      bool ok;
      auto compiled = fhirpath::compile(expr);
      if (!compiled) {
        result_text =
            "error:" + std::string(error_name(compiled.code())) + "@" + std::to_string(compiled.error().offset);
        ok = want_error;
      } else {
        // The suite's now() and today() cases compare with dates long past: any fixed time will do.
        fhirpath::environment env;
        env.now = fhirpath::clock_reading{1767323045678, 0};  // 2026-01-02T03:04:05.678Z
        auto r = ev.evaluate(*compiled, context, env);
        if (!r) {
          result_text = "error:" + std::string(error_name(r.code())) + "@" + std::to_string(r.error().offset);
          ok = want_error;
        } else {
          result_text = fhirpath::to_json(**r);
          ok = false;
          if (!want_error) {
            auto want = cobj.find("result");
            if (want && want->type() == json::kind::array) {
              auto arr = want->get_array().value();
              const auto &got = **r;
              ok = arr.size() == got.size();
              size_t i = 0;
              for (json::value w : arr) {
                if (!ok) break;
                ok = same_item(got[i++], w);
              }
            }
          }
        }
      }
      bool listed = known.count(id) > 0;
      if (ok) {
        ++t.passed;
        if (listed) problems.push_back("listed as a known failure but passes: " + id + " " + desc + " `" + expr + "`");
      } else if (listed) {
        ++t.expected;
      } else {
        ++t.failed;
        problems.push_back("fails: " + id + "\t" + desc + "\t`" + expr + "` gave " + result_text);
      }
      // now() and today() change from run to run: their cases keep only the outcome.
      bool clock = expr.find("now()") != std::string::npos || expr.find("today()") != std::string::npos ||
                   expr.find("timeOfDay()") != std::string::npos;
      outcomes << group << '/' << index << '\t' << (ok ? "pass" : "fail") << '\t'
               << (clock ? std::string("clock") : hex(fnv1a(result_text))) << '\n';
    }
    all.passed += t.passed;
    all.failed += t.failed;
    all.expected += t.expected;
    groups.emplace_back(group, t);
  }

  std::printf("fhirpath conformance (%s): group, passed, failed, known failures\n",
#ifdef __EMSCRIPTEN__
              "wasm"
#else
              "native"
#endif
  );
  for (const auto &[name, t] : groups)
    std::printf("  %-40s %4zu %4zu %4zu\n", name.c_str(), t.passed, t.failed, t.expected);
  std::printf("fhirpath conformance: %zu cases in %zu groups: %zu passed, %zu failed, %zu known failures\n", total,
              groups.size(), all.passed, all.failed, all.expected);
  for (const auto &p : problems) std::printf("  %s\n", p.c_str());
  CHECK(total == 935);
  CHECK(problems.empty());

  auto golden_path = quire_test::data_dir() / "fhirpath" / "outcomes.tsv";
  if (const char *update = std::getenv("QUIRE_UPDATE_GOLDEN"); update && *update == '1') {
    std::ofstream(golden_path, std::ios::binary) << outcomes.str();
  }
  CHECK(outcomes.str() == quire_test::read_text(golden_path));
}
