// hl7v2_path.cpp — paths like PID-5[2].1, splitting values, and the typed values DTM and NM.

#include <cstdlib>
#include <cstring>

#include "../common/calendar.h"
#include "hl7v2_internal.h"

namespace quire::hl7v2 {

namespace {

// Reads a 1-based index (1..999999999) at text[i]; advances i.
bool read_index(std::string_view text, size_t &i, size_t &value) noexcept {
  size_t v = 0, digits = 0;
  while (i < text.size() && text[i] >= '0' && text[i] <= '9' && digits < 10) {
    v = v * 10 + static_cast<size_t>(text[i] - '0');
    ++i;
    ++digits;
  }
  if (digits == 0 || digits > 9 || v == 0) return false;
  value = v;
  return true;
}

bool read_bracketed(std::string_view text, size_t &i, size_t &value) noexcept {
  if (i >= text.size() || text[i] != '[') return true;
  ++i;
  if (!read_index(text, i, value)) return false;
  if (i >= text.size() || text[i] != ']') return false;
  ++i;
  return true;
}

bool is_separator(char c) noexcept { return c == '-' || c == '.'; }

}  // namespace

result<path> parse_path(std::string_view text) {
  path p;
  auto bad = [&](size_t at, const char *why) {
    return quire::error(error_code::INVALID_ARGUMENT,
                        "malformed HL7 v2 path \"" + std::string(text.substr(0, 64)) + "\": " + why, at);
  };
  if (text.size() < 3 || !detail::is_id_char(text[0]) || !detail::is_id_char(text[1]) || !detail::is_id_char(text[2]))
    return bad(0, "it must start with a 3-character segment id");
  for (size_t k = 0; k < 3; ++k)
    p.segment[k] = text[k] >= 'a' && text[k] <= 'z' ? static_cast<char>(text[k] - 32) : text[k];
  size_t i = 3;
  if (!read_bracketed(text, i, p.segment_repetition)) return bad(i, "expected [n] with n >= 1");
  if (i == text.size()) return p;
  if (!is_separator(text[i])) return bad(i, "expected '-' before the field number");
  ++i;
  if (!read_index(text, i, p.field)) return bad(i, "expected a field number >= 1");
  if (!read_bracketed(text, i, p.repetition)) return bad(i, "expected [n] with n >= 1");
  if (i == text.size()) return p;
  if (!is_separator(text[i])) return bad(i, "expected '.' before the component number");
  ++i;
  if (!read_index(text, i, p.component)) return bad(i, "expected a component number >= 1");
  if (i == text.size()) return p;
  if (!is_separator(text[i])) return bad(i, "expected '.' before the subcomponent number");
  ++i;
  if (!read_index(text, i, p.subcomponent)) return bad(i, "expected a subcomponent number >= 1");
  if (i != text.size()) return bad(i, "unexpected text after the subcomponent");
  return p;
}

std::optional<std::string_view> nth_piece(std::string_view text, char separator, size_t n) noexcept {
  if (n == 0) return std::nullopt;
  if (separator == delimiters::NONE) return n == 1 ? std::optional<std::string_view>(text) : std::nullopt;
  size_t start = 0;
  for (size_t k = 1; k < n; ++k) {
    const size_t next = text.find(separator, start);
    if (next == std::string_view::npos) return std::nullopt;
    start = next + 1;
  }
  const size_t stop = text.find(separator, start);
  return text.substr(start, (stop == std::string_view::npos ? text.size() : stop) - start);
}

// --- DTM ------------------------------------------------------------------------------------------

namespace {

std::string_view trim(std::string_view s) noexcept {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) s.remove_suffix(1);
  return s;
}

bool is_digit(char c) noexcept { return c >= '0' && c <= '9'; }

int two_digits(std::string_view s, size_t at) noexcept { return (s[at] - '0') * 10 + (s[at + 1] - '0'); }

}  // namespace

result<std::string> to_iso8601(std::string_view dtm) {
  const std::string_view s = trim(dtm);
  auto bad = [&](const char *why) {
    return quire::error(error_code::INVALID_ARGUMENT,
                        "not an HL7 date/time \"" + std::string(s.substr(0, 40)) + "\": " + why);
  };
  size_t digits = 0;
  while (digits < s.size() && is_digit(s[digits])) ++digits;
  if (digits != 4 && digits != 6 && digits != 8 && digits != 10 && digits != 12 && digits != 14)
    return bad("expected YYYY[MM[DD[HH[MM[SS]]]]]");
  std::string out(s.substr(0, 4));
  const int year = (s[0] - '0') * 1000 + (s[1] - '0') * 100 + two_digits(s, 2);
  int month = 0;
  if (digits >= 6) {
    month = two_digits(s, 4);
    if (month < 1 || month > 12) return bad("month out of range");
    out += '-';
    out += s.substr(4, 2);
  }
  if (digits >= 8) {
    const int day = two_digits(s, 6);
    if (day < 1 || day > quire::detail::days_in_month(year, month)) return bad("day out of range");
    out += '-';
    out += s.substr(6, 2);
  }
  if (digits >= 10) {
    if (two_digits(s, 8) > 23) return bad("hour out of range");
    out += 'T';
    out += s.substr(8, 2);
  }
  if (digits >= 12) {
    if (two_digits(s, 10) > 59) return bad("minute out of range");
    out += ':';
    out += s.substr(10, 2);
  }
  if (digits >= 14) {
    if (two_digits(s, 12) > 59) return bad("second out of range");
    out += ':';
    out += s.substr(12, 2);
  }
  size_t i = digits;
  if (i < s.size() && s[i] == '.') {
    if (digits != 14) return bad("a fraction needs seconds");
    size_t f = i + 1;
    while (f < s.size() && is_digit(s[f])) ++f;
    if (f == i + 1 || f - i - 1 > 9) return bad("a fraction has 1 to 9 digits");
    out += s.substr(i, f - i);
    i = f;
  }
  if (i < s.size() && (s[i] == '+' || s[i] == '-')) {
    if (s.size() - i != 5 || !is_digit(s[i + 1]) || !is_digit(s[i + 2]) || !is_digit(s[i + 3]) || !is_digit(s[i + 4]))
      return bad("a time zone is +HHMM or -HHMM");
    if (two_digits(s, i + 1) > 23 || two_digits(s, i + 3) > 59) return bad("time zone out of range");
    out += s[i];
    out += s.substr(i + 1, 2);
    out += ':';
    out += s.substr(i + 3, 2);
    i = s.size();
  }
  if (i != s.size()) return bad("unexpected text after the date/time");
  return out;
}

// --- NM -------------------------------------------------------------------------------------------

result<number> parse_number(std::string_view nm) {
  const std::string_view s = trim(nm);
  size_t i = 0;
  if (i < s.size() && (s[i] == '+' || s[i] == '-')) ++i;
  size_t digits = 0, points = 0;
  for (; i < s.size(); ++i) {
    if (is_digit(s[i])) ++digits;
    else if (s[i] == '.' && points == 0) ++points;
    else break;
  }
  if (digits == 0 || i != s.size())
    return quire::error(error_code::INVALID_ARGUMENT,
                        "not an HL7 number (NM): \"" + std::string(s.substr(0, 40)) + "\"");
  // strtod reads the C locale's '.', which is the locale core runs in; the text was checked above
  // so it cannot read exponents or hex forms.
  const std::string copy(s);
  number out;
  out.text = s;
  out.value = std::strtod(copy.c_str(), nullptr);
  return out;
}

}  // namespace quire::hl7v2
