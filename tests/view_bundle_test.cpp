// One Bundle walk: over NDJSON of the corpus's official examples where some lines are Bundles,
// every C++ entry point of a view (runner::run, run_text, run_ndjson on one thread and on
// several, ndjson_feeder, table_writer's add_resource and feed_ndjson into NDJSON, CSV and
// .quire) gives the same rows: a Bundle's entries' resources, unless the view is over Bundle.
#include <catch2/catch.hpp>

#include <algorithm>
#include <filesystem>
#include <string>
#include <vector>

#include "quire/format.h"
#include "quire/json.h"
#include "quire/platform.h"
#include "quire/view.h"
#include "test_support.h"

using namespace quire;

namespace {

const char *const OBSERVATION_VIEW = R"({"resource":"Observation","select":[{"column":[
  {"name":"id","path":"id"},{"name":"status","path":"status"},
  {"name":"subject","path":"subject.reference"},{"name":"code","path":"code.coding.code","collection":true}]}]})";

// The Observation, Patient and Bundle examples as NDJSON, one a line (a pretty-printed file's line
// ends are whitespace between tokens: JSON strings hold none), in name order. Empty without the corpus.
std::string examples_ndjson(size_t &bundles) {
  bundles = 0;
  const auto dir = quire_test::corpus_dir() / "fhir-r4" / "examples";
  std::error_code ec;
  if (!std::filesystem::is_directory(dir, ec)) return {};
  std::vector<std::filesystem::path> files;
  for (const auto &f : std::filesystem::directory_iterator(dir)) {
    const std::string name = f.path().filename().string();
    if (name.rfind("Observation-", 0) == 0 || name.rfind("Patient-", 0) == 0 || name.rfind("Bundle-", 0) == 0)
      files.push_back(f.path());
  }
  std::sort(files.begin(), files.end());
  std::string out;
  for (const auto &f : files) {
    std::string text = quire_test::read_text(f);
    std::replace(text.begin(), text.end(), '\n', ' ');
    std::replace(text.begin(), text.end(), '\r', ' ');
    if (f.filename().string().rfind("Bundle-", 0) == 0) ++bundles;
    out += text;
    out += '\n';
  }
  return out;
}

std::string as_ndjson(const view::compiled_view &v, const std::vector<view::row> &rows) {
  std::string out;
  for (const auto &r : rows) {
    view::append_row_json(out, v, r);
    out += '\n';
  }
  return out;
}

struct written {
  std::string text;
  uint64_t rows = 0;
};

written write(const view::compiled_view &v, view::output_kind kind, const std::string &ndjson, size_t piece,
              const view::run_options &run = {}) {
  format::vector_sink sink;
  auto w = view::table_writer::create(v, kind, {}, sink, run);
  REQUIRE(w);
  for (size_t at = 0; at < ndjson.size(); at += piece) REQUIRE(w.value()->feed_ndjson(ndjson.substr(at, piece)));
  auto n = w.value()->finish();
  REQUIRE(n);
  return {std::string(sink.bytes.begin(), sink.bytes.end()), *n};
}

}  // namespace

TEST_CASE("view bundles: every entry point gives the same rows over the corpus's examples", "[view][view_bundle]") {
  size_t bundles = 0;
  const std::string ndjson = examples_ndjson(bundles);
  if (ndjson.empty()) {
    WARN("the corpus's fhir-r4/examples are missing (QUIRE_CORPUS): skipped");
    return;
  }
  REQUIRE(bundles > 10);
  auto v = view::compile(OBSERVATION_VIEW);
  REQUIRE(v);

  // Each line run on its own: the rows every entry point must give.
  std::vector<view::row> rows;
  size_t top_level = 0;  // rows of the Observations that are lines of their own
  {
    view::runner run(*v);
    size_t pos = 0;
    while (pos < ndjson.size()) {
      const size_t nl = ndjson.find('\n', pos);
      auto doc = json::parse(std::string_view(ndjson).substr(pos, nl - pos));
      REQUIRE(doc);
      const size_t before = rows.size();
      REQUIRE(run.run(doc->root(), rows));
      auto rt = doc->root().get_object().value().find("resourceType");
      if (rt && rt->get_string().value() == "Observation") top_level += rows.size() - before;
      pos = nl + 1;
    }
  }
  const std::string want = as_ndjson(*v, rows);
  // The Bundles' Observations are rows too.
  CHECK(rows.size() > top_level);
  CHECK(top_level > 10);

  SECTION("runner::run_ndjson, on one thread and on several") {
    for (unsigned threads : {1u, 2u, 3u}) {
      INFO(threads << " threads");
      view::run_options o;
      o.tasks = &default_task_runner();
      o.threads = threads;
      o.min_parallel_bytes = 0;
      view::runner run(*v, o);
      std::vector<view::row> got;
      REQUIRE(run.run_ndjson(ndjson, got));
      CHECK(as_ndjson(*v, got) == want);
    }
  }
  SECTION("runner::run_text over the NDJSON, and over each Bundle file as one document") {
    view::runner run(*v);
    std::vector<view::row> got;
    REQUIRE(run.run_text(ndjson, got));
    CHECK(as_ndjson(*v, got) == want);
    // A JSON array of the same resources.
    std::string array = "[";
    for (char c : ndjson) array += c == '\n' ? ',' : c;
    array.back() = ']';
    got.clear();
    REQUIRE(run.run_text(array, got));
    CHECK(as_ndjson(*v, got) == want);
  }
  SECTION("ndjson_feeder, in pieces of any size") {
    for (size_t piece : {size_t{1000}, size_t{65536}}) {
      view::ndjson_feeder feeder(*v);
      std::vector<view::row> got;
      for (size_t at = 0; at < ndjson.size(); at += piece) REQUIRE(feeder.feed(ndjson.substr(at, piece), got));
      REQUIRE(feeder.finish(got));
      CHECK(as_ndjson(*v, got) == want);
    }
  }
  SECTION("table_writer: NDJSON, CSV and .quire, fed NDJSON or resources") {
    CHECK(write(*v, view::output_kind::ndjson, ndjson, 4096).text == want);
    view::run_options o;
    o.tasks = &default_task_runner();
    o.threads = 2;
    o.min_parallel_bytes = 0;
    CHECK(write(*v, view::output_kind::ndjson, ndjson, ndjson.size(), o).text == want);
    const written csv = write(*v, view::output_kind::csv, ndjson, 4096);
    CHECK(static_cast<size_t>(std::count(csv.text.begin(), csv.text.end(), '\n')) == rows.size() + 1);
    CHECK(csv.rows == rows.size());
    CHECK(write(*v, view::output_kind::quire, ndjson, 4096).rows == rows.size());

    format::vector_sink sink;
    auto w = view::table_writer::create(*v, view::output_kind::ndjson, {}, sink);
    REQUIRE(w);
    size_t pos = 0;
    while (pos < ndjson.size()) {
      const size_t nl = ndjson.find('\n', pos);
      auto doc = json::parse(std::string_view(ndjson).substr(pos, nl - pos));
      REQUIRE(doc);
      REQUIRE(w.value()->add_resource(doc->root()));
      pos = nl + 1;
    }
    REQUIRE(w.value()->finish());
    CHECK(std::string(sink.bytes.begin(), sink.bytes.end()) == want);
  }
}

TEST_CASE("view bundles: a view over Bundle gets the Bundle; errors name the entry", "[view][view_bundle]") {
  const std::string bundle =
      R"({"resourceType":"Bundle","id":"b","entry":[{"resource":{"resourceType":"Patient","id":"a"}},)"
      R"({"fullUrl":"x"},{"resource":{"resourceType":"Patient","id":"c","gender":["x","y"]}}]})";
  auto over_bundle = view::compile(R"({"resource":"Bundle","select":[{"column":[{"name":"id","path":"id"}]}]})");
  REQUIRE(over_bundle);
  view::runner run_b(*over_bundle);
  std::vector<view::row> rows;
  REQUIRE(run_b.run_ndjson(bundle + "\n" + bundle, rows));
  CHECK(view::rows_to_json(*over_bundle, rows) == R"([{"id":"b"},{"id":"b"}])");

  auto patients = view::compile(R"({"resource":"Patient","select":[{"column":[{"name":"id","path":"id"},)"
                                R"({"name":"gender","path":"gender"}]}]})");
  REQUIRE(patients);
  view::runner run(*patients);
  auto doc = json::parse(bundle);
  REQUIRE(doc);
  rows.clear();
  auto e = run.run(doc->root(), rows);
  REQUIRE(e.code() == error_code::FHIRPATH_TYPE_ERROR);
  CHECK(e.error().path.rfind("Bundle.entry[2].resource", 0) == 0);
  CHECK(view::rows_to_json(*patients, rows) == R"([{"id":"a","gender":null}])");
  // run_resource runs the Bundle itself: no Patient, no rows.
  rows.clear();
  REQUIRE(run.run_resource(doc->root(), rows));
  CHECK(rows.empty());
}
