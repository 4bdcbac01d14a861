// Shared inside core/src/fhirpath: the compiled form, the function table, value helpers
// (decimals, dates, quantities, types). The evaluator's engine is in fhirpath_engine.h. Shared by
// design with core/src/fhir/fhir_invariant_checks.cpp, which reads the compiled form (read only)
// to lower invariants into direct checks, and compares decimals and dates with these helpers.
#pragma once

#include <cstdint>
#include <deque>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "../r4/r4_tables.h"
#include "quire/fhirpath.h"

namespace quire::fhirpath {

namespace fx = quire::r4;

constexpr uint32_t NONE = 0xFFFFFFFF;

enum class op : uint8_t {
  literal,     // lit
  empty,       // {}
  this_item,   // $this
  index_item,  // $index
  total_item,  // $total
  variable,    // %name
  member,      // a.name (a == NONE: name on $this, the start of a path)
  call,        // a.fn(args) (a == NONE: fn on $this)
  indexer,     // a[b]
  negate,      // -a
  mul,
  div,
  idiv,
  mod,
  add,
  sub,
  concat,
  is_type,
  as_type,  // a is T, a as T
  union_set,
  lt,
  gt,
  le,
  ge,
  eq,
  ne,
  equiv,
  nequiv,
  in_set,
  contains_set,
  and_op,
  or_op,
  xor_op,
  implies,
};

/// A type named in `is`, `as`, ofType(): a System type, a FHIR type, or an abstract FHIR base.
struct type_spec {
  enum class space : uint8_t { system, fhir, abstract_fhir } ns = space::system;
  value_kind system_kind = value_kind::boolean;
  uint16_t fhir = NO_FHIR_TYPE;
  uint8_t abstract_kind = 0;  // ABSTRACT_* below
  bool unqualified = false;   // `Quantity` (no namespace) matches System and FHIR quantities
};
enum : uint8_t {
  ABSTRACT_RESOURCE = 1,
  ABSTRACT_DOMAIN_RESOURCE,
  ABSTRACT_ELEMENT,
  ABSTRACT_BACKBONE,
  ABSTRACT_ANY,
  ABSTRACT_NOTHING
};

enum class fn : uint8_t;
class regex;
struct function_info;

struct node {
  op kind = op::empty;
  fn function{};
  const function_info *function_def = nullptr;  // call: its row of the function table
  uint32_t pos = 0;                             // byte offset in the expression
  uint32_t a = NONE, b = NONE;
  uint32_t first_arg = 0, arg_count = 0;
  std::string name;                      // member, variable, call
  item lit;                              // literal (its text points into program::strings)
  type_spec type;                        // is_type, as_type, calls to is/as/ofType; a member named like a FHIR type
  bool names_type = false;               // member: `type` holds the FHIR type its name spells (resolved once)
  std::shared_ptr<const regex> pattern;  // call: its constant regular expression, compiled once
};

}  // namespace quire::fhirpath

namespace quire::fhirpath {
/// A number no other program of this process has had: evaluators key their caches on it (an
/// address could be reused by a later program).
uint64_t next_program_id() noexcept;
}  // namespace quire::fhirpath

struct quire::fhirpath::expression::program {
  uint64_t id = next_program_id();
  std::string text;
  std::vector<node> nodes;
  std::vector<uint32_t> args;
  std::deque<std::string> strings;  // literal texts (a deque: views stay valid)
  uint32_t root = NONE;
};

namespace quire::fhirpath {

// --- functions: names and shapes ---
enum class fn : uint8_t {
  empty,
  exists,
  all,
  allTrue,
  anyTrue,
  allFalse,
  anyFalse,
  subsetOf,
  supersetOf,
  count,
  distinct,
  isDistinct,
  where,
  select,
  repeat,
  ofType,
  single,
  first,
  last,
  tail,
  skip,
  take,
  intersect,
  exclude,
  union_fn,
  combine,
  iif,
  toBoolean,
  convertsToBoolean,
  toInteger,
  convertsToInteger,
  toDecimal,
  convertsToDecimal,
  toString,
  convertsToString,
  toDate,
  convertsToDate,
  toDateTime,
  convertsToDateTime,
  toTime,
  convertsToTime,
  toQuantity,
  convertsToQuantity,
  indexOf,
  substring,
  startsWith,
  endsWith,
  contains,
  upper,
  lower,
  replace,
  matches,
  matchesFull,
  replaceMatches,
  length,
  toChars,
  split,
  join,
  trim,
  encode,
  decode,
  escape,
  unescape,
  abs,
  ceiling,
  exp,
  floor,
  ln,
  log,
  power,
  round,
  sqrt,
  truncate,
  children,
  descendants,
  trace,
  now,
  timeOfDay,
  today,
  not_fn,
  is_fn,
  as_fn,
  type,
  aggregate,
  sort,
  extension,
  hasValue,
  getValue,
  conformsTo,
  memberOf,
  subsumes,
  subsumedBy,
  htmlChecks,
  resolve,
  lowBoundary,
  highBoundary,
  precision,
  comparable,
  elementDefinition,
  checkModifiers,
  getResourceKey,
  getReferenceKey,
};
class engine;
struct frame;
/// A function's implementation (fhirpath_engine.h): the call node, the caller's frame, the input
/// (evaluated), the output to append to; false once the evaluation failed.
using function_impl = bool (engine::*)(const node &, const frame &, const collection &, collection &);
struct function_info {
  std::string_view name;
  fn id;
  uint8_t min_args, max_args;
  uint8_t lambda_mask;  // bit i: argument i is evaluated per item with $this (not once)
  function_impl impl;
};
/// The function called `name`; nullptr when none.
const function_info *find_function(std::string_view name) noexcept;

// --- decimals ---
bool parse_decimal(std::string_view text, decimal &out) noexcept;
std::string decimal_text(decimal d);
/// Compares values (scales aligned): -1, 0, 1.
int compare_decimal(decimal a, decimal b) noexcept;
decimal to_decimal(int64_t i) noexcept;
/// Rounds half away from zero to `scale` digits (scale may grow: pads).
bool rescale(decimal &d, int32_t scale) noexcept;
bool add_decimal(decimal a, decimal b, decimal &out, bool subtract) noexcept;
bool mul_decimal(decimal a, decimal b, decimal &out) noexcept;
bool div_decimal(decimal a, decimal b, decimal &out) noexcept;
double decimal_to_double(decimal d) noexcept;
bool double_to_decimal(double v, decimal &out) noexcept;
/// Drops trailing zeros of the fraction down to `min_scale`.
void trim_decimal(decimal &d, int32_t min_scale) noexcept;

// --- dates and times ---
struct moment {
  int year = 0, month = 1, day = 1, hour = 0, minute = 0, second = 0, millis = 0;
  int tz_minutes = 0;
  bool has_tz = false;
  bool is_time = false;  // a Time (no date part)
  // year=1 month=2 day=3 hour=4 minute=5 second=6 millis=7 (time: hour=4...)
  uint8_t precision = 0;
};
bool parse_date_time(std::string_view text, value_kind kind, moment &out) noexcept;
std::string moment_text(const moment &m);
/// -1/0/1; 2 when the precisions (or timezones) differ so that the order is unknown; 3 when a
/// time of day is compared with a date.
int compare_moment(const moment &a, const moment &b) noexcept;
/// Adds `amount` of calendar `unit` (year, month, week, day, hour, minute, second, millisecond);
/// false when the unit does not apply.
bool add_to_moment(moment &m, int64_t amount, std::string_view unit) noexcept;

// --- quantities ---
/// The calendar word of a unit (`days` → `day`), empty when none.
std::string_view calendar_unit(std::string_view unit) noexcept;
/// The UCUM code for calendar words that have an exact equivalent (week → wk, day → d...).
std::string_view ucum_for_calendar(std::string_view unit) noexcept;
/// Converts `value` in `from` to `to` when both are known UCUM units of one dimension.
bool convert_units(decimal value, std::string_view from, std::string_view to, decimal &out) noexcept;
bool units_comparable(std::string_view a, std::string_view b) noexcept;
/// A quantity as FHIRPath writes it: `1 'cm'`, `2 weeks` (calendar words unquoted).
std::string quantity_text(decimal value, std::string_view unit);
/// The base unit of a known UCUM unit's dimension (m, g, s, L, 1); empty when unknown.
std::string_view base_unit(std::string_view code) noexcept;

// --- strings ---
size_t utf8_length(std::string_view s) noexcept;
/// Byte offset of code point `index` (s.size() when past the end).
size_t utf8_offset(std::string_view s, size_t index) noexcept;

// --- FHIR types ---
std::string_view fhir_type_name(uint16_t t) noexcept;
/// Whether a FHIR type is the spec's type or derives from it.
bool fhir_is_a(uint16_t t, const type_spec &spec) noexcept;
/// Resolves `FHIR.Patient`, `System.String`, `string`; false when unknown.
bool resolve_type(std::string_view ns, std::string_view name, type_spec &out) noexcept;
std::string type_spec_name(const type_spec &t);

}  // namespace quire::fhirpath
