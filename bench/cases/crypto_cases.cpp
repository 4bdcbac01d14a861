// Benchmark cases of quire::crypto (docs/format-v2.md §2.2): seal and open of 1 MiB and of 8 KiB
// pages (the format's page size) with XChaCha20-Poly1305, on both targets — the figures the cipher
// was chosen by.
#include <cstring>
#include <vector>

#include "quire/bench.h"
#include "quire/crypto.h"

namespace quire::bench {
namespace {

const crypto::key &bench_key() {
  static const crypto::key k = [] {
    std::vector<uint8_t> raw(crypto::KEY_BYTES);
    for (size_t i = 0; i < raw.size(); ++i) raw[i] = static_cast<uint8_t>(i * 7 + 1);
    return crypto::key_from_bytes(raw).value();
  }();
  return k;
}

constexpr size_t PAGE = 8192;
const uint8_t IDENTITY[48] = {1, 2, 3};

std::string pseudo_bytes(size_t n) {
  std::string s(n, '\0');
  uint64_t x = 0x9E3779B97F4A7C15ull;
  for (size_t i = 0; i < n; ++i) {
    x ^= x << 13;
    x ^= x >> 7;
    x ^= x << 17;
    s[i] = static_cast<char>(x);
  }
  return s;
}

// Seals the input in pages of `page` bytes, each under its own nonce; the checksum folds every tag.
template <size_t page>
result<uint64_t> seal_op(std::string_view input) {
  const auto *p = reinterpret_cast<const uint8_t *>(input.data());
  static thread_local std::vector<uint8_t> out;
  out.resize(page + crypto::TAG_BYTES);
  uint64_t d = 0;
  crypto::nonce n{};
  for (size_t at = 0, i = 0; at < input.size(); at += page, ++i) {
    const size_t len = std::min(page, input.size() - at);
    std::memcpy(n.data(), &i, sizeof i);
    auto r =
        crypto::seal(std::span(out).first(len + crypto::TAG_BYTES), std::span(p + at, len), IDENTITY, n, bench_key());
    if (!r) return r.error();
    uint64_t tag = 0;
    std::memcpy(&tag, out.data() + len, sizeof tag);
    d = mix(d, tag);
  }
  return d;
}

// Opens pages sealed once beforehand (the input is sealed on first use, outside the timing).
template <size_t page>
result<uint64_t> open_op(std::string_view input) {
  static thread_local std::string sealed_for;
  static thread_local std::vector<uint8_t> sealed;
  const auto *p = reinterpret_cast<const uint8_t *>(input.data());
  const size_t pages = (input.size() + page - 1) / page;
  if (sealed_for.size() != input.size()) {
    sealed.assign(input.size() + pages * crypto::TAG_BYTES, 0);
    crypto::nonce n{};
    for (size_t at = 0, i = 0, o = 0; at < input.size(); at += page, ++i) {
      const size_t len = std::min(page, input.size() - at);
      std::memcpy(n.data(), &i, sizeof i);
      auto r = crypto::seal(std::span(sealed).subspan(o, len + crypto::TAG_BYTES), std::span(p + at, len), IDENTITY, n,
                            bench_key());
      if (!r) return r.error();
      o += len + crypto::TAG_BYTES;
    }
    sealed_for.assign(input.size(), '\0');
  }
  static thread_local std::vector<uint8_t> out;
  out.resize(page);
  uint64_t d = 0;
  crypto::nonce n{};
  for (size_t at = 0, i = 0, o = 0; at < input.size(); at += page, ++i) {
    const size_t len = std::min(page, input.size() - at);
    std::memcpy(n.data(), &i, sizeof i);
    auto r = crypto::open(std::span(out).first(len), std::span(sealed).subspan(o, len + crypto::TAG_BYTES), IDENTITY, n,
                          bench_key());
    if (!r) return r.error();
    d = mix(d, out[0]);
    o += len + crypto::TAG_BYTES;
  }
  return d;
}

std::string one_mib() { return pseudo_bytes(size_t{1} << 20); }

registration seal_pages{{"crypto.seal", "pages-8kib-1mib", one_mib, seal_op<PAGE>, 128}};
registration seal_whole{{"crypto.seal", "page-1mib", one_mib, seal_op<size_t{1} << 20>, 1}};
registration open_pages{{"crypto.open", "pages-8kib-1mib", one_mib, open_op<PAGE>, 128}};

}  // namespace
}  // namespace quire::bench
