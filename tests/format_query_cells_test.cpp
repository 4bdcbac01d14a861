// The cells form of a query and of find: what a grid shows, a JSON array of the cells' texts a
// line (the texts CSV has, null as null), so that a viewer parses each line and does nothing else.
#include <catch2/catch.hpp>

#include <string>

#include "quire/format.h"

using namespace quire;
using namespace quire::format;

namespace {

file open_cells_table() {
  static vector_sink sink;
  sink.bytes.clear();
  auto rows = write_ndjson(
      "{\"id\":1,\"name\":\"Ana \\\"A\\\"\",\"price\":12.50,\"ok\":true,\"when\":\"2024-01-02\",\"tags\":[1,\"x\"],"
      "\"big\":9007199254740993}\n"
      "{\"id\":2,\"name\":\"\",\"price\":3.05,\"ok\":false,\"when\":null,\"tags\":{\"k\":null},\"big\":null}\n",
      {}, sink, {});
  REQUIRE(rows.ok());
  auto f = file::open(borrow_bytes(sink.bytes));
  REQUIRE(f.ok());
  return std::move(f).value();
}

}  // namespace

TEST_CASE("format query as cells: each cell's text, core's digits, null as null", "[format][query][cells]") {
  auto f = open_cells_table();
  REQUIRE(f.schema().columns[2].type == column_type::decimal);
  auto all = f.query({}, row_text::cells);
  REQUIRE(all.ok());
  CHECK(all->count == 2);
  CHECK(all->json ==
        "[\"1\",\"Ana \\\"A\\\"\",\"12.50\",\"true\",\"2024-01-02\",\"[1,\\\"x\\\"]\",\"9007199254740993\"]\n"
        "[\"2\",\"\",\"3.05\",\"false\",null,\"{\\\"k\\\":null}\",null]\n");

  const auto cells = [&f](const query &q) {
    auto r = f.query(q, row_text::cells);
    REQUIRE(r.ok());
    return r->json;
  };
  query q;
  q.columns = {"when", "id"};
  q.where = parse_expression("id = 2").value();
  CHECK(cells(q) == "[null,\"2\"]\n");
  q.limit = 0;
  CHECK(cells(q).empty());

  query bad;
  bad.columns = {"nope"};
  auto e = f.query(bad, row_text::cells);
  REQUIRE_FALSE(e.ok());
  CHECK(e.code() == error_code::NO_SUCH_COLUMN);
}

TEST_CASE("format find as cells: the row as one array, the same errors as find", "[format][query][cells]") {
  auto f = open_cells_table();
  auto row = f.find("id", value::of(int64_t{1}), {"price", "name"}, row_text::cells);
  REQUIRE(row.ok());
  REQUIRE(row->has_value());
  CHECK(**row == "[\"12.50\",\"Ana \\\"A\\\"\"]");
  auto object = f.find("id", value::of(int64_t{1}), {"price", "name"});
  REQUIRE(object.ok());
  CHECK(**object == "{\"price\":12.50,\"name\":\"Ana \\\"A\\\"\"}");
  auto missing = f.find("id", value::of(int64_t{9}), {}, row_text::cells);
  REQUIRE(missing.ok());
  CHECK_FALSE(missing->has_value());
  auto wrong = f.find("id", value::text("x"), {}, row_text::cells);
  REQUIRE_FALSE(wrong.ok());
  CHECK(wrong.code() == error_code::WRONG_KEY);
}

TEST_CASE("format row text names: each form by its name, any other name refused", "[format][query][cells]") {
  for (row_text form : {row_text::ndjson, row_text::json_array, row_text::csv, row_text::cells}) {
    auto back = row_text_named(row_text_name(form));
    REQUIRE(back.ok());
    CHECK(*back == form);
  }
  CHECK(row_text_name(row_text::cells) == "cells");
  CHECK(row_text_name(row_text::json_array) == "array");
  auto e = row_text_named("tsv");
  REQUIRE_FALSE(e.ok());
  CHECK(e.code() == error_code::INVALID_ARGUMENT);
}
