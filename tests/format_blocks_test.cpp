// Version 5's two-level page directories (docs/format.md 1.5): a chunk's directory of more than 128
// pages is a top level over blocks of page entries. Every query answers as the same rows written
// with one-level directories; a find reads the top level and one block; a block or top level that
// lies (its checksums made right) gives CORRUPT_BLOCK or the right rows, never wrong ones; stores
// take version-5 segments beside older ones.
#include <algorithm>
#include <catch2/catch.hpp>
#include <cstring>
#include <string>

#include "quire/format.h"
#include "quire/store.h"
#include "store_stages.h"
#include "test_support.h"

using namespace quire;
using namespace quire::format;

namespace {

using cursor = quire_test::byte_cursor;
using quire_test::crc32c;

/// 64 symbols: directories of random 100-symbol names stay too random for zstd to keep a frame
/// (docs/format.md 1.1), so they are stored raw and a test can rewrite them in place.
constexpr char ALPHABET[] = "-0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZ_abcdefghijklmnopqrstuvwxyz";
static_assert(sizeof ALPHABET == 65);

/// 6,000 rows: id 1..6000 (every 97th null), name 40 letters from a fixed generator (`wide`: 100 of
/// the 64 symbols), score a decimal with 3 places (every 11th null), tag one of 7 words. With
/// 512-byte pages and chunks of 5,000 rows, name's first chunk holds hundreds of pages: a two-level
/// directory; id's, score's and tag's stay at 128 pages or fewer, one-level, in the same file.
std::string rows_ndjson(bool wide = false) {
  static const char *tags[] = {"alpha", "beta", "gamma", "delta", "epsilon", "zeta", "eta"};
  std::string out;
  uint64_t x = 987654321;
  auto next = [&] {
    x = x * 6364136223846793005ull + 1442695040888963407ull;
    return x >> 33;
  };
  for (int i = 1; i <= 6000; ++i) {
    std::string name;
    if (wide)
      for (int k = 0; k < 100; ++k) name.push_back(ALPHABET[next() % 64]);
    else
      for (int k = 0; k < 40; ++k) name.push_back(static_cast<char>('a' + next() % 26));
    out += "{\"id\":" + (i % 97 == 0 ? std::string("null") : std::to_string(i)) + ",\"name\":\"" + name +
           "\",\"score\":" + (i % 11 == 0 ? std::string("null") : std::to_string(next() % 100000) + ".125") +
           ",\"tag\":\"" + tags[next() % 7] + "\"}\n";
  }
  return out;
}

std::vector<uint8_t> make_file(bool blocks, std::vector<index_def> indexes = {}, bool wide = false) {
  write_options o;
  if (blocks) {
    o.chunk_rows = 5000;
    o.page_bytes = 512;
  }
  o.indexes = std::move(indexes);
  vector_sink sink;
  REQUIRE(write_ndjson(rows_ndjson(wide), o, sink));
  return sink.bytes;
}

std::string run(file &f, const std::string &where, std::vector<std::string> columns = {}, std::string order = "",
                bool descending = false, uint64_t limit = UINT64_MAX) {
  query q;
  if (!where.empty()) q.where = parse_expression(where).value();
  q.columns = std::move(columns);
  q.order_by = std::move(order);
  q.descending = descending;
  q.limit = limit;
  auto r = f.query(q);
  if (!r) return std::string(error_name(r.code()));
  return r->json;
}

using quire_test::ref_at;
using quire_test::stats_at;
using dom = quire_test::stats_domain;

struct block_at {
  size_t ref_start = 0;  // where its page_ref starts
  ref_at ref;
  size_t pages = 0, rows = 0, stored = 0, raw = 0;
  stats_at st;
};
/// A column's summary, one chunk's directory and its top level's blocks (the directory stored raw).
struct layout {
  uint64_t footer_offset = 0, footer_length = 0;
  ref_at summary, directory;
  bool two_level = false;
  std::vector<block_at> blocks;
};
layout locate(const std::vector<uint8_t> &b, size_t column, size_t chunk, dom d) {
  layout l;
  std::memcpy(&l.footer_offset, b.data() + b.size() - 24, 8);
  uint32_t length = 0;
  std::memcpy(&length, b.data() + b.size() - 16, 4);
  l.footer_length = length;
  cursor f{b, static_cast<size_t>(l.footer_offset)};
  f.varint();
  f.varint();
  f.varint();
  for (uint64_t c = 0; c <= column; ++c) {
    f.at += f.varint();
    f.u8();
    l.summary = quire_test::read_ref(f);
  }
  REQUIRE(l.summary.compression == 0);
  cursor s{b, static_cast<size_t>(l.summary.offset)};
  const uint64_t count = s.varint();
  REQUIRE(chunk < count);
  for (uint64_t i = 0; i <= chunk; ++i) {
    l.directory = quire_test::read_ref(s);
    s.varint();
    s.varint();
    s.varint();
    const uint64_t kinds = s.varint();
    for (uint64_t k = 0; k < kinds; ++k) {
      s.u8();
      s.varint();
    }
    s.varint();  // block_bytes
    quire_test::read_stats(s, d);
  }
  if (l.directory.compression != 0) return l;
  cursor p{b, static_cast<size_t>(l.directory.offset)};
  p.varint();
  const uint8_t flags = p.u8();
  if (flags & 1) {
    p.varint();
    quire_test::read_ref(p);
  }
  l.two_level = (flags & 2) != 0;
  if (!l.two_level) return l;
  const uint64_t blocks = p.varint();
  for (uint64_t i = 0; i < blocks; ++i) {
    block_at e;
    e.ref_start = p.at;
    e.ref = quire_test::read_ref(p);
    e.pages = p.at;
    p.varint();
    e.rows = p.at;
    p.varint();
    e.stored = p.at;
    p.varint();
    e.raw = p.at;
    p.varint();
    e.st = quire_test::read_stats(p, d);
    l.blocks.push_back(e);
  }
  return l;
}

using quire_test::put_crc;
using quire_test::set_varint;
using quire_test::varint_at;
/// Makes the checksums right again: every block's (in the top level), the directory's (in the
/// summary), the summary's (in the footer), the footer's.
void reseal(std::vector<uint8_t> &b, size_t column, size_t chunk, dom d) {
  auto l = locate(b, column, chunk, d);
  for (const auto &k : l.blocks) put_crc(b, k.ref.crc_at, k.ref.offset, k.ref.stored);
  put_crc(b, l.directory.crc_at, l.directory.offset, l.directory.stored);
  put_crc(b, l.summary.crc_at, l.summary.offset, l.summary.stored);
  put_crc(b, b.size() - 12, l.footer_offset, l.footer_length);
}

error_code verify_code(const std::vector<uint8_t> &bytes) {
  auto f = file::open(borrow_bytes(bytes));
  if (!f) return f.code();
  auto v = f->verify();
  return v ? error_code::OK : v.code();
}

}  // namespace

TEST_CASE("format blocks: two-level directories answer every query as one-level ones do", "[format][blocks]") {
  const std::vector<index_def> indexes = {{"name", index_kind::text}};
  const auto blocked = make_file(true, indexes);
  const auto plain = make_file(false, indexes);
  REQUIRE(blocked[6] == 5);
  REQUIRE(plain[6] == 4);
  CHECK(blocked[blocked.size() - 2] == 5);
  auto b = file::open(borrow_bytes(blocked));
  auto p = file::open(borrow_bytes(plain));
  REQUIRE(b);
  REQUIRE(p);
  CHECK(b->verify());
  CHECK(p->verify());
  // name's and score's first chunk: two-level; id's one-level beside them (a file may mix them).
  CHECK(locate(blocked, 1, 0, dom::text).two_level);
  CHECK(locate(blocked, 1, 0, dom::text).blocks.size() >= 3);
  CHECK_FALSE(locate(blocked, 1, 1, dom::text).two_level);  // 1,000 rows: under 128 pages
  CHECK_FALSE(locate(blocked, 2, 0, dom::reals).two_level);
  CHECK_FALSE(locate(blocked, 0, 0, dom::ints).two_level);
  for (const std::string where : {"", "id = 4321", "id = 97", "id >= 1000 and id < 1010", "score > 99000",
                                  "score is null and id < 300", "name contains 'qqz'", "name startsWith 'ab'",
                                  "tag = 'zeta' and score < 500", "id in (1, 2500, 4999, 5000, 5001, 5999)"}) {
    INFO(where);
    CHECK(run(*b, where) == run(*p, where));
    CHECK(b->count(rows_where(where.empty() ? std::nullopt : std::optional(parse_expression(where).value()))).value() ==
          p->count(rows_where(where.empty() ? std::nullopt : std::optional(parse_expression(where).value()))).value());
  }
  CHECK(run(*b, "", {"id", "score"}, "score", true, 25) == run(*p, "", {"id", "score"}, "score", true, 25));
  CHECK(run(*b, "tag = 'beta'", {"name"}, "name", false, 10) == run(*p, "tag = 'beta'", {"name"}, "name", false, 10));
  for (const char *column : {"id", "score", "name"}) {
    for (const char *where : {"", "id > 4000", "tag = 'eta'"}) {
      auto q = *where ? rows_where(parse_expression(where).value()) : query{};
      auto x = b->aggregate(column, q), y = p->aggregate(column, q);
      REQUIRE(x);
      REQUIRE(y);
      CHECK(x->count == y->count);
      CHECK(x->rows == y->rows);
      CHECK(x->sum == y->sum);
      CHECK(x->exact_sum == y->exact_sum);
      for (auto [a, c] : {std::pair{&x->min, &y->min}, std::pair{&x->max, &y->max}}) {
        CHECK(a->k == c->k);
        CHECK(a->i == c->i);
        CHECK(a->d == c->d);
        CHECK(a->s == c->s);
      }
    }
  }
  // The storage report counts the blocks with the directories (from the summaries alone).
  auto st = b->storage();
  REQUIRE(st);
  auto l = locate(blocked, 1, 0, dom::text);
  uint64_t block_bytes = 0;
  for (const auto &k : l.blocks) block_bytes += k.ref.stored;
  CHECK(st->columns[1].directory_bytes > l.directory.stored + block_bytes);
}

TEST_CASE("format blocks: a find reads the summary, the top level and one block", "[format][blocks]") {
  const auto blocked = make_file(true);
  auto cold = file::open(borrow_bytes(blocked));
  REQUIRE(cold);
  query q;
  q.where = parse_expression("id = 4321").value();
  q.columns = {"id", "name"};
  auto e = cold->explain(q, true);
  REQUIRE(e);
  CHECK(e->rows_returned == 1);
  // id: its summary and its one-level directory; name: its summary, its top level, one block.
  CHECK(e->read.directory_pages == 2 + 3);
  const auto name = locate(blocked, 1, 0, dom::text);
  uint64_t all_blocks = 0;
  for (const auto &k : name.blocks) all_blocks += k.ref.stored;
  // Less than the name column's blocks alone: one block of them was read, not every one.
  auto warm = file::open(borrow_bytes(blocked));
  REQUIRE(warm);
  const uint64_t before = warm->counters().bytes;
  REQUIRE(run(*warm, "id = 4321", {"name"}) != "[]");
  const uint64_t find_bytes = warm->counters().bytes - before;
  CHECK(find_bytes < all_blocks);
  // A filter on a two-level column: the blocks whose zone maps cannot match are not read (score is
  // random, so every block may; name's blocks by their bounds: a prefix past 'zzz' none).
  auto f = file::open(borrow_bytes(blocked));
  REQUIRE(f);
  query none;
  none.where = parse_expression("name > 'zzzzzzzzzzzzzzzzzzzzz'").value();
  auto ne = f->explain(none, true);
  REQUIRE(ne);
  CHECK(ne->rows_returned == 0);
}

TEST_CASE("format blocks: a block or a top level that lies is CORRUPT_BLOCK", "[format][blocks][bad]") {
  // name (column 1, text, 100 random symbols: its directory stays raw) planted through its counts;
  // bounds are planted in an integer column below.
  const auto blocked = make_file(true, {}, true);
  auto lie = [&](size_t column, size_t chunk, dom d, auto change) {
    auto b = blocked;
    change(b, locate(b, column, chunk, d));
    reseal(b, column, chunk, d);
    return b;
  };
  auto answer = [](const std::vector<uint8_t> &bytes, const std::string &where,
                   std::vector<std::string> columns = {"name"}) {
    auto f = file::open(borrow_bytes(bytes));
    if (!f) return std::string(error_name(f.code()));
    return run(*f, where, std::move(columns));
  };
  auto honest = blocked;
  reseal(honest, 1, 0, dom::text);
  CHECK(honest == blocked);
  const std::string truth = answer(blocked, "id = 4321");
  REQUIRE(truth.find("\"name\"") != std::string::npos);
  // The block holding row 4320 of chunk 0 (id 4321): its top-level entry's rows, pages, stored bytes
  // and nulls, each changed in turn (the next block's entry changed back where a sum must hold).
  const auto l = locate(blocked, 1, 0, dom::text);
  REQUIRE(l.directory.compression == 0);
  REQUIRE(l.two_level);
  size_t target = 0;
  {
    uint64_t first = 0;
    for (size_t i = 0; i < l.blocks.size(); ++i) {
      const uint64_t rows = varint_at(blocked, l.blocks[i].rows);
      if (4320 >= first && 4320 < first + rows) target = i;
      first += rows;
    }
  }
  REQUIRE(target + 1 < l.blocks.size());
  auto shift = [&](auto field) {
    return lie(1, 0, dom::text, [&](auto &b, const layout &at) {
      const size_t here = field(at.blocks[target]), next = field(at.blocks[target + 1]);
      const uint64_t a = varint_at(b, here), n = varint_at(b, next);
      // Keep the varints' lengths: move one from the block with more to the other.
      if (a % 128 != 0 && n % 128 != 127) {
        set_varint(b, here, a - 1);
        set_varint(b, next, n + 1);
      } else {
        set_varint(b, here, a + 1);
        set_varint(b, next, n - 1);
      }
    });
  };
  for (auto field : {+[](const block_at &k) { return k.rows; }, +[](const block_at &k) { return k.pages; },
                     +[](const block_at &k) { return k.stored; }, +[](const block_at &k) { return k.raw; }}) {
    const auto b = shift(field);
    const std::string got = answer(b, "id = 4321");
    CHECK((got == truth || got == "CORRUPT_BLOCK" || got == "CORRUPT_FILE"));
    CHECK(answer(b, "") != answer(blocked, ""));  // reading every row reads the lying block
    CHECK((answer(b, "") == "CORRUPT_BLOCK" || answer(b, "") == "CORRUPT_FILE"));
    CHECK(verify_code(b) != error_code::OK);
  }
  // A top level that disagrees with the summary: one block's rows, pages or bytes changed alone.
  for (auto field : {+[](const block_at &k) { return k.pages; }, +[](const block_at &k) { return k.stored; },
                     +[](const block_at &k) { return k.st.nulls; }}) {
    const auto b = lie(1, 0, dom::text, [&](auto &x, const layout &at) {
      const size_t here = field(at.blocks[target]);
      const uint64_t v = varint_at(x, here);
      set_varint(x, here, v % 128 == 0 ? v + 1 : v - 1);
    });
    CHECK((answer(b, "id = 4321") == "CORRUPT_BLOCK" || answer(b, "id = 4321") == "CORRUPT_FILE"));
    CHECK(verify_code(b) != error_code::OK);
  }
  // A block whose contents disagree with its entry: the target block's ref and the next one's
  // swapped in the top level (each block's bytes and CRC intact, read for the other's entry).
  {
    auto b = blocked;
    const auto &k = l.blocks[target], &n = l.blocks[target + 1];
    const size_t length = k.pages - k.ref_start;
    REQUIRE(n.pages - n.ref_start == length);
    std::swap_ranges(b.begin() + static_cast<std::ptrdiff_t>(k.ref_start),
                     b.begin() + static_cast<std::ptrdiff_t>(k.ref_start + length),
                     b.begin() + static_cast<std::ptrdiff_t>(n.ref_start));
    reseal(b, 1, 0, dom::text);
    CHECK(answer(b, "id = 4321") == "CORRUPT_BLOCK");
    CHECK(answer(b, "") == "CORRUPT_BLOCK");
    CHECK(verify_code(b) == error_code::CORRUPT_BLOCK);
  }
}

TEST_CASE("format blocks: zone maps of blocks that lie give CORRUPT_BLOCK or the right rows", "[format][blocks][bad]") {
  // An id column of 40,000 rows in one chunk (256 ids a 512-byte page: 157 pages, two blocks).
  std::string ndjson;
  for (int i = 0; i < 40000; ++i) ndjson += "{\"id\":" + std::to_string(i) + "}\n";
  write_options o;
  o.chunk_rows = 40000;
  o.page_bytes = 512;
  vector_sink sink;
  REQUIRE(write_ndjson(ndjson, o, sink));
  const auto bytes = sink.bytes;
  REQUIRE(bytes[6] == 5);
  const auto l = locate(bytes, 0, 0, dom::ints);
  REQUIRE(l.two_level);
  REQUIRE(l.blocks.size() == 2);
  auto count = [](const std::vector<uint8_t> &b, const char *where) {
    auto f = file::open(borrow_bytes(b));
    if (!f) return std::string(error_name(f.code()));
    auto n = f->count(rows_where(parse_expression(where).value()));
    return n ? std::to_string(*n) : std::string(error_name(n.code()));
  };
  CHECK(count(bytes, "id = 100") == "1");
  CHECK(count(bytes, "id >= 39990") == "10");
  auto lie = [&](auto change) {
    auto b = bytes;
    change(b);
    reseal(b, 0, 0, dom::ints);
    return b;
  };
  // The first block's minimum raised (0 -> 1: the chunk's minimum no longer reached): the top level
  // disagrees with the summary.
  const auto raised = lie([&](auto &b) { set_varint(b, l.blocks[0].st.min, 2); });
  CHECK(count(raised, "id = 0") == "CORRUPT_BLOCK");
  CHECK(count(raised, "id = 39999") == "CORRUPT_BLOCK");
  CHECK(verify_code(raised) == error_code::CORRUPT_BLOCK);
  // Its maximum lowered inside the chunk's bounds (32767 -> 32747): the top level cannot show it
  // (the second block still reaches the chunk's maximum); any query that reads the block can (its
  // pages' zone maps pass the block's), and verify does. A filter that trusts the lie skips the
  // block unread, as it would skip a page on its own lying zone map (docs/format.md 1.5: such a
  // file is hostile, its checksums made to match, and verify is what refutes it).
  const uint64_t max0 = varint_at(bytes, l.blocks[0].st.max);
  REQUIRE(max0 == 2 * 32767);  // a zvarint
  const auto lowered = lie([&](auto &b) { set_varint(b, l.blocks[0].st.max, max0 - 40); });
  CHECK(count(lowered, "id = 100") == "CORRUPT_BLOCK");
  CHECK(count(lowered, "id >= 1") == "CORRUPT_BLOCK");
  CHECK(verify_code(lowered) == error_code::CORRUPT_BLOCK);
  const auto past = lie([&](auto &b) { set_varint(b, l.blocks[1].st.max, varint_at(b, l.blocks[1].st.max) + 2); });
  CHECK(count(past, "id = 39999") == "CORRUPT_BLOCK");
}

TEST_CASE("format blocks: a store of version-4 segments takes version-5 ones; compaction keeps the answers",
          "[format][blocks][store]") {
  // A store made now of ten rows (a version-4 segment: its chunk has a few pages), then 5,000 rows
  // appended (a version-5 segment). The version-1 store of dc933df (tests/data/format/v1) keeps its
  // chunks of 64 rows, too few for more than 128 pages: its appends stay version 4.
  const auto dir = quire_test::data_dir() / "format" / "v1";
  store_options o;
  o.write.chunk_rows = 5000;
  o.write.page_bytes = 512;
  o.write.indexes = {{"id", index_kind::hash}, {"name", index_kind::text}};
  const std::string ndjson = quire_test::read_text(dir / "rows.ndjson");
  const std::string first_ten = ndjson.substr(0, [&] {
    size_t at = 0;
    for (int i = 0; i < 10; ++i) at = ndjson.find('\n', at) + 1;
    return at;
  }());
  vector_sink small;
  REQUIRE(write_ndjson(first_ten, o.write, small));
  REQUIRE(small.bytes[6] == 4);
  auto small_file = file::open(borrow_bytes(small.bytes));
  REQUIRE(small_file);
  memory_target t;
  REQUIRE(create_store(*small_file, o, t));
  // The same ten rows 500 times, each name numbered: the name column's 5,000 rows take hundreds of
  // 512-byte pages.
  std::string many;
  for (int i = 0; i < 500; ++i) {
    std::string rows = first_ten;
    for (size_t at = 0; (at = rows.find("\"name\":\"", at)) != std::string::npos; at += 8)
      rows.insert(at + 8, std::to_string(i) + " ");
    many += rows;
  }
  vector_sink big;
  REQUIRE(write_ndjson(many, o.write, big));
  REQUIRE(big.bytes[6] == 5);
  auto big_file = file::open(borrow_bytes(big.bytes));
  REQUIRE(big_file);
  const size_t before = t.bytes.size();
  auto appended = append_store(t, *big_file, o);
  INFO((appended ? std::string() : appended.error().message));
  REQUIRE(appended);
  const std::string magic4("QUIRE\0\x04\0", 8), magic5("QUIRE\0\x05\0", 8);
  CHECK(std::search(t.bytes.begin(), t.bytes.begin() + static_cast<std::ptrdiff_t>(before), magic4.begin(),
                    magic4.end()) != t.bytes.begin() + static_cast<std::ptrdiff_t>(before));
  CHECK(std::search(t.bytes.begin() + static_cast<std::ptrdiff_t>(before), t.bytes.end(), magic5.begin(),
                    magic5.end()) != t.bytes.end());
  auto s = file::open(borrow_bytes(t.bytes));
  REQUIRE(s);
  CHECK(s->info().segments == 2);
  CHECK(s->row_count() == 5010);
  CHECK(s->verify());
  const std::string all = run(*s, "");
  CHECK(all == run(*big_file, "").insert(0, run(*small_file, "")));
  const std::string some = run(*s, "id = 1119");
  CHECK(std::count(some.begin(), some.end(), '\n') == 501);
  CHECK(run(*s, "name contains '499 Hana'") == run(*big_file, "name contains '499 Hana'"));
  memory_target fresh;
  REQUIRE(compact_store(t, fresh, o));
  auto c = file::open(borrow_bytes(fresh.bytes));
  REQUIRE(c);
  CHECK(c->row_count() == 5010);
  CHECK(c->verify());
  CHECK(run(*c, "") == all);
  CHECK(run(*c, "id = 1119") == some);
  auto st = s->storage(), cst = c->storage();
  REQUIRE(st);
  REQUIRE(cst);
  for (size_t i = 0; i < st->columns.size(); ++i) CHECK(cst->columns[i].nulls == st->columns[i].nulls);
}

TEST_CASE("format blocks: a sealed store of version-5 segments re-seals and compacts", "[format][blocks][store]") {
  // The re-seal walks every directory's page_refs (format_store.cpp): a two-level directory's top
  // level points at its blocks, which point at pages.
  const auto blocked = make_file(true);
  auto table = file::open(borrow_bytes(blocked));
  REQUIRE(table);
  store_options o;
  o.write.chunk_rows = 5000;
  o.write.page_bytes = 512;
  o.owner_key = std::string(32, 'O');
  o.random = quire_test::seeded_random(5);
  const std::string all = run(*table, "", {"id", "name", "score"});
  open_options oo;
  oo.key = o.owner_key;
  for (const auto &stage : quire_test::sealed_store_stages(*table, o)) {
    auto s = file::open(borrow_bytes(stage.bytes), oo);
    REQUIRE(s);
    CHECK(run(*s, "", {"id", "name", "score"}) == all);
    CHECK(run(*s, "id = 4321", {"name"}) == run(*table, "id = 4321", {"name"}));
  }
}

TEST_CASE("format blocks: a file whose first chunk needs no block stays version 4, however large its later chunks",
          "[format][blocks]") {
  // Chunks of 2,000 rows: the first of short names (a few pages), the second of 100-symbol names
  // (about 400 pages of 512 bytes). The writer decides the version with the first chunk, so the
  // file is version 4 and the second chunk's directory one-level; it answers as a version-5 file
  // of the same rows does.
  std::string ndjson;
  for (int i = 0; i < 4000; ++i) {
    std::string name = i < 2000 ? "n" + std::to_string(i % 7) : std::string(100, ALPHABET[i % 64]);
    name += std::to_string(i);
    ndjson += "{\"id\":" + std::to_string(i) + ",\"name\":\"" + name + "\"}\n";
  }
  write_options o;
  o.chunk_rows = 2000;
  o.page_bytes = 512;
  vector_sink four;
  REQUIRE(write_ndjson(ndjson, o, four));
  CHECK(four.bytes[6] == 4);
  CHECK(four.bytes[four.bytes.size() - 2] == 4);
  // The same rows, the long names first: version 5.
  const size_t half = [&] {
    size_t at = 0;
    for (int i = 0; i < 2000; ++i) at = ndjson.find('\n', at) + 1;
    return at;
  }();
  vector_sink five;
  REQUIRE(write_ndjson(ndjson.substr(half) + ndjson.substr(0, half), o, five));
  CHECK(five.bytes[6] == 5);
  auto a = file::open(borrow_bytes(four.bytes));
  auto b = file::open(borrow_bytes(five.bytes));
  REQUIRE(a);
  REQUIRE(b);
  CHECK(a->verify());
  CHECK(b->verify());
  CHECK(a->storage()->columns[1].pages > 300);
  for (const std::string where : {"id = 3210", "name contains 'AAAA'", "id >= 1990 and id < 2010"}) {
    INFO(where);
    query q;
    q.where = parse_expression(where).value();
    q.order_by = "id";
    CHECK(a->query(q)->json == b->query(q)->json);
  }
}
