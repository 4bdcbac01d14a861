// The FHIRPath engine's own rules: errors with their positions, hostile depth, precedence,
// empty propagation, three-valued logic, equality and equivalence, exact decimals, FHIR types
// (choice elements, primitives with extensions, is/as/ofType), and one compiled expression
// evaluated over many resources.
#include <catch2/catch.hpp>

#include <string>

#include "quire/fhirpath.h"
#include "test_support.h"

using namespace quire;

namespace {

const char *PATIENT = R"({
  "resourceType": "Patient",
  "id": "p1",
  "active": true,
  "gender": "female",
  "birthDate": "1974-12-25",
  "_birthDate": {"extension": [{"url": "http://hl7.org/fhir/StructureDefinition/patient-birthTime", "valueDateTime": "1974-12-25T14:35:45-05:00"}]},
  "name": [
    {"use": "official", "family": "Chalmers", "given": ["Peter", null, "James"],
     "_given": [null, {"extension": [{"url": "http://example.org/no-value", "valueBoolean": true}]}, null]},
    {"use": "usual", "given": ["Jim"]}
  ],
  "_gender": {"id": "g1"},
  "deceasedBoolean": false,
  "contained": [{"resourceType": "Organization", "id": "o1", "name": "Acme"}]
})";

const char *OBSERVATION = R"({
  "resourceType": "Observation",
  "status": "final",
  "code": {"coding": [{"system": "http://loinc.org", "code": "29463-7"}]},
  "valueQuantity": {"value": 0.700, "unit": "kg", "system": "http://unitsofmeasure.org", "code": "kg"},
  "effectiveDateTime": "2016-03-28"
})";

json::document doc_of(const char *text) { return json::parse(text).value(); }

// Evaluates `expr` on `doc` and returns the result as JSON text, or "CODE@offset" on an error.
std::string run(const std::string &expr, const json::document &doc, const fhirpath::environment &env = {}) {
  auto e = fhirpath::compile(expr);
  if (!e) return std::string(error_name(e.code())) + "@" + std::to_string(e.error().offset);
  fhirpath::evaluator ev;
  auto r = ev.evaluate(*e, doc.root(), env);
  if (!r) return std::string(error_name(r.code())) + "@" + std::to_string(r.error().offset);
  return fhirpath::to_json(**r);
}

std::string run(const std::string &expr) {
  static const json::document empty = json::parse("{}").value();
  return run(expr, empty);
}

}  // namespace

TEST_CASE("fhirpath: syntax errors name the place in the expression", "[fhirpath]") {
  auto e = fhirpath::compile("1 + ");
  REQUIRE_FALSE(e);
  CHECK(e.code() == error_code::INVALID_FHIRPATH);
  CHECK(e.error().offset == 4);

  e = fhirpath::compile("Patient.name.given.where(use = 'x'");
  REQUIRE_FALSE(e);
  CHECK(e.code() == error_code::INVALID_FHIRPATH);
  CHECK(e.error().offset == 34);

  e = fhirpath::compile("name = 'unclosed");
  REQUIRE_FALSE(e);
  CHECK(e.code() == error_code::INVALID_FHIRPATH);
  CHECK(e.error().offset == 7);

  e = fhirpath::compile("1 + * 2");
  REQUIRE_FALSE(e);
  CHECK(e.error().offset == 4);

  e = fhirpath::compile("2 + 2 /* never closed");
  REQUIRE_FALSE(e);
  CHECK(e.error().offset == 6);

  CHECK(run("@2015-13-01") == "INVALID_FHIRPATH@0");
  CHECK(run("@T14:34:28Z") == "INVALID_FHIRPATH@0");
  CHECK(run("1 # 2") == "INVALID_FHIRPATH@2");
  CHECK(run("") == "INVALID_FHIRPATH@0");
  // A backslash as the last byte of an unclosed string (found by the fuzzer: the lexer looped).
  CHECK(run("'a,b\\") == "INVALID_FHIRPATH@0");
}

TEST_CASE("fhirpath: an unknown function is an error naming it", "[fhirpath]") {
  auto e = fhirpath::compile("Patient.name.fooBar()");
  REQUIRE_FALSE(e);
  CHECK(e.code() == error_code::UNKNOWN_FUNCTION);
  CHECK(e.error().offset == 13);
  CHECK(e.error().message.find("fooBar") != std::string::npos);

  e = fhirpath::compile("'abc'.substring()");
  REQUIRE_FALSE(e);
  CHECK(e.code() == error_code::UNKNOWN_FUNCTION);
  CHECK(e.error().message.find("substring") != std::string::npos);

  // An unknown type in is/as/ofType is found when compiling too.
  CHECK(run("1.is(Integr)") == "FHIRPATH_TYPE_ERROR@5");
}

TEST_CASE("fhirpath: type errors while evaluating carry the operator's offset", "[fhirpath]") {
  CHECK(run("1 + 'a'") == "FHIRPATH_TYPE_ERROR@2");
  CHECK(run("(1 | 2).not()") == "FHIRPATH_TYPE_ERROR@8");
  CHECK(run("1 > 2 is Boolean") == "FHIRPATH_TYPE_ERROR@2");
  CHECK(run("'a' < 1") == "FHIRPATH_TYPE_ERROR@4");
  auto p = doc_of(PATIENT);
  CHECK(run("Patient.name.single()", p) == "FHIRPATH_TYPE_ERROR@13");
  CHECK(run("Patient.name.family.startsWith(1)", p) == "FHIRPATH_TYPE_ERROR@20");
}

TEST_CASE("fhirpath: 10,000-deep expressions are refused, not a stack overflow", "[fhirpath]") {
  std::string parens = std::string(10000, '(') + "1" + std::string(10000, ')');
  auto e = fhirpath::compile(parens);
  REQUIRE_FALSE(e);
  CHECK(e.code() == error_code::MAX_DEPTH_EXCEEDED);
  CHECK(e.error().message.find("max_depth") != std::string::npos);

  std::string sum = "1";
  for (int i = 0; i < 10000; ++i) sum += "+1";
  CHECK(fhirpath::compile(sum).code() == error_code::MAX_DEPTH_EXCEEDED);

  std::string path = "a";
  for (int i = 0; i < 10000; ++i) path += ".b";
  CHECK(fhirpath::compile(path).code() == error_code::MAX_DEPTH_EXCEEDED);

  std::string minus = std::string(10000, '-') + "1";
  CHECK(fhirpath::compile(minus).code() == error_code::MAX_DEPTH_EXCEEDED);

  std::string calls;
  for (int i = 0; i < 3000; ++i) calls += "iif(true, ";
  calls += "1";
  for (int i = 0; i < 3000; ++i) calls += ", 2)";
  CHECK(fhirpath::compile(calls).code() == error_code::MAX_DEPTH_EXCEEDED);

  // Within the limit the same shapes evaluate.
  std::string ok = "1";
  for (int i = 0; i < 200; ++i) ok += "+1";
  CHECK(run(ok) == "[201]");
  CHECK(run(std::string(100, '(') + "2" + std::string(100, ')')) == "[2]");

  fhirpath::limits tight;
  tight.max_depth = 8;
  CHECK(fhirpath::compile("1+1+1+1+1+1+1+1+1+1", tight).code() == error_code::MAX_DEPTH_EXCEEDED);
  tight.max_expression_bytes = 4;
  CHECK(fhirpath::compile("1+1+1", tight).code() == error_code::DOCUMENT_TOO_LARGE);
}

TEST_CASE("fhirpath: operator precedence follows N1", "[fhirpath]") {
  CHECK(run("1 + 2 * 3") == "[7]");
  CHECK(run("(1 + 2) * 3") == "[9]");
  CHECK(run("7 - 2 - 1") == "[4]");
  CHECK(run("2 * 3 div 2") == "[3]");
  CHECK(run("(1 | 1 is Integer).count()") == "[2]");
  CHECK(run("true or false and false") == "[true]");
  CHECK(run("false implies true or false") == "[true]");
  CHECK(run("-2.abs()") == "[-2]");
  CHECK(run("(-2).abs()") == "[2]");
  CHECK(run("1 < 2 = true") == "[true]");
  CHECK(run("'a' & 'b' + 'c'") == "[\"abc\"]");
}

TEST_CASE("fhirpath: an empty operand gives an empty result", "[fhirpath]") {
  auto p = doc_of(PATIENT);
  CHECK(run("{} + 1") == "[]");
  CHECK(run("1 * {}") == "[]");
  CHECK(run("{} = 1") == "[]");
  CHECK(run("Patient.missing + 1", p) == "[]");
  CHECK(run("Patient.missing.substring(1)", p) == "[]");
  CHECK(run("{} < 1") == "[]");
  CHECK(run("{}.not()") == "[]");
  CHECK(run("{} & 'a'") == "[\"a\"]");
  CHECK(run("{}.count()") == "[0]");
  CHECK(run("{}.empty()") == "[true]");
}

TEST_CASE("fhirpath: and, or, xor and implies are three-valued", "[fhirpath]") {
  // rows: left true, false, empty; columns: right true, false, empty
  const char *values[3] = {"true", "false", "{}"};
  const char *want_and[3][3] = {
      {"[true]", "[false]", "[]"}, {"[false]", "[false]", "[false]"}, {"[]", "[false]", "[]"}};
  const char *want_or[3][3] = {{"[true]", "[true]", "[true]"}, {"[true]", "[false]", "[]"}, {"[true]", "[]", "[]"}};
  const char *want_xor[3][3] = {{"[false]", "[true]", "[]"}, {"[true]", "[false]", "[]"}, {"[]", "[]", "[]"}};
  const char *want_implies[3][3] = {
      {"[true]", "[false]", "[]"}, {"[true]", "[true]", "[true]"}, {"[true]", "[]", "[]"}};
  for (int i = 0; i < 3; ++i) {
    for (int j = 0; j < 3; ++j) {
      std::string l = values[i], r = values[j];
      INFO(l << " op " << r);
      CHECK(run("(" + l + ") and (" + r + ")") == want_and[i][j]);
      CHECK(run("(" + l + ") or (" + r + ")") == want_or[i][j]);
      CHECK(run("(" + l + ") xor (" + r + ")") == want_xor[i][j]);
      CHECK(run("(" + l + ") implies (" + r + ")") == want_implies[i][j]);
    }
  }
}

TEST_CASE("fhirpath: equality and equivalence differ as N1 says", "[fhirpath]") {
  CHECK(run("'a' = 'A'") == "[false]");
  CHECK(run("'a' ~ 'A'") == "[true]");
  CHECK(run("'a  b' ~ 'A B'") == "[true]");
  CHECK(run("1.10 = 1.1") == "[true]");
  CHECK(run("1.1 ~ 1.14") == "[true]");  // rounded to the least precise operand
  CHECK(run("1.1 = 1.14") == "[false]");
  CHECK(run("{} = {}") == "[]");
  CHECK(run("{} ~ {}") == "[true]");
  CHECK(run("(1 | 2) = (2 | 1)") == "[false]");
  CHECK(run("(1 | 2) ~ (2 | 1)") == "[true]");
  CHECK(run("@2012-04-15 = @2012-04-15T10:00:00") == "[]");
  CHECK(run("@2012-04-15 ~ @2012-04-15T10:00:00") == "[false]");
  CHECK(run("@2017-11-05T01:30:00.0-04:00 = @2017-11-05T00:30:00.0-05:00") == "[true]");
  CHECK(run("1 'm' = 100 'cm'") == "[true]");
  CHECK(run("1 year = 1 'a'") == "[]");
  CHECK(run("1 year ~ 1 'a'") == "[true]");
}

TEST_CASE("fhirpath: decimals are exact and keep their precision", "[fhirpath]") {
  auto o = doc_of(OBSERVATION);
  CHECK(run("Observation.value.value", o) == "[0.700]");
  CHECK(run("Observation.value.value.precision()", o) == "[3]");
  CHECK(run("Observation.value.value = 0.7", o) == "[true]");
  CHECK(run("0.1 + 0.2 = 0.3") == "[true]");
  CHECK(run("0.1 + 0.2") == "[0.3]");
  CHECK(run("1.0 * 3") == "[3.0]");
  CHECK(run("1 / 3") == "[0.33333333]");
  CHECK(run("1 / 0") == "[]");
  CHECK(run("7 mod 3") == "[1]");
  CHECK(run("7.5 div 2") == "[3]");
  CHECK(run("1.587.lowBoundary(2)") == "[1.58]");
  CHECK(run("1.587.highBoundary()") == "[1.58750000]");
  CHECK(run("12345678901234567890.1 > 1") == "[true]");  // beyond 18 digits: rounded, not refused
  CHECK(run("123456789012345678901234567890 > 123456789012345678901234567889") ==
        "INVALID_FHIRPATH@0");  // an Integer literal
  CHECK(run("123456789012345678901234567890.0 > 1.5") == "[true]");
  CHECK(run("100000000000000000000.0 = 1e20.toString()") == "INVALID_FHIRPATH@27");
  CHECK(run("9223372036854775807 + 1") == "[]");  // integer overflow is empty, never wraps
  CHECK(run("(-9223372036854775807 - 1).abs()") == "[]");
  // A divisor 10^130 times the dividend (found by the fuzzer: 128-bit overflow in the division).
  CHECK(run("81 div 8" + std::string(130, '8') + ".708") == "[0]");
  CHECK(run("81 / 8" + std::string(130, '8') + ".708") == "[0]");
  CHECK(run("-(-9223372036854775807 - 1)") == "[]");
  CHECK(run("123456789012345678901234.5.floor() > 1") == "[]");
  CHECK(run("0.0000000000000000001.lowBoundary(0)") == "[0]");
}

TEST_CASE("fhirpath: choice elements are reached by their name, not their JSON key", "[fhirpath]") {
  auto o = doc_of(OBSERVATION);
  CHECK(run("Observation.value.unit", o) == "[\"kg\"]");
  CHECK(run("Observation.value.ofType(Quantity).code", o) == "[\"kg\"]");
  CHECK(run("Observation.value.is(Quantity)", o) == "[true]");
  CHECK(run("Observation.value.ofType(string)", o) == "[]");
  CHECK(run("Observation.effective.is(dateTime)", o) == "[true]");
  CHECK(run("Observation.effective > @2016-01-01", o) == "[true]");
  CHECK(run("Observation.valueQuantity", o) == "FHIRPATH_TYPE_ERROR@12");
  auto p = doc_of(PATIENT);
  CHECK(run("Patient.deceased", p) == "[false]");
  CHECK(run("Patient.deceased.type().name", p) == "[\"boolean\"]");
}

TEST_CASE("fhirpath: primitives keep their extensions and ids", "[fhirpath]") {
  auto p = doc_of(PATIENT);
  CHECK(run("Patient.birthDate", p) == "[\"1974-12-25\"]");
  CHECK(run("Patient.birthDate.extension.url", p) == "[\"http://hl7.org/fhir/StructureDefinition/patient-birthTime\"]");
  CHECK(run("Patient.birthDate.extension('http://hl7.org/fhir/StructureDefinition/patient-birthTime').value", p) ==
        "[\"1974-12-25T14:35:45-05:00\"]");
  CHECK(run("Patient.gender.id", p) == "[\"g1\"]");
  CHECK(run("Patient.birthDate.hasValue()", p) == "[true]");
  // A given name that has an extension and no value still counts as an element.
  CHECK(run("Patient.name.first().given.count()", p) == "[3]");
  CHECK(run("Patient.name.first().given.select($this.hasValue())", p) == "[true,false,true]");
  CHECK(run("Patient.name.first().given[1].extension.value", p) == "[true]");
  CHECK(run("Patient.name.given.join(',')", p) == "FHIRPATH_TYPE_ERROR@19");
  CHECK(run("Patient.name.given.where(hasValue()).join(',')", p) == "[\"Peter,James,Jim\"]");
  // Empty in, empty out (it gave "" once, unlike upper(), replace() and the others).
  CHECK(run("Patient.name.where(false).given.join(',')", p) == "[]");
  CHECK(run("Patient.contact.name.given.join()", p) == "[]");
}

TEST_CASE("fhirpath: is, as and ofType know R4's types and their bases", "[fhirpath]") {
  auto p = doc_of(PATIENT);
  CHECK(run("Patient.gender.is(code)", p) == "[true]");
  CHECK(run("Patient.gender.is(string)", p) == "[true]");
  CHECK(run("Patient.gender.is(id)", p) == "[false]");
  CHECK(run("Patient.gender.is(System.String)", p) == "[false]");
  CHECK(run("Patient.active is boolean", p) == "[true]");
  CHECK(run("Patient.active is FHIR.boolean", p) == "[true]");
  CHECK(run("Patient.is(DomainResource)", p) == "[true]");
  CHECK(run("Patient.is(Resource)", p) == "[true]");
  CHECK(run("Patient.contained.ofType(Organization).name", p) == "[\"Acme\"]");
  CHECK(run("Patient.contained.first() is Organization", p) == "[true]");
  CHECK(run("Patient.contained.as(Organization).id", p) == "[\"o1\"]");
  CHECK(run("Patient.name.ofType(HumanName).use", p) == "[\"official\",\"usual\"]");
  CHECK(run("Patient.name.as(HumanName)", p) == "FHIRPATH_TYPE_ERROR@13");
  CHECK(run("1.is(Integer)") == "[true]");
  CHECK(run("1 is System.Integer") == "[true]");
  CHECK(run("1.0 is Integer") == "[false]");
  CHECK(run("1 'cm' is Quantity") == "[true]");
  CHECK(run("@2015 is Date") == "[true]");
  CHECK(run("@2015T is DateTime") == "[true]");
  CHECK(run("Patient.type().namespace", p) == "[\"FHIR\"]");
  CHECK(run("'a'.type().name") == "[\"String\"]");
}

TEST_CASE("fhirpath: results print the same JSON on every target", "[fhirpath]") {
  CHECK(run("@2015-02-04") == "[\"2015-02-04\"]");
  CHECK(run("@T10:30") == "[\"10:30\"]");
  CHECK(run("1 'cm'") == "[\"1 'cm'\"]");
  CHECK(run("2 weeks") == "[\"2 weeks\"]");
  CHECK(run("1.0") == "[1.0]");
  CHECK(run("'a\\nb'") == "[\"a\\nb\"]");
  CHECK(run("@1973-12-25 + 7 days") == "[\"1974-01-01\"]");
  CHECK(run("@2014-01-01T08:05+08:00.lowBoundary(17)") == "[\"2014-01-01T08:05:00.000+08:00\"]");
  auto o = doc_of(OBSERVATION);
  CHECK(run("Observation.code.coding", o) == "[{\"system\":\"http://loinc.org\",\"code\":\"29463-7\"}]");
}

TEST_CASE("fhirpath: variables and constants", "[fhirpath]") {
  auto p = doc_of(PATIENT);
  fhirpath::environment env;
  fhirpath::item x;
  x.kind = fhirpath::value_kind::string;
  x.text = "official";
  env.constants.push_back({"use", {x}});
  CHECK(run("Patient.name.where(use = %use).family", p, env) == "[\"Chalmers\"]");
  CHECK(run("%resource.id", p) == "[\"p1\"]");
  CHECK(run("%context.id", p) == "[\"p1\"]");
  CHECK(run("%ucum") == "[\"http://unitsofmeasure.org\"]");
  CHECK(run("%nope") == "INVALID_FHIRPATH@0");
  CHECK(run("Patient.name.select($index)", p) == "[0,1]");
  CHECK(run("(1 | 2 | 3).aggregate($this + $total, 0)") == "[6]");
}

TEST_CASE("fhirpath: one compiled expression over many resources", "[fhirpath]") {
  auto e = fhirpath::compile("Patient.name.where(use = 'official').given.first() + ' ' + Patient.id");
  REQUIRE(e);
  fhirpath::evaluator ev;
  for (int i = 0; i < 200; ++i) {
    std::string text = R"({"resourceType":"Patient","id":"p)" + std::to_string(i) +
                       R"(","name":[{"use":"usual","given":["X"]},{"use":"official","given":["G)" + std::to_string(i) +
                       R"("]}]})";
    auto doc = json::parse(text);
    REQUIRE(doc);
    auto r = ev.evaluate(*e, doc->root());
    REQUIRE(r);
    CHECK(fhirpath::to_json(**r) == "[\"G" + std::to_string(i) + " p" + std::to_string(i) + "\"]");
  }
  // A resource of another type: the path finds nothing.
  auto other = json::parse(R"({"resourceType":"Observation","status":"final"})");
  auto r = ev.evaluate(fhirpath::compile("name.given").value(), other->root());
  REQUIRE(r);
  CHECK((*r)->empty());
}

TEST_CASE("fhirpath: items of one result are the context of the next (forEach, invariants)", "[fhirpath]") {
  auto p = doc_of(PATIENT);
  fhirpath::evaluator ev;
  auto names = ev.evaluate(fhirpath::compile("Patient.name").value(), p.root());
  REQUIRE(names);
  fhirpath::collection each = **names;  // copied: the next evaluate() reuses the evaluator's result
  REQUIRE(each.size() == 2);
  auto given = fhirpath::compile("given.first() & '/' & %resource.id & '/' & %rowIndex.toString()").value();
  json::value root = p.root();
  std::vector<std::string> got;
  for (size_t i = 0; i < each.size(); ++i) {
    fhirpath::environment env;
    env.resource = &root;
    fhirpath::item row;
    row.kind = fhirpath::value_kind::integer;
    row.integer = static_cast<int64_t>(i);
    row.dec = {row.integer, 0};
    env.constants.push_back({"rowIndex", {row}});
    auto r = ev.evaluate(given, each[i], env);
    REQUIRE(r);
    got.push_back(fhirpath::to_json(**r));
  }
  CHECK(got == std::vector<std::string>{"[\"Peter/p1/0\"]", "[\"Jim/p1/1\"]"});
  // The element keeps its FHIR type: HumanName.
  auto t = ev.evaluate(fhirpath::compile("$this is HumanName").value(), each[0]);
  REQUIRE(t);
  CHECK(fhirpath::to_json(**t) == "[true]");

  // R4 invariants: dom-2, obs-6, ele-1 (on every element of the resource).
  CHECK(run("contained.contained.empty()", p) == "[true]");
  auto o = doc_of(OBSERVATION);
  CHECK(run("dataAbsentReason.empty() or value.empty()", o) == "[true]");
  CHECK(run("descendants().all(hasValue() or (children().count() > id.count()))", p) == "[true]");
  auto bad = json::parse(R"({"resourceType":"Patient","name":[{}]})").value();
  CHECK(run("descendants().all(hasValue() or (children().count() > id.count()))", bad) == "[false]");
}

TEST_CASE("fhirpath: hostile data and patterns cost a bounded amount", "[fhirpath]") {
  // Regular expressions: tests/fhirpath_regex_test.cpp.
  // descendants() over a wide document is bounded by max_collection.
  std::string wide = R"({"resourceType":"Patient","name":[)";
  for (int i = 0; i < 100; ++i) wide += std::string(i ? "," : "") + R"({"given":["a","b","c"]})";
  wide += "]}";
  auto doc = json::parse(wide);
  REQUIRE(doc);
  fhirpath::limits lim;
  lim.max_collection = 50;
  fhirpath::evaluator ev(lim);
  auto r = ev.evaluate(fhirpath::compile("descendants()").value(), doc->root());
  REQUIRE_FALSE(r);
  CHECK(r.code() == error_code::RESULT_TOO_LARGE);
  fhirpath::evaluator roomy;
  auto all = roomy.evaluate(fhirpath::compile("descendants().count()").value(), doc->root());
  REQUIRE(all);
  CHECK(fhirpath::to_json(**all) == "[400]");
  // Set operations compare pairwise: their cost is bounded too.
  fhirpath::limits few;
  few.max_comparisons = 10;
  fhirpath::evaluator counted(few);
  auto set = counted.evaluate(fhirpath::compile("(1 | 2 | 3 | 4 | 5 | 6 | 7).count()").value(), doc->root());
  REQUIRE_FALSE(set);
  CHECK(set.code() == error_code::RESULT_TOO_LARGE);
  CHECK(set.error().message.find("max_comparisons") != std::string::npos);
  auto small = counted.evaluate(fhirpath::compile("(1 | 2 | 3).count()").value(), doc->root());
  REQUIRE(small);
  CHECK(fhirpath::to_json(**small) == "[3]");
  // repeat() stops when it finds nothing new.
  CHECK(run("Patient.name.repeat('x')", *doc) == "[\"x\"]");
}

TEST_CASE("fhirpath: strings print as json::append_quoted writes them, escapes anywhere in the text", "[fhirpath]") {
  // A string value's JSON is json::append_quoted's (tested byte by byte in json_test.cpp), through
  // to_json and append_json alike: each character that must be escaped, and some that must not, at
  // every place of a 20-byte text.
  for (const std::string &c : quire_test::json_escape_specials()) {
    for (size_t at = 0; at < 20; ++at) {
      std::string text(20, 'a');
      text.replace(at, 1, c);
      fhirpath::item v;
      v.kind = fhirpath::value_kind::string;
      v.text = text;
      std::string want;
      json::append_quoted(want, text);
      INFO("character " << static_cast<int>(static_cast<unsigned char>(c[0])) << " at " << at);
      CHECK(fhirpath::to_json(v) == want);
      std::string appended = "x";
      fhirpath::append_json(appended, v);
      CHECK(appended == "x" + want);
    }
  }
}

TEST_CASE("fhirpath: one evaluator gives the same results as fresh ones across expressions and types", "[fhirpath]") {
  // The evaluator keeps what a member name means on each FHIR type, per expression: reused over
  // many expressions, resource types and expressions compiled after others were destroyed (whose
  // addresses a new one may take), it must answer as a fresh evaluator does.
  const char *resources[] = {PATIENT, OBSERVATION,
                             R"({"resourceType":"Organization","id":"o2","name":"Acme","alias":["A","B"]})",
                             R"({"id":"untyped","name":"n","value":1,"valueQuantity":2})"};
  const char *exprs[] = {"name",
                         "id",
                         "name.given",
                         "name.given.extension.url",
                         "birthDate.extension.value",
                         "gender.id",
                         "value",
                         "value.ofType(Quantity).unit",
                         "valueQuantity",
                         "alias.first()",
                         "contained.name",
                         "code.coding.code",
                         "deceased",
                         "status = 'final'"};
  std::vector<json::document> docs;
  for (const char *r : resources) docs.push_back(doc_of(r));
  fhirpath::evaluator shared;
  for (int round = 0; round < 3; ++round) {
    for (const char *text : exprs) {
      // Compiled anew each round: the earlier round's expression is gone, its address free.
      auto e = fhirpath::compile(text);
      REQUIRE(e);
      for (const auto &d : docs) {
        fhirpath::evaluator fresh;
        auto want = fresh.evaluate(*e, d.root());
        auto got = shared.evaluate(*e, d.root());
        INFO(text << " on " << d.input());
        REQUIRE(want.ok() == got.ok());
        if (want) {
          CHECK(fhirpath::to_json(**got) == fhirpath::to_json(**want));
        } else {
          CHECK(got.code() == want.code());
          CHECK(got.error().offset == want.error().offset);
          CHECK(got.error().message == want.error().message);
        }
      }
    }
  }
  CHECK(run("name.given.count()", doc_of(PATIENT)) == "[4]");  // Peter, the _given-only one, James, Jim
  CHECK(run("valueQuantity", doc_of(OBSERVATION)) == "FHIRPATH_TYPE_ERROR@0");
  CHECK(run("value.unit", doc_of(OBSERVATION)) == R"(["kg"])");
}

TEST_CASE("fhirpath: now(), today() and timeOfDay() give the caller's time, never a clock of core's", "[fhirpath]") {
  static const json::document empty = json::parse("{}").value();
  fhirpath::environment env;
  env.now = fhirpath::clock_reading{1767323045678, 0};  // 2026-01-02T03:04:05.678Z
  CHECK(run("now()", empty, env) == R"(["2026-01-02T03:04:05.678Z"])");
  CHECK(run("today()", empty, env) == R"(["2026-01-02"])");
  CHECK(run("timeOfDay()", empty, env) == R"(["03:04:05.678"])");
  CHECK(run("now() = @2026-01-02T03:04:05.678Z", empty, env) == "[true]");
  CHECK(run("today() + 1 day", empty, env) == R"(["2026-01-03"])");
  // The offset gives the local date and time: 03:04 UTC is the evening before in -05:00.
  env.now = fhirpath::clock_reading{1767323045678, -300};
  CHECK(run("now()", empty, env) == R"(["2026-01-01T22:04:05.678-05:00"])");
  CHECK(run("today()", empty, env) == R"(["2026-01-01"])");
  // Before 1970, and a leap day.
  env.now = fhirpath::clock_reading{-2208988800000 + 59 * 86400000LL, 0};  // 1900-03-01, no 29 February
  CHECK(run("today()", empty, env) == R"(["1900-03-01"])");
  env.now = fhirpath::clock_reading{951782400000, 0};  // 2000-02-29
  CHECK(run("today()", empty, env) == R"(["2000-02-29"])");
  // Without the caller's time they fail, at the call.
  CHECK(run("1 + now()") == "INVALID_ARGUMENT@4");
  CHECK(run("today()") == "INVALID_ARGUMENT@0");
}
