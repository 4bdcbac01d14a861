// The string functions that take a regular expression: matches(), matchesFull() and
// replaceMatches() (N1 "String Manipulation"), over fhirpath_regex.cpp's engine.
#include "fhirpath_engine.h"
#include "fhirpath_regex.h"

namespace quire::fhirpath {

bool engine::fn_matches(const node &nd, const frame &f, const collection &in, collection &out) {
  return on_string(nd, f, in, string_args::first, [&](const string_call &c) -> bool {
    const auto &[input, s, p0, x, p1, y] = c;
    auto rx = regex_for(x, nd.pattern.get());
    if (!rx) return fail(rx.code(), nd.pos, rx.error().message);
    out.push_back(boolean_item((*rx)->search(s, 0, nd.function == fn::matchesFull, nullptr)));
    return true;
  });
}

bool engine::fn_replace_matches(const node &nd, const frame &f, const collection &in, collection &out) {
  return on_string(nd, f, in, string_args::both, [&](const string_call &c) -> bool {
    const auto &[input, s, p0, x, p1, y] = c;
    if (x.empty()) return out.push_back(*input), true;
    auto rx = regex_for(x, nd.pattern.get());
    if (!rx) return fail(rx.code(), nd.pos, rx.error().message);
    std::string r;
    size_t i = 0;
    regex_match m;
    while (i <= s.size() && (*rx)->search(s, i, false, &m)) {
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
        return fail(error_code::RESULT_TOO_LARGE, nd.pos, "replaceMatches() grew past max_string_bytes");
      i = m.end;
      if (m.end == m.begin) {
        // After an empty match the next search starts one code point on.
        if (i < s.size()) ++i;
        while (i < s.size() && (static_cast<unsigned char>(s[i]) & 0xC0) == 0x80) ++i;
        r += s.substr(m.end, i - m.end);
        if (m.end == s.size()) ++i;
      }
    }
    if (i < s.size()) r += s.substr(i);
    out.push_back(string_item(std::move(r)));
    return true;
  });
}

}  // namespace quire::fhirpath
