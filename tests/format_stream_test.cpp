// The streaming text_writer: NDJSON and CSV fed in pieces of any size give the same bytes as
// write_ndjson / write_csv, errors keep the whole input's line numbers, and inference from the
// first rows is bounded and reports later values that do not fit.
#include <catch2/catch.hpp>
#include <string>

#include "format_sample_data.h"  // bench/shapes: the sample customers
#include "quire/format.h"

using namespace quire;
using namespace quire::format;

namespace {

struct outcome {
  std::vector<uint8_t> bytes;
  uint64_t rows = 0;
  error_code code = error_code::OK;
  uint64_t offset = 0;
  uint32_t line = 0, column = 0;
  std::string path, message;
};

outcome failure(const quire::error &e) {
  outcome o;
  o.code = e.code;
  o.offset = e.offset;
  o.line = e.line;
  o.column = e.column;
  o.path = e.path;
  o.message = e.message;
  return o;
}

/// The text fed in pieces of `piece` bytes (0: all at once).
outcome streamed(text_format kind, std::string_view text, size_t piece, const write_options &options = {},
                 const input_options &input = {}) {
  vector_sink sink;
  auto w = text_writer::create(kind, options, sink, input);
  if (!w) return failure(w.error());
  for (size_t at = 0; at < text.size(); at += piece ? piece : text.size()) {
    auto r = w.value()->feed(text.substr(at, piece ? piece : text.size()));
    if (!r) return failure(r.error());
  }
  auto n = w.value()->finish();
  if (!n) return failure(n.error());
  outcome o;
  o.bytes = std::move(sink.bytes);
  o.rows = *n;
  return o;
}

/// The whole-text call.
outcome whole(text_format kind, std::string_view text, const write_options &options = {},
              const input_options &input = {}) {
  vector_sink sink;
  auto n =
      kind == text_format::ndjson ? write_ndjson(text, options, sink, input) : write_csv(text, options, sink, input);
  if (!n) return failure(n.error());
  outcome o;
  o.bytes = std::move(sink.bytes);
  o.rows = *n;
  return o;
}

void check_same(const outcome &a, const outcome &b) {
  CHECK(error_name(a.code) == error_name(b.code));
  CHECK(a.line == b.line);
  CHECK(a.column == b.column);
  CHECK(a.offset == b.offset);
  CHECK(a.path == b.path);
  CHECK(a.message == b.message);
  CHECK(a.rows == b.rows);
  CHECK(a.bytes == b.bytes);
}

/// Every piece size the tests try: single bytes (splitting UTF-8, CRLF and quotes everywhere),
/// odd sizes, 64 KiB, and the whole input at once.
const size_t PIECES[] = {1, 2, 3, 7, 64 * 1024, 0};

}  // namespace

TEST_CASE("format stream: NDJSON in pieces gives write_ndjson's bytes", "[format][stream]") {
  auto customers = generate_customers(1500, 11);
  std::string text = customers_ndjson(customers);
  // Blank lines, CRLF, multi-byte UTF-8 and a last line without a line end.
  text += "\r\n  \n{\"id\":1501,\"name\":\"Zoë Ñúñez 😀\",\"country\":\"NA\",\"age\":40,\"balance\":1.5}\r\n";
  text += "{\"id\":1502,\"name\":\"Ada\",\"email\":null,\"created_at\":\"2024-02-03T04:05:06.5+01:00\"}";
  write_options o;
  o.indexes = {{"id", index_kind::hash}, {"name", index_kind::text}};
  o.sorted_by = "created_at";
  o.chunk_rows = 512;
  auto expected = whole(text_format::ndjson, text, o);
  REQUIRE(expected.code == error_code::OK);
  REQUIRE(expected.rows == 1502);
  for (size_t piece : PIECES) {
    INFO("piece " << piece);
    check_same(streamed(text_format::ndjson, text, piece, o), expected);
  }
}

TEST_CASE("format stream: CSV in pieces gives write_csv's bytes, quotes and CRLF split anywhere", "[format][stream]") {
  auto customers = generate_customers(1200, 5);
  std::string text = "\xEF\xBB\xBF" + customers_csv(customers);
  // Quoted fields with the delimiter, doubled quotes, embedded LF and CRLF; a record starting with
  // the bytes of a byte order mark (only the input's first three bytes are one); blank lines.
  text +=
      "1201,\"Okafor, \"\"Ana\"\"\",\"a\nb@example.org\",NA,\"Wind\r\nhoek\",33,12.5,2020-01-01T00:00:00Z\r\n"
      "\r\n\n"
      "\xEF\xBB\xBF"
      "1202,Zoë,z@example.org,DE,Berlin,44,0.25,2021-03-04T05:06:07Z\n"
      "1203,\"\",,,,,,";
  write_options o;
  o.indexes = {{"email", index_kind::sorted}};
  o.chunk_rows = 300;
  for (bool given : {false, true}) {
    input_options in;
    if (given)
      in.schema = schema{{{"id", column_type::string},
                          {"name", column_type::string},
                          {"email", column_type::string},
                          {"country", column_type::string},
                          {"city", column_type::string},
                          {"age", column_type::integer},
                          {"balance", column_type::float64},
                          {"created_at", column_type::timestamp}}};
    auto expected = whole(text_format::csv, text, o, in);
    REQUIRE(expected.code == error_code::OK);
    REQUIRE(expected.rows == 1203);
    for (size_t piece : PIECES) {
      INFO("piece " << piece << (given ? ", given schema" : ", inferred"));
      check_same(streamed(text_format::csv, text, piece, o, in), expected);
    }
  }
}

TEST_CASE("format stream: errors keep the whole input's line, column and offset", "[format][stream]") {
  struct bad {
    text_format kind;
    std::string text;
    error_code code;
    uint32_t line;
  };
  std::string lines;
  for (int i = 0; i < 300; ++i) lines += "{\"a\":" + std::to_string(i) + ",\"b\":\"x\"}\n";
  std::string records = "a,b\n";
  for (int i = 0; i < 300; ++i) records += std::to_string(i) + ",\"x\ny\"\n";
  const bad cases[] = {
      {text_format::ndjson, lines + "{\"a\":1,}\n", error_code::INVALID_JSON, 301},
      {text_format::ndjson, lines + "\r\n[1]\n", error_code::WRONG_TYPE, 302},
      {text_format::ndjson, lines + "{\"a\":\"s\"}\n", error_code::SCHEMA_MISMATCH, 301},
      {text_format::ndjson, lines + "{\"a\":1,\"b\":\"\xC3\"}", error_code::INVALID_UTF8, 301},
      {text_format::csv, records + "1,2,3\n", error_code::INVALID_CSV, 602},
      {text_format::csv, records + "1,\"2\"x\n", error_code::INVALID_CSV, 602},
      {text_format::csv, records + "1,a\"b\n", error_code::INVALID_CSV, 602},
      {text_format::csv, records + "1,\"open\nstill open", error_code::INVALID_CSV, 602},
      {text_format::csv, records + "1,2\r3\n", error_code::INVALID_CSV, 602},
      {text_format::csv, "", error_code::EMPTY_INPUT, 0},
      {text_format::ndjson, "\n \n", error_code::EMPTY_INPUT, 0},
  };
  for (const auto &c : cases) {
    auto expected = whole(c.kind, c.text);
    REQUIRE(expected.code == c.code);
    CHECK(expected.line == c.line);
    for (size_t piece : PIECES) {
      INFO(error_name(c.code) << " at line " << c.line << ", piece " << piece);
      check_same(streamed(c.kind, c.text, piece), expected);
    }
  }
  // A given schema: a value that does not fit is found on its line too.
  input_options given;
  given.schema = schema{{{"a", column_type::integer}, {"b", column_type::string}}};
  auto expected = whole(text_format::ndjson, lines + "{\"a\":2.5}\n", {}, given);
  CHECK(expected.code == error_code::SCHEMA_MISMATCH);
  CHECK(expected.line == 301);
  check_same(streamed(text_format::ndjson, lines + "{\"a\":2.5}\n", 5, {}, given), expected);
}

TEST_CASE("format stream: inference reads the first infer_rows rows; later misfits are SCHEMA_MISMATCH",
          "[format][stream]") {
  input_options in;
  in.infer_rows = 3;
  std::string text = "{\"a\":1}\n{\"a\":2}\n\n{\"a\":3,\"b\":null}\n{\"a\":4}\n{\"a\":\"five\"}\n";
  auto r = streamed(text_format::ndjson, text, 4, {}, in);
  CHECK(r.code == error_code::SCHEMA_MISMATCH);
  CHECK(r.line == 6);
  CHECK(r.path == "a");
  CHECK(r.message.find("inferred from the first 3 rows") != std::string::npos);
  // A key first seen after the inferred rows.
  r = streamed(text_format::ndjson, "{\"a\":1}\n{\"a\":2}\n{\"a\":3,\"c\":true}\n", 0, {}, [] {
    input_options i;
    i.infer_rows = 2;
    return i;
  }());
  CHECK(r.code == error_code::SCHEMA_MISMATCH);
  CHECK(r.line == 3);
  CHECK(r.path == "c");
  // A column that only held nulls in the inferred rows is string.
  r = streamed(text_format::csv, "a,b\n1,\n2,\n3,\n4,5\n", 1, {}, in);
  CHECK(r.code == error_code::OK);
  auto f = file::open(borrow_bytes(r.bytes));
  REQUIRE(f);
  CHECK(f->schema().columns[1].type == column_type::string);
  CHECK(f->query({}).value().json ==
        "{\"a\":1,\"b\":null}\n{\"a\":2,\"b\":null}\n{\"a\":3,\"b\":null}\n{\"a\":4,\"b\":\"5\"}\n");
  // CSV: an integer column that later holds text.
  r = streamed(text_format::csv, "a,b\n1,x\n2,y\n3,z\nfour,w\n", 2, {}, in);
  CHECK(r.code == error_code::SCHEMA_MISMATCH);
  CHECK(r.line == 5);
  CHECK(r.column == 1);
  // A given schema avoids it.
  in.schema = schema{{{"a", column_type::string}, {"b", column_type::string}}};
  CHECK(streamed(text_format::csv, "a,b\n1,x\n2,y\n3,z\nfour,w\n", 2, {}, in).rows == 4);
}

TEST_CASE("format stream: when the first rows infer the same schema, the bytes equal the whole-text call",
          "[format][stream]") {
  auto customers = generate_customers(3000, 8);
  input_options in;
  in.infer_rows = 100;
  write_options o;
  o.indexes = {{"country", index_kind::hash}};
  check_same(streamed(text_format::ndjson, customers_ndjson(customers), 4096, o, in),
             whole(text_format::ndjson, customers_ndjson(customers), o));
  check_same(streamed(text_format::csv, customers_csv(customers), 999, o, in),
             whole(text_format::csv, customers_csv(customers), o));
  // infer_bytes: inference ends at the first row past it, whatever the pieces.
  in.infer_rows = 1000000;
  in.infer_bytes = 5000;
  auto a = streamed(text_format::ndjson, customers_ndjson(customers), 1, o, in);
  CHECK(a.code == error_code::OK);
  check_same(streamed(text_format::ndjson, customers_ndjson(customers), 0, o, in), a);
  CHECK(a.bytes == whole(text_format::ndjson, customers_ndjson(customers), o).bytes);
}

TEST_CASE("format stream: memory is bounded by the longest line; misuse is refused", "[format][stream]") {
  input_options in;
  in.max_line_bytes = 100;
  std::string text = "{\"a\":1}\n{\"a\":\"" + std::string(1000, 'x') + "\"}\n";
  auto r = streamed(text_format::ndjson, text, 10, {}, in);
  CHECK(r.code == error_code::LINE_TOO_LONG);
  CHECK(r.line == 2);
  CHECK(r.offset == 8);
  CHECK(whole(text_format::ndjson, text, {}, in).code == error_code::LINE_TOO_LONG);
  // A CSV record may span lines inside quotes: the bound is on the record.
  r = streamed(text_format::csv, "a\n\"" + std::string(1000, '\n') + "\"\n", 10, {}, in);
  CHECK(r.code == error_code::LINE_TOO_LONG);
  CHECK(r.line == 2);
  // After an error, and after finish(), the writer refuses more input.
  vector_sink sink;
  auto w = text_writer::create(text_format::ndjson, {}, sink);
  REQUIRE(w);
  CHECK(w.value()->feed("[1]\n").code() == error_code::WRONG_TYPE);
  CHECK(w.value()->feed("{\"a\":1}\n").code() == error_code::INVALID_ARGUMENT);
  auto w2 = text_writer::create(text_format::csv, {}, sink);
  REQUIRE(w2.value()->feed("a\n1\n"));
  CHECK(w2.value()->finish().value() == 1);
  CHECK(w2.value()->feed("2\n").code() == error_code::INVALID_ARGUMENT);
  CHECK(w2.value()->finish().code() == error_code::INVALID_ARGUMENT);
  // A given schema with an unknown sorted_by fails at create.
  input_options given;
  given.schema = schema{{{"a", column_type::integer}}};
  write_options bad;
  bad.sorted_by = "nope";
  CHECK(text_writer::create(text_format::ndjson, bad, sink, given).code() == error_code::NO_SUCH_COLUMN);
}

TEST_CASE("format stream: NDJSON is cut into lines as the line feeder cuts it, split at every byte",
          "[format][stream]") {
  // A line of max_line_bytes is read, one byte more is LINE_TOO_LONG with the feeder's text (a '\r'
  // before the '\n' counted, a blank line too), wherever the input is cut into two pieces: inside
  // the line, at its '\r', its '\n', or so that the first piece alone already passes the limit.
  input_options in;
  in.max_line_bytes = 16;
  const std::string ok = "{\"a\":1,\"b\":\"xy\"}";
  REQUIRE(ok.size() == 16);
  struct text_case {
    std::string text;
    error_code code;
    uint32_t line;
  };
  const text_case cases[] = {
      {ok + "\n\r\n  \n" + ok, error_code::OK, 0},
      {ok + "\n{\"a\":12,\"b\":\"xy\"}\n" + ok + "\n", error_code::LINE_TOO_LONG, 2},
      {ok + "\n" + ok + "\r\n", error_code::LINE_TOO_LONG, 2},
      {ok + "\n" + std::string(17, ' ') + "\n" + ok + "\n", error_code::LINE_TOO_LONG, 2},
      {ok + "\n\r\n\n{\"a\":12,\"b\":\"xy\"}", error_code::LINE_TOO_LONG, 4},
  };
  for (const auto &c : cases) {
    auto expected = whole(text_format::ndjson, c.text, {}, in);
    REQUIRE(expected.code == c.code);
    CHECK(expected.line == c.line);
    if (c.code == error_code::LINE_TOO_LONG)
      CHECK(expected.message == "line " + std::to_string(c.line) + " is longer than max_line_bytes (16 bytes)");
    for (size_t cut = 0; cut <= c.text.size(); ++cut) {
      INFO("case " << error_name(c.code) << " line " << c.line << ", cut at " << cut);
      vector_sink sink;
      auto w = text_writer::create(text_format::ndjson, {}, sink, in);
      REQUIRE(w);
      auto fed = w.value()->feed(std::string_view(c.text).substr(0, cut));
      if (fed) fed = w.value()->feed(std::string_view(c.text).substr(cut));
      auto n = fed ? w.value()->finish() : result<uint64_t>(fed.error());
      outcome got;
      if (n) {
        got.bytes = std::move(sink.bytes);
        got.rows = *n;
      } else {
        got = failure(n.error());
      }
      check_same(got, expected);
    }
  }
}

TEST_CASE("format stream: schema_inferrer in pieces infers what infer_ndjson_schema / infer_csv_schema do",
          "[format][stream]") {
  auto customers = generate_customers(700, 2);
  std::string nd = customers_ndjson(customers) + "{\"id\":701,\"balance\":12.50,\"extra\":[1]}\n";
  std::string csv = "\xEF\xBB\xBF" + customers_csv(customers) + "701,\"a\nb\",,,,,12.50,2020-01-01\r\n";
  struct text_case {
    text_format kind;
    std::string text;
  };
  const text_case cases[] = {
      {text_format::ndjson, nd},         {text_format::csv, csv},   {text_format::ndjson, nd + "{\"id\":\"x\"}\n"},
      {text_format::csv, csv + "1,2\n"}, {text_format::ndjson, ""}, {text_format::csv, "\n\n"},
  };
  auto render = [](const result<schema> &s) {
    if (!s)
      return std::string(error_name(s.code())) + " line " + std::to_string(s.error().line) + " column " +
             std::to_string(s.error().column) + " offset " + std::to_string(s.error().offset) + " " + s.error().path +
             ": " + s.error().message;
    std::string out;
    for (const auto &c : s->columns) out += c.name + ":" + std::string(type_name(c.type)) + " ";
    return out;
  };
  for (const auto &c : cases) {
    auto expected = render(c.kind == text_format::ndjson ? infer_ndjson_schema(c.text) : infer_csv_schema(c.text));
    for (size_t piece : PIECES) {
      INFO(expected << ", piece " << piece);
      auto inf = schema_inferrer::create(c.kind);
      REQUIRE(inf);
      result<void> fed;
      for (size_t at = 0; fed && at < c.text.size(); at += piece ? piece : c.text.size())
        fed = inf.value()->feed(std::string_view(c.text).substr(at, piece ? piece : c.text.size()));
      auto got = fed ? inf.value()->finish() : result<schema>(fed.error());
      CHECK(render(got) == expected);
    }
  }
}
