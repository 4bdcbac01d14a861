// Synthetic HL7 v2 inputs, seeded and built in code: the same bytes on every target.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

namespace quire::bench::shapes {

/// An ADT^A01 (admit) of about 1 KiB: MSH, EVN, PID, NK1, PV1, AL1, DG1, with repetitions,
/// components, subcomponents and escapes. Segments end with CR.
std::string hl7v2_adt_a01(uint64_t seed = 51);
/// An ORU^R01 with `obx_count` numeric results (OBX NM with units, range and flags; an NTE after
/// every 50th).
std::string hl7v2_oru_r01(size_t obx_count, uint64_t seed = 52);
/// An ORU^R01 carrying a PDF as base64 in OBX-5 (ED type) of about `payload_bytes` bytes of base64.
std::string hl7v2_oru_pdf(size_t payload_bytes, uint64_t seed = 53);
/// A batch file of `count` messages (ADT^A01, ADT^A08 and small ORU^R01) in FHS/BHS ... BTS/FTS.
std::string hl7v2_batch(size_t count, uint64_t seed = 54);
/// The messages of `input` (one message or a batch) each framed for MLLP, back to back.
std::string hl7v2_mllp_stream(const std::string &input);

}  // namespace quire::bench::shapes
