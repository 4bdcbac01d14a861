// FHIR R4 XML: read to the same resource (and canonical JSON) as the JSON form, write back, and
// refuse hostile input with a typed error at a line and column. Runs natively and in wasm.
#include <catch2/catch.hpp>

#include <string>

#include "quire/fhir.h"

using namespace quire;

namespace {

std::string json_of_xml(std::string_view xml, const fhir::options &opts = {}) {
  auto r = fhir::read_xml(xml, opts);
  if (!r) FAIL("read_xml failed: " << r.error().describe());
  return fhir::write(r.value());
}

std::string canonical(std::string_view json) {
  auto r = fhir::read(json);
  if (!r) FAIL("read failed: " << r.error().describe());
  return fhir::write(r.value());
}

std::string xml_of_json(std::string_view json, bool pretty = false) {
  auto r = fhir::read(json);
  if (!r) FAIL("read failed: " << r.error().describe());
  auto x = fhir::write_xml(r.value(), {.pretty = pretty});
  if (!x) FAIL("write_xml failed: " << x.error().describe());
  return x.value();
}

const char *const PATIENT_XML = R"(<?xml version="1.0" encoding="UTF-8"?>
<!-- a comment, dropped -->
<Patient xmlns="http://hl7.org/fhir" xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance"
    xsi:schemaLocation="http://hl7.org/fhir fhir-all.xsd">
  <id value="example"/>
  <text>
    <status value="generated"/>
    <div xmlns="http://www.w3.org/1999/xhtml"><p>Peter <b>James</b> &amp; co</p><!-- kept --></div>
  </text>
  <extension url="http://example.org/ext">
    <valueDecimal value="0.700"/>
  </extension>
  <active value="true"/>
  <name>
    <use value="official"/>
    <family value="Chalmers"/>
    <given value="Peter"/>
    <given>
      <extension url="http://example.org/missing">
        <valueCode value="unknown"/>
      </extension>
    </given>
    <given value="James &quot;Jim&quot;&#10;second line"/>
  </name>
  <gender value="male"/>
  <birthDate id="bd" value="1974-12-25">
    <extension url="http://hl7.org/fhir/StructureDefinition/patient-birthTime">
      <valueDateTime value="1974-12-25T14:35:45-05:00"/>
    </extension>
  </birthDate>
  <multipleBirthInteger value="2"/>
</Patient>
)";

}  // namespace

TEST_CASE("fhir xml: a Patient reads to the JSON form's canonical JSON", "[fhir][xml]") {
  const std::string expected = canonical(
      R"({"resourceType":"Patient","id":"example","text":{"status":"generated","div":"<div xmlns=\"http://www.w3.org/1999/xhtml\"><p>Peter <b>James</b> &amp; co</p><!-- kept --></div>"},)"
      R"("extension":[{"url":"http://example.org/ext","valueDecimal":0.700}],"active":true,)"
      R"("name":[{"use":"official","family":"Chalmers","given":["Peter",null,"James \"Jim\"\nsecond line"],)"
      R"("_given":[null,{"extension":[{"url":"http://example.org/missing","valueCode":"unknown"}]},null]}],)"
      R"("gender":"male","birthDate":"1974-12-25","_birthDate":{"id":"bd","extension":[{"url":)"
      R"("http://hl7.org/fhir/StructureDefinition/patient-birthTime","valueDateTime":"1974-12-25T14:35:45-05:00"}]},)"
      R"("multipleBirthInteger":2})");
  CHECK(json_of_xml(PATIENT_XML) == expected);
  auto r = fhir::read_xml(PATIENT_XML);
  REQUIRE(r);
  CHECK(r->resource_type() == "Patient");
  CHECK(r->outcome().ok());
}

TEST_CASE("fhir xml: detect by the first byte, through read, validate and format", "[fhir][xml]") {
  CHECK(fhir::looks_like_xml("\xEF\xBB\xBF \n<Patient/>"));
  CHECK_FALSE(fhir::looks_like_xml(R"({"resourceType":"Patient"})"));
  CHECK_FALSE(fhir::looks_like_xml(""));
  fhir::options detect;
  detect.input_syntax = fhir::syntax::detect;
  auto r = fhir::read(PATIENT_XML, detect);
  REQUIRE(r);
  CHECK(fhir::write(r.value()) == json_of_xml(PATIENT_XML));
  // JSON is read by default: XML is only taken when asked for.
  CHECK(fhir::read(PATIENT_XML).code() == error_code::INVALID_JSON);
  CHECK(fhir::validate(PATIENT_XML, detect).ok());
  auto f = fhir::format(PATIENT_XML, {}, detect);
  REQUIRE(f);
  CHECK(f.value() == json_of_xml(PATIENT_XML));
}

TEST_CASE("fhir xml: contained resources and Bundle entries take their type from the element", "[fhir][xml]") {
  const char *xml = R"(<Bundle xmlns="http://hl7.org/fhir">
  <type value="collection"/>
  <entry>
    <fullUrl value="http://example.org/fhir/Observation/o1"/>
    <resource>
      <Observation>
        <id value="o1"/>
        <contained>
          <Patient><id value="p"/><active value="false"/></Patient>
        </contained>
        <status value="final"/>
        <code><text value="weight"/></code>
        <subject><reference value="#p"/></subject>
        <valueQuantity><value value="72.50"/><unit value="kg"/></valueQuantity>
      </Observation>
    </resource>
  </entry>
</Bundle>)";
  const std::string expected = canonical(
      R"({"resourceType":"Bundle","type":"collection","entry":[{"fullUrl":"http://example.org/fhir/Observation/o1",)"
      R"("resource":{"resourceType":"Observation","id":"o1","contained":[{"resourceType":"Patient","id":"p","active":false}],)"
      R"("status":"final","code":{"text":"weight"},"subject":{"reference":"#p"},"valueQuantity":{"value":72.50,"unit":"kg"}}}]})");
  CHECK(json_of_xml(xml) == expected);
}

TEST_CASE("fhir xml: validation issues are at XML lines and columns", "[fhir][xml]") {
  const char *xml =
      "<Patient xmlns=\"http://hl7.org/fhir\">\n"
      "  <active value=\"true\"/>\n"
      "  <birthDate value=\"1974-13-45\"/>\n"
      "  <multipleBirthInteger value=\"two\"/>\n"
      "</Patient>\n";
  fhir::options detect;
  detect.input_syntax = fhir::syntax::detect;
  auto o = fhir::validate(xml, detect);
  REQUIRE(o.errors >= 2);
  bool birth = false, multiple = false;
  for (const auto &i : o.issues) {
    if (i.expression == "Patient.birthDate") {
      birth = true;
      CHECK(i.line == 3);
      CHECK(i.column == 3);
      CHECK(i.offset == std::string_view(xml).find("<birthDate"));
    }
    if (i.expression == "Patient.multipleBirth.ofType(integer)") {
      multiple = true;
      CHECK(i.line == 4);
      CHECK(i.column == 3);
    }
  }
  CHECK(birth);
  CHECK(multiple);
}

TEST_CASE("fhir xml: JSON to XML to JSON gives the same canonical JSON", "[fhir][xml]") {
  const std::string json = json_of_xml(PATIENT_XML);
  for (bool pretty : {false, true}) {
    const std::string xml = xml_of_json(json, pretty);
    CHECK(json_of_xml(xml) == json);
  }
  const std::string compact = xml_of_json(json);
  CHECK(compact.rfind("<Patient xmlns=\"http://hl7.org/fhir\"><id value=\"example\"/><text>", 0) == 0);
  CHECK(compact.find(R"(<given value="James &quot;Jim&quot;&#10;second line"/>)") != std::string::npos);
  CHECK(compact.find(R"(<birthDate id="bd" value="1974-12-25"><extension url=)") != std::string::npos);
  CHECK(compact.find(R"(<valueDecimal value="0.700"/>)") != std::string::npos);
  CHECK(compact.find(R"(<given><extension url="http://example.org/missing">)") != std::string::npos);
}

// Found by the fhir_xml fuzz target: an empty primitive element (no value, no id, no extension)
// reads as a null in its place, which validation reports; it must write back as an empty element
// and read back the same, or the XML and JSON forms of one resource would differ.
TEST_CASE("fhir xml: an empty primitive element reads back the same after writing", "[fhir][xml]") {
  const char *const cases[] = {
      R"(<Observation xmlns="http://hl7.org/fhir"><status value="final"/><code><text value="x"/></code>)"
      R"(<valueQuantity><value value="1.0"/><unit /></valueQuantity></Observation>)",
      R"(<Patient xmlns="http://hl7.org/fhir"><name><given /><given><extension url="u"><valueCode value="c"/>)"
      R"(</extension></given></name></Patient>)",
      R"(<Patient xmlns="http://hl7.org/fhir"><name><given value="a"/><given/><given value="b"/></name></Patient>)",
  };
  for (const char *xml : cases) {
    INFO(xml);
    auto r = fhir::read_xml(xml);
    REQUIRE(r);
    CHECK(r.value().outcome().errors >= 1);
    const std::string json = fhir::write(r.value());
    auto written = fhir::write_xml(r.value());
    REQUIRE(written);
    CHECK(json_of_xml(written.value()) == json);
  }
  CHECK(json_of_xml(cases[0]).find(R"("unit":null)") != std::string::npos);
  CHECK(json_of_xml(cases[1]).find(R"("_given":[null,{"extension")") != std::string::npos);
}

TEST_CASE("fhir xml: writing refuses what XML cannot hold", "[fhir][xml]") {
  auto bad_div = fhir::read(
      R"({"resourceType":"Patient","text":{"status":"generated","div":"<div xmlns=\"http://www.w3.org/1999/xhtml\"><p>open</div>"}})");
  REQUIRE(bad_div);
  CHECK(fhir::write_xml(bad_div.value()).code() == error_code::INVALID_RESOURCE);
  auto control = fhir::read(R"({"resourceType":"Patient","id":"a","gender":"ma\u0001le"})");
  REQUIRE(control);
  CHECK(fhir::write_xml(control.value()).code() == error_code::INVALID_RESOURCE);
}

namespace {

struct bad_case {
  const char *name;
  std::string xml;
  error_code code;
  uint32_t line;
};

std::string deep(size_t levels) {
  std::string s = "<Patient xmlns=\"http://hl7.org/fhir\">";
  for (size_t i = 0; i < levels; ++i) s += "<extension url=\"u\">";
  for (size_t i = 0; i < levels; ++i) s += "</extension>";
  return s + "</Patient>";
}

}  // namespace

TEST_CASE("fhir xml bad input: each a typed error with a line and column", "[fhir][xml][bad-input]") {
  const std::string head = "<Patient xmlns=\"http://hl7.org/fhir\">\n";
  const std::vector<bad_case> cases = {
      {"truncated", head + "  <active value=\"true\"/>\n  <name><family value=\"x", error_code::INVALID_XML, 3},
      {"mismatched tags", head + "  <name><family value=\"x\"/></active>\n</Patient>", error_code::INVALID_XML, 2},
      {"doctype", "<?xml version=\"1.0\"?>\n<!DOCTYPE Patient>\n" + head + "</Patient>", error_code::INVALID_XML, 2},
      {"billion laughs",
       "<?xml version=\"1.0\"?>\n<!DOCTYPE lolz [\n <!ENTITY lol \"lol\">\n"
       " <!ENTITY lol2 \"&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;\">\n"
       " <!ENTITY lol3 \"&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;\">\n]>\n" +
           head + "<id value=\"&lol3;\"/></Patient>",
       error_code::INVALID_XML, 2},
      {"external entity",
       "<!DOCTYPE Patient [<!ENTITY xxe SYSTEM \"file:///etc/passwd\">]>\n" + head + "<id value=\"&xxe;\"/></Patient>",
       error_code::INVALID_XML, 1},
      {"undefined entity", head + "  <id value=\"&xxe;\"/>\n</Patient>", error_code::INVALID_XML, 2},
      {"100,000-deep nesting", deep(100000), error_code::MAX_DEPTH_EXCEEDED, 1},
      {"invalid UTF-8", head + "  <name><family value=\"caf\xC3\x28\"/></name>\n</Patient>", error_code::INVALID_XML,
       2},
      {"overlong UTF-8", head + "  <id value=\"\xC0\xAF\"/>\n</Patient>", error_code::INVALID_XML, 2},
      {"div not XHTML", head + "  <text><status value=\"generated\"/><div>plain</div></text>\n</Patient>",
       error_code::INVALID_RESOURCE, 2},
      {"element inside the div not XHTML",
       head + "  <text><status value=\"generated\"/>\n<div xmlns=\"http://www.w3.org/1999/xhtml\"><f:p "
              "xmlns:f=\"http://hl7.org/fhir\"/></div></text>\n</Patient>",
       error_code::INVALID_RESOURCE, 3},
      {"unknown element", head + "  <active value=\"true\"/>\n  <colour value=\"red\"/>\n</Patient>",
       error_code::UNKNOWN_ELEMENT, 3},
      {"unknown attribute", head + "  <active value=\"true\" colour=\"red\"/>\n</Patient>", error_code::UNKNOWN_ELEMENT,
       2},
      {"wrong namespace", "<Patient xmlns=\"http://hl7.org/fhir/wrong\">\n</Patient>", error_code::INVALID_RESOURCE, 1},
      {"no namespace", "\n<Patient><id value=\"a\"/></Patient>", error_code::INVALID_RESOURCE, 2},
      {"child in another namespace", head + "  <x:active xmlns:x=\"urn:x\" value=\"true\"/>\n</Patient>",
       error_code::INVALID_RESOURCE, 2},
      {"unknown resource type", "<Patientt xmlns=\"http://hl7.org/fhir\"/>", error_code::INVALID_RESOURCE, 1},
      {"text content", head + "  <active>true</active>\n</Patient>", error_code::INVALID_RESOURCE, 2},
      {"two resources in one wrapper", head + "  <contained><Patient/>\n<Organization/></contained>\n</Patient>",
       error_code::INVALID_RESOURCE, 3},
      {"not XML", "<<<", error_code::INVALID_XML, 1},
      {"empty", "  \n", error_code::EMPTY_INPUT, 1},
      {"trailing content", head + "</Patient>\n<Patient xmlns=\"http://hl7.org/fhir\"/>", error_code::INVALID_XML, 3},
  };
  for (const auto &c : cases) {
    INFO(c.name);
    auto r = fhir::read_xml(c.xml);
    REQUIRE_FALSE(r);
    CHECK(r.code() == c.code);
    CHECK(r.error().line == c.line);
    CHECK(r.error().column >= 1);
    CHECK(r.error().offset != error::NO_OFFSET);
    // validate() never fails: the error is its one issue, at the same place.
    fhir::options detect;
    detect.input_syntax = fhir::syntax::detect;
    auto o = fhir::validate(c.xml, detect);
    REQUIRE(o.issues.size() == 1);
    CHECK(o.issues[0].error == c.code);
    CHECK(o.issues[0].line == c.line);
  }
}

TEST_CASE("fhir xml bad input: the limits of the JSON path hold", "[fhir][xml][bad-input]") {
  fhir::options small;
  small.max_bytes = 16;
  CHECK(fhir::read_xml("<Patient xmlns=\"http://hl7.org/fhir\"/>", small).code() == error_code::DOCUMENT_TOO_LARGE);
  std::string many = "<Patient xmlns=\"http://hl7.org/fhir\">";
  for (int i = 0; i < 20; ++i)
    many += "<contained><Organization><id value=\"o" + std::to_string(i) + "\"/></Organization></contained>";
  many += "</Patient>";
  fhir::options few;
  few.max_contained = 10;
  auto r = fhir::read_xml(many, few);
  REQUIRE_FALSE(r);
  CHECK(r.code() == error_code::TOO_MANY_CONTAINED);
  CHECK(r.error().line == 1);
  CHECK(r.error().offset == many.find("<contained>"));  // the contained array, as in JSON
  fhir::options shallow;
  shallow.max_depth = 4;
  CHECK(fhir::read_xml(deep(6)).ok());
  CHECK(fhir::read_xml(deep(6), shallow).code() == error_code::MAX_DEPTH_EXCEEDED);
}
