// quire/detect.h — what kind of input the first bytes say a file is: the one rule the CLI, the npm
// package (`detect(bytes)`) and the viewer share.
//
//   auto d = quire::detect_input(first_bytes, /*whole=*/size <= quire::DETECT_BYTES);
//   if (d.kind == quire::input_kind::need_more) ...read on and ask again...
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

namespace quire {

/// What an input is.
enum class input_kind : uint8_t {
  unknown,     ///< none of the kinds below (binary bytes, text that is no known format)
  empty,       ///< no bytes, or white space only
  quire_file,  ///< starts with the .quire magic "QUIRE\0"
  fhir_json,   ///< one JSON document that is an object (a FHIR resource or Bundle), over several lines
  json,        ///< one JSON document that is an array (FHIR has no top-level arrays; read as JSON)
  ndjson,      ///< one JSON value a line (its first line is a whole JSON value), or named .ndjson / .jsonl
  hl7v2,       ///< HL7 v2 messages (MSH, FHS or BHS first or at a line start), MLLP-framed or not
  csv,         ///< text in rows of the same number (at least 2) of fields split by `,`, tab or `;`
  need_more,   ///< the bytes given end inside the first line of what may be JSON: give more
  fhir_xml,    ///< XML: `<` first (after a byte order mark and white space), read as FHIR R4 XML
};

/// How many bytes detect_input needs at most to decide (except need_more: a first line longer than
/// this, which only more bytes can settle).
inline constexpr size_t DETECT_BYTES = size_t{64} << 10;

struct input_detection {
  input_kind kind = input_kind::unknown;
  std::string reason;  ///< one line for people: why it is that kind
  char delimiter = 0;  ///< csv: the byte that splits its fields (`,`, tab or `;`); 0 for other kinds
};

/// The kind of an input from its first bytes. `whole`: `prefix` is the whole input (a last line
/// without a line end is then complete). `name`, when given, is the file's name: `.ndjson` and
/// `.jsonl` say NDJSON without a look (any other name is not looked at: a `.json` file may hold
/// NDJSON). The rule, in order: a name as above; the .quire magic; after a UTF-8 byte order mark,
/// an MLLP start byte before an HL7 v2 header segment; white space only (empty); control bytes
/// in the first 4 KiB (unknown, unless an HL7 header comes first); an HL7 v2 header segment; a
/// first non-blank line that is a whole JSON value (ndjson: a resource on one line reads the same
/// as NDJSON and as a document; its line end may be missing when `whole`); `<` (fhir_xml, as
/// fhir::looks_like_xml has it; before the JSON test); `{` (fhir_json) and `[`
/// (json); text that is not UTF-8 (unknown); an HL7 header at a line start in the first 4 KiB; CSV;
/// last, other UTF-8 text named `.csv` (CSV, `,`) or `.tsv` (CSV, tab): one column, say.
/// Never fails; reads at most DETECT_BYTES of `prefix` but for a first line's end.
input_detection detect_input(std::string_view prefix, bool whole, std::string_view name = {});

/// "unknown", "empty", "quire", "fhir", "json", "ndjson", "hl7", "csv", "need-more", "fhir-xml": the names the
/// npm package's detect() and the viewer use.
std::string_view input_kind_name(input_kind kind) noexcept;

}  // namespace quire
