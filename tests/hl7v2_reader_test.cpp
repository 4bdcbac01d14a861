// The ER7 reader: delimiters, terminators, segments and fields, batches, charsets, zero copy.
#include <catch2/catch.hpp>

#include <string>

#include "quire/hl7v2.h"
#include "test_support.h"

using namespace quire::hl7v2;
using quire::error_code;

namespace {

const char *const ADT =
    "MSH|^~\\&|SENDAPP|SENDFAC|RECVAPP|RECVFAC|20240131120500||ADT^A01^ADT_A01|MSG00001|P|2.5.1\r"
    "EVN|A01|20240131120500\r"
    "PID|1||12345^^^HOSP^MR~67890^^^SSA^SS||DOE^JOHN^Q~SMITH^JOHNNY||19700101|M\r"
    "PV1|1|I|WARD^101^A\r";

std::string with_terminator(std::string text, const std::string &terminator) {
  std::string out;
  for (char c : text) {
    if (c == '\r') out += terminator;
    else out += c;
  }
  return out;
}

}  // namespace

TEST_CASE("hl7v2 parse reads segments and fields", "[hl7v2][reader]") {
  auto r = parse(ADT);
  REQUIRE(r.ok());
  const message &m = *r;
  REQUIRE(m.segment_count() == 4);
  CHECK(m.segment(0).id() == "MSH");
  CHECK(m.segment(3).id() == "PV1");
  CHECK(m.segment(2).field(5) == std::optional<std::string_view>("DOE^JOHN^Q~SMITH^JOHNNY"));
  CHECK(m.segment(2).field(9) == std::nullopt);
  CHECK(m.segment(2).field(0) == std::nullopt);
  CHECK(m.segment(2).field_count() == 8);
  CHECK(m.skipped_lines() == 0);
  CHECK(m.count("PID") == 1);
  CHECK(m.find("PID")->index() == 2);
  CHECK(!m.find("OBX"));
  CHECK(m.segment(1).offset() == std::string_view(ADT).find("EVN"));
}

TEST_CASE("hl7v2 MSH numbering: MSH-1 is the field separator, MSH-2 the encoding characters", "[hl7v2][reader]") {
  auto r = parse(ADT);
  REQUIRE(r.ok());
  const auto msh = r->segment(0);
  CHECK(msh.field(1) == std::optional<std::string_view>("|"));
  CHECK(msh.field(2) == std::optional<std::string_view>("^~\\&"));
  CHECK(msh.field(3) == std::optional<std::string_view>("SENDAPP"));
  CHECK(msh.field(9) == std::optional<std::string_view>("ADT^A01^ADT_A01"));
  CHECK(msh.field(12) == std::optional<std::string_view>("2.5.1"));
  CHECK(msh.field_count() == 12);
  CHECK(r->type() == "ADT");
  CHECK(r->trigger() == "A01");
  CHECK(r->structure() == "ADT_A01");
  CHECK(r->control_id() == "MSG00001");
  CHECK(r->processing_id() == "P");
  CHECK(r->version() == "2.5.1");
  CHECK(r->timestamp() == "20240131120500");
  CHECK(r->sending_application() == "SENDAPP");
  CHECK(r->sending_facility() == "SENDFAC");
  CHECK(r->receiving_application() == "RECVAPP");
  CHECK(r->receiving_facility() == "RECVFAC");
  CHECK(r->delimiters().to_string() == "|^~\\&");
}

TEST_CASE("hl7v2 segment terminators CR, LF, CRLF and mixed read the same", "[hl7v2][reader]") {
  const auto base = parse(ADT);
  REQUIRE(base.ok());
  for (const std::string term : {"\n", "\r\n", "\n\r", "\r\r"}) {
    const std::string text = with_terminator(ADT, term);
    auto r = parse(text);
    REQUIRE(r.ok());
    CHECK(r->segment_count() == 4);
    CHECK(r->to_json() == base->to_json());
  }
  std::string mixed = "MSH|^~\\&|A\rEVN|A01\nPID|1\r\nPV1|1";
  auto r = parse(mixed);
  REQUIRE(r.ok());
  REQUIRE(r->segment_count() == 4);
  CHECK(r->segment(3).raw() == "PV1|1");
}

TEST_CASE("hl7v2 a UTF-8 byte order mark and leading blank lines are skipped", "[hl7v2][reader]") {
  const std::string text = "\xEF\xBB\xBF\r\n\n" + std::string(ADT);
  auto r = parse(text);
  REQUIRE(r.ok());
  CHECK(r->segment_count() == 4);
  CHECK(r->segment(0).offset() == 6);
}

TEST_CASE("hl7v2 non-standard delimiters come from MSH", "[hl7v2][reader]") {
  const std::string text = quire_test::read_text(quire_test::data_dir() / "hl7v2" / "segmentfinder_a24.hl7");
  REQUIRE(!text.empty());
  auto r = parse(text);
  REQUIRE(r.ok());
  const delimiters &d = r->delimiters();
  CHECK(d.field == '^');
  CHECK(d.component == '~');
  CHECK(d.repetition == '|');
  CHECK(d.escape == '\\');
  CHECK(d.subcomponent == '&');
  CHECK(r->type() == "ADT");
  CHECK(r->trigger() == "A24");
  CHECK(r->version() == "2.4");
  CHECK(r->segment_count() == 4);
  CHECK(r->get("PID[2]-3.6.2").value() == std::optional<std::string_view>("200M"));
  CHECK(r->get("PID-5.2").value() == std::optional<std::string_view>("JOHN"));
  CHECK(r->get("MSH-1").value() == std::optional<std::string_view>("^"));
  CHECK(r->get("MSH-2").value() == std::optional<std::string_view>("~|\\&"));
}

TEST_CASE("hl7v2 Z segments are ordinary segments", "[hl7v2][reader]") {
  auto r = parse("MSH|^~\\&|A|B|C|D|20240101||ZZZ^Z01|1|P|2.5\rZPI|1|custom^value\r");
  REQUIRE(r.ok());
  CHECK(r->segment(1).id() == "ZPI");
  CHECK(r->get("ZPI-2.2").value() == std::optional<std::string_view>("value"));
}

TEST_CASE("hl7v2 a fifth encoding character is the truncation character", "[hl7v2][reader]") {
  auto r = parse("MSH|^~\\&#|A|B|C|D|20240101||ADT^A01|1|P|2.7\rNTE|1||long text\\P\\\r");
  REQUIRE(r.ok());
  CHECK(r->delimiters().truncation == '#');
  CHECK(r->get("MSH-3").value() == std::optional<std::string_view>("A"));
  CHECK(r->get_text("NTE-3").value() == std::optional<std::string>("long text#"));
}

TEST_CASE("hl7v2 short MSH-2 is read tolerantly, roles left out split nothing", "[hl7v2][reader]") {
  auto r = parse("MSH|^~}|ADMISSION|ADT1|||19930502||BAR^P01|5898|P|2.4\rPID|1|a&b^c}F}\r");
  REQUIRE(r.ok());
  CHECK(r->delimiters().escape == '}');
  CHECK(r->delimiters().subcomponent == delimiters::NONE);
  CHECK(r->get("PID-2.1").value() == std::optional<std::string_view>("a&b"));
  CHECK(r->get_text("PID-2.2").value() == std::optional<std::string>("c|"));
  parse_options strict;
  strict.strict = true;
  CHECK(parse("MSH|^~}|A\r", strict).code() == error_code::INVALID_HL7);
}

TEST_CASE("hl7v2 MSH-18 8859/1 text is decoded to UTF-8", "[hl7v2][reader]") {
  const std::string text = "MSH|^~\\&|A|B|C|D|20240101||ADT^A01|1|P|2.5||||||8859/1\rPID|1||||M\xFCller^J\xE9r\xF4me\r";
  auto r = parse(text);
  REQUIRE(r.ok());
  CHECK(r->charset() == charset::ISO_8859_1);
  CHECK(r->get_text("PID-5.1").value() == std::optional<std::string>("M\xC3\xBCller"));
  CHECK(r->get_text("PID-5.2").value() == std::optional<std::string>("J\xC3\xA9r\xC3\xB4me"));
  CHECK(charset_from_name("UNICODE UTF-8") == charset::UTF8);
  CHECK(charset_from_name(" iso-8859-1 ") == charset::ISO_8859_1);
  CHECK(charset_from_name("ASCII") == charset::UTF8);
}

TEST_CASE("hl7v2 UTF-8 text passes through, invalid bytes become U+FFFD unless strict", "[hl7v2][reader]") {
  const std::string text =
      "MSH|^~\\&|A|B|C|D|20240101||ADT^A01|1|P|2.8||||||UNICODE UTF-8\rPID|1||||Stra\xC3\x9F"
      "e^Bad\xFF\r";
  auto r = parse(text);
  REQUIRE(r.ok());
  CHECK(r->get_text("PID-5.1").value() == std::optional<std::string>("Stra\xC3\x9F"
                                                                     "e"));
  CHECK(r->get_text("PID-5.2").value() == std::optional<std::string>("Bad\xEF\xBF\xBD"));
  parse_options strict;
  strict.strict = true;
  auto s = parse(text, strict);
  REQUIRE(!s.ok());
  CHECK(s.code() == error_code::INVALID_UTF8);
  CHECK(s.error().offset == text.find('\xFF'));
}

TEST_CASE("hl7v2 values are views into the input, not copies", "[hl7v2][reader]") {
  std::string big(8u << 20, 'A');
  for (size_t i = 0; i < big.size(); i += 77) big[i] = static_cast<char>('a' + i % 26);
  const std::string text =
      "MSH|^~\\&|A|B|C|D|20240101||ORU^R01|1|P|2.5\rOBX|1|ED|PDF||^application^pdf^Base64^" + big + "\r";
  auto r = parse(text);
  REQUIRE(r.ok());
  const auto v = r->get("OBX-5.5").value();
  REQUIRE(v);
  CHECK(v->size() == big.size());
  CHECK(v->data() >= text.data());
  CHECK(v->data() + v->size() <= text.data() + text.size());
  CHECK(*v == big);
}

TEST_CASE("hl7v2 a 20 MB field parses under the default limits", "[hl7v2][reader]") {
  std::string text = "MSH|^~\\&|A|B|C|D|20240101||ORU^R01|1|P|2.5\rOBX|1|ED|||";
  text.append(20u << 20, 'Q');
  text += "\r";
  auto r = parse(text);
  REQUIRE(r.ok());
  CHECK(r->get("OBX-5").value()->size() == (20u << 20));
}

TEST_CASE("hl7v2 non-segment lines are skipped tolerantly and rejected strictly", "[hl7v2][reader]") {
  const std::string text = std::string(ADT) + "// a comment\r   \rNTE|1\r";
  auto r = parse(text);
  REQUIRE(r.ok());
  CHECK(r->skipped_lines() == 1);
  CHECK(r->segment_count() == 5);
  parse_options strict;
  strict.strict = true;
  auto s = parse(text, strict);
  REQUIRE(!s.ok());
  CHECK(s.code() == error_code::INVALID_HL7);
  CHECK(s.error().offset == text.find("//"));
}

TEST_CASE("hl7v2 parse_batch splits files and batches", "[hl7v2][reader][batch]") {
  const std::string one = ADT;
  const std::string other = "MSH|^~\\&|X|Y|Z|W|20240201||ORU^R01|MSG2|P|2.5\rOBX|1|ST|CODE||value\r";
  SECTION("envelopes") {
    const std::string text = "FHS|^~\\&|FILEAPP\rBHS|^~\\&|BATCHAPP\r" + one + other + "BTS|2\rFTS|1\r";
    auto r = parse_batch(text);
    REQUIRE(r.ok());
    REQUIRE(r->messages.size() == 2);
    CHECK(r->messages[0].control_id() == "MSG00001");
    CHECK(r->messages[1].control_id() == "MSG2");
    CHECK(r->messages[1].segment_count() == 2);
    REQUIRE(r->envelope.size() == 4);
    CHECK(r->envelope[0] == "FHS|^~\\&|FILEAPP");
    CHECK(r->envelope[3] == "FTS|1");
    CHECK(r->skipped_bytes == 0);
    CHECK(r->messages[1].segment(0).offset() == text.find("MSH|^~\\&|X"));
    // parse() wants one message and says what to use instead.
    CHECK(parse(text).code() == error_code::INVALID_HL7);
    CHECK(parse(one + other).code() == error_code::INVALID_HL7);
  }
  SECTION("comments and blank lines between messages") {
    const std::string text = "/*\n * header\n MSH|not a message\n */\n" + with_terminator(one, "\n") + "\n// next\n" +
                             with_terminator(other, "\n") + "\n\n";
    auto r = parse_batch(text);
    REQUIRE(r.ok());
    REQUIRE(r->messages.size() == 2);
    CHECK(r->messages[0].skipped_lines() == 0);
    CHECK(r->messages[0].segment_count() == 4);
    CHECK(r->skipped_bytes == std::string("/*"
                                          " * header"
                                          " MSH|not a message"
                                          " */"
                                          "// next")
                                  .size());
    parse_options strict;
    strict.strict = true;
    CHECK(parse_batch(text, strict).code() == error_code::INVALID_HL7);
  }
  SECTION("each message keeps its own delimiters") {
    const std::string text = one + "MSH#^~\\&#X#Y\rPID#1#a|b\r";
    auto r = parse_batch(text);
    REQUIRE(r.ok());
    REQUIRE(r->messages.size() == 2);
    CHECK(r->messages[1].delimiters().field == '#');
    CHECK(r->messages[1].get("PID-2").value() == std::optional<std::string_view>("a|b"));
  }
  SECTION("an envelope alone is an empty batch") {
    auto r = parse_batch("BHS|^~\\&\rBTS|0\r");
    REQUIRE(r.ok());
    CHECK(r->messages.empty());
    CHECK(r->envelope.size() == 2);
  }
  SECTION("no message") {
    CHECK(parse_batch("").code() == error_code::EMPTY_INPUT);
    CHECK(parse_batch("\r\n  \n").code() == error_code::EMPTY_INPUT);
    CHECK(parse_batch("hello\nworld\n").code() == error_code::INVALID_HL7);
  }
}
