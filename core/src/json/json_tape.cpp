// The fast tape builder: one validating pass over the input that writes the tape's nodes and the
// unescaped strings directly, 16 bytes at a time through strings and whitespace (SSE2 natively on
// x86-64, simd128 in wasm, a byte loop elsewhere).
//
// Why a second parser beside the simdjson walk (json_walk.h): On-Demand is built to pick a few
// values out of a document, not to visit all of them, and a full walk through it paid for a
// location query per value, iterator objects per container and a second copy of every string.
// This builder does only what the tape needs.
//
// It decides nothing about bad input. Whenever it meets anything it does not accept — any syntax
// error, bytes that are not UTF-8, a control character, a lone surrogate escape, nesting past the
// limit, the end of the input — it returns false and json_parse.cpp parses the input again with
// the simdjson walk, which then reports the error (code, offset, message) exactly as before: the
// errors stay those of one implementation, and this one only has to be right about valid JSON.
// What it accepts, it must accept identically: the same nodes (every `offset` where simdjson's
// current_location() puts a value or key, which is the value's or key's first byte), the same
// strings, counts and depth. tests/json_tape_test.cpp and tests/fuzz/json_fuzz.cpp hold it to that.
#include <cstring>
#include <vector>

#include "json_internal.h"

#if defined(__SSE2__)
#include <emmintrin.h>
#define QUIRE_JSON_SSE2 1
#elif defined(__wasm_simd128__)
#include <wasm_simd128.h>
#define QUIRE_JSON_SIMD128 1
#endif

#if defined(__GNUC__)
#define QUIRE_INLINE inline __attribute__((always_inline))
#else
#define QUIRE_INLINE inline
#endif

namespace quire::json {
namespace {

// Our nesting bound as the walk has it (json_walk.h's HARD_MAX_DEPTH): a caller's larger limit is
// cut to this, and simdjson's own depth limit never applies to On-Demand.
constexpr size_t HARD_MAX_DEPTH = 4096;

// 16 bytes of the input and the questions the parser asks of them, one bit per byte.
#if QUIRE_JSON_SSE2
struct block {
  __m128i v;
  static block load(const char *p) { return {_mm_loadu_si128(reinterpret_cast<const __m128i *>(p))}; }
  void store(char *out) const { _mm_storeu_si128(reinterpret_cast<__m128i *>(out), v); }
  // A quote, a backslash, or a byte below 0x20 or above 0x7F (the signed compare takes both:
  // control characters end the fast scan as errors, non-ASCII bytes to be validated).
  uint32_t string_specials() const {
    const __m128i quote = _mm_cmpeq_epi8(v, _mm_set1_epi8('"'));
    const __m128i backslash = _mm_cmpeq_epi8(v, _mm_set1_epi8('\\'));
    const __m128i low = _mm_cmplt_epi8(v, _mm_set1_epi8(0x20));
    return static_cast<uint32_t>(_mm_movemask_epi8(_mm_or_si128(_mm_or_si128(quote, backslash), low)));
  }
  // Bytes of 0x80 and above (their top bits).
  uint32_t high() const { return static_cast<uint32_t>(_mm_movemask_epi8(v)); }
  uint32_t non_space() const {
    const __m128i sp = _mm_cmpeq_epi8(v, _mm_set1_epi8(' '));
    const __m128i nl = _mm_cmpeq_epi8(v, _mm_set1_epi8('\n'));
    const __m128i cr = _mm_cmpeq_epi8(v, _mm_set1_epi8('\r'));
    const __m128i tab = _mm_cmpeq_epi8(v, _mm_set1_epi8('\t'));
    const __m128i space = _mm_or_si128(_mm_or_si128(sp, nl), _mm_or_si128(cr, tab));
    return static_cast<uint32_t>(_mm_movemask_epi8(space)) ^ 0xFFFFu;
  }
};
#elif QUIRE_JSON_SIMD128
struct block {
  v128_t v;
  static block load(const char *p) { return {wasm_v128_load(p)}; }
  void store(char *out) const { wasm_v128_store(out, v); }
  uint32_t string_specials() const {
    const v128_t quote = wasm_i8x16_eq(v, wasm_i8x16_splat('"'));
    const v128_t backslash = wasm_i8x16_eq(v, wasm_i8x16_splat('\\'));
    const v128_t low = wasm_i8x16_lt(v, wasm_i8x16_splat(0x20));
    return static_cast<uint32_t>(wasm_i8x16_bitmask(wasm_v128_or(wasm_v128_or(quote, backslash), low)));
  }
  uint32_t high() const { return static_cast<uint32_t>(wasm_i8x16_bitmask(v)); }
  uint32_t non_space() const {
    const v128_t sp = wasm_i8x16_eq(v, wasm_i8x16_splat(' '));
    const v128_t nl = wasm_i8x16_eq(v, wasm_i8x16_splat('\n'));
    const v128_t cr = wasm_i8x16_eq(v, wasm_i8x16_splat('\r'));
    const v128_t tab = wasm_i8x16_eq(v, wasm_i8x16_splat('\t'));
    const v128_t space = wasm_v128_or(wasm_v128_or(sp, nl), wasm_v128_or(cr, tab));
    return static_cast<uint32_t>(wasm_i8x16_bitmask(space)) ^ 0xFFFFu;
  }
};
#else
struct block {
  unsigned char b[16];
  static block load(const char *p) {
    block k;
    std::memcpy(k.b, p, 16);
    return k;
  }
  void store(char *out) const { std::memcpy(out, b, 16); }
  uint32_t string_specials() const {
    uint32_t m = 0;
    for (int i = 0; i < 16; ++i) m |= uint32_t{b[i] == '"' || b[i] == '\\' || b[i] < 0x20 || b[i] >= 0x80} << i;
    return m;
  }
  uint32_t high() const {
    uint32_t m = 0;
    for (int i = 0; i < 16; ++i) m |= uint32_t{b[i] >= 0x80} << i;
    return m;
  }
  uint32_t non_space() const {
    uint32_t m = 0;
    for (int i = 0; i < 16; ++i) m |= uint32_t{!(b[i] == ' ' || b[i] == '\n' || b[i] == '\r' || b[i] == '\t')} << i;
    return m;
  }
};
#endif

inline unsigned first_bit(uint32_t m) { return static_cast<unsigned>(__builtin_ctz(m)); }

inline bool is_digit(char c) { return static_cast<unsigned char>(c - '0') < 10; }

// The value of one hex digit, or 16 and more when it is not one.
inline uint32_t hex_value(char c) {
  if (c >= '0' && c <= '9') return static_cast<uint32_t>(c - '0');
  if (c >= 'a' && c <= 'f') return static_cast<uint32_t>(c - 'a' + 10);
  if (c >= 'A' && c <= 'F') return static_cast<uint32_t>(c - 'A' + 10);
  return 0x10000;
}
// Four hex digits; above 0xFFFF when one is not a hex digit.
inline uint32_t hex4(const char *p) {
  return (hex_value(p[0]) << 12) | (hex_value(p[1]) << 8) | (hex_value(p[2]) << 4) | hex_value(p[3]);
}

// The length of the valid UTF-8 sequence at p (a byte of 0x80 or more), or 0 when it is not one:
// the rules of first_invalid_utf8 (no overlong forms, no surrogates, nothing above U+10FFFF).
inline size_t utf8_sequence(const unsigned char *p, const unsigned char *end) {
  const unsigned char c = p[0];
  const size_t left = static_cast<size_t>(end - p);
  if (c >= 0xC2 && c <= 0xDF) return left >= 2 && (p[1] & 0xC0) == 0x80 ? 2 : 0;
  if (c >= 0xE0 && c <= 0xEF) {
    if (left < 3 || (p[1] & 0xC0) != 0x80 || (p[2] & 0xC0) != 0x80) return 0;
    if (c == 0xE0 && p[1] < 0xA0) return 0;   // overlong
    if (c == 0xED && p[1] >= 0xA0) return 0;  // a surrogate
    return 3;
  }
  if (c >= 0xF0 && c <= 0xF4) {
    if (left < 4 || (p[1] & 0xC0) != 0x80 || (p[2] & 0xC0) != 0x80 || (p[3] & 0xC0) != 0x80) return 0;
    if (c == 0xF0 && p[1] < 0x90) return 0;   // overlong
    if (c == 0xF4 && p[1] >= 0x90) return 0;  // above U+10FFFF
    return 4;
  }
  return 0;
}

struct frame {
  uint32_t index;  // the container's node
  uint32_t count;  // its members or elements so far
  bool is_object;
};

// What the pass produces: the tape (building) or only the counts (checking).
struct tape_sink {
  static constexpr bool BUILD = true;
  detail::tape_data &d;
};
struct count_sink {
  static constexpr bool BUILD = false;
  stats s;
};

template <typename Sink>
class fast_parser {
 public:
  // `stack` has room for max_depth frames; building, `sink.d.tape` is sized to at least
  // tape_entries_bound(input) nodes.
  fast_parser(std::string_view input, size_t max_depth, Sink &sink, frame *stack)
      : base_(input.data()),
        p_(input.data()),
        end_(input.data() + input.size()),
        max_depth_(max_depth),
        sink_(sink),
        stack_(stack) {}

  /// Bytes of the string buffer written (building).
  size_t strings_used() const {
    if constexpr (Sink::BUILD) return static_cast<size_t>(out_ - sink_.d.strings.data());
    return 0;
  }
  /// Nodes written (building).
  size_t nodes_used() const { return static_cast<size_t>(t_ - tape_); }

  bool run() {
    depth_ = 0;
    // Checking writes nothing, but the write position still moves (as far as the input, never
    // beyond): pointing it into the input keeps that arithmetic within one object.
    if constexpr (Sink::BUILD) {
      out_ = sink_.d.strings.data();
      tape_ = t_ = sink_.d.tape.data();
    } else {
      out_ = const_cast<char *>(base_);
    }
    skip_space();
    if (p_ >= end_) return false;
    const bool root_literal = *p_ == 't' || *p_ == 'f' || *p_ == 'n';
    for (;;) {
      // A value starts at p_ (not past the end: every caller checked).
      switch (*p_) {
        case '{': {
          if (!open(true)) return false;
          ++p_;
          skip_space();
          const char c = peek();
          if (c == '}') {
            ++p_;
            close();
            break;
          }
          if (c != '"' || !key()) return false;
          continue;
        }
        case '[': {
          if (!open(false)) return false;
          ++p_;
          skip_space();
          const char c = peek();
          if (c == ']') {
            ++p_;
            close();
            break;
          }
          if (p_ >= end_) return false;
          ++top().count;
          continue;
        }
        case '"':
          if (!string_value()) return false;
          break;
        case 't':
          if (!literal("true", 4, kind::boolean, 1)) return false;
          break;
        case 'f':
          if (!literal("false", 5, kind::boolean, 0)) return false;
          break;
        case 'n':
          if (!literal("null", 4, kind::null_value, 0)) return false;
          break;
        default:
          if (!number()) return false;
          break;
      }
      // After a value: the next member or element, or the ends of containers.
      for (;;) {
        if (depth_ == 0) {
          // simdjson 3.0.1 judges a root literal by bytes past it (is_root_null reads json[5],
          // get_root_bool copies at most 6 bytes and calls more "not a boolean"), so `null `
          // and `true   ` are errors there: anything after a root literal is the reference's call.
          if (root_literal && p_ != end_) return false;
          skip_space();
          return p_ == end_;
        }
        skip_space();
        const char c = peek();
        frame &f = top();
        if (c == ',') {
          ++p_;
          skip_space();
          if (f.is_object) {
            if (peek() != '"' || !key()) return false;
          } else {
            if (p_ >= end_) return false;
            ++f.count;
          }
          break;
        }
        if (c != (f.is_object ? '}' : ']')) return false;
        ++p_;
        close();
      }
    }
  }

 private:
  const char *base_;
  const char *p_;
  const char *end_;
  size_t max_depth_;
  Sink &sink_;
  frame *stack_;  // the open containers: stack_[0] .. stack_[depth_ - 1]
  size_t depth_ = 0;
  char *out_ = nullptr;           // where the next unescaped string byte goes (building)
  detail::node *tape_ = nullptr;  // the tape's first node and the next one to write (building)
  detail::node *t_ = nullptr;

  frame &top() { return stack_[depth_ - 1]; }

  // The byte at p_, or 0 (which nothing expects) at the end.
  char peek() const { return p_ < end_ ? *p_ : '\0'; }

  uint32_t here() const { return static_cast<uint32_t>(p_ - base_); }

  QUIRE_INLINE void skip_space() {
    // Most documents are compact or indented: test the one byte before loading a block.
    if (p_ >= end_ || static_cast<unsigned char>(*p_) > ' ') return;
    for (;;) {
      const uint32_t m = block::load(p_).non_space();
      if (m != 0) {
        p_ += first_bit(m);
        if (p_ > end_) p_ = end_;
        return;
      }
      p_ += 16;
      if (p_ >= end_) {
        p_ = end_;
        return;
      }
    }
  }

  QUIRE_INLINE void push(uint32_t off, uint32_t start, uint32_t length, kind k, uint8_t flag) {
    const uint32_t index = static_cast<uint32_t>(t_ - tape_);
    *t_++ = detail::node{off, start, length, index + 1, static_cast<uint8_t>(k), flag};
  }

  QUIRE_INLINE bool open(bool is_object) {
    const size_t depth = depth_ + 1;
    if (depth > max_depth_) return false;
    if constexpr (Sink::BUILD) {
      detail::tape_data &d = sink_.d;
      if (depth > d.max_depth) d.max_depth = depth;
      ++d.value_count;
      stack_[depth_] = frame{static_cast<uint32_t>(t_ - tape_), 0, is_object};
      push(here(), 0, 0, is_object ? kind::object : kind::array, 0);
    } else {
      if (depth > sink_.s.max_depth) sink_.s.max_depth = depth;
      ++(is_object ? sink_.s.objects : sink_.s.arrays);
      stack_[depth_] = frame{0, 0, is_object};
    }
    depth_ = depth;
    return true;
  }

  QUIRE_INLINE void close() {
    if constexpr (Sink::BUILD) {
      const frame &f = top();
      tape_[f.index].length = f.count;
      tape_[f.index].next = static_cast<uint32_t>(t_ - tape_);
    }
    --depth_;
  }

  // A key at p_ (its quote), then the colon; leaves p_ at the member's value.
  QUIRE_INLINE bool key() {
    ++top().count;
    const uint32_t off = here();
    uint32_t start = 0, length = 0;
    if (!string(start, length)) return false;
    if constexpr (Sink::BUILD) {
      push(off, start, length, kind::string, 1);
    } else {
      ++sink_.s.keys;
    }
    skip_space();
    if (peek() != ':') return false;
    ++p_;
    skip_space();
    return p_ < end_;
  }

  QUIRE_INLINE bool string_value() {
    const uint32_t off = here();
    uint32_t start = 0, length = 0;
    if (!string(start, length)) return false;
    if constexpr (Sink::BUILD) {
      push(off, start, length, kind::string, 0);
      ++sink_.d.value_count;
    } else {
      ++sink_.s.strings;
    }
    return true;
  }

  // The string whose quote is at p_, unescaped into the string buffer: 16 bytes are copied per
  // step whatever they hold (the buffer has room: see json_parse.cpp) and the write position moves
  // on only over the bytes that belong to the string. Non-ASCII bytes are validated in place
  // (UTF-8 is copied as it is), so a block of text with accents or symbols is still one step.
  QUIRE_INLINE bool string(uint32_t &start, uint32_t &length) {
    ++p_;
    char *out = out_;
    for (;;) {
      const block b = block::load(p_);
      if constexpr (Sink::BUILD) b.store(out);
      const uint32_t high = b.high();
      const uint32_t stops = b.string_specials() & ~high;  // quote, backslash, control character
      const unsigned limit = stops != 0 ? first_bit(stops) : 16;
      const uint32_t before = (uint32_t{1} << limit) - 1;
      if ((high & before) != 0) {
        // Whole UTF-8 sequences up to the stop; one that runs past the block's end is finished
        // here (a stop byte is ASCII, so a sequence never runs into one: it would be invalid).
        unsigned i = first_bit(high & before);
        while (i < limit) {
          const char *q = p_ + i;
          if (q >= end_) return false;
          if (static_cast<unsigned char>(*q) < 0x80) {
            ++i;
            continue;
          }
          const size_t n =
              utf8_sequence(reinterpret_cast<const unsigned char *>(q), reinterpret_cast<const unsigned char *>(end_));
          if (n == 0) return false;
          i += static_cast<unsigned>(n);
        }
        if (i > limit) {  // only when there is no stop in this block
          if constexpr (Sink::BUILD) std::memcpy(out + 16, p_ + 16, i - 16);
          p_ += i;
          out += i;
          if (p_ >= end_) return false;
          continue;
        }
      }
      if (stops == 0) {
        p_ += 16;
        out += 16;
        if (p_ >= end_) return false;  // the string runs past the input
        continue;
      }
      p_ += limit;
      out += limit;
      if (p_ >= end_) return false;
      const char c = *p_;
      if (c == '"') {
        ++p_;
        break;
      }
      if (c != '\\' || !escape(out)) return false;  // else a control character: it must be escaped
    }
    if constexpr (Sink::BUILD) {
      start = static_cast<uint32_t>(out_ - sink_.d.strings.data());
      length = static_cast<uint32_t>(out - out_);
      out_ = out;
    }
    return true;
  }

  // The escape whose backslash is at p_; writes what it stands for at `out` and moves both on.
  bool escape(char *&out) {
    if (end_ - p_ < 2) return false;
    char c;
    switch (p_[1]) {
      case '"': c = '"'; break;
      case '\\': c = '\\'; break;
      case '/': c = '/'; break;
      case 'b': c = '\b'; break;
      case 'f': c = '\f'; break;
      case 'n': c = '\n'; break;
      case 'r': c = '\r'; break;
      case 't': c = '\t'; break;
      case 'u': return unicode_escape(out);
      default: return false;
    }
    if constexpr (Sink::BUILD) *out = c;
    ++out;
    p_ += 2;
    return true;
  }

  bool unicode_escape(char *&out) {
    if (end_ - p_ < 6) return false;
    uint32_t cp = hex4(p_ + 2);
    if (cp > 0xFFFF) return false;
    p_ += 6;
    if (cp >= 0xD800 && cp <= 0xDBFF) {
      // Only a high surrogate followed by a low one; anything else is the reference's to judge.
      if (end_ - p_ < 6 || p_[0] != '\\' || p_[1] != 'u') return false;
      const uint32_t low = hex4(p_ + 2);
      if (low < 0xDC00 || low > 0xDFFF) return false;
      cp = 0x10000 + ((cp - 0xD800) << 10) + (low - 0xDC00);
      p_ += 6;
    } else if (cp >= 0xDC00 && cp <= 0xDFFF) {
      return false;
    }
    char bytes[4];
    size_t n;
    if (cp < 0x80) {
      bytes[0] = static_cast<char>(cp);
      n = 1;
    } else if (cp < 0x800) {
      bytes[0] = static_cast<char>(0xC0 | (cp >> 6));
      bytes[1] = static_cast<char>(0x80 | (cp & 0x3F));
      n = 2;
    } else if (cp < 0x10000) {
      bytes[0] = static_cast<char>(0xE0 | (cp >> 12));
      bytes[1] = static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
      bytes[2] = static_cast<char>(0x80 | (cp & 0x3F));
      n = 3;
    } else {
      bytes[0] = static_cast<char>(0xF0 | (cp >> 18));
      bytes[1] = static_cast<char>(0x80 | ((cp >> 12) & 0x3F));
      bytes[2] = static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
      bytes[3] = static_cast<char>(0x80 | (cp & 0x3F));
      n = 4;
    }
    if constexpr (Sink::BUILD) std::memcpy(out, bytes, n);
    out += n;
    return true;
  }

  // `true`, `false` or `null`: the first four bytes compared as one word (and the fifth of
  // `false` alone). clang for wasm does not expand a memcmp of constant length as g++ does
  // natively: libc's byte loop was called per literal (0.6% of json.parse/records in Node).
  QUIRE_INLINE bool literal(const char *word, size_t n, kind k, uint8_t flag) {
    const uint32_t off = here();
    if (static_cast<size_t>(end_ - p_) < n) return false;
    uint32_t have, want;
    std::memcpy(&have, p_, 4);
    std::memcpy(&want, word, 4);
    if (have != want || (n == 5 && p_[4] != word[4])) return false;
    p_ += n;
    // What follows is checked by the caller: only space, `,`, `]`, `}` or the end may.
    if constexpr (Sink::BUILD) {
      push(off, 0, 0, k, flag);
      ++sink_.d.value_count;
    } else {
      ++(k == kind::boolean ? sink_.s.booleans : sink_.s.nulls);
    }
    return true;
  }

  // JSON's number grammar (json_walk.h's valid_number): -?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?
  // The caller then requires a delimiter after it, so `01`, `1x` and `1.5.3` go to the reference.
  QUIRE_INLINE bool number() {
    const char *start = p_;
    if (peek() == '-') ++p_;
    const char first = peek();
    if (first == '0') {
      ++p_;
    } else if (first >= '1' && first <= '9') {
      ++p_;
      while (p_ < end_ && is_digit(*p_)) ++p_;
    } else {
      return false;
    }
    bool is_integer = true;
    if (peek() == '.') {
      is_integer = false;
      ++p_;
      if (!is_digit(peek())) return false;
      while (p_ < end_ && is_digit(*p_)) ++p_;
    }
    if ((peek() | 0x20) == 'e') {
      is_integer = false;
      ++p_;
      if (peek() == '+' || peek() == '-') ++p_;
      if (!is_digit(peek())) return false;
      while (p_ < end_ && is_digit(*p_)) ++p_;
    }
    if constexpr (Sink::BUILD) {
      const uint32_t off = static_cast<uint32_t>(start - base_);
      push(off, off, static_cast<uint32_t>(p_ - start), kind::number, is_integer ? 1 : 0);
      ++sink_.d.value_count;
    } else {
      ++sink_.s.numbers;
    }
    return true;
  }
};

size_t effective_depth(const limits &lim) { return lim.max_depth < HARD_MAX_DEPTH ? lim.max_depth : HARD_MAX_DEPTH; }

// The open containers, one thread's, sized once for the deepest nesting allowed (48 KiB), so that
// no call allocates and the parser indexes it without growth checks.
frame *thread_stack() {
  thread_local std::vector<frame> stack(HARD_MAX_DEPTH + 1);
  return stack.data();
}

}  // namespace

bool fast_build(std::string_view padded, const limits &lim, detail::tape_data &data) {
  data.max_depth = 0;
  data.value_count = 0;
  // Sized to what the caller reserved (so no allocation, and no zeroing: the allocator leaves the
  // elements uninitialized) and written through pointers. The tape's capacity is at least
  // tape_entries_bound(padded), which counts nodes even for the part of a bad input parsed before
  // the parser declines; the strings need room for the 16-byte stores: no string is longer
  // unescaped than written, so the writes stay below input.size() + FAST_STRING_SLACK.
  data.tape.resize(data.tape.capacity());
  data.strings.resize(data.strings.capacity());
  tape_sink sink{data};
  fast_parser<tape_sink> parser(padded, effective_depth(lim), sink, thread_stack());
  if (!parser.run()) {
    data.tape.clear();
    data.strings.clear();
    data.max_depth = 0;
    data.value_count = 0;
    return false;
  }
  data.tape.resize(parser.nodes_used());
  data.strings.resize(parser.strings_used());
  return true;
}

bool fast_check(std::string_view padded, const limits &lim, stats &out) {
  count_sink sink{};
  fast_parser<count_sink> parser(padded, effective_depth(lim), sink, thread_stack());
  if (!parser.run()) return false;
  out = sink.s;
  out.bytes = padded.size();
  return true;
}

}  // namespace quire::json
