// The function table: each FHIRPath function's name, argument count, which of its arguments are
// evaluated per input item (with $this) rather than once, and its implementation (the engine's
// fn_* members, in the fhirpath_fn_*.cpp file of its group). Looked up once, at compile time.
#include <algorithm>

#include "fhirpath_engine.h"

namespace quire::fhirpath {
namespace {

constexpr uint8_t L0 = 1, L1 = 2, L2 = 4;

// Sorted by name (binary search).
const function_info FUNCTIONS[] = {
    {"abs", fn::abs, 0, 0, 0, &engine::fn_math},
    {"aggregate", fn::aggregate, 1, 2, L0, &engine::fn_aggregate},
    {"all", fn::all, 1, 1, L0, &engine::fn_all},
    {"allFalse", fn::allFalse, 0, 0, 0, &engine::fn_all_any_true_false},
    {"allTrue", fn::allTrue, 0, 0, 0, &engine::fn_all_any_true_false},
    {"anyFalse", fn::anyFalse, 0, 0, 0, &engine::fn_all_any_true_false},
    {"anyTrue", fn::anyTrue, 0, 0, 0, &engine::fn_all_any_true_false},
    {"as", fn::as_fn, 1, 1, 0, &engine::fn_is_as},
    {"ceiling", fn::ceiling, 0, 0, 0, &engine::fn_math},
    {"checkModifiers", fn::checkModifiers, 1, 1, 0, &engine::fn_unsupported},
    {"children", fn::children, 0, 0, 0, &engine::fn_children},
    {"combine", fn::combine, 1, 1, 0, &engine::fn_combine},
    {"comparable", fn::comparable, 1, 1, 0, &engine::fn_comparable},
    {"conformsTo", fn::conformsTo, 1, 1, 0, &engine::fn_conforms_to},
    {"contains", fn::contains, 1, 1, 0, &engine::fn_starts_ends_contains},
    {"convertsToBoolean", fn::convertsToBoolean, 0, 0, 0, &engine::fn_to_boolean},
    {"convertsToDate", fn::convertsToDate, 0, 0, 0, &engine::fn_to_date_time},
    {"convertsToDateTime", fn::convertsToDateTime, 0, 0, 0, &engine::fn_to_date_time},
    {"convertsToDecimal", fn::convertsToDecimal, 0, 0, 0, &engine::fn_to_decimal},
    {"convertsToInteger", fn::convertsToInteger, 0, 0, 0, &engine::fn_to_integer},
    {"convertsToQuantity", fn::convertsToQuantity, 0, 1, 0, &engine::fn_to_quantity},
    {"convertsToString", fn::convertsToString, 0, 0, 0, &engine::fn_to_string},
    {"convertsToTime", fn::convertsToTime, 0, 0, 0, &engine::fn_to_date_time},
    {"count", fn::count, 0, 0, 0, &engine::fn_count},
    {"decode", fn::decode, 1, 1, 0, &engine::fn_encode_decode},
    {"descendants", fn::descendants, 0, 0, 0, &engine::fn_repeat_descendants},
    {"distinct", fn::distinct, 0, 0, 0, &engine::fn_distinct},
    {"empty", fn::empty, 0, 0, 0, &engine::fn_empty},
    {"encode", fn::encode, 1, 1, 0, &engine::fn_encode_decode},
    {"endsWith", fn::endsWith, 1, 1, 0, &engine::fn_starts_ends_contains},
    {"escape", fn::escape, 1, 1, 0, &engine::fn_escape_unescape},
    {"exclude", fn::exclude, 1, 1, 0, &engine::fn_exclude},
    {"exists", fn::exists, 0, 1, L0, &engine::fn_exists},
    {"exp", fn::exp, 0, 0, 0, &engine::fn_math},
    {"extension", fn::extension, 1, 1, 0, &engine::fn_extension},
    {"first", fn::first, 0, 0, 0, &engine::fn_first},
    {"floor", fn::floor, 0, 0, 0, &engine::fn_math},
    {"getReferenceKey", fn::getReferenceKey, 0, 1, 0, &engine::fn_get_reference_key},
    {"getResourceKey", fn::getResourceKey, 0, 0, 0, &engine::fn_get_resource_key},
    {"getValue", fn::getValue, 0, 0, 0, &engine::fn_has_get_value},
    {"hasValue", fn::hasValue, 0, 0, 0, &engine::fn_has_get_value},
    {"highBoundary", fn::highBoundary, 0, 1, 0, &engine::fn_boundary},
    {"htmlChecks", fn::htmlChecks, 0, 0, 0, &engine::fn_unsupported},
    {"iif", fn::iif, 2, 3, L0 | L1 | L2, &engine::fn_iif},
    {"indexOf", fn::indexOf, 1, 1, 0, &engine::fn_index_of},
    {"intersect", fn::intersect, 1, 1, 0, &engine::fn_intersect},
    {"is", fn::is_fn, 1, 1, 0, &engine::fn_is_as},
    {"isDistinct", fn::isDistinct, 0, 0, 0, &engine::fn_is_distinct},
    {"join", fn::join, 0, 1, 0, &engine::fn_join},
    {"last", fn::last, 0, 0, 0, &engine::fn_last},
    {"length", fn::length, 0, 0, 0, &engine::fn_length},
    {"ln", fn::ln, 0, 0, 0, &engine::fn_math},
    {"log", fn::log, 1, 1, 0, &engine::fn_math_with_argument},
    {"lowBoundary", fn::lowBoundary, 0, 1, 0, &engine::fn_boundary},
    {"lower", fn::lower, 0, 0, 0, &engine::fn_upper_lower},
    {"matches", fn::matches, 1, 1, 0, &engine::fn_matches},
    {"matchesFull", fn::matchesFull, 1, 1, 0, &engine::fn_matches},
    {"memberOf", fn::memberOf, 1, 1, 0, &engine::fn_unsupported},
    {"not", fn::not_fn, 0, 0, 0, &engine::fn_not},
    {"now", fn::now, 0, 0, 0, &engine::fn_now_today_time_of_day},
    {"ofType", fn::ofType, 1, 1, 0, &engine::fn_of_type},
    {"power", fn::power, 1, 1, 0, &engine::fn_math_with_argument},
    {"precision", fn::precision, 0, 0, 0, &engine::fn_precision},
    {"repeat", fn::repeat, 1, 1, L0, &engine::fn_repeat_descendants},
    {"replace", fn::replace, 2, 2, 0, &engine::fn_replace},
    {"replaceMatches", fn::replaceMatches, 2, 2, 0, &engine::fn_replace_matches},
    {"resolve", fn::resolve, 0, 0, 0, &engine::fn_unsupported},
    {"round", fn::round, 0, 1, 0, &engine::fn_math_with_argument},
    {"select", fn::select, 1, 1, L0, &engine::fn_select},
    {"single", fn::single, 0, 0, 0, &engine::fn_single},
    {"skip", fn::skip, 1, 1, 0, &engine::fn_skip_take},
    {"sort", fn::sort, 0, 8, 0xFF, &engine::fn_sort},
    {"split", fn::split, 1, 1, 0, &engine::fn_split},
    {"sqrt", fn::sqrt, 0, 0, 0, &engine::fn_math},
    {"startsWith", fn::startsWith, 1, 1, 0, &engine::fn_starts_ends_contains},
    {"subsetOf", fn::subsetOf, 1, 1, 0, &engine::fn_subset_superset},
    {"substring", fn::substring, 1, 2, 0, &engine::fn_substring},
    {"subsumedBy", fn::subsumedBy, 1, 1, 0, &engine::fn_unsupported},
    {"subsumes", fn::subsumes, 1, 1, 0, &engine::fn_unsupported},
    {"supersetOf", fn::supersetOf, 1, 1, 0, &engine::fn_subset_superset},
    {"tail", fn::tail, 0, 0, 0, &engine::fn_tail},
    {"take", fn::take, 1, 1, 0, &engine::fn_skip_take},
    {"timeOfDay", fn::timeOfDay, 0, 0, 0, &engine::fn_now_today_time_of_day},
    {"toBoolean", fn::toBoolean, 0, 0, 0, &engine::fn_to_boolean},
    {"toChars", fn::toChars, 0, 0, 0, &engine::fn_to_chars},
    {"toDate", fn::toDate, 0, 0, 0, &engine::fn_to_date_time},
    {"toDateTime", fn::toDateTime, 0, 0, 0, &engine::fn_to_date_time},
    {"toDecimal", fn::toDecimal, 0, 0, 0, &engine::fn_to_decimal},
    {"toInteger", fn::toInteger, 0, 0, 0, &engine::fn_to_integer},
    {"toQuantity", fn::toQuantity, 0, 1, 0, &engine::fn_to_quantity},
    {"toString", fn::toString, 0, 0, 0, &engine::fn_to_string},
    {"toTime", fn::toTime, 0, 0, 0, &engine::fn_to_date_time},
    {"today", fn::today, 0, 0, 0, &engine::fn_now_today_time_of_day},
    {"trace", fn::trace, 1, 2, L1, &engine::fn_trace},
    {"trim", fn::trim, 0, 0, 0, &engine::fn_trim},
    {"truncate", fn::truncate, 0, 0, 0, &engine::fn_math},
    {"type", fn::type, 0, 0, 0, &engine::fn_type},
    {"unescape", fn::unescape, 1, 1, 0, &engine::fn_escape_unescape},
    {"union", fn::union_fn, 1, 1, 0, &engine::fn_union},
    {"upper", fn::upper, 0, 0, 0, &engine::fn_upper_lower},
    {"where", fn::where, 1, 1, L0, &engine::fn_where},
};

}  // namespace

const function_info *find_function(std::string_view name) noexcept {
  const function_info *first = std::begin(FUNCTIONS), *last = std::end(FUNCTIONS);
  const function_info *it =
      std::lower_bound(first, last, name, [](const function_info &f, std::string_view n) { return f.name < n; });
  return it != last && it->name == name ? it : nullptr;
}

}  // namespace quire::fhirpath
