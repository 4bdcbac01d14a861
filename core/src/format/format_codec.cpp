// The page codec and the value conversions of the .quire format (docs/format.md, "Pages").
#include <algorithm>
#include <array>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <numeric>

#include "format_internal.h"

namespace quire::format::detail {

// --- CRC-32C, slice-by-8, tables built at compile time -------------------------------------------

namespace {

constexpr std::array<std::array<uint32_t, 256>, 8> make_crc_tables() {
  std::array<std::array<uint32_t, 256>, 8> t{};
  for (uint32_t i = 0; i < 256; ++i) {
    uint32_t c = i;
    for (int k = 0; k < 8; ++k) c = (c & 1) ? (c >> 1) ^ 0x82F63B78u : c >> 1;
    t[0][i] = c;
  }
  for (uint32_t i = 0; i < 256; ++i) {
    for (size_t s = 1; s < 8; ++s) t[s][i] = (t[s - 1][i] >> 8) ^ t[0][t[s - 1][i] & 0xFF];
  }
  return t;
}
constexpr auto CRC_TABLES = make_crc_tables();

// x86-64 has had an instruction for exactly this polynomial since SSE 4.2 (2008): about ten times the
// tables' speed, and every page read is checked. Chosen at run time (the baseline build must run on
// any x86-64); wasm has no such instruction and uses the tables. Both give the same value.
#if defined(__x86_64__) && !defined(__EMSCRIPTEN__)
#define QUIRE_CRC32C_INSTRUCTION 1
__attribute__((target("sse4.2"))) uint32_t crc32c_instruction(const uint8_t *p, size_t n, uint32_t c) noexcept {
  uint64_t c64 = c;
  while (n >= 8) {
    c64 = __builtin_ia32_crc32di(c64, load_u64(p));
    p += 8;
    n -= 8;
  }
  c = static_cast<uint32_t>(c64);
  while (n--) c = __builtin_ia32_crc32qi(c, *p++);
  return c;
}
const bool HAS_CRC32C_INSTRUCTION = __builtin_cpu_supports("sse4.2");
#endif

}  // namespace

uint32_t crc32c(std::span<const uint8_t> bytes) noexcept {
  uint32_t c = 0xFFFFFFFFu;
  const uint8_t *p = bytes.data();
  size_t n = bytes.size();
#ifdef QUIRE_CRC32C_INSTRUCTION
  if (HAS_CRC32C_INSTRUCTION) return crc32c_instruction(p, n, c) ^ 0xFFFFFFFFu;
#endif
  while (n >= 8) {
    uint64_t w = load_u64(p) ^ c;
    c = CRC_TABLES[7][w & 0xFF] ^ CRC_TABLES[6][(w >> 8) & 0xFF] ^ CRC_TABLES[5][(w >> 16) & 0xFF] ^
        CRC_TABLES[4][(w >> 24) & 0xFF] ^ CRC_TABLES[3][(w >> 32) & 0xFF] ^ CRC_TABLES[2][(w >> 40) & 0xFF] ^
        CRC_TABLES[1][(w >> 48) & 0xFF] ^ CRC_TABLES[0][w >> 56];
    p += 8;
    n -= 8;
  }
  while (n--) c = CRC_TABLES[0][(c ^ *p++) & 0xFF] ^ (c >> 8);
  return c ^ 0xFFFFFFFFu;
}

uint64_t hash64(std::string_view bytes) noexcept {
  uint64_t h = 0xcbf29ce484222325ull;
  for (unsigned char c : bytes) {
    h ^= c;
    h *= 0x100000001b3ull;
  }
  h ^= h >> 30;
  h *= 0xbf58476d1ce4e5b9ull;
  h ^= h >> 27;
  h *= 0x94d049bb133111ebull;
  h ^= h >> 31;
  return h;
}

std::string encoding_name(uint8_t encoding) {
  static constexpr const char *INTS[] = {"PLAIN", "FOR", "DELTA", "RLE", "CONSTANT", "FOR_GCD", "DELTA_GCD"};
  const unsigned v = encoding >> 4, i = encoding & 15;
  std::string ints = i < std::size(INTS) ? INTS[i] : "?";
  switch (v) {
    case VALUES_INTS: return ints;
    case VALUES_F64: return "PLAIN_F64";
    case VALUES_F64_DECIMAL: return "DECIMAL_F64+" + ints;
    case VALUES_DECIMAL_SCALED: return "SCALED+" + ints;
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

std::string seal_page(std::string_view raw, int level, ZSTD_CCtx *cctx, page_ref &ref) {
  ref.raw_length = static_cast<uint32_t>(raw.size());
  std::string stored;
  if (raw.size() >= 64 && cctx) {
    stored.resize(ZSTD_compressBound(raw.size()));
    size_t n = ZSTD_compressCCtx(cctx, stored.data(), stored.size(), raw.data(), raw.size(), level);
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

// --- dates, timestamps, numbers -------------------------------------------------------------------

int64_t days_from_civil(int64_t y, unsigned m, unsigned d) noexcept {
  y -= m <= 2;
  const int64_t era = (y >= 0 ? y : y - 399) / 400;
  const unsigned yoe = static_cast<unsigned>(y - era * 400);
  const unsigned doy = (153 * (m + (m > 2 ? -3 : 9)) + 2) / 5 + d - 1;
  const unsigned doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
  return era * 146097 + static_cast<int64_t>(doe) - 719468;
}

namespace {

void civil_from_days(int64_t z, int64_t &y, unsigned &m, unsigned &d) noexcept {
  z += 719468;
  const int64_t era = (z >= 0 ? z : z - 146096) / 146097;
  const unsigned doe = static_cast<unsigned>(z - era * 146097);
  const unsigned yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;
  y = static_cast<int64_t>(yoe) + era * 400;
  const unsigned doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
  const unsigned mp = (5 * doy + 2) / 153;
  d = doy - (153 * mp + 2) / 5 + 1;
  m = mp < 10 ? mp + 3 : mp - 9;
  y += m <= 2;
}

bool digits(std::string_view s, size_t at, size_t count, unsigned &out) {
  if (at + count > s.size()) return false;
  unsigned v = 0;
  for (size_t i = at; i < at + count; ++i) {
    if (s[i] < '0' || s[i] > '9') return false;
    v = v * 10 + static_cast<unsigned>(s[i] - '0');
  }
  out = v;
  return true;
}

bool leap(unsigned y) { return (y % 4 == 0 && y % 100 != 0) || y % 400 == 0; }

std::optional<int64_t> date_prefix(std::string_view s) {
  unsigned y, m, d;
  if (s.size() < 10 || !digits(s, 0, 4, y) || s[4] != '-' || !digits(s, 5, 2, m) || s[7] != '-' || !digits(s, 8, 2, d))
    return std::nullopt;
  static constexpr unsigned MONTH_DAYS[12] = {31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
  if (m < 1 || m > 12 || d < 1) return std::nullopt;
  unsigned max_day = MONTH_DAYS[m - 1] + (m == 2 && leap(y) ? 1 : 0);
  if (d > max_day) return std::nullopt;
  return days_from_civil(y, m, d);
}

int64_t floor_div(int64_t a, int64_t b) { return a / b - ((a % b != 0) && ((a < 0) != (b < 0))); }

// printf's "%0*lld" without printf (dates and times print per value, millions of times a query):
// zero-padded to `width` characters, a minus sign counting towards the width.
void append_padded(std::string &out, int64_t v, int width) {
  char buf[24];
  char *p = buf + sizeof buf;
  uint64_t u = v < 0 ? 0 - static_cast<uint64_t>(v) : static_cast<uint64_t>(v);
  do {
    *--p = static_cast<char>('0' + u % 10);
    u /= 10;
  } while (u);
  const int sign = v < 0 ? 1 : 0;
  while (buf + sizeof buf - p + sign < width) *--p = '0';
  if (sign) *--p = '-';
  out.append(p, static_cast<size_t>(buf + sizeof buf - p));
}

}  // namespace

std::optional<int64_t> parse_date(std::string_view s) noexcept {
  if (s.size() != 10) return std::nullopt;
  return date_prefix(s);
}

std::optional<int64_t> parse_timestamp(std::string_view s, bool allow_date) noexcept {
  auto day = date_prefix(s);
  if (!day) return std::nullopt;
  if (s.size() == 10) {
    if (!allow_date) return std::nullopt;
    return *day * 86400000000LL;
  }
  unsigned hh, mm, ss;
  if (s.size() < 20 || s[10] != 'T' || !digits(s, 11, 2, hh) || s[13] != ':' || !digits(s, 14, 2, mm) || s[16] != ':' ||
      !digits(s, 17, 2, ss) || hh > 23 || mm > 59 || ss > 59) {
    return std::nullopt;
  }
  size_t i = 19;
  int64_t micros = 0;
  if (s[i] == '.') {
    size_t start = ++i;
    while (i < s.size() && s[i] >= '0' && s[i] <= '9') ++i;
    size_t n = i - start;
    if (n < 1 || n > 6) return std::nullopt;
    unsigned frac = 0;
    digits(s, start, n, frac);
    micros = frac;
    for (size_t k = n; k < 6; ++k) micros *= 10;
  }
  int64_t offset_seconds = 0;
  if (i < s.size() && s[i] == 'Z' && i + 1 == s.size()) {
    // UTC
  } else if (i + 6 == s.size() && (s[i] == '+' || s[i] == '-') && s[i + 3] == ':') {
    unsigned oh, om;
    if (!digits(s, i + 1, 2, oh) || !digits(s, i + 4, 2, om) || oh > 23 || om > 59) return std::nullopt;
    offset_seconds = (s[i] == '+' ? 1 : -1) * static_cast<int64_t>(oh * 3600 + om * 60);
  } else {
    return std::nullopt;
  }
  int64_t seconds = *day * 86400 + hh * 3600 + mm * 60 + ss - offset_seconds;
  return seconds * 1000000 + micros;
}

void append_date(std::string &out, int64_t days) {
  int64_t y;
  unsigned m, d;
  civil_from_days(days, y, m, d);
  append_padded(out, y, 4);
  out.push_back('-');
  append_padded(out, m, 2);
  out.push_back('-');
  append_padded(out, d, 2);
}

void append_timestamp(std::string &out, int64_t micros) {
  int64_t seconds = floor_div(micros, 1000000);
  int64_t frac = micros - seconds * 1000000;
  int64_t days = floor_div(seconds, 86400);
  int64_t rest = seconds - days * 86400;
  append_date(out, days);
  out.push_back('T');
  append_padded(out, rest / 3600, 2);
  out.push_back(':');
  append_padded(out, (rest / 60) % 60, 2);
  out.push_back(':');
  append_padded(out, rest % 60, 2);
  if (frac) {
    out.push_back('.');
    if (frac % 1000 == 0) append_padded(out, frac / 1000, 3);
    else append_padded(out, frac, 6);
  }
  out.push_back('Z');
}

double parse_double(std::string_view s) noexcept {
  char buf[128];
  if (s.size() < sizeof buf) {
    std::memcpy(buf, s.data(), s.size());
    buf[s.size()] = 0;
    return std::strtod(buf, nullptr);
  }
  std::string copy(s);
  return std::strtod(copy.c_str(), nullptr);
}

namespace {

constexpr double POWERS_OF_TEN[MAX_DECIMAL_PLACES + 1] = {1, 10, 100, 1000, 10000, 100000, 1000000};
constexpr double TWO_53 = 9007199254740992.0;

// The fewest places k with v == m / 10^k for an integer m (|m| < 2^53), or -1. Division of two
// exactly represented integers is correctly rounded, so m / 10^k == v means the decimal m·10^-k
// reads back as v: storing m and k loses nothing, on every target.
int decimal_places(double v, int64_t &m) {
  if (!std::isfinite(v) || (v == 0 && std::signbit(v))) return -1;
  for (unsigned k = 0; k <= MAX_DECIMAL_PLACES; ++k) {
    const double scaled = std::nearbyint(v * POWERS_OF_TEN[k]);
    if (!(std::fabs(scaled) < TWO_53)) return -1;
    if (scaled / POWERS_OF_TEN[k] == v) {
      m = static_cast<int64_t>(scaled);
      return static_cast<int>(k);
    }
  }
  return -1;
}

}  // namespace

bool scale_decimals(std::span<const double> values, unsigned &places, std::vector<int64_t> &scaled) {
  places = 0;
  int64_t m = 0;
  for (double v : values) {
    const int k = decimal_places(v, m);
    if (k < 0) return false;
    places = std::max(places, static_cast<unsigned>(k));
  }
  scaled.clear();
  scaled.reserve(values.size());
  for (double v : values) {
    const double s = std::nearbyint(v * POWERS_OF_TEN[places]);
    if (!(std::fabs(s) < TWO_53)) return false;
    scaled.push_back(static_cast<int64_t>(s));
  }
  return true;
}

std::optional<int64_t> scale_decimal_text(std::string_view t, unsigned &places) {
  size_t i = 0;
  const bool negative = !t.empty() && t[0] == '-';
  if (negative) ++i;
  const size_t int_start = i;
  while (i < t.size() && t[i] >= '0' && t[i] <= '9') ++i;
  const size_t int_digits = i - int_start;
  if (int_digits == 0 || (int_digits > 1 && t[int_start] == '0')) return std::nullopt;
  size_t frac_digits = 0;
  if (i < t.size()) {
    if (t[i] != '.') return std::nullopt;
    const size_t frac_start = ++i;
    while (i < t.size() && t[i] >= '0' && t[i] <= '9') ++i;
    frac_digits = i - frac_start;
    if (frac_digits == 0 || i != t.size()) return std::nullopt;
  }
  if (places == UINT32_MAX) places = static_cast<unsigned>(frac_digits);
  if (frac_digits != places || int_digits + frac_digits > MAX_SCALED_DIGITS) return std::nullopt;
  int64_t m = 0;
  for (char c : t.substr(int_start)) {
    if (c != '.') m = m * 10 + (c - '0');
  }
  if (negative && m == 0) return std::nullopt;  // "-0.00" would print back as "0.00"
  return negative ? -m : m;
}

void append_scaled_decimal(std::string &out, int64_t m, unsigned places) {
  char buf[48];
  char *p = buf + sizeof buf;
  uint64_t u = m < 0 ? 0 - static_cast<uint64_t>(m) : static_cast<uint64_t>(m);
  for (unsigned k = 0; k < places; ++k) {
    *--p = static_cast<char>('0' + u % 10);
    u /= 10;
  }
  if (places) *--p = '.';
  do {
    *--p = static_cast<char>('0' + u % 10);
    u /= 10;
  } while (u);
  if (m < 0) *--p = '-';
  out.append(p, static_cast<size_t>(buf + sizeof buf - p));
}

number_class classify_number(std::string_view s) noexcept {
  size_t i = 0, n = s.size();
  if (i < n && s[i] == '-') ++i;
  size_t int_start = i;
  if (i >= n || s[i] < '0' || s[i] > '9') return number_class::not_a_number;
  if (s[i] == '0') ++i;
  else
    while (i < n && s[i] >= '0' && s[i] <= '9') ++i;
  size_t int_end = i;
  size_t frac_start = 0, frac_end = 0;
  bool has_frac = false, has_exp = false;
  if (i < n && s[i] == '.') {
    has_frac = true;
    frac_start = ++i;
    while (i < n && s[i] >= '0' && s[i] <= '9') ++i;
    frac_end = i;
    if (frac_end == frac_start) return number_class::not_a_number;
  }
  if (i < n && (s[i] == 'e' || s[i] == 'E')) {
    has_exp = true;
    ++i;
    if (i < n && (s[i] == '+' || s[i] == '-')) ++i;
    size_t e = i;
    while (i < n && s[i] >= '0' && s[i] <= '9') ++i;
    if (i == e) return number_class::not_a_number;
  }
  if (i != n) return number_class::not_a_number;
  if (!has_frac && !has_exp) {
    int64_t v;
    auto [p, ec] = std::from_chars(s.data(), s.data() + n, v);
    return ec == std::errc() && p == s.data() + n ? number_class::integer : number_class::decimal;
  }
  // Significant digits: the integer and fraction digits without leading zeros.
  size_t significant = 0;
  bool leading = true;
  for (size_t k = int_start; k < int_end; ++k) {
    if (leading && s[k] == '0') continue;
    leading = false;
    ++significant;
  }
  if (has_frac) {
    for (size_t k = frac_start; k < frac_end; ++k) {
      if (leading && s[k] == '0') continue;
      leading = false;
      ++significant;
    }
    // `12.50`, `0.700`: a fixed number of places that a double would lose.
    if (frac_end - frac_start >= 2 && s[frac_end - 1] == '0') return number_class::decimal;
  }
  if (significant > 15) return number_class::decimal;
  if (!std::isfinite(parse_double(s))) return number_class::decimal;
  return number_class::real;
}

domain domain_of(column_type t) noexcept {
  switch (t) {
    case column_type::float64:
    case column_type::decimal: return domain::reals;
    case column_type::string:
    case column_type::json: return domain::text;
    default: return domain::ints;
  }
}

void append_int_key(std::string &out, int64_t v) {
  uint64_t u = static_cast<uint64_t>(v) ^ 0x8000000000000000ull;
  for (int s = 56; s >= 0; s -= 8) out.push_back(static_cast<char>((u >> s) & 0xFF));
}

void append_real_key(std::string &out, double v) {
  if (v == 0) v = 0;
  uint64_t u;
  std::memcpy(&u, &v, 8);
  u = (u & 0x8000000000000000ull) ? ~u : u | 0x8000000000000000ull;
  for (int s = 56; s >= 0; s -= 8) out.push_back(static_cast<char>((u >> s) & 0xFF));
}

void append_text_key(std::string &out, std::string_view v) {
  for (char c : v) {
    out.push_back(c);
    if (c == '\0') out.push_back(static_cast<char>(0xFF));
  }
  out.push_back('\0');
  out.push_back('\0');
}

// --- statistics ---------------------------------------------------------------------------------

void put_stats(std::string &o, domain d, const stats &s) {
  put_varint(o, s.nulls);
  put_u8(o, static_cast<uint8_t>((s.has_min ? 1 : 0) | (s.has_max ? 2 : 0)));
  switch (d) {
    case domain::ints:
      if (s.has_min) put_svarint(o, s.imin);
      if (s.has_max) put_svarint(o, s.imax);
      break;
    case domain::reals:
      if (s.has_min) o.append(reinterpret_cast<const char *>(&s.rmin), 8);
      if (s.has_max) o.append(reinterpret_cast<const char *>(&s.rmax), 8);
      break;
    case domain::text:
      if (s.has_min) put_bytes(o, s.tmin);
      if (s.has_max) put_bytes(o, s.tmax);
      break;
  }
}

stats read_stats(byte_reader &r, domain d) {
  stats s;
  s.nulls = r.varint();
  uint8_t flags = r.u8();
  s.has_min = flags & 1;
  s.has_max = flags & 2;
  switch (d) {
    case domain::ints:
      if (s.has_min) s.imin = r.svarint();
      if (s.has_max) s.imax = r.svarint();
      break;
    case domain::reals:
      if (s.has_min) s.rmin = r.f64();
      if (s.has_max) s.rmax = r.f64();
      break;
    case domain::text:
      if (s.has_min) s.tmin = std::string(r.bytes());
      if (s.has_max) s.tmax = std::string(r.bytes());
      break;
  }
  return s;
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
  for (int64_t x : v) {
    for_gcd = std::gcd(for_gcd, static_cast<uint64_t>(x) - static_cast<uint64_t>(mn));
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
      delta_gcd = std::gcd(delta_gcd,
                           static_cast<uint64_t>(v[i]) - static_cast<uint64_t>(v[i - 1]) - static_cast<uint64_t>(dmin));
    }
    if (delta_gcd > 1) {
      delta_gcd_w = width_of((static_cast<uint64_t>(dmax) - static_cast<uint64_t>(dmin)) / delta_gcd);
      delta_gcd_size = 17 + varint_size(delta_gcd) + ((n - 1) * delta_gcd_w + 7) / 8;
    }
  }
  size_t runs = 0, rle_size = 0;
  for (size_t i = 0; i < n;) {
    size_t j = i + 1;
    while (j < n && v[j] == v[i]) ++j;
    ++runs;
    rle_size += varint_size(zigzag(v[i])) + varint_size(j - i);
    i = j;
  }
  rle_size += varint_size(runs);
  size_t plain_size = 8 * n;
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
      uint64_t mask = w == 64 ? ~0ull : (1ull << w) - 1;
      for (size_t i = 0; i < count; ++i)
        out[i] = static_cast<int64_t>(base + unpack_one(b.data(), i, w, mask) * factor);
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
      uint64_t mask = w == 64 ? ~0ull : (1ull << w) - 1;
      uint64_t cur = first;
      out[0] = static_cast<int64_t>(cur);
      for (size_t i = 1; i < count; ++i) {
        cur += dmin + (w ? unpack_one(b.data(), i - 1, w, mask) * factor : 0);
        out[i] = static_cast<int64_t>(cur);
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
      for (size_t i = 0; i < present; ++i) dense[i] = static_cast<double>(scaled[i]) / divisor;
      expand(dense, out.reals);
      return true;
    }
    case VALUES_DECIMAL_SCALED: {
      if (type != column_type::decimal) return false;
      const unsigned places = r.u8();
      if (r.failed() || places > MAX_SCALED_DIGITS) return false;
      std::vector<int64_t> scaled;
      if (!decode_ints(r, present, scaled)) return false;
      out.offsets.resize(size_t{rows} + 1);
      out.offsets[0] = 0;
      size_t k = 0;
      for (uint32_t i = 0; i < rows; ++i) {
        if (out.is_valid(i)) append_scaled_decimal(out.text, scaled[k++], places);
        out.offsets[i + 1] = static_cast<uint32_t>(out.text.size());
      }
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

}  // namespace quire::format::detail
