// The JSON walk of one simdjson kernel, included by json_parse.cpp (the baseline kernel, the
// only one in wasm) and by json_parse_haswell.cpp (AVX2, native x86-64 only, chosen at run time).
// simdjson 3.0.1's On-Demand API exists only for the kernel a translation unit is compiled for,
// so each kernel is its own translation unit; everything here has internal linkage except the
// three entry points named by QUIRE_KERNEL_FN.
//
// On-Demand rather than simdjson's DOM because it gives every value's place in the input (for
// error locations, and FHIR issues' line and column) and numbers' raw text (DOM keeps only the
// parsed double or integer, which loses `0.700` and big integers).
#pragma once

#include <charconv>
#include <cstring>
#include <limits>
#include <utility>
#include <vector>

#include "json_internal.h"
#include "simdjson.h"

namespace quire::json {
namespace {

namespace od = simdjson::ondemand;
using simdjson::error_code;

// simdjson's read-ahead: parsed buffers must have this many readable bytes after their end.
constexpr size_t PADDING = simdjson::SIMDJSON_PADDING;
// Our own recursion is bounded by max_depth; this cap keeps a caller's limit from overflowing the
// stack (wasm's is 5 MiB in Emscripten 3.1.6).
constexpr size_t HARD_MAX_DEPTH = 4096;
constexpr uint64_t HARD_MAX_BYTES = std::numeric_limits<uint32_t>::max() - PADDING;

bool is_json_space(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r'; }

std::string_view trim_right(std::string_view s) {
  while (!s.empty() && is_json_space(s.back())) s.remove_suffix(1);
  return s;
}

quire::error_code map_error(error_code e) {
  switch (e) {
    case simdjson::UTF8_ERROR: return quire::error_code::INVALID_UTF8;
    case simdjson::DEPTH_ERROR: return quire::error_code::MAX_DEPTH_EXCEEDED;
    case simdjson::CAPACITY: return quire::error_code::DOCUMENT_TOO_LARGE;
    case simdjson::MEMALLOC: return quire::error_code::OUT_OF_MEMORY;
    case simdjson::EMPTY: return quire::error_code::EMPTY_INPUT;
    case simdjson::STRING_ERROR:
    case simdjson::UNESCAPED_CHARS:
    case simdjson::UNCLOSED_STRING: return quire::error_code::INVALID_STRING;
    case simdjson::NUMBER_ERROR: return quire::error_code::INVALID_NUMBER;
    case simdjson::TRAILING_CONTENT: return quire::error_code::TRAILING_CONTENT;
    default: return quire::error_code::INVALID_JSON;
  }
}

const char *describe_simdjson(error_code e) {
  switch (e) {
    case simdjson::TAPE_ERROR: return "unexpected character or structure";
    case simdjson::INCOMPLETE_ARRAY_OR_OBJECT: return "the document ends inside an array or object";
    case simdjson::T_ATOM_ERROR: return "expected 'true'";
    case simdjson::F_ATOM_ERROR: return "expected 'false'";
    case simdjson::N_ATOM_ERROR: return "expected 'null'";
    case simdjson::INCORRECT_TYPE: return "unexpected value";
    default: return simdjson::error_message(e);
  }
}

// JSON's number grammar: -?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?
// Checked on the raw text so that numbers of any size are accepted and kept exactly.
bool valid_number(std::string_view s, bool &is_integer) {
  size_t i = 0, n = s.size();
  if (i < n && s[i] == '-') ++i;
  if (i >= n) return false;
  if (s[i] == '0') {
    ++i;
  } else if (s[i] >= '1' && s[i] <= '9') {
    while (i < n && s[i] >= '0' && s[i] <= '9') ++i;
  } else {
    return false;
  }
  is_integer = true;
  if (i < n && s[i] == '.') {
    is_integer = false;
    ++i;
    size_t digits = i;
    while (i < n && s[i] >= '0' && s[i] <= '9') ++i;
    if (i == digits) return false;
  }
  if (i < n && (s[i] == 'e' || s[i] == 'E')) {
    is_integer = false;
    ++i;
    if (i < n && (s[i] == '+' || s[i] == '-')) ++i;
    size_t digits = i;
    while (i < n && s[i] >= '0' && s[i] <= '9') ++i;
    if (i == digits) return false;
  }
  return i == n;
}

// One thread's simdjson parser, reused between calls so its buffers are allocated once.
od::parser &thread_parser() {
  thread_local od::parser parser;
  return parser;
}

// Walks a document with an explicit stack of open containers, not recursion: a hostile nesting
// depth costs heap (bounded by max_depth), never the call stack — in wasm the call stack is
// V8's, about 1 MB, and a few hundred levels of recursion through simdjson's inlined iterators
// exhausted it.
template <typename Visitor>
class walker {
 public:
  walker(Visitor &visitor, const char *base, size_t length, size_t max_depth)
      : vis_(visitor), base_(base), length_(length), max_depth_(max_depth) {
    // One allocation for the nesting of most documents (a FHIR resource is rarely deeper than
    // 16), instead of one per doubling: many small documents (NDJSON lines) each paid four or five.
    stack_.reserve(16);
  }

  quire::error err;

  bool walk_document(od::document &doc) {
    doc_ = &doc;
    od::json_type type;
    if (auto e = doc.type().get(type)) return fail(e);
    switch (type) {
      case od::json_type::object: {
        uint32_t off = here();
        od::object obj;
        if (auto e = doc.get_object().get(obj)) return fail(e);
        if (!open_object(obj, off) || !drain()) return false;
        break;
      }
      case od::json_type::array: {
        uint32_t off = here();
        od::array arr;
        if (auto e = doc.get_array().get(arr)) return fail(e);
        if (!open_array(arr, off) || !drain()) return false;
        break;
      }
      case od::json_type::number: {
        std::string_view raw;
        if (auto e = doc.raw_json_token().get(raw)) return fail(e);
        uint32_t off = static_cast<uint32_t>(raw.data() - base_);
        if (!number(trim_right(raw), off)) return false;
        // A root number is not consumed by raw_json_token(): look past it ourselves.
        for (size_t i = off + raw.size(); i < length_; ++i) {
          if (!is_json_space(base_[i]))
            return fail_at(quire::error_code::TRAILING_CONTENT, "content after the document's value", i);
        }
        return true;
      }
      case od::json_type::string: {
        uint32_t off = here();
        std::string_view s;
        if (auto e = doc.get_string().get(s)) return fail(e);
        vis_.on_string(off, s);
        break;
      }
      case od::json_type::boolean: {
        uint32_t off = here();
        bool b;
        if (auto e = doc.get_bool().get(b)) return fail(e);
        vis_.on_bool(off, b);
        break;
      }
      case od::json_type::null: {
        uint32_t off = here();
        bool is_null = false;
        if (auto e = doc.is_null().get(is_null)) return fail(e);
        if (!is_null) return fail_at(quire::error_code::INVALID_JSON, "expected 'null'", off);
        vis_.on_null(off);
        break;
      }
    }
    // current_location() fails with OUT_OF_BOUNDS exactly when nothing is left after the value.
    const char *rest = nullptr;
    if (!doc.current_location().get(rest) && rest != nullptr && rest < base_ + length_) {
      return fail_at(quire::error_code::TRAILING_CONTENT, "content after the document's value",
                     static_cast<uint64_t>(rest - base_));
    }
    return true;
  }

 private:
  using token = decltype(std::declval<Visitor &>().begin_object(0u, size_t{0}));
  struct frame {
    bool is_object = false;
    bool started = false;
    od::object_iterator field, fields_end;
    od::array_iterator element, elements_end;
    token visitor_token{};
    uint32_t count = 0;
  };

  Visitor &vis_;
  const char *base_;
  size_t length_;
  size_t max_depth_;
  od::document *doc_ = nullptr;
  std::vector<frame> stack_;

  uint32_t here() {
    const char *p = nullptr;
    if (doc_->current_location().get(p) || p == nullptr) return static_cast<uint32_t>(length_);
    return static_cast<uint32_t>(p - base_);
  }

  bool fail_at(quire::error_code code, std::string message, uint64_t offset) {
    if (err.code == quire::error_code::OK) err = quire::error(code, std::move(message), offset);
    return false;
  }
  bool fail(error_code e) {
    uint64_t off = e == simdjson::INCOMPLETE_ARRAY_OR_OBJECT ? length_ : here();  // ended early: report the end
    return fail_at(map_error(e), describe_simdjson(e), off);
  }

  bool number(std::string_view text, uint32_t off) {
    bool is_integer = false;
    if (!valid_number(text, is_integer))
      return fail_at(quire::error_code::INVALID_NUMBER, "not a JSON number: '" + std::string(text.substr(0, 40)) + "'",
                     off);
    vis_.on_number(off, text, is_integer);
    return true;
  }

  bool enter(uint32_t off) {
    if (stack_.size() + 1 > max_depth_) {
      return fail_at(quire::error_code::MAX_DEPTH_EXCEEDED, "nesting deeper than " + std::to_string(max_depth_), off);
    }
    return true;
  }

  bool open_object(od::object &obj, uint32_t off) {
    if (!enter(off)) return false;
    frame f;
    f.is_object = true;
    if (auto e = obj.begin().get(f.field)) return fail(e);
    if (auto e = obj.end().get(f.fields_end)) return fail(e);
    f.visitor_token = vis_.begin_object(off, stack_.size() + 1);
    stack_.push_back(f);
    return true;
  }

  bool open_array(od::array &arr, uint32_t off) {
    if (!enter(off)) return false;
    frame f;
    if (auto e = arr.begin().get(f.element)) return fail(e);
    if (auto e = arr.end().get(f.elements_end)) return fail(e);
    f.visitor_token = vis_.begin_array(off, stack_.size() + 1);
    stack_.push_back(f);
    return true;
  }

  // Visits one value; a container is opened (pushed) and its children come in later turns of drain().
  bool visit(od::value v) {
    uint32_t off = here();
    od::json_type type;
    if (auto e = v.type().get(type)) return fail(e);
    switch (type) {
      case od::json_type::object: {
        od::object obj;
        if (auto e = v.get_object().get(obj)) return fail(e);
        return open_object(obj, off);
      }
      case od::json_type::array: {
        od::array arr;
        if (auto e = v.get_array().get(arr)) return fail(e);
        return open_array(arr, off);
      }
      case od::json_type::number: return number(trim_right(v.raw_json_token()), off);
      case od::json_type::string: {
        std::string_view s;
        if (auto e = v.get_string().get(s)) return fail(e);
        vis_.on_string(off, s);
        return true;
      }
      case od::json_type::boolean: {
        bool b;
        if (auto e = v.get_bool().get(b)) return fail(e);
        vis_.on_bool(off, b);
        return true;
      }
      case od::json_type::null: {
        bool is_null = false;
        if (auto e = v.is_null().get(is_null)) return fail(e);
        if (!is_null) return fail_at(quire::error_code::INVALID_JSON, "expected 'null'", off);
        vis_.on_null(off);
        return true;
      }
    }
    return fail_at(quire::error_code::INVALID_JSON, "unexpected character", off);
  }

  // Runs until every open container is closed. A parent's iterator advances only once the child it
  // points at is wholly consumed, as On-Demand requires.
  bool drain() {
    while (!stack_.empty()) {
      frame &f = stack_.back();
      if (f.is_object) {
        if (f.started) ++f.field;
        f.started = true;
        if (!(f.field != f.fields_end)) {
          vis_.end_object(f.visitor_token, f.count);
          stack_.pop_back();
          continue;
        }
        ++f.count;
        uint32_t key_off = here();
        od::field field;
        if (auto e = (*f.field).get(field)) return fail(e);
        std::string_view key;
        if (auto e = field.unescaped_key().get(key)) return fail(e);
        vis_.on_key(key_off, key);
        if (!visit(field.value())) return false;
      } else {
        if (f.started) ++f.element;
        f.started = true;
        if (!(f.element != f.elements_end)) {
          vis_.end_array(f.visitor_token, f.count);
          stack_.pop_back();
          continue;
        }
        ++f.count;
        od::value v;
        if (auto e = (*f.element).get(v)) return fail(e);
        if (!visit(v)) return false;
      }
    }
    return true;
  }
};

// Counts values by kind (check()).
struct counter {
  stats s;
  void on_null(uint32_t) { ++s.nulls; }
  void on_bool(uint32_t, bool) { ++s.booleans; }
  void on_number(uint32_t, std::string_view, bool) { ++s.numbers; }
  void on_string(uint32_t, std::string_view) { ++s.strings; }
  void on_key(uint32_t, std::string_view) { ++s.keys; }
  int begin_object(uint32_t, size_t depth) {
    ++s.objects;
    if (depth > s.max_depth) s.max_depth = depth;
    return 0;
  }
  int begin_array(uint32_t, size_t depth) {
    ++s.arrays;
    if (depth > s.max_depth) s.max_depth = depth;
    return 0;
  }
  void end_object(int, uint32_t) {}
  void end_array(int, uint32_t) {}
};

// Builds the tape (parse()).
struct tape_builder {
  detail::tape_data &d;
  void push(uint32_t off, uint32_t start, uint32_t length, kind k, uint8_t flag) {
    uint32_t index = static_cast<uint32_t>(d.tape.size());
    d.tape.push_back(detail::node{off, start, length, index + 1, static_cast<uint8_t>(k), flag});
  }
  uint32_t add_string(std::string_view s) {
    uint32_t start = static_cast<uint32_t>(d.strings.size());
    d.strings.insert(d.strings.end(), s.begin(), s.end());
    return start;
  }
  void on_null(uint32_t off) {
    push(off, 0, 0, kind::null_value, 0);
    ++d.value_count;
  }
  void on_bool(uint32_t off, bool b) {
    push(off, 0, 0, kind::boolean, b ? 1 : 0);
    ++d.value_count;
  }
  void on_number(uint32_t off, std::string_view text, bool is_integer) {
    push(off, static_cast<uint32_t>(text.data() - d.input.data()), static_cast<uint32_t>(text.size()), kind::number,
         is_integer ? 1 : 0);
    ++d.value_count;
  }
  void on_string(uint32_t off, std::string_view s) {
    push(off, add_string(s), static_cast<uint32_t>(s.size()), kind::string, 0);
    ++d.value_count;
  }
  void on_key(uint32_t off, std::string_view s) {
    push(off, add_string(s), static_cast<uint32_t>(s.size()), kind::string, 1);
  }
  uint32_t begin_object(uint32_t off, size_t depth) { return begin(off, depth, kind::object); }
  uint32_t begin_array(uint32_t off, size_t depth) { return begin(off, depth, kind::array); }
  uint32_t begin(uint32_t off, size_t depth, kind k) {
    if (depth > d.max_depth) d.max_depth = depth;
    uint32_t index = static_cast<uint32_t>(d.tape.size());
    push(off, 0, 0, k, 0);
    ++d.value_count;
    return index;
  }
  void end_object(uint32_t index, uint32_t count) { finish(index, count); }
  void end_array(uint32_t index, uint32_t count) { finish(index, count); }
  void finish(uint32_t index, uint32_t count) {
    d.tape[index].length = count;
    d.tape[index].next = static_cast<uint32_t>(d.tape.size());
  }
};

// The parse and check of one kernel: the whole input is padded, limits already checked.
template <typename Visitor>
result<void> walk_input(std::string_view input, const limits &lim, Visitor &visitor) {
  size_t max_depth = lim.max_depth < HARD_MAX_DEPTH ? lim.max_depth : HARD_MAX_DEPTH;
  od::parser &parser = thread_parser();
  od::document doc;
  walker<Visitor> w(visitor, input.data(), input.size(), max_depth);
  auto e = parser.iterate(input.data(), input.size(), input.size() + PADDING).get(doc);
  if (e) {
    // Stage 1 failures (bad UTF-8, unclosed strings, no content) carry no location.
    quire::error err(map_error(e), describe_simdjson(e), e == simdjson::EMPTY ? 0 : quire::error::NO_OFFSET);
    if (e == simdjson::EMPTY) err.message = "no JSON value in the input";
    if (e == simdjson::UNCLOSED_STRING) err.message = "a string has no closing quote";
    return err;
  }
  if (!w.walk_document(doc)) return std::move(w.err);
  return {};
}

}  // namespace

// This kernel's entry points (declared in json_internal.h).
result<stats> QUIRE_KERNEL_FN(check)(std::string_view padded, const limits &lim) {
  counter c;
  auto r = walk_input(padded, lim, c);
  if (!r) return std::move(r).error();
  c.s.bytes = padded.size();
  return c.s;
}

result<void> QUIRE_KERNEL_FN(build)(std::string_view padded, const limits &lim, detail::tape_data &data) {
  tape_builder builder{data};
  return walk_input(padded, lim, builder);
}

#define QUIRE_JSON_STRINGIFY2(x) #x
#define QUIRE_JSON_STRINGIFY(x) QUIRE_JSON_STRINGIFY2(x)
// The kernel this file was compiled for (simdjson::builtin_implementation() is compiled into
// simdjson.cpp, so it would name the baseline's).
std::string_view QUIRE_KERNEL_FN(name)() noexcept { return QUIRE_JSON_STRINGIFY(SIMDJSON_BUILTIN_IMPLEMENTATION); }

}  // namespace quire::json
