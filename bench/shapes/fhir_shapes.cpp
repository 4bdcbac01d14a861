#include "fhir_shapes.h"

#include <string_view>

#include "quire/bench.h"

namespace quire::bench::shapes {

// Every draw from the generator is its own statement: the order in which operands of `+` are
// evaluated is unspecified (g++ and clang differ), and the input must be the same bytes everywhere.

namespace {

const char *const FAMILIES[] = {"Okafor", "Hansen", "Quispe", "Nguyen", "Mensah", "Ozols", "Garcia", "Sato"};
const char *const GIVENS[] = {"Ada", "Bjorn", "Rosa", "Linh", "Kwame", "Ilze", "Mateo", "Yuki"};
const char *const CITIES[] = {"Lagos", "Oslo", "Lima", "Hanoi", "Accra", "Riga", "Quito", "Perth"};
const char *const GENDERS[] = {"female", "male", "other", "unknown"};

// "e12". Not "e" + std::to_string(i), on which g++ 12 warns (-Wrestrict, a false positive).
std::string numbered(const char *prefix, size_t i) {
  std::string out(prefix);
  out += std::to_string(i);
  return out;
}

std::string two_digits(uint64_t v) {
  return std::string(1, static_cast<char>('0' + v / 10)) + static_cast<char>('0' + v % 10);
}

std::string hex(uint64_t v, int digits) {
  static const char DIGITS[] = "0123456789abcdef";
  std::string out(static_cast<size_t>(digits), '0');
  for (int i = digits - 1; i >= 0; --i) {
    out[static_cast<size_t>(i)] = DIGITS[v & 15];
    v >>= 4;
  }
  return out;
}

// A version 4 UUID, lowercase (FHIR's urn:uuid form).
std::string uuid(rng &r) {
  uint64_t a = r.next();
  uint64_t b = r.next();
  return hex(a >> 32, 8) + "-" + hex(a >> 16, 4) + "-4" + hex(a, 3) + "-" + hex(8 | ((b >> 60) & 3), 1) +
         hex(b >> 48, 3) + "-" + hex(b, 12);
}

// A valid date between 1930 and 2009 (days 1-28, so every month has them).
std::string birth_date(rng &r) {
  uint64_t year = 1930 + r.below(80);
  uint64_t month = 1 + r.below(12);
  uint64_t day = 1 + r.below(28);
  return std::to_string(year) + "-" + two_digits(month) + "-" + two_digits(day);
}

std::string date_time(rng &r) {
  uint64_t month = 1 + r.below(12);
  uint64_t day = 1 + r.below(28);
  uint64_t hour = r.below(24);
  uint64_t minute = r.below(60);
  return "2024-" + two_digits(month) + "-" + two_digits(day) + "T" + two_digits(hour) + ":" + two_digits(minute) +
         ":00+01:00";
}

std::string patient(rng &r, const std::string &id) {
  const char *family = FAMILIES[r.below(8)];
  const char *given = GIVENS[r.below(8)];
  const char *gender = GENDERS[r.below(4)];
  std::string born = birth_date(r);
  uint64_t mrn = r.below(100000000);
  uint64_t phone = r.below(10000000);
  uint64_t house = 1 + r.below(400);
  const char *city = CITIES[r.below(8)];
  uint64_t postal = 10000 + r.below(90000);
  return "{\"resourceType\":\"Patient\",\"id\":\"" + id +
         "\",\"meta\":{\"lastUpdated\":\"2024-06-01T08:30:00Z\"},\"identifier\":[{\"use\":\"usual\",\"system\":\"urn:"
         "oid:1.2.36.146.595.217.0.1\",\"value\":\"MRN" +
         std::to_string(mrn) + "\"}],\"active\":true,\"name\":[{\"use\":\"official\",\"family\":\"" + family +
         "\",\"given\":[\"" + given + "\"]}],\"telecom\":[{\"system\":\"phone\",\"value\":\"+47 " +
         std::to_string(phone) + "\",\"use\":\"home\"}],\"gender\":\"" + gender + "\",\"birthDate\":\"" + born +
         "\",\"address\":[{\"use\":\"home\",\"line\":[\"" + std::to_string(house) + " Harbour Road\"],\"city\":\"" +
         city + "\",\"postalCode\":\"" + std::to_string(postal) + "\",\"country\":\"NO\"}]}";
}

std::string encounter(rng &r, const std::string &id, const std::string &subject) {
  std::string start = date_time(r);
  return "{\"resourceType\":\"Encounter\",\"id\":\"" + id +
         "\",\"status\":\"finished\",\"class\":{\"system\":\"http://terminology.hl7.org/CodeSystem/"
         "v3-ActCode\",\"code\":\"AMB\",\"display\":\"ambulatory\"},\"type\":[{\"coding\":[{\"system\":\"http://"
         "snomed.info/sct\",\"code\":\"185349003\",\"display\":\"Encounter for check "
         "up\"}]}],\"subject\":{\"reference\":\"" +
         subject + "\"},\"period\":{\"start\":\"" + start + "\",\"end\":\"" + start + "\"}}";
}

std::string heart_rate(rng &r, const std::string &id, const std::string &subject, const std::string &encounter_ref) {
  std::string when = date_time(r);
  uint64_t rate = 48 + r.below(80);
  std::string out =
      "{\"resourceType\":\"Observation\",\"id\":\"" + id +
      "\",\"status\":\"final\",\"category\":[{\"coding\":[{\"system\":\"http://terminology.hl7.org/CodeSystem/"
      "observation-category\",\"code\":\"vital-signs\",\"display\":\"Vital "
      "Signs\"}]}],\"code\":{\"coding\":[{\"system\":\"http://loinc.org\",\"code\":\"8867-4\",\"display\":\"Heart "
      "rate\"}],\"text\":\"Heart rate\"},\"subject\":{\"reference\":\"" +
      subject + "\"}";
  if (!encounter_ref.empty()) out += ",\"encounter\":{\"reference\":\"" + encounter_ref + "\"}";
  out += ",\"effectiveDateTime\":\"" + when + "\",\"valueQuantity\":{\"value\":" + std::to_string(rate) +
         ".0,\"unit\":\"beats/minute\",\"system\":\"http://unitsofmeasure.org\",\"code\":\"/min\"}}";
  return out;
}

std::string condition(rng &r, const std::string &id, const std::string &subject, const std::string &encounter_ref) {
  static const char *const CODES[][2] = {{"44054006", "Diabetes mellitus type 2"},
                                         {"38341003", "Hypertensive disorder"},
                                         {"195967001", "Asthma"},
                                         {"35489007", "Depressive disorder"}};
  const auto &code = CODES[r.below(4)];
  std::string onset = birth_date(r);
  std::string out = "{\"resourceType\":\"Condition\",\"id\":\"" + id +
                    "\",\"clinicalStatus\":{\"coding\":[{\"system\":\"http://terminology.hl7.org/CodeSystem/"
                    "condition-clinical\",\"code\":\"active\"}]},\"verificationStatus\":{\"coding\":[{\"system\":"
                    "\"http://terminology.hl7.org/CodeSystem/"
                    "condition-ver-status\",\"code\":\"confirmed\"}]},\"code\":{\"coding\":[{\"system\":\"http://"
                    "snomed.info/sct\",\"code\":\"" +
                    code[0] + "\",\"display\":\"" + code[1] + "\"}],\"text\":\"" + code[1] +
                    "\"},\"subject\":{\"reference\":\"" + subject + "\"}";
  if (!encounter_ref.empty()) out += ",\"encounter\":{\"reference\":\"" + encounter_ref + "\"}";
  out += ",\"onsetDateTime\":\"" + onset + "\",\"recordedDate\":\"2024-06-01\"}";
  return out;
}

// Base64 of `bytes` (standard alphabet, padded).
std::string base64(std::string_view bytes) {
  static const char ALPHABET[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
  std::string out;
  out.reserve((bytes.size() + 2) / 3 * 4);
  size_t i = 0;
  for (; i + 3 <= bytes.size(); i += 3) {
    uint32_t v = (uint32_t{static_cast<uint8_t>(bytes[i])} << 16) |
                 (uint32_t{static_cast<uint8_t>(bytes[i + 1])} << 8) | static_cast<uint8_t>(bytes[i + 2]);
    out += ALPHABET[(v >> 18) & 63];
    out += ALPHABET[(v >> 12) & 63];
    out += ALPHABET[(v >> 6) & 63];
    out += ALPHABET[v & 63];
  }
  if (i < bytes.size()) {
    uint32_t v = uint32_t{static_cast<uint8_t>(bytes[i])} << 16;
    if (i + 1 < bytes.size()) v |= uint32_t{static_cast<uint8_t>(bytes[i + 1])} << 8;
    out += ALPHABET[(v >> 18) & 63];
    out += ALPHABET[(v >> 12) & 63];
    out += i + 1 < bytes.size() ? ALPHABET[(v >> 6) & 63] : '=';
    out += '=';
  }
  return out;
}

}  // namespace

std::string fhir_vital_signs_observation(uint64_t seed) {
  rng r(seed);
  uint64_t systolic = 100 + r.below(60);
  uint64_t diastolic = 60 + r.below(35);
  std::string when = date_time(r);
  std::string sys = std::to_string(systolic);
  std::string dia = std::to_string(diastolic);
  return "{\"resourceType\":\"Observation\",\"id\":\"blood-pressure\",\"meta\":{\"profile\":[\"http://hl7.org/fhir/"
         "StructureDefinition/vitalsigns\"]},"
         "\"text\":{\"status\":\"generated\",\"div\":\"<div xmlns=\\\"http://www.w3.org/1999/xhtml\\\"><p>Blood "
         "pressure " +
         sys + "/" + dia +
         " mmHg, sitting, left arm</p></div>\"},"
         "\"identifier\":[{\"system\":\"urn:ietf:rfc:3986\",\"value\":\"urn:uuid:187e0c12-8dd2-67e2-99b2-"
         "bf273c878281\"}],"
         "\"status\":\"final\","
         "\"category\":[{\"coding\":[{\"system\":\"http://terminology.hl7.org/CodeSystem/"
         "observation-category\",\"code\":\"vital-signs\",\"display\":\"Vital Signs\"}]}],"
         "\"code\":{\"coding\":[{\"system\":\"http://loinc.org\",\"code\":\"85354-9\",\"display\":\"Blood pressure "
         "panel with all children optional\"}],\"text\":\"Blood pressure systolic & diastolic\"},"
         "\"subject\":{\"reference\":\"Patient/example\"},\"effectiveDateTime\":\"" +
         when +
         "\",\"performer\":[{\"reference\":\"Practitioner/example\"}],"
         "\"interpretation\":[{\"coding\":[{\"system\":\"http://terminology.hl7.org/CodeSystem/"
         "v3-ObservationInterpretation\",\"code\":\"L\",\"display\":\"low\"}]}],"
         "\"component\":[{\"code\":{\"coding\":[{\"system\":\"http://"
         "loinc.org\",\"code\":\"8480-6\",\"display\":\"Systolic blood pressure\"}]},"
         "\"valueQuantity\":{\"value\":" +
         sys +
         ",\"unit\":\"mmHg\",\"system\":\"http://unitsofmeasure.org\",\"code\":\"mm[Hg]\"}},"
         "{\"code\":{\"coding\":[{\"system\":\"http://loinc.org\",\"code\":\"8462-4\",\"display\":\"Diastolic blood "
         "pressure\"}]},"
         "\"valueQuantity\":{\"value\":" +
         dia + ",\"unit\":\"mmHg\",\"system\":\"http://unitsofmeasure.org\",\"code\":\"mm[Hg]\"}}]}";
}

std::string fhir_transaction_bundle(size_t count, uint64_t seed) {
  rng r(seed);
  std::string out = "{\"resourceType\":\"Bundle\",\"id\":\"transaction-" + std::to_string(count) +
                    "\",\"type\":\"transaction\",\"entry\":[";
  std::string patient_url, encounter_url;
  for (size_t i = 0; i < count; ++i) {
    if (i) out += ',';
    std::string url = "urn:uuid:" + uuid(r);
    std::string id = numbered("e", i);
    std::string body, type;
    switch (i % 4) {
      case 0:
        patient_url = url;
        encounter_url.clear();
        body = patient(r, id);
        type = "Patient";
        break;
      case 1:
        encounter_url = url;
        body = encounter(r, id, patient_url);
        type = "Encounter";
        break;
      case 2:
        body = heart_rate(r, id, patient_url, encounter_url);
        type = "Observation";
        break;
      default:
        body = condition(r, id, patient_url, encounter_url);
        type = "Condition";
        break;
    }
    out += "{\"fullUrl\":\"" + url + "\",\"resource\":" + body + ",\"request\":{\"method\":\"POST\",\"url\":\"" + type +
           "\"}}";
  }
  out += "]}";
  return out;
}

std::string fhir_searchset_bundle(size_t count, uint64_t seed) {
  rng r(seed);
  std::string out = "{\"resourceType\":\"Bundle\",\"id\":\"searchset-" + std::to_string(count) +
                    "\",\"meta\":{\"lastUpdated\":\"2024-06-01T08:30:00Z\"},\"type\":\"searchset\",\"total\":" +
                    std::to_string(count) +
                    ",\"link\":[{\"relation\":\"self\",\"url\":\"https://example.org/fhir/Observation?code=http://"
                    "loinc.org|8867-4&_count=" +
                    std::to_string(count) + "\"}],\"entry\":[";
  for (size_t i = 0; i < count; ++i) {
    if (i) out += ',';
    uint64_t subject = r.below(5000);
    std::string id = "obs-" + std::to_string(i);
    std::string body = heart_rate(r, id, "Patient/pt-" + std::to_string(subject), "");
    out += "{\"fullUrl\":\"https://example.org/fhir/Observation/" + id + "\",\"resource\":" + body +
           ",\"search\":{\"mode\":\"match\",\"score\":1}}";
  }
  out += "]}";
  return out;
}

std::string fhir_patient_contained(size_t count, uint64_t seed) {
  rng r(seed);
  std::string body = patient(r, "with-contained-" + std::to_string(count));
  body.pop_back();  // reopen the Patient object to add contained and generalPractitioner
  std::string contained = ",\"contained\":[";
  std::string refs = ",\"generalPractitioner\":[";
  for (size_t i = 0; i < count; ++i) {
    if (i) {
      contained += ',';
      refs += ',';
    }
    std::string id = numbered("c", i);
    const char *family = FAMILIES[r.below(8)];
    const char *given = GIVENS[r.below(8)];
    uint64_t number = r.below(1000000);
    if (i % 2 == 0) {
      contained += "{\"resourceType\":\"Practitioner\",\"id\":\"" + id +
                   "\",\"identifier\":[{\"system\":\"http://hl7.org/fhir/sid/us-npi\",\"value\":\"" +
                   std::to_string(number) + "\"}],\"name\":[{\"family\":\"" + family + "\",\"given\":[\"" + given +
                   "\"],\"prefix\":[\"Dr\"]}]}";
    } else {
      contained += "{\"resourceType\":\"Organization\",\"id\":\"" + id + "\",\"active\":true,\"name\":\"" + family +
                   " Clinic " + std::to_string(number) + "\",\"telecom\":[{\"system\":\"phone\",\"value\":\"+47 " +
                   std::to_string(number) + "\",\"use\":\"work\"}]}";
    }
    refs += "{\"reference\":\"#" + id + "\"}";
  }
  return body + contained + "]" + refs + "]}";
}

std::string fhir_pdf_base64(size_t pdf_bytes, uint64_t seed) {
  rng r(seed);
  std::string pdf = "%PDF-1.4\n%\xe2\xe3\xcf\xd3\n1 0 obj\n<< /Type /Catalog /Pages 2 0 R >>\nendobj\nstream\n";
  if (pdf.size() > pdf_bytes) pdf.resize(pdf_bytes);
  pdf.reserve(pdf_bytes);
  while (pdf.size() < pdf_bytes) {
    uint64_t v = r.next();
    for (int k = 0; k < 8 && pdf.size() < pdf_bytes; ++k) {
      pdf += static_cast<char>(v & 0xff);
      v >>= 8;
    }
  }
  return base64(pdf);
}

std::string fhir_diagnostic_report_pdf(size_t pdf_bytes, uint64_t seed) {
  rng r(seed);
  std::string issued = date_time(r);
  uint64_t patient_number = r.below(100000);
  return "{\"resourceType\":\"DiagnosticReport\",\"id\":\"report-pdf\",\"status\":\"final\","
         "\"category\":[{\"coding\":[{\"system\":\"http://terminology.hl7.org/CodeSystem/"
         "v2-0074\",\"code\":\"LAB\"}]}],"
         "\"code\":{\"coding\":[{\"system\":\"http://loinc.org\",\"code\":\"11502-2\",\"display\":\"Laboratory "
         "report\"}]},"
         "\"subject\":{\"reference\":\"Patient/pt-" +
         std::to_string(patient_number) + "\"},\"effectiveDateTime\":\"" + issued + "\",\"issued\":\"" + issued +
         "\",\"presentedForm\":[{\"contentType\":\"application/pdf\",\"language\":\"en-US\",\"data\":\"" +
         fhir_pdf_base64(pdf_bytes, seed + 1) + "\",\"title\":\"Laboratory report\",\"creation\":\"" + issued + "\"}]}";
}

std::string fhir_binary_pdf(size_t pdf_bytes, uint64_t seed) {
  return "{\"resourceType\":\"Binary\",\"id\":\"pdf-" + std::to_string(pdf_bytes) +
         "\",\"contentType\":\"application/pdf\",\"securityContext\":{\"reference\":\"DocumentReference/"
         "doc-1\"},\"data\":\"" +
         fhir_pdf_base64(pdf_bytes, seed) + "\"}";
}

std::string fhir_bulk_ndjson(size_t count, uint64_t seed) {
  rng r(seed);
  std::string out;
  out.reserve(count * 400);
  std::string patient_ref, encounter_ref;
  for (size_t i = 0; i < count; ++i) {
    std::string id = numbered("r", i);
    // About one Patient in eight lines, each followed by its encounters, observations, conditions.
    uint64_t pick = r.below(8);
    if (i == 0 || pick == 0) {
      patient_ref = "Patient/" + id;
      encounter_ref.clear();
      out += patient(r, id);
    } else if (pick <= 2) {
      encounter_ref = "Encounter/" + id;
      out += encounter(r, id, patient_ref);
    } else if (pick <= 6) {
      out += heart_rate(r, id, patient_ref, encounter_ref);
    } else {
      out += condition(r, id, patient_ref, encounter_ref);
    }
    out += '\n';
  }
  return out;
}

}  // namespace quire::bench::shapes
