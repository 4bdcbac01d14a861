// The page checksum (format_crc.cpp): natively x86-64's CRC instruction answers, in wasm the
// tables do; both must give CRC-32C, bit by bit as the test support's one-bit-a-step loop gives it,
// for every length and alignment (the tables take 16 bytes, then 8, then one at a time).
#include <catch2/catch.hpp>

#include <cstdint>
#include <span>
#include <vector>

#include "test_support.h"

// Declared here: format_internal.h includes zstd.h, which the tests do not see.
namespace quire::format::detail {
uint32_t crc32c(std::span<const uint8_t> bytes) noexcept;
}

TEST_CASE("format crc: CRC-32C of every length and alignment", "[format][crc]") {
  const std::string check = "123456789";
  CHECK(quire::format::detail::crc32c({reinterpret_cast<const uint8_t *>(check.data()), check.size()}) == 0xE3069283u);
  std::vector<uint8_t> bytes(600);
  uint32_t x = 12345;
  for (auto &b : bytes) {
    x = x * 1103515245u + 12345u;
    b = static_cast<uint8_t>(x >> 16);
  }
  for (size_t from = 0; from < 8; ++from) {
    for (size_t n = 0; n + from <= bytes.size(); n += n < 80 ? 1 : 37) {
      INFO("from " << from << ", " << n << " bytes");
      REQUIRE(quire::format::detail::crc32c({bytes.data() + from, n}) == quire_test::crc32c(bytes.data() + from, n));
    }
  }
}
