#include "view_shapes.h"

#include "quire/bench.h"

namespace quire::bench::shapes {

// Every draw from the generator is its own statement (the order in which operands of `+` are
// evaluated is unspecified, and the bytes must be the same everywhere), and text grows by `+=`
// (g++ 12 warns falsely, -Wrestrict, on chains of `+` with std::string temporaries).

namespace {

const char *const FAMILIES[] = {"Medhurst46", "Cummerata161", "VonRueden376", "Upton904", "Okafor12",
                                "Hansen501",  "Quispe77",     "Nguyen310",    "Mensah8",  "Garcia229"};
const char *const GIVENS[] = {"Sumiko254", "Larue605", "Marine542", "Ai120",  "Kwame66",
                              "Ilze433",   "Mateo71",  "Yuki903",   "Rosa18", "Bjorn240"};
const char *const CITIES[] = {"Olathe", "Wichita", "Topeka", "Lawrence", "Salina", "Manhattan", "Hays", "Emporia"};
const char *const GENDERS[] = {"female", "male"};
const char *const RACES[][2] = {{"2106-3", "White"},
                                {"2054-5", "Black or African American"},
                                {"2028-9", "Asian"},
                                {"1002-5", "American Indian or Alaska Native"}};
const char *const MARITAL[][2] = {{"M", "Married"}, {"S", "Never Married"}, {"D", "Divorced"}, {"W", "Widowed"}};

// Vital signs and laboratory codes of a Synthea export: LOINC code, display, UCUM unit, the value
// range in tenths (low, span), and a SNOMED CT code that some exports add as a second coding.
struct obs_code {
  const char *loinc, *display, *unit, *category;
  uint64_t low, span;
  const char *snomed;
};
const obs_code CODES[] = {
    {"8302-2", "Body Height", "cm", "vital-signs", 1400, 600, "50373000"},
    {"29463-7", "Body Weight", "kg", "vital-signs", 400, 900, "27113001"},
    {"39156-5", "Body mass index (BMI) [Ratio]", "kg/m2", "vital-signs", 160, 250, "60621009"},
    {"8867-4", "Heart rate", "/min", "vital-signs", 500, 700, "364075005"},
    {"9279-1", "Respiratory rate", "/min", "vital-signs", 120, 100, "86290005"},
    {"8310-5", "Body temperature", "Cel", "vital-signs", 360, 25, "386725007"},
    {"2339-0", "Glucose [Mass/volume] in Blood", "mg/dL", "laboratory", 650, 900, "33747003"},
    {"2093-3", "Cholesterol [Mass/volume] in Serum or Plasma", "mg/dL", "laboratory", 1500, 1200, "77068002"},
};

std::string two_digits(uint64_t v) {
  std::string out;
  out += static_cast<char>('0' + v / 10);
  out += static_cast<char>('0' + v % 10);
  return out;
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

// A UUID-shaped id (Synthea's resource ids), from two draws.
std::string uuid(rng &r) {
  uint64_t a = r.next();
  uint64_t b = r.next();
  std::string out = hex(a >> 32, 8);
  out += '-';
  out += hex(a >> 16, 4);
  out += '-';
  out += hex(a, 4);
  out += '-';
  out += hex(b >> 48, 4);
  out += '-';
  out += hex(b, 12);
  return out;
}

// The id of Patient `i` of an export: its own generator, so the Observation file can name its
// subjects without building the Patients.
std::string patient_id(size_t i) {
  rng r(0x9e3779b97f4a7c15ull ^ (static_cast<uint64_t>(i) * 1000003ull));
  return uuid(r);
}

std::string date(rng &r, uint64_t from_year, uint64_t years) {
  uint64_t year = from_year + r.below(years);
  uint64_t month = 1 + r.below(12);
  uint64_t day = 1 + r.below(28);
  std::string out = std::to_string(year);
  out += '-';
  out += two_digits(month);
  out += '-';
  out += two_digits(day);
  return out;
}

std::string date_time(rng &r, uint64_t from_year, uint64_t years) {
  std::string out = date(r, from_year, years);
  uint64_t hour = r.below(24);
  uint64_t minute = r.below(60);
  uint64_t second = r.below(60);
  out += 'T';
  out += two_digits(hour);
  out += ':';
  out += two_digits(minute);
  out += ':';
  out += two_digits(second);
  out += "-04:00";
  return out;
}

// Tenths as decimal text: 1714 -> "171.4".
std::string tenths(uint64_t v) {
  std::string out = std::to_string(v / 10);
  out += '.';
  out += static_cast<char>('0' + v % 10);
  return out;
}

void coding(std::string &out, const char *system, const char *code, const char *display) {
  out += "{\"system\":\"";
  out += system;
  out += "\",\"code\":\"";
  out += code;
  out += "\",\"display\":\"";
  out += display;
  out += "\"}";
}

void patient(std::string &out, rng &r, const std::string &id) {
  const char *family = FAMILIES[r.below(10)];
  const char *given = GIVENS[r.below(10)];
  uint64_t second_given = r.below(3);  // 0: none
  const char *given2 = GIVENS[r.below(10)];
  uint64_t g = r.below(2);
  const char *gender = GENDERS[g];
  uint64_t race = r.below(4);
  const char *birth_city = CITIES[r.below(8)];
  uint64_t married = r.below(4);
  const char *maiden = FAMILIES[r.below(10)];
  uint64_t phone = r.below(10000);
  std::string born = date(r, 1925, 90);
  bool deceased = r.below(10) == 0;
  std::string died = date_time(r, 1990, 30);
  uint64_t lat = r.below(1000000);
  uint64_t lon = r.below(1000000);
  uint64_t house = 1 + r.below(999);
  const char *city = CITIES[r.below(8)];
  uint64_t postal = 66000 + r.below(2000);
  const char *marital = MARITAL[married][0];
  const char *marital_display = MARITAL[married][1];
  bool twin = r.below(50) == 0;

  out += "{\"resourceType\":\"Patient\",\"id\":\"";
  out += id;
  out +=
      "\",\"meta\":{\"profile\":[\"http://hl7.org/fhir/us/core/StructureDefinition/us-core-patient\"]},"
      "\"extension\":[{\"url\":\"http://hl7.org/fhir/us/core/StructureDefinition/us-core-race\",\"extension\":"
      "[{\"url\":\"ombCategory\",\"valueCoding\":";
  coding(out, "urn:oid:2.16.840.1.113883.6.238", RACES[race][0], RACES[race][1]);
  out += "},{\"url\":\"text\",\"valueString\":\"";
  out += RACES[race][1];
  out += "\"}]},{\"url\":\"http://hl7.org/fhir/us/core/StructureDefinition/us-core-birthsex\",\"valueCode\":\"";
  out += g == 0 ? "F" : "M";
  out += "\"},{\"url\":\"http://hl7.org/fhir/StructureDefinition/patient-birthPlace\",\"valueAddress\":{\"city\":\"";
  out += birth_city;
  out +=
      "\",\"state\":\"Kansas\",\"country\":\"US\"}}],\"identifier\":[{\"system\":\"https://github.com/synthetichealth/"
      "synthea\",\"value\":\"";
  out += id;
  out += "\"},{\"type\":{\"coding\":[";
  coding(out, "http://terminology.hl7.org/CodeSystem/v2-0203", "MR", "Medical Record Number");
  out += "],\"text\":\"Medical Record Number\"},\"system\":\"http://hospital.smarthealthit.org\",\"value\":\"";
  out += id;
  out += "\"}],\"name\":[{\"use\":\"official\",\"family\":\"";
  out += family;
  out += "\",\"given\":[\"";
  out += given;
  if (second_given) {
    out += "\",\"";
    out += given2;
  }
  out += "\"],\"prefix\":[\"";
  out += g == 0 ? (married == 0 ? "Mrs." : "Ms.") : "Mr.";
  out += "\"]}";
  if (g == 0 && married == 0) {  // a married woman's maiden name, as Synthea writes it
    out += ",{\"use\":\"maiden\",\"family\":\"";
    out += maiden;
    out += "\",\"given\":[\"";
    out += given;
    out += "\"],\"prefix\":[\"Mrs.\"]}";
  }
  out += "],\"telecom\":[{\"system\":\"phone\",\"value\":\"555-";
  out += std::to_string(100 + phone % 900);
  out += '-';
  out += std::to_string(1000 + phone).substr(1);
  out += "\",\"use\":\"home\"}],\"gender\":\"";
  out += gender;
  out += "\",\"birthDate\":\"";
  out += born;
  out += '"';
  if (deceased) {
    out += ",\"deceasedDateTime\":\"";
    out += died;
    out += '"';
  }
  out +=
      ",\"address\":[{\"extension\":[{\"url\":\"http://hl7.org/fhir/StructureDefinition/geolocation\",\"extension\":"
      "[{\"url\":\"latitude\",\"valueDecimal\":38.";
  out += std::to_string(1000000 + lat).substr(1);
  out += "},{\"url\":\"longitude\",\"valueDecimal\":-94.";
  out += std::to_string(1000000 + lon).substr(1);
  out += "}]}],\"line\":[\"";
  out += std::to_string(house);
  out += " Ritchie Mews\"],\"city\":\"";
  out += city;
  out += "\",\"state\":\"KS\",\"postalCode\":\"";
  out += std::to_string(postal);
  out += "\",\"country\":\"US\"}],\"maritalStatus\":{\"coding\":[";
  coding(out, "http://terminology.hl7.org/CodeSystem/v3-MaritalStatus", marital, marital_display);
  out += "],\"text\":\"";
  out += marital_display;
  out += "\"},\"multipleBirthBoolean\":";
  out += twin ? "true" : "false";
  out += '}';
}

void observation(std::string &out, rng &r, const std::string &id, const std::string &subject) {
  const obs_code &c = CODES[r.below(8)];
  uint64_t codings = 1 + r.below(3);  // 1-3: LOINC, then SNOMED CT, then a local code
  uint64_t value = c.low + r.below(c.span);
  bool coded = r.below(10) == 0;  // a valueCodeableConcept instead of a quantity
  std::string encounter = uuid(r);
  std::string effective = date_time(r, 2000, 24);
  out += "{\"resourceType\":\"Observation\",\"id\":\"";
  out += id;
  out += "\",\"meta\":{\"profile\":[\"http://hl7.org/fhir/us/core/StructureDefinition/us-core-";
  out += c.category[0] == 'v' ? "vital-signs" : "observation-lab";
  out += "\"]},\"status\":\"final\",\"category\":[{\"coding\":[";
  coding(out, "http://terminology.hl7.org/CodeSystem/observation-category", c.category,
         c.category[0] == 'v' ? "Vital signs" : "Laboratory");
  out += "]}],\"code\":{\"coding\":[";
  coding(out, "http://loinc.org", c.loinc, c.display);
  if (codings >= 2) {
    out += ',';
    coding(out, "http://snomed.info/sct", c.snomed, c.display);
  }
  if (codings >= 3) {
    out += ",{\"system\":\"urn:oid:2.16.840.1.113883.3.1234\",\"code\":\"L";
    out += c.loinc;
    out += "\"}";  // a local code without a display
  }
  out += "],\"text\":\"";
  out += c.display;
  out += "\"},\"subject\":{\"reference\":\"Patient/";
  out += subject;
  out += "\"},\"encounter\":{\"reference\":\"Encounter/";
  out += encounter;
  out += "\"},\"effectiveDateTime\":\"";
  out += effective;
  out += "\",\"issued\":\"";
  out += effective;
  out += ".000-04:00\",";
  if (coded) {
    out += "\"valueCodeableConcept\":{\"coding\":[";
    coding(out, "http://snomed.info/sct", "260385009", "Negative");
    out += "],\"text\":\"Negative\"}}";
  } else {
    out += "\"valueQuantity\":{\"value\":";
    out += tenths(value);
    out += ",\"unit\":\"";
    out += c.unit;
    out += "\",\"system\":\"http://unitsofmeasure.org\",\"code\":\"";
    out += c.unit;
    out += "\"}}";
  }
}

}  // namespace

export_counts view_export_counts(size_t resources) {
  export_counts c;
  c.patients = resources / 5 ? resources / 5 : 1;
  c.observations = resources > c.patients ? resources - c.patients : 0;
  return c;
}

std::string view_export_patients(size_t resources, uint64_t seed) {
  auto counts = view_export_counts(resources);
  rng r(seed);
  std::string out;
  out.reserve(counts.patients * 3000);
  for (size_t i = 0; i < counts.patients; ++i) {
    patient(out, r, patient_id(i));
    out += '\n';
  }
  return out;
}

std::string view_export_observations(size_t resources, uint64_t seed) {
  auto counts = view_export_counts(resources);
  rng r(seed);
  std::string out;
  out.reserve(counts.observations * 1100);
  for (size_t i = 0; i < counts.observations; ++i) {
    std::string id = uuid(r);
    uint64_t subject = r.below(counts.patients);
    observation(out, r, id, patient_id(static_cast<size_t>(subject)));
    out += '\n';
  }
  return out;
}

}  // namespace quire::bench::shapes
