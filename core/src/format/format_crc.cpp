// Checksums and hashes of the .quire format (docs/format.md): CRC-32C of every stored page, and
// the 64-bit hash of hash indexes and Bloom filters.
#include <array>

#include "format_internal.h"

namespace quire::format::detail {

// --- CRC-32C, slice-by-16 ---------------------------------------------------------------------------

namespace {

// Sixteen tables, not eight: wasm has no CRC instruction, and a cold find checks every page it
// reads (about 40 KB on the 200,000 customers), where slice-by-8 was a tenth of the find in Node.
// Built on first use, not at compile time: 16 KB of tables in quire.wasm's data would gzip to
// about as much (the package's size budget), and building them takes microseconds once.
constexpr size_t CRC_SLICES = 16;
using crc_tables = std::array<std::array<uint32_t, 256>, CRC_SLICES>;

crc_tables make_crc_tables() {
  crc_tables t{};
  for (uint32_t i = 0; i < 256; ++i) {
    uint32_t c = i;
    for (int k = 0; k < 8; ++k) c = (c & 1) ? (c >> 1) ^ 0x82F63B78u : c >> 1;
    t[0][i] = c;
  }
  for (uint32_t i = 0; i < 256; ++i) {
    for (size_t s = 1; s < CRC_SLICES; ++s) t[s][i] = (t[s - 1][i] >> 8) ^ t[0][t[s - 1][i] & 0xFF];
  }
  return t;
}

const crc_tables &crc_table() {
  static const crc_tables t = make_crc_tables();
  return t;
}

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
  const crc_tables &t = crc_table();
  while (n >= 16) {
    const uint64_t a = load_u64(p) ^ c, b = load_u64(p + 8);
    c = t[15][a & 0xFF] ^ t[14][(a >> 8) & 0xFF] ^ t[13][(a >> 16) & 0xFF] ^ t[12][(a >> 24) & 0xFF] ^
        t[11][(a >> 32) & 0xFF] ^ t[10][(a >> 40) & 0xFF] ^ t[9][(a >> 48) & 0xFF] ^ t[8][a >> 56] ^ t[7][b & 0xFF] ^
        t[6][(b >> 8) & 0xFF] ^ t[5][(b >> 16) & 0xFF] ^ t[4][(b >> 24) & 0xFF] ^ t[3][(b >> 32) & 0xFF] ^
        t[2][(b >> 40) & 0xFF] ^ t[1][(b >> 48) & 0xFF] ^ t[0][b >> 56];
    p += 16;
    n -= 16;
  }
  if (n >= 8) {
    uint64_t w = load_u64(p) ^ c;
    c = t[7][w & 0xFF] ^ t[6][(w >> 8) & 0xFF] ^ t[5][(w >> 16) & 0xFF] ^ t[4][(w >> 24) & 0xFF] ^
        t[3][(w >> 32) & 0xFF] ^ t[2][(w >> 40) & 0xFF] ^ t[1][(w >> 48) & 0xFF] ^ t[0][w >> 56];
    p += 8;
    n -= 8;
  }
  while (n--) c = t[0][(c ^ *p++) & 0xFF] ^ (c >> 8);
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
