// Embind bindings of the FHIR module. Input bytes arrive as one copy in the wasm heap (pointer and
// length, padded by the wrapper); results leave as one record of JSON texts, never value by value.
#include <emscripten/bind.h>

#include <algorithm>
#include <bit>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <string_view>
#include <vector>

#include "../core/src/common/alloc.h"
#include "../core/src/common/text_words.h"
#include "bind_support.h"
#include "quire/fhir.h"

namespace {

using quire::wasm::error_record;

/// fhir::options as the wrapper passes them (0 for a limit means its default).
struct fhir_options_record {
  bool strict = false;
  double max_depth = 0, max_bytes = 0, max_issues = 0, max_contained = 0;
  bool check_codes = true, check_references = true, check_invariants = true;
  int syntax = 0;  ///< fhir::syntax: 0 json, 1 xml, 2 detect
};

/// A result: an error, or JSON texts (`text`: the resource or formatted output; `issues`: an array).
struct fhir_text_record {
  error_record error;
  std::string text;
  std::string issues;
  double errors = 0, warnings = 0;
  bool truncated = false;
};

/// validate()'s options as plain numbers (Embind converts them without a record): the flags are
/// bits, FLAG_* below, the syntax in bits 4-5; 0 for a limit means its default.
constexpr int FLAG_STRICT = 1, FLAG_CHECK_CODES = 2, FLAG_CHECK_REFERENCES = 4, FLAG_CHECK_INVARIANTS = 8;

quire::fhir::options make_options(const fhir_options_record &r) {
  quire::fhir::options o;
  o.strict = r.strict;
  if (r.max_depth > 0) o.max_depth = static_cast<size_t>(r.max_depth);
  if (r.max_bytes > 0) o.max_bytes = static_cast<uint64_t>(r.max_bytes);
  if (r.max_issues > 0) o.max_issues = static_cast<size_t>(r.max_issues);
  if (r.max_contained > 0) o.max_contained = static_cast<size_t>(r.max_contained);
  o.check_codes = r.check_codes;
  o.check_references = r.check_references;
  o.check_invariants = r.check_invariants;
  o.input_syntax = r.syntax == 1   ? quire::fhir::syntax::xml
                   : r.syntax == 2 ? quire::fhir::syntax::detect
                                   : quire::fhir::syntax::json;
  return o;
}

void fill_outcome(fhir_text_record &out, const quire::fhir::outcome &o) {
  out.issues = quire::fhir::issues_to_json(o.issues);
  out.errors = static_cast<double>(o.errors);
  out.warnings = static_cast<double>(o.warnings);
  out.truncated = o.truncated;
}

/// validate(): the result in one malloc that the wrapper reads and frees, so that nothing crosses
/// value by value and no text is scanned for its end. It starts with six little-endian uint32:
/// the form of what follows, errors, warnings, truncated, and two sizes.
///
/// Form TABLE (sizes: the issues, the strings): the strings' ends, one uint32 each, in the text of
/// all of them (UTF-16 units, which are bytes: the form is used only when every string is ASCII);
/// then each issue as ISSUE_WORDS uint32 (severity 0 error, 1 warning, 2 information;
/// code, key, details, expression, as string numbers, NONE for no key; line; column; offset;
/// error, a string number or NONE); then the strings' text. A code, key, details or error that
/// repeats (dom-6's text on each of a Bundle's resources) is in the text once: the wrapper decodes one short text
/// and makes the issue objects itself, where JSON.parse of the same issues took half a millisecond
/// on the 1,000-entry Bundle's 212 KB.
///
/// Form JSON (sizes: the bytes of the issues as a JSON array, 0), for an issue with a string that
/// is not ASCII or an offset past 32 bits: the array's text (issues_to_json).
///
/// Form TABLE with no issues has nothing after the header. 0 when the heap cannot hold the block.
constexpr uint32_t FORM_TABLE = 0, FORM_JSON = 1, ISSUE_WORDS = 9, NONE = 0xFFFFFFFF, HEADER_WORDS = 6;

bool is_ascii(std::string_view s) noexcept {
  unsigned char any = 0;
  for (char c : s) any |= static_cast<unsigned char>(c);
  return any < 0x80;
}

// The strings of an issue table, numbered in order of first use; shared() gives a string that is
// there already its number (an open hash: one vector, no node per string). Expressions are nearly
// all distinct: add() appends them without a lookup. The hash reads a string's length and its first
// and last eight bytes (std::hash read all of a details text, four bytes a step in wasm), and a
// slot's string is compared eight bytes at a time (Emscripten's memcmp goes a byte at a time).
class string_table {
 public:
  explicit string_table(size_t expected) : slots_(std::bit_ceil(2 * expected + 16), NONE) {
    if (expected > 0) strings.reserve(expected);
  }
  bool ascii = true;
  std::vector<std::string_view> strings;

  uint32_t add(std::string_view s) {
    if (!is_ascii(s)) ascii = false;
    strings.push_back(s);
    return static_cast<uint32_t>(strings.size() - 1);
  }
  uint32_t shared(std::string_view s) {
    const size_t mask = slots_.size() - 1;
    for (size_t i = hash(s) & mask;; i = (i + 1) & mask) {
      if (slots_[i] == NONE) return slots_[i] = add(s);
      if (quire::detail::same_text(strings[slots_[i]], s)) return slots_[i];
    }
  }

 private:
  std::vector<uint32_t> slots_;

  static size_t hash(std::string_view s) noexcept {
    return quire::detail::words_hash(quire::detail::words_of(s), s.size());
  }
};

// The number of one field's string (code, key, details, error), asked first of the field's
// previous string: consecutive issues mostly repeat it (a Bundle's 1,000 dom-6 warnings), and
// words compared in place cost less than the table's hash of the details and Emscripten's bytewise
// memcmp. Code and key are views of static text: the same pointer.
struct field {
  std::string_view last;
  uint32_t number = NONE;
  uint32_t of(string_table &table, std::string_view s) {
    if (number != NONE && quire::detail::same_text(s, last)) return number;
    last = s;
    return number = table.shared(s);
  }
};

uintptr_t issues_block(const quire::fhir::outcome &o) {
  using quire::fhir::severity;
  uint32_t head[HEADER_WORDS] = {
      FORM_TABLE, static_cast<uint32_t>(o.errors), static_cast<uint32_t>(o.warnings), o.truncated ? 1u : 0u, 0, 0};
  // Each issue's code, key, details and error are looked up (they repeat); at most four an issue.
  string_table table(o.issues.empty() ? 0 : 4 * o.issues.size());
  std::vector<uint32_t> words;
  bool fits = true;
  if (!o.issues.empty()) {
    words.reserve(o.issues.size() * ISSUE_WORDS);
    field code, key, details, error;
    for (const quire::fhir::issue &i : o.issues) {
      if (i.offset > UINT32_MAX) fits = false;
      words.push_back(i.severity == severity::error ? 0 : i.severity == severity::warning ? 1 : 2);
      words.push_back(code.of(table, i.code));
      words.push_back(i.key.empty() ? NONE : key.of(table, i.key));
      words.push_back(details.of(table, i.details));
      words.push_back(table.add(i.expression));
      words.push_back(i.line);
      words.push_back(i.column);
      words.push_back(static_cast<uint32_t>(i.offset));
      words.push_back(i.error == quire::error_code::OK ? NONE : error.of(table, quire::error_name(i.error)));
      if (!fits || !table.ascii) break;
    }
  }
  if (!fits || !table.ascii) {
    const std::string json = quire::fhir::issues_to_json(o.issues);
    auto *block = static_cast<uint8_t *>(std::malloc(4 * HEADER_WORDS + json.size()));
    if (!block) return 0;
    head[0] = FORM_JSON;
    head[4] = static_cast<uint32_t>(json.size());
    std::memcpy(block, head, sizeof head);  // wasm is little-endian
    std::memcpy(block + sizeof head, json.data(), json.size());
    return reinterpret_cast<uintptr_t>(block);
  }
  const std::vector<std::string_view> &strings = table.strings;
  size_t text_bytes = 0;
  for (std::string_view s : strings) text_bytes += s.size();
  const size_t table_bytes = 4 * (HEADER_WORDS + strings.size() + words.size());
  auto *block = static_cast<uint8_t *>(std::malloc(table_bytes + text_bytes));
  if (!block) return 0;
  head[4] = static_cast<uint32_t>(o.issues.size());
  head[5] = static_cast<uint32_t>(strings.size());
  std::memcpy(block, head, sizeof head);
  uint8_t *ends = block + sizeof head;
  uint8_t *text = block + table_bytes;
  uint32_t end = 0;
  for (size_t k = 0; k < strings.size(); ++k) {
    std::memcpy(text + end, strings[k].data(), strings[k].size());
    end += static_cast<uint32_t>(strings[k].size());
    std::memcpy(ends + 4 * k, &end, 4);
  }
  if (!words.empty()) std::memcpy(ends + 4 * strings.size(), words.data(), 4 * words.size());
  return reinterpret_cast<uintptr_t>(block);
}

uintptr_t fhir_validate(uintptr_t pointer, size_t length, int flags, double max_depth, double max_bytes,
                        double max_issues, double max_contained) {
  fhir_options_record r;
  r.strict = (flags & FLAG_STRICT) != 0;
  r.check_codes = (flags & FLAG_CHECK_CODES) != 0;
  r.check_references = (flags & FLAG_CHECK_REFERENCES) != 0;
  r.check_invariants = (flags & FLAG_CHECK_INVARIANTS) != 0;
  r.syntax = (flags >> 4) & 3;
  r.max_depth = max_depth;
  r.max_bytes = max_bytes;
  r.max_issues = max_issues;
  r.max_contained = max_contained;
  auto source = quire::borrow_bytes(quire::wasm::heap_bytes(pointer, length), quire::wasm::INPUT_PADDING);
  return issues_block(quire::fhir::validate(*source, make_options(r)));
}

// read() then write() (write_xml() when to_xml): the canonical text, with the read's issues.
fhir_text_record fhir_write(uintptr_t pointer, size_t length, bool pretty, bool to_xml,
                            const fhir_options_record &opts) {
  auto source = quire::borrow_bytes(quire::wasm::heap_bytes(pointer, length), quire::wasm::INPUT_PADDING);
  fhir_text_record out;
  auto r = quire::fhir::read(*source, make_options(opts));
  if (!r) {
    out.error = quire::wasm::to_record(r.error());
    return out;
  }
  // write() reserves the input's size (half again when pretty) and Embind copies the text once
  // more into a fresh malloc to hand it to JS, whose failure 3.1.6 does not check: both must fit,
  // or this is OUT_OF_MEMORY instead of an abort.
  // XML spells every primitive as an element with a value attribute: up to three times JSON's size.
  const uint64_t bound = to_xml ? 3 * uint64_t{length} : length + (pretty ? length / 2 : 0);
  if (bound >= quire::detail::PROBE_THRESHOLD &&
      !quire::detail::can_allocate(static_cast<size_t>(std::min<uint64_t>(2 * bound, SIZE_MAX - 64)))) {
    out.error = quire::wasm::to_record(quire::detail::out_of_memory(2 * bound, "the written resource"));
    return out;
  }
  if (to_xml) {
    auto xml = quire::fhir::write_xml(r.value(), {.pretty = pretty});
    if (!xml) {
      out.error = quire::wasm::to_record(xml.error());
      return out;
    }
    out.text = std::move(xml).value();
  } else {
    out.text = quire::fhir::write(r.value(), {.pretty = pretty});
  }
  fill_outcome(out, r->outcome());
  return out;
}

std::string fhir_definitions_version() { return std::string(quire::fhir::definitions_version()); }

}  // namespace

QUIRE_BINDINGS(fhir) {
  using namespace emscripten;
  value_object<fhir_options_record>("FhirOptionsRecord")
      .field("strict", &fhir_options_record::strict)
      .field("maxDepth", &fhir_options_record::max_depth)
      .field("maxBytes", &fhir_options_record::max_bytes)
      .field("maxIssues", &fhir_options_record::max_issues)
      .field("maxContained", &fhir_options_record::max_contained)
      .field("checkCodes", &fhir_options_record::check_codes)
      .field("checkReferences", &fhir_options_record::check_references)
      .field("checkInvariants", &fhir_options_record::check_invariants)
      .field("syntax", &fhir_options_record::syntax);
  value_object<fhir_text_record>("FhirTextRecord")
      .field("error", &fhir_text_record::error)
      .field("text", &fhir_text_record::text)
      .field("issues", &fhir_text_record::issues)
      .field("errors", &fhir_text_record::errors)
      .field("warnings", &fhir_text_record::warnings)
      .field("truncated", &fhir_text_record::truncated);
  function("fhirValidate", &fhir_validate);
  function("fhirWrite", &fhir_write);
  function("fhirDefinitionsVersion", &fhir_definitions_version);
}
