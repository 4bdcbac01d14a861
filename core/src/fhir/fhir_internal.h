// Shared inside core/src/fhir only: primitive format checks, compiled invariants, and the access
// the writer and the NDJSON reader need to a resource's internals. The R4 tables and their lookups
// are the r4 module's (../r4/r4_tables.h).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "../r4/r4_tables.h"
#include "quire/fhir.h"
#include "quire/fhirpath.h"

namespace quire::fhir {

/// Builds and opens up resources (a friend of fhir::resource).
struct resource_access {
  static json::document &doc(resource &r) { return r.doc_; }
  static uint16_t type(const resource &r) { return r.type_; }
  static void set_type(resource &r, uint16_t t) { r.type_ = t; }
  static fhir::outcome &outcome(resource &r) { return r.outcome_; }
};

namespace detail {

// The tables are named unqualified throughout fhir's sources (TYPES, key_def, primitive...).
using namespace quire::r4;

/// Checks the text of a primitive against its type's format; returns nullptr when valid, else a
/// short reason. Strings are checked in place (base64 payloads are never copied).
const char *check_string_format(primitive p, std::string_view s) noexcept;
/// Checks a JSON number's text (exact, as written) against integer, positiveInt, unsignedInt or
/// decimal; nullptr when valid.
const char *check_number_format(primitive p, std::string_view text, bool is_integer) noexcept;
/// Whether the primitive is a JSON string (else a number or boolean) in FHIR's JSON form.
inline bool is_string_primitive(primitive p) noexcept {
  return p != primitive::boolean && p != primitive::integer && p != primitive::decimal && p != primitive::positiveInt &&
         p != primitive::unsignedInt;
}
/// Whether `s` is a valid FHIR id ([A-Za-z0-9\-.]{1,64}).
bool is_valid_id(std::string_view s) noexcept;
/// Whether `s` is a valid urn:uuid / urn:oid value.
bool is_valid_uuid(std::string_view s) noexcept;
bool is_valid_oid(std::string_view s) noexcept;

/// Invariants the walk treats specially: native shortcuts for ele-1, dom-3, ref-1, for those that
/// hold on a resource without `contained` (dom-2, dom-4, dom-5), and for dom-6 (which also does
/// not apply to contained resources).
enum class invariant_shortcut : uint8_t { none, ele_1, dom_3, ref_1, about_contained, dom_6 };

/// One CONSTRAINTS row compiled: the expression, or why it is not evaluated.
struct compiled_invariant {
  const constraint_def *def = nullptr;
  std::optional<fhirpath::expression> expr;  ///< set when it is evaluated
  std::string unchecked;                     ///< why not, when expr is unset
  invariant_shortcut shortcut = invariant_shortcut::none;
};

/// Every CONSTRAINTS row, compiled on the first call (thread-safe; immutable afterwards).
const std::vector<compiled_invariant> &compiled_invariants();

/// The limits of one invariant's evaluation: a pathological resource costs a bounded amount, and
/// an invariant beyond them is reported as unchecked.
fhirpath::limits invariant_limits();

/// ele-1 (`hasValue() or (children().count() > id.count())`) where the answer is certain without
/// the engine: true when it certainly holds, false when the engine must decide.
bool ele_1_holds(const json::value *value, const json::value *companion) noexcept;

/// dom-3 (every contained resource is referenced) on a resource, where the answer is certain
/// without the engine: true when every contained resource's `#id` is the `reference` of some
/// element below the resource's root; false when the engine must decide. The engine builds
/// `%resource.descendants()` four times per contained resource and unions them pairwise.
bool dom_3_holds(const json::value &resource);

}  // namespace detail
}  // namespace quire::fhir
