// The .quire writer and reader: every type with nulls round-trips; the encodings fit the data;
// pages, chunks, sorting and the bounded sort behave.
#include <catch2/catch.hpp>
#include <cstring>
#include <string>
#include <vector>

#include "format_sample_data.h"  // bench/shapes: the sample customers
#include "quire/format.h"

using namespace quire;
using namespace quire::format;

namespace {

query columns_query(std::vector<std::string> names) {
  query q;
  q.columns = std::move(names);
  return q;
}

std::vector<uint8_t> write_rows(const schema &s, const std::vector<std::vector<cell>> &rows, write_options o = {}) {
  vector_sink sink;
  auto w = writer::create(s, o, sink);
  REQUIRE(w);
  for (const auto &r : rows) REQUIRE(w.value()->append_row(r));
  REQUIRE(w.value()->finish());
  return std::move(sink.bytes);
}

// Irregular values 0..10006 (a regular pattern such as i * 37 % 100 has deltas with a common factor).
int64_t scatter_at(int i) {
  uint64_t z = static_cast<uint64_t>(i) * 0x9e3779b97f4a7c15ull;
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  return static_cast<int64_t>((z ^ (z >> 27)) % 10007);
}

std::string all_rows(file &f, query q = {}) {
  auto r = f.query(q);
  REQUIRE(r);
  return r->json;
}

}  // namespace

TEST_CASE("format: every type round-trips with nulls", "[format]") {
  schema s{{{"i", column_type::integer},
            {"f", column_type::float64},
            {"d", column_type::decimal},
            {"s", column_type::string},
            {"b", column_type::boolean},
            {"day", column_type::date},
            {"ts", column_type::timestamp},
            {"j", column_type::json}}};
  std::vector<std::vector<cell>> rows = {
      {cell::of(int64_t{-5}), cell::of(1.5), cell::text("0.700"), cell::text("héllo \"q\""), cell::of(true),
       cell::text("2024-02-29"), cell::text("2021-03-04T05:06:07.123Z"), cell::text("{\"a\":[1,2]}")},
      {cell::null(), cell::null(), cell::null(), cell::null(), cell::null(), cell::null(), cell::null(), cell::null()},
      {cell::of(INT64_MAX), cell::of(int64_t{3}), cell::of(int64_t{12}), cell::text(""), cell::of(false),
       cell::of(int64_t{0}), cell::text("1999-12-31T23:00:00-01:30"), cell::text("[]")},
      {cell::of(INT64_MIN), cell::of(-0.1), cell::text("123456789012345678901234567890"), cell::text("x"), cell::null(),
       cell::text("1969-07-20"), cell::of(int64_t{-1}), cell::text("null")},
  };
  auto bytes = write_rows(s, rows);
  auto f = file::open(borrow_bytes(bytes));
  REQUIRE(f);
  CHECK(f->row_count() == 4);
  CHECK(f->schema().columns.size() == 8);
  CHECK(f->schema().columns[2].type == column_type::decimal);
  CHECK(all_rows(*f) ==
        "{\"i\":-5,\"f\":1.5,\"d\":0.700,\"s\":\"h\xc3\xa9llo "
        "\\\"q\\\"\",\"b\":true,\"day\":\"2024-02-29\",\"ts\":\"2021-03-04T05:06:07.123Z\",\"j\":{\"a\":[1,2]}}\n"
        "{\"i\":null,\"f\":null,\"d\":null,\"s\":null,\"b\":null,\"day\":null,\"ts\":null,\"j\":null}\n"
        "{\"i\":9223372036854775807,\"f\":3,\"d\":12,\"s\":\"\",\"b\":false,\"day\":\"1970-01-01\",\"ts\":\"2000-01-"
        "01T00:30:00Z\",\"j\":[]}\n"
        "{\"i\":-9223372036854775808,\"f\":-0.1,\"d\":123456789012345678901234567890,\"s\":\"x\",\"b\":null,\"day\":"
        "\"1969-07-20\",\"ts\":\"1969-12-31T23:59:59.999999Z\",\"j\":null}\n");
  // Projection keeps the asked order.
  query q;
  q.columns = {"s", "i"};
  q.limit = 1;
  CHECK(all_rows(*f, q) == "{\"s\":\"h\xc3\xa9llo \\\"q\\\"\",\"i\":-5}\n");
  // Columns in bulk.
  auto cols = f->columns(columns_query({"i", "s", "d"}));
  REQUIRE(cols);
  CHECK((*cols)[0].ints == std::vector<int64_t>{-5, 0, INT64_MAX, INT64_MIN});
  CHECK((*cols)[0].valid == std::vector<uint8_t>{1, 0, 1, 1});
  CHECK((*cols)[1].text == "h\xc3\xa9llo \"q\"x");
  CHECK((*cols)[1].text_offsets == std::vector<uint32_t>{0, 10, 10, 10, 11});
  CHECK((*cols)[2].reals[0] == Approx(0.7));
}

TEST_CASE("format: a writer checks each value against its column", "[format]") {
  schema s{{{"n", column_type::integer}, {"t", column_type::timestamp}, {"j", column_type::json}}};
  vector_sink sink;
  auto w = writer::create(s, {}, sink);
  REQUIRE(w);
  std::vector<cell> bad = {cell::text("12"), cell::null(), cell::null()};
  auto r = w.value()->append_row(bad);
  REQUIRE_FALSE(r);
  CHECK(r.code() == error_code::SCHEMA_MISMATCH);
  CHECK(r.error().path == "n");
  auto w2 = writer::create(s, {}, sink);
  std::vector<cell> bad_ts = {cell::null(), cell::text("yesterday"), cell::null()};
  CHECK(w2.value()->append_row(bad_ts).code() == error_code::SCHEMA_MISMATCH);
  auto w3 = writer::create(s, {}, sink);
  std::vector<cell> bad_json = {cell::null(), cell::null(), cell::text("{nope")};
  CHECK(w3.value()->append_row(bad_json).code() == error_code::SCHEMA_MISMATCH);
  std::vector<cell> short_row = {cell::null()};
  auto w4 = writer::create(s, {}, sink);
  CHECK(w4.value()->append_row(short_row).code() == error_code::INVALID_ARGUMENT);
  // Options and schemas that cannot be written.
  CHECK(writer::create(schema{}, {}, sink).code() == error_code::INVALID_ARGUMENT);
  CHECK(writer::create(schema{{{"a", column_type::integer}, {"a", column_type::string}}}, {}, sink).code() ==
        error_code::INVALID_ARGUMENT);
  write_options o;
  o.sorted_by = "nope";
  CHECK(writer::create(s, o, sink).code() == error_code::NO_SUCH_COLUMN);
  o = {};
  o.indexes = {{"n", index_kind::text}};
  CHECK(writer::create(s, o, sink).code() == error_code::INVALID_ARGUMENT);
  o = {};
  o.chunk_rows = 0;
  CHECK(writer::create(s, o, sink).code() == error_code::INVALID_ARGUMENT);
}

TEST_CASE("format: encodings fit the data", "[format]") {
  schema s{{{"seq", column_type::integer},
            {"small", column_type::integer},
            {"same", column_type::integer},
            {"runs", column_type::integer},
            {"city", column_type::string},
            {"unique", column_type::string},
            {"x", column_type::float64},
            {"third", column_type::float64},
            {"seconds", column_type::timestamp},
            {"fives", column_type::integer}}};
  std::vector<std::vector<cell>> rows;
  std::vector<std::string> texts;
  const int n = 20000;
  texts.reserve(n);
  for (int i = 0; i < n; ++i) texts.push_back("user-" + std::to_string(i * 7919 % 100003));
  static const char *CITIES[] = {"Paris", "Lagos", "Lima", "Oslo"};
  for (int i = 0; i < n; ++i) {
    const int64_t scatter = scatter_at(i);
    rows.push_back({cell::of(int64_t{1000000} + i * 3), cell::of(scatter % 100), cell::of(int64_t{42}),
                    cell::of(int64_t{i / 5000}), cell::text(CITIES[scatter % 4]),
                    cell::text(texts[static_cast<size_t>(i)]), cell::of(i * 0.25), cell::of(i / 3.0),
                    cell::of(int64_t{1700000000000000} + i * int64_t{60000000} + scatter % 60 * int64_t{1000000}),
                    cell::of(scatter * 5)});
  }
  auto bytes = write_rows(s, rows);
  auto f = file::open(borrow_bytes(bytes));
  REQUIRE(f);
  auto st = f->storage();
  REQUIRE(st);
  auto column_of = [&](const std::string &col) -> const storage_report::column_storage & {
    for (const auto &c : st->columns) {
      if (c.name == col) return c;
    }
    FAIL("no column " << col);
    return st->columns.front();
  };
  auto encodings_of = [&](const std::string &col) {
    std::string names;
    for (const auto &[name, pages] : column_of(col).encodings) names += "\"" + name + "\" ";
    return names;
  };
  CHECK(encodings_of("seq").find("DELTA") != std::string::npos);
  CHECK(encodings_of("small").find("\"FOR\"") != std::string::npos);
  CHECK(encodings_of("same").find("CONSTANT") != std::string::npos);
  CHECK(encodings_of("runs").find("RLE") != std::string::npos);
  CHECK(encodings_of("city").find("DICT+FOR") != std::string::npos);
  CHECK(encodings_of("unique").find("PLAIN_TEXT") != std::string::npos);
  CHECK(encodings_of("x").find("DECIMAL_F64+") != std::string::npos);  // quarters: m / 100
  CHECK(encodings_of("third").find("PLAIN_F64") != std::string::npos);
  CHECK(encodings_of("seconds").find("DELTA_GCD") != std::string::npos);  // microseconds in whole seconds
  CHECK(encodings_of("fives").find("FOR_GCD") != std::string::npos);
  // Sequential ids delta-encode to almost nothing.
  CHECK(column_of("seq").data_bytes < 2000);
  const int64_t second = 20 + scatter_at(12345) % 60;  // row 12345 is at 11:58:20 plus its scatter
  const std::string seconds_text =
      std::to_string(8 + second / 60) + ":" + (second % 60 < 10 ? "0" : "") + std::to_string(second % 60);
  CHECK(all_rows(*f,
                 [] {
                   query q;
                   q.offset = 12345;
                   q.limit = 1;
                   return q;
                 }()) == "{\"seq\":1037035,\"small\":" + std::to_string(scatter_at(12345) % 100) +
                             ",\"same\":42,\"runs\":2,\"city\":\"" + CITIES[scatter_at(12345) % 4] +
                             "\",\"unique\":\"user-" + std::to_string(12345 * 7919 % 100003) +
                             "\",\"x\":3086.25,\"third\":4115,"
                             "\"seconds\":\"2023-11-23T11:5" +
                             seconds_text + "Z\",\"fives\":" + std::to_string(scatter_at(12345) * 5) + "}\n");
}

TEST_CASE("format: zstd is skipped on dense random pages and kept where high-entropy values repeat", "[format]") {
  // Both columns bit-pack (FOR) to bytes of near-uniform frequency, which an order-0 estimate
  // calls incompressible; "period" repeats 1,000 scattered values in turn, an LZ match zstd finds,
  // "noise" never repeats. The writer must still compress the first and may skip the second.
  schema s{{{"period", column_type::integer}, {"noise", column_type::integer}}};
  std::vector<std::vector<cell>> rows;
  for (int i = 0; i < 60000; ++i) {
    const uint64_t k = static_cast<uint64_t>(i % 1000) * 0x9e3779b97f4a7c15ull;
    const uint64_t z = static_cast<uint64_t>(i) * 0xbf58476d1ce4e5b9ull;
    rows.push_back({cell::of(static_cast<int64_t>((k ^ (k >> 29)) % 1000000)),
                    cell::of(static_cast<int64_t>((z ^ (z >> 31)) % 1000000))});
  }
  auto bytes = write_rows(s, rows);
  auto f = file::open(borrow_bytes(bytes));
  REQUIRE(f);
  auto st = f->storage();
  REQUIRE(st);
  REQUIRE(st->columns.size() == 2);
  const auto &period = st->columns[0], &noise = st->columns[1];
  REQUIRE(period.encodings.size() == 1);
  CHECK(period.encodings[0].first == "FOR");
  CHECK(period.data_bytes * 2 < period.encoded_bytes);      // compressed: about a third
  CHECK(noise.data_bytes * 16 > noise.encoded_bytes * 15);  // nothing to gain, stored as it is
  query q;
  q.offset = 1234;
  q.limit = 1;
  CHECK(all_rows(*f, q) ==
        "{\"period\":" + std::to_string(rows[1234][0].i) + ",\"noise\":" + std::to_string(rows[1234][1].i) + "}\n");
}

TEST_CASE("format: small chunks and pages, many of them", "[format]") {
  schema s{{{"id", column_type::integer}, {"name", column_type::string}}};
  std::vector<std::vector<cell>> rows;
  std::vector<std::string> names;
  for (int i = 0; i < 1000; ++i) names.push_back(i % 7 == 0 ? "" : "name " + std::to_string(i));
  for (int i = 0; i < 1000; ++i)
    rows.push_back({cell::of(int64_t{i}), i % 7 == 0 ? cell::null() : cell::text(names[static_cast<size_t>(i)])});
  write_options o;
  o.chunk_rows = 64;
  o.page_bytes = 512;
  auto bytes = write_rows(s, rows, o);
  auto f = file::open(borrow_bytes(bytes));
  REQUIRE(f);
  CHECK(f->chunk_count() == 16);
  auto cols = f->columns(columns_query({"id", "name"}));
  REQUIRE(cols);
  REQUIRE((*cols)[0].ints.size() == 1000);
  for (int i = 0; i < 1000; ++i) {
    CHECK((*cols)[0].ints[static_cast<size_t>(i)] == i);
    CHECK((*cols)[1].valid[static_cast<size_t>(i)] == (i % 7 != 0));
  }
  auto st = f->chunk_statistics("id");
  REQUIRE(st);
  REQUIRE(st->size() == 16);
  CHECK(to_json(*st, column_type::integer).find("{\"chunk\":15,\"rows\":40,\"nulls\":0,\"min\":960,\"max\":999") !=
        std::string::npos);
  CHECK((*st)[15].min.i == 960);
  CHECK((*st)[15].max.i == 999);
}

TEST_CASE("format: sorted_by sorts the rows (stable, nulls last) through the bounded sort", "[format]") {
  schema s{{{"k", column_type::integer}, {"v", column_type::string}}};
  std::vector<std::vector<cell>> rows;
  std::vector<std::string> vs;
  const int n = 60000;
  for (int i = 0; i < n; ++i) vs.push_back(std::to_string(i));
  for (int i = 0; i < n; ++i)
    rows.push_back(
        {i % 1000 == 0 ? cell::null() : cell::of(int64_t{(i * 7919) % 500}), cell::text(vs[static_cast<size_t>(i)])});
  write_options o;
  o.sorted_by = "k";
  o.chunk_rows = 4096;
  o.sort_memory_bytes = 1;  // at least 1 MiB is used: several runs are spilled and merged
  auto bytes = write_rows(s, rows, o);
  auto f = file::open(borrow_bytes(bytes));
  REQUIRE(f);
  CHECK(f->sorted_by() == "k");
  auto cols = f->columns(columns_query({"k", "v"}));
  REQUIRE(cols);
  const auto &k = (*cols)[0];
  const auto &v = (*cols)[1];
  size_t nulls = 0;
  for (size_t i = 1; i < k.ints.size(); ++i) {
    if (!k.valid[i]) {
      ++nulls;
      continue;
    }
    REQUIRE(k.valid[i - 1]);
    REQUIRE(k.ints[i - 1] <= k.ints[i]);
    if (k.ints[i - 1] == k.ints[i]) {
      // Stable: equal keys keep input order.
      auto a = std::stoi(v.text.substr(v.text_offsets[i - 1], v.text_offsets[i] - v.text_offsets[i - 1]));
      auto b = std::stoi(v.text.substr(v.text_offsets[i], v.text_offsets[i + 1] - v.text_offsets[i]));
      REQUIRE(a < b);
    }
  }
  CHECK(nulls + (k.valid[0] ? 0 : 1) == n / 1000);
  // Chunks of a sorted file do not overlap: a range touches one or two chunks.
  auto e = f->explain(
      [] {
        query q;
        q.where = parse_expression("k between 100 and 101").value();
        return q;
      }(),
      true);
  REQUIRE(e);
  INFO(to_json(*e));
  CHECK(e->chunks.scanned == 1);
}

TEST_CASE("format: the same input gives the same bytes, and an empty table is a file", "[format]") {
  auto customers = generate_customers(3000, 7);
  std::vector<cell> cells;
  auto write = [&]() {
    vector_sink sink;
    write_options o;
    o.indexes = {{"id", index_kind::hash}, {"age", index_kind::sorted}, {"name", index_kind::text}};
    auto w = writer::create(customer_schema(), o, sink);
    for (const auto &c : customers) {
      customer_cells(c, cells);
      REQUIRE(w.value()->append_row(cells));
    }
    REQUIRE(w.value()->finish());
    return sink.bytes;
  };
  CHECK(write() == write());
  vector_sink sink;
  auto w = writer::create(customer_schema(), {}, sink);
  REQUIRE(w.value()->finish());
  auto f = file::open(borrow_bytes(sink.bytes));
  REQUIRE(f);
  CHECK(f->row_count() == 0);
  CHECK(f->count().value() == 0);
  CHECK(f->query({}).value().json.empty());
}

TEST_CASE("format: decimals with the same places are stored scaled and print back exactly", "[format]") {
  schema s{{{"price", column_type::decimal}, {"mixed", column_type::decimal}}};
  std::vector<std::vector<cell>> rows;
  std::vector<std::string> prices, mixed;
  const int n = 5000;
  for (int i = 0; i < n; ++i) {
    const int64_t cents = scatter_at(i) * 37 - 150000;
    std::string p = std::to_string(cents / 100) + "." + std::to_string(std::abs(cents % 100) / 10) +
                    std::to_string(std::abs(cents % 10));
    if (cents < 0 && cents > -100) p = "-" + p;  // -0.57, not 0.57
    prices.push_back(p);
    mixed.push_back(i % 3 == 0 ? "1.5" : i % 3 == 1 ? "-0.00" : "123456789012345678901234567890");
  }
  for (int i = 0; i < n; ++i)
    rows.push_back({i % 11 == 0 ? cell::null() : cell::text(prices[static_cast<size_t>(i)]),
                    cell::text(mixed[static_cast<size_t>(i)])});
  auto bytes = write_rows(s, rows);
  auto f = file::open(borrow_bytes(bytes));
  REQUIRE(f);
  auto st = f->storage();
  REQUIRE(st);
  CHECK(to_json(*st).find("\"SCALED+") != std::string::npos);
  std::string expected;
  for (int i = 0; i < n; ++i) {
    expected += "{\"price\":" + (i % 11 == 0 ? std::string("null") : prices[static_cast<size_t>(i)]) +
                ",\"mixed\":" + mixed[static_cast<size_t>(i)] + "}\n";
  }
  CHECK(all_rows(*f) == expected);
}

TEST_CASE("format: short-decimal floats read back the very doubles written, at and past 2^51", "[format]") {
  // DECIMAL_F64 pages below 2^51 in magnitude are read without a conversion instruction a value
  // (format_page_codec.cpp); a page with a larger value takes the plain conversion. Each chunk of
  // four rows is its own page: one in range at its edges, one past it, with every places count.
  schema s{{{"x", column_type::float64}}};
  const int64_t edge = int64_t{1} << 51;
  const std::vector<int64_t> ms = {edge - 1, -edge, 0, -1, edge, -edge - 1, 12345, -7, 999999, -100, 5, 1};
  std::vector<std::vector<cell>> rows;
  std::vector<double> want;
  for (int places : {0, 2, 6}) {
    double divisor = 1;
    for (int k = 0; k < places; ++k) divisor *= 10;
    for (int64_t m : ms) {
      want.push_back(static_cast<double>(m) / divisor);
      rows.push_back({cell::of(want.back())});
    }
  }
  write_options o;
  o.chunk_rows = 4;
  auto bytes = write_rows(s, rows, o);
  auto f = file::open(borrow_bytes(bytes));
  REQUIRE(f);
  auto st = f->storage();
  REQUIRE(st);
  uint64_t decimal_pages = 0;
  for (const auto &[name, pages] : st->columns[0].encodings)
    if (name.rfind("DECIMAL_F64+", 0) == 0) decimal_pages += pages;
  CHECK(decimal_pages == 9);  // every chunk (4 rows, one page): the values are m / 10^places, |m| < 2^53
  auto cols = f->columns(columns_query({"x"}));
  REQUIRE(cols);
  REQUIRE((*cols)[0].reals.size() == want.size());
  for (size_t i = 0; i < want.size(); ++i) {
    INFO("row " << i);
    CHECK(std::memcmp(&(*cols)[0].reals[i], &want[i], sizeof(double)) == 0);
  }
}
