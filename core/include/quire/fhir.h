// quire/fhir.h — FHIR R4 JSON: read a resource or a Bundle, validate it against the base
// definitions, write it back as canonical JSON.
//
//   auto r = quire::fhir::read(bytes);             // parse + structural validation, one pass
//   if (!r) return r.error();                      // not JSON, not a resource, a limit exceeded...
//   for (const auto &i : r->issues()) ...          // OperationOutcome-style issues, all of them
//   std::string text = quire::fhir::write(*r, {.pretty = true});
//
// The model is the validated JSON document itself (quire::json's tape): it keeps every number's
// exact text (`0.700`, 30-digit integers), every string, nulls inside primitive arrays, key order
// and unknown elements; the definition tables (generated at build time from the R4
// StructureDefinitions) give each object its type. write() re-emits it in the specification's
// order, `_x` right after `x`.
//
// Calls hold no global state: they may run in a loop or on several threads at once.
//
// IMPORTANT: lifetime. A resource owns its document (read(std::string_view) copies the input);
// read(byte_source) borrows the source's bytes when they are contiguous and padded, and the source
// must then outlive the resource. Views it returns (resource_type(), root(), entries) are valid
// while the resource lives.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "quire/json.h"
#include "quire/platform.h"
#include "quire/result.h"

namespace quire::fhir {

/// The two forms of a resource read(): FHIR's JSON and its XML (R4's XML representation).
/// detect takes XML when the first byte after a UTF-8 byte order mark and any white space is `<`.
enum class syntax : uint8_t { json, xml, detect };

/// How to read and validate, and the bounds that make hostile input cost a bounded amount.
struct options {
  static constexpr size_t DEFAULT_MAX_DEPTH = 256;
  static constexpr uint64_t DEFAULT_MAX_BYTES = uint64_t{1} << 30;  // 1 GiB
  static constexpr size_t DEFAULT_MAX_ISSUES = 1000;
  static constexpr size_t DEFAULT_MAX_CONTAINED = 1000;

  /// read(): fail with UNKNOWN_ELEMENT on an element the definitions do not know. When false
  /// (lenient) unknown elements are kept (write() emits them after the known ones) and reported.
  bool strict = false;
  size_t max_depth = DEFAULT_MAX_DEPTH;          ///< JSON nesting; MAX_DEPTH_EXCEEDED beyond
  uint64_t max_bytes = DEFAULT_MAX_BYTES;        ///< input size; DOCUMENT_TOO_LARGE beyond
  size_t max_issues = DEFAULT_MAX_ISSUES;        ///< issues kept; one final "too-costly" issue says more were cut
  size_t max_contained = DEFAULT_MAX_CONTAINED;  ///< contained resources per resource; TOO_MANY_CONTAINED beyond
  bool check_codes = true;                       ///< codes of required bindings to small closed value sets
  bool check_references = true;                  ///< Reference.reference formats and `#id` targets
  /// The R4 invariants (ElementDefinition.constraint: dom-2, ele-1, pat-1...) with the FHIRPath
  /// engine; one that cannot be evaluated is reported once per call as unchecked (see invariants()).
  bool check_invariants = true;
  /// Lets invariants take native shortcuts (ele-1, dom-3, ref-1) and direct checks over the tape
  /// (exists(), counts, comparisons with literals...) where their answer is certain; false
  /// evaluates every one with the FHIRPath engine (the tests compare the two byte for byte).
  bool invariant_fast_paths = true;
  /// read(), validate(), format(): the input's form (JSON unless told; see read_xml()).
  syntax input_syntax = syntax::json;
};

enum class severity : uint8_t { error, warning, information };

/// "error", "warning", "information".
std::string_view severity_name(severity s) noexcept;

/// One finding, shaped like an OperationOutcome.issue.
struct issue {
  fhir::severity severity = fhir::severity::error;
  /// An OperationOutcome issue-type code: "structure", "required", "value", "invalid",
  /// "code-invalid", "not-found", "not-supported", "too-costly", "invariant" (a failed
  /// invariant), "informational" (an invariant not checked)... (a static string).
  std::string_view code;
  /// The invariant's key (`dom-2`) on issues of invariants, failed or unchecked; empty otherwise.
  std::string_view key;
  std::string details;     ///< what is wrong, for people
  std::string expression;  ///< FHIRPath location: `Bundle.entry[3].resource.name[0].given[1]`
  uint64_t offset = 0;     ///< byte offset of the offending value (or key's value) in the input
  uint32_t line = 0;       ///< 1-based
  uint32_t column = 0;     ///< 1-based, in bytes
  /// OK for validation findings; the error code when the input could not be read at all
  /// (INVALID_JSON, INVALID_RESOURCE, MAX_DEPTH_EXCEEDED...).
  error_code error = error_code::OK;
};

/// The issues of one validation, with counts by severity.
struct outcome {
  std::vector<issue> issues;
  size_t errors = 0;
  size_t warnings = 0;
  /// True when max_issues cut the list (its last issue is then a "too-costly" one).
  bool truncated = false;
  bool ok() const noexcept { return errors == 0; }
};

/// A resource (or Bundle) read and validated. Move-only; see the lifetime note above.
class resource {
 public:
  resource() = default;
  resource(resource &&) noexcept = default;
  resource &operator=(resource &&) noexcept = default;

  /// "Patient", "Bundle"...
  std::string_view resource_type() const noexcept;
  /// The resource's JSON object.
  json::value root() const noexcept { return doc_.root(); }
  const json::document &document() const noexcept { return doc_; }
  /// The validation's findings (unknown elements among them in lenient mode).
  const fhir::outcome &outcome() const noexcept { return outcome_; }
  const std::vector<issue> &issues() const noexcept { return outcome_.issues; }

 private:
  friend struct resource_access;
  json::document doc_;
  uint16_t type_ = 0;
  fhir::outcome outcome_;
};

/// Reads and validates a resource (copying the input). Errors (with offset, line, column and path):
/// the JSON layer's (INVALID_JSON, INVALID_UTF8, INVALID_STRING, INVALID_NUMBER, TRAILING_CONTENT,
/// EMPTY_INPUT, MAX_DEPTH_EXCEEDED, DOCUMENT_TOO_LARGE); INVALID_RESOURCE when the root is not an
/// object with a known resourceType; TOO_MANY_CONTAINED; UNKNOWN_ELEMENT in strict mode. Other
/// findings do not fail the read: they are in outcome().
result<resource> read(std::string_view input, const options &opts = {});
/// As read(), from a byte source; borrows its bytes when contiguous and padded (no copy).
result<resource> read(const byte_source &source, const options &opts = {});

/// Validates a resource: every finding, up to max_issues. Input that cannot be read gives a single
/// error issue carrying the error code (see issue::error). Never fails.
outcome validate(std::string_view input, const options &opts = {});
/// As validate(), from a byte source.
outcome validate(const byte_source &source, const options &opts = {});

struct write_options {
  bool pretty = false;  ///< two-space indentation, one member or element per line
};

/// Writes canonical FHIR JSON: resourceType first, then elements in the specification's order,
/// `_x` right after `x`, unknown elements (lenient mode) last in input order; numbers in their
/// exact input text; strings re-escaped minimally (", \ and control characters; `/` and
/// non-ASCII kept as they are).
std::string write(const resource &r, const write_options &w = {});

/// read() then write(): canonical JSON of the input, or read()'s error.
result<std::string> format(std::string_view input, const write_options &w = {}, const options &opts = {});

/// Whether `input` is XML by the rule of syntax::detect.
bool looks_like_xml(std::string_view input) noexcept;

/// Reads and validates a resource in R4's XML form (copying nothing it keeps but the JSON form it
/// builds): expat parses it; the elements become the resource's JSON form (the same document, and
/// so the same canonical JSON, as the resource's JSON form gives), read and validated as read()
/// does, with every issue's offset, line and column moved to the XML element it is about.
/// The conversion: the element namespace http://hl7.org/fhir is required; `value` attributes are
/// the primitives' values (numbers and booleans as their text); `id` attributes and `extension`
/// children of a primitive go to its `_name` companion; elements the definitions make arrays, or
/// that repeat, become arrays; a narrative's `div` (XHTML namespace required) is kept as written,
/// as a string; comments and processing instructions are dropped; `resourceType` comes from the
/// element name, inside `contained`, `entry.resource` and other resource-typed elements too;
/// attributes of other namespaces (xsi:schemaLocation) are ignored.
/// Errors, each with offset, line and column in the XML: INVALID_XML (not well-formed, not UTF-8,
/// a DOCTYPE, an entity declaration or an undefined entity: nothing is ever expanded or fetched);
/// INVALID_RESOURCE (a wrong namespace, an unknown resource type, text where FHIR has none, a
/// resource wrapper without exactly one resource); UNKNOWN_ELEMENT (an element or attribute the
/// definitions do not have, in lenient mode too: its JSON form is unknown); MAX_DEPTH_EXCEEDED
/// (element nesting, the div's included, beyond max_depth); DOCUMENT_TOO_LARGE; EMPTY_INPUT; and
/// read()'s own (TOO_MANY_CONTAINED, UNKNOWN_ELEMENT in strict mode...).
result<resource> read_xml(std::string_view input, const options &opts = {});

/// Writes a resource in R4's XML form: elements in the specification's order, `value`, `id` and
/// `url` attributes escaped (`&`, `<`, `>`, `"`, tab, line feed, carriage return), primitives'
/// `_name` companions merged back, `div` written as its XHTML text (checked to be well-formed).
/// Pretty: two-space indentation, the div as it is. Errors: INVALID_RESOURCE when a value cannot
/// be XML (a control character XML 1.0 forbids, a div that is not well-formed XML, an object
/// where the definitions have none...).
result<std::string> write_xml(const resource &r, const write_options &w = {});

/// One entry of a Bundle.
struct entry {
  size_t index = 0;                ///< position in Bundle.entry
  std::string_view full_url;       ///< entry.fullUrl; empty when absent
  std::string_view resource_type;  ///< of entry.resource; empty when the entry has none
  json::value resource;            ///< entry.resource (an object); default-constructed when absent
  json::value value;               ///< the whole entry object
};

/// Calls `visit` with each entry of a Bundle, in order, until it returns false. Entries are views
/// into `bundle`. Errors: WRONG_TYPE when `bundle` is not a Bundle.
result<void> for_each_entry(const resource &bundle, const std::function<bool(const entry &)> &visit);

/// Issues as a JSON array: `[{"severity":"error","code":"value","details":"...",
/// "expression":"Patient.birthDate","line":3,"column":16,"offset":52}, ...]`, with `"error":"CODE"`
/// on issues that carry an error code and `"key":"dom-2"` on those of invariants.
std::string issues_to_json(const std::vector<issue> &issues);

/// The issues as an OperationOutcome resource (compact JSON), each issue's line and column in the
/// standard `operationoutcome-issue-line` / `-col` extensions.
std::string to_operation_outcome(const outcome &o);

/// One invariant of the R4 definitions and whether validation evaluates it.
struct invariant_info {
  std::string_view key;         ///< `dom-2`
  fhir::severity severity;      ///< error or warning
  std::string_view human;       ///< the requirement in words
  std::string_view expression;  ///< FHIRPath
  bool checked;                 ///< evaluated; else reported as unchecked wherever it applies
  std::string_view reason;      ///< why not, when unchecked
  /// Some of it runs as a direct check over the tape, without the FHIRPath engine, where the
  /// data lets it (the answers are the engine's: see docs/fhir.md, Invariants).
  bool direct = false;
};

/// Every distinct invariant of the definitions compiled in, sorted by key (compiled once, on the
/// first call of this or of a validation).
std::vector<invariant_info> invariants();

/// The FHIR version of the definitions compiled in ("4.0.1").
std::string_view definitions_version() noexcept;

}  // namespace quire::fhir
