// Facts of the byte format that the writer and the reader both rely on (docs/format.md): the
// order-preserving keys of sorted indexes and ORDER BY, trigrams of text indexes, and the encoding
// of statistics. The Bloom filter's bit positions and big-endian words are inline in
// format_internal.h.
#include <algorithm>

#include "format_internal.h"

namespace quire::format::detail {

// --- order keys ------------------------------------------------------------------------------------

void append_int_key(std::string &out, int64_t v) { put_be64(out, static_cast<uint64_t>(v) ^ 0x8000000000000000ull); }

void append_real_key(std::string &out, double v) {
  if (v == 0) v = 0;
  uint64_t u;
  std::memcpy(&u, &v, 8);
  put_be64(out, (u & 0x8000000000000000ull) ? ~u : u | 0x8000000000000000ull);
}

void append_text_key(std::string &out, std::string_view v) {
  for (char c : v) {
    out.push_back(c);
    if (c == '\0') out.push_back(static_cast<char>(0xFF));
  }
  out.push_back('\0');
  out.push_back('\0');
}

// --- trigrams -------------------------------------------------------------------------------------

void distinct_trigrams(std::string_view s, std::vector<uint32_t> &grams) {
  grams.clear();
  if (s.size() < 3) return;
  grams.reserve(s.size() - 2);
  for (size_t i = 0; i + 3 <= s.size(); ++i) {
    grams.push_back((uint32_t{static_cast<uint8_t>(s[i])} << 16) | (uint32_t{static_cast<uint8_t>(s[i + 1])} << 8) |
                    static_cast<uint8_t>(s[i + 2]));
  }
  std::sort(grams.begin(), grams.end());
  grams.erase(std::unique(grams.begin(), grams.end()), grams.end());
}

// --- statistics ------------------------------------------------------------------------------------

void put_stats(std::string &o, domain d, const stats &s) {
  put_varint(o, s.nulls);
  put_u8(o, static_cast<uint8_t>((s.has_min ? 1 : 0) | (s.has_max ? 2 : 0) | (s.has_max && s.max_bound ? 4 : 0)));
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
  s.max_bound = s.has_max && (flags & 4);
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

void shorten_text_bounds(stats &s, size_t bytes) {
  if (s.has_min && s.tmin.size() > bytes) s.tmin.resize(bytes);
  if (!s.has_max || s.tmax.size() <= bytes) return;
  s.tmax.resize(bytes);
  while (!s.tmax.empty() && static_cast<uint8_t>(s.tmax.back()) == 0xFF) s.tmax.pop_back();
  if (s.tmax.empty()) {
    s.has_max = false;
    return;
  }
  s.tmax.back() = static_cast<char>(static_cast<uint8_t>(s.tmax.back()) + 1);
  s.max_bound = true;
}

}  // namespace quire::format::detail
