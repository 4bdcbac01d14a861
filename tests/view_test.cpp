// quire::view: validation errors with their place in the view, limits, the rows' JSON text, and
// running over Bundles and NDJSON.
#include <catch2/catch.hpp>

#include <cstdio>
#include <string>

#include "quire/format.h"
#include "quire/view.h"
#include "test_support.h"

using namespace quire;

namespace {

error compile_error(const std::string &text, const view::limits &lim = {}) {
  auto v = view::compile(text, lim);
  REQUIRE_FALSE(v);
  return v.error();
}

std::string run_json(const std::string &view_text, const std::string &resource) {
  auto v = view::compile(view_text);
  REQUIRE(v);
  auto doc = json::parse(resource);
  REQUIRE(doc);
  view::runner run(*v);
  std::vector<view::row> rows;
  auto ok = run.run(doc->root(), rows);
  REQUIRE(ok);
  return view::rows_to_json(*v, rows);
}

const char *PATIENT =
    R"({"resourceType":"Patient","id":"pt1","name":[{"family":"Smith","given":["A","B"]},{"family":"Jones"}]})";

}  // namespace

TEST_CASE("view: validation errors name their place in the view", "[view]") {
  auto e = compile_error(R"({"select":[{"column":[{"name":"id","path":"id"}]}]})");
  CHECK(e.code == error_code::INVALID_VIEW);
  CHECK(e.path == "resource");

  e = compile_error(
      R"({"resource":"Patient","select":[{"column":[{"name":"id","path":"id"}]},{"column":[{"name":"a","path":"id"},{"name":"1bad","path":"id"}]}]})");
  CHECK(e.code == error_code::INVALID_VIEW);
  CHECK(e.path == "select[1].column[1].name");

  e = compile_error(
      R"({"resource":"Patient","select":[{"column":[{"name":"id","path":"id"},{"name":"id","path":"name"}]}]})");
  CHECK(e.code == error_code::INVALID_VIEW);
  CHECK(e.message.find("used twice") != std::string::npos);

  e = compile_error(
      R"({"resource":"Patient","select":[{"unionAll":[{"column":[{"name":"a","path":"id"}]},{"column":[{"name":"b","path":"id"}]}]}]})");
  CHECK(e.code == error_code::INVALID_VIEW);
  CHECK(e.path == "select[0].unionAll[1]");

  e = compile_error(
      R"({"resource":"Patient","select":[{"forEach":"name.nosuch() ","column":[{"name":"a","path":"id"}]}]})");
  CHECK(e.code == error_code::UNKNOWN_FUNCTION);
  CHECK(e.path == "select[0].forEach");

  e = compile_error(R"({"resource":"Patient","select":[{"column":[{"name":"a","path":"@@"}]}]})");
  CHECK(e.code == error_code::INVALID_FHIRPATH);
  CHECK(e.path == "select[0].column[0].path");

  e = compile_error(
      R"({"resource":"Patient","constant":[{"name":"x"}],"select":[{"column":[{"name":"a","path":"id"}]}]})");
  CHECK(e.code == error_code::INVALID_VIEW);
  CHECK(e.path == "constant[0]");

  e = compile_error(R"({"resource":"Patient","select":[{"forEach":1,"column":[{"name":"a","path":"id"}]}]})");
  CHECK(e.code == error_code::INVALID_VIEW);
  CHECK(e.path == "select[0].forEach");

  e = compile_error(
      R"({"resource":"Patient","where":[{"path":"name.("}],"select":[{"column":[{"name":"a","path":"id"}]}]})");
  CHECK(e.path == "where[0].path");
}

TEST_CASE("view: rows as JSON, keys in column order, nested selects after columns", "[view]") {
  std::string v =
      R"({"resource":"Patient","select":[{"select":[{"forEach":"name","column":[{"name":"family","path":"family"},{"name":"i","path":"%rowIndex"}]}],"column":[{"name":"id","path":"id"}]},{"column":[{"name":"given","path":"name.given","collection":true}]}]})";
  CHECK(
      run_json(v, PATIENT) ==
      R"([{"id":"pt1","family":"Smith","i":0,"given":["A","B"]},{"id":"pt1","family":"Jones","i":1,"given":["A","B"]}])");
  // Another resource type gives no rows.
  CHECK(run_json(v, R"({"resourceType":"Observation","id":"o"})") == "[]");
  // forEachOrNull over nothing gives one row of nulls.
  CHECK(
      run_json(
          R"({"resource":"Patient","select":[{"column":[{"name":"id","path":"id"}]},{"forEachOrNull":"contact","column":[{"name":"c","path":"name.family"}]}]})",
          PATIENT) == R"([{"id":"pt1","c":null}])");
}

TEST_CASE("view: run-time errors", "[view]") {
  auto v = view::compile(R"({"resource":"Patient","select":[{"column":[{"name":"f","path":"name.family"}]}]})");
  REQUIRE(v);
  auto doc = json::parse(PATIENT);
  REQUIRE(doc);
  view::runner run(*v);
  std::vector<view::row> rows;
  auto r = run.run(doc->root(), rows);
  CHECK(r.code() == error_code::FHIRPATH_TYPE_ERROR);
  CHECK(r.error().path == "select[0].column[0].path");

  auto w = view::compile(
      R"({"resource":"Patient","where":[{"path":"name.family"}],"select":[{"column":[{"name":"id","path":"id"}]}]})");
  REQUIRE(w);
  view::runner run_w(*w);
  r = run_w.run(doc->root(), rows);
  CHECK(r.code() == error_code::FHIRPATH_TYPE_ERROR);
  CHECK(r.error().path == "where[0].path");
}

TEST_CASE("view: limits bound rows, repeat depth, select nesting and expression depth", "[view]") {
  view::limits lim;
  lim.max_rows_per_resource = 3;
  auto v = view::compile(
      R"({"resource":"Patient","select":[{"forEach":"name","column":[{"name":"a","path":"family"}]},{"forEach":"name.given","column":[{"name":"b","path":"$this"}]}]})",
      lim);
  REQUIRE(v);
  auto doc = json::parse(PATIENT);
  REQUIRE(doc);
  std::vector<view::row> rows;
  {
    view::runner run(*v);
    CHECK(run.run(doc->root(), rows).code() == error_code::RESULT_TOO_LARGE);  // 2 × 2 rows > 3
  }

  // A repeat deeper than max_repeat_depth.
  std::string deep = R"({"resourceType":"Questionnaire","id":"q")";
  std::string tail;
  for (int i = 0; i < 20; ++i) {
    deep += R"(,"item":[{"linkId":"x")";
    tail += "}]";
  }
  deep += tail + "}";
  view::limits shallow;
  shallow.max_repeat_depth = 10;
  auto rv = view::compile(
      R"({"resource":"Questionnaire","select":[{"repeat":["item"],"column":[{"name":"l","path":"linkId"}]}]})",
      shallow);
  REQUIRE(rv);
  auto qdoc = json::parse(deep);
  REQUIRE(qdoc);
  {
    view::runner run(*rv);
    rows.clear();
    auto r = run.run(qdoc->root(), rows);
    CHECK(r.code() == error_code::MAX_DEPTH_EXCEEDED);
    CHECK(r.error().path == "select[0].repeat");
  }
  {
    auto rv2 = view::compile(
        R"({"resource":"Questionnaire","select":[{"repeat":["item"],"column":[{"name":"l","path":"linkId"}]}]})");
    REQUIRE(rv2);
    view::runner run(*rv2);
    rows.clear();
    CHECK(run.run(qdoc->root(), rows));
    CHECK(rows.size() == 20);
  }

  // Selects nested beyond max_select_depth.
  std::string nested = R"({"resource":"Patient","select":[)";
  std::string close;
  for (int i = 0; i < 100; ++i) {
    nested += R"({"select":[)";
    close += "]}";
  }
  nested += R"({"column":[{"name":"a","path":"id"}]})" + close + "]}";
  auto e = compile_error(nested);
  CHECK(e.code == error_code::MAX_DEPTH_EXCEEDED);

  // A 10,000-deep expression inside a view: a typed error naming the column, no crash.
  std::string expr;
  for (int i = 0; i < 10000; ++i) expr += "(";
  expr += "1";
  for (int i = 0; i < 10000; ++i) expr += ")";
  e = compile_error(R"({"resource":"Patient","select":[{"column":[{"name":"a","path":")" + expr + R"("}]}]})");
  CHECK(e.code == error_code::MAX_DEPTH_EXCEEDED);
  CHECK(e.path == "select[0].column[0].path");
  std::string chain = "id";
  for (int i = 0; i < 10000; ++i) chain += ".a";  // 20 kB: under max_expression_bytes, so depth is what stops it
  e = compile_error(R"({"resource":"Patient","select":[{"column":[{"name":"a","path":")" + chain + R"("}]}]})");
  CHECK(e.code == error_code::MAX_DEPTH_EXCEEDED);
  CHECK(e.path == "select[0].column[0].path");
}

TEST_CASE("view: Bundles and NDJSON, skipping other resource types", "[view]") {
  auto v = view::compile(
      R"({"resource":"Patient","constant":[{"name":"u","valueString":"x"}],"select":[{"column":[{"name":"id","path":"id"},{"name":"k","path":"%u"}]}]})");
  REQUIRE(v);
  view::runner run(*v);
  std::vector<view::row> rows;
  auto b = json::parse(
      R"({"resourceType":"Bundle","entry":[{"resource":{"resourceType":"Patient","id":"a"}},{"resource":{"resourceType":"Observation","id":"o"}},{"resource":{"resourceType":"Patient","id":"b"}}]})");
  REQUIRE(b);
  REQUIRE(run.run_bundle(b->root(), rows));
  CHECK(view::rows_to_json(*v, rows) == R"([{"id":"a","k":"x"},{"id":"b","k":"x"}])");
  rows.clear();
  REQUIRE(
      run.run_ndjson("{\"resourceType\":\"Patient\",\"id\":\"c\"}\n\n{\"resourceType\":\"Encounter\"}\r\n{"
                     "\"resourceType\":\"Patient\",\"id\":\"d\"}",
                     rows));
  CHECK(view::rows_to_json(*v, rows) == R"([{"id":"c","k":"x"},{"id":"d","k":"x"}])");
  auto bad = run.run_ndjson("{\"resourceType\":\"Patient\",\"id\":\"c\"}\n{oops\n", rows);
  CHECK(bad.code() == error_code::INVALID_JSON);
  CHECK(bad.error().line == 2);
}

TEST_CASE("view: lowBoundary()/highBoundary() of a Date without a precision give the day", "[view][fhirpath]") {
  // The one engine change the runner needed (core/src/fhirpath/fhirpath_eval.cpp): a Date's
  // default precision is the day, not a DateTime's millisecond (which gave an empty result).
  auto doc = json::parse(R"({"resourceType":"Patient","birthDate":"1970-06"})");
  REQUIRE(doc);
  fhirpath::evaluator ev;
  auto low = fhirpath::compile("birthDate.lowBoundary()");
  auto high = fhirpath::compile("birthDate.highBoundary()");
  auto year = fhirpath::compile("@2012.highBoundary()");
  REQUIRE(low);
  REQUIRE(high);
  REQUIRE(year);
  auto r = ev.evaluate(*low, doc->root());
  REQUIRE(r);
  CHECK(fhirpath::to_json(**r) == R"(["1970-06-01"])");
  r = ev.evaluate(*high, doc->root());
  REQUIRE(r);
  CHECK(fhirpath::to_json(**r) == R"(["1970-06-30"])");
  r = ev.evaluate(*year, doc->root());
  REQUIRE(r);
  CHECK(fhirpath::to_json(**r) == R"(["2012-12-31"])");
}

TEST_CASE("view: integer constants and %rowIndex compare with the resource's integers", "[view]") {
  // An integer item carries its value as a decimal too; a constant built without it compared
  // unequal to the same integer from the resource.
  const char *cr = R"({"resourceType":"ClaimResponse","id":"cr1","item":[{"itemSequence":1},{"itemSequence":1}]})";
  CHECK(
      run_json(
          R"({"resource":"ClaimResponse","constant":[{"name":"s","valuePositiveInt":1}],"select":[{"column":[{"name":"b","path":"item.first().itemSequence = %s"},{"name":"c","path":"item.first().itemSequence + 0.5 > %s"}]}]})",
          cr) == R"([{"b":true,"c":true}])");
  CHECK(
      run_json(
          R"({"resource":"ClaimResponse","select":[{"forEach":"item","column":[{"name":"b","path":"%rowIndex + 1 = itemSequence"},{"name":"d","path":"%rowIndex < 0.5"}]}]})",
          cr) == R"([{"b":true,"d":true},{"b":false,"d":false}])");
}

namespace {

const char *ID_VIEW = R"({"resource":"Patient","select":[{"column":[{"name":"id","path":"id"}]}]})";

result<std::string> run_text(const std::string &text) {
  auto v = view::compile(ID_VIEW);
  REQUIRE(v);
  view::runner run(*v);
  std::vector<view::row> rows;
  auto ok = run.run_text(text, rows);
  if (!ok) return ok.error();
  return view::rows_to_json(*v, rows);
}

// Feeds `text` in pieces of `size` bytes.
result<std::string> feed_pieces(const std::string &text, size_t size, uint64_t max_line = 1 << 20) {
  auto v = view::compile(ID_VIEW);
  REQUIRE(v);
  view::ndjson_feeder feeder(*v, max_line);
  std::vector<view::row> rows;
  for (size_t at = 0; at < text.size(); at += size) {
    auto ok = feeder.feed(std::string_view(text).substr(at, size), rows);
    if (!ok) return ok.error();
  }
  auto ok = feeder.finish(rows);
  if (!ok) return ok.error();
  return view::rows_to_json(*v, rows);
}

}  // namespace

TEST_CASE("view: run_text reads a resource, a Bundle, an array or NDJSON", "[view]") {
  CHECK(run_text(R"({"resourceType":"Patient","id":"a"})").value() == R"([{"id":"a"}])");
  CHECK(run_text("{\n  \"resourceType\": \"Patient\",\n  \"id\": \"a\"\n}\n").value() == R"([{"id":"a"}])");
  CHECK(run_text(R"([{"resourceType":"Patient","id":"a"},{"resourceType":"Observation","id":"o"},)"
                 R"({"resourceType":"Patient","id":"b"}])")
            .value() == R"([{"id":"a"},{"id":"b"}])");
  CHECK(run_text(R"({"resourceType":"Bundle","entry":[{"resource":{"resourceType":"Patient","id":"a"}},)"
                 R"({"resource":{"resourceType":"Patient","id":"b"}}]})")
            .value() == R"([{"id":"a"},{"id":"b"}])");
  CHECK(run_text("{\"resourceType\":\"Patient\",\"id\":\"a\"}\n\n{\"resourceType\":\"Patient\",\"id\":\"b\"}\r\n")
            .value() == R"([{"id":"a"},{"id":"b"}])");
  CHECK(run_text(" \n\t").value() == "[]");

  auto e = run_text("{\"resourceType\":\"Patient\",\"id\":\"a\"}\n{\"resourceType\":");
  REQUIRE_FALSE(e);
  CHECK(e.error().line == 2);
  e = run_text("{\"resourceType\":\"Patient\",");
  REQUIRE_FALSE(e);
  CHECK(e.error().code == error_code::INVALID_JSON);
  // A view over Bundle itself sees the Bundle, not its entries.
  auto v = view::compile(R"({"resource":"Bundle","select":[{"column":[{"name":"id","path":"id"}]}]})");
  REQUIRE(v);
  view::runner run(*v);
  std::vector<view::row> rows;
  REQUIRE(run.run_text(R"({"resourceType":"Bundle","id":"bb","entry":[]})", rows));
  CHECK(view::rows_to_json(*v, rows) == R"([{"id":"bb"}])");
}

TEST_CASE("view: the NDJSON feeder gives the same rows for any piece size", "[view]") {
  std::string text;
  for (int i = 0; i < 20; ++i) {
    text += "{\"resourceType\":\"Patient\",\"id\":\"p" + std::to_string(i) + "\"}";
    text += i % 3 ? "\n" : "\r\n\n";
  }
  text += "{\"resourceType\":\"Patient\",\"id\":\"last\"}";  // no line end
  auto whole = run_text(text);
  REQUIRE(whole);
  for (size_t size : {1, 2, 7, 40, 1000}) CHECK(feed_pieces(text, size).value() == whole.value());

  // A bad line: its line number and its offset in the whole stream, for any piece size.
  const std::string bad = "{\"resourceType\":\"Patient\",\"id\":\"a\"}\n{\"resourceType\":\"Patient\",\"id\":}\n";
  for (size_t size : {1, 5, 100}) {
    auto e = feed_pieces(bad, size);
    REQUIRE_FALSE(e);
    CHECK(e.error().line == 2);
    CHECK(e.error().offset >= 37);
  }
  // A running error: the line is in the message, and no offset (it would point into the view).
  const std::string two = "{\"resourceType\":\"Patient\",\"id\":\"a\"}\n{\"resourceType\":\"Patient\",\"id\":\"b\"}";
  auto v = view::compile(
      R"({"resource":"Patient","where":[{"path":"id"}],"select":[{"column":[{"name":"id","path":"id"}]}]})");
  REQUIRE(v);
  view::ndjson_feeder feeder(*v);
  std::vector<view::row> rows;
  auto ok = feeder.feed(two, rows);
  REQUIRE_FALSE(ok);
  CHECK(ok.error().code == error_code::FHIRPATH_TYPE_ERROR);
  CHECK(ok.error().line == 1);
  CHECK(ok.error().offset == error::NO_OFFSET);
  CHECK(ok.error().message.find("(NDJSON line 1)") != std::string::npos);
  CHECK(feeder.finish(rows).error().code == error_code::FHIRPATH_TYPE_ERROR);  // stopped

  auto e = feed_pieces(std::string(100, ' ') + "\n", 3, 64);
  REQUIRE_FALSE(e);
  CHECK(e.error().code == error_code::LINE_TOO_LONG);
  CHECK(e.error().line == 1);
}

TEST_CASE("view: columns_to_json lists name, type and collection", "[view]") {
  auto v = view::compile(R"({"resource":"Patient","select":[{"column":[{"name":"id","path":"id","type":"id"},)"
                         R"({"name":"given","path":"name.given","collection":true}]}]})");
  REQUIRE(v);
  CHECK(view::columns_to_json(*v) ==
        R"([{"name":"id","type":"id","collection":false},{"name":"given","type":"","collection":true}])");
}

// The npm package's view.toQuire() must write these very bytes (js/test/view.test.mjs reads the same
// table): the digest pins them on every target, so native, wasm and JS cannot drift apart.
TEST_CASE("view: the .quire bytes of the golden view are pinned in tests/data/view/quire_bytes.tsv", "[view]") {
  const auto dir = quire_test::data_dir() / "view_output";
  auto v = view::compile(quire_test::read_text(dir / "patient_view.json"));
  REQUIRE(v);
  const std::string input = quire_test::read_text(dir / "patients.ndjson");
  format::write_options options;
  options.indexes = {{"id", format::index_kind::hash}, {"family", format::index_kind::sorted}};
  options.chunk_rows = 2;
  format::vector_sink out;
  auto w = view::table_writer::create(*v, view::output_kind::quire, options, out);
  REQUIRE(w);
  REQUIRE(w.value()->feed_ndjson(input));
  REQUIRE(w.value()->finish());
  uint64_t h = 14695981039346656037ULL;  // FNV-1a 64
  for (uint8_t b : out.bytes) {
    h ^= b;
    h *= 1099511628211ULL;
  }
  char line[64];
  std::snprintf(line, sizeof line, "%zu\t%016llx", out.bytes.size(), static_cast<unsigned long long>(h));
  // The table's one line after its comment: size \t digest.
  const std::string table = quire_test::read_text(quire_test::data_dir() / "view" / "quire_bytes.tsv");
  const size_t start = table.find("\n") + 1;
  CHECK(table.substr(start, table.find('\n', start) - start) == line);
}

TEST_CASE("view: one-row selects filled in place give the rows and errors that crossing them gives", "[view]") {
  // Plain selects (no forEach, no unionAll) are written straight into the row; around a forEach
  // and a unionAll the rows are crossed. Both must give the rows the specification's cross
  // product gives, in column order.
  const char *view_text = R"v({"resource":"Patient","select":[
    {"column":[{"name":"id","path":"id"}],"select":[{"column":[{"name":"n","path":"name.count()"}]}]},
    {"forEach":"name","column":[{"name":"family","path":"family"}],
     "select":[{"column":[{"name":"first","path":"given.first()"}]}]},
    {"column":[{"name":"tail","path":"'t'"}]},
    {"unionAll":[{"column":[{"name":"u","path":"'a'"}]},{"forEach":"name.given","column":[{"name":"u","path":"$this"}]}]}]})v";
  CHECK(run_json(view_text, PATIENT) == R"([{"id":"pt1","n":2,"family":"Smith","first":"A","tail":"t","u":"a"},)"
                                        R"({"id":"pt1","n":2,"family":"Smith","first":"A","tail":"t","u":"A"},)"
                                        R"({"id":"pt1","n":2,"family":"Smith","first":"A","tail":"t","u":"B"},)"
                                        R"({"id":"pt1","n":2,"family":"Jones","first":null,"tail":"t","u":"a"},)"
                                        R"({"id":"pt1","n":2,"family":"Jones","first":null,"tail":"t","u":"A"},)"
                                        R"({"id":"pt1","n":2,"family":"Jones","first":null,"tail":"t","u":"B"}])");
  // A forEach over nothing ends the rows even when one-row selects follow it.
  CHECK(run_json(R"({"resource":"Patient","select":[{"column":[{"name":"id","path":"id"}]},
    {"forEach":"telecom","column":[{"name":"t","path":"value"}]},{"column":[{"name":"g","path":"gender"}]}]})",
                 PATIENT) == "[]");

  // The first error in evaluation order, with its place: a nested select's column.
  auto v = view::compile(R"({"resource":"Patient","select":[{"column":[{"name":"id","path":"id"}]},
    {"column":[{"name":"a","path":"id"}],"select":[{"column":[{"name":"f","path":"name.family"}]}]},
    {"column":[{"name":"b","path":"name.given"}]}]})");
  REQUIRE(v);
  auto doc = json::parse(PATIENT);
  REQUIRE(doc);
  std::vector<view::row> rows;
  view::runner run(*v);
  auto r = run.run(doc->root(), rows);
  CHECK(r.code() == error_code::FHIRPATH_TYPE_ERROR);
  CHECK(r.error().path == "select[1].select[0].column[0].path");
  CHECK(r.error().message.rfind("select[1].select[0].column[0].path gives 2 values", 0) == 0);
  CHECK(rows.empty());

  // max_rows_per_resource 0: even a flat view's one row is too many, as when rows are crossed.
  view::limits none;
  none.max_rows_per_resource = 0;
  auto flat = view::compile(R"({"resource":"Patient","select":[{"column":[{"name":"id","path":"id"}]}]})", none);
  REQUIRE(flat);
  view::runner run0(*flat);
  CHECK(run0.run(doc->root(), rows).code() == error_code::RESULT_TOO_LARGE);
}

TEST_CASE("view: now() and today() give run_options::now, on every thread and in the feeder", "[view]") {
  auto v = view::compile(
      R"v({"resource":"Patient","select":[{"column":[{"name":"id","path":"id"},{"name":"d","path":"today()"}]}]})v");
  REQUIRE(v);
  const std::string line = "{\"resourceType\":\"Patient\",\"id\":\"a\"}\n";
  std::string text;
  for (int i = 0; i < 200; ++i) text += line;
  view::run_options options{.tasks = &default_task_runner(), .threads = 4, .min_parallel_bytes = 0};
  options.now = fhirpath::clock_reading{1767323045678, 0};  // 2026-01-02T03:04:05.678Z
  view::runner run(*v, options);
  std::vector<view::row> rows;
  REQUIRE(run.run_ndjson(text, rows));
  REQUIRE(rows.size() == 200);
  CHECK(view::rows_to_json(*v, {rows.back()}) == R"([{"id":"a","d":"2026-01-02"}])");

  view::ndjson_feeder feeder(*v, view::ndjson_feeder::DEFAULT_MAX_LINE_BYTES, options);
  rows.clear();
  REQUIRE(feeder.feed(line, rows));
  CHECK(view::rows_to_json(*v, rows) == R"([{"id":"a","d":"2026-01-02"}])");

  // Without it the view fails: core reads no clock.
  view::runner unset(*v);
  rows.clear();
  auto failed = unset.run_ndjson(line, rows);
  REQUIRE_FALSE(failed);
  CHECK(failed.code() == error_code::INVALID_ARGUMENT);
}

TEST_CASE("view: cells are typed once, and print the JSON FHIRPath gives", "[view]") {
  auto v = view::compile(R"({"resource":"Observation","select":[{"column":[
      {"name":"flag","path":"extension.where(url='f').value"},
      {"name":"count","path":"extension.where(url='n').value"},
      {"name":"zero","path":"extension.where(url='z').value"},
      {"name":"big","path":"extension.where(url='b').value"},
      {"name":"dec","path":"value.ofType(Quantity).value"},
      {"name":"unit","path":"value.ofType(Quantity).unit"},
      {"name":"when","path":"effective"},
      {"name":"age","path":"1 'cm'"},
      {"name":"sum","path":"2 + 3"},
      {"name":"half","path":"1.50 * 1"},
      {"name":"code","path":"code"},
      {"name":"tags","path":"category.text","collection":true},
      {"name":"none","path":"issued"}]}]})");
  REQUIRE(v);
  auto doc = json::parse(
      R"({"resourceType":"Observation","effectiveDateTime":"2015-02-04T14:34:28+10:00",)"
      R"("extension":[{"url":"f","valueBoolean":true},{"url":"n","valueInteger":-12},{"url":"z","valueInteger":-0},)"
      R"({"url":"b","valueDecimal":123456789012345678901}],"valueQuantity":{"value":0.700,"unit":"a \"b\"\n\u00e9"},)"
      R"("code":{"text":"x"},"category":[{"text":"c1"},{"text":"c2"}]})");
  REQUIRE(doc);
  view::runner run(*v);
  std::vector<view::row> rows;
  REQUIRE(run.run(doc->root(), rows));
  REQUIRE(rows.size() == 1);
  const auto &c = rows[0].cells;
  CHECK((c[0].kind == view::cell_kind::boolean && c[0].boolean));
  CHECK((c[1].kind == view::cell_kind::integer && c[1].integer == -12 && c[1].text.empty()));
  CHECK((c[2].kind == view::cell_kind::decimal && c[2].text == "-0"));  // `-0` keeps its text
  CHECK((c[3].kind == view::cell_kind::decimal && c[3].text == "123456789012345678901"));
  CHECK((c[4].kind == view::cell_kind::decimal && c[4].text == "0.700"));
  CHECK((c[5].kind == view::cell_kind::string && c[5].text == "a \"b\"\n\xc3\xa9"));  // unescaped
  CHECK((c[6].kind == view::cell_kind::string && c[6].text == "2015-02-04T14:34:28+10:00"));
  CHECK((c[7].kind == view::cell_kind::string && c[7].text == "1 'cm'"));
  CHECK((c[8].kind == view::cell_kind::integer && c[8].integer == 5));
  CHECK((c[9].kind == view::cell_kind::decimal && c[9].text == "1.50"));
  CHECK((c[10].kind == view::cell_kind::object && c[10].text == R"({"text":"x"})"));
  CHECK((c[11].kind == view::cell_kind::array && c[11].text == R"(["c1","c2"])"));
  CHECK(c[12].kind == view::cell_kind::null_value);
  CHECK(view::rows_to_json(*v, rows) ==
        R"([{"flag":true,"count":-12,"zero":-0,"big":123456789012345678901,"dec":0.700,"unit":"a \"b\"\né",)"
        R"("when":"2015-02-04T14:34:28+10:00","age":"1 'cm'","sum":5,"half":1.50,"code":{"text":"x"},)"
        R"("tags":["c1","c2"],"none":null}])");
  std::string text;
  for (const auto &cell : c) {
    view::append_cell_text(text, cell);
    text += '|';
  }
  CHECK(text ==
        "true|-12|-0|123456789012345678901|0.700|a \"b\"\n\xc3\xa9|2015-02-04T14:34:28+10:00|1 'cm'|5|1.50|"
        R"({"text":"x"}|["c1","c2"]||)");
}
