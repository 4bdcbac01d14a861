// detect_input: what kind of input the first bytes say it is (quire/detect.h). The rules are the
// union of what the CLI and the viewer each decided before: the CLI's NDJSON test (the first line
// is a whole JSON value) and name rule, the viewer's magic, HL7 v2 (MLLP too) and CSV tests.
#include <algorithm>
#include <array>
#include <initializer_list>

#include "quire/detect.h"
#include "quire/json.h"

namespace quire {

namespace {

constexpr std::string_view QUIRE_MAGIC{"QUIRE\0", 6};  // docs/format.md §1
constexpr unsigned char MLLP_START = 0x0B;
/// The window of the control-byte and later-HL7 tests.
constexpr size_t TEXT_WINDOW = 4096;
/// The window of the UTF-8 and CSV tests.
constexpr size_t CSV_WINDOW = 16384;
/// Complete lines the CSV test compares.
constexpr size_t CSV_LINES = 20;

bool is_space(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r'; }

bool ends_with(std::string_view s, std::string_view suffix) {
  return s.size() >= suffix.size() && s.substr(s.size() - suffix.size()) == suffix;
}

/// MSH|, FHS| or BHS| (any printable field separator) at `at`.
bool hl7_at(std::string_view b, size_t at) {
  if (at + 3 >= b.size()) return false;
  const std::string_view id = b.substr(at, 3);
  const auto sep = static_cast<unsigned char>(b[at + 3]);
  return (id == "MSH" || id == "FHS" || id == "BHS") && sep > 0x20 && sep < 0x7F;
}

/// NUL and the C0 controls other than tab, LF, VT (MLLP), FF, CR and FS (MLLP): no text has them.
bool has_control_bytes(std::string_view b) {
  return std::any_of(b.begin(), b.end(), [](char ch) {
    const auto c = static_cast<unsigned char>(ch);
    return c < 0x20 && c != 0x09 && c != 0x0A && c != 0x0B && c != 0x0C && c != 0x0D && c != 0x1C;
  });
}

/// Whether `b` is UTF-8, a sequence cut off by the window's end allowed.
bool is_utf8(std::string_view b) {
  for (size_t i = 0; i < b.size();) {
    const auto c = static_cast<unsigned char>(b[i]);
    const size_t n = c < 0x80 ? 1 : (c >> 5) == 0x6 ? 2 : (c >> 4) == 0xE ? 3 : (c >> 3) == 0x1E ? 4 : 0;
    if (n == 0 || (n == 2 && c < 0xC2)) return false;
    for (size_t k = 1; k < n; ++k) {
      if (i + k >= b.size()) return true;
      if ((static_cast<unsigned char>(b[i + k]) & 0xC0) != 0x80) return false;
    }
    i += n;
  }
  return true;
}

/// The delimiter that splits the first complete lines into the same number (at least 2) of fields.
char csv_delimiter(std::string_view text) {
  std::array<std::string_view, CSV_LINES + 1> lines{};
  size_t count = 0;
  for (size_t at = 0; at < text.size() && count < lines.size();) {
    size_t end = text.find_first_of("\r\n", at);
    if (end == std::string_view::npos) end = text.size();
    if (end > at) lines[count++] = text.substr(at, end - at);
    at = end + 1;
  }
  if (count == 0) return 0;
  // The last line may be cut off by the window: judge the complete ones.
  const size_t judged = count > 1 ? std::min(count - 1, CSV_LINES) : 1;
  for (char d : {',', '\t', ';'}) {
    const auto fields = static_cast<size_t>(std::count(lines[0].begin(), lines[0].end(), d)) + 1;
    if (fields < 2) continue;
    bool same = true;
    for (size_t i = 1; i < judged && same; ++i)
      same = static_cast<size_t>(std::count(lines[i].begin(), lines[i].end(), d)) + 1 == fields;
    if (same) return d;
  }
  // Quoted fields may hold the delimiter: a header of at least 2 fields will do when the rest differ.
  if (lines[0].find(',') != std::string_view::npos && lines[0].find_first_of("{}") == std::string_view::npos)
    return ',';
  return 0;
}

input_detection found(input_kind kind, std::string reason) { return {kind, std::move(reason)}; }

// Built by appending: g++ 12 at -O3 warns falsely (-Wrestrict, GCC PR 105329) on string + string.
std::string joined(std::initializer_list<std::string_view> parts) {
  std::string out;
  for (std::string_view p : parts) out.append(p);
  return out;
}

}  // namespace

input_detection detect_input(std::string_view b, bool whole, std::string_view name) {
  if (ends_with(name, ".ndjson") || ends_with(name, ".jsonl"))
    return found(input_kind::ndjson, "named .ndjson or .jsonl (NDJSON)");
  if (b.empty()) return found(whole ? input_kind::empty : input_kind::need_more, "the input is empty");
  if (b.substr(0, QUIRE_MAGIC.size()) == QUIRE_MAGIC)
    return found(input_kind::quire_file, "starts with the .quire magic \"QUIRE\\0\"");
  if (!whole && b.size() < QUIRE_MAGIC.size() && QUIRE_MAGIC.substr(0, b.size()) == b)
    return found(input_kind::need_more, "the first bytes may begin the .quire magic");
  size_t at = b.substr(0, 3) == "\xEF\xBB\xBF" ? 3 : 0;  // a UTF-8 byte order mark
  if (at < b.size() && static_cast<unsigned char>(b[at]) == MLLP_START && hl7_at(b, at + 1))
    return found(input_kind::hl7v2, "an MLLP frame (0x0B) around an HL7 v2 header segment");
  while (at < b.size() && is_space(b[at])) ++at;
  if (at == b.size())
    return found(whole ? input_kind::empty : input_kind::need_more, "the first bytes are all white space");
  const std::string_view window = b.substr(0, std::min(b.size(), TEXT_WINDOW));
  if (has_control_bytes(window)) {
    if (hl7_at(b, at)) return found(input_kind::hl7v2, "starts with an HL7 v2 header segment (binary bytes follow)");
    return found(input_kind::unknown, "binary bytes: control characters within the first 4 KiB");
  }
  if (hl7_at(b, at)) return found(input_kind::hl7v2, joined({"starts with an HL7 v2 ", b.substr(at, 3), " segment"}));
  if (b[at] == '<') return found(input_kind::fhir_xml, "starts with '<': XML (a FHIR resource or Bundle in R4 XML)");

  // The CLI's test: the first non-blank line is a whole JSON value. A last line without a line
  // end is whole only when the input is; before that, only more bytes can tell.
  const size_t nl = b.find('\n', at);
  if (nl == std::string_view::npos && !whole &&
      std::string_view("{[\"-0123456789tfn").find(b[at]) != std::string_view::npos)
    return found(input_kind::need_more, "the bytes end inside the first line");
  std::string_view line = b.substr(at, nl == std::string_view::npos ? b.size() - at : nl - at);
  while (!line.empty() && is_space(line.back())) line.remove_suffix(1);
  if ((nl != std::string_view::npos || whole) && json::check(line).ok())
    return found(input_kind::ndjson, "the first line is a whole JSON value (NDJSON)");
  if (b[at] == '{') return found(input_kind::fhir_json, "a JSON object (a FHIR resource or Bundle)");
  if (b[at] == '[') return found(input_kind::json, "a JSON array (read as JSON; FHIR has no top-level arrays)");

  const std::string_view text = b.substr(at, std::min(b.size() - at, CSV_WINDOW));
  if (!is_utf8(text)) return found(input_kind::unknown, "not UTF-8 text");
  // A file of messages with notes before them (HAPI's test files open with a comment).
  const std::string_view head = text.substr(0, std::min(text.size(), TEXT_WINDOW));
  for (size_t i = 0; i < head.size(); ++i) {
    if ((i == 0 || head[i - 1] == '\n' || head[i - 1] == '\r') && hl7_at(head, i) && head[i + 3] == '|')
      return found(input_kind::hl7v2, joined({"an HL7 v2 ", head.substr(i, 3), " segment at line start after ",
                                              std::to_string(i), " characters of other text"}));
  }
  if (char d = csv_delimiter(text)) {
    const char quoted[] = {'"', d, '"'};
    const std::string_view by = d == '\t' ? std::string_view("tabs") : std::string_view(quoted, 3);
    input_detection csv = found(input_kind::csv, joined({"text in rows of fields split by ", by, " (CSV)"}));
    csv.delimiter = d;
    return csv;
  }
  // A file named for CSV whose rows the test above cannot judge (one column, or field counts that
  // differ in the first lines) is read as its name says.
  if (ends_with(name, ".csv") || ends_with(name, ".tsv")) {
    const bool tabs = ends_with(name, ".tsv");
    input_detection csv =
        found(input_kind::csv, tabs ? "text named .tsv (CSV split by tabs)" : "text named .csv (CSV)");
    csv.delimiter = tabs ? '\t' : ',';
    return csv;
  }
  return found(input_kind::unknown, "text that is not JSON, NDJSON, HL7 v2 or CSV");
}

std::string_view input_kind_name(input_kind kind) noexcept {
  switch (kind) {
    case input_kind::unknown: return "unknown";
    case input_kind::empty: return "empty";
    case input_kind::quire_file: return "quire";
    case input_kind::fhir_json: return "fhir";
    case input_kind::json: return "json";
    case input_kind::ndjson: return "ndjson";
    case input_kind::hl7v2: return "hl7";
    case input_kind::csv: return "csv";
    case input_kind::need_more: return "need-more";
    case input_kind::fhir_xml: return "fhir-xml";
  }
  return "unknown";
}

}  // namespace quire
