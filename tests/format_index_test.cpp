// Compact indexes (docs/format.md 1.7, version 3): version-1 files written before them keep
// opening and answering, the same rows written now answer the same, and a version-3 index that
// lies about its leaves gives CORRUPT_BLOCK or the right rows, never wrong ones.
#include <algorithm>
#include <catch2/catch.hpp>
#include <cstring>
#include <fstream>
#include <sstream>
#include <string>

#include "quire/format.h"
#include "test_support.h"

using namespace quire;
using namespace quire::format;

namespace {

std::vector<std::string> split(const std::string &s, char sep) {
  std::vector<std::string> out;
  std::string part;
  std::istringstream in(s);
  while (std::getline(in, part, sep)) out.push_back(part);
  if (!s.empty() && s.back() == sep) out.push_back({});
  return out;
}

/// The ids of the rows a where selects, ascending, joined by commas (as answers.tsv holds them).
std::string ids_of(file &f, const std::string &where, uint64_t &count) {
  query q;
  q.where = parse_expression(where).value();
  count = f.count(q).value();
  q.columns = {"id"};
  auto rows = f.query(q);
  REQUIRE(rows);
  std::vector<long long> ids;
  for (const auto &line : split(rows->json, '\n')) {
    auto at = line.find("\"id\":");
    if (at != std::string::npos) ids.push_back(std::stoll(line.substr(at + 5)));
  }
  std::sort(ids.begin(), ids.end());
  std::string out;
  for (size_t i = 0; i < ids.size(); ++i) out += (i ? "," : "") + std::to_string(ids[i]);
  return out;
}

struct v1_file {
  const char *name;
  uint16_t version;
  std::vector<index_def> indexes;  // what it was written with (convert --chunk-rows 64 --page-bytes 512)
  bool store;
};

const v1_file V1_FILES[] = {
    {"plain.quire", 1, {}, false},
    {"ints.quire",
     1,
     {{"id", index_kind::hash},
      {"age", index_kind::sorted},
      {"active", index_kind::hash},
      {"born", index_kind::sorted},
      {"seen", index_kind::sorted}},
     false},
    {"text.quire",
     1,
     {{"name", index_kind::text},
      {"city", index_kind::hash},
      {"name", index_kind::sorted},
      {"score", index_kind::sorted}},
     false},
    {"store.quire", 2, {{"id", index_kind::hash}, {"name", index_kind::text}}, true},
    {"golden.quire", 1, {}, false},
};

}  // namespace

TEST_CASE("format v1 files: written before compact indexes, they open and answer as then", "[format][v1]") {
  const auto dir = quire_test::data_dir() / "format" / "v1";
  const auto lines = split(quire_test::read_text(dir / "answers.tsv"), '\n');
  size_t checked = 0;
  for (const auto &v : V1_FILES) {
    auto bytes = quire_test::read_bytes(dir / v.name);
    REQUIRE_FALSE(bytes.empty());
    auto f = file::open(borrow_bytes(bytes));
    REQUIRE(f);
    INFO(v.name);
    CHECK(f->info().version == v.version);
    CHECK(f->verify());
    for (const auto &line : lines) {
      if (line.empty() || line[0] == '#') continue;
      auto cols = split(line, '\t');
      REQUIRE(cols.size() == 4);
      if (cols[0] != v.name) continue;
      INFO(cols[1]);
      uint64_t count = 0;
      CHECK(ids_of(*f, cols[1], count) == cols[3]);
      CHECK(std::to_string(count) == cols[2]);
      ++checked;
    }
  }
  CHECK(checked >= 25);
}

TEST_CASE("format compact indexes: the same rows written now answer the same, in version 4", "[format][v1]") {
  const auto dir = quire_test::data_dir() / "format" / "v1";
  const auto lines = split(quire_test::read_text(dir / "answers.tsv"), '\n');
  const std::string ndjson = quire_test::read_text(dir / "rows.ndjson");
  size_t checked = 0;
  for (const auto &v : V1_FILES) {
    if (v.store || v.indexes.empty()) continue;
    write_options o;
    o.chunk_rows = 64;
    o.page_bytes = 512;
    o.indexes = v.indexes;
    vector_sink sink;
    REQUIRE(write_ndjson(ndjson, o, sink));
    auto f = file::open(borrow_bytes(sink.bytes));
    REQUIRE(f);
    INFO(v.name);
    CHECK(f->info().version == 4);
    CHECK(f->verify());
    auto st = f->storage();
    REQUIRE(st);
    for (const auto &ix : st->indexes) {
      // Integer keys and posting lists need no Bloom filter; a text column's hash index keeps its own.
      bool text_hash = ix.kind == index_kind::hash && ix.column == "city";
      CHECK((ix.bloom_bytes == 0) != text_hash);
    }
    for (const auto &line : lines) {
      auto cols = split(line, '\t');
      if (line.empty() || line[0] == '#' || cols[0] != v.name) continue;
      INFO(cols[1]);
      uint64_t count = 0;
      CHECK(ids_of(*f, cols[1], count) == cols[3]);
      CHECK(std::to_string(count) == cols[2]);
      query eq;
      eq.where = parse_expression(cols[1]).value();
      auto plan = f->explain(eq, false);
      REQUIRE(plan);
      ++checked;
    }
  }
  CHECK(checked >= 15);
}

TEST_CASE("format compact indexes: every new file is version 4, with or without an index needing them",
          "[format][v1]") {
  for (bool compact : {false, true}) {
    write_options o;
    o.indexes = {{"score", index_kind::sorted}, {"city", index_kind::hash}};
    if (compact) o.indexes.push_back({"id", index_kind::hash});
    vector_sink sink;
    REQUIRE(write_ndjson(quire_test::read_text(quire_test::data_dir() / "format" / "v1" / "rows.ndjson"), o, sink));
    REQUIRE(sink.bytes.size() > 8);
    CHECK(sink.bytes[6] == 4);
    CHECK(sink.bytes[sink.bytes.size() - 2] == 4);
  }
}

// --- planted lies ----------------------------------------------------------------------------------

namespace {

void varint(std::string &o, uint64_t v) {
  while (v >= 0x80) {
    o.push_back(static_cast<char>((v & 0x7F) | 0x80));
    v >>= 7;
  }
  o.push_back(static_cast<char>(v));
}
void zvarint(std::string &o, int64_t v) { varint(o, (static_cast<uint64_t>(v) << 1) ^ static_cast<uint64_t>(v >> 63)); }
void fixed(std::string &o, uint64_t v, int n) {
  for (int i = 0; i < n; ++i) o.push_back(static_cast<char>((v >> (8 * i)) & 0xFF));
}
/// An integer sequence as PLAIN (tag 0, 8 bytes each): any values, as a hostile writer likes.
std::string plain_ints(const std::vector<int64_t> &v) {
  std::string o(1, '\0');
  for (int64_t x : v) fixed(o, static_cast<uint64_t>(x), 8);
  return o;
}

using quire_test::crc32c;

/// The byte cursor, with a page_ref skipped whole.
struct scan : quire_test::byte_cursor {
  void ref() {
    varint();
    varint();
    varint();
    skip(5);
  }
};

struct planted_leaf {
  std::string first_key;  // as the root stores it: an integer key's zvarint, or a trigram's 3 bytes
  uint64_t entries;
  std::string raw;
};

/// `file` with index `which`'s root replaced: the leaves and a new root are appended to the body
/// (raw pages with their CRC), then the footer, with that root's reference, and a new tail.
std::vector<uint8_t> plant(const std::vector<uint8_t> &file, size_t which, const std::vector<planted_leaf> &leaves) {
  uint64_t footer_offset = 0;
  uint32_t footer_length = 0;
  std::memcpy(&footer_offset, file.data() + file.size() - 24, 8);
  std::memcpy(&footer_length, file.data() + file.size() - 16, 4);
  std::string out(file.begin(), file.begin() + static_cast<std::ptrdiff_t>(footer_offset));
  auto page = [&](const std::string &raw) {
    std::string r;
    varint(r, out.size());
    varint(r, raw.size());
    varint(r, raw.size());
    fixed(r, crc32c(raw), 4);
    r.push_back(0);
    out += raw;
    return r;
  };
  std::string root;
  varint(root, leaves.size());
  for (const auto &l : leaves) {
    std::string ref = page(l.raw);
    varint(root, l.first_key.size());
    root += l.first_key;
    varint(root, l.entries);
    root += ref;
  }
  varint(root, 0);
  const std::string root_ref = page(root);
  // Walk the footer to index `which`'s root reference and put the new one in its place.
  scan s{{file, static_cast<size_t>(footer_offset)}};
  s.varint();
  s.varint();
  const uint64_t columns = s.varint();
  for (uint64_t c = 0; c < columns; ++c) {
    s.skip(s.varint());
    s.skip(1);
    s.ref();
  }
  s.varint();
  const uint64_t count = s.varint();
  REQUIRE(which < count);
  for (uint64_t i = 0; i < which; ++i) {
    s.varint();
    s.skip(1);
    s.ref();
    s.varint();
  }
  s.varint();
  s.skip(1);
  const size_t ref_at = s.at;
  s.ref();
  std::string footer(file.begin() + static_cast<std::ptrdiff_t>(footer_offset),
                     file.begin() + static_cast<std::ptrdiff_t>(ref_at));
  footer += root_ref;
  footer.append(file.begin() + static_cast<std::ptrdiff_t>(s.at),
                file.begin() + static_cast<std::ptrdiff_t>(footer_offset + footer_length));
  const uint64_t new_footer_offset = out.size();
  out += footer;
  fixed(out, new_footer_offset, 8);
  fixed(out, footer.size(), 4);
  fixed(out, crc32c(footer), 4);
  out.append(file.end() - 8, file.end());
  return {out.begin(), out.end()};
}

/// 8 rows: id 10, 20 ... 80 in order, name "abc-N" (row 0, 4: "zzabc"), an integer index on id
/// (index 0) and a text index on name (index 1).
std::vector<uint8_t> small_file(index_kind id_kind) {
  std::string ndjson;
  for (int i = 0; i < 8; ++i)
    ndjson += "{\"id\":" + std::to_string(10 * (i + 1)) + ",\"name\":\"" + (i % 4 ? "q" : "zz") + "abc" +
              std::to_string(i) + "\"}\n";
  write_options o;
  o.chunk_rows = 4;
  o.indexes = {{"id", id_kind}, {"name", index_kind::text}};
  vector_sink sink;
  REQUIRE(write_ndjson(ndjson, o, sink));
  return sink.bytes;
}

/// A leaf of unique keys (each key's first row is its only row: no gaps).
std::string int_leaf(const std::vector<int64_t> &keys, const std::vector<int64_t> &rows) {
  std::string raw;
  varint(raw, keys.size());
  return raw + plain_ints(keys) + plain_ints(rows);
}
/// A leaf with repeated keys: the first row of each distinct key, then the gaps.
std::string int_leaf(const std::vector<int64_t> &keys, const std::vector<int64_t> &starts,
                     const std::vector<int64_t> &gaps) {
  std::string raw;
  varint(raw, keys.size());
  return raw + plain_ints(keys) + plain_ints(starts) + plain_ints(gaps);
}
std::string zkey(int64_t k) {
  std::string s;
  zvarint(s, k);
  return s;
}

/// find id = key: "row ID" for the one row found, "none", or the error code's name.
std::string find_id(const std::vector<uint8_t> &bytes, int64_t key) {
  auto f = file::open(borrow_bytes(bytes));
  if (!f) return std::string(error_name(f.code()));
  query q;
  q.where = parse_expression("id = " + std::to_string(key)).value();
  q.columns = {"id"};
  auto r = f->query(q);
  if (!r) return std::string(error_name(r.code()));
  return r->json.empty() ? "none" : r->json;
}
std::string count_text(const std::vector<uint8_t> &bytes, const char *where) {
  auto f = file::open(borrow_bytes(bytes));
  if (!f) return std::string(error_name(f.code()));
  query q;
  q.where = parse_expression(where).value();
  auto r = f->count(q);
  if (!r) return std::string(error_name(r.code()));
  return std::to_string(*r);
}

}  // namespace

TEST_CASE("format compact indexes: a leaf that lies is CORRUPT_BLOCK or the right rows", "[format][bad][v1]") {
  const std::vector<int64_t> keys = {10, 20, 30, 40, 50, 60, 70, 80}, rows = {0, 1, 2, 3, 4, 5, 6, 7};
  for (auto kind : {index_kind::sorted, index_kind::hash}) {
    INFO(index_kind_name(kind));
    const auto bytes = small_file(kind);
    REQUIRE(bytes[6] == 4);
    CHECK(find_id(bytes, 30) == "{\"id\":30}\n");
    // An honest planted leaf answers: the planting itself is right.
    CHECK(find_id(plant(bytes, 0, {{zkey(10), 8, int_leaf(keys, rows)}}), 30) == "{\"id\":30}\n");
    CHECK(find_id(plant(bytes, 0,
                        {{zkey(10), 4, int_leaf({10, 20, 30, 40}, {0, 1, 2, 3})},
                         {zkey(50), 4, int_leaf({50, 60, 70, 80}, {4, 5, 6, 7})}}),
                  70) == "{\"id\":70}\n");
    // A row past the file's rows.
    CHECK(find_id(plant(bytes, 0, {{zkey(10), 8, int_leaf(keys, {0, 1, 2, 3, 4, 5, 6, 8})}}), 30) == "CORRUPT_BLOCK");
    CHECK(find_id(plant(bytes, 0, {{zkey(10), 8, int_leaf(keys, {0, 1, -1, 3, 4, 5, 6, 7})}}), 30) == "CORRUPT_BLOCK");
    // Keys out of order (30 would hide behind 50 in a walk that stops past the key).
    CHECK(find_id(plant(bytes, 0, {{zkey(10), 8, int_leaf({10, 20, 50, 30, 40, 60, 70, 80}, rows)}}), 30) ==
          "CORRUPT_BLOCK");
    // The root's first key disagrees with its leaf, or its leaves overlap.
    CHECK(find_id(plant(bytes, 0, {{zkey(5), 8, int_leaf(keys, rows)}}), 30) == "CORRUPT_BLOCK");
    const auto overlap = plant(bytes, 0,
                               {{zkey(10), 4, int_leaf({10, 20, 30, 60}, {0, 1, 2, 5})},
                                {zkey(50), 4, int_leaf({50, 60, 70, 80}, {4, 5, 6, 7})}});
    const auto sixty = find_id(overlap, 60);  // reads the honest leaf alone
    CHECK((sixty == "{\"id\":60}\n" || sixty == "CORRUPT_BLOCK"));
    CHECK(find_id(overlap, 30) == "CORRUPT_BLOCK");  // reads the leaf that reaches into the next
    CHECK(file::open(borrow_bytes(overlap))->verify().code() == error_code::CORRUPT_BLOCK);
    // An entry count the root and the leaf do not share.
    CHECK(find_id(plant(bytes, 0, {{zkey(10), 7, int_leaf(keys, rows)}}), 30) == "CORRUPT_BLOCK");
    // Repeated keys: rows as gaps within a key (honest), a gap of 0, a gap that wraps below the row.
    const std::vector<int64_t> dup = {10, 20, 30, 30, 30, 60, 70, 80};
    CHECK(find_id(plant(bytes, 0, {{zkey(10), 8, int_leaf(dup, {0, 1, 2, 5, 6, 7}, {1, 1})}}), 30) == "{\"id\":30}\n");
    CHECK(find_id(plant(bytes, 0, {{zkey(10), 8, int_leaf(dup, {0, 1, 2, 5, 6, 7}, {1, 0})}}), 30) == "CORRUPT_BLOCK");
    CHECK(find_id(plant(bytes, 0, {{zkey(10), 8, int_leaf(dup, {0, 1, 2, 5, 6, 7}, {1, -2})}}), 30) == "CORRUPT_BLOCK");
    // A first key that is not one zvarint.
    CHECK(find_id(plant(bytes, 0, {{zkey(10) + "x", 8, int_leaf(keys, rows)}}), 30) == "CORRUPT_FILE");
  }
}

TEST_CASE("format compact indexes: posting lists that lie are CORRUPT_BLOCK or the right rows", "[format][bad][v1]") {
  const auto bytes = small_file(index_kind::sorted);
  const char *where = "name contains 'zabc'";  // trigrams "zab" and "abc": rows 0 and 4
  CHECK(count_text(bytes, where) == "2");
  // A list: its trigram, n, its first row, then (n > 1) the n - 1 gaps as an integer sequence.
  auto list = [](const char *gram, uint64_t first, const std::string &gaps, uint64_t n) {
    std::string o(gram, 3);
    varint(o, n);
    varint(o, first);
    return o + gaps;
  };
  auto leaf = [](uint64_t grams, const std::string &lists) {
    std::string raw;
    varint(raw, grams);
    return raw + lists;
  };
  const std::string abc = list("abc", 0, plain_ints({1, 1, 1, 1, 1, 1, 1}), 8);
  const std::string zab = list("zab", 0, plain_ints({4}), 2);
  // Honest: the two lists the query needs (other trigrams missing only cost the index's narrowing).
  CHECK(count_text(plant(bytes, 1, {{"abc", 10, leaf(2, abc + zab)}}), where) == "2");
  CHECK(count_text(plant(bytes, 1, {{"abc", 8, leaf(1, abc)}, {"zab", 2, leaf(1, zab)}}), where) == "2");
  // Gaps that overflow: summed modulo 2^64, 0 + (2^64 - 1) is past the last row, and 4 then a gap
  // of 2^64 - 2 wraps to row 2, below its predecessor.
  CHECK(count_text(plant(bytes, 1, {{"abc", 10, leaf(2, abc + list("zab", 0, plain_ints({-1}), 2))}}), where) ==
        "CORRUPT_BLOCK");
  CHECK(count_text(plant(bytes, 1, {{"abc", 11, leaf(2, abc + list("zab", 4, plain_ints({1, -2}), 3))}}), where) ==
        "CORRUPT_BLOCK");
  // Rows out of order (a gap of 0), a row past the file, trigrams out of order.
  CHECK(count_text(plant(bytes, 1, {{"abc", 10, leaf(2, abc + list("zab", 4, plain_ints({0}), 2))}}), where) ==
        "CORRUPT_BLOCK");
  CHECK(count_text(plant(bytes, 1, {{"abc", 10, leaf(2, abc + list("zab", 0, plain_ints({8}), 2))}}), where) ==
        "CORRUPT_BLOCK");
  CHECK(count_text(plant(bytes, 1, {{"abc", 11, leaf(3, abc + zab + list("aaa", 1, "", 1))}}), where) ==
        "CORRUPT_BLOCK");
  // A root whose first key hides a trigram the leaf holds out of order: a lookup of "abc" reads no
  // leaf (the root says every key is from "zab" on), as with any index that leaves rows out; the
  // leaf's lie shows where it is read, and verify reads every leaf.
  const auto hidden = plant(bytes, 1, {{"zab", 10, leaf(2, zab + abc)}});
  CHECK(count_text(hidden, "name contains 'zab'") == "CORRUPT_BLOCK");
  CHECK(file::open(borrow_bytes(hidden))->verify().code() == error_code::CORRUPT_BLOCK);
  // The root's first key disagrees with the leaf; a leaf reaching into the next one's trigrams.
  CHECK(count_text(plant(bytes, 1, {{"aaa", 10, leaf(2, abc + zab)}}), where) == "CORRUPT_BLOCK");
  CHECK(count_text(plant(bytes, 1, {{"abc", 10, leaf(2, abc + zab)}, {"zab", 2, leaf(1, zab)}}), where) ==
        "CORRUPT_BLOCK");
  // More rows than the root says, and a count that runs past the leaf.
  CHECK(count_text(plant(bytes, 1, {{"abc", 9, leaf(2, abc + zab)}}), where) == "CORRUPT_BLOCK");
  CHECK(count_text(plant(bytes, 1, {{"abc", 10, leaf(3, abc + zab)}}), where) == "CORRUPT_BLOCK");
}

TEST_CASE("format text index: trigrams merged in batches give every (trigram, row) once", "[format][index]") {
  // Enough rows for several of the writer's batches of 2^16 trigram entries, values with a trigram
  // twice ("aaaa", "abcabc"), a value longer than a batch, empty and short values and nulls: the
  // index holds each distinct (trigram, row) once, and `contains` answers as a scan does.
  schema s;
  s.columns = {{"id", column_type::integer}, {"name", column_type::string}};
  const std::vector<std::string> words = {"aaaa", "abcabc", "Okafor", "", "ab", "Nadia Patel", "zzzzzz", "x y z"};
  constexpr int ROWS = 30000;
  auto is_null = [](int r) { return r % 101 == 7; };
  std::vector<std::string> names;
  uint64_t pairs = 0;
  for (int r = 0; r < ROWS; ++r) {
    std::string v = r == 12345 ? std::string(70000, 'q') : words[r % words.size()] + std::to_string(r % 977);
    std::vector<std::string> grams;
    for (size_t i = 0; i + 3 <= v.size(); ++i) grams.push_back(v.substr(i, 3));
    std::sort(grams.begin(), grams.end());
    if (!is_null(r)) pairs += static_cast<uint64_t>(std::unique(grams.begin(), grams.end()) - grams.begin());
    names.push_back(std::move(v));
  }
  auto write = [&](bool indexed) {
    write_options o;
    o.chunk_rows = 4096;
    if (indexed) o.indexes = {{"name", index_kind::text}};
    vector_sink sink;
    auto w = writer::create(s, o, sink);
    REQUIRE(w);
    for (int r = 0; r < ROWS; ++r) {
      std::vector<cell> row = {cell::of(int64_t{r}), is_null(r) ? cell::null() : cell::text(names[r])};
      REQUIRE(w.value()->append_row(row));
    }
    REQUIRE(w.value()->finish());
    return sink.bytes;
  };
  const auto plain_bytes = write(false);
  const auto indexed_bytes = write(true);
  auto plain = file::open(borrow_bytes(plain_bytes));
  auto indexed = file::open(borrow_bytes(indexed_bytes));
  REQUIRE(plain);
  REQUIRE(indexed);
  auto st = indexed->storage();
  REQUIRE(st);
  REQUIRE(st->indexes.size() == 1);
  CHECK(st->indexes[0].entries == pairs);
  for (const char *where : {"name contains 'aaa'", "name contains 'cab'", "name contains 'kafor12'",
                            "name contains 'qqqq'", "name contains 'Patel9'", "name contains 'y z1'"}) {
    INFO(where);
    uint64_t n_plain = 0, n_indexed = 0;
    const std::string a = ids_of(*plain, where, n_plain), b = ids_of(*indexed, where, n_indexed);
    CHECK(a == b);
    CHECK(n_plain == n_indexed);
    CHECK(n_plain > 0);
  }
}
