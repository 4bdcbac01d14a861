// fhir::validate: the broken-resource suite (tests/data/fhir/broken: one file per rule, each must
// give exactly the expected issue at the expected place), and the shape of issues.
#include <catch2/catch.hpp>

#include <filesystem>

#include "quire/fhir.h"
#include "test_support.h"

using namespace quire;

namespace {

// The structural rules alone: invariants (dom-6 on a resource without narrative...) have their own
// suite, fhir_invariants_test.cpp.
fhir::options structural() {
  fhir::options o;
  o.check_invariants = false;
  return o;
}

}  // namespace

TEST_CASE("fhir validate: every broken resource gives exactly the expected issue", "[fhir][validate]") {
  auto dir = quire_test::data_dir() / "fhir" / "broken";
  auto rows = quire_test::read_tsv(dir / "expected.tsv");
  REQUIRE(rows.size() >= 40);
  size_t files = 0;
  for (const auto &e : std::filesystem::directory_iterator(dir)) files += e.path().extension() == ".json";
  CHECK(files == rows.size());  // every file has its expectation
  for (const auto &row : rows) {
    REQUIRE(row.size() == 6);
    INFO(row[0]);
    auto o = fhir::validate(quire_test::read_text(dir / row[0]), structural());
    REQUIRE(o.issues.size() == 1);
    const auto &i = o.issues[0];
    CHECK(fhir::severity_name(i.severity) == row[1]);
    CHECK(i.code == row[2]);
    CHECK(i.expression == row[3]);
    CHECK(std::to_string(i.line) == row[4]);
    CHECK(std::to_string(i.column) == row[5]);
    CHECK(o.errors == 1);
  }
}

TEST_CASE("fhir validate: all issues are reported, not only the first", "[fhir][validate]") {
  auto o = fhir::validate(
      R"({"resourceType":"Patient","gender":"boy","birthDate":"1970-13-01","active":"yes","foo":1,"name":[]})",
      structural());
  REQUIRE(o.issues.size() == 5);
  CHECK(o.errors == 5);
  // In document order of the definitions: unknown keys first (found while reading members), then elements.
  CHECK(o.issues[0].expression == "Patient.foo");
  CHECK(o.issues[1].expression == "Patient.active");
  CHECK(o.issues[2].expression == "Patient.name");
  CHECK(o.issues[3].expression == "Patient.gender");
  CHECK(o.issues[4].expression == "Patient.birthDate");
}

TEST_CASE("fhir validate: max_issues cuts the list with a too-costly issue", "[fhir][validate]") {
  std::string text = R"({"resourceType":"Patient","name":[)";
  for (int i = 0; i < 50; ++i) text += std::string(i ? "," : "") + R"({"family":""})";
  text += "]}";
  fhir::options opts = structural();
  opts.max_issues = 10;
  auto o = fhir::validate(text, opts);
  REQUIRE(o.issues.size() == 11);
  CHECK(o.truncated);
  CHECK(o.issues.back().code == "too-costly");
  CHECK(o.errors == 10);
}

TEST_CASE("fhir validate: unreadable input is one issue with its error code", "[fhir][validate]") {
  auto o = fhir::validate("{\"resourceType\": \"Patient\",\n  \"active\": tru }");
  REQUIRE(o.issues.size() == 1);
  CHECK(o.issues[0].error == error_code::INVALID_JSON);
  CHECK(o.issues[0].line == 2);
  CHECK(o.issues[0].code == "structure");
  auto n = fhir::validate(R"({"resourceType":"Nope"})");
  REQUIRE(n.issues.size() == 1);
  CHECK(n.issues[0].error == error_code::INVALID_RESOURCE);
  CHECK(n.issues[0].code == "invalid");
}

TEST_CASE("fhir validate: primitive extensions alone, and with nulls, are valid", "[fhir][validate]") {
  const char *cases[] = {
      R"({"resourceType":"Patient","_birthDate":{"extension":[{"url":"http://x","valueString":"y"}]}})",
      R"({"resourceType":"Patient","name":[{"_given":[{"extension":[{"url":"http://x","valueString":"y"}]},null],"given":[null,"b"]}]})",
      R"({"resourceType":"Patient","contained":[{"resourceType":"Organization","id":"o","name":"O"}],"managingOrganization":{"reference":"#o"}})",
  };
  for (const char *c : cases) {
    INFO(c);
    CHECK(fhir::validate(c, structural()).issues.empty());
    // With invariants (ele-1, ext-1, dom-3, ref-1 hold): only dom-6's advice, the Patient has no narrative.
    auto o = fhir::validate(c);
    REQUIRE(o.issues.size() == 1);
    CHECK(o.issues[0].key == "dom-6");
    CHECK(o.ok());
  }
  // Structurally fine, but a primitive with only an id (no value, no extension) breaks ele-1.
  const char *id_only = R"({"resourceType":"Patient","name":[{"_given":[{"id":"a"},null],"given":[null,"b"]}]})";
  CHECK(fhir::validate(id_only, structural()).issues.empty());
  auto o = fhir::validate(id_only);
  REQUIRE(o.errors == 1);
  CHECK(o.issues[1].key == "ele-1");
  CHECK(o.issues[1].expression == "Patient.name[0].given[0]");
}

TEST_CASE("fhir validate: issues as JSON and as an OperationOutcome", "[fhir][validate]") {
  auto o = fhir::validate(R"({"resourceType":"Patient","gender":"boy"})", structural());
  CHECK(
      fhir::issues_to_json(o.issues) ==
      R"([{"severity":"error","code":"code-invalid","details":"code 'boy' is not in the required value set http://hl7.org/fhir/ValueSet/administrative-gender","expression":"Patient.gender","line":1,"column":36,"offset":35}])");
  auto oo = fhir::to_operation_outcome(o);
  auto r = fhir::read(oo, structural());
  REQUIRE(r);
  CHECK(r->issues().empty());
  CHECK(fhir::to_operation_outcome(fhir::outcome{}).find("informational") != std::string::npos);
}

TEST_CASE("fhir validate: cost grows linearly with Bundle size (references are not rescanned)", "[fhir][validate]") {
  // Not a timing test: a Bundle of 20,000 entries that all reference each other's contained
  // resources must simply finish (a quadratic validator takes minutes here).
  std::string text = R"({"resourceType":"Bundle","type":"collection","entry":[)";
  for (int i = 0; i < 20000; ++i) {
    if (i) text += ',';
    text +=
        R"({"fullUrl":"urn:uuid:00000000-0000-0000-0000-)" + std::string(12 - std::to_string(i).size(), '0') +
        std::to_string(i) +
        R"(","resource":{"resourceType":"Patient","text":{"status":"generated","div":"<div xmlns=\"http://www.w3.org/1999/xhtml\">p</div>"},"contained":[{"resourceType":"Organization","id":"o","name":"O"}],"managingOrganization":{"reference":"#o"},"link":[{"other":{"reference":"Patient/p)" +
        std::to_string(i) + R"("},"type":"seealso"}]}})";
  }
  text += "]}";
  auto o = fhir::validate(text);
  // Invariants included (dom-3 and ref-1 look at the contained resources, bdl-7 at every fullUrl):
  // all hold; only the narrative's txt-1 and txt-2, which quire cannot evaluate, are reported once.
  CHECK(o.errors == 0);
  CHECK(o.warnings == 0);
  REQUIRE(o.issues.size() == 2);
  CHECK(o.issues[0].key == "txt-1");
  CHECK(o.issues[1].key == "txt-2");
}

TEST_CASE("fhir validate: base64Binary's format, in runs and character by character", "[fhir][validate]") {
  // The rules, read one character at a time: the validator counts runs of 32 alphabet characters
  // at once, so strings are built around that length, with whitespace, '=' and bad bytes anywhere.
  auto reference = [](std::string_view s) -> std::string {
    size_t count = 0, padding = 0;
    for (char c : s) {
      if (c == ' ' || c == '\t' || c == '\r' || c == '\n' || c == '\f' || c == '\v') continue;
      bool alphabet =
          (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '+' || c == '/';
      if (c == '=') ++padding;
      else if (!alphabet) return "a character that is not base64";
      else if (padding) return "base64 data after '=' padding";
      ++count;
    }
    if (padding > 2) return "more than two '=' padding characters";
    if (count % 4 != 0) return "base64 data whose length is not a multiple of 4";
    return "";
  };
  const std::string alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
  const std::string others = "=\n \r\t!-_.\x7f";
  quire_test::xorshift next;
  size_t valid = 0, checked = 0;
  // Cases at the runs' edges: padding that ends a run, followed by a whole run of data; a bad byte
  // as the last of a run and as the first of the tail; whitespace between runs.
  const std::string a31(31, 'A'), a32(32, 'A');
  const std::vector<std::string> edges = {a31 + "=" + a32,  a32 + a31 + "=",    a31 + "!" + a32,   a32 + "!" + "AAA",
                                          a32 + "\n" + a32, a32 + a32 + "AAA=", "=" + a32 + "AAA", a32 + "==" + "  "};
  for (int round = 0; round < 3000; ++round) {
    size_t length = round % 2 ? 1 + next() % 140 : 4 * (1 + next() % 35);  // half of them whole quads
    std::string s;
    for (size_t i = 0; i < length; ++i) {
      // Mostly alphabet, so that whole runs of 32 occur; one byte in 40 something else.
      s += next() % 40 == 0 ? others[next() % others.size()] : alphabet[next() % alphabet.size()];
    }
    if (round < static_cast<int>(edges.size())) {
      s = edges[round];
    } else {
      if (round % 3 == 0) s.replace(s.size() - std::min<size_t>(s.size(), 1 + next() % 2), 2, "==");
      if (round % 5 == 0) s[next() % s.size()] = '=';               // padding in the middle, before a run
      if (round % 7 == 0) s.insert(next() % s.size(), "\xc3\xa9");  // a character beyond ASCII
    }
    std::string text = R"({"resourceType":"Binary","contentType":"x/y","data":")";
    for (char c : s)
      text += c == '\n'   ? std::string("\\n")
              : c == '\r' ? std::string("\\r")
              : c == '\t' ? std::string("\\t")
                          : std::string(1, c);
    text += "\"}";
    std::string want = reference(s);
    auto o = fhir::validate(text, structural());
    ++checked;
    if (want.empty()) {
      ++valid;
      CHECK(o.issues.empty());
    } else {
      INFO(s);
      REQUIRE(o.issues.size() == 1);
      CHECK(o.issues[0].expression == "Binary.data");
      CHECK(o.issues[0].details.ends_with(want));
    }
  }
  // Both outcomes occur often enough to mean something.
  CHECK(valid > 300);
  CHECK(checked - valid > 300);
}
