// Shared inside core/src/fhirpath only: the evaluator's engine, whose parts follow the FHIRPath
// specification's chapters, one file each:
//
//   fhirpath_eval.cpp        the walk over the compiled nodes, variables, calls, the public entry points
//   fhirpath_navigation.cpp  paths: member access on the tape with R4 types, children(), descendants()
//   fhirpath_equality.cpp    equality and equivalence, comparison of values, quantities
//   fhirpath_operators.cpp   boolean logic, collections (| in contains), math, date/time arithmetic
//   fhirpath_types.cpp       types: is/as, ofType(), type(), FHIR type names and inheritance
//   fhirpath_fn_*.cpp        the functions, by the specification's groups: collections (existence,
//                            filtering and projection, subsetting, combining), conversion, strings,
//                            matches (the regular expressions), math, utility (with aggregates),
//                            FHIR's additions
//
// Every node appends its result to a collection the caller gives it; intermediate collections
// come from a stack of buffers kept in the evaluator, so evaluating one expression over many
// resources reuses the same memory. Items from the resource are views into the tape with the
// FHIR type the R4 tables give the element; computed strings live in the evaluator's arena until
// the next evaluate().
#pragma once

#include <deque>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "fhirpath_internal.h"

namespace quire::fhirpath {

// What a member name means on objects of one FHIR type, found once from the R4 tables and kept
// (engine::member_rule): finding it per key with fx::find_key was a good part of evaluating.
enum class member_mode : uint8_t {
  seen,     // met once: looked up as `general` this time, the rule is found the next time
  general,  // look every candidate key up (a choice element: `value` matches valueQuantity...)
  exact,    // only the key `name` (and its `_name` companion) can match; its type is `type`
  none,     // no key of the type matches
};
struct member_slot {
  uint64_t program = 0;  // expression::program::id; 0: empty
  uint32_t node = 0;
  uint16_t fhir_type = NO_FHIR_TYPE;
  member_mode mode = member_mode::general;
  uint16_t type = NO_FHIR_TYPE;
};

}  // namespace quire::fhirpath

struct quire::fhirpath::evaluator::state {
  limits lim;
  // Two-way set associative on (program, node, type), made on first use (fhir's validation makes
  // an evaluator per resource, most of which never reach a member step twice).
  std::vector<member_slot> members;
  const expression::program *prog = nullptr;
  const environment *env = nullptr;
  item context;
  item resource;
  item root_resource;
  // %resource and %rootResource are typed on first use: looking a resource's type up costs more
  // than many expressions that never name them (fhir evaluates invariants by the hundred thousand).
  bool resources_ready = false;
  std::vector<std::unique_ptr<collection>> pool;
  size_t pool_used = 0;
  std::deque<std::string> strings;
  collection out;
  quire::error err;
  bool failed = false;
  uint64_t comparisons = 0;
};

namespace quire::fhirpath {

using state = evaluator::state;

struct frame {
  const item *this_items = nullptr;
  size_t this_count = 0;
  int64_t index = 0;
  const collection *total = nullptr;
};

// A buffer borrowed from the evaluator's pool for the length of a scope.
class scratch {
 public:
  explicit scratch(state &s) : s_(s) {
    if (s_.pool_used == s_.pool.size()) s_.pool.push_back(std::make_unique<collection>());
    c_ = s_.pool[s_.pool_used++].get();
    c_->clear();
  }
  ~scratch() { --s_.pool_used; }
  scratch(const scratch &) = delete;
  scratch &operator=(const scratch &) = delete;
  collection &operator*() { return *c_; }
  collection *operator->() { return c_; }
  collection &get() { return *c_; }

 private:
  state &s_;
  collection *c_;
};

inline item boolean_item(bool b) {
  item v;
  v.kind = value_kind::boolean;
  v.boolean = b;
  return v;
}
inline item integer_item(int64_t i) {
  item v;
  v.kind = value_kind::integer;
  v.integer = i;
  v.dec = to_decimal(i);
  return v;
}
inline item decimal_item(decimal d) {
  item v;
  v.kind = value_kind::decimal;
  v.dec = d;
  return v;
}
inline bool is_number(const item &v) { return v.kind == value_kind::integer || v.kind == value_kind::decimal; }
inline bool is_moment(const item &v) {
  return v.kind == value_kind::date || v.kind == value_kind::date_time || v.kind == value_kind::time;
}
inline bool is_primitive_type(uint16_t t) {
  return t != NO_FHIR_TYPE && t < fx::TYPE_COUNT && fx::TYPES[t].kind == fx::type_kind::primitive;
}

// --- items of the resource (fhirpath_navigation.cpp) ---
/// Fills `it` (a default item) for one JSON value of FHIR type t (NO_FHIR_TYPE: untyped JSON).
void fill_item(item &it, const json::value &v, uint16_t t, const json::value *companion);
item make_item(const json::value &v, uint16_t t, const json::value *companion);
/// Appends the items of a JSON member (a value or an array of them) with their companions.
void push_json(const json::value *v, const json::value *comp, uint16_t t, collection &out);
/// The FHIR type of R4's Extension.
uint16_t extension_type();

// --- values (fhirpath_equality.cpp) ---
/// A quantity from a System quantity or a FHIR Quantity element.
bool quantity_of(const item &v, decimal &value, std::string_view &unit);
bool is_quantity_like(const item &v);
/// Units in one spelling for comparison: calendar words with an exact UCUM twin become that code.
std::string_view comparable_unit(std::string_view u, bool &calendar_year_month);
/// Compares two quantities: -1/0/1, or 2 when not comparable.
int compare_quantities(decimal av, std::string_view au, decimal bv, std::string_view bu);
std::string normalize_space_lower(std::string_view s);
/// Whether a value is of a type named in `is`, `as`, ofType() (fhirpath_types.cpp).
bool is_a(const item &v, const type_spec &ts);

class engine {
 public:
  explicit engine(state &s) : s_(s), prog_(*s.prog) {}

  bool eval(uint32_t n, const frame &f, collection &out);

  // --- errors and helpers ---
  bool fail(error_code c, uint32_t pos, std::string msg) {
    if (!s_.failed) {
      s_.failed = true;
      s_.err = quire::error(c, std::move(msg), pos);
    }
    return false;
  }
  bool type_error(uint32_t pos, std::string msg) { return fail(error_code::FHIRPATH_TYPE_ERROR, pos, std::move(msg)); }
  bool check_size(const collection &c, uint32_t pos) {
    if (c.size() > s_.lim.max_collection)
      return fail(error_code::RESULT_TOO_LARGE, pos,
                  "a collection grew past max_collection (" + std::to_string(s_.lim.max_collection) + ")");
    return true;
  }
  const item *single(const collection &c, uint32_t pos, const char *what) {
    if (c.size() != 1) {
      type_error(pos, std::string(what) + " must be a single item, not " + std::to_string(c.size()));
      return nullptr;
    }
    return &c[0];
  }
  std::string_view keep(std::string s) {
    s_.strings.push_back(std::move(s));
    return s_.strings.back();
  }
  item string_item(std::string s) {
    item v;
    v.kind = value_kind::string;
    v.text = keep(std::move(s));
    return v;
  }
  item quantity_item(decimal v, std::string_view unit) {
    item q;
    q.kind = value_kind::quantity;
    q.dec = v;
    q.text = keep(std::string(unit));
    return q;
  }

  // --- variables, calls and their arguments (fhirpath_eval.cpp) ---
  bool variable(const node &nd, collection &out);
  bool call(const node &nd, const frame &f, collection &out);
  bool arg(const node &nd, uint32_t i, const frame &f, collection &out) {
    return eval(prog_.args[nd.first_arg + i], f, out);
  }
  // Evaluates argument i once (relative to the outer $this) and takes its single item, if any.
  bool arg_single(const node &nd, uint32_t i, const frame &f, collection &buf, const item *&v);
  bool arg_integer(const node &nd, uint32_t i, const frame &f, collection &buf, bool &present, int64_t &value);
  bool arg_string(const node &nd, uint32_t i, const frame &f, collection &buf, bool &present, std::string_view &value);
  /// The frame of item i of `in` as $this (and $index).
  static frame per_item(const collection &in, size_t i) {
    frame g;
    g.this_items = &in[i];
    g.this_count = 1;
    g.index = static_cast<int64_t>(i);
    return g;
  }
  /// Evaluates argument 0 with item i of `in` as $this (and $index) and takes its truth.
  bool criterion(const node &nd, const collection &in, size_t i, int &truth_value);

  // --- paths (fhirpath_navigation.cpp) ---
  bool member(const item &v, const node &nd, bool path_start, collection &out);
  bool no_member(const node &nd, uint16_t t);
  const member_slot &member_rule(const node &nd, uint16_t t);
  void children(const item &v, collection &out);

  // --- operators (fhirpath_equality.cpp, fhirpath_operators.cpp, fhirpath_types.cpp) ---
  /// = on two items: 1 true, 0 false, -1 empty.
  int equal_items(const item &a, const item &b);
  bool equivalent_items(const item &a, const item &b);
  /// Three-valued truth of a collection used as a boolean: -1 empty, 0 false, 1 true.
  int truth(const collection &c, uint32_t pos, bool &ok);
  bool logic(const node &nd, const frame &f, collection &out);
  bool contains_item(const collection &c, const item &v, size_t from = 0);
  /// a | b: the items of both without duplicates, appended to out.
  bool union_of(const collection &a, const collection &b, uint32_t pos, collection &out);
  bool binary(const node &nd, const frame &f, collection &out);
  bool compare(const node &nd, const item &x, const item &y, collection &out);
  bool arithmetic(const node &nd, const item &x, const item &y, collection &out);

  // --- functions: each row of the function table (fhirpath_functions.cpp) points at one of these,
  // with the input evaluated; several rows may share one (allTrue/anyTrue...).
  // Existence (fhirpath_fn_collections.cpp)
  bool fn_empty(const node &nd, const frame &f, const collection &in, collection &out);
  bool fn_exists(const node &nd, const frame &f, const collection &in, collection &out);
  bool fn_all(const node &nd, const frame &f, const collection &in, collection &out);
  bool fn_all_any_true_false(const node &nd, const frame &f, const collection &in, collection &out);
  bool fn_subset_superset(const node &nd, const frame &f, const collection &in, collection &out);
  bool fn_count(const node &nd, const frame &f, const collection &in, collection &out);
  bool fn_distinct(const node &nd, const frame &f, const collection &in, collection &out);
  bool fn_is_distinct(const node &nd, const frame &f, const collection &in, collection &out);
  // Filtering and projection, subsetting, combining (fhirpath_fn_collections.cpp)
  bool fn_where(const node &nd, const frame &f, const collection &in, collection &out);
  bool fn_select(const node &nd, const frame &f, const collection &in, collection &out);
  bool fn_single(const node &nd, const frame &f, const collection &in, collection &out);
  bool fn_first(const node &nd, const frame &f, const collection &in, collection &out);
  bool fn_last(const node &nd, const frame &f, const collection &in, collection &out);
  bool fn_tail(const node &nd, const frame &f, const collection &in, collection &out);
  bool fn_skip_take(const node &nd, const frame &f, const collection &in, collection &out);
  bool fn_intersect(const node &nd, const frame &f, const collection &in, collection &out);
  bool fn_exclude(const node &nd, const frame &f, const collection &in, collection &out);
  bool fn_union(const node &nd, const frame &f, const collection &in, collection &out);
  bool fn_combine(const node &nd, const frame &f, const collection &in, collection &out);
  // Tree navigation, and repeat() which walks as descendants() does (fhirpath_navigation.cpp)
  bool fn_children(const node &nd, const frame &f, const collection &in, collection &out);
  bool fn_repeat_descendants(const node &nd, const frame &f, const collection &in, collection &out);
  // Types (fhirpath_types.cpp)
  bool fn_of_type(const node &nd, const frame &f, const collection &in, collection &out);
  bool fn_is_as(const node &nd, const frame &f, const collection &in, collection &out);
  bool fn_type(const node &nd, const frame &f, const collection &in, collection &out);
  // Conversion, with iif() (fhirpath_fn_conversion.cpp)
  bool fn_iif(const node &nd, const frame &f, const collection &in, collection &out);
  bool fn_to_boolean(const node &nd, const frame &f, const collection &in, collection &out);
  bool fn_to_integer(const node &nd, const frame &f, const collection &in, collection &out);
  bool fn_to_decimal(const node &nd, const frame &f, const collection &in, collection &out);
  bool fn_to_string(const node &nd, const frame &f, const collection &in, collection &out);
  bool fn_to_date_time(const node &nd, const frame &f, const collection &in, collection &out);
  bool fn_to_quantity(const node &nd, const frame &f, const collection &in, collection &out);
  /// Whether v converts (toBoolean()...), and to what (r).
  using converter = bool (engine::*)(const node &nd, const item &v, item &r);
  bool convert(const node &nd, const collection &in, collection &out, converter to);
  bool to_boolean(const node &nd, const item &v, item &r);
  bool to_integer(const node &nd, const item &v, item &r);
  bool to_decimal(const node &nd, const item &v, item &r);
  bool to_string(const node &nd, const item &v, item &r);
  bool to_date_time(const node &nd, const item &v, item &r);
  bool to_quantity(const node &nd, const item &v, item &r);
  // String manipulation (fhirpath_fn_strings.cpp; the regular expressions in fhirpath_fn_matches.cpp)
  bool fn_index_of(const node &nd, const frame &f, const collection &in, collection &out);
  bool fn_substring(const node &nd, const frame &f, const collection &in, collection &out);
  bool fn_starts_ends_contains(const node &nd, const frame &f, const collection &in, collection &out);
  bool fn_upper_lower(const node &nd, const frame &f, const collection &in, collection &out);
  bool fn_replace(const node &nd, const frame &f, const collection &in, collection &out);
  bool fn_matches(const node &nd, const frame &f, const collection &in, collection &out);
  bool fn_replace_matches(const node &nd, const frame &f, const collection &in, collection &out);
  bool fn_length(const node &nd, const frame &f, const collection &in, collection &out);
  bool fn_to_chars(const node &nd, const frame &f, const collection &in, collection &out);
  bool fn_split(const node &nd, const frame &f, const collection &in, collection &out);
  bool fn_join(const node &nd, const frame &f, const collection &in, collection &out);
  bool fn_trim(const node &nd, const frame &f, const collection &in, collection &out);
  bool fn_encode_decode(const node &nd, const frame &f, const collection &in, collection &out);
  bool fn_escape_unescape(const node &nd, const frame &f, const collection &in, collection &out);
  /// A string function's single string input and its string arguments (each evaluated once).
  struct string_call {
    const item *input = nullptr;  ///< nullptr: the input is empty, and so is the result
    std::string_view s;           ///< the input's text
    bool p0 = false;              ///< argument 0 is given (not empty): its text is x
    std::string_view x;
    bool p1 = false;  ///< argument 1 is given: its text is y
    std::string_view y;
  };
  bool string_call_of(const node &nd, const frame &f, const collection &in, bool with_args, string_call &c);
  /// Which arguments a string function needs given: an empty one makes the result empty.
  enum class string_args : uint8_t { none, first, both };
  /// The opening of every string function: its input one string (else a type error) and, unless
  /// `args` is none, its arguments' texts; an empty input or an empty needed argument gives an
  /// empty result, anything else body(c).
  template <typename Body>
  bool on_string(const node &nd, const frame &f, const collection &in, string_args args, Body &&body) {
    string_call c;
    if (!string_call_of(nd, f, in, args != string_args::none, c)) return false;
    if (!c.input || (args != string_args::none && !c.p0) || (args == string_args::both && !c.p1)) return true;
    return body(c);
  }
  // Math (fhirpath_fn_math.cpp)
  bool fn_math(const node &nd, const frame &f, const collection &in, collection &out);
  bool fn_math_with_argument(const node &nd, const frame &f, const collection &in, collection &out);
  bool math_function(const node &nd, const collection &in, collection &out);
  // Utility, boolean not(), aggregates, sort (fhirpath_fn_utility.cpp)
  bool fn_not(const node &nd, const frame &f, const collection &in, collection &out);
  bool fn_trace(const node &nd, const frame &f, const collection &in, collection &out);
  bool fn_now_today_time_of_day(const node &nd, const frame &f, const collection &in, collection &out);
  bool fn_precision(const node &nd, const frame &f, const collection &in, collection &out);
  bool fn_boundary(const node &nd, const frame &f, const collection &in, collection &out);
  bool fn_comparable(const node &nd, const frame &f, const collection &in, collection &out);
  bool fn_aggregate(const node &nd, const frame &f, const collection &in, collection &out);
  bool fn_sort(const node &nd, const frame &f, const collection &in, collection &out);
  // FHIR's additions and SQL on FHIR's (fhirpath_fn_fhir.cpp)
  bool fn_extension(const node &nd, const frame &f, const collection &in, collection &out);
  bool fn_has_get_value(const node &nd, const frame &f, const collection &in, collection &out);
  bool fn_conforms_to(const node &nd, const frame &f, const collection &in, collection &out);
  bool fn_unsupported(const node &nd, const frame &f, const collection &in, collection &out);
  bool fn_get_resource_key(const node &nd, const frame &f, const collection &in, collection &out);
  bool fn_get_reference_key(const node &nd, const frame &f, const collection &in, collection &out);

  state &s_;
  const expression::program &prog_;
};

}  // namespace quire::fhirpath
