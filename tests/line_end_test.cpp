// core/src/common/line_end.h: find_line_end gives memchr's answer for every start, end and place
// of the line end, across the 16-byte blocks the wasm build reads at a time.
#include <catch2/catch.hpp>

#include <cstring>
#include <string>

#include "../core/src/common/line_end.h"

namespace {

size_t by_memchr(const std::string &text, size_t from, size_t end) {
  if (end > text.size()) end = text.size();
  if (from >= end) return std::string::npos;
  const void *p = std::memchr(text.data() + from, '\n', end - from);
  return p ? static_cast<size_t>(static_cast<const char *>(p) - text.data()) : std::string::npos;
}

}  // namespace

TEST_CASE("line end: the first \\n in a range, wherever it is", "[common]") {
  for (size_t length : {size_t{0}, size_t{1}, size_t{15}, size_t{16}, size_t{17}, size_t{33}, size_t{70}}) {
    for (size_t at = 0; at <= length; ++at) {  // at == length: no line end at all
      std::string text(length, 'x');
      // Bytes that differ from '\n' by one bit or are high, so that a wrong comparison shows.
      for (size_t i = 0; i < length; ++i) text[i] = "x\x0b\x8a\x0e\xff"[i % 5];
      if (at < length) text[at] = '\n';
      if (at + 3 < length) text[at + 3] = '\n';  // a second one after it
      for (size_t from = 0; from <= length; ++from) {
        for (size_t end : {length, length + 5, from + 1, from + 16, at, at + 1}) {
          INFO("length " << length << ", line end at " << at << ", from " << from << " to " << end);
          CHECK(quire::detail::find_line_end(text, from, end) == by_memchr(text, from, end));
        }
      }
      CHECK(quire::detail::find_line_end(text) == by_memchr(text, 0, length));
    }
  }
}

TEST_CASE("line end: a text cut into runs of whole lines", "[common]") {
  const std::string text = "a\nbb\n\nccc\ndddd\neeeee\nf";  // no line end after the last line
  for (unsigned parts = 1; parts <= 30; ++parts) {
    INFO(parts << " parts");
    const auto cut = quire::detail::cut_at_line_ends(text, parts);
    REQUIRE(cut.size() == parts + 1);
    CHECK(cut.front() == 0);
    CHECK(cut.back() == text.size());
    for (size_t k = 1; k < parts; ++k) {
      CHECK(cut[k] >= cut[k - 1]);
      // Just past a line end, or at the text's end when a share ran out of lines.
      CHECK((cut[k] == text.size() || text[cut[k] - 1] == '\n'));
    }
  }
  // Runs of about equal size when the lines allow it.
  std::string lines;
  for (int i = 0; i < 1000; ++i) lines += "0123456789\n";
  const auto four = quire::detail::cut_at_line_ends(lines, 4);
  for (size_t k = 0; k < 4; ++k) CHECK(four[k + 1] - four[k] >= 2700);
  CHECK(quire::detail::cut_at_line_ends("", 3) == std::vector<size_t>{0, 0, 0, 0});
}
