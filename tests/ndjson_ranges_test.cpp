// Byte ranges at line starts (ndjson::line_range, split_lines, parse_byte_range): cut at every
// pair of bytes, three meeting ranges hold every line exactly once and their bytes are the whole.
#include <catch2/catch.hpp>

#include <cstring>
#include <string>
#include <vector>

#include "quire/ndjson.h"

using namespace quire;

namespace {

/// The bytes of a string read only by read_at (no contiguous()): the path a file read by ranges takes.
class ranges_only final : public byte_source {
 public:
  explicit ranges_only(std::string bytes) : bytes_(std::move(bytes)) {}
  uint64_t size() const noexcept override { return bytes_.size(); }
  result<void> read_at(uint64_t offset, std::span<uint8_t> out) const override {
    if (offset + out.size() > bytes_.size()) return quire::error(error_code::OUT_OF_RANGE, "past the end");
    std::memcpy(out.data(), bytes_.data() + offset, out.size());
    ++reads;
    return {};
  }
  std::string_view kind() const noexcept override { return "ranges"; }
  mutable size_t reads = 0;

 private:
  std::string bytes_;
};

std::string_view bytes_of(std::string_view whole, ndjson::byte_range r) {
  return whole.substr(r.start, r.end - r.start);
}

bool line_start(std::string_view s, uint64_t at) { return at == 0 || at == s.size() || s[at - 1] == '\n'; }

/// Checks line_range for every a <= b over one text, from both kinds of source.
void check_every_cut(const std::string &text) {
  auto memory = borrow_bytes(std::span<const uint8_t>(reinterpret_cast<const uint8_t *>(text.data()), text.size()));
  ranges_only by_ranges(text);
  const uint64_t size = text.size();
  for (const byte_source *src :
       {static_cast<const byte_source *>(memory.get()), static_cast<const byte_source *>(&by_ranges)}) {
    for (uint64_t a = 0; a <= size; ++a) {
      for (uint64_t b = a; b <= size; ++b) {
        auto r0 = ndjson::line_range(*src, {0, a});
        auto r1 = ndjson::line_range(*src, {a, b});
        auto r2 = ndjson::line_range(*src, {b, size});
        REQUIRE(r0);
        REQUIRE(r1);
        REQUIRE(r2);
        INFO("cuts " << a << ", " << b << " of " << size << " bytes");
        // They meet and cover: the union is the whole, every line in exactly one.
        CHECK(r0->start == 0);
        CHECK(r0->end == r1->start);
        CHECK(r1->end == r2->start);
        CHECK(r2->end == size);
        CHECK(std::string(bytes_of(text, *r0)) + std::string(bytes_of(text, *r1)) + std::string(bytes_of(text, *r2)) ==
              text);
        // A range holds the lines that start inside it: it begins at the first line start at or after its start.
        CHECK(line_start(text, r1->start));
        CHECK(r1->start >= a);
        for (uint64_t p = a; p < r1->start; ++p) CHECK_FALSE(line_start(text, p));
      }
    }
  }
}

}  // namespace

TEST_CASE("ndjson ranges: three ranges cut at every pair of bytes hold every line once", "[ndjson]") {
  check_every_cut("{\"a\":1}\n{\"b\":22}\n\n{\"c\":333}\n");
  check_every_cut("{\"a\":1}\r\n{\"b\":2}\r\n{\"c\":3}");  // CRLF, no line end at the end
  check_every_cut("\n\n\n");
  check_every_cut("{\"only\":\"one line\"}");
  check_every_cut("");
}

TEST_CASE("ndjson ranges: a bound inside a line longer than a read block", "[ndjson]") {
  std::string text = "{\"a\":1}\n{\"long\":\"" + std::string(200000, 'x') + "\"}\n{\"b\":2}\n";
  const uint64_t long_start = 8, after_long = 8 + 9 + 200000 + 3;  // {"long":"  x...  "}\n
  REQUIRE(text[after_long - 1] == '\n');
  ranges_only src(text);
  for (uint64_t at : {uint64_t{9}, uint64_t{70000}, uint64_t{131072}, after_long - 1}) {
    auto r = ndjson::line_range(src, {at, text.size()});
    REQUIRE(r);
    CHECK(r->start == after_long);
  }
  auto r = ndjson::line_range(src, {long_start, long_start + 1});
  REQUIRE(r);
  CHECK(*r == ndjson::byte_range{long_start, after_long});
  // Only the bytes from each bound to its line end are read: a few 64 KiB blocks, not the file.
  src.reads = 0;
  REQUIRE(ndjson::line_range(src, {text.size() - 3, text.size()}));
  CHECK(src.reads == 1);
}

TEST_CASE("ndjson ranges: split_lines gives balanced ranges at line starts", "[ndjson]") {
  std::string text;
  for (int i = 0; i < 1000; ++i) text += "{\"id\":" + std::to_string(i) + "}\n";
  auto src = borrow_bytes(std::span<const uint8_t>(reinterpret_cast<const uint8_t *>(text.data()), text.size()));
  for (uint64_t parts : {1, 2, 3, 7, 64, 1000, 5000}) {
    auto ranges = ndjson::split_lines(*src, parts);
    REQUIRE(ranges);
    REQUIRE(ranges->size() == parts);
    uint64_t at = 0;
    std::string joined;
    for (const auto &r : *ranges) {
      CHECK(r.start == at);
      CHECK(line_start(text, r.start));
      at = r.end;
      joined += bytes_of(text, r);
      // Each is the line range of itself: handing it to view run --range gives exactly its lines.
      CHECK(*ndjson::line_range(*src, r) == r);
    }
    CHECK(at == text.size());
    CHECK(joined == text);
    if (parts <= 64) {
      // Balanced: each within one line (at most 12 bytes here) of size / parts.
      for (const auto &r : *ranges) CHECK(r.end - r.start <= text.size() / parts + 12);
    }
  }
  CHECK(ndjson::split_lines(*src, 0).code() == error_code::INVALID_ARGUMENT);
  CHECK(ndjson::split_lines(*src, 65537).code() == error_code::INVALID_ARGUMENT);
  CHECK(ndjson::byte_range_json({5, 12}, 3) == R"({"part":3,"start":5,"end":12,"bytes":7})");
}

TEST_CASE("ndjson ranges: START:END is parsed strictly", "[ndjson]") {
  CHECK(*ndjson::parse_byte_range("0:10") == ndjson::byte_range{0, 10});
  CHECK(*ndjson::parse_byte_range("7:7") == ndjson::byte_range{7, 7});
  CHECK(*ndjson::parse_byte_range("18446744073709551615:18446744073709551615") ==
        ndjson::byte_range{UINT64_MAX, UINT64_MAX});
  for (const char *bad :
       {"", ":", "1", "1:", ":2", "5:3", "-1:2", "1:2:3", "a:b", " 1:2", "1:2 ", "18446744073709551616:1"})
    CHECK(ndjson::parse_byte_range(bad).code() == error_code::INVALID_ARGUMENT);
  auto src = borrow_bytes(std::span<const uint8_t>(reinterpret_cast<const uint8_t *>("ab\n"), 3));
  CHECK(ndjson::line_range(*src, {3, 100}).value() == ndjson::byte_range{3, 3});  // an end past the size is the end
  CHECK(ndjson::line_range(*src, {4, 100}).code() == error_code::INVALID_ARGUMENT);
}
