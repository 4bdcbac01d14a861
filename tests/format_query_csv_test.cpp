// The CSV form of a query: RFC 4180 as the view's CSV output writes it, null and "" apart.
#include <catch2/catch.hpp>

#include <string>

#include "quire/format.h"

using namespace quire;
using namespace quire::format;

namespace {

file open_written(std::string_view ndjson, const input_options &in = {}) {
  static vector_sink sink;
  sink.bytes.clear();
  auto rows = write_ndjson(ndjson, {}, sink, in);
  REQUIRE(rows.ok());
  auto f = file::open(borrow_bytes(sink.bytes));
  REQUIRE(f.ok());
  return std::move(f).value();
}

}  // namespace

TEST_CASE("format query as CSV: header, quoting, null as no field and \"\" quoted", "[format][query][csv]") {
  auto f = open_written(
      "{\"id\":1,\"name\":\"Ana, \\\"the\\\" first\",\"note\":\"\",\"when\":\"2024-01-02\",\"ok\":true,\"tags\":[1,2],"
      "\"x\":1.5}\n"
      "{\"id\":2,\"name\":\"line\\nbreak\",\"note\":null,\"when\":null,\"ok\":false,\"tags\":{\"k\":\"v\"},\"x\":null}"
      "\n");
  auto all = f.query({}, row_text::csv);
  REQUIRE(all.ok());
  CHECK(all->count == 2);
  CHECK(all->json ==
        "id,name,note,when,ok,tags,x\n"
        "1,\"Ana, \"\"the\"\" first\",\"\",2024-01-02,true,\"[1,2]\",1.5\n"
        "2,\"line\nbreak\",,,false,\"{\"\"k\"\":\"\"v\"\"}\",\n");

  query q;
  q.columns = {"x", "id"};
  q.where = parse_expression("id = 2").value();
  auto one = f.query(q, row_text::csv);
  REQUIRE(one.ok());
  CHECK(one->json == "x,id\n,2\n");

  q.limit = 0;
  auto none = f.query(q, row_text::csv);
  REQUIRE(none.ok());
  CHECK(none->json == "x,id\n");
}

TEST_CASE("format query as CSV: the same rows as NDJSON, and the same errors", "[format][query][csv]") {
  auto f = open_written("{\"id\":1,\"t\":\"2024-01-02T03:04:05Z\"}\n{\"id\":2,\"t\":null}\n");
  auto csv = f.query({}, row_text::csv);
  auto nd = f.query({}, row_text::ndjson);
  REQUIRE(csv.ok());
  REQUIRE(nd.ok());
  CHECK(csv->count == nd->count);
  CHECK(csv->json == "id,t\n1,2024-01-02T03:04:05Z\n2,\n");
  CHECK(nd->json == "{\"id\":1,\"t\":\"2024-01-02T03:04:05Z\"}\n{\"id\":2,\"t\":null}\n");
  query bad;
  bad.columns = {"nope"};
  auto e = f.query(bad, row_text::csv);
  REQUIRE_FALSE(e.ok());
  CHECK(e.code() == error_code::NO_SUCH_COLUMN);
}
