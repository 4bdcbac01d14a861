// The R4 examples of the corpus (../shared/corpus/fhir-r4/examples): every one validates with zero
// errors and round-trips (write, read again, write again: same bytes; same JSON content as the
// original, numbers compared by their exact text, key order ignored). The outcome of every file
// is compared with the checked-in summary tests/data/fhir/examples_summary.tsv, which the wasm
// build and the npm package compare with too: the same results on every target.
// QUIRE_UPDATE_GOLDEN=1 rewrites the summary.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <map>
#include <set>
#include <sstream>

#include "quire/fhir.h"
#include "test_support.h"

using namespace quire;

namespace {

bool same_json(const json::value &a, const json::value &b, std::string &where) {
  if (a.type() != b.type()) {
    where = "kind differs";
    return false;
  }
  switch (a.type()) {
    case json::kind::null_value: return true;
    case json::kind::boolean: return a.get_bool().value() == b.get_bool().value();
    case json::kind::number:
      if (a.get_number_text().value() != b.get_number_text().value()) {
        where =
            "number " + std::string(a.get_number_text().value()) + " vs " + std::string(b.get_number_text().value());
        return false;
      }
      return true;
    case json::kind::string:
      if (a.get_string().value() != b.get_string().value()) {
        where = "string differs";
        return false;
      }
      return true;
    case json::kind::array: {
      auto x = a.get_array().value(), y = b.get_array().value();
      if (x.size() != y.size()) return false;
      auto i = x.begin(), j = y.begin();
      for (; i != x.end(); ++i, ++j) {
        if (!same_json(*i, *j, where)) return false;
      }
      return true;
    }
    case json::kind::object: {
      auto x = a.get_object().value(), y = b.get_object().value();
      if (x.size() != y.size()) {
        where = "member count differs";
        return false;
      }
      for (auto m : x) {
        auto other = y.find(m.key);
        if (!other || !same_json(m.val, *other, where)) {
          where = std::string(m.key) + ": " + where;
          return false;
        }
      }
      return true;
    }
  }
  return false;
}

uint64_t fnv1a(std::string_view s) {
  uint64_t h = 14695981039346656037ull;  // FNV-1a 64 offset basis
  for (unsigned char c : s) {
    h ^= c;
    h *= 1099511628211ull;
  }
  return h;
}

std::string hex(uint64_t v) {
  char buf[17];
  std::snprintf(buf, sizeof buf, "%016llx", static_cast<unsigned long long>(v));
  return buf;
}

}  // namespace

TEST_CASE("fhir conformance: every R4 example validates and round-trips", "[fhir][conformance]") {
  auto corpus = quire_test::corpus_dir();
  auto dir = corpus / "fhir-r4" / "examples";
  std::vector<std::filesystem::path> files;
  for (const auto &e : std::filesystem::directory_iterator(dir)) {
    if (e.path().extension() == ".json") files.push_back(e.path());
  }
  std::sort(files.begin(), files.end());
  REQUIRE(files.size() > 500);

  // Known failures: examples that genuinely break the base specification (with the reason).
  std::set<std::string> known;
  {
    std::istringstream in(quire_test::read_text(quire_test::data_dir() / "fhir" / "examples_known_failures.tsv"));
    std::string line;
    while (std::getline(in, line)) {
      if (line.empty() || line[0] == '#') continue;
      known.insert(line.substr(0, line.find('\t')));
    }
  }

  std::ostringstream summary;
  summary << "# file\terrors\twarnings\tissues\tcompact_fnv1a\tpretty_fnv1a\n";
  size_t valid = 0, round_tripped = 0, known_failed = 0;
  std::vector<std::string> failures;
  for (const auto &file : files) {
    std::string name = file.filename().string();
    std::string text = quire_test::read_text(file);
    auto r = fhir::read(text);
    if (!r) {
      failures.push_back(name + ": " + r.error().describe());
      summary << name << "\tREAD_ERROR\t" << error_name(r.code()) << "\t0\t-\t-\n";
      continue;
    }
    const auto &o = r->outcome();
    if (o.errors == 0) {
      ++valid;
    } else if (known.count(name)) {
      ++known_failed;
    } else {
      failures.push_back(name + ": " + std::to_string(o.errors) + " errors, first: " + o.issues[0].expression + ": " +
                         o.issues[0].details);
    }
    std::string compact = fhir::write(*r);
    std::string pretty = fhir::write(*r, {.pretty = true});
    auto again = fhir::read(compact);
    auto original = json::parse(text);
    auto pretty_again = json::parse(pretty);
    std::string where;
    bool ok = again && original && pretty_again && fhir::write(*again) == compact &&
              fhir::write(*again, {.pretty = true}) == pretty && same_json(original->root(), again->root(), where) &&
              same_json(original->root(), pretty_again->root(), where) && again->outcome().errors == o.errors;
    if (ok) ++round_tripped;
    else failures.push_back(name + ": round trip differs " + where);
    summary << name << '\t' << o.errors << '\t' << o.warnings << '\t' << o.issues.size() << '\t' << hex(fnv1a(compact))
            << '\t' << hex(fnv1a(pretty)) << '\n';
  }
  for (const auto &f : failures) UNSCOPED_INFO(f);
  std::printf("fhir conformance: %zu examples, %zu valid, %zu known failures, %zu round-tripped, %zu problems\n",
              files.size(), valid, known_failed, round_tripped, failures.size());
  CHECK(failures.empty());
  CHECK(round_tripped == files.size());

  auto golden_path = quire_test::data_dir() / "fhir" / "examples_summary.tsv";
  if (const char *update = std::getenv("QUIRE_UPDATE_GOLDEN"); update && *update == '1') {
    std::ofstream(golden_path, std::ios::binary) << summary.str();
  }
  CHECK(summary.str() == quire_test::read_text(golden_path));
}
