// Helpers shared by the Catch2 tests: where the corpus is, and reading files. The same tests run
// natively and under Node (wasm, with NODERAWFS), so they only use std file streams.
#pragma once

#include <catch2/catch.hpp>

#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <optional>
#include <span>
#include <sstream>
#include <string>
#include <string_view>
#include <vector>

#include "quire/result.h"

namespace quire_test {

/// The shared corpus: QUIRE_CORPUS when set, else ../shared/corpus beside the checkout (../../ for a
/// git worktree one folder deeper). When it is absent the calling test FAILs, naming where it was
/// looked for: a corpus that went missing must not turn the conformance tallies into passing skips.
inline std::filesystem::path corpus_dir() {
  std::vector<std::filesystem::path> tried;
  if (const char *env = std::getenv("QUIRE_CORPUS"); env && *env) {
    tried.emplace_back(env);
  } else {
    tried.push_back(std::filesystem::path(QUIRE_SOURCE_DIR) / ".." / "shared" / "corpus");
    tried.push_back(std::filesystem::path(QUIRE_SOURCE_DIR) / ".." / ".." / "shared" / "corpus");
  }
  std::string where;
  for (const auto &p : tried) {
    std::error_code ec;
    if (std::filesystem::is_directory(p, ec)) return p;
    where += (where.empty() ? "" : " or ") + p.lexically_normal().string();
  }
  FAIL("the shared corpus is missing: expected at " << where << " (or set QUIRE_CORPUS)");
  return {};
}

/// A small deterministic generator (xorshift64) for tests that build many inputs from one seed:
/// `xorshift next; next()` gives the same sequence on every target.
struct xorshift {
  uint64_t state = 0x9e3779b97f4a7c15ull;
  uint64_t operator()() noexcept {
    state ^= state << 13;
    state ^= state >> 7;
    state ^= state << 17;
    return state;
  }
};

/// tests/data inside the checkout.
inline std::filesystem::path data_dir() { return std::filesystem::path(QUIRE_SOURCE_DIR) / "tests" / "data"; }

inline std::string read_text(const std::filesystem::path &p) {
  std::ifstream in(p, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

inline std::vector<uint8_t> read_bytes(const std::filesystem::path &p) {
  std::string s = read_text(p);
  return std::vector<uint8_t>(s.begin(), s.end());
}

/// The rows of a tab-separated file, each a vector of its cells; blank lines and lines starting
/// with '#' (comments) are skipped. An empty or missing file gives no rows.
inline std::vector<std::vector<std::string>> read_tsv(const std::filesystem::path &p) {
  std::vector<std::vector<std::string>> rows;
  std::istringstream in(read_text(p));
  std::string line;
  while (std::getline(in, line)) {
    if (line.empty() || line[0] == '#') continue;
    std::vector<std::string> cells;
    size_t start = 0;
    while (true) {
      size_t tab = line.find('\t', start);
      cells.push_back(line.substr(start, tab == std::string::npos ? std::string::npos : tab - start));
      if (tab == std::string::npos) break;
      start = tab + 1;
    }
    rows.push_back(cells);
  }
  return rows;
}

/// Characters a JSON string writer must escape (quote, backslash, every kind of control
/// character) and some close to them that it must not (DEL, non-ASCII, punctuation), one a string.
inline std::vector<std::string> json_escape_specials() {
  return {"\"",
          "\\",
          "\n",
          "\r",
          "\t",
          "\b",
          "\f",
          std::string(1, '\x01'),
          std::string(1, '\x1f'),
          std::string(1, '\0'),
          "\x7f",
          "\xc3\xa9",
          " ",
          "!",
          "#",
          "[",
          "]",
          "}",
          "~",
          "\x80",
          "\xff"};
}

/// CRC-32C (Castagnoli, reflected 0x82F63B78) written out bit by bit, apart from core's tables: the
/// format tests make and check page and footer checksums with it (docs/format.md 1.1).
inline uint32_t crc32c(const uint8_t *p, size_t n) {
  uint32_t c = 0xFFFFFFFFu;
  for (size_t i = 0; i < n; ++i) {
    c ^= p[i];
    for (int k = 0; k < 8; ++k) c = (c & 1) ? (c >> 1) ^ 0x82F63B78u : c >> 1;
  }
  return c ^ 0xFFFFFFFFu;
}
inline uint32_t crc32c(std::string_view s) { return crc32c(reinterpret_cast<const uint8_t *>(s.data()), s.size()); }

/// A read position in a file's bytes for the tests that take a .quire file apart: varints and bytes.
struct byte_cursor {
  const std::vector<uint8_t> &b;
  size_t at;
  uint64_t varint() {
    uint64_t v = 0;
    for (int s = 0;; s += 7) {
      uint8_t c = b.at(at++);
      v |= uint64_t{c & 0x7Fu} << s;
      if (!(c & 0x80)) return v;
    }
  }
  uint8_t u8() { return b.at(at++); }
  void skip(size_t n) { at += n; }
};

/// Where a stored page_ref is (docs/format.md 1.1): its offset and stored length, where its CRC
/// starts, and its compression.
struct ref_at {
  uint64_t offset = 0, stored = 0;
  size_t crc_at = 0;
  uint8_t compression = 0;
};
inline ref_at read_ref(byte_cursor &c) {
  ref_at r;
  r.offset = c.varint();
  r.stored = c.varint();
  c.varint();
  r.crc_at = c.at;
  c.at += 4;
  r.compression = c.u8();
  return r;
}

/// A statistics record's bounds as the column's domain stores them (docs/format.md 1.4).
enum class stats_domain { ints, reals, text };
/// Where a statistics record's fields are: nulls, flags, and min's and max's first bytes (an
/// integer's zvarint, a double's 8 bytes, a text bound's length varint).
struct stats_at {
  size_t nulls = 0, flags = 0, min = 0, max = 0;
};
inline stats_at read_stats(byte_cursor &c, stats_domain d) {
  stats_at s;
  s.nulls = c.at;
  c.varint();
  s.flags = c.at;
  const uint8_t flags = c.u8();
  auto bound = [&]() {
    const size_t at = c.at;
    if (d == stats_domain::reals) {
      c.at += 8;
      return at;
    }
    const uint64_t n = c.varint();
    if (d == stats_domain::text) c.at += n;
    return at;
  };
  if (flags & 1) s.min = bound();
  if (flags & 2) s.max = bound();
  return s;
}

/// The varint at `at`.
inline uint64_t varint_at(const std::vector<uint8_t> &b, size_t at) {
  byte_cursor c{b, at};
  return c.varint();
}
/// Writes `v` over the varint at `at`, which must keep its length (the file's other offsets stay).
inline void set_varint(std::vector<uint8_t> &b, size_t at, uint64_t v) {
  byte_cursor c{b, at};
  c.varint();
  const size_t length = c.at - at;
  for (size_t i = 0; i < length; ++i) {
    b[at + i] = static_cast<uint8_t>((v & 0x7F) | (i + 1 < length ? 0x80 : 0));
    v >>= 7;
  }
  REQUIRE(v == 0);
}
/// Writes at `at` the CRC-32C of the `length` bytes at `offset` (a page_ref's or the tail's crc).
inline void put_crc(std::vector<uint8_t> &b, size_t at, uint64_t offset, uint64_t length) {
  const uint32_t crc = crc32c(b.data() + offset, static_cast<size_t>(length));
  std::memcpy(b.data() + at, &crc, 4);
}

/// A store's random source that gives the same bytes every run (splitmix64 from `seed`): file ids,
/// keys and nonces a test can write twice and compare, where the answers, not the bytes, matter.
inline auto seeded_random(uint64_t seed) {
  return [state = seed](std::span<uint8_t> out) mutable -> quire::result<void> {
    for (auto &b : out) {
      state += 0x9E3779B97F4A7C15ull;
      uint64_t z = state;
      z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
      z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
      b = static_cast<uint8_t>(z ^ (z >> 31));
    }
    return {};
  };
}

}  // namespace quire_test
