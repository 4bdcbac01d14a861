// One CSV field as RFC 4180 writes it, shared by the view's CSV output (view_output.cpp) and the
// CSV form of a query (format_scan.cpp), so that both write the same bytes: a field is quoted when
// it is empty or holds a comma, a quote or a line break, and a quote inside is doubled. A null cell
// is no field at all (nothing between its commas), so that "" and null stay apart.
#pragma once

#include <string>
#include <string_view>

namespace quire::detail {

inline bool csv_needs_quotes(std::string_view t) {
  return t.empty() || t.find_first_of(",\"\r\n") != std::string_view::npos;
}

inline void append_csv_field(std::string &out, std::string_view t) {
  if (!csv_needs_quotes(t)) {
    out += t;
    return;
  }
  out += '"';
  for (size_t i = 0;;) {
    const size_t q = t.find('"', i);
    if (q == std::string_view::npos) {
      out += t.substr(i);
      break;
    }
    out += t.substr(i, q + 1 - i);
    out += '"';
    i = q + 1;
  }
  out += '"';
}

}  // namespace quire::detail
