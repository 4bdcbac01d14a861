// fhir::validate's invariants (ElementDefinition.constraint of the R4 definitions, evaluated with
// quire's FHIRPath engine): the broken resources of tests/data/fhir/invariants (each fails exactly
// one invariant, at the expected place), unchecked invariants reported once, ele-1's native
// shortcut giving the engine's answers, the cost bound, and the list of checked and unchecked
// invariants (tests/data/fhir/invariants_status.tsv, whose counts docs/fhir.md states).
#include <catch2/catch.hpp>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <map>
#include <sstream>

#include "quire/fhir.h"
#include "test_support.h"

using namespace quire;

namespace {

// The issues that are findings (not "informational": the unchecked invariants).
std::vector<fhir::issue> findings(const fhir::outcome &o) {
  std::vector<fhir::issue> out;
  for (const auto &i : o.issues) {
    if (i.severity != fhir::severity::information) out.push_back(i);
  }
  return out;
}

size_t count_key(const fhir::outcome &o, std::string_view key) {
  return static_cast<size_t>(
      std::count_if(o.issues.begin(), o.issues.end(), [&](const fhir::issue &i) { return i.key == key; }));
}

}  // namespace

TEST_CASE("fhir invariants: every broken resource fails exactly its invariant", "[fhir][invariants]") {
  auto dir = quire_test::data_dir() / "fhir" / "invariants";
  auto rows = quire_test::read_tsv(dir / "expected.tsv");
  REQUIRE(rows.size() >= 12);
  size_t files = 0;
  for (const auto &e : std::filesystem::directory_iterator(dir)) files += e.path().extension() == ".json";
  CHECK(files == rows.size());
  for (const auto &row : rows) {
    REQUIRE(row.size() == 6);
    INFO(row[0]);
    std::string text = quire_test::read_text(dir / row[0]);
    auto o = fhir::validate(text);
    auto f = findings(o);
    REQUIRE(f.size() == 1);
    const auto &i = f[0];
    CHECK(fhir::severity_name(i.severity) == row[1]);
    CHECK(i.code == "invariant");
    CHECK(i.key == row[2]);
    CHECK(i.details.substr(0, row[2].size() + 2) == row[2] + ": ");
    CHECK(i.expression == row[3]);
    CHECK(std::to_string(i.line) == row[4]);
    CHECK(std::to_string(i.column) == row[5]);
    // The rest are the invariants quire cannot evaluate (the narrative's txt-1 and txt-2), each once.
    for (const auto &other : o.issues) {
      if (other.severity != fhir::severity::information) continue;
      CHECK(other.code == "informational");
      CHECK(count_key(o, other.key) == 1);
    }
    // Without invariants the resource is valid, but for the two rules the walk also checks on its
    // own (contained inside contained, a `#id` with no contained resource): one structural error.
    fhir::options off;
    off.check_invariants = false;
    auto plain = fhir::validate(text, off);
    bool walk_checks_it = row[2] == "dom-2" || row[2] == "ref-1";
    CHECK(plain.errors == (walk_checks_it ? 1u : 0u));
    CHECK(plain.issues.size() == (walk_checks_it ? 1u : 0u));
  }
}

TEST_CASE("fhir invariants: an invariant quire cannot evaluate is reported once per call", "[fhir][invariants]") {
  // Two resources with narrative: txt-1 and txt-2 (htmlChecks()) apply twice but are reported once.
  const char *div = R"("text":{"status":"generated","div":"<div xmlns=\"http://www.w3.org/1999/xhtml\">x</div>"})";
  std::string bundle = R"({"resourceType":"Bundle","type":"collection","entry":[)";
  for (int n = 0; n < 2; ++n) {
    if (n) bundle += ',';
    bundle += R"({"resource":{"resourceType":"Patient","id":"p)" + std::to_string(n) + "\"," + div + "}}";
  }
  bundle += "]}";
  auto o = fhir::validate(bundle);
  CHECK(o.errors == 0);
  CHECK(o.warnings == 0);
  REQUIRE(o.issues.size() == 2);
  for (const auto &i : o.issues) {
    CHECK(i.severity == fhir::severity::information);
    CHECK(i.code == "informational");
    CHECK((i.key == "txt-1" || i.key == "txt-2"));
    CHECK(i.details.find("not checked") != std::string::npos);
    CHECK(i.details.find("htmlChecks()") != std::string::npos);
    CHECK(i.expression == "Bundle.entry[0].resource.text.div");  // where it first applied
  }
  // As JSON, issues of invariants carry their key.
  std::string json = fhir::issues_to_json(o.issues);
  CHECK(json.find(R"("code":"informational","key":"txt-1","details":)") != std::string::npos);
  // A resource without narrative: no txt-* issue, but dom-6 (a warning).
  auto bare = fhir::validate(R"({"resourceType":"Patient","active":true})");
  REQUIRE(bare.issues.size() == 1);
  CHECK(bare.issues[0].key == "dom-6");
  CHECK(bare.issues[0].severity == fhir::severity::warning);
  CHECK(bare.ok());
}

TEST_CASE("fhir invariants: the shortcuts (ele-1, dom-3, ref-1) give the engine's answers", "[fhir][invariants]") {
  fhir::options engine_only;
  engine_only.invariant_fast_paths = false;
  // Shapes where ele-1's children() counting is subtle: companions alone, nulls, unknown members.
  const char *cases[] = {
      R"({"resourceType":"Patient","name":[{"id":"a"}]})",
      R"({"resourceType":"Patient","name":[{"id":"a","_family":{"id":"b"}}]})",
      R"({"resourceType":"Patient","name":[{"id":"a","_family":{"extension":[{"url":"u","valueString":"v"}]}}]})",
      R"({"resourceType":"Patient","name":[{"id":"a","given":[null],"_given":[{"id":"g"}]}]})",
      R"({"resourceType":"Patient","name":[{"id":"a","foo":1}]})",
      R"({"resourceType":"Patient","name":[{"id":"a","foo":null}]})",
      R"({"resourceType":"Patient","_birthDate":{"id":"x"}})",
      R"({"resourceType":"Patient","_birthDate":{"extension":[{"url":"u","valueCode":"unknown"}]}})",
      R"({"resourceType":"Patient","_active":{"id":"x","extension":[{"url":"u","valueCode":"unknown"}]}})",
      R"({"resourceType":"Patient","name":[{"given":["a",null],"_given":[null,{"id":"g"}]}]})",
      // dom-3: referenced by a reference, by a uri (an extension's url), not at all, without an id,
      // by the container's own reference only (the root is not a descendant), or pointing at "#".
      R"({"resourceType":"Patient","contained":[{"resourceType":"Organization","id":"o","name":"A"}],"managingOrganization":{"reference":"#o"}})",
      R"({"resourceType":"Patient","contained":[{"resourceType":"Organization","id":"o","name":"A"}],"extension":[{"url":"#o","valueString":"x"}]})",
      R"({"resourceType":"Patient","contained":[{"resourceType":"Organization","id":"o","name":"A"}]})",
      R"({"resourceType":"Patient","contained":[{"resourceType":"Organization","name":"A"}]})",
      R"({"resourceType":"Patient","contained":[{"resourceType":"Organization","id":"o","name":"A","partOf":{"reference":"#"}}]})",
      R"({"resourceType":"Patient","contained":[{"resourceType":"Organization","id":"o","name":"A","partOf":{"reference":"#o"}}]})",
      R"({"resourceType":"Basic","code":{"text":"x"},"contained":[{"resourceType":"Organization","id":"o","name":"A"},{"resourceType":"Organization","id":"p","name":"B"}],"author":{"reference":"#o"}})",
      // ref-1: local references found, missing, empty after '#', absent (only a display), from
      // inside a contained resource to a sibling, inside a Bundle entry, not a string.
      R"({"resourceType":"Patient","contained":[{"resourceType":"Organization","id":"o","name":"A"}],"managingOrganization":{"reference":"#x"}})",
      R"({"resourceType":"Patient","managingOrganization":{"reference":"#"}})",
      R"({"resourceType":"Patient","managingOrganization":{"display":"Acme"}})",
      R"({"resourceType":"Patient","contained":[{"resourceType":"Organization","id":"o","name":"A"},{"resourceType":"Organization","id":"p","name":"B","partOf":{"reference":"#o"}}],"managingOrganization":{"reference":"#p"}})",
      R"({"resourceType":"Bundle","type":"collection","entry":[{"resource":{"resourceType":"Patient","contained":[{"resourceType":"Organization","id":"o","name":"A"}],"managingOrganization":{"reference":"#o"}}},{"resource":{"resourceType":"Patient","managingOrganization":{"reference":"#o"}}}]})",
      R"({"resourceType":"Patient","managingOrganization":{"reference":7}})",
      // dom-6 (text.div.exists()) where the walk answers it without the direct check: no `text`
      // nor `_text` at all; and beside it `_text` alone, `text` null, `text` without div or with a
      // div that is not a string (which exists), `text` repeated, a contained resource without
      // narrative (dom-6 does not apply).
      R"({"resourceType":"Patient","active":true})",
      R"({"resourceType":"Patient","_text":{"id":"t"}})",
      R"({"resourceType":"Patient","text":null})",
      R"({"resourceType":"Patient","text":{"status":"generated"}})",
      R"({"resourceType":"Patient","text":{"status":"generated","div":7}})",
      R"({"resourceType":"Patient","text":{"status":"generated"},"text":{"status":"generated","div":"<div>a</div>"}})",
      R"({"resourceType":"Patient","text":{"status":"generated","div":"<div>a</div>"},"contained":[{"resourceType":"Organization","id":"o","name":"A"}],"managingOrganization":{"reference":"#o"}})",
      // bdl-2, bdl-3, bdl-4 from one pass over the entries: each type with and without the
      // members it needs or forbids, no entries, no type, a repeated or odd type, and entries
      // whose members the pass leaves to the direct check (null, empty, a companion, a repeat, not
      // an object), a Bundle inside a Bundle.
      R"({"resourceType":"Bundle","type":"transaction","entry":[{"fullUrl":"urn:uuid:1","resource":{"resourceType":"Basic","code":{"text":"a"}},"request":{"method":"POST","url":"Basic"}}]})",
      R"({"resourceType":"Bundle","type":"transaction","entry":[{"request":{"method":"POST","url":"Basic"}},{"resource":{"resourceType":"Basic","code":{"text":"a"}}}]})",
      R"({"resourceType":"Bundle","type":"batch","entry":[{"request":{"method":"GET","url":"Patient"},"response":{"status":"200"}}]})",
      R"({"resourceType":"Bundle","type":"history","entry":[{"request":{"method":"GET","url":"Patient"},"response":{"status":"200"}},{"request":{"method":"GET","url":"Patient"}}]})",
      R"({"resourceType":"Bundle","type":"collection","entry":[{"resource":{"resourceType":"Basic","code":{"text":"a"}},"request":{"method":"POST","url":"Basic"}}]})",
      R"({"resourceType":"Bundle","type":"collection","entry":[{"resource":{"resourceType":"Basic","code":{"text":"a"}},"search":{"mode":"match"}}]})",
      R"({"resourceType":"Bundle","type":"searchset","entry":[{"resource":{"resourceType":"Basic","code":{"text":"a"}},"search":{"mode":"match"}}]})",
      R"({"resourceType":"Bundle","type":"transaction-response","entry":[{"response":{"status":"201"}},{"resource":{"resourceType":"Basic","code":{"text":"a"}}}]})",
      R"({"resourceType":"Bundle","type":"batch-response","entry":[{"response":{"status":"201"}}]})",
      R"({"resourceType":"Bundle","type":"collection","entry":[{"response":{"status":"201"}}]})",
      R"({"resourceType":"Bundle","type":"transaction"})",
      R"({"resourceType":"Bundle","type":"transaction","entry":[]})",
      R"({"resourceType":"Bundle","entry":[{"request":{"method":"POST","url":"Basic"}}]})",
      R"({"resourceType":"Bundle","entry":[{"resource":{"resourceType":"Basic","code":{"text":"a"}}}]})",
      R"({"resourceType":"Bundle","type":"transaction","type":"collection","entry":[{"request":{"method":"POST","url":"Basic"}}]})",
      R"({"resourceType":"Bundle","type":"transaction","_type":{"id":"t"},"entry":[{"request":{"method":"POST","url":"Basic"}}]})",
      R"({"resourceType":"Bundle","type":null,"entry":[{"request":{"method":"POST","url":"Basic"}}]})",
      R"({"resourceType":"Bundle","type":7,"entry":[{"search":{"mode":"match"}}]})",
      R"({"resourceType":"Bundle","type":"transaction","entry":[{"request":null}]})",
      R"({"resourceType":"Bundle","type":"transaction","entry":[{"request":{}}]})",
      R"({"resourceType":"Bundle","type":"collection","entry":[{"request":{}}]})",
      R"({"resourceType":"Bundle","type":"collection","entry":[{"search":{}}]})",
      R"({"resourceType":"Bundle","type":"transaction","entry":[{"request":7}]})",
      R"({"resourceType":"Bundle","type":"transaction","entry":[{"_request":{"id":"r"}}]})",
      R"({"resourceType":"Bundle","type":"collection","entry":[{"_search":{"id":"s"}}]})",
      R"({"resourceType":"Bundle","type":"transaction","entry":[{"request":{"method":"POST","url":"Basic"},"request":{"method":"PUT","url":"Basic/1"}}]})",
      R"({"resourceType":"Bundle","type":"collection","entry":[null,{"search":{"mode":"match"}}]})",
      R"({"resourceType":"Bundle","type":"transaction","entry":["x"]})",
      R"({"resourceType":"Bundle","type":"transaction","entry":{"request":{"method":"POST","url":"Basic"}}})",
      R"({"resourceType":"Bundle","type":"transaction","entry":[{"request":{"method":"POST","url":"Basic"}}],"entry":[{"resource":{"resourceType":"Basic","code":{"text":"a"}}}]})",
      R"({"resourceType":"Bundle","type":"collection","entry":[{"resource":{"resourceType":"Bundle","type":"transaction","entry":[{"resource":{"resourceType":"Basic","code":{"text":"a"}}}]}}]})",
      // bdl-5 and bdl-8 from one pass over an entry: a resource, or only a request or a response,
      // or none; a resource null, empty, repeated, an array, with a companion; a fullUrl with and
      // without `/_history/`, not a string, repeated, with a companion.
      R"({"resourceType":"Bundle","type":"collection","entry":[{"fullUrl":"http://x.org/Basic/1","resource":{"resourceType":"Basic","code":{"text":"a"}}}]})",
      R"({"resourceType":"Bundle","type":"collection","entry":[{"fullUrl":"http://x.org/Basic/1/_history/2","resource":{"resourceType":"Basic","code":{"text":"a"}}}]})",
      R"({"resourceType":"Bundle","type":"collection","entry":[{"fullUrl":"http://x.org/Basic/1"},{"fullUrl":7},{"fullUrl":null,"resource":null}]})",
      R"({"resourceType":"Bundle","type":"collection","entry":[{"fullUrl":"http://x.org/Basic/1","fullUrl":"http://x.org/_history/1","resource":{}}]})",
      R"({"resourceType":"Bundle","type":"collection","entry":[{"_fullUrl":{"id":"u"},"resource":[{"resourceType":"Basic","code":{"text":"a"}}]}]})",
      R"({"resourceType":"Bundle","type":"collection","entry":[{"resource":{"resourceType":"Basic","code":{"text":"a"}},"resource":{"resourceType":"Basic","code":{"text":"b"}}}]})",
      R"({"resourceType":"Bundle","type":"collection","entry":[{"resource":{"resourceType":"Basic","code":{"text":"a"}},"_resource":{"id":"r"}}]})",
      R"({"resourceType":"Bundle","type":"batch","entry":[{"request":{"method":"DELETE","url":"Basic/1"}},{"fullUrl":"urn:uuid:1"}]})",
  };
  for (const char *c : cases) {
    INFO(c);
    CHECK(fhir::issues_to_json(fhir::validate(c).issues) ==
          fhir::issues_to_json(fhir::validate(c, engine_only).issues));
  }
  // Every example of the corpus, and the broken resources: the same issues, byte for byte.
  std::vector<std::filesystem::path> files;
  for (auto sub : {"invariants", "broken"}) {
    for (const auto &e : std::filesystem::directory_iterator(quire_test::data_dir() / "fhir" / sub)) {
      if (e.path().extension() == ".json") files.push_back(e.path());
    }
  }
  for (const auto &e : std::filesystem::directory_iterator(quire_test::corpus_dir() / "fhir-r4" / "examples")) {
    if (e.path().extension() == ".json") files.push_back(e.path());
  }
  size_t same = 0;
  for (const auto &file : files) {
    std::string text = quire_test::read_text(file);
    bool equal = fhir::issues_to_json(fhir::validate(text).issues) ==
                 fhir::issues_to_json(fhir::validate(text, engine_only).issues);
    if (!equal) UNSCOPED_INFO(file.filename().string());
    same += equal;
  }
  CHECK(same == files.size());
}

TEST_CASE("fhir invariants: the direct checks give the engine's answers", "[fhir][invariants]") {
  fhir::options engine_only;
  engine_only.invariant_fast_paths = false;
  // Each resource and the invariant it fails (empty: none), on shapes where a direct check must
  // answer exactly as the engine or leave it to the engine: choices, `_x` companions, nulls,
  // repeated items, where() filters, all() with %resource, counts, `in` lists, matches().
  struct example {
    const char *json;
    const char *fails;
  };
  const example cases[] = {
      {R"({"resourceType":"Observation","status":"final","code":{"text":"x"},"valueQuantity":{"value":1},"dataAbsentReason":{"text":"n"}})",
       "obs-6"},
      {R"({"resourceType":"Observation","status":"final","code":{"text":"x"},"_valueString":{"extension":[{"url":"u","valueCode":"c"}]},"dataAbsentReason":{"text":"n"}})",
       "obs-6"},
      {R"({"resourceType":"Observation","status":"final","code":{"text":"x"},"dataAbsentReason":{"text":"n"}})", ""},
      {R"({"resourceType":"Observation","status":"final","code":{"text":"x"},"valueQuantity":{"value":1,"code":"mm"}})",
       "qty-3"},
      {R"({"resourceType":"Observation","status":"final","code":{"text":"x"},"valueQuantity":{"value":1,"_code":{"extension":[{"url":"u","valueString":"v"}]}}})",
       "qty-3"},
      {R"({"resourceType":"Observation","status":"final","code":{"text":"x"},"valueQuantity":{"value":1,"code":"mm","system":"http://unitsofmeasure.org"}})",
       ""},
      {R"({"resourceType":"Bundle","type":"collection","entry":[{"fullUrl":"http://x.org/Patient/1"}]})", "bdl-5"},
      {R"({"resourceType":"Bundle","type":"collection","entry":[{"fullUrl":"http://x.org/Patient/1/_history/2","resource":{"resourceType":"Basic","code":{"text":"x"}}}]})",
       "bdl-8"},
      {R"({"resourceType":"Bundle","type":"transaction","entry":[{"resource":{"resourceType":"Basic","code":{"text":"x"}}}]})",
       "bdl-3"},
      {R"({"resourceType":"Bundle","type":"collection","entry":[{"resource":{"resourceType":"Basic","code":{"text":"x"}},"request":{"method":"POST","url":"Basic"}}]})",
       "bdl-3"},
      {R"({"resourceType":"Bundle","type":"batch-response","entry":[{"resource":{"resourceType":"Basic","code":{"text":"x"}}}]})",
       "bdl-4"},
      {R"({"resourceType":"Bundle","type":"collection","total":3})", "bdl-1"},
      // bdl-7's shortcut: fullUrl & versionId distinct, compared as the concatenated strings.
      {R"({"resourceType":"Bundle","type":"collection","entry":[{"fullUrl":"urn:uuid:a","resource":{"resourceType":"Basic","code":{"text":"x"}}},{"fullUrl":"urn:uuid:a","resource":{"resourceType":"Basic","code":{"text":"y"}}}]})",
       "bdl-7"},
      {R"({"resourceType":"Bundle","type":"collection","entry":[{"fullUrl":"urn:uuid:a","resource":{"resourceType":"Basic","meta":{"versionId":"1"},"code":{"text":"x"}}},{"fullUrl":"urn:uuid:a","resource":{"resourceType":"Basic","meta":{"versionId":"2"},"code":{"text":"y"}}}]})",
       ""},
      {R"({"resourceType":"Bundle","type":"collection","entry":[{"fullUrl":"http://x.org/Basic/1","resource":{"resourceType":"Basic","meta":{"versionId":"2"},"code":{"text":"x"}}},{"fullUrl":"http://x.org/Basic/12","resource":{"resourceType":"Basic","code":{"text":"y"}}}]})",
       "bdl-7"},
      {R"({"resourceType":"Bundle","type":"collection","entry":[{"fullUrl":"http://x.org/Basic/1","resource":{"resourceType":"Basic","meta":{"versionId":"2"},"code":{"text":"x"}}},{"fullUrl":"http://x.org/Basic/11","resource":{"resourceType":"Basic","code":{"text":"y"}}},{"fullUrl":"http://x.org/Basic/12","resource":{"resourceType":"Basic","code":{"text":"y"}}}]})",
       "bdl-7"},
      {R"({"resourceType":"Bundle","type":"history","entry":[{"fullUrl":"urn:uuid:a","resource":{"resourceType":"Basic","code":{"text":"x"}},"request":{"method":"PUT","url":"Basic/a"},"response":{"status":"200"}},{"fullUrl":"urn:uuid:a","resource":{"resourceType":"Basic","code":{"text":"y"}},"request":{"method":"PUT","url":"Basic/a"},"response":{"status":"200"}}]})",
       ""},
      {R"({"resourceType":"Bundle","type":"searchset","total":3})", ""},
      {R"({"resourceType":"Condition","subject":{"reference":"Patient/1"},"clinicalStatus":{"coding":[{"system":"http://terminology.hl7.org/CodeSystem/condition-clinical","code":"active"}]},"verificationStatus":{"coding":[{"system":"http://terminology.hl7.org/CodeSystem/condition-ver-status","code":"entered-in-error"}]}})",
       "con-5"},
      {R"({"resourceType":"Condition","subject":{"reference":"Patient/1"},"clinicalStatus":{"coding":[{"system":"http://terminology.hl7.org/CodeSystem/condition-clinical","code":"active"}]},"verificationStatus":{"coding":[{"system":"other","code":"entered-in-error"},{"system":"http://terminology.hl7.org/CodeSystem/condition-ver-status","code":"confirmed"}]}})",
       ""},
      {R"({"resourceType":"Condition","subject":{"reference":"Patient/1"},"clinicalStatus":{"coding":[{"system":"http://terminology.hl7.org/CodeSystem/condition-clinical","code":"active"}]},"abatementDateTime":"2020"})",
       "con-4"},
      {R"({"resourceType":"Condition","subject":{"reference":"Patient/1"},"clinicalStatus":{"coding":[{"system":"http://terminology.hl7.org/CodeSystem/condition-clinical","_code":{"extension":[{"url":"u","valueString":"v"}]}}]},"abatementDateTime":"2020"})",
       "con-4"},
      {R"({"resourceType":"Condition","subject":{"reference":"Patient/1"},"category":[{"coding":[{"code":"problem-list-item"}]}]})",
       "con-3"},
      {R"({"resourceType":"Patient","contact":[{"gender":"male"}]})", "pat-1"},
      {R"({"resourceType":"Patient","contact":[{"name":{"family":"x"}}]})", ""},
      {R"({"resourceType":"Patient","extension":[{"url":"u"}]})", "ext-1"},
      {R"({"resourceType":"Patient","extension":[{"url":"u","valueString":"a","extension":[{"url":"v","valueString":"b"}]}]})",
       "ext-1"},
      {R"({"resourceType":"Patient","extension":[{"url":"u","_valueString":{"extension":[{"url":"v","valueCode":"c"}]}}]})",
       ""},
      {R"({"resourceType":"Organization","active":true})", "org-1"},
      {R"({"resourceType":"Organization","identifier":[{"value":"a"},{"value":"b"}]})", ""},
      {R"({"resourceType":"Patient","name":[{"period":{"start":"2020-02-01","end":"2020-01-01"}}]})", "per-1"},
      {R"({"resourceType":"Patient","name":[{"period":{"start":"2020-02","end":"2020-02-01"}}]})", ""},
      {R"({"resourceType":"ValueSet","status":"draft","name":"not a name"})", "vsd-0"},
      {R"({"resourceType":"ValueSet","status":"draft","name":"Good_Name1"})", ""},
      {R"({"resourceType":"ValueSet","status":"draft","name":"Good","_name":{"id":"n"}})", ""},
      {R"({"resourceType":"Appointment","status":"booked","participant":[{"status":"accepted","type":[{"text":"x"}]}],"start":"2020-01-01T10:00:00Z"})",
       "app-2,app-3"},
      {R"({"resourceType":"Appointment","status":"booked","participant":[{"status":"accepted","type":[{"text":"x"}]}]})",
       "app-3"},
      {R"({"resourceType":"Appointment","status":"proposed","participant":[{"status":"accepted","type":[{"text":"x"}]}]})",
       ""},
      {R"({"resourceType":"Appointment","status":"proposed","participant":[{"status":"accepted"}]})", "app-1"},
      {R"({"resourceType":"MedicationRequest","status":"active","intent":"order","medicationCodeableConcept":{"text":"x"},"subject":{"reference":"Patient/1"},"dosageInstruction":[{"timing":{"repeat":{"offset":10,"when":["C"]}}}]})",
       "tim-9"},
      {R"({"resourceType":"MedicationRequest","status":"active","intent":"order","medicationCodeableConcept":{"text":"x"},"subject":{"reference":"Patient/1"},"dosageInstruction":[{"timing":{"repeat":{"offset":10,"when":["MORN"]}}}]})",
       ""},
      {R"({"resourceType":"MedicationRequest","status":"active","intent":"order","medicationCodeableConcept":{"text":"x"},"subject":{"reference":"Patient/1"},"dosageInstruction":[{"timing":{"repeat":{"offset":10,"when":["MORN","C"]}}}]})",
       ""},
      {R"({"resourceType":"MedicationRequest","status":"active","intent":"order","medicationCodeableConcept":{"text":"x"},"subject":{"reference":"Patient/1"},"dosageInstruction":[{"timing":{"repeat":{"duration":-1,"durationUnit":"h"}}}]})",
       "tim-4"},
      {R"({"resourceType":"CapabilityStatement","status":"draft","date":"2020","kind":"instance","fhirVersion":"4.0.1","format":["json"],"implementation":{"description":"x"},"rest":[{"mode":"server"}]})",
       ""},
      {R"({"resourceType":"CapabilityStatement","status":"draft","date":"2020","kind":"instance","fhirVersion":"4.0.1","format":["json"],"rest":[{"mode":"server"}]})",
       "cpb-2,cpb-14"},
      {R"({"resourceType":"Group","type":"person","actual":false,"member":[{"entity":{"reference":"Patient/1"}}]})",
       "grp-1"},
      {R"({"resourceType":"Group","type":"person","actual":true,"member":[{"entity":{"reference":"Patient/1"}}]})", ""},
  };
  for (const auto &c : cases) {
    INFO(c.json);
    auto direct = fhir::validate(c.json);
    auto engine = fhir::validate(c.json, engine_only);
    CHECK(fhir::issues_to_json(direct.issues) == fhir::issues_to_json(engine.issues));
    std::string failed;
    for (const auto &i : findings(direct)) {
      if (i.code != "invariant" || i.key == "dom-6") continue;
      if (!failed.empty()) failed += ',';
      failed += i.key;
    }
    CHECK(failed == c.fails);
  }
  // Most invariants have a direct check: the count docs/fhir.md states.
  size_t direct = 0;
  for (const auto &i : fhir::invariants()) direct += i.direct;
  std::string doc = quire_test::read_text(std::filesystem::path(QUIRE_SOURCE_DIR) / "docs" / "fhir.md");
  std::string line = "**" + std::to_string(direct) + " of them have a direct check.**";
  INFO(line);
  CHECK(direct > 200);
  CHECK(doc.find(line) != std::string::npos);
}

TEST_CASE("fhir invariants: a Bundle-wide invariant costs n log n, and is bounded", "[fhir][invariants]") {
  // bdl-7 (isDistinct() over every entry's fullUrl and versionId) on 20,000 entries: pairwise that
  // would be 200 million comparisons, beyond the invariants' max_comparisons; strings are compared
  // sorted, so it is checked, and a repeated fullUrl fails it.
  auto make = [](int n, bool repeat) {
    std::string bundle = R"({"resourceType":"Bundle","type":"collection","entry":[)";
    for (int i = 0; i < n; ++i) {
      if (i) bundle += ',';
      int id = repeat && i == n - 1 ? 0 : i;
      bundle +=
          R"({"fullUrl":"http://example.org/Basic/)" + std::to_string(id) +
          R"(","resource":{"resourceType":"Basic","id":")" + std::to_string(id) +
          R"(","text":{"status":"empty","div":"<div xmlns=\"http://www.w3.org/1999/xhtml\">x</div>"},"code":{"text":"x"}}})";
    }
    return bundle + "]}";
  };
  auto start = std::chrono::steady_clock::now();
  auto o = fhir::validate(make(20000, false));
  double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  CHECK(o.errors == 0);
  CHECK(count_key(o, "bdl-7") == 0);
  CHECK(seconds < 20);  // generous (wasm, a shared machine); quadratic would be far beyond
  auto dup = fhir::validate(make(20000, true));
  REQUIRE(findings(dup).size() == 1);
  CHECK(findings(dup)[0].key == "bdl-7");
  CHECK(findings(dup)[0].expression == "Bundle");
}

TEST_CASE("fhir invariants: the list of checked and unchecked invariants", "[fhir][invariants]") {
  auto all = fhir::invariants();
  REQUIRE(all.size() > 200);
  std::ostringstream tsv;
  tsv << "# key\tseverity\tstatus\treason (generated by tests/fhir_invariants_test.cpp; QUIRE_UPDATE_GOLDEN=1)\n";
  size_t checked = 0, unchecked = 0;
  for (const auto &i : all) {
    CHECK(!i.key.empty());
    CHECK(!i.expression.empty());
    if (i.checked) {
      ++checked;
      CHECK(i.reason.empty());
    } else {
      ++unchecked;
      CHECK(!i.reason.empty());
    }
    tsv << i.key << '\t' << fhir::severity_name(i.severity) << '\t' << (i.checked ? "checked" : "unchecked") << '\t'
        << i.reason << '\n';
  }
  auto golden = quire_test::data_dir() / "fhir" / "invariants_status.tsv";
  if (const char *update = std::getenv("QUIRE_UPDATE_GOLDEN"); update && *update == '1') {
    std::ofstream(golden, std::ios::binary) << tsv.str();
  }
  CHECK(tsv.str() == quire_test::read_text(golden));
  // docs/fhir.md states the counts: keep it true.
  std::string doc = quire_test::read_text(std::filesystem::path(QUIRE_SOURCE_DIR) / "docs" / "fhir.md");
  std::string line = "**" + std::to_string(all.size()) + " invariants: " + std::to_string(checked) + " checked, " +
                     std::to_string(unchecked) + " unchecked.**";
  INFO(line);
  CHECK(doc.find(line) != std::string::npos);
}
