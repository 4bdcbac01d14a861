// Hostile .quire files: truncation, a flipped byte anywhere, a footer pointing past the end,
// absurd counts, a page that would decompress past the limit, wrong magic, unknown versions.
// Each is a typed error; none crashes or allocates by the file's say-so.
#include <catch2/catch.hpp>
#include <cstring>
#include <string>
#include <vector>

#include "format_sample_data.h"  // bench/shapes: the sample customers
#include "quire/format.h"
#include "test_support.h"

using namespace quire;
using namespace quire::format;

namespace {

using quire_test::crc32c;

std::vector<uint8_t> sample_file() {
  auto customers = generate_customers(300, 2);
  vector_sink sink;
  write_options o;
  o.chunk_rows = 100;
  o.page_bytes = 1024;
  o.indexes = {{"id", index_kind::hash}, {"age", index_kind::sorted}, {"name", index_kind::text}};
  auto w = writer::create(customer_schema(), o, sink);
  std::vector<cell> cells;
  for (const auto &c : customers) {
    customer_cells(c, cells);
    REQUIRE(w.value()->append_row(cells));
  }
  REQUIRE(w.value()->finish());
  return sink.bytes;
}

query where_of(const char *expression) {
  query q;
  q.where = parse_expression(expression).value();
  return q;
}

/// Reads everything a file has: every row, storage (all directories and index roots), statistics,
/// and a lookup through each index. Returns the first error, or OK.
error_code read_everything(const std::vector<uint8_t> &bytes, open_options opts = {}) {
  auto f = file::open(borrow_bytes(bytes), opts);
  if (!f) return f.code();
  if (auto r = f->query({}); !r) return r.code();
  if (auto r = f->storage(); !r) return r.code();
  if (auto r = f->verify(); !r) return r.code();
  if (auto r = f->find("id", value::of(int64_t{150})); !r) return r.code();
  if (auto r = f->count(where_of("age between 30 and 31")); !r) return r.code();
  if (auto r = f->count(where_of("name contains 'Okafor'")); !r) return r.code();
  if (auto r = f->count(where_of("id = 7 or id = 250")); !r) return r.code();
  return error_code::OK;
}

/// Replaces the footer with `footer` and fixes the tail (offset, length, checksum).
std::vector<uint8_t> with_footer(const std::vector<uint8_t> &file, const std::vector<uint8_t> &footer) {
  uint64_t offset;
  std::memcpy(&offset, file.data() + file.size() - 24, 8);
  std::vector<uint8_t> out(file.begin(), file.begin() + static_cast<std::ptrdiff_t>(offset));
  out.insert(out.end(), footer.begin(), footer.end());
  std::vector<uint8_t> tail(file.end() - 24, file.end());
  uint32_t len = static_cast<uint32_t>(footer.size()), crc = crc32c(footer.data(), footer.size());
  std::memcpy(tail.data() + 8, &len, 4);
  std::memcpy(tail.data() + 12, &crc, 4);
  out.insert(out.end(), tail.begin(), tail.end());
  return out;
}

std::vector<uint8_t> footer_of(const std::vector<uint8_t> &file) {
  uint64_t offset;
  uint32_t len;
  std::memcpy(&offset, file.data() + file.size() - 24, 8);
  std::memcpy(&len, file.data() + file.size() - 16, 4);
  return {file.begin() + static_cast<std::ptrdiff_t>(offset), file.begin() + static_cast<std::ptrdiff_t>(offset + len)};
}

void put_varint(std::vector<uint8_t> &o, uint64_t v) {
  while (v >= 0x80) {
    o.push_back(static_cast<uint8_t>((v & 0x7F) | 0x80));
    v >>= 7;
  }
  o.push_back(static_cast<uint8_t>(v));
}

size_t varint_length(const std::vector<uint8_t> &b, size_t at) {
  size_t n = 1;
  while (b[at + n - 1] & 0x80) ++n;
  return n;
}

}  // namespace

TEST_CASE("format bad input: the sample file reads cleanly", "[format][bad]") {
  auto bytes = sample_file();
  CHECK(read_everything(bytes) == error_code::OK);
}

TEST_CASE("format bad input: every truncation is an error", "[format][bad]") {
  auto bytes = sample_file();
  for (size_t n = 0; n < bytes.size(); n += (n < 64 || n > bytes.size() - 64) ? 1 : 97) {
    std::vector<uint8_t> cut(bytes.begin(), bytes.begin() + static_cast<std::ptrdiff_t>(n));
    auto code = read_everything(cut);
    INFO("length " << n);
    CHECK(code == error_code::NOT_A_QUIRE_FILE);
  }
}

TEST_CASE("format bad input: a flipped byte anywhere is caught", "[format][bad]") {
  auto bytes = sample_file();
  size_t caught = 0, total = 0;
  for (size_t i = 0; i < bytes.size(); i += (i < 8 || i > bytes.size() - 32) ? 1 : 13) {
    auto copy = bytes;
    copy[i] ^= 0x20;
    auto code = read_everything(copy);
    ++total;
    INFO("byte " << i);
    CHECK(code != error_code::OK);
    CHECK((code == error_code::CORRUPT_BLOCK || code == error_code::CORRUPT_FILE ||
           code == error_code::NOT_A_QUIRE_FILE || code == error_code::UNSUPPORTED_VERSION));
    caught += code != error_code::OK;
  }
  CHECK(caught == total);
  // A flip inside the first data page names that page.
  auto copy = bytes;
  copy[12] ^= 1;
  auto f = file::open(borrow_bytes(copy));
  REQUIRE(f);
  auto r = f->query({});
  REQUIRE_FALSE(r);
  CHECK(r.code() == error_code::CORRUPT_BLOCK);
  CHECK(r.error().path == "columns.id.chunks[0].pages[0]");
  CHECK(r.error().offset == 8);
}

TEST_CASE("format bad input: a flipped byte past the checksums: a find is a typed error or a true row",
          "[format][bad][find]") {
  // With the checksums off the flipped bytes reach the decoders: a find (which reads its row's
  // values alone, not the pages whole) must then fail typed, or give a row that the whole-page
  // decoders give too (a line of the scan of the same bytes), never crash or invent one. (Which
  // flips fail differs natively and in wasm: zstd's decoders read a damaged frame differently.)
  auto bytes = sample_file();
  open_options unchecked;
  unchecked.verify_checksums = false;
  size_t found = 0, failed = 0, compared = 0;
  for (size_t i = 8; i + 24 < bytes.size(); i += 5) {
    auto copy = bytes;
    copy[i] ^= 0x41;
    INFO("byte " << i);
    auto f = file::open(borrow_bytes(copy), unchecked);
    if (!f) continue;
    if (!f->schema().find("id")) continue;  // the flip renamed the column in the (unchecked) footer
    for (int64_t id : {1, 150, 299}) {
      auto r = f->find("id", value::of(id));
      if (!r) {
        ++failed;
        CHECK((r.code() == error_code::CORRUPT_BLOCK || r.code() == error_code::CORRUPT_FILE));
        continue;
      }
      if (!r->has_value()) continue;
      ++found;
      auto g = file::open(borrow_bytes(copy), unchecked);
      REQUIRE(g);
      auto all = g->query({});
      if (!all) continue;
      ++compared;
      CHECK(("\n" + all->json).find("\n" + **r + "\n") != std::string::npos);
    }
  }
  CHECK(found > 0);
  CHECK(failed > 0);
  CHECK(compared > 0);
}

TEST_CASE("format bad input: wrong magic, unknown version, a footer past the end", "[format][bad]") {
  auto bytes = sample_file();
  auto copy = bytes;
  copy[0] = 'X';
  CHECK(file::open(borrow_bytes(copy)).code() == error_code::NOT_A_QUIRE_FILE);
  copy = bytes;
  copy[6] = 7;  // past the versions this reader reads (1, 3, 4, 5, 6)
  CHECK(file::open(borrow_bytes(copy)).code() == error_code::UNSUPPORTED_VERSION);
  for (uint8_t older : {1, 3}) {  // a version-4 file whose header says 1 or 3: the tail disagrees
    copy = bytes;
    copy[6] = older;
    CHECK(file::open(borrow_bytes(copy)).code() == error_code::UNSUPPORTED_VERSION);
  }
  copy = bytes;
  copy[copy.size() - 2] = 9;
  CHECK(file::open(borrow_bytes(copy)).code() == error_code::UNSUPPORTED_VERSION);
  copy = bytes;
  uint64_t past = copy.size() + 1000;
  std::memcpy(copy.data() + copy.size() - 24, &past, 8);
  CHECK(file::open(borrow_bytes(copy)).code() == error_code::CORRUPT_FILE);
  copy = bytes;
  uint32_t huge = 0xFFFFFFF0u;
  std::memcpy(copy.data() + copy.size() - 16, &huge, 4);
  CHECK(file::open(borrow_bytes(copy)).code() == error_code::CORRUPT_FILE);
  std::string text = "not a quire file at all, but long enough to have a tail";
  std::vector<uint8_t> junk(text.begin(), text.end());
  CHECK(file::open(borrow_bytes(junk)).code() == error_code::NOT_A_QUIRE_FILE);
}

TEST_CASE("format bad input: absurd counts in a footer with a valid checksum", "[format][bad]") {
  auto bytes = sample_file();
  auto footer = footer_of(bytes);
  // Row count 2^60: more chunks than the file has bytes.
  {
    std::vector<uint8_t> f;
    put_varint(f, uint64_t{1} << 60);
    f.insert(f.end(), footer.begin() + static_cast<std::ptrdiff_t>(varint_length(footer, 0)), footer.end());
    CHECK(file::open(borrow_bytes(with_footer(bytes, f))).code() == error_code::CORRUPT_FILE);
  }
  // chunk_rows 0 and 2^40.
  for (uint64_t chunk_rows : {uint64_t{0}, uint64_t{1} << 40}) {
    size_t a = varint_length(footer, 0);
    std::vector<uint8_t> f(footer.begin(), footer.begin() + static_cast<std::ptrdiff_t>(a));
    put_varint(f, chunk_rows);
    f.insert(f.end(), footer.begin() + static_cast<std::ptrdiff_t>(a + varint_length(footer, a)), footer.end());
    CHECK(file::open(borrow_bytes(with_footer(bytes, f))).code() == error_code::CORRUPT_FILE);
  }
  // A column count of 2^32.
  {
    size_t a = varint_length(footer, 0);
    size_t b = a + varint_length(footer, a);
    std::vector<uint8_t> f(footer.begin(), footer.begin() + static_cast<std::ptrdiff_t>(b));
    put_varint(f, uint64_t{1} << 32);
    f.insert(f.end(), footer.begin() + static_cast<std::ptrdiff_t>(b + varint_length(footer, b)), footer.end());
    CHECK(file::open(borrow_bytes(with_footer(bytes, f))).code() == error_code::CORRUPT_FILE);
  }
  // A footer cut short.
  {
    std::vector<uint8_t> f(footer.begin(), footer.begin() + static_cast<std::ptrdiff_t>(footer.size() / 2));
    CHECK(file::open(borrow_bytes(with_footer(bytes, f))).code() == error_code::CORRUPT_FILE);
  }
}

TEST_CASE("format bad input: pages larger than max_page_bytes are refused before decompressing", "[format][bad]") {
  auto bytes = sample_file();
  open_options o;
  o.max_page_bytes = 64;
  auto f = file::open(borrow_bytes(bytes), o);
  REQUIRE(f);
  auto r = f->query({});
  REQUIRE_FALSE(r);
  CHECK(r.code() == error_code::CORRUPT_BLOCK);
  CHECK(r.error().message.find("max_page_bytes") != std::string::npos);
  o.max_footer_bytes = 16;
  CHECK(file::open(borrow_bytes(bytes), o).code() == error_code::CORRUPT_FILE);
}

TEST_CASE("format bad input: expressions", "[format][bad]") {
  CHECK(parse_expression("").code() == error_code::INVALID_QUERY);
  CHECK(parse_expression("a =").code() == error_code::INVALID_QUERY);
  CHECK(parse_expression("a = 'open").code() == error_code::INVALID_QUERY);
  CHECK(parse_expression("(a = 1").code() == error_code::INVALID_QUERY);
  CHECK(parse_expression("a in (1,").code() == error_code::INVALID_QUERY);
  CHECK(parse_expression("a ~ 1").code() == error_code::INVALID_QUERY);
  CHECK(parse_expression("a = 1 b = 2").code() == error_code::INVALID_QUERY);
  std::string deep(200, '(');
  deep += "a = 1" + std::string(200, ')');
  CHECK(parse_expression(deep).code() == error_code::MAX_DEPTH_EXCEEDED);
  std::string nots;
  for (int i = 0; i < 100; ++i) nots += "not ";
  CHECK(parse_expression(nots + "a = 1").code() == error_code::MAX_DEPTH_EXCEEDED);
  auto ok = parse_expression(
      "country = 'NA' and age > 80 or not (name contains 'O''k' or x is not null) and y between 1 and 2.5 and z not in "
      "(1, 'a', null)");
  REQUIRE(ok);
  CHECK(ok->o == filter::op::or_);
  CHECK(parse_filter_json("{\"a\":{\"~\":1}}").code() == error_code::INVALID_QUERY);
  CHECK(parse_filter_json("[1]").code() == error_code::INVALID_QUERY);
  CHECK(parse_filter_json("{nope").code() == error_code::INVALID_QUERY);
  auto j = parse_filter_json(
      "{\"country\":\"NA\",\"age\":{\">\":80,\"<=\":90},\"or\":[{\"a\":null},{\"b\":{\"in\":[1,2]}}]}");
  REQUIRE(j);
  CHECK(j->o == filter::op::and_);
  CHECK(j->children.size() == 3);
  CHECK(parse_query_json("{\"limit\":-1}").code() == error_code::INVALID_QUERY);
  CHECK(parse_query_json("{\"bogus\":1}").code() == error_code::INVALID_QUERY);
  auto q = parse_query_json(
      "{\"where\":\"a = 1\",\"columns\":[\"a\"],\"orderBy\":\"a\",\"descending\":true,\"offset\":2,\"limit\":3}");
  REQUIRE(q);
  CHECK(q->limit == 3);
  CHECK(q->descending);
}
