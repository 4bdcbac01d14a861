// NDJSON and CSV into .quire files: schema inference, given schemas, and the errors of each.
#include <catch2/catch.hpp>
#include <string>

#include "format_sample_data.h"  // bench/shapes: the sample customers
#include "quire/format.h"

using namespace quire;
using namespace quire::format;

namespace {

std::string types_of(const schema &s) {
  std::string out;
  for (const auto &c : s.columns) out += c.name + ":" + std::string(type_name(c.type)) + " ";
  return out;
}

std::string rows_of(const std::vector<uint8_t> &bytes) {
  auto f = file::open(borrow_bytes(bytes));
  REQUIRE(f);
  return f->query({}).value().json;
}

}  // namespace

TEST_CASE("format input: NDJSON schema inference", "[format][input]") {
  std::string text =
      "{\"id\":1,\"x\":1,\"money\":\"12.50\",\"when\":\"2024-01-02\",\"dt\":\"2024-01-02T03:04:05Z\",\"ok\":true,"
      "\"tags\":[1,2],\"name\":\"a\",\"d\":12.50}\n"
      "\n"
      "{\"id\":2,\"x\":2.5,\"when\":\"2024-01-03T00:00:00Z\",\"dt\":null,\"ok\":false,\"tags\":{\"k\":1},\"name\":null,"
      "\"d\":1,\"extra\":null}\r\n";
  auto s = infer_ndjson_schema(text);
  REQUIRE(s);
  CHECK(types_of(*s) ==
        "id:integer x:float money:string when:timestamp dt:timestamp ok:boolean tags:json name:string d:decimal "
        "extra:string ");
  vector_sink sink;
  auto n = write_ndjson(text, {}, sink);
  REQUIRE(n);
  CHECK(*n == 2);
  CHECK(rows_of(sink.bytes) ==
        "{\"id\":1,\"x\":1,\"money\":\"12.50\",\"when\":\"2024-01-02T00:00:00Z\",\"dt\":\"2024-01-02T03:04:05Z\","
        "\"ok\":true,\"tags\":[1,2],\"name\":\"a\",\"d\":12.50,\"extra\":null}\n"
        "{\"id\":2,\"x\":2.5,\"money\":null,\"when\":\"2024-01-03T00:00:00Z\",\"dt\":null,\"ok\":false,\"tags\":{\"k\":"
        "1},\"name\":null,\"d\":1,\"extra\":null}\n");
}

TEST_CASE("format input: NDJSON mixed types are SCHEMA_MISMATCH with line and column name", "[format][input]") {
  auto s = infer_ndjson_schema("{\"a\":1}\n{\"a\":\"x\"}\n");
  REQUIRE_FALSE(s);
  CHECK(s.code() == error_code::SCHEMA_MISMATCH);
  CHECK(s.error().line == 2);
  CHECK(s.error().path == "a");
  CHECK(infer_ndjson_schema("{\"a\":true}\n{\"a\":1}\n").code() == error_code::SCHEMA_MISMATCH);
  CHECK(infer_ndjson_schema("{\"a\":[1]}\n{\"a\":\"s\"}\n").code() == error_code::SCHEMA_MISMATCH);
  auto bad = infer_ndjson_schema("{\"a\":1}\n[1,2]\n");
  CHECK(bad.code() == error_code::WRONG_TYPE);
  CHECK(bad.error().line == 2);
  auto broken = infer_ndjson_schema("{\"a\":1}\n{\"a\":1,}\n");
  CHECK(broken.code() == error_code::INVALID_JSON);
  CHECK(broken.error().line == 2);
  CHECK(infer_ndjson_schema("\n\n").code() == error_code::EMPTY_INPUT);
  input_options small;
  small.max_line_bytes = 8;
  CHECK(infer_ndjson_schema("{\"a\":123456}\n", small).code() == error_code::LINE_TOO_LONG);
  // A given schema: values are checked against it, unknown keys are refused.
  input_options given;
  given.schema = schema{{{"a", column_type::integer}}};
  vector_sink sink;
  auto w = write_ndjson("{\"a\":1}\n{\"a\":2.5}\n", {}, sink, given);
  CHECK(w.code() == error_code::SCHEMA_MISMATCH);
  CHECK(w.error().line == 2);
  CHECK(write_ndjson("{\"b\":1}\n", {}, sink, given).code() == error_code::SCHEMA_MISMATCH);
}

TEST_CASE("format input: CSV inference, quoting and errors", "[format][input]") {
  std::string text =
      "id,name,score,joined,active,note\n1,\"Okafor, "
      "Ana\",3.5,2020-01-01,true,\n2,Ben,4,2020-01-02T10:00:00Z,false,x\n3,,,,,12\n";
  auto s = infer_csv_schema(text);
  REQUIRE(s);
  CHECK(types_of(*s) == "id:integer name:string score:float joined:timestamp active:boolean note:string ");
  vector_sink sink;
  REQUIRE(write_csv(text, {}, sink));
  CHECK(rows_of(sink.bytes) ==
        "{\"id\":1,\"name\":\"Okafor, "
        "Ana\",\"score\":3.5,\"joined\":\"2020-01-01T00:00:00Z\",\"active\":true,\"note\":null}\n"
        "{\"id\":2,\"name\":\"Ben\",\"score\":4,\"joined\":\"2020-01-02T10:00:00Z\",\"active\":false,\"note\":\"x\"}\n"
        "{\"id\":3,\"name\":null,\"score\":null,\"joined\":null,\"active\":null,\"note\":\"12\"}\n");
  auto ragged = infer_csv_schema("a,b\n1,2\n3\n");
  CHECK(ragged.code() == error_code::INVALID_CSV);
  CHECK(ragged.error().line == 3);
  CHECK(ragged.error().column == 2);
  CHECK(infer_csv_schema("a,b\n1,\"2\n").code() == error_code::INVALID_CSV);
  CHECK(infer_csv_schema("").code() == error_code::EMPTY_INPUT);
  CHECK(infer_csv_schema("a,a\n1,2\n").code() == error_code::INVALID_CSV);
  input_options given;
  given.schema = schema{{{"a", column_type::integer}, {"b", column_type::boolean}}};
  auto w = write_csv("b,a\ntrue,1\nmaybe,2\n", {}, sink, given);
  CHECK(w.code() == error_code::SCHEMA_MISMATCH);
  CHECK(w.error().line == 3);
  CHECK(w.error().column == 1);
}

TEST_CASE("format input: the sample customers through NDJSON and CSV give the same table", "[format][input]") {
  auto customers = generate_customers(2000, 3);
  vector_sink a, b, c;
  write_options o;
  o.indexes = {{"id", index_kind::hash}};
  REQUIRE(write_ndjson(customers_ndjson(customers), o, a));
  REQUIRE(write_csv(customers_csv(customers), o, b));
  std::vector<cell> cells;
  auto w = writer::create(customer_schema(), o, c);
  for (const auto &x : customers) {
    customer_cells(x, cells);
    REQUIRE(w.value()->append_row(cells));
  }
  REQUIRE(w.value()->finish());
  CHECK(a.bytes == c.bytes);
  CHECK(b.bytes == c.bytes);
}
