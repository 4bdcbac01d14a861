// Rows handed over as columns (write_columns, infer_columns_schema): the file is the one
// write_ndjson writes from the NDJSON those columns stand for, byte for byte, and the errors are
// the NDJSON path's codes with the row as the line.
#include <catch2/catch.hpp>
#include <map>
#include <string>

#include "format_sample_data.h"  // bench/shapes: the sample customers
#include "quire/format.h"
#include "quire/json.h"
#include "quire/number_text.h"

using namespace quire;
using namespace quire::format;

namespace {

/// Columns built from NDJSON, keys in first-seen order, each value as the kind a caller would give
/// it: integers as ints, numbers whose text append_double gives back as reals, other numbers as
/// their text, strings as text, objects and arrays as their JSON text.
struct columns_of_ndjson {
  struct column {
    std::string name;
    std::vector<uint8_t> kinds;
    std::vector<int64_t> ints;
    std::vector<double> reals;
    std::string text;
    std::vector<uint32_t> offsets{0};
  };
  std::vector<column> cols;
  uint64_t rows = 0;

  explicit columns_of_ndjson(const std::string &ndjson) {
    std::map<std::string, size_t> at;
    size_t begin = 0;
    while (begin < ndjson.size()) {
      size_t end = ndjson.find('\n', begin);
      if (end == std::string::npos) end = ndjson.size();
      std::string line = ndjson.substr(begin, end - begin);
      begin = end + 1;
      if (line.empty()) continue;
      auto doc = json::parse(line);
      REQUIRE(doc);
      for (auto m : doc->root().get_object().value()) {
        auto [it, added] = at.emplace(std::string(m.key), cols.size());
        if (added) {
          column c;
          c.name = std::string(m.key);
          c.kinds.assign(rows, uint8_t(value_kind::absent));
          c.ints.assign(rows, 0);
          c.reals.assign(rows, 0);
          c.offsets.assign(rows + 1, 0);
          cols.push_back(std::move(c));
        }
        column &c = cols[it->second];
        c.kinds.push_back(0);
        c.ints.push_back(0);
        c.reals.push_back(0);
        uint8_t &k = c.kinds.back();
        switch (m.val.type()) {
          case json::kind::null_value: k = uint8_t(value_kind::null_value); break;
          case json::kind::boolean:
            k = uint8_t(m.val.get_bool().value() ? value_kind::boolean_true : value_kind::boolean_false);
            break;
          case json::kind::number: {
            auto t = m.val.get_number_text().value();
            std::string printed;
            if (auto d = m.val.get_double(); d) append_double(printed, *d);
            if (auto i = m.val.get_int64(); i && std::to_string(*i) == t) {
              k = uint8_t(value_kind::integer);
              c.ints.back() = *i;
            } else if (printed == t) {
              k = uint8_t(value_kind::real);
              c.reals.back() = m.val.get_double().value();
            } else {
              k = uint8_t(value_kind::number_text);
              c.text.append(t);
            }
            break;
          }
          case json::kind::string:
            k = uint8_t(value_kind::text);
            c.text.append(m.val.get_string().value());
            break;
          default:
            k = uint8_t(value_kind::json_text);
            c.text.append(json::to_json(m.val));
            break;
        }
        c.offsets.push_back(static_cast<uint32_t>(c.text.size()));
      }
      ++rows;
      for (auto &c : cols) {
        if (c.kinds.size() == rows) continue;
        c.kinds.push_back(uint8_t(value_kind::absent));
        c.ints.push_back(0);
        c.reals.push_back(0);
        c.offsets.push_back(static_cast<uint32_t>(c.text.size()));
      }
    }
  }

  std::vector<column_input> input() const {
    std::vector<column_input> out;
    for (const auto &c : cols) out.push_back({c.name, c.kinds, c.ints, c.reals, c.text, c.offsets});
    return out;
  }
};

std::string rows_of(const std::vector<uint8_t> &bytes) {
  auto f = file::open(borrow_bytes(bytes));
  REQUIRE(f);
  return f->query({}).value().json;
}

struct written {
  result<uint64_t> rows;
  std::vector<uint8_t> bytes;
};

written by_ndjson(const std::string &ndjson, const write_options &options, const input_options &input = {}) {
  vector_sink sink;
  auto r = write_ndjson(ndjson, options, sink, input);
  return {std::move(r), std::move(sink.bytes)};
}

written by_columns(const std::string &ndjson, const write_options &options, const input_options &input = {}) {
  columns_of_ndjson cols(ndjson);
  vector_sink sink;
  auto r = write_columns(cols.input(), cols.rows, options, sink, input);
  return {std::move(r), std::move(sink.bytes)};
}

void same_file(const std::string &ndjson, const write_options &options, const input_options &input = {}) {
  auto a = by_ndjson(ndjson, options, input);
  auto b = by_columns(ndjson, options, input);
  REQUIRE(a.rows);
  REQUIRE(b.rows);
  CHECK(*a.rows == *b.rows);
  CHECK(a.bytes.size() == b.bytes.size());
  CHECK(a.bytes == b.bytes);
}

void same_error(const std::string &ndjson, const input_options &input = {}) {
  auto a = by_ndjson(ndjson, {}, input);
  auto b = by_columns(ndjson, {}, input);
  REQUIRE_FALSE(a.rows);
  REQUIRE_FALSE(b.rows);
  CHECK(error_name(b.rows.error().code) == error_name(a.rows.error().code));
  CHECK(b.rows.error().line == a.rows.error().line);
  CHECK(b.rows.error().path == a.rows.error().path);
}

}  // namespace

TEST_CASE("format columns: the customers give write_ndjson's bytes", "[format][columns]") {
  const std::string ndjson = customers_ndjson(generate_customers(3000));
  write_options plain;
  plain.chunk_rows = 1024;
  same_file(ndjson, plain);
  write_options indexed = plain;
  indexed.indexes = {{"id", index_kind::hash}, {"name", index_kind::text}, {"created_at", index_kind::sorted}};
  same_file(ndjson, indexed);
  input_options given;
  given.schema = customer_schema();
  same_file(ndjson, indexed, given);
  write_options sorted = plain;
  sorted.sorted_by = "balance";
  same_file(ndjson, sorted, given);

  columns_of_ndjson cols(ndjson);
  auto s = infer_columns_schema(cols.input(), cols.rows);
  REQUIRE(s);
  auto n = infer_ndjson_schema(ndjson);
  REQUIRE(n);
  REQUIRE(s->columns.size() == n->columns.size());
  for (size_t i = 0; i < s->columns.size(); ++i) {
    CHECK(s->columns[i].name == n->columns[i].name);
    CHECK(s->columns[i].type == n->columns[i].type);
  }
}

TEST_CASE("format columns: every kind, mixes, nulls and missing keys as NDJSON has them", "[format][columns]") {
  const std::string ndjson =
      "{\"id\":1,\"x\":1,\"money\":\"12.50\",\"when\":\"2024-01-02\",\"dt\":\"2024-01-02T03:04:05Z\",\"ok\":true,"
      "\"tags\":[1,2],\"name\":\"a\",\"d\":12.50,\"big\":123456789012345678901234}\n"
      "{\"id\":2,\"x\":2.5,\"when\":\"2024-01-03T00:00:00Z\",\"dt\":null,\"ok\":false,\"tags\":{\"k\":1},\"name\":null,"
      "\"d\":1,\"extra\":null,\"big\":-4}\n"
      "{\"name\":\"\\u00e9t\\u00e9 \\ud83d\\ude00\",\"x\":0.30000000000000004,\"tags\":{\"b\" : [true, null]}}\n"
      "{\"id\":9007199254740993,\"x\":1e300,\"d\":-0}\n";
  same_file(ndjson, {});
  write_options indexed;
  indexed.indexes = {{"id", index_kind::sorted}, {"name", index_kind::text}, {"x", index_kind::hash}};
  same_file(ndjson, indexed);
}

TEST_CASE("format columns: reals read as their JavaScript text", "[format][columns]") {
  // Integral doubles beyond 2^53 print with padded digits (4611686018427387904 as
  // 4611686018427388000): an integer column reads those digits, as it would from JSON.stringify.
  const double values[] = {4611686018427387904.0,
                           9007199254740994.0,
                           1e20,
                           123456789012345680000.0,
                           1e21,
                           -0.0,
                           0.1,
                           1.0 / 3.0,
                           5e-324,
                           2.5};
  std::string ndjson;
  std::vector<uint8_t> kinds;
  std::vector<double> reals;
  for (double v : values) {
    ndjson += "{\"v\":";
    append_double(ndjson, v);
    ndjson += "}\n";
    kinds.push_back(uint8_t(value_kind::real));
    reals.push_back(v);
  }
  const std::vector<uint32_t> no_offsets;
  std::vector<column_input> cols{{"v", kinds, {}, reals, {}, no_offsets}};
  for (column_type type : {column_type::float64, column_type::decimal, column_type::string}) {
    input_options given;
    given.schema = schema{{{"v", type}}};
    auto a = by_ndjson(ndjson, {}, given);
    vector_sink sink;
    auto b = write_columns(cols, kinds.size(), {}, sink, given);
    INFO("type " << type_name(type));
    REQUIRE(bool(a.rows) == bool(b));
    if (a.rows) CHECK(rows_of(a.bytes) == rows_of(sink.bytes));
    if (a.rows) CHECK(a.bytes == sink.bytes);
    else CHECK(a.rows.error().code == b.error().code);
  }
  // Inferred: 0.1 + 0.2's 17 digits make the column decimal, as its JSON text does.
  vector_sink sink;
  REQUIRE(write_columns(cols, kinds.size(), {}, sink));
  CHECK(rows_of(by_ndjson(ndjson, {}).bytes) == rows_of(sink.bytes));
  CHECK(by_ndjson(ndjson, {}).bytes == sink.bytes);
  // Integers: the first five are integral.
  input_options ints;
  ints.schema = schema{{{"v", column_type::integer}}};
  std::vector<column_input> first{{"v", std::span(kinds).first(5), {}, std::span(reals).first(5), {}, no_offsets}};
  std::string first_ndjson;
  for (size_t i = 0, lines = 0; i < ndjson.size() && lines < 5; ++i) {
    first_ndjson += ndjson[i];
    if (ndjson[i] == '\n') ++lines;
  }
  auto a = by_ndjson(first_ndjson, {}, ints);
  vector_sink isink;
  auto b = write_columns(first, 5, {}, isink, ints);
  REQUIRE(bool(a.rows) == bool(b));
  if (a.rows) CHECK(a.bytes == isink.bytes);
  // Not finite: null, as JSON.stringify writes it.
  const std::vector<uint8_t> k2{uint8_t(value_kind::real), uint8_t(value_kind::real)};
  const std::vector<double> r2{std::numeric_limits<double>::quiet_NaN(), 1.5};
  vector_sink nsink;
  REQUIRE(write_columns(std::vector<column_input>{{"v", k2, {}, r2, {}, no_offsets}}, 2, {}, nsink));
  CHECK(by_ndjson("{\"v\":null}\n{\"v\":1.5}\n", {}).bytes == nsink.bytes);
}

TEST_CASE("format columns: errors as NDJSON gives them, the row as the line", "[format][columns]") {
  same_error("{\"a\":1}\n{\"a\":2}\n{\"a\":\"x\"}\n");           // integer then string
  same_error("{\"a\":1,\"b\":true}\n{\"b\":1}\n{\"a\":[1]}\n");  // b fails first, at row 2
  same_error("{\"a\":{\"k\":1}}\n{\"a\":\"2024-01-01\"}\n");     // json then date
  input_options given;
  given.schema = schema{{{"a", column_type::integer}}};
  same_error("{\"a\":1}\n{\"a\":2,\"zz\":null}\n", given);      // a key the schema lacks
  same_error("{\"a\":1}\n{\"a\":\"x\"}\n{\"zz\":1}\n", given);  // the earlier row's bad value first
  same_error("{\"a\":1}\n{\"a\":1.5}\n", given);                // no fraction in an integer
  input_options stamps;
  stamps.schema = schema{{{"t", column_type::timestamp}}};
  same_error("{\"t\":\"2024-01-01T00:00:00Z\"}\n{\"t\":\"yesterday\"}\n", stamps);
  input_options flags;
  flags.schema = schema{{{"f", column_type::boolean}}};
  same_error("{\"f\":true}\n{\"f\":{\"no\":1}}\n", flags);
}

TEST_CASE("format columns: bad columns are INVALID_ARGUMENT, bounded", "[format][columns]") {
  const std::vector<uint8_t> text_kinds{uint8_t(value_kind::text), uint8_t(value_kind::text)};
  const std::vector<uint32_t> offsets{0, 2, 4};
  const std::string text = "abcd";
  auto code_of = [](std::vector<column_input> cols, uint64_t rows) {
    vector_sink sink;
    auto r = write_columns(cols, rows, {}, sink);
    REQUIRE_FALSE(r);
    return std::string(error_name(r.error().code));
  };
  CHECK(code_of({{"a", text_kinds, {}, {}, text, offsets}}, 3) == "INVALID_ARGUMENT");  // kinds too short
  CHECK(code_of({{"a", text_kinds, {}, {}, text, std::span(offsets).first(2)}}, 2) == "INVALID_ARGUMENT");
  CHECK(code_of({{"a", text_kinds, {}, {}, "abc", offsets}}, 2) == "INVALID_ARGUMENT");  // past the text
  const std::vector<uint32_t> back{0, 3, 2};
  CHECK(code_of({{"a", text_kinds, {}, {}, text, back}}, 2) == "INVALID_ARGUMENT");
  const std::vector<uint8_t> ints{uint8_t(value_kind::integer), uint8_t(value_kind::integer)};
  const std::vector<int64_t> one{1};
  CHECK(code_of({{"a", ints, one, {}, {}, {}}}, 2) == "INVALID_ARGUMENT");
  const std::vector<uint8_t> unknown{42, 1};
  CHECK(code_of({{"a", unknown, {}, {}, {}, {}}}, 2) == "INVALID_ARGUMENT");
  CHECK(code_of({{"a", text_kinds, {}, {}, text, offsets}, {"a", text_kinds, {}, {}, text, offsets}}, 2) ==
        "INVALID_ARGUMENT");
  CHECK(code_of({{"", text_kinds, {}, {}, text, offsets}}, 2) == "INVALID_ARGUMENT");
  CHECK(code_of({}, 0) == "EMPTY_INPUT");
  const std::vector<uint8_t> numbers{uint8_t(value_kind::number_text), uint8_t(value_kind::number_text)};
  CHECK(code_of({{"a", numbers, {}, {}, "1x2", std::vector<uint32_t>{0, 1, 3}}}, 2) == "INVALID_ARGUMENT");
  const std::vector<uint8_t> json_kinds{uint8_t(value_kind::json_text), uint8_t(value_kind::json_text)};
  CHECK(code_of({{"a", json_kinds, {}, {}, "[1]{", std::vector<uint32_t>{0, 3, 4}}}, 2) != "OK");
  CHECK(code_of({{"a", json_kinds, {}, {}, "[1]12", std::vector<uint32_t>{0, 3, 5}}}, 2) == "INVALID_ARGUMENT");
}

TEST_CASE("format columns: a huge string and an all-null column", "[format][columns]") {
  std::string big(3u << 20, 'q');
  std::string ndjson = "{\"s\":\"" + big + "\",\"n\":null}\n{\"s\":\"b\",\"n\":null}\n";
  same_file(ndjson, {});
  write_options indexed;
  indexed.indexes = {{"s", index_kind::text}, {"s", index_kind::hash}};
  same_file(ndjson, indexed);
}
