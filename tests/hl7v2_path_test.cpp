// Paths (PID-5[2].1), splitting values, and the typed values DTM and NM.
#include <catch2/catch.hpp>

#include <string>

#include "quire/hl7v2.h"

using namespace quire::hl7v2;
using quire::error_code;

namespace {
const char *const MSG =
    "MSH|^~\\&|SENDAPP^1.2.3^ISO|SENDFAC|RECVAPP|RECVFAC|20240131120500||ADT^A01^ADT_A01|MSG00001|P^T|2.5.1\r"
    "PID|1||12345^^^HOSP&1.2.3&ISO^MR~67890^^^SSA^SS||DOE^JOHN^Q~SMITH^JOHNNY~||19700101|M|||\r"
    "OBX|1|NM|GLU||5.4|mmol/L\r"
    "OBX|2|NM|NA||140|mmol/L\r"
    "OBX|3|ST|NOTE||a \\S\\ b\r";

std::optional<std::string_view> get(const message &m, std::string_view p) {
  auto r = m.get(p);
  REQUIRE(r.ok());
  return *r;
}
}  // namespace

TEST_CASE("hl7v2 parse_path reads the grammar", "[hl7v2][path]") {
  auto p = parse_path("PID-3[1].4.2");
  REQUIRE(p.ok());
  CHECK(std::string_view(p->segment, 3) == "PID");
  CHECK(p->segment_repetition == 1);
  CHECK(p->field == 3);
  CHECK(p->repetition == 1);
  CHECK(p->component == 4);
  CHECK(p->subcomponent == 2);
  auto q = parse_path("obx[3]-5");
  REQUIRE(q.ok());
  CHECK(std::string_view(q->segment, 3) == "OBX");
  CHECK(q->segment_repetition == 3);
  CHECK(q->field == 5);
  CHECK(q->repetition == 0);
  CHECK(parse_path("PID.5.1").ok());
  CHECK(parse_path("PID-5-1").ok());
  CHECK(parse_path("PID").ok());
  for (const char *bad : {"", "PI", "PID-", "PID-0", "PID-5[0]", "PID-5[", "PID-5[2", "PID-5.", "PID-5.1.2.3", "PID-x",
                          "PID 5", "P#D-1", "PID-5.0", "PID-1234567890", "PID[]-1", "PID-5]"}) {
    auto r = parse_path(bad);
    CHECK(r.code() == error_code::INVALID_ARGUMENT);
  }
}

TEST_CASE("hl7v2 get by path", "[hl7v2][path]") {
  auto r = parse(MSG);
  REQUIRE(r.ok());
  const message &m = *r;
  using sv = std::optional<std::string_view>;
  CHECK(get(m, "PID-5") == sv("DOE^JOHN^Q~SMITH^JOHNNY~"));
  CHECK(get(m, "PID-5[1]") == sv("DOE^JOHN^Q"));
  CHECK(get(m, "PID-5[2].1") == sv("SMITH"));
  CHECK(get(m, "PID-5[3]") == sv(""));
  CHECK(get(m, "PID-5[4]") == std::nullopt);
  CHECK(get(m, "PID-5.2") == sv("JOHN"));
  CHECK(get(m, "PID-5.4") == std::nullopt);
  CHECK(get(m, "PID-3[1].4.2") == sv("1.2.3"));
  CHECK(get(m, "PID-3[1].4.4") == std::nullopt);
  CHECK(get(m, "PID-3[2].5") == sv("SS"));
  CHECK(get(m, "PID-10") == sv(""));
  CHECK(get(m, "PID-11") == sv(""));
  CHECK(get(m, "PID-12") == std::nullopt);
  CHECK(get(m, "OBX[2]-5") == sv("140"));
  CHECK(get(m, "OBX[4]-5") == std::nullopt);
  CHECK(get(m, "ZZZ-1") == std::nullopt);
  CHECK(get(m, "OBX[2]") == sv("OBX|2|NM|NA||140|mmol/L"));
  CHECK(get(m, "MSH-1") == sv("|"));
  CHECK(get(m, "MSH-2") == sv("^~\\&"));
  CHECK(get(m, "MSH-2.2") == std::nullopt);
  CHECK(get(m, "MSH-3") == sv("SENDAPP^1.2.3^ISO"));
  CHECK(get(m, "MSH-3.2") == sv("1.2.3"));
  CHECK(get(m, "MSH-9.2") == sv("A01"));
  CHECK(get(m, "MSH-11.2") == sv("T"));
  CHECK(m.get("PID-").code() == error_code::INVALID_ARGUMENT);
  CHECK(m.get_text("OBX[3]-5").value() == std::optional<std::string>("a ^ b"));
  CHECK(m.get_text("MSH-2").value() == std::optional<std::string>("^~\\&"));
  CHECK(m.get_text("PID-99").value() == std::nullopt);
  CHECK(m.get_text("bad path").code() == error_code::INVALID_ARGUMENT);
}

TEST_CASE("hl7v2 nth_piece", "[hl7v2][path]") {
  using sv = std::optional<std::string_view>;
  CHECK(nth_piece("a^b^", '^', 1) == sv("a"));
  CHECK(nth_piece("a^b^", '^', 3) == sv(""));
  CHECK(nth_piece("a^b^", '^', 4) == std::nullopt);
  CHECK(nth_piece("", '^', 1) == sv(""));
  CHECK(nth_piece("a^b", delimiters::NONE, 1) == sv("a^b"));
  CHECK(nth_piece("a^b", delimiters::NONE, 2) == std::nullopt);
  CHECK(nth_piece("a", '^', 0) == std::nullopt);
}

TEST_CASE("hl7v2 to_iso8601 keeps the precision", "[hl7v2][path][types]") {
  auto iso = [](std::string_view s) {
    auto r = to_iso8601(s);
    REQUIRE(r.ok());
    return *r;
  };
  CHECK(iso("2024") == "2024");
  CHECK(iso("202401") == "2024-01");
  CHECK(iso("20240131") == "2024-01-31");
  CHECK(iso("2024013112") == "2024-01-31T12");
  CHECK(iso("202401311205") == "2024-01-31T12:05");
  CHECK(iso("202401311205-0500") == "2024-01-31T12:05-05:00");
  CHECK(iso("20240131120530") == "2024-01-31T12:05:30");
  CHECK(iso("20240131120530.1234+0100") == "2024-01-31T12:05:30.1234+01:00");
  CHECK(iso("20240131120530.5") == "2024-01-31T12:05:30.5");
  CHECK(iso("20240229") == "2024-02-29");
  CHECK(iso(" 20240131 ") == "2024-01-31");
  for (const char *bad : {"", "202", "2024013", "20241301", "20230229", "20240132", "2024013124", "202401311260",
                          "20240131120560", "20240131.5", "20240131120530.", "202401311205-05", "2024-01-31",
                          "20240131X", "202401311205+2400", "20240131120530.1234567890"}) {
    CHECK(to_iso8601(bad).code() == error_code::INVALID_ARGUMENT);
  }
}

TEST_CASE("hl7v2 parse_number keeps the exact text", "[hl7v2][path][types]") {
  auto n = parse_number(" -0012.50 ");
  REQUIRE(n.ok());
  CHECK(n->text == "-0012.50");
  CHECK(n->value == -12.5);
  CHECK(parse_number("5.").value().value == 5.0);
  CHECK(parse_number(".5").value().value == 0.5);
  CHECK(parse_number("+7").value().value == 7.0);
  for (const char *bad : {"", "-", ".", "1e5", "1.2.3", "0x10", "12a", "1 2", "inf", "nan"})
    CHECK(parse_number(bad).code() == error_code::INVALID_ARGUMENT);
}
