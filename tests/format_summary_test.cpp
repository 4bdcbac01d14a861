// Version 4's two-level directories (docs/format.md 1.4, 1.5): column summaries that carry each
// chunk's page count, bytes and encodings, page directories with 15-byte text bounds. A summary or
// a zone map that lies (a hostile file: its checksums made right) gives CORRUPT_BLOCK or the right
// rows, never wrong ones; a lie the directories cannot show by themselves is verify's.
#include <algorithm>
#include <catch2/catch.hpp>
#include <cstring>
#include <string>

#include "quire/format.h"
#include "quire/store.h"
#include "test_support.h"

using namespace quire;
using namespace quire::format;

namespace {

using cursor = quire_test::byte_cursor;
using quire_test::crc32c;

using quire_test::read_ref;
using quire_test::ref_at;
using quire_test::stats_at;

stats_at read_stats(cursor &c, bool text) {
  return quire_test::read_stats(c, text ? quire_test::stats_domain::text : quire_test::stats_domain::ints);
}

struct chunk_at {
  ref_at directory;
  size_t data_bytes = 0, pages = 0, encoded_bytes = 0;
  std::vector<size_t> encoding_pages;  // each kind's page count
  stats_at st;
};
struct page_at {
  size_t rows = 0, encoding = 0;
  stats_at st;
};

/// The byte positions of column `column`'s summary and of its chunk `chunk`'s page directory in a
/// version-4 file whose directories are stored uncompressed (small ones are: a frame would not pay).
struct layout {
  uint64_t footer_offset = 0, footer_length = 0;
  ref_at summary;
  std::vector<chunk_at> chunks;
  std::vector<page_at> pages;  // of chunk `chunk`
};
layout locate(const std::vector<uint8_t> &b, size_t column, size_t chunk, bool text) {
  layout l;
  std::memcpy(&l.footer_offset, b.data() + b.size() - 24, 8);
  uint32_t length = 0;
  std::memcpy(&length, b.data() + b.size() - 16, 4);
  l.footer_length = length;
  cursor f{b, static_cast<size_t>(l.footer_offset)};
  f.varint();
  f.varint();
  const uint64_t columns = f.varint();
  REQUIRE(column < columns);
  for (uint64_t c = 0; c <= column; ++c) {
    f.at += f.varint();
    f.u8();
    l.summary = read_ref(f);
  }
  REQUIRE(l.summary.compression == 0);
  cursor s{b, static_cast<size_t>(l.summary.offset)};
  const uint64_t count = s.varint();
  for (uint64_t i = 0; i < count; ++i) {
    chunk_at e;
    e.directory = read_ref(s);
    e.data_bytes = s.at;
    s.varint();
    e.pages = s.at;
    s.varint();
    e.encoded_bytes = s.at;
    s.varint();
    const uint64_t kinds = s.varint();
    for (uint64_t k = 0; k < kinds; ++k) {
      s.u8();
      e.encoding_pages.push_back(s.at);
      s.varint();
    }
    e.st = read_stats(s, text);
    l.chunks.push_back(e);
  }
  REQUIRE(chunk < l.chunks.size());
  const ref_at &d = l.chunks[chunk].directory;
  REQUIRE(d.compression == 0);
  cursor p{b, static_cast<size_t>(d.offset)};
  const uint64_t pages = p.varint();
  if (p.u8()) {
    p.varint();
    read_ref(p);
  }
  for (uint64_t i = 0; i < pages; ++i) {
    page_at e;
    read_ref(p);
    e.rows = p.at;
    p.varint();
    e.encoding = p.at;
    p.u8();
    e.st = read_stats(p, text);
    l.pages.push_back(e);
  }
  return l;
}

using quire_test::put_crc;
using quire_test::set_varint;
using quire_test::varint_at;
/// Makes the checksums right again after bytes of chunk `chunk`'s page directory or of the column
/// summary changed: the directory's (in the summary), the summary's (in the footer), the footer's.
void reseal(std::vector<uint8_t> &b, size_t column, size_t chunk, bool text) {
  auto l = locate(b, column, chunk, text);
  const auto &d = l.chunks[chunk].directory;
  put_crc(b, d.crc_at, d.offset, d.stored);
  put_crc(b, l.summary.crc_at, l.summary.offset, l.summary.stored);
  put_crc(b, b.size() - 12, l.footer_offset, l.footer_length);
}

/// 64 symbols: the directories of random names stay too random for zstd to keep a frame (1.1), so
/// they are stored raw and the test can rewrite them in place.
constexpr char ALPHABET[] = "-0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZ_abcdefghijklmnopqrstuvwxyz";
static_assert(sizeof ALPHABET == 65);

/// 32 rows in chunks of 16: id 10, 20 ... 320 (column 0: one page a chunk), name 100 symbols from a
/// fixed generator (column 1: several pages a chunk, no dictionary). No index: filters read zone maps.
std::vector<std::string> names() {
  std::vector<std::string> out;
  uint64_t x = 12345;
  for (int i = 0; i < 32; ++i) {
    std::string s;
    for (int k = 0; k < 100; ++k) {
      x = x * 6364136223846793005ull + 1442695040888963407ull;
      s.push_back(ALPHABET[(x >> 58) % 64]);
    }
    out.push_back(s);
  }
  return out;
}
std::vector<uint8_t> small_file() {
  std::string ndjson;
  const auto n = names();
  for (int i = 0; i < 32; ++i)
    ndjson += "{\"id\":" + std::to_string(10 * (i + 1)) + ",\"name\":\"" + n[static_cast<size_t>(i)] + "\"}\n";
  write_options o;
  o.chunk_rows = 16;
  o.page_bytes = 512;
  vector_sink sink;
  REQUIRE(write_ndjson(ndjson, o, sink));
  return sink.bytes;
}

/// The ids a where selects (all of them read, id projected), or the error code's name.
std::string ids(const std::vector<uint8_t> &bytes, const std::string &where) {
  auto f = file::open(borrow_bytes(bytes));
  if (!f) return std::string(error_name(f.code()));
  query q;
  if (!where.empty()) q.where = parse_expression(where).value();
  q.columns = {"id"};
  auto r = f->query(q);
  if (!r) return std::string(error_name(r.code()));
  std::string out;
  size_t at = 0;
  while ((at = r->json.find("\"id\":", at)) != std::string::npos) {
    at += 5;
    out += (out.empty() ? "" : ",") + r->json.substr(at, r->json.find('}', at) - at);
  }
  return out.empty() ? "none" : out;
}
error_code verify_code(const std::vector<uint8_t> &bytes) {
  auto f = file::open(borrow_bytes(bytes));
  if (!f) return f.code();
  auto v = f->verify();
  return v ? error_code::OK : v.code();
}

}  // namespace

TEST_CASE("format summaries: the honest file, and the planting itself", "[format][v1]") {
  const auto bytes = small_file();
  REQUIRE(bytes[6] == 4);
  auto copy = bytes;
  reseal(copy, 0, 0, false);
  reseal(copy, 1, 1, true);
  CHECK(copy == bytes);  // recomputing the checksums changes nothing
  CHECK(ids(bytes, "id = 10") == "10");
  CHECK(ids(bytes, "id = 160") == "160");
  CHECK(verify_code(bytes) == error_code::OK);
  const auto id = locate(bytes, 0, 0, false);
  REQUIRE(id.pages.size() == 1);
  CHECK(varint_at(bytes, id.chunks[0].pages) == 1);
  const auto name = locate(bytes, 1, 0, true);
  REQUIRE(name.pages.size() >= 3);
  CHECK(varint_at(bytes, name.chunks[0].pages) == name.pages.size());
  auto f = file::open(borrow_bytes(bytes));
  REQUIRE(f);
  auto st = f->storage();
  REQUIRE(st);
  CHECK(st->columns[1].pages == name.pages.size() + locate(bytes, 1, 1, true).pages.size());
  // Reads: the storage report and chunk statistics read the column summaries alone; a lookup by a
  // column's statistics, its summary and one page directory.
  CHECK(f->counters().directory_pages == 2);
  REQUIRE(f->chunk_statistics("name"));
  CHECK(f->counters().directory_pages == 2);
  auto cold = file::open(borrow_bytes(bytes));
  REQUIRE(cold);
  query q;
  q.where = parse_expression("id = 160").value();
  q.columns = {"id"};
  auto e = cold->explain(q, true);
  REQUIRE(e);
  CHECK(e->rows_returned == 1);
  CHECK(e->read.directory_pages == 2);
}

TEST_CASE("format summaries: a column summary that lies about its chunk is CORRUPT_BLOCK", "[format][bad][v1]") {
  const auto bytes = small_file();
  const auto l = locate(bytes, 0, 0, false);
  const auto &c = l.chunks[0];
  REQUIRE(c.encoding_pages.size() == 1);
  auto lie = [&](auto change) {
    auto b = bytes;
    change(b);
    reseal(b, 0, 0, false);
    return b;
  };
  auto nudge = [&](std::vector<uint8_t> &b, size_t at) {
    const uint64_t v = varint_at(b, at);
    set_varint(b, at, v % 128 == 127 ? v - 1 : v + 1);
  };
  // Two pages where the directory holds one (the encodings agreeing with the lie, then not).
  const auto two_pages = lie([&](auto &b) {
    set_varint(b, c.pages, 2);
    set_varint(b, c.encoding_pages[0], 2);
  });
  CHECK(ids(two_pages, "") == "CORRUPT_BLOCK");
  CHECK(ids(two_pages, "id = 10") == "CORRUPT_BLOCK");
  CHECK(verify_code(two_pages) == error_code::CORRUPT_BLOCK);
  // The storage report reads no page directory: it says what the summary says (verify refutes it).
  CHECK(file::open(borrow_bytes(two_pages))->storage()->columns[0].pages == 3);
  CHECK(ids(lie([&](auto &b) { set_varint(b, c.pages, 2); }), "") == "CORRUPT_BLOCK");
  // Encoded bytes, stored bytes, nulls.
  for (size_t at : {c.encoded_bytes, c.data_bytes, c.st.nulls}) {
    const auto b = lie([&](auto &x) { nudge(x, at); });
    CHECK(ids(b, "") == "CORRUPT_BLOCK");
    CHECK(verify_code(b) == error_code::CORRUPT_BLOCK);
  }
  // The chunk's bounds: its minimum raised past the page's (10 -> 12) would skip row 0 by
  // statistics alone; the page directory, once read, disagrees.
  // (A query the chunk's statistics alone answer, "id = 10", skips the chunk on the lie, as it
  // would on a lying page: verify is what reads every page and refutes it.)
  const auto raised = lie([&](auto &b) { set_varint(b, c.st.min, 24); });
  CHECK(verify_code(raised) == error_code::CORRUPT_BLOCK);
  CHECK(ids(raised, "id <= 20") == "CORRUPT_BLOCK");
}

TEST_CASE("format summaries: a page directory that lies about its pages is CORRUPT_BLOCK", "[format][bad][v1]") {
  const auto bytes = small_file();
  const auto l = locate(bytes, 0, 0, false);
  const auto &p = l.pages[0];
  auto lie = [&](auto change) {
    auto b = bytes;
    change(b);
    reseal(b, 0, 0, false);
    return b;
  };
  // The zone map of the one page: a minimum of 12 (the chunk's is 10) would skip "id = 10"; a
  // maximum of 150 would skip 160; crossed bounds.
  const auto min12 = lie([&](auto &b) { set_varint(b, p.st.min, 24); });
  CHECK(ids(min12, "id = 10") == "CORRUPT_BLOCK");
  CHECK(verify_code(min12) == error_code::CORRUPT_BLOCK);
  const auto max150 = lie([&](auto &b) { set_varint(b, p.st.max, 300); });
  CHECK(ids(max150, "id = 160") == "CORRUPT_BLOCK");
  CHECK(ids(lie([&](auto &b) { set_varint(b, p.st.max, 10); }), "id = 10") == "CORRUPT_BLOCK");  // 5 < 10
  // A page of nulls that says it has values, or the other way; its encoding byte.
  CHECK(ids(lie([&](auto &b) { set_varint(b, p.st.nulls, 1); }), "") == "CORRUPT_BLOCK");
  CHECK(ids(lie([&](auto &b) { b[p.encoding] ^= 0x10; }), "") == "CORRUPT_BLOCK");
  // Its row count (so the next page's first row): refused, the rows no longer add up to the chunk's.
  const auto rows = ids(lie([&](auto &b) { set_varint(b, p.rows, 15); }), "");
  CHECK((rows == "CORRUPT_BLOCK" || rows == "CORRUPT_FILE"));
}

TEST_CASE("format summaries: text zone maps that lie are CORRUPT_BLOCK, or verify's", "[format][bad][v1]") {
  const auto bytes = small_file();
  const auto n = names();
  const auto l = locate(bytes, 1, 0, true);
  REQUIRE(l.pages.size() >= 3);
  auto lie = [&](auto change) {
    auto b = bytes;
    change(b);
    reseal(b, 1, 0, true);
    return b;
  };
  // The page holding the chunk's least name, and another.
  size_t least = 0;
  std::vector<uint32_t> first_rows;
  {
    uint32_t row = 0;
    for (const auto &p : l.pages) {
      first_rows.push_back(row);
      row += static_cast<uint32_t>(varint_at(bytes, p.rows));
    }
  }
  size_t least_row = 0;
  for (size_t r = 1; r < 16; ++r)
    if (n[r] < n[least_row]) least_row = r;
  for (size_t i = 0; i < l.pages.size(); ++i)
    if (first_rows[i] <= least_row) least = i;
  const size_t other = least == 0 ? 1 : 0;
  // Its minimum's first letter raised: the chunk's least name would be skipped.
  const auto raised = lie([&](auto &b) { b[l.pages[least].st.min + 1] += 1; });
  CHECK(ids(raised, "name = '" + n[least_row] + "'") == "CORRUPT_BLOCK");
  // A minimum below the chunk's.
  const auto below = lie([&](auto &b) { b[l.pages[other].st.min + 1] = '!'; });  // below every symbol
  CHECK(ids(below, "name = '" + n[first_rows[other]] + "'") == "CORRUPT_BLOCK");
  // Crossed: a minimum above its own maximum.
  const auto crossed = lie([&](auto &b) { b[l.pages[other].st.min + 1] = '~'; });  // above every symbol
  CHECK(ids(crossed, "name >= 'a'") == "CORRUPT_BLOCK");
  // Narrower than its page yet inside the chunk's bounds (the other page's minimum raised to just
  // below its maximum): the directories cannot tell; verify, which reads every value, does.
  const auto narrower = lie([&](auto &b) {
    const size_t min = l.pages[other].st.min, max = l.pages[other].st.max;
    REQUIRE(b[min] == 15);
    REQUIRE(b[max] == 15);
    std::memcpy(b.data() + min + 1, b.data() + max + 1, 15);
    b[min + 15] -= 1;
  });
  CHECK(verify_code(narrower) == error_code::CORRUPT_BLOCK);
  CHECK(verify_code(bytes) == error_code::OK);
}

TEST_CASE("format summaries: 15-byte text bounds, the maximum rounded up, filter as exact ones would", "[format][v1]") {
  const auto bytes = small_file();
  const auto n = names();
  const auto l = locate(bytes, 1, 0, true);
  for (const auto &p : l.pages) {
    CHECK(bytes[p.st.min] == 15);
    CHECK(bytes[p.st.max] == 15);
    CHECK((bytes[p.st.flags] & 4) != 0);  // max_bound: a prefix rounded up, no value of the page
  }
  // The column summary keeps 64-byte bounds (chunk statistics as before): a 64-byte minimum, no maximum.
  CHECK(bytes[l.chunks[0].st.min] == 64);
  CHECK(l.chunks[0].st.max == 0);
  // Every comparison against the names themselves, their 15-byte prefixes and those rounded up,
  // answers what a scan of the rows says.
  std::vector<std::string> probes;
  for (const auto &s : n) {
    probes.push_back(s);
    probes.push_back(s.substr(0, 15));
    std::string up = s.substr(0, 15);
    up.back() = static_cast<char>(up.back() + 1);
    probes.push_back(up);
    probes.push_back(s + "a");
  }
  auto f = file::open(borrow_bytes(bytes));
  REQUIRE(f);
  size_t checked = 0;
  for (const auto &x : probes) {
    for (const char *op : {"=", "<", "<=", ">", ">=", "startsWith"}) {
      const std::string o(op);
      uint64_t expected = 0;
      for (const auto &s : n) {
        const bool hit = o == "="    ? s == x
                         : o == "<"  ? s < x
                         : o == "<=" ? s <= x
                         : o == ">"  ? s > x
                         : o == ">=" ? s >= x
                                     : s.compare(0, x.size(), x) == 0;
        expected += hit;
      }
      query q;
      q.where = parse_expression("name " + o + " '" + x + "'").value();
      INFO("name " << o << " '" << x << "'");
      CHECK(f->count(q).value() == expected);
      ++checked;
    }
  }
  CHECK(checked == probes.size() * 6);
}

TEST_CASE("format summaries: a store of a version-1 segment takes version-4 segments beside it",
          "[format][v1][store]") {
  // tests/data/format/v1/store.quire (one version-1 segment, written at dc933df), appended to now:
  // the new segment is a version-4 table; the two read as one, and compaction makes them one.
  const auto dir = quire_test::data_dir() / "format" / "v1";
  memory_target t(quire_test::read_bytes(dir / "store.quire"));
  REQUIRE(t.bytes.size() > 8);
  const std::string ndjson = quire_test::read_text(dir / "rows.ndjson");
  const std::string first_ten = ndjson.substr(0, [&] {
    size_t at = 0;
    for (int i = 0; i < 10; ++i) at = ndjson.find('\n', at) + 1;
    return at;
  }());
  store_options o;
  o.write.chunk_rows = 64;
  o.write.page_bytes = 512;
  o.write.indexes = {{"id", index_kind::hash}, {"name", index_kind::text}};
  vector_sink rows;
  REQUIRE(write_ndjson(first_ten, o.write, rows));
  auto more = file::open(borrow_bytes(rows.bytes));
  REQUIRE(more);
  const size_t old_size = t.bytes.size();
  REQUIRE(append_store(t, *more, o));
  // The appended segment's header: "QUIRE" 0x00, version 4.
  const std::string magic4("QUIRE\0\x04\0", 8);
  CHECK(std::search(t.bytes.begin() + static_cast<std::ptrdiff_t>(old_size), t.bytes.end(), magic4.begin(),
                    magic4.end()) != t.bytes.end());
  CHECK(std::search(t.bytes.begin(), t.bytes.begin() + static_cast<std::ptrdiff_t>(old_size), magic4.begin(),
                    magic4.end()) == t.bytes.begin() + static_cast<std::ptrdiff_t>(old_size));
  auto f = file::open(borrow_bytes(t.bytes));
  REQUIRE(f);
  CHECK(f->info().segments == 2);
  CHECK(f->row_count() == 310);
  CHECK(f->verify());
  auto count = [&](file &x, const char *where) {
    query q;
    q.where = parse_expression(where).value();
    return x.count(q).value();
  };
  CHECK(count(*f, "id = 1200") == 1);                  // the old segment's answer (answers.tsv)
  CHECK(count(*f, "id = 1119") == 2);                  // in both segments
  CHECK(count(*f, "name contains 'Mori'") == 33 + 3);  // 33 in the old segment, 3 of the ten new rows
  auto st = f->storage();
  REQUIRE(st);
  memory_target fresh;
  REQUIRE(compact_store(t, fresh, o));
  auto c = file::open(borrow_bytes(fresh.bytes));
  REQUIRE(c);
  CHECK(c->row_count() == 310);
  CHECK(c->verify());
  CHECK(count(*c, "id = 1119") == 2);
  CHECK(count(*c, "name contains 'Mori'") == count(*f, "name contains 'Mori'"));
  auto cst = c->storage();
  REQUIRE(cst);
  for (size_t i = 0; i < st->columns.size(); ++i) CHECK(cst->columns[i].nulls == st->columns[i].nulls);
}
