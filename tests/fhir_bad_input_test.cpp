// fhir::read on hostile input: every limit is a typed error, never a crash.
#include <catch2/catch.hpp>

#include "quire/fhir.h"

using namespace quire;

TEST_CASE("fhir bad input: nesting deeper than max_depth", "[fhir][bad-input]") {
  std::string text = R"({"resourceType":"Patient","extension":[)";
  for (int i = 0; i < 100; ++i) text += R"({"url":"http://x","extension":[)";
  for (int i = 0; i < 100; ++i) text += "]}";
  text += "]}";
  fhir::options opts;
  opts.max_depth = 64;
  auto r = fhir::read(text, opts);
  REQUIRE_FALSE(r);
  CHECK(r.code() == error_code::MAX_DEPTH_EXCEEDED);
  CHECK(r.error().offset != error::NO_OFFSET);
  opts.max_depth = 1 << 20;  // clamped: still bounded
  CHECK(fhir::read(text, opts));
  auto o = fhir::validate(text, {.max_depth = 64});
  REQUIRE(o.issues.size() == 1);
  CHECK(o.issues[0].error == error_code::MAX_DEPTH_EXCEEDED);
  CHECK(o.issues[0].code == "too-costly");
}

TEST_CASE("fhir bad input: larger than max_bytes", "[fhir][bad-input]") {
  fhir::options opts;
  opts.max_bytes = 16;
  CHECK(fhir::read(R"({"resourceType":"Patient","active":true})", opts).code() == error_code::DOCUMENT_TOO_LARGE);
}

TEST_CASE("fhir bad input: more contained resources than max_contained", "[fhir][bad-input]") {
  std::string text = R"({"resourceType":"Patient","contained":[)";
  for (int i = 0; i < 20; ++i)
    text += std::string(i ? "," : "") + R"({"resourceType":"Organization","id":"o)" + std::to_string(i) + "\"}";
  text += "]}";
  fhir::options opts;
  opts.max_contained = 10;
  auto r = fhir::read(text, opts);
  REQUIRE_FALSE(r);
  CHECK(r.code() == error_code::TOO_MANY_CONTAINED);
  CHECK(r.error().path == "Patient.contained");
  CHECK(fhir::read(text));
}

TEST_CASE("fhir bad input: contained resources that reference each other in a cycle", "[fhir][bad-input]") {
  // References are checked against a list of ids, never followed: a cycle costs nothing.
  auto r = fhir::read(R"({"resourceType":"Patient","contained":[
    {"resourceType":"Organization","id":"a","name":"A","partOf":{"reference":"#b"}},
    {"resourceType":"Organization","id":"b","name":"B","partOf":{"reference":"#a"}}],
    "managingOrganization":{"reference":"#a"}})");
  REQUIRE(r);
  CHECK(r->outcome().errors == 0);  // dom-3, ref-1 and org-1 hold
  REQUIRE(r->issues().size() == 1);
  CHECK(r->issues()[0].key == "dom-6");  // the Patient has no narrative
}

TEST_CASE("fhir bad input: not JSON, empty, wrong root", "[fhir][bad-input]") {
  CHECK(fhir::read("").code() == error_code::EMPTY_INPUT);
  CHECK(fhir::read("   ").code() == error_code::EMPTY_INPUT);
  CHECK(fhir::read("\"Patient\"").code() == error_code::INVALID_RESOURCE);
  CHECK(fhir::read("{\"resourceType\":\"Patient\"").code() == error_code::INVALID_JSON);
  CHECK(fhir::read("{\"resourceType\":\"Pat\xff\"}").code() == error_code::INVALID_UTF8);
  CHECK(fhir::read(R"({"resourceType":"Resource"})").code() == error_code::INVALID_RESOURCE);  // abstract
}

TEST_CASE("fhir bad input: a 4 MiB base64 payload is checked in place", "[fhir][bad-input]") {
  std::string payload(4u << 20, 'A');
  std::string text = R"({"resourceType":"Binary","contentType":"application/octet-stream","data":")" + payload + "\"}";
  auto r = fhir::read(text);
  REQUIRE(r);
  CHECK(r->issues().empty());
  // fhir adds nothing that grows with the payload: the resource holds exactly what the JSON layer's
  // document holds (its copy of the input, its tape and its unescaped strings).
  auto doc = json::parse(text);
  REQUIRE(doc);
  CHECK(r->document().memory_bytes() == doc->memory_bytes());
  payload[1000] = '!';
  auto bad = fhir::validate(R"({"resourceType":"Binary","contentType":"x/y","data":")" + payload + "\"}");
  REQUIRE(bad.issues.size() == 1);
  CHECK(bad.issues[0].expression == "Binary.data");
}
