// core/src/common/alloc.h: a buffer that cannot be allocated is OUT_OF_MEMORY, never an abort,
// and the container is left as it was. Runs natively and in wasm (where the heap stops at 4 GB).
#include <catch2/catch.hpp>

#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include "../core/src/common/alloc.h"

using quire::error_code;

namespace {

// More than either target can give, yet small enough that the probe really calls malloc: 2^62
// bytes natively (beyond the 47-bit address space), and in wasm 1 MiB short of 4 GB once the
// probe's headroom is added, which no heap that already holds the program's stack (5 MiB) and
// data can grow to under MAXIMUM_MEMORY=4GB.
size_t absurd_bytes() {
  if constexpr (sizeof(size_t) >= 8) return size_t{1} << 62;
  return std::numeric_limits<size_t>::max() - quire::detail::PROBE_SLACK - 1024 * 1024;
}

}  // namespace

TEST_CASE("reserve_or_oom: an absurd size is OUT_OF_MEMORY and leaves the container as it was", "[alloc]") {
  std::vector<uint8_t> v{1, 2, 3};
  const auto before = v.capacity();
  auto r = quire::detail::reserve_or_oom(v, absurd_bytes(), "a test buffer");
  REQUIRE_FALSE(r);
  CHECK(r.code() == error_code::OUT_OF_MEMORY);
  CHECK(r.error().message.find("a test buffer") != std::string::npos);
  CHECK(v == std::vector<uint8_t>{1, 2, 3});
  CHECK(v.capacity() == before);
  // Still usable: an ordinary reservation right after succeeds.
  REQUIRE(quire::detail::reserve_or_oom(v, 1 << 20, "a test buffer"));
  CHECK(v.capacity() >= (1u << 20));
  CHECK(v == std::vector<uint8_t>{1, 2, 3});
}

TEST_CASE("reserve_or_oom: a count whose byte size overflows is OUT_OF_MEMORY, not length_error", "[alloc]") {
  std::vector<uint64_t> v;
  auto r = quire::detail::reserve_or_oom(v, std::numeric_limits<uint64_t>::max() / 4, "eight-byte elements");
  REQUIRE_FALSE(r);
  CHECK(r.code() == error_code::OUT_OF_MEMORY);
  CHECK(v.capacity() == 0);
  std::string s = "kept";
  auto rs = quire::detail::reserve_or_oom(s, std::numeric_limits<uint64_t>::max(), "a string");
  REQUIRE_FALSE(rs);
  CHECK(rs.code() == error_code::OUT_OF_MEMORY);
  CHECK(s == "kept");
}

TEST_CASE("resize_or_oom and grow_or_oom: sizes that fit are granted, absurd ones are errors", "[alloc]") {
  std::vector<uint8_t> v;
  REQUIRE(quire::detail::resize_or_oom(v, 100000, "a page"));
  CHECK(v.size() == 100000);
  auto r = quire::detail::resize_or_oom(v, absurd_bytes(), "a page");
  REQUIRE_FALSE(r);
  CHECK(r.code() == error_code::OUT_OF_MEMORY);
  CHECK(v.size() == 100000);

  std::string line(70000, 'x');
  const size_t full = line.capacity();  // libc++ rounds it up, libstdc++ does not
  REQUIRE(quire::detail::grow_or_oom(line, full + 1, "a line"));
  CHECK(line.capacity() >= 2 * full);  // doubled, like the container's own growth
  auto g = quire::detail::grow_or_oom(line, absurd_bytes(), "a line");
  REQUIRE_FALSE(g);
  CHECK(g.code() == error_code::OUT_OF_MEMORY);
  CHECK(line.size() == 70000);
}

TEST_CASE("can_allocate: the probe itself says no to what the heap cannot give", "[alloc]") {
  // In wasm libc++ caps a byte vector's max_size() at 2^31 - 1, so for the absurd sizes above
  // reserve_or_oom's count check answers before the probe does: here the probe is asked directly.
  CHECK_FALSE(quire::detail::can_allocate(absurd_bytes()));
  CHECK_FALSE(quire::detail::can_allocate(std::numeric_limits<size_t>::max()));
  CHECK(quire::detail::can_allocate(1 << 20));
}
