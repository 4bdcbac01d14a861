// fhir::read: the model keeps everything (exact decimals, big integers, primitive extensions with
// nulls, contained resources), resourceType is checked, strict and lenient modes, limits.
#include <catch2/catch.hpp>

#include "quire/fhir.h"
#include "test_support.h"

using namespace quire;

TEST_CASE("fhir read: a Patient with primitive extensions keeps them", "[fhir][read]") {
  std::string text =
      R"({"resourceType":"Patient","id":"x","birthDate":"1970-03-30","_birthDate":{"extension":[{"url":"http://hl7.org/fhir/StructureDefinition/patient-birthTime","valueDateTime":"1970-03-30T14:35:45-05:00"}]},
    "name":[{"given":["Peter",null,"James"],"_given":[null,{"extension":[{"url":"http://example.org/x","valueString":"y"}]},null]}]})";
  auto r = fhir::read(text);
  REQUIRE(r);
  CHECK(r->resource_type() == "Patient");
  REQUIRE(r->issues().size() == 1);  // dom-6: no narrative (a warning)
  CHECK(r->issues()[0].key == "dom-6");
  std::string out = fhir::write(*r);
  CHECK(out.find(R"("given":["Peter",null,"James"],"_given":[null,{"extension")") != std::string::npos);
}

TEST_CASE("fhir read: decimals and big integers keep their exact text", "[fhir][read]") {
  std::string text =
      R"({"resourceType":"Observation","status":"final","code":{"text":"x"},"valueQuantity":{"value":0.700,"unit":"mg"}})";
  auto r = fhir::read(text);
  REQUIRE(r);
  REQUIRE(r->issues().size() == 1);  // dom-6: no narrative (a warning)
  CHECK(r->issues()[0].key == "dom-6");
  CHECK(
      fhir::write(*r) ==
      R"({"resourceType":"Observation","status":"final","code":{"text":"x"},"valueQuantity":{"value":0.700,"unit":"mg"}})");
}

TEST_CASE("fhir read: resourceType is checked", "[fhir][read]") {
  CHECK(fhir::read(R"({"id":"x"})").code() == error_code::INVALID_RESOURCE);
  CHECK(fhir::read(R"({"resourceType":"Patientx"})").code() == error_code::INVALID_RESOURCE);
  CHECK(fhir::read(R"({"resourceType":7})").code() == error_code::INVALID_RESOURCE);
  CHECK(fhir::read(R"([1])").code() == error_code::INVALID_RESOURCE);
  CHECK(fhir::read(R"({"resourceType":"Patient",})").code() == error_code::INVALID_JSON);
}

TEST_CASE("fhir read: strict mode rejects unknown elements, lenient keeps them", "[fhir][read]") {
  std::string text = R"({"resourceType":"Patient","active":true,"foo":{"bar":1}})";
  fhir::options strict;
  strict.strict = true;
  auto s = fhir::read(text, strict);
  REQUIRE_FALSE(s);
  CHECK(s.code() == error_code::UNKNOWN_ELEMENT);
  CHECK(s.error().path == "Patient.foo");
  CHECK(s.error().line == 1);
  auto l = fhir::read(text);
  REQUIRE(l);
  REQUIRE(l->issues().size() == 2);
  CHECK(l->issues()[0].key == "dom-6");  // the resource's own invariants come first
  CHECK(l->issues()[1].expression == "Patient.foo");
  CHECK(fhir::write(*l) == R"({"resourceType":"Patient","active":true,"foo":{"bar":1}})");
}
