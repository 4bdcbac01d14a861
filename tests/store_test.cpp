// .quire version 2 (quire/store.h): commits that append, delete, update, compact and rotate keys;
// sealed files read by the owner (everything) and by a partition's key (its partition only);
// wrong, missing and malformed keys; tampered, moved and foreign bytes; and a crash at every byte
// of a commit, which leaves the file at its old version, never at a half-written one.
#include <catch2/catch.hpp>

#include <algorithm>
#include <filesystem>
#include <map>
#include <set>
#include <string>

#include "quire/store.h"

using namespace quire;
using namespace quire::format;

namespace {

// A deterministic random source (tests only): SplitMix64 from a seed.
random_source test_random(uint64_t seed) {
  auto state = std::make_shared<uint64_t>(seed);
  return [state](std::span<uint8_t> out) -> result<void> {
    for (auto &b : out) {
      uint64_t z = (*state += 0x9E3779B97F4A7C15ULL);
      z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
      z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
      b = static_cast<uint8_t>(z ^ (z >> 31));
    }
    return {};
  };
}

std::string key_bytes(char fill) { return std::string(crypto::KEY_BYTES, fill); }

// Patients of three clinics, `n` rows from `first`.
std::string rows_text(int first, int n) {
  std::string s;
  const char *clinics[] = {"north", "south", "east"};
  for (int i = first; i < first + n; ++i) {
    const int day = 1 + i % 28;
    s += "{\"id\":" + std::to_string(i) + ",\"clinic\":\"" + clinics[i % 3] + "\",\"name\":\"Patient-Okafor-" +
         std::to_string(i) + "\",\"balance\":\"" + std::to_string(i) + ".50\",\"seen\":\"2024-03-" +
         (day < 10 ? "0" : "") + std::to_string(day) + "\"}\n";
  }
  return s;
}

const format::schema &the_schema() {
  static const format::schema s = [] {
    format::schema x;
    x.columns = {{"id", column_type::integer},
                 {"clinic", column_type::string},
                 {"name", column_type::string},
                 {"balance", column_type::decimal},
                 {"seen", column_type::date}};
    return x;
  }();
  return s;
}

struct table {
  vector_sink sink;
  std::optional<file> f;
};

std::unique_ptr<table> make_table(const std::string &ndjson) {
  auto t = std::make_unique<table>();
  input_options in;
  in.schema = the_schema();
  write_options wo;
  wo.chunk_rows = 16;
  auto n = write_ndjson(ndjson, wo, t->sink, in);
  REQUIRE(n);
  auto f = file::open(borrow_bytes(t->sink.bytes));
  REQUIRE(f);
  t->f.emplace(std::move(f).value());
  return t;
}

// Keys of partitions in memory, made on demand.
struct memory_keys final : partition_keys {
  std::map<std::string, crypto::key> keys;
  random_source random = test_random(77);
  result<std::optional<crypto::key>> find(std::string_view value, bool) override {
    auto it = keys.find(std::string(value));
    if (it == keys.end()) return std::optional<crypto::key>();
    return std::optional<crypto::key>(it->second);
  }
  result<void> keep(std::string_view value, bool, const crypto::key &k) override {
    keys[std::string(value)] = k;
    return {};
  }
  std::string bytes_of(const std::string &value) const {
    auto b = keys.at(value).bytes();
    return std::string(reinterpret_cast<const char *>(b.data()), b.size());
  }
};

store_options options(memory_keys *keys, bool sealed, bool partitioned, uint64_t seed = 1) {
  store_options o;
  o.write.chunk_rows = 16;
  if (partitioned) o.partition_by = "clinic";
  if (sealed) o.owner_key = key_bytes('O');
  o.keys = keys;
  o.random = test_random(seed);
  return o;
}

result<file> open_with(const memory_target &t, const std::string &key = {}, const std::string &passphrase = {}) {
  open_options oo;
  oo.key = key;
  oo.passphrase = passphrase;
  return file::open(borrow_bytes(t.bytes), oo);
}

std::string all_rows(file &f, const std::string &order = "id") {
  query q;
  q.order_by = order;
  auto r = f.query(q);
  REQUIRE(r);
  return r->json;
}

std::string rows_of(const std::string &ndjson, const std::string &where = {}) {
  auto t = make_table(ndjson);
  query q;
  q.order_by = "id";
  if (!where.empty()) {
    auto w = parse_expression(where);
    REQUIRE(w);
    q.where = *w;
  }
  auto r = t->f->query(q);
  REQUIRE(r);
  return r->json;
}

bool contains(const std::vector<uint8_t> &hay, std::string_view needle) {
  return std::search(hay.begin(), hay.end(), needle.begin(), needle.end()) != hay.end();
}

// --- reading a sealed store's keys by hand, from docs/format.md section 10 (tests of re-sealing) ---

struct raw_reader {
  const std::vector<uint8_t> &b;
  size_t at;
  uint64_t varint() {
    uint64_t v = 0;
    for (int shift = 0; shift < 64; shift += 7) {
      const uint8_t x = b.at(at++);
      v |= uint64_t{x & 0x7fu} << shift;
      if (!(x & 0x80)) break;
    }
    return v;
  }
  uint64_t fixed(size_t n) {
    uint64_t v = 0;
    for (size_t i = 0; i < n; ++i) v |= uint64_t{b.at(at + i)} << (8 * i);
    at += n;
    return v;
  }
  std::vector<uint8_t> take(size_t n) {
    REQUIRE(at + n <= b.size());
    std::vector<uint8_t> out(b.begin() + static_cast<std::ptrdiff_t>(at),
                             b.begin() + static_cast<std::ptrdiff_t>(at + n));
    at += n;
    return out;
  }
  struct ref {
    uint64_t offset, stored, raw;
    uint8_t compression;
  };
  ref page_ref() {
    ref r{};
    r.offset = varint();
    r.stored = varint();
    r.raw = varint();
    fixed(4);
    r.compression = static_cast<uint8_t>(fixed(1));
    return r;
  }
};

std::vector<uint8_t> bytes_with(std::vector<uint8_t> a, const std::vector<uint8_t> &b) {
  a.insert(a.end(), b.begin(), b.end());
  return a;
}
std::vector<uint8_t> u64_bytes(uint64_t v) {
  std::vector<uint8_t> o(8);
  for (int i = 0; i < 8; ++i) o[i] = static_cast<uint8_t>(v >> (8 * i));
  return o;
}

/// `u8[24] nonce || ciphertext || tag` opened under `k` with `associated`, or nullopt.
std::optional<std::vector<uint8_t>> open_nonce_first(const std::vector<uint8_t> &sealed, const crypto::key &k,
                                                     const std::vector<uint8_t> &associated) {
  if (sealed.size() < crypto::NONCE_BYTES + crypto::TAG_BYTES) return std::nullopt;
  crypto::nonce n;
  std::copy(sealed.begin(), sealed.begin() + crypto::NONCE_BYTES, n.begin());
  std::vector<uint8_t> out(sealed.size() - crypto::NONCE_BYTES - crypto::TAG_BYTES);
  std::span<const uint8_t> body(sealed.data() + crypto::NONCE_BYTES, sealed.size() - crypto::NONCE_BYTES);
  if (!crypto::open(out, body, associated, n, k)) return std::nullopt;
  return out;
}

/// A sealed store's partitions as the owner (key file `owner`) sees them, parsed from the bytes:
/// each one's data key and its segments' (base, footer offset, footer length, salt).
struct sealed_segment {
  uint64_t base = 0, length = 0;
  std::vector<uint8_t> salt;
};
struct sealed_partition {
  crypto::key data_key;
  std::vector<sealed_segment> segments;
};
std::vector<sealed_partition> sealed_partitions(const std::vector<uint8_t> &file, const std::string &owner) {
  const crypto::key ok =
      crypto::key_from_bytes(std::span<const uint8_t>(reinterpret_cast<const uint8_t *>(owner.data()), owner.size()))
          .value();
  const std::vector<uint8_t> file_id(file.begin() + 8, file.begin() + 24);
  raw_reader tail{file, file.size() - 48};
  const uint64_t footer_offset = tail.fixed(8);
  raw_reader footer{file, static_cast<size_t>(footer_offset)};
  footer.fixed(8);                // commit
  REQUIRE(footer.fixed(1) == 1);  // XChaCha20-Poly1305
  REQUIRE(footer.fixed(1) == 1);  // an owner key file
  footer.page_ref();              // meta
  const auto root = footer.page_ref();
  REQUIRE(root.compression == 0);  // a root this small is stored raw (under 64 bytes)
  raw_reader rr{file, static_cast<size_t>(root.offset)};
  const uint64_t leaves = rr.varint();
  std::vector<sealed_partition> out;
  for (uint64_t l = 0; l < leaves; ++l) {
    rr.take(16);
    rr.varint();
    const auto leaf = rr.page_ref();
    REQUIRE(leaf.compression == 0);  // random tags and wraps: zstd saves less than 1/16
    raw_reader lr{file, static_cast<size_t>(leaf.offset)};
    const uint64_t n = lr.varint();
    for (uint64_t e = 0; e < n; ++e) {
      const auto tag = lr.take(16);
      const auto dir = lr.page_ref();
      for (int i = 0; i < 5; ++i) lr.varint();  // rows, deleted, bytes, segments, chain
      if (lr.fixed(1)) lr.take(72);             // the partition's wrap
      const auto wrap = lr.take(72);
      auto associated = bytes_with(file_id, tag);
      associated.push_back(7);
      auto dk = open_nonce_first(wrap, ok, associated);
      REQUIRE(dk);
      sealed_partition p{crypto::key_from_bytes(*dk).value(), {}};
      // Its directory pages (kind 2), sealed under the data key, newest first back to the one
      // that lists from the first segment.
      auto page = dir;
      for (;;) {
        raw_reader whole{file, static_cast<size_t>(page.offset)};
        auto sealed = whole.take(static_cast<size_t>(page.stored));
        auto dir_ad = bytes_with(file_id, u64_bytes(page.offset));
        dir_ad.push_back(2);
        auto plain = open_nonce_first(sealed, p.data_key, dir_ad);
        REQUIRE(plain);
        REQUIRE(page.compression == 0);  // a few segments' entries: under 64 bytes or incompressible salts
        raw_reader d{*plain, 0};
        d.fixed(1);
        d.take(static_cast<size_t>(d.varint()));  // the value
        const auto previous = d.page_ref();
        const uint64_t first = d.varint(), count = d.varint();
        std::vector<sealed_segment> these;
        for (uint64_t s = 0; s < count; ++s) {
          sealed_segment sg;
          sg.base = d.varint();
          sg.length = d.varint();
          d.varint();  // rows
          sg.salt = d.take(16);
          these.push_back(std::move(sg));
        }
        p.segments.insert(p.segments.begin(), these.begin(), these.end());
        if (first == 0) break;
        page = previous;
      }
      out.push_back(std::move(p));
    }
  }
  return out;
}

/// Whether `k` opens the footer of segment `s` of `file` (nonce salt || offset, kind 1).
bool opens_segment_footer(const std::vector<uint8_t> &file, const sealed_segment &s, const crypto::key &k) {
  raw_reader tail{file, static_cast<size_t>(s.base + s.length - 24)};
  const uint64_t at = tail.fixed(8);
  const uint64_t length = tail.fixed(4);
  raw_reader fr{file, static_cast<size_t>(s.base + at)};
  const auto sealed = fr.take(static_cast<size_t>(length));
  crypto::nonce n;
  std::copy(s.salt.begin(), s.salt.end(), n.begin());
  const auto off = u64_bytes(at);
  std::copy(off.begin(), off.end(), n.begin() + 16);
  const std::vector<uint8_t> file_id(file.begin() + 8, file.begin() + 24);
  auto associated = bytes_with(bytes_with(file_id, s.salt), off);
  associated.push_back(1);
  std::vector<uint8_t> out(sealed.size() - crypto::TAG_BYTES);
  return static_cast<bool>(crypto::open(out, sealed, associated, n, k));
}

}  // namespace

TEST_CASE("store: a plain file created, appended to and read as one table", "[store]") {
  memory_target t;
  auto first = make_table(rows_text(0, 40));
  auto o = options(nullptr, false, false);
  auto made = create_store(*first->f, o, t);
  REQUIRE(made);
  CHECK(made->commit == 1);
  CHECK(made->rows == 40);
  auto f = open_with(t);
  REQUIRE(f);
  CHECK(f->info().version == 2);
  CHECK(f->info().commit == 1);
  CHECK(f->row_count() == 40);
  CHECK(all_rows(*f) == rows_of(rows_text(0, 40)));

  auto more = make_table(rows_text(40, 25));
  const auto before = t.bytes;
  auto appended = append_store(t, *more->f, o);
  REQUIRE(appended);
  CHECK(appended->commit == 2);
  CHECK(appended->bytes_before == before.size());
  // Append never changes a byte already written.
  REQUIRE(t.bytes.size() > before.size());
  CHECK(std::equal(before.begin(), before.end(), t.bytes.begin()));
  auto g = open_with(t);
  REQUIRE(g);
  CHECK(g->row_count() == 65);
  CHECK(g->info().segments == 2);
  CHECK(all_rows(*g) == rows_of(rows_text(0, 65)));
  // Queries span segments: filters, counts, sums, order and limits.
  auto where = parse_expression("id >= 30 and id < 50");
  REQUIRE(where);
  CHECK(g->count(rows_where(*where)).value() == 20);
  auto sum = g->aggregate("balance", rows_where(*where));
  REQUIRE(sum);
  CHECK(to_json(*sum).find("800.00") != std::string::npos);
  query q;
  q.order_by = "id";
  q.descending = true;
  q.limit = 2;
  CHECK(g->query(q)->json ==
        "{\"id\":64,\"clinic\":\"south\",\"name\":\"Patient-Okafor-64\",\"balance\":64.50,"
        "\"seen\":\"2024-03-09\"}\n{\"id\":63,\"clinic\":\"north\",\"name\":\"Patient-Okafor-63\","
        "\"balance\":63.50,\"seen\":\"2024-03-08\"}\n");
  // The old version still opens from the bytes a reader had.
  auto old = file::open(borrow_bytes(before));
  REQUIRE(old);
  CHECK(old->row_count() == 40);
}

TEST_CASE("store: indexes and sort order hold in every segment", "[store]") {
  memory_target t;
  auto o = options(nullptr, false, true);
  o.write.indexes = {{"id", index_kind::hash}, {"name", index_kind::text}};
  o.write.sorted_by = "clinic";  // not id: an index on the sort column is not written (answered_by_order)
  auto first = make_table(rows_text(0, 50));
  REQUIRE(create_store(*first->f, o, t));
  auto more = make_table(rows_text(50, 50));
  REQUIRE(append_store(t, *more->f, o));
  auto f = open_with(t);
  REQUIRE(f);
  CHECK(f->info().segments == 6);
  auto row = f->find("id", value::of(int64_t{77}), {"id", "clinic"});
  REQUIRE(row);
  REQUIRE(row->has_value());
  CHECK(**row == "{\"id\":77,\"clinic\":\"east\"}");
  auto e = f->explain(rows_where(parse_expression("id = 77").value()), true);
  REQUIRE(e);
  REQUIRE(e->index);
  CHECK(e->index->kind == "hash");
  auto contains_q = parse_expression("name contains 'Okafor-9'");
  REQUIRE(contains_q);
  CHECK(f->count(rows_where(*contains_q)).value() == 11);  // 9, 90..99
  CHECK(f->verify());
}

TEST_CASE("store: sealed and partitioned, each key reads what it may", "[store]") {
  memory_keys keys;
  memory_target t;
  auto o = options(&keys, true, true);
  auto first = make_table(rows_text(0, 60));
  REQUIRE(create_store(*first->f, o, t));
  REQUIRE(keys.keys.size() == 3);

  SECTION("the owner reads every row") {
    auto f = open_with(t, key_bytes('O'));
    REQUIRE(f);
    CHECK(f->row_count() == 60);
    CHECK(f->info().sealed);
    CHECK(f->info().partitions == 3);
    CHECK(!f->info().partition_key);
    CHECK(all_rows(*f) == rows_of(rows_text(0, 60)));
  }
  SECTION("a partition's key reads its partition and only it") {
    for (const char *clinic : {"north", "south", "east"}) {
      auto f = open_with(t, keys.bytes_of(clinic));
      REQUIRE(f);
      CHECK(f->info().partition_key);
      CHECK(f->info().partitions == 3);
      CHECK(f->info().partitions_read == 1);
      CHECK(f->row_count() == 20);
      CHECK(all_rows(*f) == rows_of(rows_text(0, 60), std::string("clinic = '") + clinic + "'"));
    }
  }
  SECTION("no key, a wrong key, a key of the wrong size") {
    auto none = open_with(t);
    REQUIRE(!none);
    CHECK(none.error().code == error_code::KEY_REQUIRED);
    auto wrong = open_with(t, key_bytes('X'));
    REQUIRE(!wrong);
    CHECK(wrong.error().code == error_code::WRONG_KEY);
    CHECK(wrong.error().message.find("Okafor") == std::string::npos);
    auto short_key = open_with(t, "too short");
    REQUIRE(!short_key);
    CHECK(short_key.error().code == error_code::INVALID_ARGUMENT);
    auto phrase = open_with(t, {}, "a passphrase");
    REQUIRE(!phrase);
    CHECK(phrase.error().code == error_code::WRONG_KEY);
  }
  SECTION("no plaintext of a sealed column appears in the file") {
    for (std::string_view s : {"Okafor", "north", "south", "clinic", "balance", "2024-03"})
      CHECK_FALSE(contains(t.bytes, s));
  }
  SECTION("a partition's key cannot append; the owner's can") {
    auto more = make_table(rows_text(60, 6));
    auto as_partition = o;
    as_partition.owner_key = keys.bytes_of("north");
    auto r = append_store(t, *more->f, as_partition);
    REQUIRE(!r);
    CHECK(r.error().code == error_code::KEY_REQUIRED);
    REQUIRE(append_store(t, *more->f, o));
    auto f = open_with(t, keys.bytes_of("east"));
    REQUIRE(f);
    CHECK(f->row_count() == 22);
  }
}

TEST_CASE("store: a new partition gets a new key; a passphrase seals as a key does", "[store]") {
  memory_keys keys;
  memory_target t;
  auto o = options(&keys, false, true);
  o.owner_passphrase = "correct horse battery staple";
  o.cost = {1, 64 << 10};
  auto first = make_table(rows_text(0, 2));  // north and south only
  REQUIRE(create_store(*first->f, o, t));
  CHECK(keys.keys.size() == 2);
  auto more = make_table(rows_text(2, 4));  // east, and more north and south
  REQUIRE(append_store(t, *more->f, o));
  CHECK(keys.keys.size() == 3);
  auto f = open_with(t, {}, "correct horse battery staple");
  REQUIRE(f);
  CHECK(f->row_count() == 6);
  auto e = open_with(t, keys.bytes_of("east"));
  REQUIRE(e);
  CHECK(e->row_count() == 2);
  auto wrong = open_with(t, {}, "incorrect horse");
  REQUIRE(!wrong);
  CHECK(wrong.error().code == error_code::WRONG_KEY);
}

TEST_CASE("store: delete and update by filter, then compaction", "[store]") {
  memory_keys keys;
  memory_target t;
  auto o = options(&keys, true, true);
  REQUIRE(create_store(*make_table(rows_text(0, 30))->f, o, t));
  for (int i = 0; i < 5; ++i) REQUIRE(append_store(t, *make_table(rows_text(30 + 6 * i, 6))->f, o));
  auto del = delete_rows(t, parse_expression("id < 10 or id = 55").value(), o);
  REQUIRE(del);
  CHECK(del->rows == 11);
  auto upd = update_rows(t, parse_expression("id = 20").value(), "name", "Renamed", o);
  REQUIRE(upd);
  CHECK(upd->rows == 1);
  auto f = open_with(t, key_bytes('O'));
  REQUIRE(f);
  CHECK(f->row_count() == 60 - 11);
  CHECK(f->count(rows_where(parse_expression("id < 10").value())).value() == 0);
  CHECK(f->find("id", value::of(int64_t{20}), {"name"}).value().value() == "{\"name\":\"Renamed\"}");
  auto north = open_with(t, keys.bytes_of("north"));
  REQUIRE(north);
  CHECK(north->count(rows_where(parse_expression("id < 10").value())).value() == 0);

  auto report = storage_of_store(t, [] {
    open_options oo;
    oo.key = key_bytes('O');
    return oo;
  }());
  REQUIRE(report);
  CHECK(report->partitions == 3);
  CHECK(report->segments > 3 * 5);
  CHECK(report->deleted_rows == 12);  // 11 deleted, 1 replaced by its update
  CHECK(report->compaction_pays);

  memory_target fresh;
  auto c = compact_store(t, fresh, o);
  REQUIRE(c);
  auto g = open_with(fresh, key_bytes('O'));
  REQUIRE(g);
  CHECK(g->info().segments == 3);
  CHECK(g->row_count() == 49);
  CHECK(all_rows(*g) == all_rows(*f));
  CHECK(fresh.bytes.size() < t.bytes.size());
  // Every partition's key still opens the compacted file.
  auto n2 = open_with(fresh, keys.bytes_of("north"));
  REQUIRE(n2);
  CHECK(all_rows(*n2) == all_rows(*north));
}

TEST_CASE("store: owner key rotation re-wraps data keys only", "[store]") {
  memory_keys keys;
  memory_target t;
  auto o = options(&keys, true, true);
  REQUIRE(create_store(*make_table(rows_text(0, 30))->f, o, t));
  const auto before = t.bytes.size();
  auto r = rotate_owner_key(t, o, key_bytes('N'), {});
  REQUIRE(r);
  CHECK(t.bytes.size() - before < 4096);  // no segment rewritten
  auto old = open_with(t, key_bytes('O'));
  REQUIRE(!old);
  CHECK(old.error().code == error_code::WRONG_KEY);
  auto fresh = open_with(t, key_bytes('N'));
  REQUIRE(fresh);
  CHECK(all_rows(*fresh) == rows_of(rows_text(0, 30)));
  auto south = open_with(t, keys.bytes_of("south"));
  REQUIRE(south);
  CHECK(south->row_count() == 10);
}

TEST_CASE("store: a partition's key rotated: the new key opens it, the old one nothing", "[store]") {
  memory_keys keys;
  memory_target t;
  auto o = options(&keys, true, true);
  REQUIRE(create_store(*make_table(rows_text(0, 30))->f, o, t));
  const std::string old_key = keys.bytes_of("south");
  crypto::key fresh = crypto::key_from_bytes(std::vector<uint8_t>(crypto::KEY_BYTES, 0x33)).value();
  const auto before = t.bytes.size();
  REQUIRE(rotate_partition_key(t, o, "south", false, fresh));
  CHECK(t.bytes.size() - before < 4096);
  auto gone = open_with(t, old_key);
  REQUIRE(!gone);
  CHECK(gone.error().code == error_code::WRONG_KEY);
  auto now = open_with(t, std::string(crypto::KEY_BYTES, '\x33'));
  REQUIRE(now);
  CHECK(now->row_count() == 10);
  CHECK(all_rows(*now) == rows_of(rows_text(0, 30), "clinic = 'south'"));
  auto owner = open_with(t, key_bytes('O'));
  REQUIRE(owner);
  CHECK(owner->row_count() == 30);
  auto north = open_with(t, keys.bytes_of("north"));
  REQUIRE(north);
  CHECK(north->row_count() == 10);
}

TEST_CASE("store: a changed, moved or foreign byte is never a wrong answer", "[store]") {
  memory_keys keys;
  memory_target t;
  auto o = options(&keys, true, true);
  REQUIRE(create_store(*make_table(rows_text(0, 12))->f, o, t));
  const std::string expected = rows_of(rows_text(0, 12));
  size_t opened = 0, refused = 0;
  for (size_t at = 0; at < t.bytes.size(); at += 7) {
    memory_target bad(t.bytes);
    bad.bytes[at] ^= 0x20;
    auto f = open_with(bad, key_bytes('O'));
    if (!f) {
      ++refused;
      continue;
    }
    query q;
    q.order_by = "id";
    auto rows = f->query(q);
    if (!rows) {
      const auto c = rows.error().code;
      CHECK((c == error_code::CORRUPT_BLOCK || c == error_code::CORRUPT_FILE));
      ++refused;
      continue;
    }
    ++opened;
    CHECK(rows->json == expected);  // a byte no reader needs (reserved, unused)
  }
  CHECK(refused > opened * 10);
  // The segment of one file copied into another file sealed with the same keys fails to open.
  memory_target other;
  auto o2 = options(&keys, true, true, 99);
  REQUIRE(create_store(*make_table(rows_text(0, 12))->f, o2, other));
  REQUIRE(other.bytes.size() == t.bytes.size());
  memory_target mixed(other.bytes);
  std::copy(t.bytes.begin() + 32, t.bytes.begin() + 400, mixed.bytes.begin() + 32);
  auto m = open_with(mixed, key_bytes('O'));
  if (m) {
    query q;
    auto rows = m->query(q);
    REQUIRE(!rows);
    CHECK(rows.error().code == error_code::CORRUPT_BLOCK);
  } else {
    CHECK((m.error().code == error_code::CORRUPT_BLOCK || m.error().code == error_code::CORRUPT_FILE));
  }
}

TEST_CASE("store: a crash at any byte of a commit leaves the old version", "[store]") {
  memory_keys keys;
  for (bool sealed : {false, true}) {
    CAPTURE(sealed);
    memory_target t;
    auto o = options(&keys, sealed, true);
    REQUIRE(create_store(*make_table(rows_text(0, 20))->f, o, t));
    const auto v1 = t.bytes;
    const std::string key = sealed ? key_bytes('O') : std::string();
    auto more = make_table(rows_text(20, 10));
    memory_target full(v1);
    REQUIRE(append_store(full, *more->f, o));
    const size_t grown = full.bytes.size() - v1.size();
    const std::string old_rows = rows_of(rows_text(0, 20)), new_rows = rows_of(rows_text(0, 30));
    // The file cut at every byte between the old end and the new: the old version, or (whole) the new.
    for (size_t cut = v1.size(); cut <= full.bytes.size(); ++cut) {
      memory_target part(
          std::vector<uint8_t>(full.bytes.begin(), full.bytes.begin() + static_cast<std::ptrdiff_t>(cut)));
      auto f = open_with(part, key);
      REQUIRE(f);
      CHECK(all_rows(*f) == (cut == full.bytes.size() ? new_rows : old_rows));
    }
    // A write that fails part-way (the process killed at that byte), then the append again.
    for (size_t k = 0; k < grown; k += std::max<size_t>(1, grown / 40)) {
      memory_target crashed(v1);
      crashed.fail_after = k;
      auto failed = append_store(crashed, *more->f, o);
      REQUIRE(!failed);
      auto f = open_with(crashed, key);
      REQUIRE(f);
      CHECK(f->row_count() == 20);
      crashed.fail_after = UINT64_MAX;
      auto again = append_store(crashed, *more->f, o);
      REQUIRE(again);
      auto g = open_with(crashed, key);
      REQUIRE(g);
      CHECK(all_rows(*g) == new_rows);
    }
  }
}

TEST_CASE("store: bad arguments are typed errors", "[store]") {
  memory_target t;
  auto table = make_table(rows_text(0, 3));
  auto o = options(nullptr, false, false);
  o.owner_key = "short";
  auto r = create_store(*table->f, o, t);
  REQUIRE(!r);
  CHECK(r.error().code == error_code::INVALID_ARGUMENT);
  o = options(nullptr, false, false);
  o.partition_by = "nope";
  r = create_store(*table->f, o, t);
  REQUIRE(!r);
  CHECK(r.error().code == error_code::NO_SUCH_COLUMN);
  o = options(nullptr, true, false);
  o.random = nullptr;
  r = create_store(*table->f, o, t);
  REQUIRE(!r);
  CHECK(r.error().code == error_code::INVALID_ARGUMENT);
  o = options(nullptr, true, true);  // sealed and partitioned without the partitions' keys
  r = create_store(*table->f, o, t);
  REQUIRE(!r);
  CHECK(r.error().code == error_code::INVALID_ARGUMENT);
  // An empty or cut file is not a store.
  memory_target cut(std::vector<uint8_t>{'Q', 'U', 'I', 'R', 'E', 0, 2, 0});
  auto f = open_with(cut);
  REQUIRE(!f);
  CHECK(f.error().code == error_code::NOT_A_QUIRE_FILE);
}

TEST_CASE("store: an append to one of 3,000 partitions rewrites its map leaf, not the others", "[store]") {
  auto text = [](int first, int n, int partitions) {
    std::string s;
    for (int i = first; i < first + n; ++i)
      s += "{\"id\":" + std::to_string(i) + ",\"clinic\":\"c" + std::to_string(i % partitions) +
           "\",\"name\":\"n\",\"balance\":\"1.00\",\"seen\":\"2024-01-01\"}\n";
    return s;
  };
  memory_target t;
  auto o = options(nullptr, false, true);
  REQUIRE(create_store(*make_table(text(0, 6000, 3000))->f, o, t));
  const size_t before = t.bytes.size();
  auto one = make_table(text(6000, 1, 3000));  // one row of partition c0
  auto r = append_store(t, *one->f, o);
  REQUIRE(r);
  // The new segment, its directory page, one of three leaves, the root, meta and footer.
  CHECK(t.bytes.size() - before < 40000);
  auto f = open_with(t);
  REQUIRE(f);
  CHECK(f->row_count() == 6001);
  CHECK(f->info().partitions == 3000);
  CHECK(f->count(rows_where(parse_expression("clinic = 'c0'").value())).value() == 3);
  auto report = storage_of_store(t);
  REQUIRE(report);
  CHECK(report->segments == 3001);
}

#ifndef __EMSCRIPTEN__
#include <unistd.h>

#include "quire/file_source.h"
#include "quire/store_file.h"

TEST_CASE("store: on disk, a reader keeps its version while a writer appends; writers lock", "[store]") {
  const std::string path =
      (std::filesystem::temp_directory_path() / ("quire-store-" + std::to_string(::getpid()) + ".quire")).string();
  std::filesystem::remove(path);
  auto o = options(nullptr, false, true);
  {
    auto target = native::append_file::open(path, true);
    REQUIRE(target);
    REQUIRE(create_store(*make_table(rows_text(0, 30))->f, o, *target.value()));
    auto second = native::append_file::open(path, false);
    REQUIRE(!second);
    CHECK(second.error().code == error_code::IO_ERROR);
  }
  for (auto mode : {native::load_mode::ranges, native::load_mode::mmap, native::load_mode::read}) {
    auto source = native::open_file(path, {.mode = mode});
    REQUIRE(source);
    auto reader = file::open(std::move(source).value());
    REQUIRE(reader);
    const std::string before = all_rows(*reader);
    {
      auto target = native::append_file::open(path, false);
      REQUIRE(target);
      REQUIRE(append_store(*target.value(), *make_table(rows_text(1000, 5))->f, o));
    }
    CHECK(all_rows(*reader) == before);  // the version it opened
    CHECK(reader->row_count() == reader->count().value());
    auto fresh = file::open(native::open_file(path, {.mode = mode}).value());
    REQUIRE(fresh);
    CHECK(fresh->row_count() == reader->row_count() + 5);
  }
  std::filesystem::remove(path);
}
#endif

namespace {

bool same_key(const crypto::key &a, const crypto::key &b) {
  return std::equal(a.bytes().begin(), a.bytes().end(), b.bytes().begin());
}

// A sealed, partitioned store with indexes, three commits and deleted rows.
void grown_store(memory_keys &keys, memory_target &t, store_options &o) {
  o = options(&keys, true, true);
  o.write.indexes = {{"id", index_kind::hash}, {"name", index_kind::text}, {"seen", index_kind::sorted}};
  REQUIRE(create_store(*make_table(rows_text(0, 90))->f, o, t));
  REQUIRE(append_store(t, *make_table(rows_text(90, 30))->f, o));
  REQUIRE(delete_rows(t, parse_expression("id < 7 or id = 100").value(), o));
}

}  // namespace

TEST_CASE("store: re-sealing puts every page under new data keys, bytes unchanged in length", "[store][reseal]") {
  memory_keys keys;
  memory_target t;
  store_options o;
  grown_store(keys, t, o);
  const auto before = t.bytes;
  auto f = open_with(t, key_bytes('O'));
  REQUIRE(f);
  const std::string rows = all_rows(*f);
  CHECK(f->row_count() == 120 - 8);
  auto old_storage = f->storage();
  REQUIRE(old_storage);
  const auto old_parts = sealed_partitions(t.bytes, key_bytes('O'));
  REQUIRE(old_parts.size() == 3);

  memory_target fresh;
  auto r = reseal_store(t, fresh, o);
  REQUIRE(r);
  CHECK(r->rows == 120 - 8);
  CHECK(r->segments_written == 6);  // 3 partitions, 2 commits of rows each
  CHECK(t.bytes == before);         // the old file is only read

  auto g = open_with(fresh, key_bytes('O'));
  REQUIRE(g);
  CHECK(all_rows(*g) == rows);
  CHECK(g->info().commit == 1);
  CHECK(g->info().segments == 6);
  CHECK(g->find("id", value::of(int64_t{50}), {"name"}).value().value() == "{\"name\":\"Patient-Okafor-50\"}");
  CHECK(g->count(rows_where(parse_expression("name contains 'Okafor-11'").value())).value() == 11);
  for (const char *clinic : {"north", "south", "east"}) {
    CAPTURE(clinic);
    auto before_p = open_with(t, keys.bytes_of(clinic));
    auto after_p = open_with(fresh, keys.bytes_of(clinic));
    REQUIRE(before_p);
    REQUIRE(after_p);
    CHECK(all_rows(*after_p) == all_rows(*before_p));
  }
  // Pages kept their stored bytes: the same lengths, column by column and index by index.
  auto new_storage = g->storage();
  REQUIRE(new_storage);
  REQUIRE(new_storage->columns.size() == old_storage->columns.size());
  for (size_t c = 0; c < new_storage->columns.size(); ++c) {
    CAPTURE(c);
    CHECK(new_storage->columns[c].data_bytes == old_storage->columns[c].data_bytes);
    CHECK(new_storage->columns[c].encoded_bytes == old_storage->columns[c].encoded_bytes);
    CHECK(new_storage->columns[c].pages == old_storage->columns[c].pages);
  }
  REQUIRE(new_storage->indexes.size() == 3);
  for (size_t i = 0; i < 3; ++i) {
    CHECK(new_storage->indexes[i].bloom_bytes == old_storage->indexes[i].bloom_bytes);
    CHECK(new_storage->indexes[i].leaves == old_storage->indexes[i].leaves);
  }
  // Segments' sizes move only by their directories' few bytes (rewritten page_refs).
  CHECK(fresh.bytes.size() < before.size());

  // New data keys: an old one opens no segment of the new file, a new one opens each.
  const auto new_parts = sealed_partitions(fresh.bytes, key_bytes('O'));
  REQUIRE(new_parts.size() == 3);
  size_t opened = 0;
  for (const auto &p : new_parts) {
    for (const auto &q : old_parts) CHECK_FALSE(same_key(p.data_key, q.data_key));
    for (const auto &s : p.segments) {
      CHECK(opens_segment_footer(fresh.bytes, s, p.data_key));
      opened += opens_segment_footer(fresh.bytes, s, p.data_key);
      for (const auto &q : old_parts) CHECK_FALSE(opens_segment_footer(fresh.bytes, s, q.data_key));
    }
  }
  CHECK(opened == 6);
  // ...and the test's own reading of the old file is right: the old keys open the old segments.
  for (const auto &q : old_parts)
    for (const auto &s : q.segments) CHECK(opens_segment_footer(t.bytes, s, q.data_key));
  for (std::string_view s : {"Okafor", "north", "south", "clinic"}) CHECK_FALSE(contains(fresh.bytes, s));
  // The re-sealed file grows as any other.
  REQUIRE(append_store(fresh, *make_table(rows_text(120, 6))->f, o));
  auto h = open_with(fresh, keys.bytes_of("east"));
  REQUIRE(h);
  CHECK(h->count(rows_where(parse_expression("id >= 120").value())).value() == 2);
}

TEST_CASE("store: re-sealing one partition leaves the others' keys and bytes", "[store][reseal]") {
  memory_keys keys;
  memory_target t;
  store_options o;
  grown_store(keys, t, o);
  auto old_parts = sealed_partitions(t.bytes, key_bytes('O'));
  memory_target fresh;
  auto r = reseal_store(t, fresh, o, std::string("south"));
  REQUIRE(r);
  CHECK(r->segments_written == 2);
  CHECK(r->rows == 40 - 3);  // south: ids 1, 4, 7, ...; 1, 4 and 100 deleted
  auto f = open_with(t, key_bytes('O'));
  auto g = open_with(fresh, key_bytes('O'));
  REQUIRE(f);
  REQUIRE(g);
  CHECK(all_rows(*g) == all_rows(*f));
  auto new_parts = sealed_partitions(fresh.bytes, key_bytes('O'));
  REQUIRE(new_parts.size() == 3);
  // The map is in tag order in both files: the same partitions at the same places.
  size_t changed = 0;
  for (size_t i = 0; i < 3; ++i) {
    const bool same = same_key(new_parts[i].data_key, old_parts[i].data_key);
    changed += !same;
    for (const auto &s : new_parts[i].segments)
      CHECK(opens_segment_footer(fresh.bytes, s, old_parts[i].data_key) == same);
  }
  CHECK(changed == 1);
  auto south = open_with(fresh, keys.bytes_of("south"));
  REQUIRE(south);
  CHECK(south->row_count() == 37);
  auto missing = reseal_store(t, fresh, o, std::string("west"));
  REQUIRE(!missing);
  CHECK(missing.error().code == error_code::INVALID_ARGUMENT);
}

TEST_CASE("store: a crash mid-reseal leaves the old file; bad re-seals are typed errors", "[store][reseal]") {
  memory_keys keys;
  memory_target t;
  store_options o;
  grown_store(keys, t, o);
  const auto before = t.bytes;
  const std::string rows = [&] {
    auto f = open_with(t, key_bytes('O'));
    REQUIRE(f);
    return all_rows(*f);
  }();
  memory_target whole;
  auto made = reseal_store(t, whole, o);
  if (!made) FAIL(made.error().message << " at " << made.error().offset);
  const size_t n = whole.bytes.size();
  for (size_t k = 0; k < n; k += std::max<size_t>(1, n / 40)) {
    CAPTURE(k);
    memory_target crashed;
    crashed.fail_after = k;
    auto r = reseal_store(t, crashed, o);
    REQUIRE(!r);
    CHECK(r.error().code == error_code::IO_ERROR);
    CHECK(t.bytes == before);
    CHECK_FALSE(open_with(crashed, key_bytes('O')));  // never renamed over the old file
  }
  auto f = open_with(t, key_bytes('O'));
  REQUIRE(f);
  CHECK(all_rows(*f) == rows);

  memory_target fresh;
  auto as_partition = o;
  as_partition.owner_key = keys.bytes_of("north");
  auto r = reseal_store(t, fresh, as_partition);
  REQUIRE(!r);
  CHECK(r.error().code == error_code::KEY_REQUIRED);
  auto no_keys = o;
  no_keys.keys = nullptr;
  r = reseal_store(t, fresh, no_keys);
  REQUIRE(!r);
  CHECK(r.error().code == error_code::INVALID_ARGUMENT);
  memory_keys other;  // keys of another file
  for (const char *c : {"north", "south", "east"})
    other.keys[c] = crypto::key_from_bytes(std::vector<uint8_t>(32, 9)).value();
  auto wrong_keys = o;
  wrong_keys.keys = &other;
  r = reseal_store(t, fresh, wrong_keys);
  REQUIRE(!r);
  CHECK(r.error().code == error_code::WRONG_KEY);
  memory_target plain;
  auto po = options(&keys, false, true);
  REQUIRE(create_store(*make_table(rows_text(0, 9))->f, po, plain));
  r = reseal_store(plain, fresh, po);
  REQUIRE(!r);
  CHECK(r.error().code == error_code::INVALID_ARGUMENT);
  CHECK(fresh.bytes.empty());
  // A tampered page of the old file is refused, not carried over.
  memory_target tampered(before);
  tampered.bytes[200] ^= 1;
  r = reseal_store(tampered, fresh, o);
  REQUIRE(!r);
  CHECK((r.error().code == error_code::CORRUPT_BLOCK || r.error().code == error_code::CORRUPT_FILE));
}

namespace {

/// The parts of a storage report, added up as store.h says they add up to the file.
uint64_t parts_of(const store_report &r) {
  uint64_t sum = 32 + r.segment_frame_bytes + r.deletion_bytes + r.directory_bytes + r.map_bytes + r.meta_bytes +
                 r.footer_bytes + 48 + r.garbage_bytes;
  for (const auto &c : r.columns) sum += c.data_bytes + c.directory_bytes;
  for (const auto &i : r.indexes) sum += i.bytes;
  return sum;
}

}  // namespace

TEST_CASE("store: the storage report's bytes by column and index add up to the file", "[store][storage]") {
  memory_keys keys;
  memory_target t;
  store_options o;
  grown_store(keys, t, o);  // two commits of rows, then a delete: garbage and deletion vectors
  open_options owner;
  owner.key = key_bytes('O');
  auto r = storage_of_store(t, owner);
  REQUIRE(r);
  CHECK(r->bytes == t.bytes.size());
  CHECK(r->garbage_bytes > 0);
  CHECK(r->deletion_bytes > 0);
  CHECK(r->meta_bytes > 0);
  CHECK(r->segment_frame_bytes > 6 * 32);
  CHECK(parts_of(*r) == r->bytes);
  CHECK(r->segments == 6);
  CHECK(r->max_segments_per_partition == 2);
  CHECK(r->segments_per_partition == 2.0);
  // By column and index: the same as the table the owner reads (file::storage, all segments).
  auto f = open_with(t, key_bytes('O'));
  REQUIRE(f);
  auto s = f->storage();
  REQUIRE(s);
  REQUIRE(r->columns.size() == 5);
  for (size_t c = 0; c < 5; ++c) {
    CHECK(r->columns[c].name == s->columns[c].name);
    CHECK(r->columns[c].data_bytes == s->columns[c].data_bytes);
    CHECK(r->columns[c].directory_bytes == s->columns[c].directory_bytes);
    CHECK(r->columns[c].data_bytes > 0);
  }
  REQUIRE(r->indexes.size() == 3);
  for (size_t i = 0; i < 3; ++i) {
    CHECK(r->indexes[i].column == s->indexes[i].column);
    CHECK(r->indexes[i].bytes == s->indexes[i].bytes);
  }
  // ...each partition's bytes are its segments, deletion vectors and directory pages.
  uint64_t partitions = 0;
  for (const auto &p : r->by_partition) partitions += p.bytes;
  uint64_t segment_parts = r->segment_frame_bytes + r->deletion_bytes + r->directory_bytes;
  for (const auto &c : r->columns) segment_parts += c.data_bytes + c.directory_bytes;
  for (const auto &i : r->indexes) segment_parts += i.bytes;
  CHECK(partitions == segment_parts);
  const std::string json = to_json(*r);
  CHECK(json.find("\"columns\":[{\"name\":\"id\",\"dataBytes\":" + std::to_string(r->columns[0].data_bytes)) !=
        std::string::npos);
  CHECK(json.find("\"indexes\":[{\"column\":\"id\",\"kind\":\"hash\",\"bytes\":") != std::string::npos);
  CHECK(json.find("\"maxSegmentsPerPartition\":2") != std::string::npos);

  // Compacted: no garbage, one segment a partition, and still the sum.
  memory_target fresh;
  REQUIRE(compact_store(t, fresh, o));
  auto c = storage_of_store(fresh, owner);
  REQUIRE(c);
  CHECK(c->garbage_bytes == 0);
  CHECK(c->deletion_bytes == 0);
  CHECK(c->max_segments_per_partition == 1);
  CHECK(parts_of(*c) == fresh.bytes.size());
  // A plain file adds up the same way; a partition's key sees its own columns' bytes only.
  memory_target plain;
  auto po = options(&keys, false, true);
  REQUIRE(create_store(*make_table(rows_text(0, 40))->f, po, plain));
  REQUIRE(append_store(plain, *make_table(rows_text(40, 9))->f, po));
  auto p = storage_of_store(plain);
  REQUIRE(p);
  CHECK(parts_of(*p) == plain.bytes.size());
  open_options north;
  north.key = keys.bytes_of("north");
  auto n = storage_of_store(t, north);
  REQUIRE(n);
  CHECK(n->by_partition.size() == 1);
  CHECK(n->columns[0].data_bytes < r->columns[0].data_bytes);
  CHECK(parts_of(*n) == n->bytes);
}

TEST_CASE("store: file info's JSON holds version 2's members; a partition's key knows the column", "[store][info]") {
  memory_keys keys;
  memory_target t;
  store_options o;
  grown_store(keys, t, o);
  auto owner = open_with(t, key_bytes('O'));
  REQUIRE(owner);
  const std::string j = to_json(owner->info());
  CHECK(j.find(",\"commit\":3,\"sealed\":true,\"partitionBy\":\"clinic\",\"partitions\":3,\"partitionsRead\":3,"
               "\"segments\":6,\"deletedRows\":8,\"partitionKey\":false}") != std::string::npos);
  auto south = open_with(t, keys.bytes_of("south"));
  REQUIRE(south);
  CHECK(south->info().partition_by == "clinic");
  CHECK(to_json(south->info()).find("\"partitionBy\":\"clinic\",\"partitions\":3,\"partitionsRead\":1,") !=
        std::string::npos);
  CHECK(to_json(south->info()).find("\"partitionKey\":true}") != std::string::npos);
  // A version-1 file: commit 0, not sealed, no partitions.
  auto v1 = make_table(rows_text(0, 3));
  CHECK(to_json(v1->f->info()).find(",\"commit\":0,\"sealed\":false,\"partitionBy\":null,") != std::string::npos);
}

TEST_CASE("store: re-sealing an unpartitioned file sealed by a passphrase", "[store][reseal]") {
  memory_target t;
  auto o = options(nullptr, false, false);
  o.owner_passphrase = "correct horse battery staple";
  o.cost = {1, 64 << 10};
  REQUIRE(create_store(*make_table(rows_text(0, 40))->f, o, t));
  REQUIRE(append_store(t, *make_table(rows_text(40, 5))->f, o));
  memory_target fresh;
  auto r = reseal_store(t, fresh, o);
  REQUIRE(r);
  CHECK(r->segments_written == 2);
  auto before = open_with(t, {}, "correct horse battery staple");
  auto after = open_with(fresh, {}, "correct horse battery staple");
  REQUIRE(before);
  REQUIRE(after);
  CHECK(all_rows(*after) == all_rows(*before));
  CHECK(after->info().commit == 1);
  memory_target other;
  auto only = reseal_store(t, other, o, std::string("north"));  // no partitions to name
  REQUIRE(!only);
  CHECK(only.error().code == error_code::INVALID_ARGUMENT);
  for (std::string_view s : {"Okafor", "north", "clinic"}) CHECK_FALSE(contains(fresh.bytes, s));
}

TEST_CASE("store: a find in a sealed, partitioned, appended file reads its row alone", "[store][find]") {
  memory_keys keys;
  memory_target t;
  auto o = options(&keys, true, true);
  auto first = make_table(rows_text(0, 60));
  REQUIRE(create_store(*first->f, o, t));
  auto more = make_table(rows_text(60, 30));
  REQUIRE(append_store(t, *more->f, o));
  auto gone = parse_expression("id = 7 or id = 75");
  REQUIRE(gone);
  REQUIRE(delete_rows(t, *gone, o));
  auto f = open_with(t, key_bytes('O'));
  REQUIRE(f);
  REQUIRE(f->row_count() == 88);
  // Every row as the general path (a scan decoding whole pages) gives it, by id.
  query q;
  auto all = f->query(q);
  REQUIRE(all);
  std::map<std::string, std::string> by_id;
  size_t start = 0;
  for (size_t at; (at = all->json.find('\n', start)) != std::string::npos; start = at + 1) {
    const std::string line = all->json.substr(start, at - start);
    by_id[line.substr(6, line.find(',') - 6)] = line;
  }
  REQUIRE(by_id.size() == 88);
  for (int64_t id = 0; id < 90; ++id) {
    INFO("id " << id);
    auto g = open_with(t, key_bytes('O'));  // cold
    REQUIRE(g);
    const auto before = g->counters();
    auto row = g->find("id", value::of(id));
    REQUIRE(row);
    if (id == 7 || id == 75) {
      CHECK_FALSE(row->has_value());
      continue;
    }
    REQUIRE(row->has_value());
    CHECK(**row == by_id.at(std::to_string(id)));
    // No index: the key is found by a scan, which decodes id pages whole; the row's other four
    // columns are each read for the one value, from a sealed page opened but not decoded whole.
    CHECK(g->counters().value_pages - before.value_pages >= 4);
  }
}
