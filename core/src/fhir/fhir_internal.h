// Shared inside core/src/fhir only: primitive format checks, compiled invariants, and the access
// the writer and the NDJSON reader need to a resource's internals. The R4 tables and their lookups
// are the r4 module's (../r4/r4_tables.h).
#pragma once

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "../common/text_words.h"
#include "../r4/r4_tables.h"
#include "quire/fhir.h"
#include "quire/fhirpath.h"

namespace quire::fhirpath {
class regex;
}

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
/// r4::find_key's answer (the key of a type's object, nullptr when the type has no such element)
/// from a hash index built once from the same tables: one hash and about one compare per lookup.
const key_def *find_key_hashed(uint16_t type, std::string_view key) noexcept;
/// The same lookup with the row's fields the walk needs, held in the index itself.
struct key_row {
  uint32_t key = 0xFFFFFFFF;  ///< into KEYS; 0xFFFFFFFF when the type has no such key
  uint16_t element = 0;
  uint16_t type = 0;
  bool found() const noexcept { return key != 0xFFFFFFFF; }
};
key_row find_key_row(uint16_t type, std::string_view key) noexcept;

/// The hash index behind find_key_row (fhir_keys.cpp builds it once from the r4 tables). Its
/// lookup is inline so that the walk, which makes one per member, probes it without a call.
class key_index {
 public:
  /// The index, built on the first call (thread-safe; immutable afterwards).
  static const key_index &get();

  key_row find(uint16_t type, std::string_view key) const noexcept {
    const table tab = types_[type];
    if (tab.mask == 0) return {};  // a type without keys (a table has at least two slots)
    const size_t n = key.size();
    const key_words w = quire::detail::words_of(key);
    for (uint32_t i = hash(w, n) & tab.mask;; i = (i + 1) & tab.mask) {
      const slot &s = slots_[tab.base + i];
      if (s.key == EMPTY) return {};
      if (s.length != n || s.words.lo != w.lo || s.words.hi != w.hi) continue;
      if (n <= 16 || long_key_matches(s.key, key)) return key_row{s.key, s.element, s.type};
    }
  }

 private:
  key_index();
  static constexpr uint32_t EMPTY = 0xFFFFFFFF;
  using key_words = quire::detail::text_words;  // a key's first and last eight bytes (text_words.h)
  // The tables are at most half full, so a probe rarely goes past its first slot.
  static uint32_t hash(key_words w, size_t n) noexcept { return quire::detail::words_hash(w, n); }
  static bool long_key_matches(uint32_t key, std::string_view text) noexcept;  // bytes 8..n-8

  struct table {
    uint32_t base = 0;
    uint32_t mask = 0;
  };
  // The key's row is copied in (element, type): the walk reads the slot it probed and not the
  // KEYS row too, which was a second cache miss per member.
  struct slot {
    key_words words;  // the key's first and last eight bytes (words_of)
    uint32_t key;     // into KEYS, or EMPTY
    uint16_t length;
    uint16_t element;
    uint16_t type;
  };
  std::vector<table> types_;
  std::vector<slot> slots_;
};
/// Whether `s` is a valid FHIR id ([A-Za-z0-9\-.]{1,64}).
bool is_valid_id(std::string_view s) noexcept;
/// Whether `s` is a valid urn:uuid / urn:oid value.
bool is_valid_uuid(std::string_view s) noexcept;
bool is_valid_oid(std::string_view s) noexcept;

/// Invariants the walk treats specially: native shortcuts for ele-1, dom-3, ref-1, bdl-7, for
/// bdl-2, bdl-3 and bdl-4 (from one pass over a Bundle's entries, bundle_entries below), for
/// bdl-5 and bdl-8 (from one pass over an entry, bundle_entry_holds below), for
/// those that hold on a resource without `contained` (dom-2, dom-4, dom-5), and for dom-6 (which
/// also does not apply to contained resources).
enum class invariant_shortcut : uint8_t {
  none,
  ele_1,
  dom_3,
  ref_1,
  about_contained,
  dom_6,
  bdl_7,
  bdl_2,
  bdl_3,
  bdl_4,
  bdl_5,
  bdl_8
};

/// One node of a direct check (fhir_invariant_checks.cpp): an invariant's expression lowered,
/// for one context type, to code over the tape. Nodes live in one pool; operands are indices.
struct direct_node {
  enum class kind : uint8_t {
    opaque,        ///< not lowered: "unknown", the engine decides
    member,        ///< items of element `element` (name `name`) of the objects of `a` (NIL: $this), of type `type`
    where,         ///< items of `a` for which test `b` is true
    resource_var,  ///< %resource, where it is the context itself (a resource's own invariants)
    path_value,    ///< an operand that is the items of path `a`
    exists,
    empty,
    count,
    has_value,  ///< of path `a`
    all,        ///< test `b` true for every item of path `a`
    contains,
    starts_with,
    matches,     ///< path `a`'s single string against literal `name` / `pattern`
    in_strings,  ///< path_value `a` in the string literals [first, first + count)
    not_op,
    and_op,
    or_op,
    xor_op,
    implies,
    eq,
    ne,
    lt,
    gt,
    le,
    ge,
    add,
    lit_string,   ///< `name`
    lit_boolean,  ///< `integer` 0 or 1
    lit_integer,  ///< `integer`
  };
  kind k = kind::opaque;
  bool choice = false;           ///< member: a choice element (`value[x]`), its keys `valueQuantity`...
  bool constant = false;         ///< does not depend on $this (literals, %resource): computed once per check
  uint16_t type = NO_TYPE;       ///< member: the type of the objects it reads
  uint16_t item_type = NO_TYPE;  ///< member, where, path_value: the items' type (NO_TYPE: varies)
  uint32_t a = 0xFFFFFFFF, b = 0xFFFFFFFF;
  uint32_t element = 0;
  uint32_t first = 0, count = 0;
  int64_t integer = 0;
  std::string_view name;  ///< member's element name; a literal's text (into the expression)
  const fhirpath::regex *pattern = nullptr;
};

/// What a direct check found: the invariant holds (true or empty), fails (false), or the data is
/// such that only the engine can say.
enum class direct_outcome : uint8_t { holds, fails, unknown };

/// Lowers `expr` for a context of type `type` into `pool`; the root's index, or 0xFFFFFFFF when
/// nothing of it lowers (the engine evaluates it always). The pool refers into `expr`.
/// `context_is_resource`: the context is always %resource (a resource type's own invariants).
uint32_t lower_direct_check(const fhirpath::expression &expr, uint16_t type, bool context_is_resource,
                            std::vector<direct_node> &pool);
/// Runs the direct check at `root` with `self` (an object of the type it was lowered for) as
/// $this. No allocation.
direct_outcome run_direct_check(const std::vector<direct_node> &pool, uint32_t root, const json::value &self);

/// One CONSTRAINTS row compiled: the expression, or why it is not evaluated.
struct compiled_invariant {
  const constraint_def *def = nullptr;
  std::optional<fhirpath::expression> expr;  ///< set when it is evaluated
  std::string unchecked;                     ///< why not, when expr is unset
  /// The details of its issues, made once: `key: human` when it fails, `invariant key not
  /// checked: <unchecked>` when it is not evaluated (one copy per issue, not a string built).
  std::string failed_details, unchecked_details;
  invariant_shortcut shortcut = invariant_shortcut::none;
  /// Direct checks: (context type, root in the pool), sorted by type; a type not listed has none.
  std::vector<std::pair<uint16_t, uint32_t>> direct;
  /// The direct check's root for values of `type`, or 0xFFFFFFFF. A binary search: a
  /// DomainResource invariant (dom-6) has a check for each of R4's 146 resource types, and a scan
  /// of them per resource was a tenth of check_invariants' own time on a Bundle.
  uint32_t direct_root(uint16_t type) const noexcept {
    auto it = std::lower_bound(direct.begin(), direct.end(), type,
                               [](const std::pair<uint16_t, uint32_t> &d, uint16_t t) { return d.first < t; });
    return it != direct.end() && it->first == type ? it->second : 0xFFFFFFFF;
  }
};

/// Every CONSTRAINTS row compiled, and the pool of their direct checks.
struct invariant_set {
  std::vector<compiled_invariant> all;
  std::vector<direct_node> direct_nodes;
  uint16_t ele_1 = 0xFFFF;  ///< the row of ele-1 when it takes its shortcut
};

/// Compiled on the first call (thread-safe; immutable afterwards).
const invariant_set &compiled_invariant_set();
inline const std::vector<compiled_invariant> &compiled_invariants() { return compiled_invariant_set().all; }

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

/// bdl-7 (`fullUrl & resource.meta.versionId` distinct over the entries that have a fullUrl,
/// unless the Bundle is a history) on a Bundle, where the answer is certain without the engine:
/// true when it holds; false when the engine must decide (a repeat, or data of an unusual form).
/// The engine builds each entry's string and its select() collection; this sorts views.
bool bdl_7_holds(const json::value &bundle);

/// What bdl-2, bdl-3 and bdl-4 ask of a Bundle's entries (`entry.search.empty() or (type =
/// 'searchset')`, `entry.all(request.exists() = (%resource.type = 'batch' or ...))`, the same for
/// `response`), found in one pass over them instead of a direct check's pass each.
struct bundle_entries {
  /// Every entry an object whose `search`, `request` and `response` are each absent or one object
  /// (no null, no `_x` companion, no repeat), and the Bundle's `entry` one array or absent.
  bool plain = false;
  /// The Bundle's `type`: one string member, and no `_type`.
  bool type_plain = false;
  std::string_view type;
  uint32_t entries = 0, search = 0, request = 0, response = 0;  ///< entries, and those with each member
};
bundle_entries bundle_entry_facts(const json::value &bundle);
/// Whether bdl-2, bdl-3 or bdl-4 (`which`) certainly holds by those facts; false when the direct
/// check or the engine must decide (never that it fails).
bool bundle_entries_hold(invariant_shortcut which, const bundle_entries &facts) noexcept;

/// bdl-5 (`resource.exists() or request.exists() or response.exists()`) and bdl-8
/// (`fullUrl.contains('/_history/').not()`) on a Bundle entry, from one pass over its members:
/// whether each certainly holds (false: the direct check or the engine decides). bdl-5 holds here
/// by one `resource` that is an object with members; bdl-8 by at most one `fullUrl`, a string
/// without `/_history/`, and no `_fullUrl`.
struct bundle_entry_check {
  bool resource = false;  ///< bdl-5 holds
  bool full_url = false;  ///< bdl-8 holds
};
bundle_entry_check bundle_entry_holds(const json::value &entry) noexcept;

/// read()'s validation of a document already built (fhir_validate.cpp): what read() does after
/// json::parse. The XML reader hands it the tape it builds from the elements.
result<resource> read_built_document(json::document doc, const options &opts);

/// How read_xml hands the elements to the validator: as a tape built from them (automatic, when
/// the JSON reader's bounds certainly hold), or as the JSON text, parsed (the reference, and the
/// way taken otherwise). Tests and the fuzz target hold the two to the same results.
enum class xml_form : uint8_t { automatic, text };
result<resource> read_xml_with(std::string_view input, const options &opts, xml_form form);

}  // namespace detail
}  // namespace quire::fhir
