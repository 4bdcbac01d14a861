// hl7v2_escape.cpp — HL7 v2 escape sequences (v2.9 chapter 2.7), decoded and encoded.

#include <algorithm>

#include "hl7v2_internal.h"

namespace quire::hl7v2 {

namespace {

int hex_value(char c) noexcept {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  return -1;
}

bool all_hex(std::string_view s) noexcept {
  return std::all_of(s.begin(), s.end(), [](char c) { return hex_value(c) >= 0; });
}

bool all_digits(std::string_view s) noexcept {
  return std::all_of(s.begin(), s.end(), [](char c) { return c >= '0' && c <= '9'; });
}

// The formatting commands of FT (\.sp\ ...), except \.br\ which the decoder turns into "\n".
// sp, sk take an optional count, in and ti an optional signed count.
bool is_kept_formatting(std::string_view body) noexcept {
  if (body == ".fi" || body == ".nf" || body == ".ce") return true;
  if (body.size() < 3) return false;
  const std::string_view name = body.substr(0, 3), arg = body.substr(3);
  if (name == ".sp" || name == ".sk") return all_digits(arg);
  if (name == ".in" || name == ".ti") {
    const std::string_view digits = !arg.empty() && (arg[0] == '+' || arg[0] == '-') ? arg.substr(1) : arg;
    return all_digits(digits) && !(digits.empty() && !arg.empty());
  }
  return false;
}

enum class kind : uint8_t { UNKNOWN, DECODED, KEPT };

// Classifies the body of one escape sequence (the text between the escape characters) and
// appends its decoded form when it has one.
kind decode_one(std::string_view body, const delimiters &d, std::string *out) {
  if (body.size() == 1) {
    char c = delimiters::NONE;
    switch (body[0]) {
      case 'F': c = d.field; break;
      case 'S': c = d.component; break;
      case 'T': c = d.subcomponent; break;
      case 'R': c = d.repetition; break;
      case 'E': c = d.escape; break;
      case 'P': c = d.truncation; break;
      case 'H':
      case 'N': return kind::KEPT;
      default: return kind::UNKNOWN;
    }
    // A sequence naming a role this message has no character for cannot be decoded.
    if (c == delimiters::NONE) return kind::UNKNOWN;
    if (out) out->push_back(c);
    return kind::DECODED;
  }
  if (body.empty()) return kind::UNKNOWN;
  const std::string_view arg = body.substr(1);
  switch (body[0]) {
    case 'X':
      if (arg.empty() || arg.size() % 2 != 0 || !all_hex(arg)) return kind::UNKNOWN;
      if (out) {
        for (size_t k = 0; k < arg.size(); k += 2)
          out->push_back(static_cast<char>(hex_value(arg[k]) * 16 + hex_value(arg[k + 1])));
      }
      return kind::DECODED;
    case 'C': return arg.size() == 4 && all_hex(arg) ? kind::KEPT : kind::UNKNOWN;
    case 'M': return (arg.size() == 4 || arg.size() == 6) && all_hex(arg) ? kind::KEPT : kind::UNKNOWN;
    case 'Z': return kind::KEPT;  // locally defined: nothing to decode it to
    case '.':
      if (body == ".br") {
        if (out) out->push_back('\n');
        return kind::DECODED;
      }
      return is_kept_formatting(body) ? kind::KEPT : kind::UNKNOWN;
    default: return kind::UNKNOWN;
  }
}

}  // namespace

namespace detail {

result<void> unescape_into(std::string_view text, const delimiters &d, bool strict, std::string *out) {
  const char esc = d.escape;
  if (esc == delimiters::NONE) {
    if (out) out->append(text);
    return {};
  }
  if (out) out->reserve(out->size() + text.size());
  size_t i = 0;
  while (i < text.size()) {
    const size_t start = text.find(esc, i);
    if (out) out->append(text.substr(i, (start == std::string_view::npos ? text.size() : start) - i));
    if (start == std::string_view::npos) break;
    const size_t close = text.find(esc, start + 1);
    if (close == std::string_view::npos) {
      if (strict) return quire::error(error_code::INVALID_ESCAPE, "unterminated escape sequence", start);
      if (out) out->append(text.substr(start));
      break;
    }
    const std::string_view body = text.substr(start + 1, close - start - 1);
    switch (decode_one(body, d, out)) {
      case kind::DECODED: i = close + 1; break;
      case kind::KEPT:
        if (out) out->append(text.substr(start, close + 1 - start));
        i = close + 1;
        break;
      case kind::UNKNOWN:
        if (strict)
          return quire::error(error_code::INVALID_ESCAPE,
                              "unknown escape sequence \"" + std::string(body.substr(0, 16)) + "\"", start);
        // Keep only the escape character and read on from the next byte: a stray escape
        // character (a Windows path in free text) then does not swallow a real sequence after it.
        if (out) out->push_back(esc);
        i = start + 1;
        break;
    }
  }
  return {};
}

}  // namespace detail

result<std::string> unescape(std::string_view text, const delimiters &delims, bool strict) {
  std::string out;
  if (auto r = detail::unescape_into(text, delims, strict, &out); !r) return std::move(r).error();
  return out;
}

std::string escape(std::string_view text, const delimiters &d) {
  static constexpr char HEX[] = "0123456789ABCDEF";
  std::string out;
  out.reserve(text.size() + text.size() / 8);
  const bool can_escape = d.escape != delimiters::NONE;
  for (const char c : text) {
    char code = 0;
    if (c == d.field) code = 'F';
    else if (c == d.component && c != delimiters::NONE) code = 'S';
    else if (c == d.subcomponent && c != delimiters::NONE) code = 'T';
    else if (c == d.repetition && c != delimiters::NONE) code = 'R';
    else if (c == d.escape && c != delimiters::NONE) code = 'E';
    else if (c == d.truncation && c != delimiters::NONE) code = 'P';
    const auto u = static_cast<unsigned char>(c);
    const bool control = u < 0x20 || u == 0x7F;
    if (code == 0 && !control) {
      out.push_back(c);
    } else if (!can_escape) {
      out.push_back(' ');
    } else if (code != 0) {
      out += d.escape;
      out += code;
      out += d.escape;
    } else {
      out += d.escape;
      out += 'X';
      out += HEX[u >> 4];
      out += HEX[u & 15];
      out += d.escape;
    }
  }
  return out;
}

}  // namespace quire::hl7v2
