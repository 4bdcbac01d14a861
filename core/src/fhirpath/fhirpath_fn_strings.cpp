// String manipulation (N1 "String Manipulation", and FHIRPath 2's additions: encode(), decode(),
// escape(), unescape(), trim(), split(), join()). Positions and lengths count code points; the
// regular expressions (matches(), replaceMatches()) are fhirpath_fn_matches.cpp's.
#include <cstdio>

#include "../common/utf8.h"
#include "fhirpath_engine.h"

namespace quire::fhirpath {

namespace {
const char B64[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
std::string base64_encode(std::string_view s, bool url) {
  std::string out;
  for (size_t i = 0; i < s.size(); i += 3) {
    size_t n = std::min<size_t>(3, s.size() - i);
    uint32_t v = static_cast<uint32_t>(static_cast<unsigned char>(s[i])) << 16;
    if (n > 1) v |= static_cast<uint32_t>(static_cast<unsigned char>(s[i + 1])) << 8;
    if (n > 2) v |= static_cast<unsigned char>(s[i + 2]);
    for (size_t k = 0; k < 4; ++k) {
      if (k > n) {
        out += '=';
        continue;
      }
      char c = B64[(v >> (18 - 6 * k)) & 63];
      if (url && c == '+') c = '-';
      if (url && c == '/') c = '_';
      out += c;
    }
  }
  return out;
}
/// The value of a hexadecimal digit (either case), or -1.
int hex_digit(char c) {
  return c >= '0' && c <= '9'   ? c - '0'
         : c >= 'a' && c <= 'f' ? c - 'a' + 10
         : c >= 'A' && c <= 'F' ? c - 'A' + 10
                                : -1;
}
bool base64_decode(std::string_view s, std::string &out) {
  uint32_t acc = 0;
  int bits = 0;
  for (char c : s) {
    int v;
    if (c >= 'A' && c <= 'Z') v = c - 'A';
    else if (c >= 'a' && c <= 'z') v = c - 'a' + 26;
    else if (c >= '0' && c <= '9') v = c - '0' + 52;
    else if (c == '+' || c == '-') v = 62;
    else if (c == '/' || c == '_') v = 63;
    else if (c == '=') break;
    else return false;
    acc = (acc << 6) | static_cast<uint32_t>(v);
    bits += 6;
    if (bits >= 8) {
      bits -= 8;
      out += static_cast<char>((acc >> bits) & 0xFF);
    }
  }
  return true;
}
}  // namespace

bool engine::string_call_of(const node &nd, const frame &f, const collection &in, bool with_args, string_call &c) {
  c = string_call{};
  if (in.empty()) return true;
  const item *one = single(in, nd.pos, ("the input of " + nd.name + "()").c_str());
  if (!one) return false;
  if (one->kind != value_kind::string) return type_error(nd.pos, nd.name + "() needs a string, not " + type_name(*one));
  c.input = one;
  c.s = one->text;
  if (!with_args) return true;
  // The arguments' texts point into the documents, the expression or the evaluator's arena, not
  // into the buffers they were evaluated in.
  scratch a0(s_), a1(s_);
  if (!arg_string(nd, 0, f, *a0, c.p0, c.x)) return false;
  if (nd.arg_count > 1 && !arg_string(nd, 1, f, *a1, c.p1, c.y)) return false;
  return true;
}

bool engine::fn_index_of(const node &nd, const frame &f, const collection &in, collection &out) {
  return on_string(nd, f, in, string_args::first, [&](const string_call &c) -> bool {
    const size_t at = c.s.find(c.x);
    out.push_back(
        integer_item(at == std::string_view::npos ? -1 : static_cast<int64_t>(utf8_length(c.s.substr(0, at)))));
    return true;
  });
}

bool engine::fn_substring(const node &nd, const frame &f, const collection &in, collection &out) {
  return on_string(nd, f, in, string_args::none, [&](const string_call &c) -> bool {
    const std::string_view s = c.s;
    scratch a0(s_), a1(s_);
    bool ps, pl = false;
    int64_t start = 0, len = 0;
    if (!arg_integer(nd, 0, f, *a0, ps, start)) return false;
    if (nd.arg_count > 1 && !arg_integer(nd, 1, f, *a1, pl, len)) return false;
    if (!ps) return true;
    int64_t n = static_cast<int64_t>(utf8_length(s));
    if (start < 0 || start >= n) return true;
    size_t b = utf8_offset(s, static_cast<size_t>(start));
    size_t e = s.size();
    if (pl) {
      if (len <= 0) return out.push_back(string_item("")), true;
      e = start + len >= n ? s.size() : utf8_offset(s, static_cast<size_t>(start + len));
    }  // substring(start, {}) is substring(start)
    out.push_back(string_item(std::string(s.substr(b, e - b))));
    return true;
  });
}

bool engine::fn_starts_ends_contains(const node &nd, const frame &f, const collection &in, collection &out) {
  return on_string(nd, f, in, string_args::first, [&](const string_call &c) -> bool {
    const auto &[input, s, p0, x, p1, y] = c;
    if (nd.function == fn::startsWith) out.push_back(boolean_item(s.substr(0, x.size()) == x));
    else if (nd.function == fn::endsWith)
      out.push_back(boolean_item(s.size() >= x.size() && s.substr(s.size() - x.size()) == x));
    else out.push_back(boolean_item(s.find(x) != std::string_view::npos));
    return true;
  });
}

bool engine::fn_upper_lower(const node &nd, const frame &f, const collection &in, collection &out) {
  return on_string(nd, f, in, string_args::none, [&](const string_call &c) -> bool {
    const std::string_view s = c.s;
    std::string r(s);
    for (char &c : r) {
      if (nd.function == fn::upper && c >= 'a' && c <= 'z') c = static_cast<char>(c - 'a' + 'A');
      if (nd.function == fn::lower && c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
    }
    out.push_back(string_item(std::move(r)));
    return true;
  });
}

bool engine::fn_replace(const node &nd, const frame &f, const collection &in, collection &out) {
  return on_string(nd, f, in, string_args::both, [&](const string_call &c) -> bool {
    const auto &[input, s, p0, x, p1, y] = c;
    std::string r;
    if (x.empty()) {
      // Between every character, and at both ends.
      r += y;
      for (size_t i = 0; i < s.size(); ++i) {
        r += s[i];
        if (i + 1 == s.size() || (static_cast<unsigned char>(s[i + 1]) & 0xC0) != 0x80) r += y;
        if (r.size() > s_.lim.max_string_bytes)
          return fail(error_code::RESULT_TOO_LARGE, nd.pos, "replace() grew past max_string_bytes");
      }
    } else {
      size_t i = 0;
      while (true) {
        size_t at = s.find(x, i);
        if (at == std::string_view::npos) break;
        r += s.substr(i, at - i);
        r += y;
        i = at + x.size();
        if (r.size() > s_.lim.max_string_bytes)
          return fail(error_code::RESULT_TOO_LARGE, nd.pos, "replace() grew past max_string_bytes");
      }
      r += s.substr(i);
    }
    out.push_back(string_item(std::move(r)));
    return true;
  });
}

bool engine::fn_length(const node &nd, const frame &f, const collection &in, collection &out) {
  return on_string(nd, f, in, string_args::none, [&](const string_call &c) -> bool {
    const std::string_view s = c.s;
    out.push_back(integer_item(static_cast<int64_t>(utf8_length(s))));
    return true;
  });
}

bool engine::fn_to_chars(const node &nd, const frame &f, const collection &in, collection &out) {
  return on_string(nd, f, in, string_args::none, [&](const string_call &c) -> bool {
    const std::string_view s = c.s;
    for (size_t i = 0; i < s.size();) {
      size_t j = i + 1;
      while (j < s.size() && (static_cast<unsigned char>(s[j]) & 0xC0) == 0x80) ++j;
      item c;
      c.kind = value_kind::string;
      c.text = s.substr(i, j - i);
      out.push_back(c);
      i = j;
    }
    return check_size(out, nd.pos);
  });
}

bool engine::fn_split(const node &nd, const frame &f, const collection &in, collection &out) {
  return on_string(nd, f, in, string_args::first, [&](const string_call &c) -> bool {
    const auto &[input, s, p0, x, p1, y] = c;
    if (x.empty()) {
      out.push_back(*input);
      return true;
    }
    size_t i = 0;
    while (true) {
      size_t at = s.find(x, i);
      item part;
      part.kind = value_kind::string;
      part.text = s.substr(i, at == std::string_view::npos ? std::string_view::npos : at - i);
      out.push_back(part);
      if (!check_size(out, nd.pos)) return false;
      if (at == std::string_view::npos) break;
      i = at + x.size();
    }
    return true;
  });
}

// Empty in, empty out, as every string function here and fhirpath.js (FHIRPath 3.0: "If the input
// collection is empty, the result is empty"); the SQL on FHIR suite's fn_join cases expect null.
bool engine::fn_join(const node &nd, const frame &f, const collection &in, collection &out) {
  if (in.empty()) return true;
  scratch a(s_);
  bool present = false;
  std::string_view sep;
  if (nd.arg_count && !arg_string(nd, 0, f, *a, present, sep)) return false;
  std::string s;
  for (size_t i = 0; i < in.size(); ++i) {
    if (in[i].kind != value_kind::string) return type_error(nd.pos, "join() needs strings, not " + type_name(in[i]));
    if (i) s += sep;
    s += in[i].text;
    if (s.size() > s_.lim.max_string_bytes)
      return fail(error_code::RESULT_TOO_LARGE, nd.pos, "join() grew past max_string_bytes");
  }
  out.push_back(string_item(std::move(s)));
  return true;
}

bool engine::fn_trim(const node &nd, const frame &f, const collection &in, collection &out) {
  return on_string(nd, f, in, string_args::none, [&](const string_call &c) -> bool {
    const std::string_view s = c.s;
    size_t b = 0, e = s.size();
    auto ws = [](char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v'; };
    while (b < e && ws(s[b])) ++b;
    while (e > b && ws(s[e - 1])) --e;
    item t;
    t.kind = value_kind::string;
    t.text = s.substr(b, e - b);
    out.push_back(t);
    return true;
  });
}

bool engine::fn_encode_decode(const node &nd, const frame &f, const collection &in, collection &out) {
  return on_string(nd, f, in, string_args::first, [&](const string_call &c) -> bool {
    const auto &[input, s, p0, x, p1, y] = c;
    std::string r;
    if (x == "base64" || x == "urlbase64") {
      if (nd.function == fn::encode) {
        r = base64_encode(s, x == "urlbase64");
      } else if (!base64_decode(s, r)) {
        return true;
      }
    } else if (x == "hex") {
      static const char H[] = "0123456789abcdef";
      if (nd.function == fn::encode) {
        for (unsigned char c : s) {
          r += H[c >> 4];
          r += H[c & 15];
        }
      } else {
        if (s.size() % 2) return true;
        for (size_t i = 0; i < s.size(); i += 2) {
          int h = hex_digit(s[i]), l = hex_digit(s[i + 1]);
          if (h < 0 || l < 0) return true;
          r += static_cast<char>(h * 16 + l);
        }
      }
    } else {
      return fail(error_code::INVALID_ARGUMENT, nd.pos, nd.name + "(): unknown encoding " + std::string(x));
    }
    out.push_back(string_item(std::move(r)));
    return true;
  });
}

bool engine::fn_escape_unescape(const node &nd, const frame &f, const collection &in, collection &out) {
  return on_string(nd, f, in, string_args::first, [&](const string_call &c) -> bool {
    const auto &[input, s, p0, x, p1, y] = c;
    std::string r;
    bool esc = nd.function == fn::escape;
    if (x == "html") {
      if (esc) {
        for (char c : s) {
          switch (c) {
            case '&': r += "&amp;"; break;
            case '<': r += "&lt;"; break;
            case '>': r += "&gt;"; break;
            case '"': r += "&quot;"; break;
            case '\'': r += "&#39;"; break;
            default: r += c;
          }
        }
      } else {
        for (size_t i = 0; i < s.size(); ++i) {
          if (s[i] == '&') {
            size_t semi = s.find(';', i);
            if (semi != std::string_view::npos && semi - i <= 10) {
              std::string_view ent = s.substr(i + 1, semi - i - 1);
              bool done = true;
              if (ent == "amp") r += '&';
              else if (ent == "lt") r += '<';
              else if (ent == "gt") r += '>';
              else if (ent == "quot") r += '"';
              else if (ent == "apos") r += '\'';
              else if (ent.size() > 1 && ent[0] == '#') {
                uint32_t cp = 0;
                bool hex = ent[1] == 'x' || ent[1] == 'X';
                for (size_t k = hex ? 2 : 1; k < ent.size(); ++k) {
                  char c = ent[k];
                  int d = hex ? hex_digit(c) : c >= '0' && c <= '9' ? c - '0' : -1;
                  if (d < 0 || cp > 0x10FFFF) {
                    done = false;
                    break;
                  }
                  cp = cp * (hex ? 16 : 10) + static_cast<uint32_t>(d);
                }
                if (done) quire::detail::append_utf8(r, cp);
              } else {
                done = false;
              }
              if (done) {
                i = semi;
                continue;
              }
            }
          }
          r += s[i];
        }
      }
    } else if (x == "json") {
      if (esc) {
        for (char c : s) {
          switch (c) {
            case '"': r += "\\\""; break;
            case '\\': r += "\\\\"; break;
            case '\n': r += "\\n"; break;
            case '\r': r += "\\r"; break;
            case '\t': r += "\\t"; break;
            case '\f': r += "\\f"; break;
            case '\b': r += "\\b"; break;
            default:
              if (static_cast<unsigned char>(c) < 0x20) {
                char buf[8];
                std::snprintf(buf, sizeof buf, "\\u%04x", static_cast<unsigned>(c));
                r += buf;
              } else {
                r += c;
              }
          }
        }
      } else {
        for (size_t i = 0; i < s.size(); ++i) {
          if (s[i] != '\\' || i + 1 >= s.size()) {
            r += s[i];
            continue;
          }
          char e = s[++i];
          switch (e) {
            case 'n': r += '\n'; break;
            case 'r': r += '\r'; break;
            case 't': r += '\t'; break;
            case 'f': r += '\f'; break;
            case 'b': r += '\b'; break;
            case 'u': {
              uint32_t cp = 0;
              size_t k = 0;
              for (; k < 4 && i + 1 + k < s.size(); ++k) {
                char c = s[i + 1 + k];
                int d = hex_digit(c);
                if (d < 0) break;
                cp = cp * 16 + static_cast<uint32_t>(d);
              }
              if (k == 4) {
                quire::detail::append_utf8(r, cp);
                i += 4;
              } else {
                r += "\\u";
              }
              break;
            }
            default: r += e;
          }
        }
      }
    } else {
      return fail(error_code::INVALID_ARGUMENT, nd.pos, nd.name + "(): unknown format " + std::string(x));
    }
    out.push_back(string_item(std::move(r)));
    return true;
  });
}

}  // namespace quire::fhirpath
