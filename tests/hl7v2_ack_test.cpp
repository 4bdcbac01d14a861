// Building ACKs: MSA, swapped sender and receiver, ERR, delimiters and terminators of the original.
#include <catch2/catch.hpp>

#include <string>

#include "quire/hl7v2.h"

using namespace quire::hl7v2;
using quire::error_code;

namespace {
const char *const ORIGINAL =
    "MSH|^~\\&|SENDAPP|SENDFAC|RECVAPP|RECVFAC|20240131120500||ADT^A01^ADT_A01|MSG00001|P|2.5.1\n"
    "PID|1||12345\n";
}  // namespace

TEST_CASE("hl7v2 build_ack AA", "[hl7v2][ack]") {
  auto m = parse(ORIGINAL);
  REQUIRE(m.ok());
  ack_options o;
  o.control_id = "ACK0001";
  o.timestamp = "20240131120501";
  auto ack = build_ack(*m, ack_code::AA, o);
  REQUIRE(ack.ok());
  CHECK(*ack ==
        "MSH|^~\\&|RECVAPP|RECVFAC|SENDAPP|SENDFAC|20240131120501||ACK^A01^ACK|ACK0001|P|2.5.1\r"
        "MSA|AA|MSG00001\r");
  auto a = parse(*ack);
  REQUIRE(a.ok());
  CHECK(a->type() == "ACK");
  CHECK(a->trigger() == "A01");
  CHECK(a->get("MSA-2").value() == std::optional<std::string_view>("MSG00001"));
}

TEST_CASE("hl7v2 build_ack defaults are deterministic", "[hl7v2][ack]") {
  auto m = parse(ORIGINAL);
  REQUIRE(m.ok());
  auto ack = build_ack(*m, ack_code::CA);
  REQUIRE(ack.ok());
  CHECK(*ack ==
        "MSH|^~\\&|RECVAPP|RECVFAC|SENDAPP|SENDFAC|20240131120500||ACK^A01^ACK|ACKMSG00001|P|2.5.1\r"
        "MSA|CA|MSG00001\r");
  CHECK(build_ack(*m, ack_code::CA).value() == *ack);
}

TEST_CASE("hl7v2 build_ack AE with ERR (v2.5+ layout) and escaped text", "[hl7v2][ack]") {
  auto m = parse(ORIGINAL);
  REQUIRE(m.ok());
  ack_options o;
  o.control_id = "A2";
  o.timestamp = "20240131120501";
  o.text = "PID-3 missing | bad";
  o.location = {"PID", 1, 3, 1, 1, 0};
  o.error_code = "101";
  auto ack = build_ack(*m, ack_code::AE, o);
  REQUIRE(ack.ok());
  CHECK(*ack ==
        "MSH|^~\\&|RECVAPP|RECVFAC|SENDAPP|SENDFAC|20240131120501||ACK^A01^ACK|A2|P|2.5.1\r"
        "MSA|AE|MSG00001|PID-3 missing \\F\\ bad\r"
        "ERR||PID^1^3^1^1|101^Required field missing^HL70357|E\r");
  auto a = parse(*ack);
  REQUIRE(a.ok());
  CHECK(a->get_text("MSA-3").value() == std::optional<std::string>("PID-3 missing | bad"));
  CHECK(a->get("ERR-2.3").value() == std::optional<std::string_view>("3"));
  CHECK(a->get("ERR-4").value() == std::optional<std::string_view>("E"));
}

TEST_CASE("hl7v2 build_ack AR for a v2.3 message uses ERR-1", "[hl7v2][ack]") {
  auto m = parse("MSH|^~\\&|S|SF|R|RF|20240131||ORU^R01|X9|T|2.3\rOBX|1\r");
  REQUIRE(m.ok());
  ack_options o;
  o.location.segment = "OBX";
  o.location.field = 5;
  auto ack = build_ack(*m, ack_code::AR, o);
  REQUIRE(ack.ok());
  CHECK(*ack ==
        "MSH|^~\\&|R|RF|S|SF|20240131||ACK^R01^ACK|ACKX9|T|2.3\r"
        "MSA|AR|X9\r"
        "ERR|OBX^1^5^207&Application internal error&HL70357\r");
}

TEST_CASE("hl7v2 build_ack keeps non-standard delimiters and MSH-18", "[hl7v2][ack]") {
  auto m = parse(
      "MSH^~|\\&^SENDING^200M^RECEIVING^200^20120918173931-0500^^ADT~A24^2003582144^T^2.4^^^AL^AL^\r"
      "EVN^A24\r");
  REQUIRE(m.ok());
  ack_options o;
  o.text = "a^b";
  auto ack = build_ack(*m, ack_code::AA, o);
  REQUIRE(ack.ok());
  CHECK(*ack ==
        "MSH^~|\\&^RECEIVING^200^SENDING^200M^20120918173931-0500^^ACK~A24~ACK^ACK2003582144^T^2.4\r"
        "MSA^AA^2003582144^a\\F\\b\r");
  auto l = parse("MSH|^~\\&|A|B|C|D|20240101||ADT^A01|1|P|2.5||||||8859/1\r");
  REQUIRE(l.ok());
  CHECK(build_ack(*l, ack_code::AA).value().find("|2.5||||||8859/1\r") != std::string::npos);
}

TEST_CASE("hl7v2 build_ack rejects a bad severity", "[hl7v2][ack]") {
  auto m = parse(ORIGINAL);
  REQUIRE(m.ok());
  ack_options o;
  o.severity = "X";
  CHECK(build_ack(*m, ack_code::AE, o).code() == error_code::INVALID_ARGUMENT);
  CHECK(ack_code_name(ack_code::CR) == "CR");
}

TEST_CASE("hl7v2 parse_ack_code reads the six codes and refuses others", "[hl7v2][ack]") {
  for (ack_code c : {ack_code::AA, ack_code::AE, ack_code::AR, ack_code::CA, ack_code::CE, ack_code::CR}) {
    auto r = parse_ack_code(ack_code_name(c));
    REQUIRE(r.ok());
    CHECK(*r == c);
  }
  for (const char *bad : {"", "aa", "ZZ", "AA ", "A"}) {
    auto r = parse_ack_code(bad);
    REQUIRE_FALSE(r.ok());
    CHECK(r.code() == error_code::INVALID_ARGUMENT);
    CHECK(r.error().message == "ack code must be AA, AE, AR, CA, CE or CR");
  }
}
