// detect_input: the one rule of what an input is (the CLI's NDJSON test and the viewer's kinds).
#include <catch2/catch.hpp>

#include <string>

#include "quire/detect.h"

using quire::detect_input;
using quire::input_kind;

namespace {
input_kind kind_of(std::string_view bytes, bool whole = true, std::string_view name = {}) {
  return detect_input(bytes, whole, name).kind;
}
}  // namespace

TEST_CASE("detect_input: magic, HL7 v2 (MLLP too), empty and binary", "[detect]") {
  CHECK(kind_of(std::string_view("QUIRE\0\1\2", 8)) == input_kind::quire_file);
  CHECK(kind_of(std::string_view("QUI", 3), false) == input_kind::need_more);
  CHECK(kind_of("MSH|^~\\&|A|B\rPID|1\r") == input_kind::hl7v2);
  CHECK(kind_of("\xEF\xBB\xBF"
                "FHS|^~\\&\r") == input_kind::hl7v2);
  CHECK(kind_of("\x0bMSH|^~\\&|A\r\x1c\r") == input_kind::hl7v2);
  CHECK(kind_of("/* notes */\nMSH|^~\\&|A\r") == input_kind::hl7v2);
  CHECK(kind_of("") == input_kind::empty);
  CHECK(kind_of(" \r\n\t") == input_kind::empty);
  CHECK(kind_of(" \n", false) == input_kind::need_more);
  CHECK(kind_of(std::string_view("ab\0cd", 5)) == input_kind::unknown);
  CHECK(kind_of("\xff\xfe text") == input_kind::unknown);
}

TEST_CASE("detect_input: NDJSON is a first line that is a whole JSON value", "[detect]") {
  CHECK(kind_of("{\"resourceType\":\"Patient\"}\n{\"resourceType\":\"Patient\"}\n") == input_kind::ndjson);
  CHECK(kind_of("\n\n  {\"a\":1}\r\n{\"a\"") == input_kind::ndjson);
  // A resource on one line reads alike as NDJSON and as a document: the CLI reads it as NDJSON.
  CHECK(kind_of("{\"resourceType\":\"Patient\"}") == input_kind::ndjson);
  CHECK(kind_of("{\"resourceType\":\"Patient\"}\n") == input_kind::ndjson);
  CHECK(kind_of("[1, 2]\n") == input_kind::ndjson);
  // Pretty-printed: the first line is not a whole value.
  CHECK(kind_of("{\n  \"resourceType\": \"Patient\"\n}\n") == input_kind::fhir_json);
  CHECK(kind_of("[\n  1\n]") == input_kind::json);
  CHECK(kind_of("{\"resourceType\":\"Pat", false) == input_kind::need_more);
  CHECK(kind_of("{\"resourceType\":\"Pat") == input_kind::fhir_json);
  // The name says NDJSON without a look; any other name is not looked at.
  CHECK(kind_of("{\n}", true, "x.ndjson") == input_kind::ndjson);
  CHECK(kind_of("", false, "x.jsonl") == input_kind::ndjson);
  CHECK(kind_of("{\n}", true, "x.json") == input_kind::fhir_json);
  // XML by its first byte, as fhir::looks_like_xml has it (a BOM and white space before it).
  CHECK(kind_of("<?xml version=\"1.0\"?>\n<Patient xmlns=\"http://hl7.org/fhir\"/>") == input_kind::fhir_xml);
  CHECK(kind_of("\xEF\xBB\xBF\n  <Patient", false) == input_kind::fhir_xml);
  CHECK(input_kind_name(input_kind::fhir_xml) == "fhir-xml");
}

TEST_CASE("detect_input: CSV by its rows of fields", "[detect]") {
  CHECK(kind_of("id,name\n1,a\n2,b\n") == input_kind::csv);
  CHECK(kind_of("id\tname\n1\ta\n") == input_kind::csv);
  CHECK(kind_of("id;name;age\n1;a;3\n") == input_kind::csv);
  CHECK(kind_of("id,note\n1,\"a, b\"\n") == input_kind::csv);
  CHECK(kind_of("just some words\nand more") == input_kind::unknown);
  const auto d = detect_input("a,b\n1,2\n", true);
  CHECK(d.reason == "text in rows of fields split by \",\" (CSV)");
  CHECK(quire::input_kind_name(d.kind) == "csv");
  // The delimiter found, for a reader of the CSV (quire convert); none for another kind.
  CHECK(d.delimiter == ',');
  CHECK(detect_input("id\tname\n1\ta\n", true).delimiter == '\t');
  CHECK(detect_input("id;name;age\n1;a;3\n", true).delimiter == ';');
  CHECK(detect_input("{\"a\":1}\n", true).delimiter == 0);
}

TEST_CASE("detect_input: text named .csv or .tsv that no rule settles is CSV by its name", "[detect]") {
  auto one = quire::detect_input("id\nx1\nx2\n", true, "ids.csv");
  CHECK(one.kind == quire::input_kind::csv);
  CHECK(one.delimiter == ',');
  CHECK(quire::detect_input("id\nx1\nx2\n", true, "ids.tsv").delimiter == '\t');
  CHECK(quire::detect_input("id\nx1\nx2\n", true, "ids.txt").kind == quire::input_kind::unknown);
  // What the bytes say still comes first: NDJSON named .csv is NDJSON.
  CHECK(quire::detect_input("{\"a\":1}\n{\"a\":2}\n", true, "rows.csv").kind == quire::input_kind::ndjson);
}
