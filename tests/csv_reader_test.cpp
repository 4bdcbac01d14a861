// The RFC 4180 reader: quotes, doubled quotes, embedded newlines, CRLF, and its typed errors.
#include <catch2/catch.hpp>
#include <string>
#include <vector>

#include "quire/csv.h"

using namespace quire;

namespace {

std::vector<std::vector<std::string>> read_all(std::string_view text) {
  csv::reader r(text);
  std::vector<std::string_view> fields;
  std::vector<std::vector<std::string>> out;
  while (true) {
    auto more = r.next(fields);
    REQUIRE(more);
    if (!*more) break;
    out.emplace_back(fields.begin(), fields.end());
  }
  return out;
}

quire::error first_error(std::string_view text) {
  csv::reader r(text);
  std::vector<std::string_view> fields;
  while (true) {
    auto more = r.next(fields);
    if (!more) return more.error();
    if (!*more) return {};
  }
}

}  // namespace

TEST_CASE("csv: quoted fields, doubled quotes, embedded newlines, CRLF", "[csv]") {
  auto rows = read_all("a,b,c\r\n1,\"x, y\",\"he said \"\"hi\"\"\"\r\n2,\"line1\nline2\",\r\n\r\n3,,\"\"\n");
  REQUIRE(rows.size() == 4);
  CHECK(rows[0] == std::vector<std::string>{"a", "b", "c"});
  CHECK(rows[1] == std::vector<std::string>{"1", "x, y", "he said \"hi\""});
  CHECK(rows[2] == std::vector<std::string>{"2", "line1\nline2", ""});
  CHECK(rows[3] == std::vector<std::string>{"3", "", ""});
  CHECK(read_all("\xEF\xBB\xBFx\n1").size() == 2);
  CHECK(read_all("").empty());
  CHECK(read_all("only") == std::vector<std::vector<std::string>>{{"only"}});
}

TEST_CASE("csv: bad quoting is INVALID_CSV with line and column", "[csv]") {
  auto e = first_error("a,b\n1,x\"y\n");
  CHECK(e.code == error_code::INVALID_CSV);
  CHECK(e.line == 2);
  CHECK(e.column == 2);
  e = first_error("a,b\n1,\"open\n2,3\n");
  CHECK(e.code == error_code::INVALID_CSV);
  CHECK(e.line == 2);
  e = first_error("a,b\n\"q\"x,2\n");
  CHECK(e.code == error_code::INVALID_CSV);
  CHECK(e.column == 1);
  e = first_error("a\rb\n");
  CHECK(e.code == error_code::INVALID_CSV);
  csv::options o;
  o.max_columns = 2;
  csv::reader r("1,2,3\n", o);
  std::vector<std::string_view> f;
  CHECK(r.next(f).code() == error_code::INVALID_CSV);
  o = {};
  o.max_field_bytes = 3;
  csv::reader r2("abcd\n", o);
  CHECK(r2.next(f).code() == error_code::LINE_TOO_LONG);
}

// The scanner ends records where the reader does, whatever the pieces: a text read whole by the
// reader and the same text cut at every byte into two pieces fed to the scanner give the same ends.
TEST_CASE("csv: record_scanner ends records where the reader does, for every cut", "[csv]") {
  const std::string text =
      "a,b,c\r\n1,\"x, y\",\"he said "
      "\"\"hi\"\"\"\r\n2,\"line1\nline2\n\",\r\n\r\n3,,\"\"\n\"q\n\",4,\"\",\"\"\"\"\nlast";
  std::vector<size_t> want_ends;  // where each record's bytes end (past its line end)
  std::vector<uint32_t> want_lines;
  {
    csv::reader r(text);
    std::vector<std::string_view> fields;
    while (true) {
      auto more = r.next(fields);
      REQUIRE(more);
      if (!*more) break;
      want_lines.push_back(r.record_line());
    }
  }
  // Blank lines are records of the scanner (a lone line end) but not of the reader: count lines.
  for (size_t cut = 0; cut <= text.size(); ++cut) {
    csv::record_scanner sc;
    std::vector<uint32_t> starts;  // 1-based line where each scanned non-blank record begins
    uint32_t line = 1;
    size_t record_start = 0;
    size_t scan = 0;
    auto take = [&](size_t have) {
      while (true) {
        size_t end = sc.find_end(std::string_view(text).substr(0, have), scan);
        if (end == std::string_view::npos) {
          scan = have;
          return;
        }
        std::string_view rec = std::string_view(text).substr(record_start, end - record_start);
        if (rec != "\n" && rec != "\r\n") starts.push_back(line);
        line += sc.newlines();
        sc.next_record();
        record_start = scan = end;
      }
    };
    take(cut);
    take(text.size());
    if (record_start < text.size()) starts.push_back(line);
    CHECK(starts == want_lines);
  }
  CHECK(want_lines == std::vector<uint32_t>{1, 2, 3, 7, 8, 10});
}
