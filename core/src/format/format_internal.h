// Shared inside core/src/format only: byte helpers, checksums, the page codec, the stored-page
// reference, value conversions and the bounded sorter. docs/format.md is the reference for every
// byte these helpers write.
#pragma once

#include <bit>
#include <cstdint>
#include <cstring>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include <zstd.h>

#include "../common/calendar.h"
#include "quire/format.h"
#include "quire/number_text.h"

namespace quire::format::detail {

static_assert(std::endian::native == std::endian::little,
              "quire's format code assumes a little-endian host (x86-64, wasm)");

// --- constants of the layout (docs/format.md) ------------------------------------------------------

inline constexpr char MAGIC[6] = {'Q', 'U', 'I', 'R', 'E', '\0'};
inline constexpr size_t HEADER_SIZE = 8;  // magic + u16 version
inline constexpr size_t TAIL_SIZE = 24;   // u64 footer offset, u32 footer length, u32 crc, magic, u16 version
/// Padding kept after every decoded buffer so bit unpacking may load 8 bytes at a time.
inline constexpr size_t DECODE_PADDING = 16;
/// Strings longer than this keep a truncated minimum and no maximum in statistics.
inline constexpr size_t STAT_TEXT_BYTES = 64;
/// In a version-4 page directory a page's text bounds are at most this long: the minimum a prefix,
/// the maximum exact when it fits, else a prefix rounded up (stats::max_bound). 15 bytes fit
/// libstdc++'s inline string, so decoding a directory's text bounds allocates nothing natively.
inline constexpr size_t PAGE_STAT_TEXT_BYTES = 15;
/// A chunk's dictionary page of at most this many bytes is stored raw (docs/format.md §2).
inline constexpr size_t RAW_DICTIONARY_BYTES = 32 * 1024;

enum compression : uint8_t { COMPRESSION_NONE = 0, COMPRESSION_ZSTD = 1 };
enum validity_kind : uint8_t { VALID_ALL = 0, VALID_NONE = 1, VALID_BITMAP = 2, VALID_RUNS = 3 };
/// FOR_GCD and DELTA_GCD are FOR and DELTA whose offsets are all multiples of a common factor,
/// stored divided by it (timestamps in whole seconds or milliseconds, prices in steps of 5...).
enum int_encoding : uint8_t {
  INT_PLAIN = 0,
  INT_FOR = 1,
  INT_DELTA = 2,
  INT_RLE = 3,
  INT_CONSTANT = 4,
  INT_FOR_GCD = 5,
  INT_DELTA_GCD = 6
};
/// F64_DECIMAL: doubles that are all m / 10^k exactly (k <= 6), stored as the integers m.
/// DECIMAL_SCALED: decimal texts that all have k fraction digits (`12.50`, `-3.00`), stored as
/// the integers m (1250, -300) and printed back digit for digit. DECIMAL_SCALED_MIXED (version 6):
/// plain decimal texts of differing fraction digits (`12.5`, `3.07`, `100`), stored as the integers
/// M at the page's most fraction digits K (1250, 307, 10000) and each text's own digits k.
enum value_encoding : uint8_t {
  VALUES_INTS = 0,
  VALUES_F64 = 1,
  VALUES_TEXT_PLAIN = 2,
  VALUES_TEXT_DICT = 3,
  VALUES_F64_DECIMAL = 4,
  VALUES_DECIMAL_SCALED = 5,
  VALUES_DECIMAL_SCALED_MIXED = 6
};
/// Most fraction digits of DECIMAL_SCALED (m must fit in 18 digits).
inline constexpr unsigned MAX_SCALED_DIGITS = 18;
/// The scaled integer of a decimal text with exactly `places` fraction digits, or nullopt when the
/// text is not of the form -?(0|[1-9][0-9]*)(.[0-9]{places})? with at most 18 digits, or is a
/// negative zero. `places` is taken from the first value (pass UINT32_MAX) and then required.
std::optional<int64_t> scale_decimal_text(std::string_view text, unsigned &places);
/// Appends the text of m with `places` fraction digits (the inverse of scale_decimal_text).
void append_scaled_decimal(std::string &out, int64_t m, unsigned places);
/// 10^k for k <= MAX_SCALED_DIGITS: a scaled integer is below 10^18 in magnitude.
inline constexpr int64_t SCALED_POWERS_OF_TEN[MAX_SCALED_DIGITS + 1] = {1,
                                                                        10,
                                                                        100,
                                                                        1000,
                                                                        10000,
                                                                        100000,
                                                                        1000000,
                                                                        10000000,
                                                                        100000000,
                                                                        1000000000,
                                                                        10000000000,
                                                                        100000000000,
                                                                        1000000000000,
                                                                        10000000000000,
                                                                        100000000000000,
                                                                        1000000000000000,
                                                                        10000000000000000,
                                                                        100000000000000000,
                                                                        1000000000000000000};
/// Checks one value of a DECIMAL_SCALED_MIXED page (m at the page's `most` places, its own
/// `places`) and gives the text's integer m / 10^(most - places): false when places > most, |m| has
/// more than 18 digits or m is not a multiple of 10^(most - places) (the text would not print back).
inline bool unscale_mixed(int64_t m, int64_t places, unsigned most, int64_t &own) {
  if (places < 0 || places > static_cast<int64_t>(most)) return false;
  if (m <= -SCALED_POWERS_OF_TEN[MAX_SCALED_DIGITS] || m >= SCALED_POWERS_OF_TEN[MAX_SCALED_DIGITS]) return false;
  const int64_t f = SCALED_POWERS_OF_TEN[most - static_cast<unsigned>(places)];
  own = m / f;
  return own * f == m;
}
/// Most decimal places of F64_DECIMAL.
inline constexpr unsigned MAX_DECIMAL_PLACES = 6;
/// 10^k for k <= MAX_DECIMAL_PLACES: F64_DECIMAL's encoder scales by them and its decoder divides.
inline constexpr double POWERS_OF_TEN[MAX_DECIMAL_PLACES + 1] = {1, 10, 100, 1000, 10000, 100000, 1000000};
/// Finds the fewest decimal places k <= MAX_DECIMAL_PLACES with which every value is exactly m / 10^k
/// for an integer |m| < 2^53, and writes those m to `scaled`. False when there is none (then the
/// values are stored as plain doubles). -0, infinities and NaN never qualify.
bool scale_decimals(std::span<const double> values, unsigned &places, std::vector<int64_t> &scaled);
/// Names of encodings as storage reports print them: "ints/DELTA", "text/DICT+FOR"...
std::string encoding_name(uint8_t encoding);

// --- little-endian and varint writing --------------------------------------------------------------

inline void put_u8(std::string &o, uint8_t v) { o.push_back(static_cast<char>(v)); }
inline void put_u16(std::string &o, uint16_t v) { o.append(reinterpret_cast<const char *>(&v), 2); }
inline void put_u32(std::string &o, uint32_t v) { o.append(reinterpret_cast<const char *>(&v), 4); }
inline void put_u64(std::string &o, uint64_t v) { o.append(reinterpret_cast<const char *>(&v), 8); }
/// Writes v's varint at p (room for 10 bytes); returns the bytes written.
inline size_t encode_varint(char *p, uint64_t v) {
  size_t n = 0;
  while (v >= 0x80) {
    p[n++] = static_cast<char>((v & 0x7F) | 0x80);
    v >>= 7;
  }
  p[n++] = static_cast<char>(v);
  return n;
}
// One append, not a push_back a byte: Emscripten's libc++ keeps std::string's members out of line,
// so in wasm each push_back is a call (8.7% of the npm write's samples with the indexes).
inline void put_varint(std::string &o, uint64_t v) {
  char bytes[10];
  o.append(bytes, encode_varint(bytes, v));
}
inline uint64_t zigzag(int64_t v) { return (static_cast<uint64_t>(v) << 1) ^ static_cast<uint64_t>(v >> 63); }
inline int64_t unzigzag(uint64_t v) { return static_cast<int64_t>(v >> 1) ^ -static_cast<int64_t>(v & 1); }
inline void put_svarint(std::string &o, int64_t v) { put_varint(o, zigzag(v)); }
inline void put_bytes(std::string &o, std::string_view s) {
  put_varint(o, s.size());
  o.append(s);
}
inline uint64_t load_u64(const uint8_t *p) {
  uint64_t v;
  std::memcpy(&v, p, 8);
  return v;
}
inline uint32_t load_u32(const uint8_t *p) {
  uint32_t v;
  std::memcpy(&v, p, 4);
  return v;
}

/// Reads what put_* wrote, with bounds: a read past the end sets `failed` and returns zeros, so a
/// parser checks once at the end (or before it allocates).
class byte_reader {
 public:
  byte_reader() = default;
  explicit byte_reader(std::span<const uint8_t> b) : p_(b.data()), n_(b.size()) {}
  bool failed() const noexcept { return failed_; }
  size_t remaining() const noexcept { return n_ - pos_; }
  size_t position() const noexcept { return pos_; }
  const uint8_t *here() const noexcept { return p_ + pos_; }
  void fail() noexcept {
    failed_ = true;
    pos_ = n_;
  }
  uint8_t u8() {
    if (pos_ >= n_) {
      fail();
      return 0;
    }
    return p_[pos_++];
  }
  /// A value of T's size, little-endian as the file and the host (see the static_assert above).
  template <typename T>
  T fixed() {
    T v{};
    copy(&v, sizeof v);
    return v;
  }
  uint16_t u16() { return fixed<uint16_t>(); }
  uint32_t u32() { return fixed<uint32_t>(); }
  uint64_t u64() { return fixed<uint64_t>(); }
  double f64() { return fixed<double>(); }
  uint64_t varint() {
    uint64_t v = 0;
    for (int shift = 0; shift < 64; shift += 7) {
      if (pos_ >= n_) {
        fail();
        return 0;
      }
      uint8_t b = p_[pos_++];
      v |= static_cast<uint64_t>(b & 0x7F) << shift;
      if (!(b & 0x80)) return v;
    }
    fail();
    return 0;
  }
  int64_t svarint() { return unzigzag(varint()); }
  std::span<const uint8_t> take(uint64_t count) {
    if (count > n_ - pos_) {
      fail();
      return {};
    }
    auto s = std::span<const uint8_t>(p_ + pos_, static_cast<size_t>(count));
    pos_ += static_cast<size_t>(count);
    return s;
  }
  std::string_view bytes() {
    auto s = take(varint());
    return {reinterpret_cast<const char *>(s.data()), s.size()};
  }

 private:
  void copy(void *out, size_t k) {
    if (k > n_ - pos_) {
      fail();
      return;
    }
    std::memcpy(out, p_ + pos_, k);
    pos_ += k;
  }
  const uint8_t *p_ = nullptr;
  size_t n_ = 0;
  size_t pos_ = 0;
  bool failed_ = false;
};

// --- checksums and hashes (format_crc.cpp) ---------------------------------------------------------

/// CRC-32C (Castagnoli, reflected polynomial 0x82F63B78), as in iSCSI and ext4.
uint32_t crc32c(std::span<const uint8_t> bytes) noexcept;
inline uint32_t crc32c(std::string_view s) noexcept {
  return crc32c({reinterpret_cast<const uint8_t *>(s.data()), s.size()});
}
/// 64-bit hash of bytes: FNV-1a, then the SplitMix64 finaliser to spread the bits.
uint64_t hash64(std::string_view bytes) noexcept;

// --- stored pages (format_page_codec.cpp) ----------------------------------------------------------

/// Where a stored page is and how to read it back. Every object in a file after the header —
/// data, dictionary, directory, statistics, index pages and Bloom filters — is a stored page.
struct page_ref {
  uint64_t offset = 0;
  uint32_t stored_length = 0;
  uint32_t raw_length = 0;
  uint32_t crc = 0;  // CRC-32C of the stored bytes
  uint8_t compression = COMPRESSION_NONE;
};
void put_ref(std::string &o, const page_ref &r);
page_ref read_ref(byte_reader &r);

/// Compresses `raw` with zstd at `level` (reusing `cctx`) when that saves at least 1/16 of it;
/// else stores it raw. Returns the bytes to store and fills every field of `ref` but offset.
std::string seal_page(std::string_view raw, int level, ZSTD_CCtx *cctx, page_ref &ref);
/// Whether zstd may pay on a page: false when the page's bytes, coded one by one by their
/// frequencies (order-0 entropy, integer arithmetic so every target decides alike), would not
/// come under 15/16 of the raw size and its first 4 KiB repeat few 4-byte runs — bit-packed
/// integers, already dense, where zstd only spends time for a result seal_page would drop. The
/// writer asks this before it compresses a page.
bool worth_compressing(std::string_view raw) noexcept;

// --- values (format_value_text.cpp) ----------------------------------------------------------------

/// Days since 1970-01-01 of a proleptic Gregorian date (common/calendar.h).
using quire::detail::days_from_civil;
/// Parses `YYYY-MM-DD`; nullopt otherwise (also for impossible dates like 2023-02-30).
std::optional<int64_t> parse_date(std::string_view s) noexcept;
/// Parses `YYYY-MM-DDTHH:MM:SS[.f{1,6}](Z|±HH:MM)` (or a bare date, at midnight UTC when
/// `allow_date`) into microseconds since the epoch, UTC.
std::optional<int64_t> parse_timestamp(std::string_view s, bool allow_date = false) noexcept;
void append_date(std::string &out, int64_t days);
/// `YYYY-MM-DDTHH:MM:SS[.mmm|.uuuuuu]Z`: the fraction only when it is not zero, 3 digits when
/// they suffice.
void append_timestamp(std::string &out, int64_t micros);
/// Doubles print through core's one number printer (quire/number_text.h).
using quire::append_double;
/// What strtod reads (correctly rounded): plain decimal text of up to 2^53 in its digits by exact
/// double division, the rest by strtod on a bounded copy.
double parse_double(std::string_view s) noexcept;

/// How a piece of number text classifies, for inference.
enum class number_class : uint8_t { not_a_number, integer, real, decimal };
/// Classifies text by JSON's number grammar: integer (fits int64), real (survives a double:
/// at most 15 significant digits and no trailing zero after the point), decimal (otherwise).
number_class classify_number(std::string_view text) noexcept;

// --- inference (format_input.cpp; shared by the NDJSON, CSV and column inputs) ----------------

/// The type both a and b fit, or nullopt. In CSV (`text_input`) every other mix becomes string.
std::optional<column_type> join_types(column_type a, column_type b, bool text_input);
/// The type a JSON string infers as: date, timestamp or string.
column_type text_value_type(std::string_view s);
/// The type a JSON number's text infers as: integer, float or decimal.
column_type number_text_type(std::string_view text);

/// How a column's values compare: as 64-bit integers, doubles, or bytes.
enum class domain : uint8_t { ints, reals, text };
domain domain_of(column_type t) noexcept;
/// True for column types stored as text (string, decimal, json).
inline bool stored_as_text(column_type t) noexcept {
  return t == column_type::string || t == column_type::decimal || t == column_type::json;
}

// --- facts of the byte format (format_layout.cpp) ------------------------------------------------
// What the writer stores and the reader probes must agree bit for bit: each of these is computed
// in this one place, so the two sides cannot drift apart.

/// Appends v as 8 big-endian bytes: index keys carry row numbers and hashes this way, so that the
/// keys' byte order is the numbers' order.
inline void put_be64(std::string &o, uint64_t v) {
  for (int s = 56; s >= 0; s -= 8) o.push_back(static_cast<char>((v >> s) & 0xFF));
}

/// Appends an order-preserving key: ints flip the sign bit (big-endian); doubles flip the sign bit
/// or all bits; text escapes 0x00 as 00 FF and ends with 00 00, so a key followed by more bytes
/// still sorts by the key first.
void append_int_key(std::string &out, int64_t v);
void append_real_key(std::string &out, double v);
void append_text_key(std::string &out, std::string_view v);

/// The bit that probe `k` (0 <= k < the filter's hash count) of hash `h` sets in a Bloom filter of
/// `bits` bits: double hashing, h + k·h2, with h2 the hash rotated by 31 and made odd.
inline uint64_t bloom_bit(uint64_t h, uint32_t k, uint64_t bits) {
  const uint64_t h2 = (h >> 33) | (h << 31) | 1;
  return (h + k * h2) % bits;
}

/// The table version whose indexes may use compact leaves (docs/format.md 1.7): version 1's layout
/// otherwise. A writer writes it only when the file holds such an index, so older readers refuse
/// exactly the files they could not read (UNSUPPORTED_VERSION).
inline constexpr uint16_t COMPACT_INDEX_VERSION = 3;
/// The table version of a file with no compact index (and of every file before version 3).
inline constexpr uint16_t TABLE_VERSION = 1;
/// The table version every file is written in now (docs/format.md 1.4, 1.5): version 3's indexes,
/// column summaries that carry each chunk's page count, encoded bytes and encodings (the storage
/// report without a page directory), and page directories with 15-byte text bounds.
inline constexpr uint16_t SUMMARY_VERSION = 4;
/// The table version whose page directories may be two-level (docs/format.md 1.5): a directory of
/// more than DIRECTORY_BLOCK_PAGES pages is a top level over blocks of page entries, so a lookup
/// reads one block, not every entry. The writer writes it only when its first chunk has such a
/// directory; a file without one keeps version 4's bytes.
inline constexpr uint16_t BLOCKED_DIRECTORY_VERSION = 5;
/// Version 5 with decimal pages of mixed fraction digits stored scaled (VALUES_DECIMAL_SCALED_MIXED,
/// docs/format.md 1.6). The writer writes it only when its first chunk has such a page; a file
/// without one keeps version 4's or 5's bytes, its later chunks' mixed pages text.
inline constexpr uint16_t MIXED_SCALE_VERSION = 6;
/// Page entries in one block of a two-level page directory (the last may hold fewer), and the page
/// count above which a directory is two-level: 128 entries of at most about 64 bytes (a text zone
/// map of 15-byte bounds) are about one 8 KiB page.
inline constexpr uint32_t DIRECTORY_BLOCK_PAGES = 128;
/// The page directory's flags byte (1.5): a dictionary page; (version 5) a two-level directory.
inline constexpr uint8_t DIRECTORY_HAS_DICTIONARY = 1;
inline constexpr uint8_t DIRECTORY_TWO_LEVEL = 2;
/// Whether an index of `kind` on a column of `type` has compact leaves in a version-3 table: keys of
/// the ints domain (sorted and hash alike) as integers, text indexes as posting lists.
inline bool compact_index(column_type type, index_kind kind) noexcept {
  return kind == index_kind::text || domain_of(type) == domain::ints;
}
/// An int64 of the ints domain back from its order key (append_int_key's 8 bytes).
inline int64_t int_of_key(std::string_view key) {
  uint64_t u = 0;
  for (size_t i = 0; i < 8; ++i) u = (u << 8) | static_cast<uint8_t>(key[i]);
  return static_cast<int64_t>(u ^ 0x8000000000000000ull);
}

/// The distinct trigrams (3-byte substrings) of `s`, each packed big-endian into 24 bits, in
/// ascending order (that of their bytes): the keys of a text index. None below 3 bytes.
void distinct_trigrams(std::string_view s, std::vector<uint32_t> &grams);
/// Appends a packed trigram's 3 bytes, as a text index keys it.
inline void append_trigram_key(std::string &out, uint32_t g) {
  out.push_back(static_cast<char>(g >> 16));
  out.push_back(static_cast<char>((g >> 8) & 0xFF));
  out.push_back(static_cast<char>(g & 0xFF));
}

// --- statistics (format_layout.cpp) ----------------------------------------------------------------

/// min/max/nulls of a chunk or a page. For text, min may be a truncated prefix (still a lower
/// bound) and max is absent when it would need truncating.
struct stats {
  uint64_t rows = 0;
  uint64_t nulls = 0;
  bool has_min = false, has_max = false;
  bool max_bound = false;  // text: tmax is a rounded-up prefix, an upper bound that is no value (flag 4)
  int64_t imin = 0, imax = 0;
  double rmin = 0, rmax = 0;
  std::string tmin, tmax;
};
void put_stats(std::string &o, domain d, const stats &s);
stats read_stats(byte_reader &r, domain d);
/// Shortens text bounds to `bytes` (version 4's page directories): tmin to its prefix, tmax kept
/// when it fits, else its prefix with the last byte below 0xFF incremented and what follows dropped
/// (max_bound set), or absent when there is none.
void shorten_text_bounds(stats &s, size_t bytes);

// --- the page codec (format_page_codec.cpp) --------------------------------------------------------

/// Values of one column for some rows, decoded. Nulls are expanded: every vector has one entry
/// per row (0 / empty at nulls) so row r of a page is index r.
struct column_values {
  uint32_t rows = 0;
  std::vector<uint8_t> valid;  // empty: every row valid
  std::vector<int64_t> ints;   // ints domain
  std::vector<double> reals;   // float64 (decimal keeps text)
  std::vector<uint32_t> ids;   // dictionary pages: ids into the chunk's dictionary
  // Plain text pages; a scaled decimal page's texts, made from its integers when first asked for
  // (page_view::text, ensure_text), so a sum that adds the integers never prints them.
  mutable std::string text;
  mutable std::vector<uint32_t> offsets;  // plain text: rows+1 offsets into text
  mutable bool text_pending = false;
  bool dictionary = false;
  /// A decimal page stored scaled (VALUES_DECIMAL_SCALED, VALUES_DECIMAL_SCALED_MIXED): `ints` also
  /// holds each value x 10^places (0 at nulls), so an exact sum adds integers instead of parsing the
  /// text back. A mixed page's `places` is its values' most fraction digits, and `value_places`
  /// each value's own (0 at nulls; empty on a page of one scale).
  bool scaled = false;
  uint8_t places = 0;
  std::vector<uint8_t> value_places;
  bool is_valid(uint32_t r) const { return valid.empty() || valid[r]; }
  /// Appends row r's text of a scaled decimal page (r valid), as ensure_text makes it.
  void append_scaled_text(std::string &out, uint32_t r) const;
  /// Makes `text` and `offsets` of a scaled decimal page once (nothing otherwise).
  void ensure_text() const {
    if (text_pending) make_text();
  }

 private:
  void make_text() const;
};

/// A chunk's dictionary of distinct strings.
struct dictionary {
  std::string text;
  std::vector<uint32_t> offsets;  // size()+1
  size_t size() const { return offsets.empty() ? 0 : offsets.size() - 1; }
  std::string_view at(uint32_t i) const {
    return std::string_view(text).substr(offsets[i], offsets[i + 1] - offsets[i]);
  }
};

/// Appends the best of PLAIN, CONSTANT, FOR, DELTA and RLE for these integers (tag byte first).
void encode_ints(std::string &out, std::span<const int64_t> v);
/// Decodes `count` integers. False on malformed input.
bool decode_ints(byte_reader &r, size_t count, std::vector<int64_t> &out);

/// Encodes the validity of `rows` rows (valid[i] != 0) as VALID_* (tag byte first).
void encode_validity(std::string &out, std::span<const uint8_t> valid, uint64_t nulls);
bool decode_validity(byte_reader &r, uint32_t rows, std::vector<uint8_t> &valid, uint64_t &nulls);

void encode_dictionary(std::string &out, const dictionary &d);
bool decode_dictionary(std::span<const uint8_t> raw, uint64_t max_entries, dictionary &d);

/// Decodes one data page of a column of `type` holding `rows` rows.
bool decode_page(std::span<const uint8_t> raw, column_type type, uint32_t rows, size_t dictionary_size,
                 column_values &out);

/// Decodes only row `row` of one data page (format_page_codec.cpp): the validity up to it, then the
/// one value, without decoding the page's other values where the encoding allows reaching it
/// directly (PLAIN, CONSTANT and the bit-packed FOR: one unpack; DELTA, RLE and plain text's
/// lengths: a walk up to it, summing, with nothing allocated). `out` becomes a one-row
/// column_values (reused: its buffers keep their capacity); a dictionary page's value is left as
/// its id (out.dictionary, out.ids[0]) for dictionary_entry. False on malformed input: a row past
/// the page, a value past its encoding, an id past the dictionary.
bool decode_page_value(std::span<const uint8_t> raw, column_type type, uint32_t rows, size_t dictionary_size,
                       uint32_t row, column_values &out);

/// Entry `k` of an encoded dictionary of `entries` entries, without decoding the others: the
/// lengths are an integer sequence (encode_ints), so the entry's offset is the sum of the lengths
/// before it (one walk over them; no offsets are stored to index directly). False on malformed
/// input or when k is past the dictionary.
bool dictionary_entry(std::span<const uint8_t> raw, uint64_t entries, uint64_t k, std::string_view &text);

// --- bounded sorting (format_sort.cpp) -------------------------------------------------------------

/// Sorts (key, payload) entries by key bytes, holding at most `memory_bytes` unsorted in memory:
/// beyond that the sorted run is stream-compressed into the spill store (memory when none), and
/// finish() merges at most 16 runs at once (about 1 MiB each), longer chains in rounds.
class run_sorter {
 public:
  explicit run_sorter(size_t memory_bytes, spill_store *spill = nullptr);
  ~run_sorter();
  run_sorter(const run_sorter &) = delete;
  run_sorter &operator=(const run_sorter &) = delete;
  void add(std::string_view key, std::string_view payload);
  /// Ends adding; next() then yields the entries in key order (equal keys: in the order added).
  result<void> finish();
  /// The next entry; false at the end. Views are valid until the next call.
  result<bool> next(std::string_view &key, std::string_view &payload);
  uint64_t size() const noexcept { return count_; }
  size_t spilled_runs() const noexcept;

 private:
  struct state;
  std::unique_ptr<state> s_;
  uint64_t count_ = 0;
};

/// The entries of a text index — (trigram, row), rows added in increasing order — kept compact
/// while they fit `memory_bytes`: per trigram its rows as varint deltas (1-2 bytes an entry, not a
/// sorter's 44), so no sort and no spill, and yielded in (trigram, row) order, the order a
/// run_sorter gives the same entries' keys. Past the budget the caller drains them into a
/// run_sorter (in that order) and adds the rest there: the index's bytes are the same either way.
class posting_lists {
 public:
  explicit posting_lists(size_t memory_bytes);
  /// Adds row `row` to trigram `gram` (24 bits); rows for one trigram must increase. False once
  /// the lists pass the budget (the entry is kept): drain them then.
  bool add(uint32_t gram, uint64_t row);
  /// The same for several rows of one trigram at once (one table lookup), in increasing order
  /// and above the trigram's rows so far.
  bool add_rows(uint32_t gram, std::span<const uint64_t> rows);
  /// Calls fn(gram, row) for every entry in (trigram, row) order, then forgets them all.
  template <typename Fn>
  result<void> drain(Fn fn) {
    auto order = sorted_grams();
    for (uint32_t list : order) {
      auto &l = lists_[list];
      uint64_t row = 0;
      size_t at = 0;
      while (at < l.bytes.size()) {
        uint64_t delta = 0;
        for (int shift = 0;; shift += 7) {
          const auto b = static_cast<uint8_t>(l.bytes[at++]);
          delta |= static_cast<uint64_t>(b & 0x7F) << shift;
          if (!(b & 0x80)) break;
        }
        row += delta;
        auto r = fn(l.gram, row);
        if (!r) return r;
      }
      std::string().swap(l.bytes);  // freed as it goes: draining into a sorter holds both at once
    }
    clear();
    return {};
  }
  /// Calls fn(gram, deltas, count, last_row) for every list in trigram order — its rows as the
  /// varint deltas put_varint wrote (the first from 0) — then forgets them all.
  template <typename Fn>
  result<void> drain_lists(Fn fn) {
    auto order = sorted_grams();
    for (uint32_t list : order) {
      auto &l = lists_[list];
      auto r = fn(l.gram, std::string_view(l.bytes), l.count, l.last);
      if (!r) return r;
      std::string().swap(l.bytes);
    }
    clear();
    return {};
  }
  uint64_t size() const noexcept { return entries_; }

 private:
  struct list {
    uint32_t gram;
    uint64_t last = 0;
    std::string bytes;
    uint64_t count = 0;
  };
  std::vector<uint32_t> sorted_grams() const;
  list &list_of(uint32_t gram);
  void clear();
  size_t budget_;
  size_t used_ = 0;
  uint64_t entries_ = 0;
  std::vector<list> lists_;
  std::vector<uint32_t> slot_;  // open addressing: 1 + list index, 0 empty; size a power of two
};

}  // namespace quire::format::detail
