// Facts of the byte format that the writer and the reader both rely on (docs/format.md): the
// order-preserving keys of sorted indexes and ORDER BY, and the encoding of statistics.
#include "format_internal.h"

namespace quire::format::detail {

// --- order keys ------------------------------------------------------------------------------------

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

// --- statistics ------------------------------------------------------------------------------------

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

}  // namespace quire::format::detail
