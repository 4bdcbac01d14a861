// The JSON layer's entry points: limits, padding, byte sources, and the choice of simdjson kernel.
// The walk itself is in json_walk.h, compiled once per kernel.
#include <cstring>
#include <memory>
#if defined(__wasm_simd128__)
#include <wasm_simd128.h>
#endif

#include "../common/alloc.h"
#include "json_internal.h"

#define QUIRE_KERNEL_FN(name) baseline_##name
#include "json_walk.h"

namespace quire::json {
namespace {

struct kernel {
  result<stats> (*check)(std::string_view, const limits &);
  result<void> (*build)(std::string_view, const limits &, detail::tape_data &);
  std::string_view (*name)() noexcept;
};

// The fastest kernel this CPU runs. Natively on x86-64 that is haswell (AVX2) when the CPU has
// it; wasm has only the baseline (fallback) kernel.
const kernel &best_kernel() {
  static const kernel chosen = [] {
#if QUIRE_HAVE_HASWELL_KERNEL
    // Every CPU with AVX2 and BMI1 (Haswell, Excavator and later) also has PCLMUL and LZCNT;
    // clang 14 cannot test "lzcnt" by name.
    __builtin_cpu_init();
    if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("bmi")) {
      return kernel{haswell_check, haswell_build, haswell_name};
    }
#endif
    return kernel{baseline_check, baseline_build, baseline_name};
  }();
  return chosen;
}

}  // namespace

// Counted in blocks of 255 bytes into a byte-wide sum (the four tests are exclusive, so one OR
// of them is 0 or 1): the compiler then vectorizes the loop natively; the per-byte sum into a
// size_t it did not, and this pass was a tenth of parsing a short document. In wasm the
// compiler's vector code for that loop ran at a quarter of the native speed (13 µs of a 66 µs
// parse of 50 KiB), so there each 16 bytes are tested with SIMD128 and their bit mask counted.
size_t tape_entries_bound(std::string_view s) noexcept {
  size_t n = 1;
  const char *p = s.data();
  size_t left = s.size();
#if defined(__wasm_simd128__)
  while (left >= 16) {
    const v128_t v = wasm_v128_load(p);
    const v128_t hit =
        wasm_v128_or(wasm_v128_or(wasm_i8x16_eq(v, wasm_i8x16_splat(',')), wasm_i8x16_eq(v, wasm_i8x16_splat(':'))),
                     wasm_v128_or(wasm_i8x16_eq(v, wasm_i8x16_splat('[')), wasm_i8x16_eq(v, wasm_i8x16_splat('{'))));
    n += static_cast<size_t>(__builtin_popcount(wasm_i8x16_bitmask(hit)));
    p += 16;
    left -= 16;
  }
#endif
  while (left > 0) {
    const size_t block = left < 255 ? left : 255;
    uint8_t count = 0;
    for (size_t i = 0; i < block; ++i) {
      const char c = p[i];
      count = static_cast<uint8_t>(count + ((c == ',') | (c == ':') | (c == '[') | (c == '{')));
    }
    n += count;
    p += block;
    left -= block;
  }
  return n;
}

namespace {

// The tape's room for a document parsed into a reused one (parse_into: NDJSON lines, a view's
// resources): tape_entries_bound() of it, except that a short document gets a fixed SHORT_ROOM
// nodes without the counting pass, which was a sixth of parsing a 1.7 KB Patient. Every node but the root is announced
// by one of its bytes, so a document of fewer than SHORT_ROOM bytes, even a bad one declined halfway, never needs more.
// The room is fixed so that lines of different lengths never grow the tape, and it stays below alloc.h's
// PROBE_THRESHOLD (3,072 nodes of 20 bytes = 60 KiB), so no probe runs. A document parsed once (parse()) keeps its tape
// as long as it lives, so it is sized exactly: 60 KiB for every small document kept (a compiled view holds one) would
// add up.
constexpr size_t SHORT_ROOM = 3072;
static_assert(SHORT_ROOM * sizeof(detail::node) < quire::detail::PROBE_THRESHOLD);
size_t tape_room(std::string_view s) noexcept { return s.size() < SHORT_ROOM ? SHORT_ROOM : tape_entries_bound(s); }

// Validates limits and gives simdjson a padded buffer: the caller's own when it has padding, else
// a copy (kept in `copy`).
result<std::string_view> padded_input(std::string_view input, size_t available_padding, const limits &lim,
                                      std::unique_ptr<char[]> &copy) {
  uint64_t cap = lim.max_document_bytes < HARD_MAX_BYTES ? lim.max_document_bytes : HARD_MAX_BYTES;
  if (input.size() > cap) {
    return quire::error(
        quire::error_code::DOCUMENT_TOO_LARGE,
        "document of " + std::to_string(input.size()) + " bytes exceeds max_document_bytes " + std::to_string(cap), 0);
  }
  if (available_padding >= PADDING) return input;
  copy.reset(new (std::nothrow) char[input.size() + PADDING]);
  if (!copy) return quire::error(quire::error_code::OUT_OF_MEMORY, "cannot allocate a copy of the input", 0);
  if (!input.empty()) std::memcpy(copy.get(), input.data(), input.size());
  std::memset(copy.get() + input.size(), 0, PADDING);
  return std::string_view(copy.get(), input.size());
}

quire::error located(quire::error err, std::string_view input) {
  // Bytes that are not UTF-8 are the most basic fault, and which error simdjson reports first for
  // them depends on its kernel: so any failure on such input is INVALID_UTF8 at the first bad byte,
  // the same on every target. (Valid documents pay nothing for this: it runs on failure only.)
  if (err.code != quire::error_code::DOCUMENT_TOO_LARGE && err.code != quire::error_code::OUT_OF_MEMORY) {
    uint64_t bad = first_invalid_utf8(input);
    if (bad < input.size()) {
      err = quire::error(quire::error_code::INVALID_UTF8, "bytes that are not UTF-8", bad);
    } else if (err.code == quire::error_code::INVALID_UTF8) {
      // The bytes are UTF-8: the fallback kernel says otherwise only when an escape swallowed the
      // lead byte of a multi-byte character (`"\🌀"`), which is a bad escape.
      err = quire::error(quire::error_code::INVALID_STRING, "a backslash escapes a character that cannot be escaped",
                         err.offset);
      if (err.offset == quire::error::NO_OFFSET) err.offset = input.size();
    } else if (err.offset == quire::error::NO_OFFSET) {
      err.offset = input.size();  // stage-1 failures such as an unclosed string: reported at the end
    }
  }
  locate(err, input);
  return err;
}

// The tape of `d.input` (padded, limits checked, buffers reserved). The fast builder first; on
// anything it declines, the simdjson walk parses the input again from the start. That costs a
// second pass only for input that is bad (or unusual: see json_tape.cpp), and it keeps every
// error exactly what the walk reports — code, offset and message — on every target.
result<void> build_tape(detail::tape_data &d, const limits &lim, tape_path which) {
  if (which == tape_path::baseline_only) return baseline_build(d.input, lim, d);
  if (which != tape_path::reference_only) {
    if (fast_build(d.input, lim, d)) return {};
    if (which == tape_path::fast_only) {
      return quire::error(quire::error_code::INVALID_JSON, "declined by the fast tape builder", 0);
    }
  }
  return best_kernel().build(d.input, lim, d);
}

result<document> parse_padded(std::string_view input, size_t padding, const limits &lim,
                              std::unique_ptr<char[]> owned = nullptr) {
  auto data = std::make_unique<detail::tape_data>();
  data->owned_input = std::move(owned);
  auto padded = padded_input(input, padding, lim, data->owned_input);
  if (!padded) return std::move(padded).error();
  data->input = padded.value();
  // One reservation each, sized before the walk, so the buffers never move while they grow and a
  // call of the same size reuses the same heap memory (growing a vector made glibc map fresh,
  // unfaulted pages on every call past its mmap threshold: a 4x input cost 25x natively).
  // Unescaped strings are never longer than the input; every tape entry but the root is preceded
  // by one of , : [ { — counting them (strings included, so an upper bound) costs one quick pass.
  // Both are sized from the input, so an allocation that fails is OUT_OF_MEMORY, not an abort
  // (common/alloc.h).
  if (auto r = quire::detail::reserve_or_oom(data->tape, tape_entries_bound(data->input), "the document's tape"); !r) {
    return std::move(r).error();
  }
  if (auto r = quire::detail::reserve_or_oom(data->strings, input.size() + FAST_STRING_SLACK, "the document's strings");
      !r) {
    return std::move(r).error();
  }
  auto r = build_tape(*data, lim, tape_path::automatic);
  if (!r) return located(std::move(r).error(), input);
  return document(std::move(data));
}

result<stats> check_padded(std::string_view input, size_t padding, const limits &lim,
                           tape_path which = tape_path::automatic) {
  std::unique_ptr<char[]> copy;
  auto padded = padded_input(input, padding, lim, copy);
  if (!padded) return std::move(padded).error();
  // As build_tape: the fast pass, and the walk for what it declines.
  if (which == tape_path::baseline_only) {
    auto r = baseline_check(padded.value(), lim);
    if (!r) return located(std::move(r).error(), input);
    return r;
  }
  if (which != tape_path::reference_only) {
    stats s;
    if (fast_check(padded.value(), lim, s)) return s;
    if (which == tape_path::fast_only) {
      return quire::error(quire::error_code::INVALID_JSON, "declined by the fast tape builder", 0);
    }
  }
  auto r = best_kernel().check(padded.value(), lim);
  if (!r) return located(std::move(r).error(), input);
  return r;
}

// Whole contents of a source, borrowed when contiguous, else read into `buffer` with padding.
result<std::pair<std::string_view, size_t>> source_bytes(const byte_source &source, const limits &lim,
                                                         std::unique_ptr<char[]> &buffer) {
  auto span = source.contiguous();
  if (!span.empty() || source.size() == 0) {
    return std::pair{std::string_view(reinterpret_cast<const char *>(span.data()), span.size()), source.tail_padding()};
  }
  uint64_t n = source.size();
  if (n > lim.max_document_bytes || n > HARD_MAX_BYTES) {
    return quire::error(quire::error_code::DOCUMENT_TOO_LARGE,
                        "document of " + std::to_string(n) + " bytes exceeds max_document_bytes", 0);
  }
  buffer.reset(new (std::nothrow) char[static_cast<size_t>(n) + PADDING]);
  if (!buffer) return quire::error(quire::error_code::OUT_OF_MEMORY, "cannot allocate the input", 0);
  auto r = source.read_at(0, std::span<uint8_t>(reinterpret_cast<uint8_t *>(buffer.get()), static_cast<size_t>(n)));
  if (!r) return std::move(r).error();
  std::memset(buffer.get() + n, 0, PADDING);
  return std::pair{std::string_view(buffer.get(), static_cast<size_t>(n)), PADDING};
}

}  // namespace

uint64_t first_invalid_utf8(std::string_view s) noexcept {
  const auto *p = reinterpret_cast<const unsigned char *>(s.data());
  size_t i = 0, n = s.size();
  while (i < n) {
    unsigned char c = p[i];
    size_t len;
    uint32_t cp;
    if (c < 0x80) {
      ++i;
      continue;
    }
    if ((c & 0xE0) == 0xC0) {
      len = 2;
      cp = c & 0x1F;
    } else if ((c & 0xF0) == 0xE0) {
      len = 3;
      cp = c & 0x0F;
    } else if ((c & 0xF8) == 0xF0) {
      len = 4;
      cp = c & 0x07;
    } else return i;
    if (i + len > n) return i;
    for (size_t k = 1; k < len; ++k) {
      if ((p[i + k] & 0xC0) != 0x80) return i;
      cp = (cp << 6) | (p[i + k] & 0x3F);
    }
    if ((len == 2 && cp < 0x80) || (len == 3 && cp < 0x800) || (len == 4 && (cp < 0x10000 || cp > 0x10FFFF)) ||
        (cp >= 0xD800 && cp <= 0xDFFF)) {
      return i;
    }
    i += len;
  }
  return n;
}

result<document> parse(std::string_view input, const limits &lim) { return parse_padded(input, 0, lim); }

result<document> parse(const byte_source &source, const limits &lim) {
  std::unique_ptr<char[]> buffer;
  auto bytes = source_bytes(source, lim, buffer);
  if (!bytes) return std::move(bytes).error();
  auto [input, padding] = bytes.value();
  return parse_padded(input, padding, lim, std::move(buffer));
}

result<void> parse_tape(detail::tape_data &d, std::string_view input, const limits &lim, tape_path which) {
  uint64_t cap = lim.max_document_bytes < HARD_MAX_BYTES ? lim.max_document_bytes : HARD_MAX_BYTES;
  if (input.size() > cap) {
    return quire::error(
        quire::error_code::DOCUMENT_TOO_LARGE,
        "document of " + std::to_string(input.size()) + " bytes exceeds max_document_bytes " + std::to_string(cap), 0);
  }
  const size_t need = input.size() + PADDING;
  if (d.owned_capacity < need) {
    d.owned_input.reset();
    d.owned_capacity = 0;
    // Some room beyond this document, so that slightly longer lines do not each allocate anew.
    const size_t room = need + need / 2;
    d.owned_input.reset(new (std::nothrow) char[room]);
    if (!d.owned_input) return quire::error(quire::error_code::OUT_OF_MEMORY, "cannot allocate a copy of the input", 0);
    d.owned_capacity = room;
  }
  if (!input.empty()) std::memcpy(d.owned_input.get(), input.data(), input.size());
  std::memset(d.owned_input.get() + input.size(), 0, PADDING);
  d.input = std::string_view(d.owned_input.get(), input.size());
  d.tape.clear();
  d.strings.clear();
  d.max_depth = 0;
  d.value_count = 0;
  // grow_or_oom doubles a buffer that must grow, so a run of documents settles on one size.
  if (auto r = quire::detail::grow_or_oom(d.tape, tape_room(d.input), "the document's tape"); !r) {
    return std::move(r).error();
  }
  if (auto r = quire::detail::grow_or_oom(d.strings, input.size() + FAST_STRING_SLACK, "the document's strings"); !r) {
    return std::move(r).error();
  }
  auto r = build_tape(d, lim, which);
  if (!r) return located(std::move(r).error(), input);
  return {};
}

result<stats> check_with(std::string_view input, const limits &lim, tape_path which) {
  return check_padded(input, 0, lim, which);
}

result<void> parse_into(document &doc, std::string_view input, const limits &lim) {
  if (!doc.data_) doc.data_ = std::make_unique<detail::tape_data>();
  auto r = parse_tape(*doc.data_, input, lim, tape_path::automatic);
  if (!r) doc = document{};
  return r;
}

result<stats> check(std::string_view input, const limits &lim) { return check_padded(input, 0, lim); }

result<stats> check(const byte_source &source, const limits &lim) {
  std::unique_ptr<char[]> buffer;
  auto bytes = source_bytes(source, lim, buffer);
  if (!bytes) return std::move(bytes).error();
  return check_padded(bytes->first, bytes->second, lim);
}

std::string_view simd_kernel() noexcept { return best_kernel().name(); }

}  // namespace quire::json
