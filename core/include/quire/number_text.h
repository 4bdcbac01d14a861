// quire/number_text.h — the one printer of doubles. Every JSON text core writes (rows, aggregates,
// reports, FHIRPath results) prints its doubles here, so native, wasm and the CLI give the same bytes.
#pragma once

#include <string>

namespace quire {

/// Appends the shortest decimal text that reads back as exactly `v`, laid out as ECMAScript's
/// Number::toString lays it out (so it equals what `JSON.stringify` prints in JavaScript): fixed
/// notation for exponents -7 < e < 21 (`0.1`, `1250075.5`, `100000000000000000000`), else
/// `1e+21`, `5e-324`, `1.5e-7`. -0 prints as `0`. JSON has no infinities or NaN: a non-finite `v`
/// appends `null` (results that can hold one say so with a flag next to it).
void append_double(std::string &out, double v);

}  // namespace quire
