// ndjson::line_feeder, the one line cutter of core's NDJSON readers: pieces cut at every byte
// give the same lines (text, offset, number), CRLF and blank lines, the limit at exactly
// max_line_bytes and one byte over it, going on after a too-long line, and the same
// LINE_TOO_LONG from every reader that uses it.
#include <catch2/catch.hpp>

#include <string>
#include <vector>

#include "quire/format.h"
#include "quire/ndjson.h"
#include "quire/view.h"

using namespace quire;

namespace {

struct cut {
  std::string text;
  uint64_t offset = 0, number = 0, bytes = 0;
  bool blank = false;
  bool operator==(const cut &) const = default;
};

// The lines of `text` fed in pieces of `size` bytes (0: whole, as the last piece); a LINE_TOO_LONG
// becomes a line whose text is "!" and whose offset is the error's.
std::vector<cut> lines_of(std::string_view text, size_t size, uint64_t max = ndjson::DEFAULT_MAX_LINE_BYTES) {
  ndjson::line_feeder f(max);
  std::vector<cut> out;
  auto drain = [&] {
    while (true) {
      auto l = f.next();
      if (!l) {
        REQUIRE(l.code() == error_code::LINE_TOO_LONG);
        out.push_back({"!", l.error().offset, l.error().line, 0, false});
        continue;
      }
      if (!*l) return;
      out.push_back({std::string((*l)->text), (*l)->offset, (*l)->number, (*l)->bytes, (*l)->blank()});
    }
  };
  if (size == 0) {
    f.feed(text, true);
    drain();
    return out;
  }
  for (size_t at = 0; at < text.size(); at += size) {
    f.feed(text.substr(at, size));
    drain();
  }
  f.feed({}, true);
  drain();
  return out;
}

}  // namespace

TEST_CASE("line_feeder: pieces cut at every byte give the lines of the whole text", "[line_feeder]") {
  const std::string text = "{\"a\":1}\r\n\n  \t\r\n{\"b\":2}\n\r\n{\"c\":3}";
  const std::vector<cut> want = {
      {"{\"a\":1}", 0, 1, 8, false},  {"", 9, 2, 0, true},  {"  \t", 10, 3, 4, true},
      {"{\"b\":2}", 15, 4, 7, false}, {"", 23, 5, 1, true}, {"{\"c\":3}", 25, 6, 7, false},
  };
  CHECK(lines_of(text, 0) == want);
  for (size_t size = 1; size <= text.size(); ++size) {
    INFO("pieces of " << size);
    CHECK(lines_of(text, size) == want);
  }
  // A text ending in a line end has no empty last line.
  CHECK(lines_of("a\nb\n", 1).size() == 2);
  CHECK(lines_of("", 1).empty());
  // Every byte split between two pieces, the rest whole.
  for (size_t at = 0; at <= text.size(); ++at) {
    ndjson::line_feeder f;
    std::vector<cut> got;
    auto drain = [&] {
      REQUIRE(f.each([&](const ndjson::line &l) -> result<void> {
        got.push_back({std::string(l.text), l.offset, l.number, l.bytes, l.blank()});
        return {};
      }));
    };
    f.feed(std::string_view(text).substr(0, at));
    drain();
    f.feed(std::string_view(text).substr(at), true);
    drain();
    CHECK(got == want);
  }
}

TEST_CASE("line_feeder: the limit at exactly max_line_bytes and one byte over", "[line_feeder]") {
  // 8 bytes fit in max 8; 9 do not, a '\r' before the '\n' counted, a blank line too.
  for (size_t size : {size_t{0}, size_t{1}, size_t{3}, size_t{100}}) {
    INFO("pieces of " << size);
    auto ok = lines_of("12345678\nabc\n", size, 8);
    REQUIRE(ok.size() == 2);
    CHECK(ok[0].text == "12345678");
    auto over = lines_of("123456789\nabc\n", size, 8);
    REQUIRE(over.size() == 2);
    CHECK(over[0] == cut{"!", 0, 1, 0, false});
    CHECK(over[1] == cut{"abc", 10, 2, 3, false});  // the feeder goes on with the next line
    auto cr = lines_of("1234567\r\nx\n", size, 7);
    CHECK(cr.at(0).text == "!");
    CHECK(cr.at(1).text == "x");
    auto blank = lines_of("x\n         \ny", size, 8);
    CHECK(blank == std::vector<cut>{{"x", 0, 1, 1, false}, {"!", 2, 2, 0, false}, {"y", 12, 3, 1, false}});
    auto last = lines_of("ab\n123456789", size, 8);  // a last line without a line end
    CHECK(last.at(1) == cut{"!", 3, 2, 0, false});
  }
}

TEST_CASE("line_feeder: one LINE_TOO_LONG text, line number and offset", "[line_feeder]") {
  ndjson::line_feeder f(4);
  f.feed("ab\nabcde\n", true);
  REQUIRE(f.next());
  auto e = f.next();
  REQUIRE(e.code() == error_code::LINE_TOO_LONG);
  CHECK(e.error().message == "line 2 is longer than max_line_bytes (4 bytes)");
  CHECK(e.error().offset == 3);
  CHECK(e.error().line == 2);
  CHECK(e.error().describe() ==
        "LINE_TOO_LONG at offset 3, line 2, column 1: line 2 is longer than max_line_bytes (4 bytes)");
}

TEST_CASE("line_feeder: restart numbers lines from a given offset and line", "[line_feeder]") {
  ndjson::line_feeder f;
  f.feed("abc");
  REQUIRE(f.next());
  CHECK(f.holding());
  f.restart(100, 7);
  CHECK_FALSE(f.holding());
  f.feed("x\ny", true);
  auto a = f.next();
  REQUIRE((a && *a));
  CHECK((*a)->offset == 100);
  CHECK((*a)->number == 7);
  auto b = f.next();
  REQUIRE((b && *b));
  CHECK((*b)->offset == 102);
  CHECK((*b)->number == 8);
  CHECK(f.next_number() == 9);
}

TEST_CASE("line_feeder: every NDJSON reader refuses the same line with the same text", "[line_feeder]") {
  // Each reader at its default limit: one line of exactly the limit is read (it is not JSON, so
  // its error is the JSON layer's), one byte more is LINE_TOO_LONG with the feeder's message.
  const uint64_t max = ndjson::DEFAULT_MAX_LINE_BYTES;
  STATIC_REQUIRE(format::DEFAULT_MAX_LINE_BYTES == max);
  STATIC_REQUIRE(view::table_writer::MAX_LINE_BYTES == max);
  STATIC_REQUIRE(view::ndjson_feeder::DEFAULT_MAX_LINE_BYTES == max);
  const std::string head = "{\"resourceType\":\"Patient\",\"id\":\"p\"}\n";
  const std::string want = "line 2 is longer than max_line_bytes (16777216 bytes)";
  for (uint64_t size : {max, max + 1}) {
    INFO("a line of " << size << " bytes");
    const std::string text = head + std::string(size, 'x') + "\n";
    std::vector<error> got;

    ndjson::reader r;
    auto visit = [](const ndjson::line_result &) { return true; };
    auto a = r.feed(text, visit);
    got.push_back(a ? error() : a.error());

    auto v = view::compile(R"({"resource":"Patient","select":[{"column":[{"name":"id","path":"id"}]}]})");
    REQUIRE(v);
    std::vector<view::row> rows;
    view::runner run(*v);
    auto b = run.run_ndjson(text, rows);
    got.push_back(b ? error() : b.error());

    view::ndjson_feeder feeder(*v);
    rows.clear();
    auto c = feeder.feed(text, rows);
    got.push_back(c ? error() : c.error());

    format::vector_sink sink;
    auto w = view::table_writer::create(*v, view::output_kind::ndjson, {}, sink);
    REQUIRE(w);
    auto d = w.value()->feed_ndjson(text);
    got.push_back(d ? error() : d.error());

    format::vector_sink sink2;
    auto e = format::write_ndjson(text, {}, sink2);
    got.push_back(e ? error() : e.error());

    format::vector_sink sink3;
    auto tw = format::text_writer::create(format::text_format::ndjson, {}, sink3);
    REQUIRE(tw);
    auto f = tw.value()->feed(text);
    if (!f) {
      got.push_back(f.error());
    } else {
      auto fin = tw.value()->finish();
      got.push_back(fin ? error() : fin.error());
    }

    for (size_t i = 0; i < got.size(); ++i) {
      INFO("reader " << i << ": " << got[i].describe());
      CHECK(got[i].line == 2);
      if (size == max) {
        CHECK(got[i].code != error_code::LINE_TOO_LONG);
      } else {
        CHECK(got[i].code == error_code::LINE_TOO_LONG);
        CHECK(got[i].message == want);
        CHECK(got[i].offset == head.size());
      }
    }
  }
}
