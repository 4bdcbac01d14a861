#include "hl7v2_shapes.h"

#include "quire/bench.h"
#include "quire/hl7v2.h"

namespace quire::bench::shapes {

// Every draw from the generator is its own statement: the order in which operands of `+` are
// evaluated is unspecified (g++ and clang differ), and the input must be the same bytes everywhere.

namespace {

const char *const FAMILIES[] = {"Okafor", "Nguyen", "Hansen", "Quispe", "Mensah", "Tran", "Berg", "Alvarez"};
const char *const GIVENS[] = {"Ada", "Minh", "Ingrid", "Rosa", "Kwame", "Linh", "Ole", "Lucia"};
const char *const CITIES[] = {"Lagos", "Oslo", "Lima", "Hanoi", "Quito", "Perth", "Accra", "Riga"};

struct analyte {
  const char *code, *name, *unit, *range;
};
const analyte ANALYTES[] = {
    {"2345-7", "Glucose", "mg/dL", "70-99"},      {"2160-0", "Creatinine", "mg/dL", "0.6-1.2"},
    {"2951-2", "Sodium", "mmol/L", "135-145"},    {"2823-3", "Potassium", "mmol/L", "3.5-5.1"},
    {"2075-0", "Chloride", "mmol/L", "98-107"},   {"1742-6", "ALT", "U/L", "7-56"},
    {"718-7", "Hemoglobin", "g/dL", "12.0-17.5"}, {"6690-2", "Leukocytes", "10*3/uL", "4.5-11.0"},
};

std::string padded(uint64_t v, size_t width) {
  std::string s = std::to_string(v);
  return s.size() >= width ? s : std::string(width - s.size(), '0') + s;
}

// YYYYMMDDHHMMSS, each part drawn in its own statement.
std::string timestamp(rng &r) {
  const uint64_t month = 1 + r.below(12);
  const uint64_t day = 1 + r.below(28);
  const uint64_t hour = r.below(24);
  const uint64_t minute = r.below(60);
  const uint64_t second = r.below(60);
  return "2024" + padded(month, 2) + padded(day, 2) + padded(hour, 2) + padded(minute, 2) + padded(second, 2);
}

std::string adt(rng &r, const char *trigger, uint64_t id) {
  const std::string ts = timestamp(r);
  const std::string family = FAMILIES[r.below(8)];
  const std::string given = GIVENS[r.below(8)];
  const std::string spouse = GIVENS[r.below(8)];
  const std::string city = CITIES[r.below(8)];
  const uint64_t mrn = r.below(10000000);
  const uint64_t ssn = r.below(1000000000);
  const uint64_t phone = r.below(10000);
  const uint64_t dob_year = 1930 + r.below(90);
  const uint64_t dob_month = 1 + r.below(12);
  const uint64_t dob_day = 1 + r.below(28);
  const bool female = r.below(2) != 0;
  const uint64_t room = 100 + r.below(400);
  const uint64_t heart_rate = 50 + r.below(60);
  const std::string dob = std::to_string(dob_year) + padded(dob_month, 2) + padded(dob_day, 2);
  std::string m;
  m += "MSH|^~\\&|ADT1|GOOD HEALTH HOSPITAL|GHH LAB, INC.|GOOD HEALTH HOSPITAL|" + ts + "||ADT^" + trigger +
       "^ADT_A01|MSG" + padded(id, 8) + "|P|2.5.1|||AL|NE||UNICODE UTF-8\r";
  m += "EVN|" + std::string(trigger) + "|" + ts + "|||OP1^SMITH^JOHN^^^^^^GHH&1.2.840.114350&ISO\r";
  m += "PID|1||" + padded(mrn, 7) + "^^^GHH^MR~" + padded(ssn, 9) + "^^^USSSA^SS||" + family + "^" + given +
       "^Q^^^^L~" + family + "^" + given + "^^^^^M||" + dob + "|" + (female ? "F" : "M") + "|||" +
       std::to_string(room) + " Main St\\F\\Apt 4^^" + city + "^ST^" + padded(mrn % 100000, 5) + "^USA^H||(555)555-" +
       padded(phone, 4) + "^PRN^PH~^NET^Internet^" + given + "@example.org||EN^English^ISO639|M^Married^HL70002|||" +
       padded(ssn, 9) + "|||N^Not Hispanic or Latino^HL70189\r";
  m += "NK1|1|" + family + "^" + spouse + "|SPO^Spouse^HL70063||(555)555-" + padded(phone, 4) +
       "||EC^Emergency Contact^HL70131\r";
  m += "PV1|1|I|W^" + std::to_string(room) +
       "^1^GHH^^^^^^^||||004777^ATTEND^AARON^A^^^MD|005888^REFER^ROBERT^^^^MD||SUR||||ADM|A0|||||||||||||||||||GHH|||||"
       "|" +
       ts + "\r";
  m += "AL1|1|DA|1605^Penicillin\\T\\Amoxicillin^RXNORM|SV|Hives \\F\\ rash~Swelling\r";
  m += "DG1|1||I10^Essential (primary) hypertension^I10|||A\r";
  m += "OBX|1|NM|8867-4^Heart rate^LN||" + std::to_string(heart_rate) + "|/min^per minute^UCUM|60-100|N|||F|||" + ts +
       "\r";
  m += "OBX|2|ST|8302-2^Body height^LN||Measured on admission\\.br\\standing|cm^centimeter^UCUM|||||F\r";
  return m;
}

std::string oru(rng &r, size_t obx_count, uint64_t id) {
  const std::string ts = timestamp(r);
  const std::string family = FAMILIES[r.below(8)];
  const std::string given = GIVENS[r.below(8)];
  const uint64_t mrn = r.below(10000000);
  const uint64_t order = r.below(1000000);
  std::string m;
  m.reserve(96 * obx_count + 512);
  m += "MSH|^~\\&|LAB|GHH LAB|EHR|GOOD HEALTH HOSPITAL|" + ts + "||ORU^R01^ORU_R01|LAB" + padded(id, 8) + "|P|2.5.1\r";
  m += "PID|1||" + padded(mrn, 7) + "^^^GHH^MR||" + family + "^" + given + "||19700101|U\r";
  m += "ORC|RE|" + padded(order, 6) + "^EHR|" + padded(order, 6) + "^LAB\r";
  m += "OBR|1|" + padded(order, 6) + "^EHR|" + padded(order, 6) + "^LAB|24323-8^Comprehensive metabolic panel^LN|||" +
       ts + "\r";
  for (size_t i = 1; i <= obx_count; ++i) {
    const analyte &a = ANALYTES[r.below(8)];
    const uint64_t whole = r.below(200);
    const uint64_t tenth = r.below(10);
    const uint64_t flag = r.below(10);
    m += "OBX|" + std::to_string(i) + "|NM|" + a.code + "^" + a.name + "^LN||" + std::to_string(whole) + "." +
         std::to_string(tenth) + "|" + a.unit + "^" + a.unit + "^UCUM|" + a.range + "|" +
         (flag == 0   ? "H"
          : flag == 1 ? "L"
                      : "N") +
         "|||F|||" + ts + "\r";
    if (i % 50 == 0) m += "NTE|1||Checked \\T\\ verified by " + family + "\\.br\\second line\r";
  }
  return m;
}

}  // namespace

std::string hl7v2_adt_a01(uint64_t seed) {
  rng r(seed);
  return adt(r, "A01", seed);
}

std::string hl7v2_oru_r01(size_t obx_count, uint64_t seed) {
  rng r(seed);
  return oru(r, obx_count, seed);
}

std::string hl7v2_oru_pdf(size_t payload_bytes, uint64_t seed) {
  static constexpr char B64[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
  rng r(seed);
  const std::string ts = timestamp(r);
  std::string m =
      "MSH|^~\\&|RAD|GHH|EHR|GOOD HEALTH HOSPITAL|" + ts + "||ORU^R01^ORU_R01|PDF" + padded(seed, 8) + "|P|2.5.1\r";
  m += "PID|1||0012345^^^GHH^MR||Hansen^Ingrid||19800214|F\r";
  m += "OBR|1|778899^EHR|445566^RAD|18748-4^Diagnostic imaging study^LN|||" + ts + "\r";
  m += "OBX|1|ED|18748-4^Diagnostic imaging report^LN||^AP^PDF^Base64^";
  m.reserve(m.size() + payload_bytes + 64);
  m += "JVBERi0xLjQK";  // "%PDF-1.4\n"
  // Ten base64 digits per draw (60 of its 64 bits); the length is a multiple of 4 ending in "==".
  const size_t digits = payload_bytes > 16 ? (payload_bytes - 16) / 4 * 4 : 0;
  for (size_t k = 0; k < digits;) {
    uint64_t bits = r.next();
    for (int j = 0; j < 10 && k < digits; ++j, ++k) {
      m += B64[bits & 63];
      bits >>= 6;
    }
  }
  m += "AA==||||||F|||" + ts + "\r";
  return m;
}

std::string hl7v2_batch(size_t count, uint64_t seed) {
  rng r(seed);
  const std::string ts = timestamp(r);
  std::string out =
      "FHS|^~\\&|ADT1|GOOD HEALTH HOSPITAL|EHR|GOOD HEALTH HOSPITAL|" + ts + "||||FILE" + padded(seed, 6) + "\r";
  out += "BHS|^~\\&|ADT1|GOOD HEALTH HOSPITAL|EHR|GOOD HEALTH HOSPITAL|" + ts + "||||BATCH" + padded(seed, 6) + "\r";
  for (size_t i = 0; i < count; ++i) {
    switch (i % 3) {
      case 0: out += adt(r, "A01", i); break;
      case 1: out += adt(r, "A08", i); break;
      default: out += oru(r, 5, i); break;
    }
  }
  out += "BTS|" + std::to_string(count) + "\r";
  out += "FTS|1\r";
  return out;
}

std::string hl7v2_mllp_stream(const std::string &input) {
  std::string out;
  out.reserve(input.size() + input.size() / 256 + 64);
  auto b = hl7v2::parse_batch(input);
  if (!b) return out;
  for (const auto &m : b->messages) {
    // The frame carries the message with its last segment's CR, as senders write it.
    std::string payload(m.bytes());
    payload += '\r';
    out += hl7v2::mllp_encode(payload);
  }
  return out;
}

}  // namespace quire::bench::shapes
