// core/src/format/format_page_codec.cpp: bit-packed integer sequences (FOR, FOR_GCD, DELTA,
// DELTA_GCD) decode to the values packed, at every width from 1 to 64 and at counts that leave a
// partial group of eight. The packing here is written bit by bit, independent of the codec's.
#include <catch2/catch.hpp>
#include <cstdint>
#include <string>
#include <vector>

#include "../core/src/format/format_internal.h"

namespace fd = quire::format::detail;

namespace {

struct packer {
  std::string bytes;
  uint64_t bits = 0;
  void put(uint64_t v, unsigned w) {
    for (unsigned b = 0; b < w; ++b, ++bits) {
      if (bits % 8 == 0) bytes.push_back('\0');
      if ((v >> b) & 1) bytes.back() = static_cast<char>(bytes.back() | (1 << (bits % 8)));
    }
  }
};

void put_u64(std::string &o, uint64_t v) {
  for (int i = 0; i < 8; ++i) o.push_back(static_cast<char>((v >> (8 * i)) & 0xFF));
}

std::vector<int64_t> decode(std::string stream, size_t count) {
  stream.append(fd::DECODE_PADDING, '\0');
  fd::byte_reader r({reinterpret_cast<const uint8_t *>(stream.data()), stream.size()});
  std::vector<int64_t> out;
  REQUIRE(fd::decode_ints(r, count, out));
  return out;
}

}  // namespace

TEST_CASE("format ints: bit-packed sequences decode at every width", "[format][unpack]") {
  uint64_t x = 0x2545f4914f6cdd1dULL;
  auto next = [&] {
    x ^= x << 13;
    x ^= x >> 7;
    x ^= x << 17;
    return x;
  };
  for (unsigned w = 1; w <= 64; ++w) {
    const uint64_t mask = w == 64 ? ~0ull : (1ull << w) - 1;
    for (size_t count : {size_t{1}, size_t{7}, size_t{8}, size_t{9}, size_t{64}, size_t{1003}}) {
      INFO("width " << w << ", " << count << " values");
      std::vector<uint64_t> packed(count);
      for (auto &v : packed) v = next() & mask;
      packed[0] = mask;  // the widest value, so every bit of the width is used

      // FOR and FOR_GCD: base + v * factor, modulo 2^64.
      for (uint64_t factor : {uint64_t{1}, uint64_t{1000}}) {
        const uint64_t base = 0xfffffffffff00000ULL;
        std::string s(1, static_cast<char>(factor == 1 ? fd::INT_FOR : fd::INT_FOR_GCD));
        put_u64(s, base);
        if (factor != 1) fd::put_varint(s, factor);
        s.push_back(static_cast<char>(w));
        packer p;
        for (uint64_t v : packed) p.put(v, w);
        s += p.bytes;
        const auto got = decode(s, count);
        for (size_t i = 0; i < count; ++i) REQUIRE(static_cast<uint64_t>(got[i]) == base + packed[i] * factor);
      }

      // DELTA and DELTA_GCD: first, then each value the last plus min_delta + v * factor.
      for (uint64_t factor : {uint64_t{1}, uint64_t{3}}) {
        const uint64_t first = 42, dmin = static_cast<uint64_t>(-5);
        std::string s(1, static_cast<char>(factor == 1 ? fd::INT_DELTA : fd::INT_DELTA_GCD));
        put_u64(s, first);
        put_u64(s, dmin);
        if (factor != 1) fd::put_varint(s, factor);
        s.push_back(static_cast<char>(w));
        packer p;
        for (size_t i = 1; i < count; ++i) p.put(packed[i], w);
        s += p.bytes;
        const auto got = decode(s, count);
        uint64_t cur = first;
        REQUIRE(static_cast<uint64_t>(got[0]) == cur);
        for (size_t i = 1; i < count; ++i) {
          cur += dmin + packed[i] * factor;
          REQUIRE(static_cast<uint64_t>(got[i]) == cur);
        }
      }
    }
  }
}
