// Byte ranges of an input at line starts (quire/ndjson.h): line_range, split_lines, and the
// "START:END" and JSON texts of a range.
#include <algorithm>
#include <array>
#include <charconv>
#include <cstring>

#include "quire/ndjson.h"

namespace quire::ndjson {

namespace {

/// Bytes read at a time while looking for a line end.
constexpr size_t BLOCK_BYTES = size_t{64} << 10;
constexpr uint64_t MAX_PARTS = 65536;

/// The first line start at or after `at`: `at` itself when it is 0 or follows a `\n`, else the
/// byte after the next `\n`, else the input's end.
result<uint64_t> next_line_start(const byte_source &input, uint64_t at) {
  const uint64_t size = input.size();
  if (at == 0) return uint64_t{0};
  if (at >= size) return size;
  // From the byte before `at`: a `\n` there means a line starts at `at`.
  uint64_t from = at - 1;
  if (auto whole = input.contiguous(); !whole.empty()) {
    const void *nl = std::memchr(whole.data() + from, '\n', static_cast<size_t>(size - from));
    return nl ? static_cast<uint64_t>(static_cast<const uint8_t *>(nl) - whole.data()) + 1 : size;
  }
  std::array<uint8_t, BLOCK_BYTES> block;
  while (from < size) {
    const size_t n = static_cast<size_t>(std::min<uint64_t>(BLOCK_BYTES, size - from));
    if (auto r = input.read_at(from, std::span<uint8_t>(block.data(), n)); !r) return std::move(r).error();
    if (const void *nl = std::memchr(block.data(), '\n', n))
      return from + static_cast<uint64_t>(static_cast<const uint8_t *>(nl) - block.data()) + 1;
    from += n;
  }
  return size;
}

}  // namespace

result<byte_range> line_range(const byte_source &input, byte_range asked) {
  const uint64_t size = input.size();
  const uint64_t end = std::min(asked.end, size);
  if (asked.start > end) {
    return quire::error(error_code::INVALID_ARGUMENT, "a range's start (" + std::to_string(asked.start) +
                                                          ") is past its end (" + std::to_string(end) + ")");
  }
  auto first = next_line_start(input, asked.start);
  if (!first) return std::move(first).error();
  auto last = next_line_start(input, end);
  if (!last) return std::move(last).error();
  return byte_range{*first, std::max(*first, *last)};
}

result<std::vector<byte_range>> split_lines(const byte_source &input, uint64_t parts) {
  if (parts < 1 || parts > MAX_PARTS)
    return quire::error(error_code::INVALID_ARGUMENT, "parts must be 1.." + std::to_string(MAX_PARTS));
  const uint64_t size = input.size();
  std::vector<byte_range> out;
  out.reserve(static_cast<size_t>(parts));
  uint64_t start = 0;
  for (uint64_t i = 1; i <= parts; ++i) {
    // size * i / parts without overflow: (size % parts) * i < 2^32 since parts <= 2^16.
    const uint64_t cut = size / parts * i + size % parts * i / parts;
    auto at = next_line_start(input, std::max(cut, start));
    if (!at) return std::move(at).error();
    out.push_back({start, *at});
    start = *at;
  }
  return out;
}

result<byte_range> parse_byte_range(std::string_view text) {
  auto bad = [&] {
    return quire::error(error_code::INVALID_ARGUMENT,
                        "a range is START:END, two byte offsets with START <= END, not '" + std::string(text) + "'");
  };
  const size_t colon = text.find(':');
  if (colon == std::string_view::npos) return bad();
  auto number = [](std::string_view t, uint64_t &v) {
    auto [p, ec] = std::from_chars(t.data(), t.data() + t.size(), v);
    return !t.empty() && ec == std::errc() && p == t.data() + t.size();
  };
  byte_range r;
  if (!number(text.substr(0, colon), r.start) || !number(text.substr(colon + 1), r.end) || r.start > r.end)
    return bad();
  return r;
}

std::string byte_range_json(const byte_range &r, uint64_t part) {
  return "{\"part\":" + std::to_string(part) + ",\"start\":" + std::to_string(r.start) +
         ",\"end\":" + std::to_string(r.end) + ",\"bytes\":" + std::to_string(r.end - r.start) + "}";
}

}  // namespace quire::ndjson
