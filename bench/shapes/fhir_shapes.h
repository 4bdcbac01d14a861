// Synthetic FHIR R4 inputs, seeded and built in code: the same bytes on every target. Every shape
// is valid R4 (zero errors from quire::fhir::validate; the cases fold the error count into their
// checksums, so a shape that stops being valid shows).
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

namespace quire::bench::shapes {

/// A blood-pressure vital-signs Observation (panel with systolic and diastolic components,
/// narrative, profile, identifiers) of about 1.3 KiB.
std::string fhir_vital_signs_observation(uint64_t seed = 61);
/// A transaction Bundle of `count` entries (Patient, Encounter, Observation, Condition in turn,
/// fullUrl `urn:uuid:`, POST requests, references between entries by their urn:uuid).
std::string fhir_transaction_bundle(size_t count, uint64_t seed = 62);
/// A searchset Bundle of `count` matching Observations (absolute fullUrls, search.mode, a self link).
std::string fhir_searchset_bundle(size_t count, uint64_t seed = 63);
/// A Patient with `count` contained Practitioners and Organizations, each referenced as `#id`
/// from generalPractitioner.
std::string fhir_patient_contained(size_t count, uint64_t seed = 64);
/// `pdf_bytes` bytes of a fake PDF ("%PDF-1.4" header, then pseudo-random bytes), base64-encoded
/// on one line without padding breaks.
std::string fhir_pdf_base64(size_t pdf_bytes, uint64_t seed = 65);
/// A DiagnosticReport whose presentedForm carries a PDF of `pdf_bytes` bytes as base64.
std::string fhir_diagnostic_report_pdf(size_t pdf_bytes, uint64_t seed = 66);
/// A Binary carrying a PDF of `pdf_bytes` bytes as base64.
std::string fhir_binary_pdf(size_t pdf_bytes, uint64_t seed = 67);
/// A Bulk Data export as NDJSON: `count` resources, one per line (Patient, Encounter, Observation,
/// Condition mixed), each line ending with LF.
std::string fhir_bulk_ndjson(size_t count, uint64_t seed = 68);

}  // namespace quire::bench::shapes
