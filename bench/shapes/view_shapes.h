// A synthetic Bulk Data export for the ViewDefinition and FHIRPath benchmarks (bench/cases/
// view_cases.cpp), seeded and built in code: the same bytes on every target. Its resources have
// the shapes of the corpus export (/work/shared/corpus/bulk-ndjson-synthea, Synthea's): Patients
// with US Core extensions (race, birth sex, birth place), two identifiers (one with a type
// coding), official and maiden names, telecom, an address with a geolocation extension (about
// 1.5 KB each: the corpus's Patients also carry a narrative, more identifiers and extensions,
// about 5 KB);
// Observations with one to three codings, a category, a valueQuantity (or, one in ten, a
// valueCodeableConcept), effectiveDateTime and a subject reference. One file per resource type,
// as a Bulk Data export writes them.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

namespace quire::bench::shapes {

/// How many Patients and Observations an export of `resources` resources holds: a fifth Patients
/// (at least one), the rest Observations, each Observation about one of the Patients.
struct export_counts {
  size_t patients = 0;
  size_t observations = 0;
};
export_counts view_export_counts(size_t resources);

/// The export's Patient file (Patient.000.ndjson): `counts.patients` lines, each ending with LF.
std::string view_export_patients(size_t resources, uint64_t seed = 71);
/// The export's Observation file (Observation.000.ndjson), subjects among the same Patients.
std::string view_export_observations(size_t resources, uint64_t seed = 72);

}  // namespace quire::bench::shapes
