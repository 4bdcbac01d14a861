// Synthetic JSON inputs, seeded and built in code: the same bytes on every target.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

namespace quire::bench::shapes {

/// An array of `count` flat records (ids, names, booleans, decimals, a small array, a nested object).
std::string json_records(size_t count, uint64_t seed = 42);
/// An array of `count` numbers: integers, decimals with trailing zeros, exponents.
std::string json_numbers(size_t count, uint64_t seed = 43);
/// An array of `count` strings with escapes and non-ASCII text.
std::string json_strings(size_t count, uint64_t seed = 44);
/// Objects nested `depth` deep, `width` members at each level.
std::string json_nested(size_t depth, size_t width);

}  // namespace quire::bench::shapes
