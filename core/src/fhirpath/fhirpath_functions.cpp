// The function table: each FHIRPath function's name, argument count, and which of its arguments
// are evaluated per input item (with $this) rather than once. Looked up once, at compile time.
#include <algorithm>

#include "fhirpath_internal.h"

namespace quire::fhirpath {
namespace {

constexpr uint8_t L0 = 1, L1 = 2, L2 = 4;

// Sorted by name (binary search).
const function_info FUNCTIONS[] = {
    {"abs", fn::abs, 0, 0, 0},
    {"aggregate", fn::aggregate, 1, 2, L0},
    {"all", fn::all, 1, 1, L0},
    {"allFalse", fn::allFalse, 0, 0, 0},
    {"allTrue", fn::allTrue, 0, 0, 0},
    {"anyFalse", fn::anyFalse, 0, 0, 0},
    {"anyTrue", fn::anyTrue, 0, 0, 0},
    {"as", fn::as_fn, 1, 1, 0},
    {"ceiling", fn::ceiling, 0, 0, 0},
    {"checkModifiers", fn::checkModifiers, 1, 1, 0},
    {"children", fn::children, 0, 0, 0},
    {"combine", fn::combine, 1, 1, 0},
    {"comparable", fn::comparable, 1, 1, 0},
    {"conformsTo", fn::conformsTo, 1, 1, 0},
    {"contains", fn::contains, 1, 1, 0},
    {"convertsToBoolean", fn::convertsToBoolean, 0, 0, 0},
    {"convertsToDate", fn::convertsToDate, 0, 0, 0},
    {"convertsToDateTime", fn::convertsToDateTime, 0, 0, 0},
    {"convertsToDecimal", fn::convertsToDecimal, 0, 0, 0},
    {"convertsToInteger", fn::convertsToInteger, 0, 0, 0},
    {"convertsToQuantity", fn::convertsToQuantity, 0, 1, 0},
    {"convertsToString", fn::convertsToString, 0, 0, 0},
    {"convertsToTime", fn::convertsToTime, 0, 0, 0},
    {"count", fn::count, 0, 0, 0},
    {"decode", fn::decode, 1, 1, 0},
    {"descendants", fn::descendants, 0, 0, 0},
    {"distinct", fn::distinct, 0, 0, 0},
    {"empty", fn::empty, 0, 0, 0},
    {"encode", fn::encode, 1, 1, 0},
    {"endsWith", fn::endsWith, 1, 1, 0},
    {"escape", fn::escape, 1, 1, 0},
    {"exclude", fn::exclude, 1, 1, 0},
    {"exists", fn::exists, 0, 1, L0},
    {"exp", fn::exp, 0, 0, 0},
    {"extension", fn::extension, 1, 1, 0},
    {"first", fn::first, 0, 0, 0},
    {"floor", fn::floor, 0, 0, 0},
    {"getReferenceKey", fn::getReferenceKey, 0, 1, 0},
    {"getResourceKey", fn::getResourceKey, 0, 0, 0},
    {"getValue", fn::getValue, 0, 0, 0},
    {"hasValue", fn::hasValue, 0, 0, 0},
    {"highBoundary", fn::highBoundary, 0, 1, 0},
    {"htmlChecks", fn::htmlChecks, 0, 0, 0},
    {"iif", fn::iif, 2, 3, L0 | L1 | L2},
    {"indexOf", fn::indexOf, 1, 1, 0},
    {"intersect", fn::intersect, 1, 1, 0},
    {"is", fn::is_fn, 1, 1, 0},
    {"isDistinct", fn::isDistinct, 0, 0, 0},
    {"join", fn::join, 0, 1, 0},
    {"last", fn::last, 0, 0, 0},
    {"length", fn::length, 0, 0, 0},
    {"ln", fn::ln, 0, 0, 0},
    {"log", fn::log, 1, 1, 0},
    {"lowBoundary", fn::lowBoundary, 0, 1, 0},
    {"lower", fn::lower, 0, 0, 0},
    {"matches", fn::matches, 1, 1, 0},
    {"matchesFull", fn::matchesFull, 1, 1, 0},
    {"memberOf", fn::memberOf, 1, 1, 0},
    {"not", fn::not_fn, 0, 0, 0},
    {"now", fn::now, 0, 0, 0},
    {"ofType", fn::ofType, 1, 1, 0},
    {"power", fn::power, 1, 1, 0},
    {"precision", fn::precision, 0, 0, 0},
    {"repeat", fn::repeat, 1, 1, L0},
    {"replace", fn::replace, 2, 2, 0},
    {"replaceMatches", fn::replaceMatches, 2, 2, 0},
    {"resolve", fn::resolve, 0, 0, 0},
    {"round", fn::round, 0, 1, 0},
    {"select", fn::select, 1, 1, L0},
    {"single", fn::single, 0, 0, 0},
    {"skip", fn::skip, 1, 1, 0},
    {"sort", fn::sort, 0, 8, 0xFF},
    {"split", fn::split, 1, 1, 0},
    {"sqrt", fn::sqrt, 0, 0, 0},
    {"startsWith", fn::startsWith, 1, 1, 0},
    {"subsetOf", fn::subsetOf, 1, 1, 0},
    {"substring", fn::substring, 1, 2, 0},
    {"subsumedBy", fn::subsumedBy, 1, 1, 0},
    {"subsumes", fn::subsumes, 1, 1, 0},
    {"supersetOf", fn::supersetOf, 1, 1, 0},
    {"tail", fn::tail, 0, 0, 0},
    {"take", fn::take, 1, 1, 0},
    {"timeOfDay", fn::timeOfDay, 0, 0, 0},
    {"toBoolean", fn::toBoolean, 0, 0, 0},
    {"toChars", fn::toChars, 0, 0, 0},
    {"toDate", fn::toDate, 0, 0, 0},
    {"toDateTime", fn::toDateTime, 0, 0, 0},
    {"toDecimal", fn::toDecimal, 0, 0, 0},
    {"toInteger", fn::toInteger, 0, 0, 0},
    {"toQuantity", fn::toQuantity, 0, 1, 0},
    {"toString", fn::toString, 0, 0, 0},
    {"toTime", fn::toTime, 0, 0, 0},
    {"today", fn::today, 0, 0, 0},
    {"trace", fn::trace, 1, 2, L1},
    {"trim", fn::trim, 0, 0, 0},
    {"truncate", fn::truncate, 0, 0, 0},
    {"type", fn::type, 0, 0, 0},
    {"unescape", fn::unescape, 1, 1, 0},
    {"union", fn::union_fn, 1, 1, 0},
    {"upper", fn::upper, 0, 0, 0},
    {"where", fn::where, 1, 1, L0},
};

}  // namespace

const function_info *find_function(std::string_view name) noexcept {
  const function_info *first = std::begin(FUNCTIONS), *last = std::end(FUNCTIONS);
  const function_info *it =
      std::lower_bound(first, last, name, [](const function_info &f, std::string_view n) { return f.name < n; });
  return it != last && it->name == name ? it : nullptr;
}

}  // namespace quire::fhirpath
