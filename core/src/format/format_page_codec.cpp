// The page codec of the .quire format (docs/format.md, "Pages"): stored-page references and
// sealing, bit packing, and the integer, validity, dictionary and data-page encodings.
#include <algorithm>
#include <array>
#include <cstring>
#include <numeric>
#include <utility>

#include "format_internal.h"

// zstd.h's experimental part (ZSTD_c_useRowMatchFinder, ZSTD_getCParams): zstd is linked statically.
#define ZSTD_STATIC_LINKING_ONLY
#include <zstd.h>

namespace quire::format::detail {

std::string encoding_name(uint8_t encoding) {
  static constexpr const char *INTS[] = {"PLAIN", "FOR", "DELTA", "RLE", "CONSTANT", "FOR_GCD", "DELTA_GCD"};
  const unsigned v = encoding >> 4, i = encoding & 15;
  std::string ints = i < std::size(INTS) ? INTS[i] : "?";
  switch (v) {
    case VALUES_INTS: return ints;
    case VALUES_F64: return "PLAIN_F64";
    case VALUES_F64_DECIMAL: return "DECIMAL_F64+" + ints;
    case VALUES_DECIMAL_SCALED: return "SCALED+" + ints;
    case VALUES_DECIMAL_SCALED_MIXED: return "SCALED_MIXED+" + ints;
    case VALUES_TEXT_PLAIN: return "PLAIN_TEXT";
    case VALUES_TEXT_DICT: return "DICT+" + ints;
  }
  return "?";
}

// --- stored pages -------------------------------------------------------------------------------

void put_ref(std::string &o, const page_ref &r) {
  put_varint(o, r.offset);
  put_varint(o, r.stored_length);
  put_varint(o, r.raw_length);
  put_u32(o, r.crc);
  put_u8(o, r.compression);
}

page_ref read_ref(byte_reader &r) {
  page_ref p;
  p.offset = r.varint();
  uint64_t stored = r.varint(), raw = r.varint();
  if (stored > UINT32_MAX || raw > UINT32_MAX) r.fail();
  p.stored_length = static_cast<uint32_t>(stored);
  p.raw_length = static_cast<uint32_t>(raw);
  p.crc = r.u32();
  p.compression = r.u8();
  return p;
}

namespace {

/// Compresses `raw` at `level` as zstd 1.5.4 does with SSE2 (every x86-64 build), on every target.
/// Left to choose, zstd uses its row-hash match finder (greedy, lazy, lazy2: levels 5-12) from a
/// window of 2^15 bytes where it has SSE2 or NEON and from 2^18 elsewhere, wasm among them, so a
/// page of 32 KiB or more written at those levels came out as other bytes in wasm. The choice is
/// made here by the SSE2 rule, explicitly, so natively written files keep their bytes and wasm
/// writes the same (tests/format_golden_test.cpp, "[levels]").
size_t compress_page(ZSTD_CCtx *cctx, std::string &out, std::string_view raw, int level) {
  const ZSTD_compressionParameters params = ZSTD_getCParams(level, raw.size(), 0);
  ZSTD_CCtx_reset(cctx, ZSTD_reset_session_and_parameters);
  ZSTD_CCtx_setParameter(cctx, ZSTD_c_compressionLevel, level);
  ZSTD_CCtx_setParameter(cctx, ZSTD_c_useRowMatchFinder, params.windowLog > 14 ? ZSTD_ps_enable : ZSTD_ps_disable);
  return ZSTD_compress2(cctx, out.data(), out.size(), raw.data(), raw.size());
}

}  // namespace

std::string seal_page(std::string_view raw, int level, ZSTD_CCtx *cctx, page_ref &ref) {
  ref.raw_length = static_cast<uint32_t>(raw.size());
  std::string stored;
  if (raw.size() >= 64 && cctx) {
    stored.resize(ZSTD_compressBound(raw.size()));
    size_t n = compress_page(cctx, stored, raw, level);
    if (!ZSTD_isError(n) && n <= raw.size() - raw.size() / 16) {
      stored.resize(n);
      ref.compression = COMPRESSION_ZSTD;
      ref.stored_length = static_cast<uint32_t>(n);
      ref.crc = crc32c(stored);
      return stored;
    }
  }
  stored.assign(raw);
  ref.compression = COMPRESSION_NONE;
  ref.stored_length = static_cast<uint32_t>(raw.size());
  ref.crc = crc32c(stored);
  return stored;
}

namespace {

/// log2(x) for x >= 1 in units of 1/65536, by integer arithmetic only: the same on every target.
uint64_t log2_fixed(uint64_t x) {
  const unsigned e = static_cast<unsigned>(std::bit_width(x)) - 1;
  uint64_t m = e >= 31 ? x >> (e - 31) : x << (31 - e);  // 1.31 fixed point, in [1, 2)
  uint64_t frac = 0;
  for (int i = 0; i < 16; ++i) {
    m = (m * m) >> 31;
    frac <<= 1;
    if (m >= (uint64_t{1} << 32)) {
      m >>= 1;
      frac |= 1;
    }
  }
  return uint64_t{e} << 16 | frac;
}

/// Whether more than 1/16 of the first 4 KiB's positions start a 4-byte run seen earlier in it: the
/// LZ matches an order-0 estimate cannot see (a period of high-entropy values, such as bit-packed
/// keys that repeat every few hundred rows). Random bytes repeat a 4-byte run almost never.
bool has_repeats(const uint8_t *p, size_t n) noexcept {
  const size_t m = std::min<size_t>(n, 4096);
  uint16_t last[4096] = {};  // 1 + the latest position whose 4 bytes hash here
  size_t repeats = 0;
  for (size_t i = 0; i + 4 <= m; ++i) {
    const uint32_t v = uint32_t{p[i]} | uint32_t{p[i + 1]} << 8 | uint32_t{p[i + 2]} << 16 | uint32_t{p[i + 3]} << 24;
    const uint32_t h = (v * 2654435761u) >> 20;
    if (last[h] && std::memcmp(p + last[h] - 1, p + i, 4) == 0) ++repeats;
    last[h] = static_cast<uint16_t>(i + 1);
  }
  return repeats * 16 > m;
}

}  // namespace

bool worth_compressing(std::string_view raw) noexcept {
  if (raw.size() < 64) return false;  // seal_page stores these as they are
  // Four tables, folded after: consecutive equal bytes do not wait on each other's count.
  uint32_t part[4][256] = {};
  const auto *p = reinterpret_cast<const uint8_t *>(raw.data());
  size_t i = 0;
  for (; i + 4 <= raw.size(); i += 4) {
    ++part[0][p[i]];
    ++part[1][p[i + 1]];
    ++part[2][p[i + 2]];
    ++part[3][p[i + 3]];
  }
  for (; i < raw.size(); ++i) ++part[0][p[i]];
  uint32_t counts[256];
  for (size_t v = 0; v < 256; ++v) counts[v] = part[0][v] + part[1][v] + part[2][v] + part[3][v];
  // Sum of c * log2(n / c) over the byte values, in bits * 65536.
  const uint64_t n = raw.size(), log_n = log2_fixed(n);
  uint64_t bits = 0;
  for (uint32_t c : counts)
    if (c) bits += c * (log_n - log2_fixed(c));
  return bits / 65536 < (n - n / 16) * 8 || has_repeats(p, raw.size());
}

// --- integers -----------------------------------------------------------------------------------

namespace {

unsigned width_of(uint64_t range) { return range == 0 ? 0 : static_cast<unsigned>(std::bit_width(range)); }
size_t varint_size(uint64_t v) {
  size_t n = 1;
  while (v >= 0x80) {
    v >>= 7;
    ++n;
  }
  return n;
}

template <typename Get>
void pack_bits(std::string &out, size_t n, unsigned w, Get get) {
  if (w == 0) return;
  out.reserve(out.size() + (n * w + 7) / 8 + 8);
  uint64_t acc = 0;
  unsigned filled = 0;
  for (size_t i = 0; i < n; ++i) {
    uint64_t v = get(i);
    acc |= v << filled;
    if (filled + w >= 64) {
      put_u64(out, acc);
      unsigned used = 64 - filled;
      acc = used < 64 ? (v >> used) : 0;
      filled = filled + w - 64;
    } else {
      filled += w;
    }
  }
  for (unsigned k = 0; k < (filled + 7) / 8; ++k) out.push_back(static_cast<char>((acc >> (8 * k)) & 0xFF));
}

// The caller guarantees DECODE_PADDING readable bytes after `p`'s packed data.
inline uint64_t unpack_one(const uint8_t *p, size_t i, unsigned w, uint64_t mask) {
  uint64_t bit = static_cast<uint64_t>(i) * w;
  const uint8_t *q = p + (bit >> 3);
  unsigned shift = static_cast<unsigned>(bit & 7);
  uint64_t v = load_u64(q) >> shift;
  if (shift + w > 64) v |= static_cast<uint64_t>(q[8]) << (64 - shift);
  return v & mask;
}

// Eight values of w bits take w bytes, so each group of eight starts on a byte boundary, and once
// w is a constant so is every value's byte and shift within its group: a group is eight loads,
// shifts and masks, with none of unpack_one's multiply and branch per value. Decoding every value
// of a page is much of a scan's time (format.sum, format.filter-count: docs/performance.md).
template <unsigned W, unsigned J>
inline uint64_t unpack_in_group(const uint8_t *group) {
  constexpr unsigned bit = J * W, byte = bit >> 3, shift = bit & 7;
  constexpr uint64_t mask = W == 64 ? ~0ull : (1ull << W) - 1;
  uint64_t v = load_u64(group + byte) >> shift;
  if constexpr (shift + W > 64) v |= static_cast<uint64_t>(group[byte + 8]) << (64 - shift);
  return v & mask;
}

template <unsigned W>
void unpack_width(const uint8_t *p, size_t count, uint64_t *out) {
  const size_t groups = count / 8;
  for (size_t g = 0; g < groups; ++g, p += W, out += 8) {
    [&]<unsigned... J>(std::integer_sequence<unsigned, J...>) { ((out[J] = unpack_in_group<W, J>(p)), ...); }
    (std::make_integer_sequence<unsigned, 8>{});
  }
  constexpr uint64_t mask = W == 64 ? ~0ull : (1ull << W) - 1;
  for (size_t i = 0; i < count % 8; ++i) out[i] = unpack_one(p, i, W, mask);
}

using unpack_fn = void (*)(const uint8_t *, size_t, uint64_t *);

template <unsigned... W>
constexpr std::array<unpack_fn, sizeof...(W)> unpack_table(std::integer_sequence<unsigned, W...>) {
  return {&unpack_width<W + 1>...};
}

// Widths up to 32 (what integers of a page usually need: ids' deltas, ages, cents, timestamps'
// steps) get their own loop; wider ones, rare, share one, which keeps the 32 loops' code (about
// 11 KB) out of quire.wasm.
constexpr unsigned UNPACK_WIDTHS = 32;
constexpr auto UNPACK = unpack_table(std::make_integer_sequence<unsigned, UNPACK_WIDTHS>{});

// Unpacks `count` values of `w` (1..64) bits each from `p` (DECODE_PADDING readable bytes after
// the packed data) into `out`.
inline void unpack_bits(const uint8_t *p, size_t count, unsigned w, uint64_t *out) {
  if (w <= UNPACK_WIDTHS) return UNPACK[w - 1](p, count, out);
  const uint64_t mask = w == 64 ? ~0ull : (1ull << w) - 1;
  for (size_t i = 0; i < count; ++i) out[i] = unpack_one(p, i, w, mask);
}

}  // namespace

void encode_ints(std::string &out, std::span<const int64_t> v) {
  const size_t n = v.size();
  if (n == 0) {
    put_u8(out, INT_PLAIN);
    return;
  }
  int64_t mn = v[0], mx = v[0];
  for (int64_t x : v) {
    mn = std::min(mn, x);
    mx = std::max(mx, x);
  }
  if (mn == mx) {
    put_u8(out, INT_CONSTANT);
    put_svarint(out, mn);
    return;
  }
  unsigned for_w = width_of(static_cast<uint64_t>(mx) - static_cast<uint64_t>(mn));
  size_t for_size = 9 + (n * for_w + 7) / 8;
  uint64_t for_gcd = 0;
  // A remainder spares the gcd wherever the divisor so far divides the value (timestamps in whole
  // seconds: all of them).
  for (int64_t x : v) {
    const uint64_t d = static_cast<uint64_t>(x) - static_cast<uint64_t>(mn);
    if (for_gcd != 0 && d % for_gcd == 0) continue;
    for_gcd = std::gcd(for_gcd, d);
    if (for_gcd == 1) break;
  }
  unsigned for_gcd_w = for_gcd > 1 ? width_of((static_cast<uint64_t>(mx) - static_cast<uint64_t>(mn)) / for_gcd) : 64;
  size_t for_gcd_size = for_gcd > 1 ? 9 + varint_size(for_gcd) + (n * for_gcd_w + 7) / 8 : SIZE_MAX;
  size_t delta_size = SIZE_MAX, delta_gcd_size = SIZE_MAX;
  int64_t dmin = 0;
  unsigned delta_w = 0, delta_gcd_w = 0;
  uint64_t delta_gcd = 0;
  if (n >= 2) {
    int64_t dmax;
    dmin = dmax = static_cast<int64_t>(static_cast<uint64_t>(v[1]) - static_cast<uint64_t>(v[0]));
    for (size_t i = 2; i < n; ++i) {
      int64_t d = static_cast<int64_t>(static_cast<uint64_t>(v[i]) - static_cast<uint64_t>(v[i - 1]));
      dmin = std::min(dmin, d);
      dmax = std::max(dmax, d);
    }
    delta_w = width_of(static_cast<uint64_t>(dmax) - static_cast<uint64_t>(dmin));
    delta_size = 17 + ((n - 1) * delta_w + 7) / 8;
    for (size_t i = 1; i < n && delta_gcd != 1; ++i) {
      const uint64_t d = static_cast<uint64_t>(v[i]) - static_cast<uint64_t>(v[i - 1]) - static_cast<uint64_t>(dmin);
      if (delta_gcd != 0 && d % delta_gcd == 0) continue;
      delta_gcd = std::gcd(delta_gcd, d);
    }
    if (delta_gcd > 1) {
      delta_gcd_w = width_of((static_cast<uint64_t>(dmax) - static_cast<uint64_t>(dmin)) / delta_gcd);
      delta_gcd_size = 17 + varint_size(delta_gcd) + ((n - 1) * delta_gcd_w + 7) / 8;
    }
  }
  size_t plain_size = 8 * n;
  // RLE is counted only while it can still win: once its partial size passes every other size it
  // cannot be chosen (ties go to the others but PLAIN, which it passes too).
  const size_t others = std::min({for_size, delta_size, plain_size, for_gcd_size, delta_gcd_size});
  size_t runs = 0, rle_size = 0;
  for (size_t i = 0; i < n;) {
    size_t j = i + 1;
    while (j < n && v[j] == v[i]) ++j;
    ++runs;
    rle_size += varint_size(zigzag(v[i])) + varint_size(j - i);
    i = j;
    if (rle_size > others) break;
  }
  if (rle_size > others) rle_size = SIZE_MAX;
  else rle_size += varint_size(runs);
  size_t best = std::min({for_size, delta_size, rle_size, plain_size, for_gcd_size, delta_gcd_size});
  if (best == for_gcd_size) {
    put_u8(out, INT_FOR_GCD);
    put_u64(out, static_cast<uint64_t>(mn));
    put_varint(out, for_gcd);
    put_u8(out, static_cast<uint8_t>(for_gcd_w));
    pack_bits(out, n, for_gcd_w,
              [&](size_t i) { return (static_cast<uint64_t>(v[i]) - static_cast<uint64_t>(mn)) / for_gcd; });
  } else if (best == delta_gcd_size) {
    put_u8(out, INT_DELTA_GCD);
    put_u64(out, static_cast<uint64_t>(v[0]));
    put_u64(out, static_cast<uint64_t>(dmin));
    put_varint(out, delta_gcd);
    put_u8(out, static_cast<uint8_t>(delta_gcd_w));
    pack_bits(out, n - 1, delta_gcd_w, [&](size_t i) {
      return (static_cast<uint64_t>(v[i + 1]) - static_cast<uint64_t>(v[i]) - static_cast<uint64_t>(dmin)) / delta_gcd;
    });
  } else if (best == for_size) {
    put_u8(out, INT_FOR);
    put_u64(out, static_cast<uint64_t>(mn));
    put_u8(out, static_cast<uint8_t>(for_w));
    pack_bits(out, n, for_w, [&](size_t i) { return static_cast<uint64_t>(v[i]) - static_cast<uint64_t>(mn); });
  } else if (best == delta_size) {
    put_u8(out, INT_DELTA);
    put_u64(out, static_cast<uint64_t>(v[0]));
    put_u64(out, static_cast<uint64_t>(dmin));
    put_u8(out, static_cast<uint8_t>(delta_w));
    pack_bits(out, n - 1, delta_w, [&](size_t i) {
      return static_cast<uint64_t>(v[i + 1]) - static_cast<uint64_t>(v[i]) - static_cast<uint64_t>(dmin);
    });
  } else if (best == rle_size) {
    put_u8(out, INT_RLE);
    put_varint(out, runs);
    for (size_t i = 0; i < n;) {
      size_t j = i + 1;
      while (j < n && v[j] == v[i]) ++j;
      put_svarint(out, v[i]);
      put_varint(out, j - i);
      i = j;
    }
  } else {
    put_u8(out, INT_PLAIN);
    for (int64_t x : v) put_u64(out, static_cast<uint64_t>(x));
  }
}

bool decode_ints(byte_reader &r, size_t count, std::vector<int64_t> &out) {
  out.resize(count);
  uint8_t tag = r.u8();
  switch (tag) {
    case INT_PLAIN: {
      auto b = r.take(uint64_t{8} * count);
      if (r.failed()) return false;
      if (count) std::memcpy(out.data(), b.data(), 8 * count);
      return true;
    }
    case INT_CONSTANT: {
      int64_t c = r.svarint();
      std::fill(out.begin(), out.end(), c);
      return !r.failed();
    }
    case INT_FOR:
    case INT_FOR_GCD: {
      uint64_t base = r.u64();
      const uint64_t factor = tag == INT_FOR_GCD ? r.varint() : 1;
      unsigned w = r.u8();
      if (w > 64) return false;
      auto b = r.take((uint64_t{count} * w + 7) / 8);
      if (r.failed()) return false;
      if (w == 0) {
        std::fill(out.begin(), out.end(), static_cast<int64_t>(base));
        return true;
      }
      // Unpacked in place, then offset: the second loop has no dependency between values.
      auto *u = reinterpret_cast<uint64_t *>(out.data());
      unpack_bits(b.data(), count, w, u);
      for (size_t i = 0; i < count; ++i) u[i] = base + u[i] * factor;
      return true;
    }
    case INT_DELTA:
    case INT_DELTA_GCD: {
      uint64_t first = r.u64();
      uint64_t dmin = r.u64();
      const uint64_t factor = tag == INT_DELTA_GCD ? r.varint() : 1;
      unsigned w = r.u8();
      if (w > 64 || count == 0) return false;
      auto b = r.take((uint64_t{count - 1} * w + 7) / 8);
      if (r.failed()) return false;
      auto *u = reinterpret_cast<uint64_t *>(out.data());
      if (w) unpack_bits(b.data(), count - 1, w, u + 1);
      else std::fill(u + 1, u + count, uint64_t{0});
      uint64_t cur = first;
      u[0] = cur;
      for (size_t i = 1; i < count; ++i) {
        cur += dmin + u[i] * factor;
        u[i] = cur;
      }
      return true;
    }
    case INT_RLE: {
      uint64_t runs = r.varint();
      if (runs > count) return false;
      size_t at = 0;
      for (uint64_t k = 0; k < runs; ++k) {
        int64_t v = r.svarint();
        uint64_t len = r.varint();
        if (r.failed() || len > count - at) return false;
        std::fill(out.begin() + static_cast<std::ptrdiff_t>(at), out.begin() + static_cast<std::ptrdiff_t>(at + len),
                  v);
        at += static_cast<size_t>(len);
      }
      return at == count;
    }
    default: return false;
  }
}

// --- validity -----------------------------------------------------------------------------------

void encode_validity(std::string &out, std::span<const uint8_t> valid, uint64_t nulls) {
  const size_t rows = valid.size();
  if (nulls == 0) {
    put_u8(out, VALID_ALL);
    return;
  }
  if (nulls == rows) {
    put_u8(out, VALID_NONE);
    return;
  }
  std::vector<uint64_t> runs;
  uint8_t state = 1;
  uint64_t len = 0;
  for (uint8_t v : valid) {
    uint8_t b = v ? 1 : 0;
    if (b == state) {
      ++len;
      continue;
    }
    runs.push_back(len);
    state = b;
    len = 1;
  }
  runs.push_back(len);
  size_t runs_size = varint_size(runs.size());
  for (uint64_t x : runs) runs_size += varint_size(x);
  if (runs_size < (rows + 7) / 8) {
    put_u8(out, VALID_RUNS);
    put_varint(out, runs.size());
    for (uint64_t x : runs) put_varint(out, x);
    return;
  }
  put_u8(out, VALID_BITMAP);
  pack_bits(out, rows, 1, [&](size_t i) { return static_cast<uint64_t>(valid[i] ? 1 : 0); });
}

bool decode_validity(byte_reader &r, uint32_t rows, std::vector<uint8_t> &valid, uint64_t &nulls) {
  uint8_t kind = r.u8();
  valid.clear();
  switch (kind) {
    case VALID_ALL: nulls = 0; return !r.failed();
    case VALID_NONE:
      nulls = rows;
      valid.assign(rows, 0);
      return !r.failed();
    case VALID_BITMAP: {
      auto b = r.take((uint64_t{rows} + 7) / 8);
      if (r.failed()) return false;
      valid.resize(rows);
      nulls = 0;
      for (uint32_t i = 0; i < rows; ++i) {
        valid[i] = (b[i >> 3] >> (i & 7)) & 1;
        nulls += !valid[i];
      }
      return true;
    }
    case VALID_RUNS: {
      uint64_t count = r.varint();
      if (count > uint64_t{rows} + 1) return false;
      valid.resize(rows);
      size_t at = 0;
      uint8_t state = 1;
      nulls = 0;
      for (uint64_t k = 0; k < count; ++k) {
        uint64_t len = r.varint();
        if (r.failed() || len > rows - at) return false;
        std::fill(valid.begin() + static_cast<std::ptrdiff_t>(at),
                  valid.begin() + static_cast<std::ptrdiff_t>(at + len), state);
        if (!state) nulls += len;
        at += static_cast<size_t>(len);
        state ^= 1;
      }
      return at == rows;
    }
    default: return false;
  }
}

// --- dictionaries and pages -----------------------------------------------------------------------

void encode_dictionary(std::string &out, const dictionary &d) {
  put_varint(out, d.size());
  std::vector<int64_t> lengths(d.size());
  for (size_t i = 0; i < d.size(); ++i) lengths[i] = d.offsets[i + 1] - d.offsets[i];
  encode_ints(out, lengths);
  out.append(d.text);
}

bool decode_dictionary(std::span<const uint8_t> raw, uint64_t max_entries, dictionary &d) {
  byte_reader r(raw);
  uint64_t count = r.varint();
  if (r.failed() || count > max_entries || count > raw.size()) return false;
  std::vector<int64_t> lengths;
  if (!decode_ints(r, static_cast<size_t>(count), lengths)) return false;
  d.offsets.assign(1, 0);
  d.offsets.reserve(count + 1);
  uint64_t total = 0;
  for (int64_t len : lengths) {
    if (len < 0 || static_cast<uint64_t>(len) > r.remaining() - total) return false;
    total += static_cast<uint64_t>(len);
    d.offsets.push_back(static_cast<uint32_t>(total));
  }
  auto b = r.take(total);
  if (r.failed()) return false;
  d.text.assign(reinterpret_cast<const char *>(b.data()), b.size());
  return true;
}

bool decode_page(std::span<const uint8_t> raw, column_type type, uint32_t rows, size_t dictionary_size,
                 column_values &out) {
  byte_reader r(raw);
  out = column_values();
  out.rows = rows;
  uint64_t nulls = 0;
  if (!decode_validity(r, rows, out.valid, nulls)) return false;
  const size_t present = rows - static_cast<size_t>(nulls);
  uint8_t enc = r.u8();
  if (r.failed()) return false;
  auto expand = [&](auto &dense, auto &full) {
    // Spread the dense non-null values over all rows (nulls get a zero value).
    if (out.valid.empty()) {
      full = std::move(dense);
      return;
    }
    full.assign(rows, {});
    size_t k = 0;
    for (uint32_t i = 0; i < rows; ++i) {
      if (out.valid[i]) full[i] = dense[k++];
    }
  };
  switch (enc) {
    case VALUES_INTS: {
      if (domain_of(type) != domain::ints) return false;
      std::vector<int64_t> dense;
      if (!decode_ints(r, present, dense)) return false;
      expand(dense, out.ints);
      return true;
    }
    case VALUES_F64: {
      if (type != column_type::float64) return false;
      auto b = r.take(uint64_t{8} * present);
      if (r.failed()) return false;
      std::vector<double> dense(present);
      if (present) std::memcpy(dense.data(), b.data(), 8 * present);
      expand(dense, out.reals);
      return true;
    }
    case VALUES_F64_DECIMAL: {
      if (type != column_type::float64) return false;
      const unsigned places = r.u8();
      if (r.failed() || places > MAX_DECIMAL_PLACES) return false;
      std::vector<int64_t> scaled;
      if (!decode_ints(r, present, scaled)) return false;
      const double divisor = POWERS_OF_TEN[places];
      std::vector<double> dense(present);
      // Below 2^51 in magnitude (cents below 22 trillion: nearly every page), m + 1.5 * 2^52 added
      // as integers is the bit pattern of the double 1.5 * 2^52 + m, exactly, and subtracting
      // 1.5 * 2^52 leaves m. With no conversion instruction a value (x86 before AVX-512 and wasm
      // have no packed int64 -> double) the loop vectorizes, divisions included. Same doubles.
      bool below_2_51 = true;
      for (size_t i = 0; i < present; ++i)
        below_2_51 &= static_cast<uint64_t>(scaled[i]) + (uint64_t{1} << 51) < (uint64_t{1} << 52);
      if (below_2_51) {
        constexpr uint64_t MAGIC_BITS = 0x4338000000000000ULL;  // 1.5 * 2^52
        constexpr double MAGIC = 6755399441055744.0;
        for (size_t i = 0; i < present; ++i) {
          const uint64_t bits = static_cast<uint64_t>(scaled[i]) + MAGIC_BITS;
          double d;
          std::memcpy(&d, &bits, sizeof d);
          dense[i] = (d - MAGIC) / divisor;
        }
      } else {
        for (size_t i = 0; i < present; ++i) dense[i] = static_cast<double>(scaled[i]) / divisor;
      }
      expand(dense, out.reals);
      return true;
    }
    case VALUES_DECIMAL_SCALED: {
      if (type != column_type::decimal) return false;
      const unsigned places = r.u8();
      if (r.failed() || places > MAX_SCALED_DIGITS) return false;
      std::vector<int64_t> scaled;
      if (!decode_ints(r, present, scaled)) return false;
      expand(scaled, out.ints);
      out.scaled = true;
      out.places = static_cast<uint8_t>(places);
      out.text_pending = true;
      return true;
    }
    case VALUES_DECIMAL_SCALED_MIXED: {
      if (type != column_type::decimal) return false;
      const unsigned most = r.u8();
      if (r.failed() || most > MAX_SCALED_DIGITS) return false;
      std::vector<int64_t> scaled, own_places;
      if (!decode_ints(r, present, scaled) || !decode_ints(r, present, own_places)) return false;
      // Each value's places at most the page's, and the page's those of one value at least (so a sum
      // over the whole page has the scale the texts give it); each m a multiple of its power of ten.
      std::vector<uint8_t> dense_places(present);
      int64_t widest = 0;
      for (size_t k = 0; k < present; ++k) {
        const int64_t m = scaled[k], own = own_places[k];
        if (own < 0 || own > static_cast<int64_t>(most) || m <= -SCALED_POWERS_OF_TEN[MAX_SCALED_DIGITS] ||
            m >= SCALED_POWERS_OF_TEN[MAX_SCALED_DIGITS])
          return false;
        // Most values have the page's places: no division for them.
        if (own != static_cast<int64_t>(most) && m % SCALED_POWERS_OF_TEN[most - static_cast<unsigned>(own)] != 0)
          return false;
        widest = std::max(widest, own);
        dense_places[k] = static_cast<uint8_t>(own);
      }
      if (present && widest != static_cast<int64_t>(most)) return false;
      expand(scaled, out.ints);
      expand(dense_places, out.value_places);
      out.scaled = true;
      out.places = static_cast<uint8_t>(most);
      out.text_pending = true;
      return true;
    }
    case VALUES_TEXT_DICT: {
      if (!stored_as_text(type)) return false;
      std::vector<int64_t> dense;
      if (!decode_ints(r, present, dense)) return false;
      for (int64_t id : dense) {
        if (id < 0 || static_cast<uint64_t>(id) >= dictionary_size) return false;
      }
      std::vector<uint32_t> ids(dense.begin(), dense.end());
      expand(ids, out.ids);
      out.dictionary = true;
      return true;
    }
    case VALUES_TEXT_PLAIN: {
      if (!stored_as_text(type)) return false;
      std::vector<int64_t> lengths;
      if (!decode_ints(r, present, lengths)) return false;
      uint64_t total = 0;
      for (int64_t len : lengths) {
        if (len < 0 || static_cast<uint64_t>(len) > r.remaining()) return false;
        total += static_cast<uint64_t>(len);
        if (total > r.remaining()) return false;
      }
      auto b = r.take(total);
      if (r.failed()) return false;
      out.text.assign(reinterpret_cast<const char *>(b.data()), b.size());
      out.offsets.resize(size_t{rows} + 1);
      out.offsets[0] = 0;
      size_t k = 0;
      uint32_t at = 0;
      for (uint32_t i = 0; i < rows; ++i) {
        if (out.is_valid(i)) at += static_cast<uint32_t>(lengths[k++]);
        out.offsets[i + 1] = at;
      }
      return true;
    }
    default: return false;
  }
}

void column_values::append_scaled_text(std::string &out, uint32_t r) const {
  if (value_places.empty() || value_places[r] == places) {
    append_scaled_decimal(out, ints[r], places);
    return;
  }
  append_scaled_decimal(out, ints[r] / SCALED_POWERS_OF_TEN[places - value_places[r]], value_places[r]);
}

void column_values::make_text() const {
  text_pending = false;
  text.clear();
  offsets.resize(size_t{rows} + 1);
  offsets[0] = 0;
  for (uint32_t i = 0; i < rows; ++i) {
    if (is_valid(i)) append_scaled_text(text, i);
    offsets[i + 1] = static_cast<uint32_t>(text.size());
  }
}

// --- one value of a page ------------------------------------------------------------------------

namespace {

// Value i of w-bit values packed in `b`, which the caller's take() checked to hold them all; loads
// only bytes of `b` (no padding is assumed: the page may be read in place).
inline uint64_t unpack_at(std::span<const uint8_t> b, size_t i, unsigned w, uint64_t mask) {
  const uint64_t bit = static_cast<uint64_t>(i) * w;
  const size_t at = static_cast<size_t>(bit >> 3);
  uint8_t word[16] = {};
  std::memcpy(word, b.data() + at, std::min<size_t>(9, b.size() - at));
  const unsigned shift = static_cast<unsigned>(bit & 7);
  uint64_t v = load_u64(word) >> shift;
  if (shift + w > 64) v |= static_cast<uint64_t>(word[8]) << (64 - shift);
  return v & mask;
}

// A frame-of-reference sequence after its tag: base + (packed value x factor), `w` bits a value.
struct for_frame {
  uint64_t base = 0, factor = 1, mask = 0;
  unsigned w = 0;
  std::span<const uint8_t> b;
  int64_t at(size_t i) const { return static_cast<int64_t>(base + (w ? unpack_at(b, i, w, mask) * factor : 0)); }
};

// Reads a FOR or FOR_GCD sequence of `count` values (its tag already read): false when it is cut
// short or its width is past 64.
bool read_for_frame(byte_reader &r, uint8_t tag, size_t count, for_frame &f) {
  f.base = r.u64();
  f.factor = tag == INT_FOR_GCD ? r.varint() : 1;
  f.w = r.u8();
  if (f.w > 64) return false;
  f.b = r.take((uint64_t{count} * f.w + 7) / 8);
  if (r.failed()) return false;
  f.mask = f.w == 64 ? ~0ull : (1ull << f.w) - 1;
  return true;
}

// Calls fn(i, value) for the integers decode_ints would decode, in order, until fn returns false;
// reads the whole sequence either way (the reader ends after it) and allocates nothing. False on
// malformed input, as decode_ints.
template <typename Fn>
bool each_int(byte_reader &r, size_t count, Fn fn) {
  const uint8_t tag = r.u8();
  switch (tag) {
    case INT_PLAIN: {
      auto b = r.take(uint64_t{8} * count);
      if (r.failed()) return false;
      for (size_t i = 0; i < count; ++i)
        if (!fn(i, static_cast<int64_t>(load_u64(b.data() + 8 * i)))) break;
      return true;
    }
    case INT_CONSTANT: {
      const int64_t c = r.svarint();
      if (r.failed()) return false;
      for (size_t i = 0; i < count; ++i)
        if (!fn(i, c)) break;
      return true;
    }
    case INT_FOR:
    case INT_FOR_GCD: {
      for_frame f;
      if (!read_for_frame(r, tag, count, f)) return false;
      for (size_t i = 0; i < count; ++i)
        if (!fn(i, f.at(i))) break;
      return true;
    }
    case INT_DELTA:
    case INT_DELTA_GCD: {
      const uint64_t first = r.u64();
      const uint64_t dmin = r.u64();
      const uint64_t factor = tag == INT_DELTA_GCD ? r.varint() : 1;
      const unsigned w = r.u8();
      if (w > 64 || count == 0) return false;
      auto b = r.take((uint64_t{count - 1} * w + 7) / 8);
      if (r.failed()) return false;
      const uint64_t mask = w == 64 ? ~0ull : (1ull << w) - 1;
      uint64_t cur = first;
      if (!fn(0, static_cast<int64_t>(cur))) return true;
      for (size_t i = 1; i < count; ++i) {
        cur += dmin + (w ? unpack_at(b, i - 1, w, mask) * factor : 0);
        if (!fn(i, static_cast<int64_t>(cur))) break;
      }
      return true;
    }
    case INT_RLE: {
      const uint64_t runs = r.varint();
      if (r.failed() || runs > count) return false;
      size_t at = 0;
      bool visiting = true;
      for (uint64_t k = 0; k < runs; ++k) {
        const int64_t v = r.svarint();
        const uint64_t len = r.varint();
        if (r.failed() || len > count - at) return false;
        for (size_t j = at; visiting && j < at + len; ++j) visiting = fn(j, v);
        at += static_cast<size_t>(len);
      }
      return at == count;
    }
    default: return false;
  }
}

// Integer k of `count` (k < count): PLAIN, CONSTANT and FOR reach it directly, DELTA and RLE walk
// up to it. The reader ends after the sequence.
bool int_at(byte_reader &r, size_t count, size_t k, int64_t &v) {
  if (k >= count) return false;
  byte_reader peek = r;
  const uint8_t tag = peek.u8();
  if (tag == INT_PLAIN) {
    r.u8();
    auto b = r.take(uint64_t{8} * count);
    if (r.failed()) return false;
    v = static_cast<int64_t>(load_u64(b.data() + 8 * k));
    return true;
  }
  if (tag == INT_FOR || tag == INT_FOR_GCD) {
    r.u8();
    for_frame f;
    if (!read_for_frame(r, tag, count, f)) return false;
    v = f.at(k);
    return true;
  }
  bool found = false;
  if (!each_int(r, count, [&](size_t i, int64_t x) {
        if (i < k) return true;
        v = x;
        found = true;
        return false;
      }))
    return false;
  return found;
}

// The length of text k of a sequence of `count` lengths and the sum of those before it, each
// checked to be at least 0 and at most `limit` (the page's size: sums of them cannot overflow).
bool text_span_at(byte_reader &r, size_t count, size_t k, uint64_t limit, uint64_t &before, uint64_t &length) {
  if (k >= count) return false;
  bool bad = false, found = false;
  before = 0;
  if (!each_int(r, count, [&](size_t i, int64_t len) {
        if (len < 0 || static_cast<uint64_t>(len) > limit) {
          bad = true;
          return false;
        }
        if (i < k) {
          before += static_cast<uint64_t>(len);
          if (before > limit) bad = true;
          return !bad;
        }
        length = static_cast<uint64_t>(len);
        found = true;
        return false;
      }))
    return false;
  return found && !bad && before + length <= r.remaining();
}

}  // namespace

bool decode_page_value(std::span<const uint8_t> raw, column_type type, uint32_t rows, size_t dictionary_size,
                       uint32_t row, column_values &out) {
  if (row >= rows) return false;
  byte_reader r(raw);
  // The validity up to the row: whether it is null, and how many values are stored before it.
  bool valid = true;
  size_t dense = row;
  uint64_t nulls = 0;
  switch (r.u8()) {
    case VALID_ALL: break;
    case VALID_NONE:
      valid = false;
      nulls = rows;
      break;
    case VALID_BITMAP: {
      auto b = r.take((uint64_t{rows} + 7) / 8);
      if (r.failed()) return false;
      const size_t bytes = (size_t{rows} + 7) / 8, at = row >> 3;
      uint64_t set = 0, before = 0;
      for (size_t i = 0; i < bytes; ++i) {
        uint8_t byte = b[i];
        if (i + 1 == bytes && (rows & 7)) byte = static_cast<uint8_t>(byte & ((1u << (rows & 7)) - 1));
        if (i == at)
          before = set + static_cast<uint64_t>(std::popcount(static_cast<uint8_t>(byte & ((1u << (row & 7)) - 1))));
        set += static_cast<uint64_t>(std::popcount(byte));
      }
      valid = (b[at] >> (row & 7)) & 1;
      nulls = rows - set;
      dense = static_cast<size_t>(before);
      break;
    }
    case VALID_RUNS: {
      const uint64_t count = r.varint();
      if (r.failed() || count > uint64_t{rows} + 1) return false;
      uint64_t at = 0, valid_before = 0;
      uint8_t state = 1;
      for (uint64_t k = 0; k < count; ++k) {
        const uint64_t len = r.varint();
        if (r.failed() || len > rows - at) return false;
        if (row >= at && row < at + len) {
          valid = state != 0;
          dense = static_cast<size_t>(valid_before + (row - at));
        }
        if (state) valid_before += len;
        else nulls += len;
        at += len;
        state ^= 1;
      }
      if (at != rows) return false;
      break;
    }
    default: return false;
  }
  const size_t present = rows - static_cast<size_t>(nulls);
  const uint8_t enc = r.u8();
  if (r.failed()) return false;
  switch (enc) {
    case VALUES_INTS:
      if (domain_of(type) != domain::ints) return false;
      break;
    case VALUES_F64:
    case VALUES_F64_DECIMAL:
      if (type != column_type::float64) return false;
      break;
    case VALUES_DECIMAL_SCALED:
    case VALUES_DECIMAL_SCALED_MIXED:
      if (type != column_type::decimal) return false;
      break;
    case VALUES_TEXT_DICT:
    case VALUES_TEXT_PLAIN:
      if (!stored_as_text(type)) return false;
      break;
    default: return false;
  }
  out.rows = 1;
  out.dictionary = false;
  out.text_pending = false;
  out.valid.clear();
  out.ints.clear();
  out.reals.clear();
  out.ids.clear();
  out.text.clear();
  out.offsets.clear();
  if (!valid) {
    // A null: the zero value a decoded page holds at nulls.
    out.valid.assign(1, 0);
    if (enc == VALUES_INTS) out.ints.assign(1, 0);
    else if (enc == VALUES_F64 || enc == VALUES_F64_DECIMAL) out.reals.assign(1, 0);
    else out.offsets.assign(2, 0);
    return true;
  }
  switch (enc) {
    case VALUES_INTS: {
      int64_t v = 0;
      if (!int_at(r, present, dense, v)) return false;
      out.ints.assign(1, v);
      return true;
    }
    case VALUES_F64: {
      auto b = r.take(uint64_t{8} * present);
      if (r.failed() || dense >= present) return false;
      double v;
      std::memcpy(&v, b.data() + 8 * dense, 8);
      out.reals.assign(1, v);
      return true;
    }
    case VALUES_F64_DECIMAL: {
      const unsigned places = r.u8();
      if (r.failed() || places > MAX_DECIMAL_PLACES) return false;
      int64_t m = 0;
      if (!int_at(r, present, dense, m)) return false;
      out.reals.assign(1, static_cast<double>(m) / POWERS_OF_TEN[places]);
      return true;
    }
    case VALUES_DECIMAL_SCALED: {
      const unsigned places = r.u8();
      if (r.failed() || places > MAX_SCALED_DIGITS) return false;
      int64_t m = 0;
      if (!int_at(r, present, dense, m)) return false;
      append_scaled_decimal(out.text, m, places);
      out.offsets.assign({0, static_cast<uint32_t>(out.text.size())});
      return true;
    }
    case VALUES_DECIMAL_SCALED_MIXED: {
      // The value's m, then its places from the second sequence (int_at ends after the first).
      const unsigned most = r.u8();
      if (r.failed() || most > MAX_SCALED_DIGITS) return false;
      int64_t m = 0, own_places = 0, own = 0;
      if (!int_at(r, present, dense, m) || !int_at(r, present, dense, own_places)) return false;
      if (!unscale_mixed(m, own_places, most, own)) return false;
      append_scaled_decimal(out.text, own, static_cast<unsigned>(own_places));
      out.offsets.assign({0, static_cast<uint32_t>(out.text.size())});
      return true;
    }
    case VALUES_TEXT_DICT: {
      int64_t id = 0;
      if (!int_at(r, present, dense, id)) return false;
      if (id < 0 || static_cast<uint64_t>(id) >= dictionary_size) return false;
      out.ids.assign(1, static_cast<uint32_t>(id));
      out.dictionary = true;
      return true;
    }
    default: {  // VALUES_TEXT_PLAIN
      uint64_t before = 0, length = 0;
      if (!text_span_at(r, present, dense, raw.size(), before, length)) return false;
      out.text.assign(reinterpret_cast<const char *>(r.here()) + before, static_cast<size_t>(length));
      out.offsets.assign({0, static_cast<uint32_t>(length)});
      return true;
    }
  }
}

bool dictionary_entry(std::span<const uint8_t> raw, uint64_t entries, uint64_t k, std::string_view &text) {
  byte_reader r(raw);
  const uint64_t count = r.varint();
  if (r.failed() || count != entries || count > raw.size() || k >= count) return false;
  uint64_t before = 0, length = 0;
  if (!text_span_at(r, static_cast<size_t>(count), static_cast<size_t>(k), raw.size(), before, length)) return false;
  text = std::string_view(reinterpret_cast<const char *>(r.here()) + before, static_cast<size_t>(length));
  return true;
}

}  // namespace quire::format::detail
