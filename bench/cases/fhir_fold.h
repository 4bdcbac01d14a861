// What the FHIR cases fold into their checksums: a validation outcome's counts and each issue's
// place, the same on every target (fhir_cases.cpp, fhir_xml_cases.cpp).
#pragma once

#include "quire/bench.h"
#include "quire/fhir.h"

namespace quire::bench {

inline uint64_t fold_outcome(uint64_t d, const fhir::outcome &o) {
  d = mix(d, o.errors);
  d = mix(d, o.warnings);
  d = mix(d, o.issues.size());
  for (const auto &i : o.issues) {
    d = digest(i.expression, d);
    d = mix(d, i.offset);
  }
  return d;
}

}  // namespace quire::bench
