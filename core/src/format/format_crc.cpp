// Checksums and hashes of the .quire format (docs/format.md): CRC-32C of every stored page, and
// the 64-bit hash of hash indexes and Bloom filters.
#include <array>

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

}  // namespace quire::format::detail
