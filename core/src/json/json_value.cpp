// Reading a parsed document: values, objects, arrays, JSON Pointers, and writing JSON back.
#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <string>

#include "../common/text_words.h"
#include "json_internal.h"

namespace quire::json {
namespace {

const detail::node &node_at(const detail::tape_data *d, uint32_t i) { return d->tape[i]; }

}  // namespace

quire::error detail::wrong_type(const detail::tape_data *d, uint32_t i, std::string_view wanted) {
  const auto &n = node_at(d, i);
  return quire::error(
      error_code::WRONG_TYPE,
      "expected " + std::string(wanted) + ", found " + std::string(kind_name(static_cast<kind>(n.type))), n.offset);
}

std::string_view kind_name(kind k) noexcept {
  switch (k) {
    case kind::null_value: return "null";
    case kind::boolean: return "boolean";
    case kind::number: return "number";
    case kind::string: return "string";
    case kind::array: return "array";
    case kind::object: return "object";
  }
  return "unknown";
}

result<double> value::get_double() const {
  auto text = get_number_text();
  if (!text) return std::move(text).error();
  // strtod on a bounded copy: from_chars for double is missing from some standard libraries, and
  // the text is valid JSON, which strtod reads exactly (nearest double, inf on overflow).
  std::string copy(text.value());
  return std::strtod(copy.c_str(), nullptr);
}

result<int64_t> value::get_int64() const {
  const auto &n = node_at(doc(), index());
  auto text = get_number_text();
  if (!text) return std::move(text).error();
  if (!n.flag)
    return quire::error(error_code::WRONG_TYPE, "expected an integer, found " + std::string(text.value()), n.offset);
  int64_t v = 0;
  auto [ptr, ec] = std::from_chars(text->data(), text->data() + text->size(), v);
  if (ec != std::errc() || ptr != text->data() + text->size()) {
    return quire::error(error_code::OUT_OF_RANGE,
                        "integer does not fit in 64 bits: " + std::string(text->substr(0, 40)), n.offset);
  }
  return v;
}

result<std::optional<value>> value::at_pointer(std::string_view pointer) const {
  value current = *this;
  if (pointer.empty()) return std::optional<value>(current);
  if (pointer[0] != '/')
    return quire::error(error_code::INVALID_ARGUMENT, "a JSON Pointer starts with '/': " + std::string(pointer));
  size_t pos = 1;
  while (true) {
    size_t end = pointer.find('/', pos);
    std::string_view raw = pointer.substr(pos, end == std::string_view::npos ? std::string_view::npos : end - pos);
    std::string token;
    for (size_t i = 0; i < raw.size(); ++i) {
      if (raw[i] == '~') {
        if (i + 1 < raw.size() && raw[i + 1] == '0') token += '~';
        else if (i + 1 < raw.size() && raw[i + 1] == '1') token += '/';
        else
          return quire::error(error_code::INVALID_ARGUMENT, "bad '~' escape in JSON Pointer: " + std::string(pointer));
        ++i;
      } else {
        token += raw[i];
      }
    }
    if (current.type() == kind::object) {
      auto found = object(current.doc(), current.index()).find(token);
      if (!found) return std::optional<value>();
      current = *found;
    } else if (current.type() == kind::array) {
      size_t index = 0;
      auto [ptr, ec] = std::from_chars(token.data(), token.data() + token.size(), index);
      if (token.empty() || ec != std::errc() || ptr != token.data() + token.size() ||
          (token.size() > 1 && token[0] == '0')) {
        return std::optional<value>();
      }
      auto found = array(current.doc(), current.index()).at(index);
      if (!found) return std::optional<value>();
      current = *found;
    } else {
      return std::optional<value>();
    }
    if (end == std::string_view::npos) break;
    pos = end + 1;
  }
  return std::optional<value>(current);
}

uint64_t object::offset() const noexcept { return node_at(doc(), index()).offset; }

std::optional<value> object::find(std::string_view key) const noexcept {
  // Lengths decide most members, and the rest compare by words, without a call of memcmp.
  for (auto m : *this) {
    if (quire::detail::same_text(m.key, key)) return m.val;
  }
  return std::nullopt;
}

uint64_t array::offset() const noexcept { return node_at(doc(), index()).offset; }

std::optional<value> array::at(size_t i) const noexcept {
  size_t k = 0;
  for (auto v : *this) {
    if (k++ == i) return v;
  }
  return std::nullopt;
}

size_t document::memory_bytes() const noexcept {
  if (!data_) return 0;
  size_t n = data_->tape.capacity() * sizeof(detail::node) + data_->strings.capacity();
  if (data_->owned_input) n += data_->owned_capacity ? data_->owned_capacity : data_->input.size();
  return n;
}

namespace {
// Whether any of eight bytes is below 0x20, `"` or `\\` (exact for presence: each test sets a
// byte's high bit only when some byte of the word is such a byte).
inline bool word_needs_escape(uint64_t w) noexcept {
  constexpr uint64_t ONES = 0x0101010101010101ull, HIGH = 0x8080808080808080ull;
  const uint64_t quote = w ^ (ONES * '"'), backslash = w ^ (ONES * '\\');
  return (((w - ONES * 0x20) & ~w) | ((quote - ONES) & ~quote) | ((backslash - ONES) & ~backslash)) & HIGH;
}
}  // namespace

void append_quoted(std::string &out, std::string_view s) {
  static const char *hex = "0123456789abcdef";
  // Grown geometrically by hand: libc++'s reserve() gives exactly what is asked, which would make
  // appending many strings to one buffer quadratic.
  const size_t need = out.size() + s.size() + 2;
  if (need > out.capacity()) out.reserve(std::max(need, 2 * out.capacity()));
  out += '"';
  // Bytes that need no escape (most of a resource's text) are skipped eight at a time and copied
  // in runs; only an escaped byte is written on its own.
  size_t copied = 0, i = 0;
  while (i < s.size()) {
    if (i + 8 <= s.size()) {
      uint64_t w;
      std::memcpy(&w, s.data() + i, 8);
      if (!word_needs_escape(w)) {
        i += 8;
        continue;
      }
    }
    const auto c = static_cast<unsigned char>(s[i]);
    if (c >= 0x20 && c != '"' && c != '\\') {
      ++i;
      continue;
    }
    out.append(s.data() + copied, i - copied);
    switch (c) {
      case '"': out += "\\\""; break;
      case '\\': out += "\\\\"; break;
      case '\n': out += "\\n"; break;
      case '\r': out += "\\r"; break;
      case '\t': out += "\\t"; break;
      case '\b': out += "\\b"; break;
      case '\f': out += "\\f"; break;
      default:
        out += "\\u00";
        out += hex[c >> 4];
        out += hex[c & 15];
    }
    copied = ++i;
  }
  out.append(s.data() + copied, s.size() - copied);
  out += '"';
}

namespace {
void write_value(std::string &out, const value &v) {
  switch (v.type()) {
    case kind::null_value: out += "null"; break;
    case kind::boolean: out += v.get_bool().value() ? "true" : "false"; break;
    case kind::number: out += v.get_number_text().value(); break;
    case kind::string: append_quoted(out, v.get_string().value()); break;
    case kind::array: {
      out += '[';
      bool first = true;
      for (auto e : v.get_array().value()) {
        if (!first) out += ',';
        first = false;
        write_value(out, e);
      }
      out += ']';
      break;
    }
    case kind::object: {
      out += '{';
      bool first = true;
      for (auto m : v.get_object().value()) {
        if (!first) out += ',';
        first = false;
        append_quoted(out, m.key);
        out += ':';
        write_value(out, m.val);
      }
      out += '}';
      break;
    }
  }
}
}  // namespace

std::string to_json(const value &v) {
  std::string out;
  write_value(out, v);
  return out;
}

}  // namespace quire::json
