// Fuzz target for FHIRPath's regular expressions (core/src/fhirpath/fhirpath_regex.cpp): the
// input is a pattern, a newline, and a text. Compiling must end with a program or a typed error
// (INVALID_ARGUMENT, REGEX_TOO_LARGE); a search must end (the VM is linear), agree with itself
// with and without captures, and report a match and captures that lie inside the text, in order.
// Build with -DQUIRE_FUZZ=ON and clang; run `make fuzz`.
#include <cstdint>
#include <cstdlib>
#include <string_view>

#include "../../core/src/fhirpath/fhirpath_regex.h"

using quire::fhirpath::regex;
using quire::fhirpath::regex_match;

namespace {
void check_match(const regex_match &m, size_t from, size_t size, size_t groups) {
  if (m.begin < from || m.begin > m.end || m.end > size || m.groups.size() != groups) std::abort();
  for (auto &g : m.groups) {
    if ((g.first == regex_match::UNSET) != (g.second == regex_match::UNSET)) std::abort();
    if (g.first != regex_match::UNSET && (g.first > g.second || g.second > size)) std::abort();
  }
}
}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  std::string_view in(reinterpret_cast<const char *>(data), size);
  size_t cut = in.find('\n');
  std::string_view pattern = in.substr(0, cut);
  std::string_view text = cut == std::string_view::npos ? std::string_view() : in.substr(cut + 1);
  auto rx = regex::compile(pattern);
  if (!rx) {
    if (rx.code() != quire::error_code::INVALID_ARGUMENT && rx.code() != quire::error_code::REGEX_TOO_LARGE)
      std::abort();
    return 0;
  }
  const regex &r = **rx;
  regex_match m;
  bool found = r.search(text, 0, false, &m);
  if (found != r.search(text, 0, false, nullptr)) std::abort();
  if (found) check_match(m, 0, text.size(), r.group_count());
  bool full = r.search(text, 0, true, &m);
  if (full != r.search(text, 0, true, nullptr)) std::abort();
  if (full && (m.begin != 0 || m.end != text.size())) std::abort();
  if (full && !found) std::abort();
  // Every later match, as replaceMatches walks them.
  size_t at = 0;
  for (int k = 0; k < 64 && at <= text.size() && r.search(text, at, false, &m); ++k) {
    check_match(m, at, text.size(), r.group_count());
    at = m.end > m.begin ? m.end : m.end + 1;
    while (at < text.size() && (static_cast<unsigned char>(text[at]) & 0xC0) == 0x80) ++at;
  }
  return 0;
}
