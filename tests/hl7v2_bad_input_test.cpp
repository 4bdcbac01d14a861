// Bad input: each gets a typed error or the documented tolerant read, never a crash.
#include <catch2/catch.hpp>

#include <string>

#include "quire/hl7v2.h"
#include "quire/json.h"

using namespace quire::hl7v2;
using quire::error_code;

namespace {
parse_options strict_options() {
  parse_options o;
  o.strict = true;
  return o;
}
}  // namespace

TEST_CASE("hl7v2 bad input: empty and missing MSH", "[hl7v2][bad]") {
  CHECK(parse("").code() == error_code::EMPTY_INPUT);
  CHECK(parse("\xEF\xBB\xBF\r\n \t").code() == error_code::EMPTY_INPUT);
  auto r = parse("PID|1||123\r");
  CHECK(r.code() == error_code::INVALID_HL7);
  CHECK(r.error().offset == 0);
  CHECK(parse("\r\nEVN|A01\rMSH|^~\\&\r").code() == error_code::INVALID_HL7);
  CHECK(parse("FHS|^~\\&\rMSH|^~\\&\r").code() == error_code::INVALID_HL7);
  CHECK(parse("hello world").code() == error_code::INVALID_HL7);
}

TEST_CASE("hl7v2 bad input: MSH shorter than its encoding characters", "[hl7v2][bad]") {
  CHECK(parse("MSH").code() == error_code::INVALID_HL7);
  CHECK(parse("MSH\rPID|1").code() == error_code::INVALID_HL7);
  CHECK(parse("MSH|").code() == error_code::INVALID_HL7);
  CHECK(parse("MSH|\r").code() == error_code::INVALID_HL7);
  // Tolerant: a short MSH-2 is read with the roles it has.
  auto two = parse("MSH|^~");
  REQUIRE(two.ok());
  CHECK(two->delimiters().escape == delimiters::NONE);
  CHECK(parse("MSH|^~", strict_options()).code() == error_code::INVALID_HL7);
  CHECK(parse("MSH|^~\\&xy|", strict_options()).code() == error_code::INVALID_HL7);
}

TEST_CASE("hl7v2 bad input: one character in two delimiter roles", "[hl7v2][bad]") {
  auto r = parse("MSH||^~&|A|B\r");
  CHECK(r.code() == error_code::INVALID_HL7);
  CHECK(parse("MSH|^^\\&|A\r").code() == error_code::INVALID_HL7);
  CHECK(parse("MSH|^~\\^|A\r").code() == error_code::INVALID_HL7);
  CHECK(parse("MSH|^~\\&^|A\r").code() == error_code::INVALID_HL7);
  CHECK(parse(std::string("MSH\0^~\\&", 8)).code() == error_code::INVALID_HL7);
  // Found by the fuzzer: a NUL inside MSH-2 was taken for "no character" and the ACK then failed.
  CHECK(parse(std::string("MSHH|\0 6", 8)).code() == error_code::INVALID_HL7);
  CHECK(parse(std::string("MSH|^\0\\&|A", 10)).code() == error_code::INVALID_HL7);
  CHECK(parse("MSHA^~\\&A", strict_options()).code() == error_code::INVALID_HL7);
  // Found by the fuzzer: a field separator that is a letter of the segment id split the id.
  auto letter = parse("MSHH^~\\&HAHB\rPIDH1HH\r");
  REQUIRE(letter.ok());
  CHECK(letter->get("MSH-2").value() == std::optional<std::string_view>("^~\\&"));
  CHECK(letter->get("MSH-4").value() == std::optional<std::string_view>("B"));
  CHECK(letter->get("PID-1").value() == std::optional<std::string_view>("1"));
  CHECK(parse(build_ack(*letter, ack_code::AA).value()).ok());
}

TEST_CASE("hl7v2 bad input: a message truncated mid-escape", "[hl7v2][bad]") {
  const std::string text = "MSH|^~\\&|A|B|C|D|20240101||ADT^A01|1|P|2.5\rNTE|1||text \\X0D";
  auto r = parse(text);
  REQUIRE(r.ok());
  CHECK(r->get_text("NTE-3").value() == std::optional<std::string>("text \\X0D"));
  auto s = parse(text, strict_options());
  REQUIRE(!s.ok());
  CHECK(s.code() == error_code::INVALID_ESCAPE);
  CHECK(s.error().offset == text.size() - 4);
}

TEST_CASE("hl7v2 bad input: limits", "[hl7v2][bad][limits]") {
  std::string text = "MSH|^~\\&|A|B|C|D|20240101||ORU^R01|1|P|2.5\rOBX|1|ED|||";
  text.append(5000, 'Z');
  text += "\rNTE|1\rNTE|2\r";
  parse_options o;
  o.max_segment_bytes = 4096;
  auto big = parse(text, o);
  REQUIRE(!big.ok());
  CHECK(big.code() == error_code::LINE_TOO_LONG);
  CHECK(big.error().offset == text.find("OBX"));
  o = {};
  o.max_message_bytes = 1000;
  CHECK(parse(text, o).code() == error_code::DOCUMENT_TOO_LARGE);
  CHECK(parse_batch(text, o).code() == error_code::DOCUMENT_TOO_LARGE);
  o = {};
  o.max_segments = 3;
  CHECK(parse(text, o).code() == error_code::DOCUMENT_TOO_LARGE);
  o.max_segments = 4;
  CHECK(parse(text, o).ok());
}

TEST_CASE("hl7v2 bad input: invalid UTF-8 under a UTF-8 charset", "[hl7v2][bad]") {
  const std::string text =
      "MSH|^~\\&|A|B|C|D|20240101||ADT^A01|1|P|2.8||||||UNICODE UTF-8\r"
      "PID|1||||\xC0\xAF^\xED\xA0\x80^\xF4\x90\x80\x80^\xE2\x82\r";
  auto r = parse(text);
  REQUIRE(r.ok());
  const std::string fffd = "\xEF\xBF\xBD";
  CHECK(r->get_text("PID-5.1").value() == std::optional<std::string>(fffd + fffd));                // overlong
  CHECK(r->get_text("PID-5.2").value() == std::optional<std::string>(fffd + fffd + fffd));         // surrogate
  CHECK(r->get_text("PID-5.3").value() == std::optional<std::string>(fffd + fffd + fffd + fffd));  // > U+10FFFF
  CHECK(r->get_text("PID-5.4").value() == std::optional<std::string>(fffd + fffd));                // truncated
  CHECK(parse(text, strict_options()).code() == error_code::INVALID_UTF8);
  CHECK(decode_text("ok \xE2\x82\xAC", charset::UTF8, true).value() == "ok \xE2\x82\xAC");
  CHECK(decode_text("\xE2\x82", charset::UTF8, true).code() == error_code::INVALID_UTF8);
}

TEST_CASE("hl7v2 bad input: binary junk after an MSH is skipped line by line", "[hl7v2][bad]") {
  std::string junk = "MSH|^~\\&|";
  for (int i = 0; i < 2000; ++i) junk += static_cast<char>((i * 131 + 7) % 256);
  // Tolerant: the MSH stands, and each following line that is not a segment is skipped.
  auto r = parse(junk);
  REQUIRE(r.ok());
  CHECK(r->segment_count() == 1);
  CHECK(r->skipped_lines() == 16);
  CHECK(quire::json::parse(r->to_json()).ok());  // to_json decodes tolerantly: still JSON
  auto name = r->get_text("PID-5[2].1.1");
  REQUIRE(name.ok());
  CHECK(!name->has_value());
  auto b = parse_batch(junk);
  REQUIRE(b.ok());
  REQUIRE(b->messages.size() == 1);
  CHECK(b->messages[0].to_json() == r->to_json());
  // Strict: the first line that is not a segment is an error.
  CHECK(parse(junk, strict_options()).code() == error_code::INVALID_HL7);
}
