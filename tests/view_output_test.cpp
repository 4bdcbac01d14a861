// quire::view::table_writer: a view's rows as NDJSON, CSV and .quire bytes, the column types,
// conversion errors with their place, pieces of every size, and indexes on view columns.
#include <catch2/catch.hpp>

#include <string>

#include "quire/view.h"
#include "test_support.h"

using namespace quire;

namespace {

const char *VIEW = R"j({"resourceType":"ViewDefinition","resource":"Patient","select":[{"column":[
  {"name":"id","path":"id","type":"id"},
  {"name":"active","path":"active","type":"boolean"},
  {"name":"birth","path":"birthDate","type":"date"},
  {"name":"family","path":"name.first().family","type":"string"},
  {"name":"given","path":"name.given","type":"string","collection":true},
  {"name":"births","path":"multipleBirth.ofType(integer)","type":"integer"},
  {"name":"name0","path":"name.first()","type":"HumanName"}]}]})j";

const char *INPUT =
    "{\"resourceType\":\"Patient\",\"id\":\"pt1\",\"active\":true,\"birthDate\":\"1970-03\","
    "\"name\":[{\"family\":\"Smith, Jr\",\"given\":[\"A\",\"B\"]}],\"multipleBirthInteger\":2}\n"
    "\r\n"
    "{\"resourceType\":\"Observation\",\"id\":\"o1\",\"status\":\"final\"}\r\n"
    "{\"resourceType\":\"Patient\",\"id\":\"pt2\",\"name\":[{\"family\":\"O\\\"Neil\"}]}";

view::compiled_view compile(const char *text) {
  auto v = view::compile(text);
  REQUIRE(v);
  return std::move(v).value();
}

std::string as_text(const std::vector<uint8_t> &b) { return std::string(b.begin(), b.end()); }

// Feeds `input` in pieces of `piece` bytes (0: whole) and returns the bytes written.
std::vector<uint8_t> write(const view::compiled_view &v, view::output_kind kind, std::string_view input,
                           size_t piece = 0, const format::write_options &options = {}) {
  format::vector_sink out;
  auto w = view::table_writer::create(v, kind, options, out);
  REQUIRE(w);
  if (piece == 0) piece = input.size() + 1;
  for (size_t at = 0; at < input.size(); at += piece) {
    auto ok = w.value()->feed_ndjson(input.substr(at, piece));
    INFO((ok ? std::string() : ok.error().describe()));
    REQUIRE(ok);
  }
  auto rows = w.value()->finish();
  REQUIRE(rows);
  CHECK(*rows == w.value()->rows());
  return out.bytes;
}

error write_error(const view::compiled_view &v, view::output_kind kind, std::string_view input) {
  format::vector_sink out;
  auto w = view::table_writer::create(v, kind, {}, out);
  REQUIRE(w);
  auto ok = w.value()->feed_ndjson(input);
  if (!ok) return ok.error();
  auto done = w.value()->finish();
  REQUIRE_FALSE(done);
  return done.error();
}

}  // namespace

TEST_CASE("view output: the kind of an output path", "[view][view_output]") {
  CHECK(view::output_kind_for_path("rows.ndjson") == view::output_kind::ndjson);
  CHECK(view::output_kind_for_path("/tmp/rows.JSONL") == view::output_kind::ndjson);
  CHECK(view::output_kind_for_path("a.b.csv") == view::output_kind::csv);
  CHECK(view::output_kind_for_path("t.quire") == view::output_kind::quire);
  CHECK_FALSE(view::output_kind_for_path("t.json"));
  CHECK_FALSE(view::output_kind_for_path("quire"));
  CHECK_FALSE(view::output_kind_for_path(""));
}

TEST_CASE("view output: the table schema follows the declared FHIR types", "[view][view_output]") {
  auto v = compile(R"j({"resource":"Patient","select":[{"column":[
    {"name":"b","path":"active","type":"boolean"},
    {"name":"i","path":"multipleBirth.ofType(integer)","type":"integer"},
    {"name":"p","path":"multipleBirth.ofType(integer)","type":"positiveInt"},
    {"name":"u","path":"multipleBirth.ofType(integer)","type":"unsignedInt"},
    {"name":"l","path":"id","type":"integer64"},
    {"name":"d","path":"id","type":"decimal"},
    {"name":"dt","path":"birthDate","type":"date"},
    {"name":"dtt","path":"deceasedDateTime","type":"dateTime"},
    {"name":"ins","path":"meta.lastUpdated","type":"instant"},
    {"name":"c","path":"gender","type":"code"},
    {"name":"none","path":"id"},
    {"name":"hn","path":"name.first()","type":"HumanName"},
    {"name":"coll","path":"name.given","collection":true},
    {"name":"sys","path":"id","type":"System.Integer"}]}]})j");
  auto s = view::table_schema(v);
  REQUIRE(s);
  using t = format::column_type;
  std::vector<t> want = {t::boolean, t::integer, t::integer, t::integer, t::integer, t::decimal, t::string,
                         t::string,  t::string,  t::string,  t::string,  t::json,    t::json,    t::integer};
  REQUIRE(s->columns.size() == want.size());
  for (size_t i = 0; i < want.size(); ++i) {
    INFO(s->columns[i].name);
    CHECK(s->columns[i].name == v.columns()[i].name);
    CHECK(s->columns[i].type == want[i]);
  }
}

TEST_CASE("view output: NDJSON bytes", "[view][view_output]") {
  auto v = compile(VIEW);
  CHECK(as_text(write(v, view::output_kind::ndjson, INPUT)) ==
        "{\"id\":\"pt1\",\"active\":true,\"birth\":\"1970-03\",\"family\":\"Smith, Jr\",\"given\":[\"A\",\"B\"],"
        "\"births\":2,\"name0\":{\"family\":\"Smith, Jr\",\"given\":[\"A\",\"B\"]}}\n"
        "{\"id\":\"pt2\",\"active\":null,\"birth\":null,\"family\":\"O\\\"Neil\",\"given\":[],\"births\":null,"
        "\"name0\":{\"family\":\"O\\\"Neil\"}}\n");
}

TEST_CASE("view output: CSV bytes", "[view][view_output]") {
  auto v = compile(VIEW);
  CHECK(as_text(write(v, view::output_kind::csv, INPUT)) ==
        "id,active,birth,family,given,births,name0\n"
        "pt1,true,1970-03,\"Smith, Jr\",\"[\"\"A\"\",\"\"B\"\"]\",2,"
        "\"{\"\"family\"\":\"\"Smith, Jr\"\",\"\"given\"\":[\"\"A\"\",\"\"B\"\"]}\"\n"
        "pt2,,,\"O\"\"Neil\",[],,\"{\"\"family\"\":\"\"O\\\"\"Neil\"\"}\"\n");

  // Null is an empty field, the empty string a quoted one; escapes are undone in text fields.
  auto w = compile(
      R"j({"resource":"Patient","select":[{"column":[{"name":"a","path":"id"},{"name":"b","path":"gender"}]}]})j");
  CHECK(as_text(write(w, view::output_kind::csv,
                      "{\"resourceType\":\"Patient\",\"id\":\"\",\"gender\":\"line\\nbreak \\u00e9\"}\n"
                      "{\"resourceType\":\"Patient\"}\n")) == "a,b\n\"\",\"line\nbreak \xc3\xa9\"\n,\n");
  // No rows: the header alone.
  CHECK(as_text(write(w, view::output_kind::csv, "")) == "a,b\n");
}

TEST_CASE("view output: .quire table", "[view][view_output]") {
  auto v = compile(VIEW);
  format::write_options options;
  options.indexes = {{"id", format::index_kind::hash}, {"family", format::index_kind::sorted}};
  auto bytes = write(v, view::output_kind::quire, INPUT, 0, options);
  auto f = format::file::open(borrow_bytes(bytes));
  REQUIRE(f);
  CHECK(f->row_count() == 2);
  REQUIRE(f->schema().columns.size() == 7);
  CHECK(f->schema().columns[1].type == format::column_type::boolean);
  CHECK(f->schema().columns[2].type == format::column_type::string);
  CHECK(f->schema().columns[4].type == format::column_type::json);
  CHECK(f->schema().columns[5].type == format::column_type::integer);
  CHECK(f->indexes().size() == 2);

  auto all = f->query({});
  REQUIRE(all);
  CHECK(all->json ==
        "{\"id\":\"pt1\",\"active\":true,\"birth\":\"1970-03\",\"family\":\"Smith, Jr\",\"given\":[\"A\",\"B\"],"
        "\"births\":2,\"name0\":{\"family\":\"Smith, Jr\",\"given\":[\"A\",\"B\"]}}\n"
        "{\"id\":\"pt2\",\"active\":null,\"birth\":null,\"family\":\"O\\\"Neil\",\"given\":[],\"births\":null,"
        "\"name0\":{\"family\":\"O\\\"Neil\"}}\n");

  auto key = format::parse_key_text(f->schema(), "id", "pt2");
  REQUIRE(key);
  auto hit = f->find("id", *key, {"id", "family"});
  REQUIRE(hit);
  REQUIRE(hit->has_value());
  CHECK(**hit == "{\"id\":\"pt2\",\"family\":\"O\\\"Neil\"}");
  auto miss = f->find("id", format::value::text("pt9"));
  REQUIRE(miss);
  CHECK_FALSE(miss->has_value());
  auto by_family = f->find("family", format::value::text("Smith, Jr"), {"id"});
  REQUIRE(by_family);
  REQUIRE(by_family->has_value());
  CHECK(**by_family == "{\"id\":\"pt1\"}");
  auto checked = f->verify();
  CHECK(checked);
}

TEST_CASE("view output: pieces of every size give the same bytes", "[view][view_output]") {
  auto v = compile(VIEW);
  std::string input;
  for (int i = 0; i < 40; ++i) {
    input += "{\"resourceType\":\"Patient\",\"id\":\"p";
    input += std::to_string(i);
    input += "\",\"active\":";
    input += i % 2 ? "true" : "false";
    input += ",\"name\":[{\"family\":\"F\\u00e9";
    input += std::to_string(i * 7);
    input += "\",\"given\":[\"G\"]}],\"multipleBirthInteger\":";
    input += std::to_string(i);
    input += i % 3 ? "}\n" : "}\r\n\n";
  }
  format::write_options options;
  options.chunk_rows = 8;
  options.indexes = {{"id", format::index_kind::hash}};
  for (auto kind : {view::output_kind::ndjson, view::output_kind::csv, view::output_kind::quire}) {
    INFO(view::output_kind_name(kind));
    const auto &opts = kind == view::output_kind::quire ? options : format::write_options{};
    auto whole = write(v, kind, input, 0, opts);
    CHECK(whole.size() > 1000);
    for (size_t piece : {1, 2, 3, 7, 64, 100, 333, 4096}) {
      INFO("piece " << piece);
      CHECK(write(v, kind, input, piece, opts) == whole);
    }
  }
}

TEST_CASE("view output: resources, Bundles and counts", "[view][view_output]") {
  auto v = compile(VIEW);
  auto bundle = json::parse(
      R"j({"resourceType":"Bundle","type":"collection","entry":[{"resource":{"resourceType":"Patient","id":"b1"}},
        {"fullUrl":"x"},{"resource":{"resourceType":"Observation","id":"o"}},{"resource":{"resourceType":"Patient","id":"b2","active":false}}]})j");
  REQUIRE(bundle);
  auto single = json::parse(R"j({"resourceType":"Patient","id":"s1"})j");
  REQUIRE(single);
  format::vector_sink out;
  auto w = view::table_writer::create(v, view::output_kind::ndjson, {}, out);
  REQUIRE(w);
  REQUIRE(w.value()->add_resource(bundle->root()));
  REQUIRE(w.value()->add_resource(single->root()));
  CHECK(w.value()->resources() == 4);  // three entry resources and the single one
  CHECK(w.value()->rows() == 3);
  auto n = w.value()->finish();
  REQUIRE(n);
  CHECK(*n == 3);
  std::string text = as_text(out.bytes);
  CHECK(text.find("\"id\":\"b1\"") < text.find("\"id\":\"b2\""));
  CHECK(text.find("\"id\":\"b2\",\"active\":false") != std::string::npos);
  CHECK(text.find("\"id\":\"s1\"") != std::string::npos);
  // Finished: later calls are refused.
  CHECK(w.value()->feed_ndjson("{}\n").code() == error_code::INVALID_ARGUMENT);
  CHECK(w.value()->finish().code() == error_code::INVALID_ARGUMENT);
}

TEST_CASE("view output: a value its column cannot hold names the column and the resource", "[view][view_output]") {
  auto v = compile(R"j({"resource":"Patient","select":[{"column":[{"name":"id","path":"id"},
    {"name":"births","path":"multipleBirth","type":"integer"}]}]})j");
  const char *input =
      "{\"resourceType\":\"Patient\",\"id\":\"ok\",\"multipleBirthInteger\":3}\n"
      "\n"
      "{\"resourceType\":\"Patient\",\"id\":\"bad\",\"multipleBirthBoolean\":true}\n";
  // Every kind checks the same way: a view and its input fail alike whatever is written.
  for (auto kind : {view::output_kind::ndjson, view::output_kind::csv, view::output_kind::quire}) {
    INFO(view::output_kind_name(kind));
    error e = write_error(v, kind, input);
    CHECK(e.code == error_code::SCHEMA_MISMATCH);
    CHECK(e.path == "births");
    CHECK(e.line == 3);
    CHECK(e.message.find("column births (integer, declared integer) cannot hold a boolean true") != std::string::npos);
    CHECK(e.message.find("in resource 2 (Patient/bad), line 3") != std::string::npos);
  }

  // An object in a string column (undeclared type) is refused, not flattened or dropped.
  auto w = compile(R"j({"resource":"Patient","select":[{"column":[{"name":"n","path":"name.first()"}]}]})j");
  error e = write_error(w, view::output_kind::quire, "{\"resourceType\":\"Patient\",\"name\":[{\"family\":\"X\"}]}");
  CHECK(e.code == error_code::SCHEMA_MISMATCH);
  CHECK(e.line == 1);
  CHECK(e.message.find("collection: true") != std::string::npos);

  // A decimal in an integer column; a string in a boolean column.
  auto d =
      compile(R"j({"resource":"Observation","select":[{"column":[{"name":"v","path":"value.value","type":"integer"},
    {"name":"s","path":"status","type":"boolean"}]}]})j");
  e = write_error(d, view::output_kind::csv, "{\"resourceType\":\"Observation\",\"valueQuantity\":{\"value\":1.5}}");
  CHECK(e.code == error_code::SCHEMA_MISMATCH);
  CHECK(e.path == "v");
  e = write_error(d, view::output_kind::csv, "{\"resourceType\":\"Observation\",\"status\":\"final\"}");
  CHECK(e.code == error_code::SCHEMA_MISMATCH);
  CHECK(e.path == "s");

  // In a Bundle the entry is named.
  format::vector_sink out;
  auto tw = view::table_writer::create(v, view::output_kind::ndjson, {}, out);
  REQUIRE(tw);
  auto b = json::parse(
      R"j({"resourceType":"Bundle","entry":[{"resource":{"resourceType":"Patient","multipleBirthInteger":1}},{"resource":{"resourceType":"Patient","id":"x","multipleBirthBoolean":false}}]})j");
  REQUIRE(b);
  auto bad = tw.value()->add_resource(b->root());
  REQUIRE_FALSE(bad);
  CHECK(bad.error().message.find("resource 2 (Patient/x) at Bundle.entry[1].resource") != std::string::npos);
  // The writer is unusable after an error: the same error again.
  CHECK(tw.value()->finish().code() == error_code::SCHEMA_MISMATCH);
}

TEST_CASE("view output: numbers convert exactly", "[view][view_output]") {
  auto v =
      compile(R"j({"resource":"Observation","select":[{"column":[{"name":"d","path":"value.value","type":"decimal"},
    {"name":"l","path":"id","type":"integer64"},{"name":"t","path":"value.value"}]}]})j");
  const char *input =
      "{\"resourceType\":\"Observation\",\"id\":\"-9223372036854775808\",\"valueQuantity\":{\"value\":0.700}}\n"
      "{\"resourceType\":\"Observation\",\"id\":\"12\",\"valueQuantity\":{\"value\":12}}\n";
  CHECK(as_text(write(v, view::output_kind::csv, input)) == "d,l,t\n0.700,-9223372036854775808,0.700\n12,12,12\n");
  auto bytes = write(v, view::output_kind::quire, input);
  auto f = format::file::open(borrow_bytes(bytes));
  REQUIRE(f);
  auto all = f->query({});
  REQUIRE(all);
  // Decimals keep their exact text; the untyped column holds the same text as a string.
  CHECK(all->json == "{\"d\":0.700,\"l\":-9223372036854775808,\"t\":\"0.700\"}\n{\"d\":12,\"l\":12,\"t\":\"12\"}\n");
  error e =
      write_error(v, view::output_kind::ndjson, "{\"resourceType\":\"Observation\",\"id\":\"9223372036854775808\"}\n");
  CHECK(e.code == error_code::SCHEMA_MISMATCH);
  CHECK(e.path == "l");
}

TEST_CASE("view output: a line that is not JSON gives its line number", "[view][view_output]") {
  auto v = compile(VIEW);
  std::string input = "{\"resourceType\":\"Patient\",\"id\":\"a\"}\n\n{\"resourceType\":\"Patient\",\"id\":\"b\"}\n";
  size_t bad_at = input.size();
  input += "{\"resourceType\": nope}\n{\"resourceType\":\"Patient\"}\n";
  for (size_t piece : {0, 1, 5}) {
    format::vector_sink out;
    auto w = view::table_writer::create(v, view::output_kind::csv, {}, out);
    REQUIRE(w);
    result<void> ok;
    size_t step = piece ? piece : input.size();
    for (size_t at = 0; at < input.size() && ok; at += step)
      ok = w.value()->feed_ndjson(std::string_view(input).substr(at, step));
    REQUIRE_FALSE(ok);
    CHECK(ok.error().code == error_code::INVALID_JSON);
    CHECK(ok.error().line == 4);
    CHECK(ok.error().offset >= bad_at);
    CHECK(ok.error().offset < input.size());
    CHECK(w.value()->rows() == 2);
  }
}

TEST_CASE("view output: NDJSON and CSV refuse indexes; the .quire writer checks them", "[view][view_output]") {
  auto v = compile(VIEW);
  format::vector_sink out;
  format::write_options options;
  options.indexes = {{"id", format::index_kind::hash}};
  CHECK(view::table_writer::create(v, view::output_kind::csv, options, out).code() == error_code::INVALID_ARGUMENT);
  CHECK(view::table_writer::create(v, view::output_kind::ndjson, options, out).code() == error_code::INVALID_ARGUMENT);
  options.indexes = {{"nosuch", format::index_kind::hash}};
  CHECK(view::table_writer::create(v, view::output_kind::quire, options, out).code() == error_code::NO_SUCH_COLUMN);
  options.indexes = {{"active", format::index_kind::text}};
  CHECK(view::table_writer::create(v, view::output_kind::quire, options, out).code() == error_code::INVALID_ARGUMENT);
}

TEST_CASE("view output: end_ndjson ends one input; the next counts its lines from 1", "[view][view_output]") {
  auto v = compile(VIEW);
  format::vector_sink out;
  auto w = view::table_writer::create(v, view::output_kind::ndjson, {}, out);
  REQUIRE(w);
  // The first input's last line has no line end: it is run, not joined to the next input's first.
  REQUIRE(w.value()->feed_ndjson(
      "{\"resourceType\":\"Patient\",\"id\":\"a\"}\n{\"resourceType\":\"Patient\",\"id\":\"b\"}"));
  REQUIRE(w.value()->end_ndjson());
  CHECK(w.value()->rows() == 2);
  REQUIRE(w.value()->feed_ndjson("{\"resourceType\":\"Patient\",\"id\":\"c\"}\n"));
  auto bad = w.value()->feed_ndjson("[1,\n");
  REQUIRE_FALSE(bad);
  CHECK(bad.error().line == 2);
  CHECK(bad.error().offset >= 36);
  CHECK(bad.error().offset <= 40);
  CHECK(w.value()->rows() == 3);
}

// The golden files the CLI test (tests/cli_view.sh) also compares `quire view run` against.
TEST_CASE("view output: the golden rows of tests/data/view_output", "[view][view_output]") {
  const auto dir = quire_test::data_dir() / "view_output";
  auto v = view::compile(quire_test::read_text(dir / "patient_view.json"));
  REQUIRE(v);
  const std::string input = quire_test::read_text(dir / "patients.ndjson");
  REQUIRE(input.size() > 500);
  const std::string rows = quire_test::read_text(dir / "rows.ndjson");
  CHECK(as_text(write(*v, view::output_kind::ndjson, input)) == rows);
  CHECK(as_text(write(*v, view::output_kind::csv, input, 17)) == quire_test::read_text(dir / "rows.csv"));
  format::write_options options;
  options.indexes = {{"id", format::index_kind::hash}};
  auto bytes = write(*v, view::output_kind::quire, input, 5, options);
  auto f = format::file::open(borrow_bytes(bytes));
  REQUIRE(f);
  auto all = f->query({});
  REQUIRE(all);
  CHECK(all->json == rows);
}

TEST_CASE("view output: an error while running a line names the line, not an offset in the view",
          "[view][view_output]") {
  auto v = compile(R"j({"resource":"Patient","select":[{"column":[{"name":"family","path":"name.family"}]}]})j");
  error e =
      write_error(v, view::output_kind::quire,
                  "{\"resourceType\":\"Patient\",\"id\":\"one\",\"name\":[{\"family\":\"A\"}]}\n"
                  "{\"resourceType\":\"Patient\",\"id\":\"two\",\"name\":[{\"family\":\"A\"},{\"family\":\"B\"}]}\n");
  CHECK(e.code == error_code::FHIRPATH_TYPE_ERROR);
  CHECK(e.line == 2);
  CHECK(e.offset == error::NO_OFFSET);
  CHECK(e.path == "select[0].column[0].path");
  CHECK(e.message.find("in resource 2 (Patient/two), line 2") != std::string::npos);
}
