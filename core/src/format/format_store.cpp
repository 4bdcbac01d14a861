// .quire version 2 (quire/store.h; docs/format.md, "Version 2"): a header, then commits, each a
// run of segments (version-1 tables stored whole, sealed under their partition's data key when
// the file is sealed), partition directories, the partition map, the meta page, a footer and a
// 48-byte tail that points back at the previous commit's. A reader opens the last whole commit;
// a writer appends one, never touching a byte before the file's end.
#include <algorithm>
#include <cstring>
#include <map>
#include <set>
#include <type_traits>

#include "../common/alloc.h"
#include "format_engine.h"
#include "quire/store.h"

namespace quire::format {

using namespace detail;

namespace {

constexpr size_t STORE_HEADER = 32;
constexpr size_t STORE_TAIL = 48;
constexpr size_t WRAP_BYTES = crypto::NONCE_BYTES + crypto::KEY_BYTES + crypto::TAG_BYTES;  // 72
constexpr size_t TAG = 16;
constexpr size_t LEAF_ENTRIES = 128;
constexpr size_t MAX_DIR_CHAIN = 64;
constexpr uint64_t SCAN_BLOCK = 64 << 10;

// Kinds of the objects a store writes outside its segments (their associated data names them).
enum store_kind : uint8_t {
  KIND_DIRECTORY = 2,
  KIND_LEAF = 3,
  KIND_ROOT = 4,
  KIND_DELETIONS = 5,
  KIND_META = 6,
  KIND_WRAP = 7
};
enum owner_kind : uint8_t { OWNER_NONE = 0, OWNER_KEY = 1, OWNER_PASSPHRASE = 2 };

using tag_t = std::array<uint8_t, TAG>;
using file_id_t = std::array<uint8_t, 16>;

quire::error corrupt(std::string message, uint64_t offset = quire::error::NO_OFFSET) {
  quire::error e(error_code::CORRUPT_FILE, std::move(message), offset);
  e.path = "store";
  return e;
}
quire::error bad_block(std::string message, uint64_t offset) {
  quire::error e(error_code::CORRUPT_BLOCK, std::move(message), offset);
  e.path = "store";
  return e;
}
quire::error invalid(std::string message) { return quire::error(error_code::INVALID_ARGUMENT, std::move(message)); }

std::span<const uint8_t> bytes_of(std::string_view s) {
  return {reinterpret_cast<const uint8_t *>(s.data()), s.size()};
}

// --- sealing outside segments: a random nonce in front, the place and kind as associated data ------

std::string place_data(const file_id_t &id, uint64_t offset, uint8_t kind) {
  std::string a(reinterpret_cast<const char *>(id.data()), id.size());
  put_u64(a, offset);
  put_u8(a, kind);
  return a;
}

result<std::string> seal_with_nonce(std::string_view plain, const crypto::key &k, std::string_view associated,
                                    const random_source &random) {
  crypto::nonce n;
  if (auto r = random(n); !r) return std::move(r).error();
  std::string out(crypto::NONCE_BYTES + plain.size() + crypto::TAG_BYTES, '\0');
  std::memcpy(out.data(), n.data(), n.size());
  auto s =
      crypto::seal({reinterpret_cast<uint8_t *>(out.data()) + crypto::NONCE_BYTES, plain.size() + crypto::TAG_BYTES},
                   bytes_of(plain), bytes_of(associated), n, k);
  if (!s) return std::move(s).error();
  return out;
}

result<std::vector<uint8_t>> open_with_nonce(std::span<const uint8_t> sealed, const crypto::key &k,
                                             std::string_view associated) {
  if (sealed.size() < crypto::NONCE_BYTES + crypto::TAG_BYTES)
    return quire::error(error_code::CORRUPT_BLOCK, "too short to be sealed");
  crypto::nonce n;
  std::memcpy(n.data(), sealed.data(), n.size());
  std::vector<uint8_t> out(sealed.size() - crypto::NONCE_BYTES - crypto::TAG_BYTES);
  auto o = crypto::open(out, sealed.subspan(crypto::NONCE_BYTES), bytes_of(associated), n, k);
  if (!o) return std::move(o).error();
  return out;
}

/// A data key sealed under another key: nonce, ciphertext, tag (72 bytes).
result<std::string> wrap_key(const crypto::key &data, const crypto::key &under, const file_id_t &id, const tag_t &tag,
                             const random_source &random) {
  std::string associated(reinterpret_cast<const char *>(id.data()), id.size());
  associated.append(reinterpret_cast<const char *>(tag.data()), tag.size());
  put_u8(associated, KIND_WRAP);
  return seal_with_nonce({reinterpret_cast<const char *>(data.bytes().data()), crypto::KEY_BYTES}, under, associated,
                         random);
}

std::optional<crypto::key> unwrap_key(std::string_view wrapped, const crypto::key &under, const file_id_t &id,
                                      const tag_t &tag) {
  if (wrapped.size() != WRAP_BYTES) return std::nullopt;
  std::string associated(reinterpret_cast<const char *>(id.data()), id.size());
  associated.append(reinterpret_cast<const char *>(tag.data()), tag.size());
  put_u8(associated, KIND_WRAP);
  auto o = open_with_nonce(bytes_of(wrapped), under, associated);
  if (!o) return std::nullopt;
  auto k = crypto::key_from_bytes(*o);
  if (!k) return std::nullopt;
  return *k;
}

// --- the state of a commit ----------------------------------------------------------------------------

struct segment_entry {
  uint64_t base = 0, length = 0, rows = 0;
  std::array<uint8_t, 16> salt{};
  page_ref deletions;  // offset 0: none
  uint64_t deleted = 0;
};

struct partition {
  tag_t tag{};
  page_ref directory;
  uint64_t rows = 0, deleted = 0, bytes = 0, segments = 0;
  std::string wrap_partition, wrap_owner;  // sealed files
  // Known once the directory is read (the owner, or the holder of this partition's key):
  bool loaded = false;
  std::optional<crypto::key> data_key;
  std::string value;
  bool null = false;
  std::string partition_by;  // as its newest directory page names it
  std::vector<segment_entry> segment_list;
  size_t chain = 0;  // directory pages in its chain
  uint64_t directory_bytes = 0;
  size_t listed = 0;                 // segments the chain lists (those after are new in this commit)
  size_t leaf = SIZE_MAX, slot = 0;  // where its entry was in the map read
  bool rewrapped = false;            // its wraps changed (key rotation)
  bool read_whole = false;           // its directory chain was read (not only its map entry)
  bool value_known = false;          // value and null are known (read, or given by this commit)
  std::set<size_t> new_deletions;
  bool changed = false;
};

struct meta {
  format::schema sch;
  std::string partition_by;
  uint32_t chunk_rows = DEFAULT_CHUNK_ROWS, page_bytes = DEFAULT_PAGE_BYTES;
  int level = DEFAULT_COMPRESSION_LEVEL;
  std::string sorted_by;
  std::vector<index_def> indexes;
};

struct state {
  file_id_t file_id{};
  uint64_t end = 0;  // the last whole commit's end (its tail's last byte + 1)
  uint64_t tail_offset = 0;
  uint64_t commit = 0;
  bool sealed = false;
  uint8_t owner = OWNER_NONE;
  std::array<uint8_t, crypto::SALT_BYTES> kdf_salt{};
  crypto::kdf_cost cost;
  page_ref meta_ref, root_ref;
  uint64_t partition_count = 0;
  // What the key opened:
  bool is_owner = false;
  std::optional<crypto::key> owner_key;
  meta m;
  bool has_meta = false;
  std::vector<partition> parts;  // the owner (or a plain file): all; a partition key: its own
  uint64_t map_bytes = 0;
  struct leaf_ref {
    tag_t first{};
    uint64_t entries = 0;
    page_ref ref;
  };
  std::vector<leaf_ref> leaves;  // the map's leaves as read (a writer keeps those it does not change)
};

// --- stored objects outside segments --------------------------------------------------------------

result<std::vector<uint8_t>> read_object(const byte_source &src, const state &st, const page_ref &ref, uint8_t kind,
                                         const crypto::key *k, const std::string &what) {
  if (ref.offset < STORE_HEADER || ref.offset > st.end || ref.stored_length > st.end - ref.offset)
    return corrupt(what + " points outside the file", ref.offset);
  if (ref.raw_length > DEFAULT_MAX_PAGE_BYTES) return bad_block(what + " declares too many bytes", ref.offset);
  std::vector<uint8_t> stored;
  if (auto a = quire::detail::resize_or_oom(stored, ref.stored_length, what); !a) return std::move(a).error();
  if (auto r = src.read_at(ref.offset, stored); !r) return std::move(r).error();
  if (crc32c(stored) != ref.crc) return bad_block(what + ": checksum mismatch", ref.offset);
  std::span<const uint8_t> body = stored;
  std::vector<uint8_t> opened;
  if (k) {
    auto o = open_with_nonce(stored, *k, place_data(st.file_id, ref.offset, kind));
    if (!o) return bad_block(what + " does not authenticate", ref.offset);
    opened = std::move(o).value();
    body = opened;
  }
  std::vector<uint8_t> out(ref.raw_length + DECODE_PADDING);
  if (ref.compression == COMPRESSION_NONE) {
    if (body.size() != ref.raw_length) return bad_block(what + ": sizes differ", ref.offset);
    std::memcpy(out.data(), body.data(), body.size());
  } else {
    size_t n = ZSTD_decompress(out.data(), ref.raw_length, body.data(), body.size());
    if (ZSTD_isError(n) || n != ref.raw_length) return bad_block(what + " does not decompress", ref.offset);
  }
  out.resize(ref.raw_length);
  return out;
}

/// Collects a commit's bytes before they are appended, at known offsets.
struct commit_buffer {
  uint64_t base = 0;  // where bytes[0] will land
  std::string bytes;
  /// One compression context for the commit's objects (a context costs more to make than a
  /// small page to compress: a commit of 5,000 partitions writes 5,000 directory pages).
  std::unique_ptr<ZSTD_CCtx, size_t (*)(ZSTD_CCtx *)> cctx{ZSTD_createCCtx(), ZSTD_freeCCtx};
  uint64_t here() const { return base + bytes.size(); }
  result<page_ref> object(std::string_view raw, uint8_t kind, const crypto::key *k, const file_id_t &id,
                          const random_source &random) {
    page_ref ref;
    std::string stored = seal_page(raw, DEFAULT_COMPRESSION_LEVEL, cctx.get(), ref);
    ref.offset = here();
    if (k) {
      auto s = seal_with_nonce(stored, *k, place_data(id, ref.offset, kind), random);
      if (!s) return std::move(s).error();
      stored = std::move(s).value();
    }
    ref.stored_length = static_cast<uint32_t>(stored.size());
    ref.crc = crc32c(stored);
    bytes += stored;
    return ref;
  }
};

// --- encoding of the directory, map and meta pages -------------------------------------------------

void put_tag(std::string &o, const tag_t &t) { o.append(reinterpret_cast<const char *>(t.data()), t.size()); }
bool read_fixed(byte_reader &r, uint8_t *out, size_t n) {
  auto s = r.take(n);
  if (s.size() != n) return false;
  std::memcpy(out, s.data(), n);
  return true;
}

std::string encode_meta(const meta &m) {
  std::string o;
  put_varint(o, m.sch.columns.size());
  for (const auto &c : m.sch.columns) {
    put_bytes(o, c.name);
    put_u8(o, static_cast<uint8_t>(c.type));
  }
  put_bytes(o, m.partition_by);
  put_varint(o, m.chunk_rows);
  put_varint(o, m.page_bytes);
  put_varint(o, static_cast<uint64_t>(m.level));
  put_bytes(o, m.sorted_by);
  put_varint(o, m.indexes.size());
  for (const auto &ix : m.indexes) {
    put_bytes(o, ix.column);
    put_u8(o, static_cast<uint8_t>(ix.kind));
  }
  return o;
}

result<meta> decode_meta(std::span<const uint8_t> raw) {
  byte_reader r(raw);
  meta m;
  uint64_t n = r.varint();
  if (r.failed() || n == 0 || n > MAX_COLUMNS) return corrupt("the meta page holds an impossible column count");
  for (uint64_t i = 0; i < n; ++i) {
    std::string name(r.bytes());
    auto type = static_cast<column_type>(r.u8());
    if (r.failed() || name.empty() || !parse_type_name(type_name(type)))
      return corrupt("the meta page's schema is malformed");
    m.sch.columns.push_back({std::move(name), type});
  }
  m.partition_by = std::string(r.bytes());
  m.chunk_rows = static_cast<uint32_t>(r.varint());
  m.page_bytes = static_cast<uint32_t>(r.varint());
  m.level = static_cast<int>(r.varint());
  m.sorted_by = std::string(r.bytes());
  uint64_t ni = r.varint();
  if (r.failed() || ni > n * 3) return corrupt("the meta page's indexes are malformed");
  for (uint64_t i = 0; i < ni; ++i) {
    std::string col(r.bytes());
    auto kind = static_cast<index_kind>(r.u8());
    if (r.failed() || !parse_index_kind(index_kind_name(kind))) return corrupt("the meta page's indexes are malformed");
    m.indexes.push_back({std::move(col), kind});
  }
  if (r.failed() || m.chunk_rows == 0 || m.chunk_rows > MAX_CHUNK_ROWS) return corrupt("the meta page is malformed");
  return m;
}

/// A partition's directory page: its value, the previous page of its chain, the segments this page
/// adds (ordinals from `first`), deletion vectors that replace earlier ones, and the name of the
/// column the file is partitioned by (so a partition's key, which cannot open the meta page, knows it).
std::string encode_directory(const partition &p, const page_ref &prev, size_t first, size_t count,
                             const std::vector<size_t> &dv_ordinals, std::string_view partition_by) {
  std::string o;
  put_u8(o, p.null ? 1 : 0);
  put_bytes(o, p.value);
  put_ref(o, prev);
  put_varint(o, first);
  put_varint(o, count);
  for (size_t i = first; i < first + count; ++i) {
    const auto &s = p.segment_list[i];
    put_varint(o, s.base);
    put_varint(o, s.length);
    put_varint(o, s.rows);
    o.append(reinterpret_cast<const char *>(s.salt.data()), s.salt.size());
  }
  put_varint(o, dv_ordinals.size());
  for (size_t i : dv_ordinals) {
    put_varint(o, i);
    put_ref(o, p.segment_list[i].deletions);
    put_varint(o, p.segment_list[i].deleted);
  }
  put_bytes(o, partition_by);
  return o;
}

std::string encode_entry(const partition &p, bool sealed) {
  std::string o;
  put_tag(o, p.tag);
  put_ref(o, p.directory);
  put_varint(o, p.rows);
  put_varint(o, p.deleted);
  put_varint(o, p.bytes);
  put_varint(o, p.segments);
  put_varint(o, p.chain);
  if (sealed) {
    put_u8(o, p.wrap_partition.empty() ? 0 : 1);
    o += p.wrap_partition;
    o += p.wrap_owner;
  }
  return o;
}

bool decode_entry(byte_reader &r, bool sealed, partition &p) {
  if (!read_fixed(r, p.tag.data(), TAG)) return false;
  p.directory = read_ref(r);
  p.rows = r.varint();
  p.deleted = r.varint();
  p.bytes = r.varint();
  p.segments = r.varint();
  p.chain = static_cast<size_t>(r.varint());
  if (sealed) {
    const bool has_partition = r.u8() != 0;
    if (has_partition) {
      auto w = r.take(WRAP_BYTES);
      p.wrap_partition.assign(reinterpret_cast<const char *>(w.data()), w.size());
    }
    auto w = r.take(WRAP_BYTES);
    p.wrap_owner.assign(reinterpret_cast<const char *>(w.data()), w.size());
  }
  return !r.failed() && p.deleted <= p.rows + p.deleted;
}

// --- reading a commit ----------------------------------------------------------------------------

/// Whether the 48 bytes at `at` are a whole tail whose footer checks; fills `footer`.
bool tail_is_whole(const byte_source &src, uint64_t at, const uint8_t *t, std::vector<uint8_t> &footer,
                   uint64_t &footer_offset) {
  if (std::memcmp(t + 40, MAGIC, sizeof MAGIC) != 0) return false;
  uint16_t version;
  std::memcpy(&version, t + 46, 2);
  if (version != STORE_VERSION) return false;
  if (crc32c({t, 36}) != load_u32(t + 36)) return false;
  footer_offset = load_u64(t);
  const uint32_t length = load_u32(t + 8);
  if (footer_offset < STORE_HEADER || footer_offset > at || length != at - footer_offset || length > (64u << 20))
    return false;
  footer.resize(length);
  if (!src.read_at(footer_offset, footer)) return false;
  return crc32c(footer) == load_u32(t + 12);
}

/// Finds the last whole commit: the tail at the end, or (a file cut during a commit) the last whole
/// tail before it, searched backwards 64 KiB at a time.
result<void> find_last_commit(const byte_source &src, state &st, std::vector<uint8_t> &footer) {
  const uint64_t size = src.size();
  if (size < STORE_HEADER + STORE_TAIL)
    return quire::error(error_code::NOT_A_QUIRE_FILE, "too short to be a .quire file", 0);
  uint8_t head[STORE_HEADER];
  if (auto r = src.read_at(0, head); !r) return std::move(r).error();
  std::memcpy(st.file_id.data(), head + 8, 16);
  uint8_t t[STORE_TAIL];
  uint64_t footer_offset = 0;
  if (auto r = src.read_at(size - STORE_TAIL, t); !r) return std::move(r).error();
  if (tail_is_whole(src, size - STORE_TAIL, t, footer, footer_offset)) {
    st.end = size;
  } else {
    // Search backwards for the tail's closing magic and version.
    const uint8_t closing[8] = {'Q', 'U', 'I', 'R', 'E', 0, STORE_VERSION & 0xFF, STORE_VERSION >> 8};
    uint64_t hi = size;
    std::vector<uint8_t> block;
    bool found = false;
    while (!found && hi > STORE_HEADER + STORE_TAIL) {
      const uint64_t lo = std::max<uint64_t>(STORE_HEADER, hi > SCAN_BLOCK ? hi - SCAN_BLOCK : 0);
      block.resize(static_cast<size_t>(hi - lo));
      if (auto r = src.read_at(lo, block); !r) return std::move(r).error();
      for (uint64_t end = hi; end >= lo + 8 && !found; --end) {
        if (std::memcmp(block.data() + (end - 8 - lo), closing, 8) != 0) continue;
        if (end < STORE_HEADER + STORE_TAIL) break;
        if (auto r = src.read_at(end - STORE_TAIL, t); !r) return std::move(r).error();
        if (tail_is_whole(src, end - STORE_TAIL, t, footer, footer_offset)) {
          st.end = end;
          found = true;
        }
      }
      // Overlap by a tail's length so one that straddles two blocks is seen whole.
      hi = lo + 7 > lo ? lo + 7 : lo;
      if (lo == STORE_HEADER) break;
    }
    if (!found) return corrupt("no whole commit: the file holds no tail that checks (cut before its first commit?)");
  }
  st.tail_offset = st.end - STORE_TAIL;
  st.commit = load_u64(t + 24);
  return {};
}

result<void> parse_footer(std::span<const uint8_t> footer, state &st, uint64_t at) {
  byte_reader r(footer);
  const uint64_t commit = r.u64();
  const uint8_t cipher = r.u8();
  st.owner = r.u8();
  if (st.owner == OWNER_PASSPHRASE) {
    read_fixed(r, st.kdf_salt.data(), st.kdf_salt.size());
    st.cost.passes = r.u64();
    st.cost.memory_bytes = r.u64();
  }
  // A passphrase's work factor is the file's say-so: a reader spends no more than four times quire's
  // default on it (a hostile file cannot make an open take minutes).
  if (st.owner == OWNER_PASSPHRASE && (st.cost.passes > 4 * crypto::DEFAULT_KDF_COST.passes ||
                                       st.cost.memory_bytes > 4 * crypto::DEFAULT_KDF_COST.memory_bytes))
    return corrupt("the passphrase's work factor is beyond what this reader spends", at);
  st.meta_ref = read_ref(r);
  st.root_ref = read_ref(r);
  st.partition_count = r.varint();
  if (r.failed() || commit != st.commit || cipher > 1 || st.owner > OWNER_PASSPHRASE ||
      (cipher == 1) != (st.owner != OWNER_NONE))
    return corrupt("the commit's footer is malformed", at);
  st.sealed = cipher == 1;
  return {};
}

/// Reads the partition map's entries (all of them: the owner, a plain file) or the one with `tag`.
result<void> read_map(const byte_source &src, state &st, const std::optional<tag_t> &only) {
  if (st.root_ref.offset == 0) return {};
  auto root = read_object(src, st, st.root_ref, KIND_ROOT, nullptr, "the partition map's root");
  if (!root) return std::move(root).error();
  st.map_bytes = st.root_ref.stored_length;
  byte_reader r(*root);
  uint64_t leaves = r.varint();
  if (r.failed() || leaves > r.remaining() / (TAG + 6) + 1) return corrupt("the partition map's root is malformed");
  using leaf_ref = state::leaf_ref;
  std::vector<leaf_ref> refs(static_cast<size_t>(leaves));
  uint64_t total = 0;
  for (auto &l : refs) {
    read_fixed(r, l.first.data(), TAG);
    l.entries = r.varint();
    l.ref = read_ref(r);
    total += l.entries;
  }
  if (r.failed() || total != st.partition_count) return corrupt("the partition map's root is malformed");
  size_t from = 0, to = refs.size();
  if (only) {
    auto it = std::upper_bound(refs.begin(), refs.end(), *only,
                               [](const tag_t &t, const leaf_ref &l) { return t < l.first; });
    if (it == refs.begin()) return {};
    to = static_cast<size_t>(it - refs.begin());
    from = to - 1;
  }
  for (size_t i = from; i < to; ++i) {
    auto leaf = read_object(src, st, refs[i].ref, KIND_LEAF, nullptr, "a partition map leaf");
    if (!leaf) return std::move(leaf).error();
    st.map_bytes += refs[i].ref.stored_length;
    byte_reader lr(*leaf);
    uint64_t n = lr.varint();
    if (lr.failed() || n != refs[i].entries) return corrupt("a partition map leaf is malformed", refs[i].ref.offset);
    for (uint64_t e = 0; e < n; ++e) {
      partition p;
      if (!decode_entry(lr, st.sealed, p)) return corrupt("a partition map entry is malformed", refs[i].ref.offset);
      p.leaf = i;
      p.slot = static_cast<size_t>(e);
      if (!only || p.tag == *only) st.parts.push_back(std::move(p));
    }
  }
  if (!only) st.leaves = std::move(refs);
  return {};
}

/// Reads a partition's directory chain (under its data key when sealed), newest page first, until
/// a page that lists from the first segment. Each page's previous one lies before it, so the walk
/// ends.
result<void> read_directory(const byte_source &src, const state &st, partition &p) {
  page_ref at = p.directory;
  p.chain = 0;
  p.directory_bytes = 0;
  std::vector<bool> dv_set;
  while (at.offset != 0) {
    auto raw = read_object(src, st, at, KIND_DIRECTORY, p.data_key ? &*p.data_key : nullptr, "a partition directory");
    if (!raw) return std::move(raw).error();
    p.directory_bytes += at.stored_length;
    byte_reader r(*raw);
    const bool null = r.u8() != 0;
    std::string value(r.bytes());
    const page_ref prev = read_ref(r);
    const uint64_t first = r.varint(), count = r.varint();
    if (r.failed() || first > (uint64_t{1} << 32) || count > r.remaining() / 20 + 1 ||
        (prev.offset != 0 && prev.offset >= at.offset))
      return corrupt("a partition directory is malformed", at.offset);
    if (p.chain == 0) {
      p.null = null;
      p.value = std::move(value);
      p.segment_list.assign(static_cast<size_t>(first + count), segment_entry{});
      dv_set.assign(p.segment_list.size(), false);
    }
    if (first + count > p.segment_list.size())
      return corrupt("a partition directory lists segments out of order", at.offset);
    for (uint64_t i = first; i < first + count; ++i) {
      auto &sg = p.segment_list[static_cast<size_t>(i)];
      sg.base = r.varint();
      sg.length = r.varint();
      sg.rows = r.varint();
      read_fixed(r, sg.salt.data(), sg.salt.size());
    }
    uint64_t dvs = r.varint();
    if (r.failed() || dvs > p.segment_list.size()) return corrupt("a partition directory is malformed", at.offset);
    for (uint64_t d = 0; d < dvs; ++d) {
      uint64_t ordinal = r.varint();
      page_ref ref = read_ref(r);
      uint64_t deleted = r.varint();
      if (r.failed() || ordinal >= p.segment_list.size())
        return corrupt("a deletion vector names no segment", at.offset);
      if (dv_set[ordinal]) continue;  // a newer page replaced it
      dv_set[ordinal] = true;
      p.segment_list[ordinal].deletions = ref;
      p.segment_list[ordinal].deleted = deleted;
    }
    // The partition column's name (absent from pages written before it was added).
    if (p.chain == 0 && r.remaining() > 0) p.partition_by = std::string(r.bytes());
    if (r.failed()) return corrupt("a partition directory is malformed", at.offset);
    ++p.chain;
    if (first == 0) break;  // it lists everything before it: older pages are not needed
    at = prev;
  }
  if (p.segment_list.size() != p.segments) return corrupt("a partition's directory and its map entry disagree");
  for (const auto &sg : p.segment_list) {
    if (sg.base < STORE_HEADER || sg.base > st.end || sg.length > st.end - sg.base)
      return corrupt("a segment lies outside the file", sg.base);
  }
  p.loaded = true;
  p.read_whole = true;
  p.value_known = true;
  p.listed = p.segment_list.size();
  return {};
}

tag_t plain_tag(std::string_view value, bool null) {
  crypto::key zero;
  std::string data(null ? "\x01" : "\x00", 1);
  data.append(value);
  auto h = crypto::keyed_hash(zero, bytes_of(data));
  tag_t t;
  std::memcpy(t.data(), h.data(), TAG);
  return t;
}

tag_t key_tag(const crypto::key &k, const file_id_t &id) {
  auto h = crypto::keyed_hash(k, id);
  tag_t t;
  std::memcpy(t.data(), h.data(), TAG);
  return t;
}

struct opening {
  std::string key, passphrase;
};

/// Loads the last whole commit of `src` with the key in `with`: the owner sees every partition,
/// a partition's key its own. Errors: KEY_REQUIRED, WRONG_KEY, CORRUPT_*.
result<state> load_state(const byte_source &src, const opening &with, bool directories = true) {
  state st;
  std::vector<uint8_t> footer;
  if (auto r = find_last_commit(src, st, footer); !r) return std::move(r).error();
  if (auto r = parse_footer(footer, st, st.end - STORE_TAIL - footer.size()); !r) return std::move(r).error();
  if (!st.sealed) {
    st.is_owner = true;
    auto raw = read_object(src, st, st.meta_ref, KIND_META, nullptr, "the meta page");
    if (!raw) return std::move(raw).error();
    auto m = decode_meta(*raw);
    if (!m) return std::move(m).error();
    st.m = std::move(m).value();
    st.has_meta = true;
    if (auto r = read_map(src, st, std::nullopt); !r) return std::move(r).error();
    if (directories)
      for (auto &p : st.parts)
        if (auto r = read_directory(src, st, p); !r) return std::move(r).error();
    return st;
  }
  if (with.key.empty() && with.passphrase.empty()) {
    return quire::error(error_code::KEY_REQUIRED,
                        "the file is sealed: open it with the owner's key or passphrase, or a partition's key");
  }
  std::optional<crypto::key> k;
  if (!with.passphrase.empty()) {
    if (st.owner != OWNER_PASSPHRASE)
      return quire::error(error_code::WRONG_KEY, "the file is sealed with a key file, not a passphrase");
    auto d = crypto::key_from_passphrase(with.passphrase, st.kdf_salt, st.cost);
    if (!d) return std::move(d).error();
    k = *d;
  } else {
    auto kb = crypto::key_from_bytes(bytes_of(with.key));
    if (!kb) {
      return quire::error(error_code::INVALID_ARGUMENT, "a key is " + std::to_string(crypto::KEY_BYTES) +
                                                            " bytes; this one is " + std::to_string(with.key.size()));
    }
    k = *kb;
  }
  // The owner's key opens the meta page.
  auto raw = read_object(src, st, st.meta_ref, KIND_META, &*k, "the meta page");
  if (raw) {
    auto m = decode_meta(*raw);
    if (!m) return std::move(m).error();
    st.m = std::move(m).value();
    st.has_meta = true;
    st.is_owner = true;
    st.owner_key = k;
    if (auto r = read_map(src, st, std::nullopt); !r) return std::move(r).error();
    // A writer unwraps the data keys of the partitions it touches only (committer::ensure_key).
    if (directories) {
      for (auto &p : st.parts) {
        p.data_key = unwrap_key(p.wrap_owner, *k, st.file_id, p.tag);
        if (!p.data_key)
          return bad_block("a partition's data key does not open under the owner's key", st.root_ref.offset);
        if (auto r = read_directory(src, st, p); !r) return std::move(r).error();
      }
    }
    return st;
  }
  if (raw.error().code != error_code::CORRUPT_BLOCK || !with.passphrase.empty())
    return quire::error(error_code::WRONG_KEY, "the passphrase opens nothing in this file");
  // Else a partition's key: its tag finds its entry.
  const tag_t tag = key_tag(*k, st.file_id);
  if (auto r = read_map(src, st, tag); !r) return std::move(r).error();
  if (st.parts.empty() || st.parts[0].wrap_partition.empty())
    return quire::error(error_code::WRONG_KEY, "the key is neither the owner's nor a partition's of this file");
  auto &p = st.parts[0];
  p.data_key = unwrap_key(p.wrap_partition, *k, st.file_id, p.tag);
  if (!p.data_key) return quire::error(error_code::WRONG_KEY, "the key does not open its partition's data key");
  if (auto r = read_directory(src, st, p); !r) return std::move(r).error();
  return st;
}

bool partition_less(const partition &a, const partition &b) {
  if (a.null != b.null) return b.null;
  return a.value < b.value;
}

result<std::shared_ptr<std::vector<uint8_t>>> read_deletions(const byte_source &src, const state &st,
                                                             const partition &p, const segment_entry &s) {
  auto raw =
      read_object(src, st, s.deletions, KIND_DELETIONS, p.data_key ? &*p.data_key : nullptr, "a deletion vector");
  if (!raw) return std::move(raw).error();
  if (raw->size() != (s.rows + 7) / 8) return corrupt("a deletion vector of the wrong size", s.deletions.offset);
  auto out = std::make_shared<std::vector<uint8_t>>(static_cast<size_t>(s.rows));
  uint64_t n = 0;
  for (uint64_t i = 0; i < s.rows; ++i) {
    (*out)[static_cast<size_t>(i)] = ((*raw)[i >> 3] >> (i & 7)) & 1;
    n += (*out)[static_cast<size_t>(i)];
  }
  if (n != s.deleted) return corrupt("a deletion vector disagrees with its count", s.deletions.offset);
  return out;
}

/// The segment `s` of partition `p` as a reader's segment (its key, salt and deletions).
result<segment_info> segment_for(const byte_source &src, const state &st, const partition &p, const segment_entry &s) {
  segment_info sg;
  sg.base = s.base;
  sg.length = s.length;
  if (p.data_key) {
    auto seal = std::make_shared<sealing>();
    seal->key = *p.data_key;
    seal->file_id = st.file_id;
    seal->salt = s.salt;
    sg.seal = seal;
  }
  if (s.deletions.offset != 0) {
    auto d = read_deletions(src, st, p, s);
    if (!d) return std::move(d).error();
    sg.deleted = *d;
    sg.deleted_rows = s.deleted;
  }
  return sg;
}

/// The segments of the partitions `st` holds, in row order, set up for the reader.
result<std::vector<segment_info>> segments_of(const byte_source &src, state &st) {
  std::sort(st.parts.begin(), st.parts.end(), partition_less);
  std::vector<segment_info> out;
  for (const auto &p : st.parts) {
    for (const auto &s : p.segment_list) {
      auto sg = segment_for(src, st, p, s);
      if (!sg) return std::move(sg).error();
      out.push_back(std::move(sg).value());
    }
  }
  return out;
}

}  // namespace

namespace detail {

result<void> open_store(file::impl &f) {
  auto st = load_state(*f.source, {f.options.key, f.options.passphrase});
  if (!st) return std::move(st).error();
  auto segs = segments_of(*f.source, *st);
  if (!segs) return std::move(segs).error();
  f.version = STORE_VERSION;
  f.commit = st->commit;
  f.sealed = st->sealed;
  f.partition_key = !st->is_owner;
  f.partitions = st->partition_count;
  f.partitions_read = st->parts.size();
  // A partition's key cannot open the meta page: its directory names the column.
  f.partition_by = st->has_meta ? st->m.partition_by : (st->parts.empty() ? std::string() : st->parts[0].partition_by);
  if (segs->empty()) {
    // A file with no rows (or a partition with none): the schema from the meta page.
    if (!st->has_meta) return corrupt("a partition with no segments");
    f.sch = st->m.sch;
    f.index_defs = st->m.indexes;
    f.indexes.clear();
    for (const auto &d : st->m.indexes) f.indexes.push_back({*f.sch.find(d.column), d.kind, 0});
    f.segments.clear();
    f.index_segments();
    return {};
  }
  return load_segments(f, std::move(segs).value());
}

}  // namespace detail

// --- writing -------------------------------------------------------------------------------------------

namespace {

class segment_sealer final : public page_sealer {
 public:
  explicit segment_sealer(sealing s) : s_(std::move(s)) {}
  result<void> seal(std::string &stored, uint64_t offset, uint8_t kind) const override {
    return seal_stored(stored, s_, offset, kind);
  }

 private:
  sealing s_;
};

result<void> need_random(const store_options &o) {
  if (!o.random) return invalid("a sealed or new file needs a random source");
  return {};
}

/// The rows of `f` that `sel` marks in chunk `chunk` as cells, given to fn(cells, partition text, null).
struct row_reader {
  engine e;
  std::vector<std::string> texts;
  std::vector<cell> cells;
  explicit row_reader(file::impl &fi) : e(fi), texts(fi.sch.columns.size()), cells(fi.sch.columns.size()) {}

  template <typename Fn>
  result<void> each(const std::optional<pred> &where, Fn fn) {
    quire::error failure;
    const size_t ncols = e.f.sch.columns.size();
    auto r = e.for_each_chunk(where, false, [&](uint64_t chunk, const selection &selected) {
      // Every row of a chunk is read here: one byte a row costs nothing next to the rows' cells.
      const std::vector<uint8_t> sel = selected.to_mask();
      std::vector<engine::cursor> cursors;
      for (size_t c = 0; c < ncols; ++c) cursors.push_back(engine::cursor{e, c, chunk, nullptr, SIZE_MAX, {}, nullptr});
      const uint64_t first = e.f.chunk_first_row(chunk);
      for (uint32_t i = 0; i < sel.size(); ++i) {
        if (!sel[i]) continue;
        for (size_t c = 0; c < ncols; ++c) {
          auto &cur = cursors[c];
          if (auto s = cur.seek(i); !s) {
            failure = std::move(s).error();
            return false;
          }
          const uint32_t at = cur.local(i);
          const auto &v = *cur.view.values;
          if (!v.is_valid(at)) {
            cells[c] = cell::null();
            continue;
          }
          switch (e.f.sch.columns[c].type) {
            case column_type::boolean: cells[c] = cell::of(v.ints[at] != 0); break;
            case column_type::integer:
            case column_type::date:
            case column_type::timestamp: cells[c] = cell::of(v.ints[at]); break;
            case column_type::float64: cells[c] = cell::of(v.reals[at]); break;
            default:
              texts[c].assign(cur.view.text(at));
              cells[c] = cell::text(texts[c]);
              break;
          }
        }
        auto r = fn(first + i, cells);
        if (!r) {
          failure = std::move(r).error();
          return false;
        }
      }
      return true;
    });
    if (!r) return r;
    if (failure.code != error_code::OK) return failure;
    return {};
  }
};

/// Text of a cell as the partition value (and a key file's name): what `quire query --csv` prints.
std::string partition_text(const cell &c, column_type type) {
  std::string out;
  switch (c.k) {
    case cell::kind::null_value: return out;
    case cell::kind::boolean: return c.b ? "true" : "false";
    case cell::kind::integer:
      if (type == column_type::date) append_date(out, c.i);
      else if (type == column_type::timestamp) append_timestamp(out, c.i);
      else out = std::to_string(c.i);
      return out;
    case cell::kind::real: append_double(out, c.d); return out;
    case cell::kind::text: return std::string(c.s);
  }
  return out;
}

/// One commit in the making over the state of the last one.
struct committer {
  append_target &target;
  const store_options &o;
  state st;
  commit_buffer buf;
  uint64_t rows_added = 0, segments_written = 0;

  committer(append_target &t, const store_options &opt) : target(t), o(opt) {}

  const crypto::key *owner() const { return st.sealed ? &*st.owner_key : nullptr; }

  /// Opens the target as its owner; cuts off an unfinished commit.
  result<void> begin() {
    auto s = load_state(target, {o.owner_key, o.owner_passphrase}, false);
    if (!s) return std::move(s).error();
    st = std::move(s).value();
    if (!st.is_owner) return quire::error(error_code::KEY_REQUIRED, "changing a sealed file needs the owner's key");
    if (target.size() > st.end) {
      if (auto r = target.truncate(st.end); !r) return r;
    }
    buf.base = st.end;
    return {};
  }

  /// Unwraps a partition's data key when this commit needs it.
  result<void> ensure_key(partition &p) {
    if (!st.sealed || p.data_key) return {};
    p.data_key = unwrap_key(p.wrap_owner, *st.owner_key, st.file_id, p.tag);
    if (!p.data_key) return bad_block("a partition's data key does not open under the owner's key", st.root_ref.offset);
    return {};
  }

  /// Reads a partition's directory when this commit needs its segments (delete, update).
  result<void> ensure_loaded(partition &p) {
    if (auto r = ensure_key(p); !r) return r;
    if (p.loaded || p.directory.offset == 0) return {};
    return read_directory(target, st, p);
  }

  /// The partition of a value, found by its tag (which the value, or its key, gives without
  /// reading any directory) or made: a new one gets a data key, its partition's key (found in or
  /// made into the keys folder) and the wraps.
  result<partition *> partition_for(std::string_view value, bool null) {
    // A partition whose value this commit knows (its directory read, or made here).
    for (auto &p : st.parts)
      if (p.value_known && p.null == null && p.value == value) return &p;
    tag_t tag{};
    std::optional<crypto::key> pk;
    const bool partitioned = !st.m.partition_by.empty();
    if (!st.sealed) {
      tag = plain_tag(value, null);
    } else if (!partitioned) {
      tag = plain_tag("", false);
    } else {
      if (!o.keys) return invalid("a sealed, partitioned file needs the partitions' keys (a keys folder)");
      auto found = o.keys->find(value, null);
      if (!found) return std::move(found).error();
      if (*found) {
        pk = **found;
        tag = key_tag(*pk, st.file_id);
      } else {
        // No key for the value in the folder: the owner holds every data key, so the file's own
        // partition of that value (its directories read, this once) takes the rows; only a value
        // the file does not hold makes a new partition (and a new key).
        for (auto &p : st.parts) {
          if (auto r = ensure_loaded(p); !r) return std::move(r).error();
          if (p.null == null && p.value == value) return &p;
        }
      }
    }
    if (!st.sealed || !partitioned || pk) {
      for (auto &p : st.parts) {
        if (p.tag != tag) continue;
        if (auto r = ensure_key(p); !r) return std::move(r).error();
        p.value = std::string(value);
        p.null = null;
        p.value_known = true;
        return &p;
      }
    }
    partition p;
    p.value = std::string(value);
    p.null = null;
    p.value_known = true;
    p.loaded = true;
    p.changed = true;
    p.tag = tag;
    if (st.sealed) {
      crypto::key data;
      if (auto r = o.random(data.bytes()); !r) return std::move(r).error();
      p.data_key = data;
      if (partitioned) {
        if (!pk) {
          crypto::key made;
          if (auto r = o.random(made.bytes()); !r) return std::move(r).error();
          if (auto r = o.keys->keep(value, null, made); !r) return std::move(r).error();
          pk = made;
        }
        p.tag = key_tag(*pk, st.file_id);
        auto w = wrap_key(data, *pk, st.file_id, p.tag, o.random);
        if (!w) return std::move(w).error();
        p.wrap_partition = std::move(w).value();
      }
      auto w = wrap_key(data, *st.owner_key, st.file_id, p.tag, o.random);
      if (!w) return std::move(w).error();
      p.wrap_owner = std::move(w).value();
    }
    st.parts.push_back(std::move(p));
    return &st.parts.back();
  }

  /// Writes the rows `rows(writer)` gives as a new segment of partition `p`.
  template <typename Rows>
  result<void> write_segment(partition &p, Rows rows) {
    if (!p.loaded) {
      // Its directory is not read: the new segments follow the ones it lists.
      p.segment_list.resize(p.segments);
      p.listed = p.segments;
      p.loaded = true;
    }
    write_options wo;
    wo.chunk_rows = st.m.chunk_rows;
    wo.page_bytes = st.m.page_bytes;
    wo.compression_level = st.m.level;
    wo.sorted_by = st.m.sorted_by;
    wo.indexes = st.m.indexes;
    wo.spill = o.write.spill;
    wo.sort_memory_bytes = o.write.sort_memory_bytes;
    segment_entry s;
    if (st.sealed) {
      if (auto r = o.random(s.salt); !r) return r;
      sealing seal;
      seal.key = *p.data_key;
      seal.file_id = st.file_id;
      seal.salt = s.salt;
      wo.sealer = std::make_shared<segment_sealer>(seal);
    }
    vector_sink sink;
    auto w = writer::create(st.m.sch, wo, sink);
    if (!w) return std::move(w).error();
    if (auto r = rows(*w.value()); !r) return r;
    auto n = w.value()->finish();
    if (!n) return std::move(n).error();
    s.base = buf.here();
    s.length = sink.bytes.size();
    s.rows = w.value()->rows();
    buf.bytes.append(reinterpret_cast<const char *>(sink.bytes.data()), sink.bytes.size());
    p.segment_list.push_back(s);
    p.rows += s.rows;
    p.bytes += s.length;
    p.segments = p.segment_list.size();
    p.changed = true;
    rows_added += s.rows;
    ++segments_written;
    return {};
  }

  /// Writes the changed partitions' directories, the map, the meta page, the footer and the tail;
  /// syncs before and after the tail.
  result<store_result> finish() {
    for (auto &p : st.parts) {
      if (!p.changed) continue;
      const crypto::key *k = st.sealed ? &*p.data_key : nullptr;
      // A new partition's first page lists everything; so does a page after a long chain whose
      // segments were read anyway (a delete); an append adds a page of its own segments only.
      const bool consolidate = p.directory.offset == 0 || (p.read_whole && p.chain + 1 > MAX_DIR_CHAIN);
      const size_t first = consolidate ? 0 : p.listed;
      std::vector<size_t> dv;
      for (size_t i = 0; i < p.segment_list.size(); ++i) {
        if (consolidate ? p.segment_list[i].deletions.offset != 0 : p.new_deletions.count(i) > 0) dv.push_back(i);
      }
      page_ref prev = consolidate ? page_ref{} : p.directory;
      auto ref = buf.object(encode_directory(p, prev, first, p.segment_list.size() - first, dv, st.m.partition_by),
                            KIND_DIRECTORY, k, st.file_id, o.random);
      if (!ref) return std::move(ref).error();
      p.directory = *ref;
      p.chain = consolidate ? 1 : p.chain + 1;
      p.listed = p.segment_list.size();
      p.new_deletions.clear();
    }
    // Partitions with no rows left keep their entry (their key still opens them, to nothing).
    std::sort(st.parts.begin(), st.parts.end(), [](const partition &a, const partition &b) { return a.tag < b.tag; });
    for (size_t i = 1; i < st.parts.size(); ++i) {
      if (st.parts[i].tag == st.parts[i - 1].tag) return invalid("two partitions share a key: give each its own");
    }
    std::string root;
    const size_t leaves = (st.parts.size() + LEAF_ENTRIES - 1) / LEAF_ENTRIES;
    put_varint(root, leaves);
    for (size_t l = 0; l < leaves; ++l) {
      const size_t from = l * LEAF_ENTRIES, to = std::min(st.parts.size(), from + LEAF_ENTRIES);
      // A leaf whose entries are the ones it held, unchanged, is kept where it is.
      bool same = l < st.leaves.size() && st.leaves[l].entries == to - from;
      for (size_t i = from; same && i < to; ++i) {
        const auto &p = st.parts[i];
        same = !p.changed && !p.rewrapped && p.leaf == l && p.slot == i - from;
      }
      if (same) {
        put_tag(root, st.parts[from].tag);
        put_varint(root, to - from);
        put_ref(root, st.leaves[l].ref);
        continue;
      }
      std::string leaf;
      put_varint(leaf, to - from);
      for (size_t i = from; i < to; ++i) leaf += encode_entry(st.parts[i], st.sealed);
      auto ref = buf.object(leaf, KIND_LEAF, nullptr, st.file_id, o.random);
      if (!ref) return std::move(ref).error();
      put_tag(root, st.parts[from].tag);
      put_varint(root, to - from);
      put_ref(root, *ref);
    }
    page_ref root_ref;
    if (leaves) {
      auto ref = buf.object(root, KIND_ROOT, nullptr, st.file_id, o.random);
      if (!ref) return std::move(ref).error();
      root_ref = *ref;
    }
    auto meta_ref = buf.object(encode_meta(st.m), KIND_META, owner(), st.file_id, o.random);
    if (!meta_ref) return std::move(meta_ref).error();
    const uint64_t commit = st.commit + 1;
    std::string footer;
    put_u64(footer, commit);
    put_u8(footer, st.sealed ? 1 : 0);
    put_u8(footer, st.owner);
    if (st.owner == OWNER_PASSPHRASE) {
      footer.append(reinterpret_cast<const char *>(st.kdf_salt.data()), st.kdf_salt.size());
      put_u64(footer, st.cost.passes);
      put_u64(footer, st.cost.memory_bytes);
    }
    put_ref(footer, *meta_ref);
    put_ref(footer, root_ref);
    put_varint(footer, st.parts.size());
    const uint64_t footer_offset = buf.here();
    buf.bytes += footer;
    std::string tail;
    put_u64(tail, footer_offset);
    put_u32(tail, static_cast<uint32_t>(footer.size()));
    put_u32(tail, crc32c(footer));
    put_u64(tail, st.commit == 0 ? 0 : st.tail_offset);
    put_u64(tail, commit);
    put_u32(tail, (st.sealed ? 1u : 0u) | (st.m.partition_by.empty() ? 0u : 2u));
    put_u32(tail, crc32c(tail));
    tail.append(MAGIC, sizeof MAGIC);
    put_u16(tail, STORE_VERSION);
    // Everything but the tail, made durable; then the tail: a tail on disk points at whole bytes.
    if (auto r = target.append(bytes_of(buf.bytes)); !r) return std::move(r).error();
    if (auto r = target.sync(); !r) return std::move(r).error();
    if (auto r = target.append(bytes_of(tail)); !r) return std::move(r).error();
    if (auto r = target.sync(); !r) return std::move(r).error();
    store_result out;
    out.commit = commit;
    out.rows = rows_added;
    out.segments_written = segments_written;
    out.bytes_before = st.end;
    out.bytes_after = buf.here() + STORE_TAIL;
    return out;
  }
};

/// Writes the rows of `table` into the committer's partitions (one segment per partition value).
result<void> write_rows(committer &c, file &table) {
  auto &fi = table.internals();
  const auto &m = c.st.m;
  // The rows' columns must be the file's, by name and type (in the file's order).
  std::vector<size_t> from(m.sch.columns.size());
  if (fi.sch.columns.size() != m.sch.columns.size())
    return quire::error(error_code::SCHEMA_MISMATCH, "the rows have " + std::to_string(fi.sch.columns.size()) +
                                                         " columns; the file has " +
                                                         std::to_string(m.sch.columns.size()));
  for (size_t i = 0; i < m.sch.columns.size(); ++i) {
    auto at = fi.sch.find(m.sch.columns[i].name);
    if (!at || fi.sch.columns[*at].type != m.sch.columns[i].type) {
      quire::error e(error_code::SCHEMA_MISMATCH, "column '" + m.sch.columns[i].name + "' (" +
                                                      std::string(type_name(m.sch.columns[i].type)) +
                                                      ") is not among the rows' columns with that type");
      e.path = m.sch.columns[i].name;
      return e;
    }
    from[i] = *at;
  }
  std::vector<cell> ordered(m.sch.columns.size());
  std::optional<size_t> part_col;
  if (!m.partition_by.empty()) part_col = fi.sch.find(m.partition_by);
  if (!part_col) {
    auto p = c.partition_for("", false);
    if (!p) return std::move(p).error();
    return c.write_segment(**p, [&](writer &w) -> result<void> {
      row_reader rr(fi);
      return rr.each(std::nullopt, [&](uint64_t, const std::vector<cell> &cells) -> result<void> {
        for (size_t i = 0; i < from.size(); ++i) ordered[i] = cells[from[i]];
        return w.append_row(ordered);
      });
    });
  }
  // One pass over the rows into the bounded sorter, keyed by (partition value, row): then each
  // partition's rows come out together, in their order, and are written as its segment.
  run_sorter sorter(std::max<size_t>(c.o.write.sort_memory_bytes, size_t{1} << 20), c.o.write.spill);
  {
    row_reader rr(fi);
    std::string key, payload;
    auto r = rr.each(std::nullopt, [&](uint64_t row, const std::vector<cell> &cells) -> result<void> {
      const cell &v = cells[*part_col];
      const bool null = v.k == cell::kind::null_value;
      const std::string text = partition_text(v, fi.sch.columns[*part_col].type);
      key.clear();
      put_u8(key, null ? 1 : 0);
      append_text_key(key, text);
      put_be64(key, row);
      payload.clear();
      put_u8(payload, null ? 1 : 0);
      put_bytes(payload, text);
      for (size_t i = 0; i < from.size(); ++i) {
        const cell &x = cells[from[i]];
        put_u8(payload, static_cast<uint8_t>(x.k));
        switch (x.k) {
          case cell::kind::null_value: break;
          case cell::kind::integer: put_svarint(payload, x.i); break;
          case cell::kind::real: payload.append(reinterpret_cast<const char *>(&x.d), 8); break;
          case cell::kind::boolean: put_u8(payload, x.b ? 1 : 0); break;
          case cell::kind::text: put_bytes(payload, x.s); break;
        }
      }
      sorter.add(key, payload);
      return {};
    });
    if (!r) return r;
  }
  if (auto r = sorter.finish(); !r) return r;
  std::string_view key, payload;
  auto next = sorter.next(key, payload);
  if (!next) return std::move(next).error();
  bool have = *next;
  size_t partitions = 0;
  while (have) {
    byte_reader head({reinterpret_cast<const uint8_t *>(payload.data()), payload.size()});
    const bool null = head.u8() != 0;
    const std::string value(head.bytes());
    if (++partitions > c.o.max_partitions)
      return invalid("more than " + std::to_string(c.o.max_partitions) + " partitions");
    auto p = c.partition_for(value, null);
    if (!p) return std::move(p).error();
    auto r = c.write_segment(**p, [&](writer &w) -> result<void> {
      while (have) {
        byte_reader br({reinterpret_cast<const uint8_t *>(payload.data()), payload.size()});
        const bool n = br.u8() != 0;
        if (n != null || br.bytes() != value) return {};
        for (auto &x : ordered) {
          x = cell::null();
          switch (static_cast<cell::kind>(br.u8())) {
            case cell::kind::null_value: break;
            case cell::kind::integer: x = cell::of(br.svarint()); break;
            case cell::kind::real: x = cell::of(br.f64()); break;
            case cell::kind::boolean: x = cell::of(br.u8() != 0); break;
            case cell::kind::text: x = cell::text(br.bytes()); break;
          }
        }
        if (br.failed()) return corrupt("a sorted row did not decode (the sort runs are damaged)");
        if (auto a = w.append_row(ordered); !a) return a;
        auto more = sorter.next(key, payload);
        if (!more) return std::move(more).error();
        have = *more;
      }
      return {};
    });
    if (!r) return r;
  }
  return {};
}

result<void> check_owner_key(const store_options &o) {
  if (!o.owner_key.empty() && o.owner_key.size() != crypto::KEY_BYTES) {
    return invalid("a key is " + std::to_string(crypto::KEY_BYTES) + " bytes; the owner's key is " +
                   std::to_string(o.owner_key.size()));
  }
  if (!o.owner_key.empty() && !o.owner_passphrase.empty())
    return invalid("give the owner's key or a passphrase, not both");
  return {};
}

}  // namespace

result<void> memory_target::read_at(uint64_t offset, std::span<uint8_t> out) const {
  if (offset > bytes.size() || out.size() > bytes.size() - offset)
    return quire::error(error_code::OUT_OF_RANGE, "a read past the end of the bytes", offset);
  if (!out.empty()) std::memcpy(out.data(), bytes.data() + offset, out.size());
  return {};
}

result<void> memory_target::append(std::span<const uint8_t> b) {
  if (b.size() > fail_after) {
    bytes.insert(bytes.end(), b.begin(), b.begin() + static_cast<std::ptrdiff_t>(fail_after));
    fail_after = 0;
    return quire::error(error_code::IO_ERROR, "the write failed (simulated)");
  }
  if (fail_after != UINT64_MAX) fail_after -= b.size();
  bytes.insert(bytes.end(), b.begin(), b.end());
  return {};
}

result<void> memory_target::truncate(uint64_t size) {
  if (size > bytes.size()) return quire::error(error_code::INVALID_ARGUMENT, "truncate cannot grow the bytes");
  bytes.resize(static_cast<size_t>(size));
  return {};
}

result<store_result> create_store(file &table, const store_options &o, append_target &target) {
  if (target.size() != 0) return invalid("a new store needs an empty file");
  if (auto r = check_owner_key(o); !r) return std::move(r).error();
  const bool sealed = !o.owner_key.empty() || !o.owner_passphrase.empty();
  if (sealed) {
    if (auto r = need_random(o); !r) return std::move(r).error();
  }
  auto &fi = table.internals();
  if (!o.partition_by.empty() && !fi.sch.find(o.partition_by))
    return quire::error(error_code::NO_SUCH_COLUMN, "partition_by names no column: '" + o.partition_by + "'");
  committer c(target, o);
  state &st = c.st;
  if (o.random) {
    if (auto r = o.random(st.file_id); !r) return std::move(r).error();
  }
  st.sealed = sealed;
  st.is_owner = true;
  st.m.sch = fi.sch;
  st.m.partition_by = o.partition_by;
  st.m.chunk_rows = o.write.chunk_rows;
  st.m.page_bytes = o.write.page_bytes;
  st.m.level = o.write.compression_level;
  st.m.sorted_by = o.write.sorted_by;
  st.m.indexes = o.write.indexes;
  if (auto r = check_write_options(o.write); !r) return std::move(r).error();
  if (sealed) {
    st.owner = o.owner_passphrase.empty() ? OWNER_KEY : OWNER_PASSPHRASE;
    if (st.owner == OWNER_KEY) {
      auto k = crypto::key_from_bytes(bytes_of(o.owner_key));
      if (!k) return std::move(k).error();
      st.owner_key = *k;
    } else {
      if (auto r = o.random(st.kdf_salt); !r) return std::move(r).error();
      st.cost = o.cost;
      auto k = crypto::key_from_passphrase(o.owner_passphrase, st.kdf_salt, o.cost);
      if (!k) return std::move(k).error();
      st.owner_key = *k;
    }
  }
  std::string header(MAGIC, sizeof MAGIC);
  put_u16(header, STORE_VERSION);
  header.append(reinterpret_cast<const char *>(st.file_id.data()), st.file_id.size());
  put_u64(header, 0);
  c.buf.base = 0;
  c.buf.bytes = header;
  if (auto r = write_rows(c, table); !r) return std::move(r).error();
  return c.finish();
}

result<store_result> append_store(append_target &target, file &rows, const store_options &o) {
  committer c(target, o);
  if (auto r = c.begin(); !r) return std::move(r).error();
  if (auto r = write_rows(c, rows); !r) return std::move(r).error();
  return c.finish();
}

namespace {

/// Marks the rows `where` selects as deleted (a new deletion vector for each segment it touches),
/// handing each one's cells to `collect` first when there is one. Returns the rows marked.
result<uint64_t> mark_rows(committer &c, const filter &where,
                           const std::function<result<void>(const std::vector<cell> &)> &collect) {
  uint64_t deleted = 0;
  for (auto &p : c.st.parts) {
    if (auto r = c.ensure_loaded(p); !r) return std::move(r).error();
    for (size_t i = 0; i < p.segment_list.size(); ++i) {
      auto &s = p.segment_list[i];
      file::impl one;
      one.source = &c.target;
      one.size = c.st.end;
      auto sg = segment_for(c.target, c.st, p, s);
      if (!sg) return std::move(sg).error();
      std::shared_ptr<std::vector<uint8_t>> marks;
      if (sg->deleted) marks = std::make_shared<std::vector<uint8_t>>(*sg->deleted);
      if (auto r = load_segments(one, {std::move(sg).value()}); !r) return std::move(r).error();
      auto compiled = compile_where(std::optional<filter>(where), one.sch);
      if (!compiled) return std::move(compiled).error();
      std::vector<uint64_t> hit;
      row_reader rr(one);
      auto r = rr.each(*compiled, [&](uint64_t row, const std::vector<cell> &cells) -> result<void> {
        hit.push_back(row);
        if (collect) return collect(cells);
        return {};
      });
      if (!r) return std::move(r).error();
      if (hit.empty()) continue;
      if (!marks) marks = std::make_shared<std::vector<uint8_t>>(static_cast<size_t>(s.rows), 0);
      for (uint64_t row : hit) (*marks)[static_cast<size_t>(row)] = 1;
      std::string bits(static_cast<size_t>((s.rows + 7) / 8), '\0');
      uint64_t n = 0;
      for (uint64_t k = 0; k < s.rows; ++k) {
        if (!(*marks)[static_cast<size_t>(k)]) continue;
        bits[static_cast<size_t>(k >> 3)] = static_cast<char>(bits[static_cast<size_t>(k >> 3)] | (1 << (k & 7)));
        ++n;
      }
      auto ref = c.buf.object(bits, KIND_DELETIONS, p.data_key ? &*p.data_key : nullptr, c.st.file_id, c.o.random);
      if (!ref) return std::move(ref).error();
      deleted += n - s.deleted;
      p.deleted += n - s.deleted;
      s.deletions = *ref;
      s.deleted = n;
      p.new_deletions.insert(i);
      p.changed = true;
    }
  }
  return deleted;
}

}  // namespace

result<store_result> delete_rows(append_target &target, const filter &where, const store_options &o) {
  committer c(target, o);
  if (auto r = c.begin(); !r) return std::move(r).error();
  auto n = mark_rows(c, where, nullptr);
  if (!n) return std::move(n).error();
  auto out = c.finish();
  if (!out) return out;
  out->rows = *n;
  return out;
}

result<store_result> update_rows(append_target &target, const filter &where, std::string_view column,
                                 std::string_view value_text, const store_options &o) {
  committer c(target, o);
  if (auto r = c.begin(); !r) return std::move(r).error();
  const auto &sch = c.st.m.sch;
  auto col = sch.find(column);
  if (!col) return quire::error(error_code::NO_SUCH_COLUMN, "no column named '" + std::string(column) + "'");
  // The new value, as a cell the writer reads as the column's type.
  cell set = cell::null();
  std::string set_text;
  if (value_text != "null") {
    auto v = parse_key_text(sch, column, value_text);
    if (!v) return std::move(v).error();
    switch (v->k) {
      case value::kind::integer: set = cell::of(v->i); break;
      case value::kind::real: set = cell::of(v->d); break;
      case value::kind::boolean: set = cell::of(v->b); break;
      default:
        set_text = v->s;
        set = cell::text(set_text);
        break;
    }
  }
  vector_sink sink;
  write_options wo;
  auto w = writer::create(sch, wo, sink);
  if (!w) return std::move(w).error();
  std::vector<cell> changed;
  auto n = mark_rows(c, where, [&](const std::vector<cell> &cells) -> result<void> {
    changed = cells;
    changed[*col] = set;
    return w.value()->append_row(changed);
  });
  if (!n) return std::move(n).error();
  if (auto f = w.value()->finish(); !f) return std::move(f).error();
  if (*n > 0) {
    auto table = file::open(borrow_bytes(sink.bytes));
    if (!table) return std::move(table).error();
    if (auto r = write_rows(c, *table); !r) return std::move(r).error();
  }
  auto out = c.finish();
  if (!out) return out;
  out->rows = *n;
  return out;
}

result<store_result> compact_store(append_target &source, append_target &fresh, const store_options &o) {
  if (fresh.size() != 0) return invalid("compaction writes into an empty file");
  auto old = load_state(source, {o.owner_key, o.owner_passphrase});
  if (!old) return std::move(old).error();
  if (!old->is_owner) return quire::error(error_code::KEY_REQUIRED, "compaction needs the owner's key");
  if (old->sealed && !o.random) return invalid("a sealed file needs a random source");
  // The same file id, data keys and wraps (so every partition's key still opens it), new salts:
  // no nonce repeats under a data key.
  committer c(fresh, o);
  c.st = *old;
  c.st.commit = 0;
  c.st.end = 0;
  std::string header(MAGIC, sizeof MAGIC);
  put_u16(header, STORE_VERSION);
  header.append(reinterpret_cast<const char *>(c.st.file_id.data()), c.st.file_id.size());
  put_u64(header, 0);
  c.buf.base = 0;
  c.buf.bytes = header;
  std::vector<partition> parts = std::move(c.st.parts);
  c.st.parts.clear();
  for (auto &p : parts) {
    std::vector<segment_info> segs;
    for (const auto &s : p.segment_list) {
      auto sg = segment_for(source, *old, p, s);
      if (!sg) return std::move(sg).error();
      segs.push_back(std::move(sg).value());
    }
    partition q;
    q.tag = p.tag;
    q.value = p.value;
    q.null = p.null;
    q.data_key = p.data_key;
    q.wrap_partition = p.wrap_partition;
    q.wrap_owner = p.wrap_owner;
    q.loaded = true;
    q.changed = true;
    c.st.parts.push_back(std::move(q));
    if (segs.empty()) continue;
    file::impl all;
    all.source = &source;
    all.size = old->end;
    if (auto r = load_segments(all, std::move(segs)); !r) return std::move(r).error();
    if (all.rows == all.deleted_rows) continue;
    row_reader rr(all);
    auto r = c.write_segment(c.st.parts.back(), [&](writer &w) -> result<void> {
      return rr.each(std::nullopt, [&](uint64_t, const std::vector<cell> &cells) { return w.append_row(cells); });
    });
    if (!r) return std::move(r).error();
  }
  return c.finish();
}

result<store_result> rotate_owner_key(append_target &target, const store_options &o, std::string_view new_key,
                                      std::string_view new_passphrase) {
  committer c(target, o);
  if (auto r = c.begin(); !r) return std::move(r).error();
  if (!c.st.sealed) return invalid("the file is not sealed: there is no key to rotate");
  if (new_key.empty() == new_passphrase.empty()) return invalid("give the new key or the new passphrase");
  if (!o.random) return invalid("key rotation needs a random source");
  for (auto &p : c.st.parts)  // under the old key
    if (auto r = c.ensure_key(p); !r) return std::move(r).error();
  if (!new_key.empty()) {
    auto k = crypto::key_from_bytes(bytes_of(new_key));
    if (!k) return std::move(k).error();
    c.st.owner = OWNER_KEY;
    c.st.owner_key = *k;
  } else {
    if (auto r = o.random(c.st.kdf_salt); !r) return std::move(r).error();
    c.st.cost = o.cost;
    auto k = crypto::key_from_passphrase(new_passphrase, c.st.kdf_salt, o.cost);
    if (!k) return std::move(k).error();
    c.st.owner = OWNER_PASSPHRASE;
    c.st.owner_key = *k;
  }
  for (auto &p : c.st.parts) {
    auto w = wrap_key(*p.data_key, *c.st.owner_key, c.st.file_id, p.tag, o.random);
    if (!w) return std::move(w).error();
    p.wrap_owner = std::move(w).value();
    p.rewrapped = true;
  }
  return c.finish();
}

result<store_result> rotate_partition_key(append_target &target, const store_options &o, std::string_view value,
                                          bool null, const crypto::key &new_key) {
  committer c(target, o);
  if (auto r = c.begin(); !r) return std::move(r).error();
  if (!c.st.sealed || c.st.m.partition_by.empty())
    return invalid("only a sealed, partitioned file has partition keys to rotate");
  if (!o.random) return invalid("key rotation needs a random source");
  if (!o.keys) return invalid("rotating a partition's key needs the keys folder (its present key)");
  auto old = o.keys->find(value, null);
  if (!old) return std::move(old).error();
  if (!*old) return invalid("the keys folder has no key for that partition");
  const tag_t tag = key_tag(**old, c.st.file_id);
  partition *p = nullptr;
  for (auto &q : c.st.parts)
    if (q.tag == tag) p = &q;
  if (!p)
    return quire::error(error_code::WRONG_KEY, "the folder's key for that partition opens no partition of this file");
  if (auto r = c.ensure_key(*p); !r) return std::move(r).error();
  p->tag = key_tag(new_key, c.st.file_id);
  auto w = wrap_key(*p->data_key, new_key, c.st.file_id, p->tag, o.random);
  if (!w) return std::move(w).error();
  p->wrap_partition = std::move(w).value();
  // The owner's wrap binds the tag too.
  auto wo = wrap_key(*p->data_key, *c.st.owner_key, c.st.file_id, p->tag, o.random);
  if (!wo) return std::move(wo).error();
  p->wrap_owner = std::move(wo).value();
  p->rewrapped = true;
  return c.finish();
}

namespace {

// --- re-sealing: a segment's pages opened under the old data key and sealed under a new one ------

/// What a segment's object holds: a page the re-seal only re-seals (data, dictionary, index leaf,
/// Bloom filter), or a directory whose page_refs it rewrites (their offsets and CRCs change).
enum class object_kind : uint8_t { opaque, page_directory, directory_block, column_directory, index_root, footer };

struct segment_object {
  page_ref ref;
  object_kind kind = object_kind::opaque;
  domain dom = domain::ints;
  std::vector<uint8_t> raw;  // a directory's bytes, decompressed (opaque: empty)
};

/// Walks a directory's bytes (docs/format.md 1.3–1.7) and gives each page_ref in it to
/// `each(ref, kind of what it points at, domain)`, which returns the ref to write in its place;
/// every other byte is copied as it is. Returns the rewritten bytes, or nullopt when the bytes do
/// not follow the layout.
/// `version`: the segment's (its tail's): from 4 its column directories are column summaries (1.4),
/// from 5 with each chunk's block bytes, and a page directory may be two-level (1.5).
/// `block_bytes(old page directory ref, old value)`, when given, gives the value of a version-5
/// summary's block_bytes to write (the blocks' stored bytes change when they are rewritten).
template <typename Each, typename BlockBytes = std::nullptr_t>
std::optional<std::string> walk_refs(std::span<const uint8_t> raw, object_kind kind, domain dom, uint16_t version,
                                     Each each, BlockBytes block_bytes = nullptr) {
  byte_reader r(raw);
  std::string out;
  size_t copied = 0;
  bool ok = true;
  page_ref last;  // the last ref read
  auto ref = [&](object_kind child, domain d) {
    const size_t at = r.position();
    out.append(reinterpret_cast<const char *>(raw.data()) + copied, at - copied);
    page_ref old = read_ref(r);
    last = old;
    if (r.failed()) {
      ok = false;
      return;
    }
    auto now = each(old, child, d);
    if (!now) {
      ok = false;
      return;
    }
    put_ref(out, *now);
    copied = r.position();
  };
  auto count = [&](uint64_t per) {
    const uint64_t n = r.varint();
    if (r.failed() || n > r.remaining() / per + 1) ok = false;
    return ok ? n : 0;
  };
  // A page directory's (or a block's) entries: page_ref, rows, encoding, zone map.
  auto page_entries = [&](uint64_t n, domain d) {
    for (uint64_t i = 0; i < n && ok; ++i) {
      ref(object_kind::opaque, d);
      r.varint();
      r.u8();
      read_stats(r, d);
    }
  };
  switch (kind) {
    case object_kind::footer: {
      r.varint();
      r.varint();
      const uint64_t ncols = count(8);
      std::vector<column_type> types;
      for (uint64_t c = 0; c < ncols && ok; ++c) {
        r.bytes();
        types.push_back(static_cast<column_type>(r.u8()));
        ref(object_kind::column_directory, domain_of(types.back()));
      }
      r.varint();
      const uint64_t nidx = count(8);
      for (uint64_t i = 0; i < nidx && ok; ++i) {
        r.varint();
        r.u8();
        ref(object_kind::index_root, domain::ints);
        r.varint();
      }
      r.bytes();
      break;
    }
    case object_kind::column_directory: {
      const uint64_t n = count(8);
      for (uint64_t i = 0; i < n && ok; ++i) {
        ref(object_kind::page_directory, dom);
        r.varint();
        if (version >= SUMMARY_VERSION) {
          r.varint();
          r.varint();
          const uint64_t kinds = count(2);
          for (uint64_t k = 0; k < kinds && ok; ++k) {
            r.u8();
            r.varint();
          }
          if (version >= BLOCKED_DIRECTORY_VERSION) {
            const size_t at = r.position();
            const uint64_t old = r.varint();
            if constexpr (!std::is_same_v<BlockBytes, std::nullptr_t>) {
              if (!r.failed()) {
                out.append(reinterpret_cast<const char *>(raw.data()) + copied, at - copied);
                put_varint(out, block_bytes(last, old));
                copied = r.position();
              }
            }
          }
        }
        read_stats(r, dom);
      }
      break;
    }
    case object_kind::page_directory: {
      // A two-level directory's page count is not bounded by its bytes (its entries are in blocks).
      const uint64_t n = r.varint();
      const uint8_t flags = r.u8();
      const bool two_level = version >= BLOCKED_DIRECTORY_VERSION && (flags & DIRECTORY_TWO_LEVEL);
      if (version >= BLOCKED_DIRECTORY_VERSION ? (flags & DIRECTORY_HAS_DICTIONARY) : flags != 0) {
        r.varint();
        ref(object_kind::opaque, dom);
      }
      if (two_level) {
        // The top level: per block its page_ref, pages, rows, stored and raw bytes, zone map.
        const uint64_t blocks = count(8);
        for (uint64_t i = 0; i < blocks && ok; ++i) {
          ref(object_kind::directory_block, dom);
          for (int k = 0; k < 4; ++k) r.varint();
          read_stats(r, dom);
        }
        break;
      }
      if (r.failed() || n > r.remaining() / 8 + 1) ok = false;
      page_entries(n, dom);
      break;
    }
    case object_kind::directory_block: page_entries(count(8), dom); break;
    case object_kind::index_root: {
      const uint64_t leaves = count(8);
      for (uint64_t i = 0; i < leaves && ok; ++i) {
        r.bytes();
        r.varint();
        ref(object_kind::opaque, dom);
      }
      const uint64_t blooms = count(8);
      for (uint64_t i = 0; i < blooms && ok; ++i) {
        ref(object_kind::opaque, dom);
        r.varint();
        r.u8();
      }
      break;
    }
    case object_kind::opaque: return std::nullopt;
  }
  if (!ok || r.failed()) return std::nullopt;
  out.append(reinterpret_cast<const char *>(raw.data()) + copied, raw.size() - copied);
  return out;
}

/// Re-seals one segment: every object its footer reaches, in the order they lie, opened under
/// `from` and sealed under `to` (a new key and salt). Pages keep their stored (compressed) bytes;
/// directories are rewritten only where their page_refs are (offsets and CRCs of the new bytes).
struct segment_resealer {
  const byte_source &src;
  uint64_t base = 0, length = 0;
  const sealing &from;
  const sealing &to;
  int level = DEFAULT_COMPRESSION_LEVEL;
  ZSTD_CCtx *cctx = nullptr;                   // the commit's, for the directories rewritten
  ZSTD_DCtx *dctx = nullptr;                   // one for every segment (a one-shot call makes its own)
  std::map<uint64_t, segment_object> objects;  // by offset within the segment
  uint64_t footer_offset = 0;
  uint16_t version = TABLE_VERSION;    // the segment's (its tail says)
  uint64_t pages = 0, page_bytes = 0;  // pages re-sealed as they were, and their stored bytes

  quire::error damaged(std::string what, uint64_t at) const { return bad_block(what, base + at); }

  /// The stored bytes of the object at `ref`, checked and opened under the old key (still compressed).
  result<std::string> open_stored(const page_ref &ref, uint8_t kind) const {
    const uint64_t limit = kind == 1 ? length - TAIL_SIZE : footer_offset;  // pages lie before the footer
    if (ref.offset < HEADER_SIZE || ref.offset > limit || ref.stored_length > limit - ref.offset)
      return damaged("a page of a segment points outside it", ref.offset);
    if (ref.stored_length < crypto::TAG_BYTES || ref.raw_length > DEFAULT_MAX_PAGE_BYTES)
      return damaged("a page of a segment has impossible sizes", ref.offset);
    std::string stored(ref.stored_length, '\0');
    if (auto r = src.read_at(base + ref.offset, {reinterpret_cast<uint8_t *>(stored.data()), stored.size()}); !r)
      return std::move(r).error();
    if (crc32c(bytes_of(stored)) != ref.crc) return damaged("a page of a segment: checksum mismatch", ref.offset);
    crypto::nonce n;
    std::string associated;
    segment_nonce(from, ref.offset, kind, n, associated);
    std::string plain(stored.size() - crypto::TAG_BYTES, '\0');
    if (!crypto::open({reinterpret_cast<uint8_t *>(plain.data()), plain.size()}, bytes_of(stored), bytes_of(associated),
                      n, from.key))
      return damaged("a page of a segment does not authenticate", ref.offset);
    return plain;
  }

  result<std::vector<uint8_t>> open_raw(const page_ref &ref) const {
    auto plain = open_stored(ref, 0);
    if (!plain) return std::move(plain).error();
    std::vector<uint8_t> out(ref.raw_length);
    if (ref.compression == COMPRESSION_NONE) {
      if (plain->size() != ref.raw_length) return damaged("a directory of a segment: sizes differ", ref.offset);
      std::memcpy(out.data(), plain->data(), plain->size());
    } else {
      size_t n = ZSTD_decompressDCtx(dctx, out.data(), out.size(), plain->data(), plain->size());
      if (ZSTD_isError(n) || n != ref.raw_length)
        return damaged("a directory of a segment does not decompress", ref.offset);
    }
    return out;
  }

  /// Finds every object the directory `raw` points at (and theirs).
  result<void> collect(std::span<const uint8_t> raw, object_kind kind, domain dom, uint64_t at) {
    std::vector<segment_object> children;
    auto walked = walk_refs(raw, kind, dom, version, [&](const page_ref &ref, object_kind child, domain d) {
      segment_object o;
      o.ref = ref;
      o.kind = child;
      o.dom = d;
      children.push_back(std::move(o));
      return std::optional<page_ref>(ref);
    });
    if (!walked) return damaged("a directory of a segment does not follow the layout", at);
    for (auto &o : children) {
      if (objects.count(o.ref.offset)) continue;
      if (objects.size() > length / crypto::TAG_BYTES)
        return damaged("a segment lists more pages than it has bytes", o.ref.offset);
      if (o.kind != object_kind::opaque) {
        auto r = open_raw(o.ref);
        if (!r) return std::move(r).error();
        o.raw = std::move(r).value();
        if (auto c = collect(o.raw, o.kind, o.dom, o.ref.offset); !c) return c;
      } else if (o.ref.offset < HEADER_SIZE || o.ref.offset > footer_offset ||
                 o.ref.stored_length > footer_offset - o.ref.offset) {
        return damaged("a page of a segment points outside it", o.ref.offset);
      }
      const uint64_t off = o.ref.offset;
      objects.emplace(off, std::move(o));
    }
    return {};
  }

  /// The segment re-sealed, as bytes to append (offsets within it count from its first byte).
  result<std::string> run() {
    if (length < HEADER_SIZE + TAIL_SIZE) return damaged("a segment too short to be one", 0);
    uint8_t tail[TAIL_SIZE];
    if (auto r = src.read_at(base + length - TAIL_SIZE, tail); !r) return std::move(r).error();
    footer_offset = load_u64(tail);
    const uint32_t footer_length = load_u32(tail + 8);
    version = static_cast<uint16_t>(tail[22] | tail[23] << 8);
    if (footer_offset < HEADER_SIZE || footer_offset > length - TAIL_SIZE ||
        footer_length != length - TAIL_SIZE - footer_offset || footer_length < crypto::TAG_BYTES)
      return damaged("a segment's tail does not fit it", length - TAIL_SIZE);
    page_ref fref;
    fref.offset = footer_offset;
    fref.stored_length = footer_length;
    fref.crc = load_u32(tail + 12);
    auto fplain = open_stored(fref, 1);
    if (!fplain) return std::move(fplain).error();
    const std::vector<uint8_t> footer(fplain->begin(), fplain->end());
    if (auto c = collect(footer, object_kind::footer, domain::ints, footer_offset); !c) return std::move(c).error();

    std::string out(HEADER_SIZE, '\0');
    if (auto r = src.read_at(base, {reinterpret_cast<uint8_t *>(out.data()), out.size()}); !r)
      return std::move(r).error();
    std::map<uint64_t, page_ref> moved;  // old offset -> the ref of the re-sealed bytes
    uint64_t end = HEADER_SIZE;          // where the last object ended (objects may not overlap)
    auto refs_of = [&](const page_ref &ref, object_kind, domain) -> std::optional<page_ref> {
      auto it = moved.find(ref.offset);
      if (it == moved.end()) return std::nullopt;  // a directory before what it lists
      return it->second;
    };
    // A version-5 summary's block_bytes: the stored bytes of the chunk's directory blocks as rewritten.
    auto block_bytes_of = [&](const page_ref &directory, uint64_t old) -> uint64_t {
      auto it = objects.find(directory.offset);
      if (it == objects.end() || it->second.kind != object_kind::page_directory) return old;
      uint64_t sum = 0;
      walk_refs(it->second.raw, object_kind::page_directory, it->second.dom, version,
                [&](const page_ref &r, object_kind child, domain) -> std::optional<page_ref> {
                  if (child == object_kind::directory_block) {
                    auto m = moved.find(r.offset);
                    sum += m == moved.end() ? r.stored_length : m->second.stored_length;
                  }
                  return r;
                });
      return sum;
    };
    for (auto &[off, o] : objects) {
      if (off < end) return damaged("two pages of a segment overlap", off);
      end = off + o.ref.stored_length;
      page_ref now = o.ref;
      now.offset = out.size();
      std::string stored;
      if (o.kind == object_kind::opaque) {
        auto plain = open_stored(o.ref, 0);
        if (!plain) return std::move(plain).error();
        stored = std::move(plain).value();
        ++pages;
        page_bytes += o.ref.stored_length;
      } else {
        auto raw = walk_refs(o.raw, o.kind, o.dom, version, refs_of, block_bytes_of);
        if (!raw) return damaged("a directory of a segment lies before a page it lists", off);
        // A two-level directory's top level stays raw, as the writer stores it (docs/format.md 1.5).
        bool top_level = false;
        if (o.kind == object_kind::page_directory && version >= BLOCKED_DIRECTORY_VERSION) {
          byte_reader d(o.raw);
          d.varint();
          top_level = !d.failed() && (d.u8() & DIRECTORY_TWO_LEVEL);
        }
        stored = seal_page(*raw, level, top_level ? nullptr : cctx, now);
        now.offset = out.size();
      }
      if (auto s = seal_stored(stored, to, now.offset, 0); !s) return std::move(s).error();
      now.stored_length = static_cast<uint32_t>(stored.size());
      now.crc = crc32c(bytes_of(stored));
      out += stored;
      moved[off] = now;
    }
    auto nf = walk_refs(footer, object_kind::footer, domain::ints, version, refs_of);
    if (!nf) return damaged("the segment's footer lists a page it does not hold", footer_offset);
    const uint64_t new_footer_offset = out.size();
    std::string sealed_footer = std::move(nf).value();
    if (auto s = seal_stored(sealed_footer, to, new_footer_offset, 1); !s) return std::move(s).error();
    out += sealed_footer;
    put_u64(out, new_footer_offset);
    put_u32(out, static_cast<uint32_t>(sealed_footer.size()));
    put_u32(out, crc32c(bytes_of(sealed_footer)));
    out.append(MAGIC, sizeof MAGIC);
    out.append(reinterpret_cast<const char *>(tail) + 22, 2);  // the segment's version (1, 3, 4, 5 or 6), as its header
    return out;
  }
};

}  // namespace

result<store_result> reseal_store(append_target &source, append_target &fresh, const store_options &o,
                                  const std::optional<std::string> &only, bool only_null) {
  if (fresh.size() != 0) return invalid("re-sealing writes into an empty file");
  auto old = load_state(source, {o.owner_key, o.owner_passphrase});
  if (!old) return std::move(old).error();
  if (!old->is_owner) return quire::error(error_code::KEY_REQUIRED, "re-sealing needs the owner's key");
  if (!old->sealed) return invalid("the file is not sealed: there are no pages to re-seal");
  if (!o.random) return invalid("re-sealing needs a random source");
  const bool partitioned = !old->m.partition_by.empty();
  if (only && !partitioned) return invalid("the file is not partitioned: re-seal it whole");
  if (partitioned && !o.keys)
    return invalid("re-sealing a partitioned file needs the keys folder (each partition's key)");
  if (only) {
    bool found = false;
    for (const auto &p : old->parts) found = found || (p.null == only_null && p.value == *only);
    if (!found) return invalid("the file has no partition '" + *only + "'");
  }
  // The same file id (so every partition's key still finds its entry), new data keys and salts
  // for the partitions re-sealed; the others' segments are copied byte for byte.
  committer c(fresh, o);
  c.st = *old;
  c.st.commit = 0;
  c.st.end = 0;
  c.st.leaves.clear();
  std::string header(MAGIC, sizeof MAGIC);
  put_u16(header, STORE_VERSION);
  header.append(reinterpret_cast<const char *>(c.st.file_id.data()), c.st.file_id.size());
  put_u64(header, 0);
  c.buf.base = 0;
  c.buf.bytes = header;
  std::vector<partition> parts = std::move(c.st.parts);
  c.st.parts.clear();
  uint64_t rows = 0, segments = 0;
  std::unique_ptr<ZSTD_DCtx, size_t (*)(ZSTD_DCtx *)> dctx{ZSTD_createDCtx(), ZSTD_freeDCtx};
  for (auto &p : parts) {
    const bool redo = !only || (p.null == only_null && p.value == *only);
    partition q;
    q.tag = p.tag;
    q.value = p.value;
    q.null = p.null;
    q.value_known = true;
    q.data_key = p.data_key;
    q.wrap_partition = p.wrap_partition;
    q.wrap_owner = p.wrap_owner;
    q.loaded = true;
    q.changed = true;
    if (redo) {
      crypto::key data;
      if (auto r = o.random(data.bytes()); !r) return std::move(r).error();
      q.data_key = data;
      if (partitioned) {
        auto pk = o.keys->find(p.value, p.null);
        if (!pk) return std::move(pk).error();
        if (!*pk)
          return invalid("the keys folder has no key for partition '" + p.value + "': re-sealing needs every one");
        if (key_tag(**pk, c.st.file_id) != p.tag)
          return quire::error(error_code::WRONG_KEY, "the folder's key for partition '" + p.value +
                                                         "' is not the one the file was sealed for");
        auto w = wrap_key(data, **pk, c.st.file_id, p.tag, o.random);
        if (!w) return std::move(w).error();
        q.wrap_partition = std::move(w).value();
      }
      auto w = wrap_key(data, *c.st.owner_key, c.st.file_id, p.tag, o.random);
      if (!w) return std::move(w).error();
      q.wrap_owner = std::move(w).value();
    }
    for (const auto &s : p.segment_list) {
      segment_entry t = s;
      t.base = c.buf.here();
      t.deletions = page_ref{};
      std::string bytes;
      if (redo) {
        if (auto r = o.random(t.salt); !r) return std::move(r).error();
        sealing from, to;
        from.key = *p.data_key;
        from.file_id = c.st.file_id;
        from.salt = s.salt;
        to.key = *q.data_key;
        to.file_id = c.st.file_id;
        to.salt = t.salt;
        segment_resealer rs{source,           s.base,     s.length, from, to, c.st.m.level,
                            c.buf.cctx.get(), dctx.get(), {},       0,    0,  0};
        auto made = rs.run();
        if (!made) return std::move(made).error();
        bytes = std::move(made).value();
        rows += s.rows - s.deleted;
        ++segments;
      } else {
        if (s.length > old->end || s.base > old->end - s.length)
          return corrupt("a segment lies outside the file", s.base);
        bytes.resize(static_cast<size_t>(s.length));
        if (auto r = source.read_at(s.base, {reinterpret_cast<uint8_t *>(bytes.data()), bytes.size()}); !r)
          return std::move(r).error();
      }
      t.length = bytes.size();
      c.buf.bytes += bytes;
      if (s.deletions.offset != 0) {
        // The deletion vector's place is in its associated data: sealed again where it now lies.
        auto raw = read_object(source, *old, s.deletions, KIND_DELETIONS, &*p.data_key, "a deletion vector");
        if (!raw) return std::move(raw).error();
        auto ref = c.buf.object({reinterpret_cast<const char *>(raw->data()), raw->size()}, KIND_DELETIONS,
                                &*q.data_key, c.st.file_id, o.random);
        if (!ref) return std::move(ref).error();
        t.deletions = *ref;
      }
      q.segment_list.push_back(t);
      q.rows += t.rows;
      q.deleted += t.deleted;
      q.bytes += t.length;
    }
    q.segments = q.segment_list.size();
    c.st.parts.push_back(std::move(q));
  }
  auto out = c.finish();
  if (!out) return out;
  out->rows = rows;
  out->segments_written = segments;
  return out;
}

result<store_report> storage_of_store(const byte_source &source, const open_options &options) {
  // A table (versions 1, 3, 4) has no commits: say so, rather than that no commit's tail checks.
  uint8_t head[8];
  uint16_t version = 0;
  if (source.size() >= 8 && source.read_at(0, head) && std::memcmp(head, MAGIC, sizeof MAGIC) == 0 &&
      (std::memcpy(&version, head + 6, 2), version != STORE_VERSION)) {
    return quire::error(error_code::INVALID_ARGUMENT,
                        "a table of version " + std::to_string(version) +
                            ", not a growing store (version 2): its storage by column is the file's storage() "
                            "(quire inspect without --storage)",
                        6);
  }
  auto st = load_state(source, {options.key, options.passphrase});
  if (!st) return std::move(st).error();
  store_report out;
  out.bytes = source.size();
  out.commits = st->commit;
  out.partitions = st->partition_count;
  out.map_bytes = st->map_bytes;
  out.meta_bytes = st->meta_ref.stored_length;
  out.footer_bytes = st->end - STORE_TAIL - st->meta_ref.offset - st->meta_ref.stored_length;
  uint64_t live = STORE_HEADER + out.map_bytes + out.meta_bytes + out.footer_bytes + STORE_TAIL;
  std::sort(st->parts.begin(), st->parts.end(), partition_less);
  for (const auto &p : st->parts) {
    store_report::partition_storage ps;
    ps.value = p.value;
    ps.null = p.null;
    ps.segments = p.segment_list.size();
    for (const auto &s : p.segment_list) {
      ps.rows += s.rows - s.deleted;
      ps.deleted_rows += s.deleted;
      ps.bytes += s.length + s.deletions.stored_length;
      out.deletion_bytes += s.deletions.stored_length;
    }
    out.max_segments_per_partition = std::max<uint64_t>(out.max_segments_per_partition, ps.segments);
    ps.bytes += p.directory_bytes;
    out.directory_bytes += p.directory_bytes;
    live += ps.bytes;
    out.segments += ps.segments;
    out.rows += ps.rows;
    out.deleted_rows += ps.deleted_rows;
    out.by_partition.push_back(std::move(ps));
  }
  // Bytes by column and index: the live segments read as the table they make (as a query would).
  if (out.segments > 0) {
    auto segs = segments_of(source, *st);
    if (!segs) return std::move(segs).error();
    file::impl f;
    f.source = &source;
    f.size = st->end;
    f.options = options;
    if (auto r = load_segments(f, std::move(segs).value()); !r) return std::move(r).error();
    for (const auto &sg : f.segments) out.segment_frame_bytes += HEADER_SIZE + (sg.length - sg.footer_offset);
    for (size_t c = 0; c < f.sch.columns.size(); ++c) {
      auto cd = f.column_directory(c);
      if (!cd) return std::move(cd).error();
      store_report::column_bytes cb;
      cb.name = f.sch.columns[c].name;
      for (const auto &entry : *cd.value()) {
        cb.data_bytes += entry.data_bytes;
        cb.directory_bytes += entry.page_directory.stored_length + entry.block_bytes;
      }
      for (const auto &sg : f.segments) cb.directory_bytes += sg.columns[c].directory.stored_length;
      out.columns.push_back(std::move(cb));
    }
    for (size_t i = 0; i < f.indexes.size(); ++i) {
      store_report::index_bytes ib;
      ib.column = f.sch.columns[f.indexes[i].column].name;
      ib.kind = f.indexes[i].kind;
      for (size_t seg = 0; seg < f.segments.size(); ++seg) {
        auto root = f.load_index_root(i, seg);
        if (!root) return std::move(root).error();
        ib.bytes += f.segments[seg].index_roots[i].stored_length;
        for (const auto &l : root.value()->leaves) ib.bytes += l.ref.stored_length;
        for (const auto &b : root.value()->blooms) ib.bytes += b.ref.stored_length;
      }
      out.indexes.push_back(std::move(ib));
    }
  }
  out.live_bytes = std::min(live, out.bytes);
  out.garbage_bytes = out.bytes - out.live_bytes;
  out.segments_per_partition = st->parts.empty() ? 0 : static_cast<double>(out.segments) / st->parts.size();
  out.compaction_pays = out.segments_per_partition > 4 || out.garbage_bytes * 4 > out.bytes ||
                        out.deleted_rows * 10 > out.rows + out.deleted_rows;
  return out;
}

std::string to_json(const store_report &r) {
  std::string o =
      "{\"bytes\":" + std::to_string(r.bytes) + ",\"commits\":" + std::to_string(r.commits) +
      ",\"liveBytes\":" + std::to_string(r.live_bytes) + ",\"garbageBytes\":" + std::to_string(r.garbage_bytes) +
      ",\"partitions\":" + std::to_string(r.partitions) + ",\"segments\":" + std::to_string(r.segments) +
      ",\"rows\":" + std::to_string(r.rows) + ",\"deletedRows\":" + std::to_string(r.deleted_rows) +
      ",\"mapBytes\":" + std::to_string(r.map_bytes) + ",\"directoryBytes\":" + std::to_string(r.directory_bytes) +
      ",\"footerBytes\":" + std::to_string(r.footer_bytes) + ",\"metaBytes\":" + std::to_string(r.meta_bytes) +
      ",\"deletionBytes\":" + std::to_string(r.deletion_bytes) +
      ",\"segmentFrameBytes\":" + std::to_string(r.segment_frame_bytes) + ",\"columns\":[";
  for (size_t i = 0; i < r.columns.size(); ++i) {
    if (i) o.push_back(',');
    o += "{\"name\":";
    json::append_quoted(o, r.columns[i].name);
    o += ",\"dataBytes\":" + std::to_string(r.columns[i].data_bytes) +
         ",\"directoryBytes\":" + std::to_string(r.columns[i].directory_bytes) + "}";
  }
  o += "],\"indexes\":[";
  for (size_t i = 0; i < r.indexes.size(); ++i) {
    if (i) o.push_back(',');
    o += "{\"column\":";
    json::append_quoted(o, r.indexes[i].column);
    o += ",\"kind\":\"";
    o += index_kind_name(r.indexes[i].kind);
    o += "\",\"bytes\":" + std::to_string(r.indexes[i].bytes) + "}";
  }
  o += "],\"segmentsPerPartition\":";
  append_double(o, r.segments_per_partition);
  o += ",\"maxSegmentsPerPartition\":" + std::to_string(r.max_segments_per_partition);
  o += ",\"compactionPays\":";
  o += r.compaction_pays ? "true" : "false";
  o += ",\"byPartition\":[";
  for (size_t i = 0; i < r.by_partition.size(); ++i) {
    const auto &p = r.by_partition[i];
    if (i) o.push_back(',');
    o += "{\"value\":";
    if (p.null) o += "null";
    else json::append_quoted(o, p.value);
    o += ",\"rows\":" + std::to_string(p.rows) + ",\"deletedRows\":" + std::to_string(p.deleted_rows) +
         ",\"segments\":" + std::to_string(p.segments) + ",\"bytes\":" + std::to_string(p.bytes) + "}";
  }
  o += "]}";
  return o;
}

}  // namespace quire::format
