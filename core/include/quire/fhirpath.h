// quire/fhirpath.h — FHIRPath (N1, with FHIR R4's additions) compiled once, evaluated on the tape.
//
// An expression is parsed once into a compiled form (a flat array of nodes) and then evaluated
// any number of times against resources held in json::documents. Evaluation walks the JSON tape
// directly: it builds no tree per resource, and a value that comes from the resource is a small
// handle into the tape (its json::value) with the FHIR type the R4 definitions give it.
//
//   auto expr = quire::fhirpath::compile("Patient.name.where(use = 'official').given");
//   if (!expr) return expr.error();            // INVALID_FHIRPATH at offset N: ...
//   quire::fhirpath::evaluator ev;             // reusable scratch; one per thread
//   for (const json::document &doc : patients) {
//     auto out = ev.evaluate(*expr, doc.root());
//     if (!out) return out.error();            // FHIRPATH_TYPE_ERROR at offset N: ...
//     std::string text = quire::fhirpath::to_json(*out);   // ["Peter","James"]
//   }
//
// Errors carry the byte offset in the expression of the token or node at fault:
// INVALID_FHIRPATH (syntax, bad literal), UNKNOWN_FUNCTION (no such function, or a wrong number
// of arguments), FHIRPATH_TYPE_ERROR (an operand of the wrong type or a list where the
// specification asks for one item, found while evaluating), MAX_DEPTH_EXCEEDED and
// DOCUMENT_TOO_LARGE (limits, below).
//
// IMPORTANT: lifetimes. An expression owns its compiled form and is independent of the text it
// was compiled from. The collection evaluate() returns lives in the evaluator: it stays valid
// until the next evaluate() on the same evaluator, and while the documents it points into live
// (items from the resource are views into their json::document). Copy what you keep: copying
// a collection (a vector of small items) is enough to keep it across evaluate() calls, for
// instance to evaluate column expressions with each item of a forEach as the context — but the
// copy's computed strings still live in the evaluator's arena, which the next evaluate() clears;
// items that point into the resource stay valid as long as its document.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "quire/json.h"
#include "quire/result.h"

namespace quire::fhirpath {

/// Bounds that make hostile expressions and data cost a bounded amount.
struct limits {
  static constexpr size_t DEFAULT_MAX_DEPTH = 256;                      ///< nesting of the expression tree
  static constexpr size_t DEFAULT_MAX_EXPRESSION_BYTES = 64 * 1024;     ///< length of one expression
  static constexpr size_t DEFAULT_MAX_COLLECTION = 1'000'000;           ///< items in any one collection
  static constexpr size_t DEFAULT_MAX_STRING_BYTES = 16 * 1024 * 1024;  ///< a computed string
  static constexpr uint64_t DEFAULT_MAX_COMPARISONS = 50'000'000;  ///< pairs compared by set operations per evaluation

  size_t max_depth = DEFAULT_MAX_DEPTH;                        ///< MAX_DEPTH_EXCEEDED beyond (parse)
  size_t max_expression_bytes = DEFAULT_MAX_EXPRESSION_BYTES;  ///< DOCUMENT_TOO_LARGE beyond (parse)
  size_t max_collection = DEFAULT_MAX_COLLECTION;  ///< DOCUMENT_TOO_LARGE beyond (repeat(), descendants(), combine...)
  size_t max_string_bytes = DEFAULT_MAX_STRING_BYTES;  ///< DOCUMENT_TOO_LARGE beyond (join(), +, replace...)
  uint64_t max_comparisons =
      DEFAULT_MAX_COMPARISONS;  ///< DOCUMENT_TOO_LARGE beyond (distinct(), |, intersect(), repeat()...)
};

/// The kind of one item of a collection.
enum class value_kind : uint8_t {
  boolean,
  integer,
  decimal,  ///< exact: a digit string and a scale, never a binary double
  string,
  date,       ///< text in ISO form without the `@` (`2015-02-04`, `2015`)
  date_time,  ///< `2015-02-04T14:34:28+10:00`
  time,       ///< `14:34:28` (no `T`)
  quantity,   ///< a value and a unit (UCUM code or calendar word)
  element,    ///< a FHIR complex value (an object in the resource), or a primitive that has only extensions
  type_info,  ///< the result of type(): `name` and `namespace`
};

/// A decimal: `digits` × 10^-`scale`. `0.700` is {700, 3}: the scale is the precision.
struct decimal {
  int64_t digits = 0;
  int32_t scale = 0;
};

/// Index of a FHIR type in the R4 definition tables; NO_FHIR_TYPE for System values.
constexpr uint16_t NO_FHIR_TYPE = 0xFFFF;

/// One value of a collection. Small and cheap to copy.
struct item {
  value_kind kind = value_kind::element;
  uint16_t fhir_type = NO_FHIR_TYPE;  ///< FHIR type (`code`, `HumanName`, `Patient`) when it came from the resource
  bool in_tape = false;               ///< `node` is the value in the resource
  bool has_companion = false;         ///< `companion` is the primitive's `_name` object (its id and extensions)
  bool boolean = false;               ///< boolean
  int64_t integer = 0;                ///< integer
  decimal dec;                        ///< decimal, and the value of a quantity
  std::string_view text;   ///< string; date/time text; a quantity's unit; type_info's name. Points into the document,
                           ///< the expression or the evaluator
  std::string_view text2;  ///< type_info's namespace
  json::value node;        ///< the value in the resource (in_tape)
  json::value companion;   ///< has_companion
};

using collection = std::vector<item>;

/// A compiled expression. Move-only; independent of the text it was compiled from.
class expression {
 public:
  expression();
  ~expression();
  expression(expression &&) noexcept;
  expression &operator=(expression &&) noexcept;
  expression(const expression &) = delete;
  expression &operator=(const expression &) = delete;

  /// The text it was compiled from.
  std::string_view text() const noexcept;
  /// Opaque compiled form (see core/src/fhirpath/fhirpath_internal.h).
  struct program;
  const program &compiled() const noexcept { return *program_; }

 private:
  friend result<expression> compile(std::string_view, const limits &);
  std::unique_ptr<program> program_;
};

/// Parses and checks an expression once. Errors: INVALID_FHIRPATH (syntax; offset of the token),
/// UNKNOWN_FUNCTION (offset of the name; message names it), MAX_DEPTH_EXCEEDED, DOCUMENT_TOO_LARGE.
result<expression> compile(std::string_view text, const limits &lim = {});

/// The current time as the caller's clock reads it, for now(), today() and timeOfDay(): core reads
/// no clock (the native CLI and the wasm bindings pass the system's; tests pass a fixed one).
struct clock_reading {
  int64_t unix_ms = 0;             ///< milliseconds since 1970-01-01T00:00:00Z
  int32_t utc_offset_minutes = 0;  ///< the offset the results are given in (0: UTC, `Z`)
};

/// The variables an evaluation sees besides its context. Unset values default to the context.
struct environment {
  /// %resource (the resource holding the context) and %rootResource (the container resource).
  const json::value *resource = nullptr;
  const json::value *root_resource = nullptr;
  /// Optional: their items, made once by context_item() (set with the values above). A caller
  /// that evaluates many expressions against one resource (a view's columns) saves looking its
  /// resource type up on every evaluation.
  const item *resource_item = nullptr;
  const item *root_resource_item = nullptr;
  /// User constants: %name → a collection (SQL on FHIR's constants, %rowIndex...). The items must
  /// stay valid for the evaluation.
  std::vector<std::pair<std::string, collection>> constants;
  /// The as() function on several items keeps those of the type (like ofType()) instead of N1's
  /// error. R4's invariants need it (dom-3: `%resource.descendants().as(canonical)`), as HL7's
  /// validator evaluates them; fhir's validation sets it. The `as` operator is unchanged.
  bool as_function_filters = false;
  /// What now(), today() and timeOfDay() give; unset, they fail with INVALID_ARGUMENT.
  std::optional<clock_reading> now = std::nullopt;
};

/// Evaluates compiled expressions; holds reusable buffers so that evaluating many resources does
/// not allocate per node. Not thread-safe: use one evaluator per thread.
class evaluator {
 public:
  explicit evaluator(const limits &lim = {});
  ~evaluator();
  evaluator(evaluator &&) noexcept;
  evaluator &operator=(evaluator &&) noexcept;
  evaluator(const evaluator &) = delete;
  evaluator &operator=(const evaluator &) = delete;

  /// Evaluates `expr` with `context` (usually a resource's root) as %context and $this. The
  /// resource type of an object with a `resourceType` comes from the R4 definitions; other values
  /// are untyped JSON. Errors: FHIRPATH_TYPE_ERROR (offset in the expression), DOCUMENT_TOO_LARGE
  /// (limits). The collection is valid until the next evaluate() on this evaluator.
  result<const collection *> evaluate(const expression &expr, const json::value &context, const environment &env = {});
  /// As above with a context made once by context_item(), to evaluate several expressions
  /// against one resource without looking its type up each time.
  result<const collection *> evaluate(const expression &expr, const item &context, const environment &env = {});

  struct state;

 private:
  std::unique_ptr<state> state_;
};

/// The item evaluate() makes of a JSON value: an object with a known `resourceType` gets that
/// resource's FHIR type, anything else is untyped JSON. Valid while the value's document lives.
item context_item(const json::value &v);

/// The item of a value of FHIR type `fhir_type` (an index into the R4 definition tables, as
/// item::fhir_type) with its primitive's `_name` companion object (or nullptr); `value` may be
/// nullptr or null when the primitive has only the companion (an element without a value). For
/// fhir's invariants, which know each element's type from their own walk. Valid while the
/// values' document lives.
item typed_item(const json::value *value, uint16_t fhir_type, const json::value *companion);

/// The name of the first function the expression calls that quire cannot evaluate — `resolve`,
/// `memberOf`, `subsumes`, `subsumedBy`, `htmlChecks`, `elementDefinition`, `checkModifiers` (no
/// resolver, terminology server or XHTML checker) — or empty when it calls none. The view lives
/// as long as the expression.
std::string_view unsupported_function(const expression &expr) noexcept;

/// Writes a collection as JSON text, the same bytes on every target: booleans, integers and
/// decimals (decimals in their exact text, `1.0`, `0.700`) as JSON numbers; strings, dates and
/// times (`"2015-02-04"`, no `@`) as JSON strings; a computed quantity as its FHIRPath text
/// (`"1 'cm'"`, `"1 week"`); an element as its JSON; type_info as {"namespace":..,"name":..}.
std::string to_json(const collection &c);
/// One item as JSON text (see to_json(collection)).
std::string to_json(const item &v);
/// As to_json(), appended to `out` (a caller writing many values reuses one buffer).
void append_json(std::string &out, const collection &c);
void append_json(std::string &out, const item &v);

/// The JSON form of one item as append_json() writes it.
enum class json_form : uint8_t {
  null_value,  ///< `null`: an element with neither a value nor a companion
  boolean,     ///< `true` or `false`
  number,      ///< a JSON number: integers and decimals in their exact text
  string,      ///< a JSON string: strings, dates and times, a computed quantity's text
  json,        ///< an object or array (an element, type_info): its compact JSON text
};

/// Appends what append_json() writes for `v` but unquoted: a string's characters as they are
/// (not escaped), every other form its JSON text (nothing for null_value). Returns the form, so a
/// caller that keeps values typed (a view's cells) reads each once without parsing JSON back.
json_form append_text(std::string &out, const item &v);

/// The name of a value's type as type() gives it: `FHIR.code`, `System.Integer`.
std::string type_name(const item &v);

}  // namespace quire::fhirpath
