// The string functions that take a regular expression: matches(), matchesFull() and
// replaceMatches() (N1 "String Manipulation"), over fhirpath_regex.cpp's engine.
#include "fhirpath_engine.h"

namespace quire::fhirpath {

bool engine::fn_matches(const node &nd, const frame &f, const collection &in, collection &out) {
  string_call c;
  if (!string_call_of(nd, f, in, true, c)) return false;
  if (!c.input) return true;
  const auto &[input, s, p0, x, p1, y] = c;
  if (!p0) return true;
  regex_match m;
  int r = regex_search(x, s, 0, nd.function == fn::matchesFull, m);
  if (r == -1) return fail(error_code::INVALID_ARGUMENT, nd.pos, "bad regular expression " + std::string(x));
  if (r == -2) return fail(error_code::DOCUMENT_TOO_LARGE, nd.pos, "the regular expression took too many steps");
  out.push_back(boolean_item(r == 1));
  return true;
}

bool engine::fn_replace_matches(const node &nd, const frame &f, const collection &in, collection &out) {
  string_call c;
  if (!string_call_of(nd, f, in, true, c)) return false;
  if (!c.input) return true;
  const auto &[input, s, p0, x, p1, y] = c;
  if (!p0 || !p1) return true;
  if (x.empty()) return out.push_back(*input), true;
  std::string r;
  size_t i = 0;
  while (i <= s.size()) {
    regex_match m;
    int found = regex_search(x, s, i, false, m);
    if (found == -1) return fail(error_code::INVALID_ARGUMENT, nd.pos, "bad regular expression " + std::string(x));
    if (found == -2) return fail(error_code::DOCUMENT_TOO_LARGE, nd.pos, "the regular expression took too many steps");
    if (found == 0) break;
    r += s.substr(i, m.begin - i);
    for (size_t k = 0; k < y.size(); ++k) {
      if (y[k] == '$' && k + 1 < y.size() && y[k + 1] >= '0' && y[k + 1] <= '9') {
        size_t g = static_cast<size_t>(y[k + 1] - '0');
        if (g == 0) r += s.substr(m.begin, m.end - m.begin);
        else if (g <= m.groups.size() && m.groups[g - 1].first != NONE)
          r += s.substr(m.groups[g - 1].first, m.groups[g - 1].second - m.groups[g - 1].first);
        ++k;
      } else {
        r += y[k];
      }
    }
    if (r.size() > s_.lim.max_string_bytes)
      return fail(error_code::DOCUMENT_TOO_LARGE, nd.pos, "replaceMatches() grew past max_string_bytes");
    if (m.end == m.begin) {
      if (m.end < s.size()) r += s[m.end];
      i = m.end + 1;
    } else {
      i = m.end;
    }
  }
  if (i < s.size()) r += s.substr(i);
  out.push_back(string_item(std::move(r)));
  return true;
}

}  // namespace quire::fhirpath
