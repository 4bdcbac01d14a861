// HL7 v2 escape sequences: decoding, encoding, tolerant and strict handling.
#include <catch2/catch.hpp>

#include <string>

#include "quire/hl7v2.h"

using namespace quire::hl7v2;
using quire::error_code;

namespace {
std::string un(std::string_view text, bool strict = false) {
  auto r = unescape(text, delimiters{}, strict);
  REQUIRE(r.ok());
  return *r;
}
}  // namespace

TEST_CASE("hl7v2 unescape decodes the delimiter escapes", "[hl7v2][escape]") {
  CHECK(un("a\\F\\b\\S\\c\\T\\d\\R\\e\\E\\f") == "a|b^c&d~e\\f");
  CHECK(un("no escapes") == "no escapes");
  CHECK(un("") == "");
  CHECK(un("\\F\\\\F\\") == "||");
}

TEST_CASE("hl7v2 unescape decodes hex and line breaks", "[hl7v2][escape]") {
  CHECK(un("line1\\X0D0A\\line2") == "line1\r\nline2");
  CHECK(un("\\X0D\\\\X0A\\") == "\r\n");
  CHECK(un("caf\\XC3A9\\") == "caf\xC3\xA9");
  CHECK(un("a\\.br\\b") == "a\nb");
  CHECK(un("\\xff\\") == "\\xff\\");  // lower-case x is not the hex escape
}

TEST_CASE("hl7v2 unescape keeps formatting, highlighting, charset and custom escapes as written", "[hl7v2][escape]") {
  for (const char *kept : {"\\H\\bold\\N\\", "\\.sp\\", "\\.sp3\\", "\\.in+4\\", "\\.ti-2\\", "\\.sk2\\", "\\.fi\\",
                           "\\.nf\\", "\\.ce\\", "\\C2842\\", "\\M2442\\", "\\M244241\\", "\\Zcustom\\"}) {
    CHECK(un(kept) == kept);
    CHECK(un(kept, true) == kept);
  }
}

TEST_CASE("hl7v2 unknown and unterminated escapes: kept tolerantly, INVALID_ESCAPE strictly", "[hl7v2][escape]") {
  CHECK(un("C:\\temp\\file") == "C:\\temp\\file");
  CHECK(un("x\\Q\\y") == "x\\Q\\y");
  CHECK(un("stray \\ then \\F\\") == "stray \\ then |");
  CHECK(un("cut \\X0") == "cut \\X0");
  CHECK(un("odd \\X0D0\\") == "odd \\X0D0\\");
  CHECK(un("\\\\") == "\\\\");

  auto unknown = unescape("abc\\Q\\", delimiters{}, true);
  REQUIRE(!unknown.ok());
  CHECK(unknown.code() == error_code::INVALID_ESCAPE);
  CHECK(unknown.error().offset == 3);
  auto unterminated = unescape("abcdef\\F", delimiters{}, true);
  REQUIRE(!unterminated.ok());
  CHECK(unterminated.code() == error_code::INVALID_ESCAPE);
  CHECK(unterminated.error().offset == 6);
  // \P\ needs a truncation character, which only v2.7+ MSH-2 declares.
  CHECK(unescape("\\P\\", delimiters{}, true).code() == error_code::INVALID_ESCAPE);
}

TEST_CASE("hl7v2 escape encodes delimiters and control bytes and round-trips", "[hl7v2][escape]") {
  const delimiters d;
  CHECK(escape("a|b^c&d~e\\f", d) == "a\\F\\b\\S\\c\\T\\d\\R\\e\\E\\f");
  CHECK(escape("line1\r\nline2\t", d) == "line1\\X0D\\\\X0A\\line2\\X09\\");
  CHECK(escape("caf\xC3\xA9", d) == "caf\xC3\xA9");
  std::string all;
  for (int c = 0; c < 256; ++c) all += static_cast<char>(c);
  CHECK(un(escape(all, d), true) == all);
  delimiters odd;
  odd.field = '^';
  odd.component = '~';
  odd.repetition = '|';
  odd.truncation = '#';
  CHECK(escape("|^~#", odd) == "\\R\\\\F\\\\S\\\\P\\");
  CHECK(unescape(escape("|^~#x", odd), odd, true).value() == "|^~#x");
}

TEST_CASE("hl7v2 escape with no escape character replaces what it cannot carry", "[hl7v2][escape]") {
  delimiters d;
  d.escape = delimiters::NONE;
  CHECK(escape("a|b\rc", d) == "a b c");
  CHECK(unescape("a\\F\\", d, true).value() == "a\\F\\");
}

TEST_CASE("hl7v2 get_text unescapes with the message's delimiters and reports offsets", "[hl7v2][escape]") {
  const std::string text = "MSH|^~\\&|A|B|C|D|20240101||ADT^A01|1|P|2.5\rNTE|1||Dose \\T\\ route\\.br\\next \\Q\\\r";
  auto r = parse(text);
  REQUIRE(r.ok());
  CHECK(r->get_text("NTE-3").value() == std::optional<std::string>("Dose & route\nnext \\Q\\"));
  CHECK(r->get("NTE-3").value() == std::optional<std::string_view>("Dose \\T\\ route\\.br\\next \\Q\\"));
  quire::hl7v2::parse_options strict;
  strict.strict = true;
  auto s = parse(text, strict);
  REQUIRE(!s.ok());
  CHECK(s.code() == error_code::INVALID_ESCAPE);
  CHECK(s.error().offset == text.find("\\Q\\"));
  CHECK(s.error().path == "NTE-3");
}
