// FHIR XML conformance, natively and in wasm:
// - the official R4 examples in XML (tests/data/fhir-xml/xml/, copied from LinuxForHealth/FHIR;
//   see SOURCES.md) read to the resource of the official JSON form (the corpus's
//   hl7.fhir.r4.examples 4.0.1), equal as FHIR defines it: members in any order, arrays in order,
//   values by their exact text, the narrative's div as XHTML (elements, attributes in any order,
//   text with white space runs collapsed; comments and white space between elements aside). Each
//   difference must be one known_differences.tsv lists (a source difference, not coded around),
//   and each listed one must still occur;
// - every corpus JSON example goes JSON -> XML -> JSON to the same canonical JSON, compact and
//   pretty; every copied XML example goes XML -> JSON -> XML -> JSON unchanged;
// - read_xml's tape (built from the elements) reads every one of them, and XML past the JSON
//   reader's bounds, as the JSON text of the same elements reads: the same resource, issues and
//   errors.
#include <expat.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "../core/src/fhir/fhir_internal.h"
#include "quire/fhir.h"
#include "test_support.h"

using namespace quire;

namespace {

constexpr const char *TARGET =
#ifdef __EMSCRIPTEN__
    "wasm";
#else
    "native";
#endif

std::filesystem::path xml_dir() { return quire_test::data_dir() / "fhir-xml"; }

// The div as a list of XHTML events, for comparing as XHTML rather than as bytes.
struct xhtml_events {
  std::vector<std::string> events;
  std::string text;
  bool ok = true;

  void flush() {
    std::string collapsed;
    bool space = false;
    for (char c : text) {
      if (c == ' ' || c == '\t' || c == '\n' || c == '\r') {
        space = true;
        continue;
      }
      if (space && !collapsed.empty()) collapsed += ' ';
      if (space && collapsed.empty()) collapsed += ' ';
      space = false;
      collapsed += c;
    }
    if (space && !collapsed.empty()) collapsed += ' ';
    if (!collapsed.empty()) events.push_back("text " + collapsed);
    text.clear();
  }
  static void XMLCALL on_start(void *self, const XML_Char *name, const XML_Char **atts) {
    auto *x = static_cast<xhtml_events *>(self);
    x->flush();
    std::vector<std::string> a;
    for (size_t i = 0; atts[i]; i += 2) a.push_back(std::string(atts[i]) + "=" + atts[i + 1]);
    std::sort(a.begin(), a.end());
    std::string e = std::string("start ") + name;
    for (const auto &s : a) e += " " + s;
    x->events.push_back(e);
  }
  static void XMLCALL on_end(void *self, const XML_Char *name) {
    auto *x = static_cast<xhtml_events *>(self);
    x->flush();
    x->events.push_back(std::string("end ") + name);
  }
  static void XMLCALL on_text(void *self, const XML_Char *s, int len) {
    static_cast<xhtml_events *>(self)->text.append(s, static_cast<size_t>(len));
  }
};

std::vector<std::string> xhtml_of(std::string_view div) {
  xhtml_events x;
  XML_Parser p = XML_ParserCreateNS("UTF-8", ' ');
  XML_SetUserData(p, &x);
  XML_SetElementHandler(p, &xhtml_events::on_start, &xhtml_events::on_end);
  XML_SetCharacterDataHandler(p, &xhtml_events::on_text);
  if (XML_Parse(p, div.data(), static_cast<int>(div.size()), XML_TRUE) != XML_STATUS_OK) {
    x.events = {"not well-formed: " + std::string(div.substr(0, 80))};
  }
  XML_ParserFree(p);
  return x.events;
}

std::string scalar_text(json::value v) {
  switch (v.type()) {
    case json::kind::string: return "string " + std::string(v.get_string().value());
    case json::kind::number: return "number " + std::string(v.get_number_text().value());
    case json::kind::boolean: return v.get_bool().value() ? "true" : "false";
    case json::kind::null_value: return "null";
    default: return "structure";
  }
}

// The paths where `xml` (the XML form read) and `official` (the JSON form) differ, with a word on how.
void differences(json::value xml, json::value official, const std::string &path,
                 std::vector<std::pair<std::string, std::string>> &out) {
  if (xml.type() != official.type()) {
    out.emplace_back(path, "different kinds");
    return;
  }
  if (xml.type() == json::kind::object) {
    auto a = xml.get_object().value();
    auto b = official.get_object().value();
    std::set<std::string> keys;
    for (auto m : a) keys.emplace(m.key);
    for (auto m : b) keys.emplace(m.key);
    for (const auto &k : keys) {
      auto x = a.find(k);
      auto o = b.find(k);
      const std::string p = path + "." + k;
      if (!x) {
        out.emplace_back(p, "only in the JSON form");
      } else if (!o) {
        out.emplace_back(p, "only in the XML form");
      } else if (k == "div" && x->type() == json::kind::string && o->type() == json::kind::string) {
        if (xhtml_of(x->get_string().value()) != xhtml_of(o->get_string().value())) {
          out.emplace_back(p, "the divs differ as XHTML");
        }
      } else {
        differences(*x, *o, p, out);
      }
    }
    return;
  }
  if (xml.type() == json::kind::array) {
    std::vector<json::value> a, b;
    for (auto v : xml.get_array().value()) a.push_back(v);
    for (auto v : official.get_array().value()) b.push_back(v);
    if (a.size() != b.size()) {
      out.emplace_back(path, "arrays of different lengths");
      return;
    }
    for (size_t i = 0; i < a.size(); ++i) differences(a[i], b[i], path + "[" + std::to_string(i) + "]", out);
    return;
  }
  if (scalar_text(xml) != scalar_text(official))
    out.emplace_back(path, scalar_text(xml) + " vs " + scalar_text(official));
}

uint64_t fnv1a(std::string_view s) {
  uint64_t h = 14695981039346656037ull;  // FNV-1a 64 offset basis
  for (unsigned char c : s) {
    h ^= c;
    h *= 1099511628211ull;
  }
  return h;
}

std::string hex(uint64_t v) {
  char buf[17];
  std::snprintf(buf, sizeof buf, "%016llx", static_cast<unsigned long long>(v));
  return buf;
}

// Compares `text` with a checked-in summary (every target must give the same bytes); with
// QUIRE_UPDATE_GOLDEN=1 it rewrites the summary first.
void check_golden(const std::filesystem::path &p, const std::string &text) {
  if (const char *update = std::getenv("QUIRE_UPDATE_GOLDEN"); update && *update == '1') {
    std::ofstream(p, std::ios::binary) << text;
  }
  CHECK(text == quire_test::read_text(p));
}

std::set<std::string> known_differences() {
  std::set<std::string> known;
  std::istringstream in(quire_test::read_text(xml_dir() / "known_differences.tsv"));
  std::string line;
  while (std::getline(in, line)) {
    if (line.empty() || line[0] == '#') continue;
    const size_t first = line.find('\t');
    const size_t second = line.find('\t', first + 1);
    REQUIRE(first != std::string::npos);
    known.insert(line.substr(0, second));  // file TAB path
  }
  return known;
}

std::vector<std::filesystem::path> xml_examples() {
  std::vector<std::filesystem::path> files;
  for (const auto &e : std::filesystem::directory_iterator(xml_dir() / "xml")) {
    if (e.path().extension() == ".xml") files.push_back(e.path());
  }
  std::sort(files.begin(), files.end());
  return files;
}

// What read_xml gives, all of it that a caller can see: the error, or the canonical JSON (compact
// and pretty), the document's counts and every issue with its place.
std::string observed(std::string_view xml, const fhir::options &opts, fhir::detail::xml_form form) {
  auto r = fhir::detail::read_xml_with(xml, opts, form);
  if (!r) {
    const auto &e = r.error();
    return "error " + std::string(error_name(e.code)) + " " + e.describe() + " @" + std::to_string(e.offset);
  }
  return fhir::write(*r) + "\n" + fhir::write(*r, {.pretty = true}) + "\n" +
         std::to_string(r->document().value_count()) + " " + std::to_string(r->document().max_depth()) + "\n" +
         fhir::issues_to_json(r->issues());
}

// The tape and the text give the same; returns whether they did (a CHECK says where not).
bool same_both_ways(std::string_view xml, const fhir::options &opts = {}) {
  const std::string tape = observed(xml, opts, fhir::detail::xml_form::automatic);
  const std::string text = observed(xml, opts, fhir::detail::xml_form::text);
  CHECK(tape == text);
  return tape == text;
}

}  // namespace

TEST_CASE("fhir xml conformance: the tape read_xml builds reads as the JSON text does", "[fhir][xml][conformance]") {
  size_t documents = 0;
  for (const auto &f : xml_examples()) {
    INFO(f.filename().string());
    const std::string xml = quire_test::read_text(f);
    documents += same_both_ways(xml);
    fhir::options strict;
    strict.strict = true;
    strict.invariant_fast_paths = false;
    documents += same_both_ways(xml, strict);
  }
  const auto examples = quire_test::corpus_dir() / "fhir-r4" / "examples";
  for (const auto &e : std::filesystem::directory_iterator(examples)) {
    if (e.path().extension() != ".json") continue;
    INFO(e.path().filename().string());
    auto r = fhir::read(quire_test::read_text(e.path()));
    REQUIRE(r);
    for (bool pretty : {false, true}) {
      auto xml = fhir::write_xml(*r, {.pretty = pretty});
      REQUIRE(xml);
      documents += same_both_ways(*xml);
    }
  }
  // Issues of every kind, and the JSON reader's bounds: its depth (max_depth beyond the XML's
  // clamp), max_bytes just above the XML's size (the text may be longer), max_issues.
  const std::string patient =
      "<Patient xmlns=\"http://hl7.org/fhir\">\n  <id value=\"bad id!\"/>\n  <active value=\"yes\"/>\n"
      "  <name><given value=\"A\"/><family value=\"B\"/><given><extension url=\"u\"><valueInteger "
      "value=\"01\"/></extension></given></name>\n  <birthDate value=\"1974-13-45\"/>\n"
      "  <multipleBirthInteger value=\"2.5\"/>\n  <contained><Organization><id value=\"o1\"/></Organization>"
      "</contained>\n  <managingOrganization><reference value=\"#o2\"/></managingOrganization>\n</Patient>\n";
  documents += same_both_ways(patient);
  fhir::options o;
  o.max_issues = 2;
  documents += same_both_ways(patient, o);
  o = {};
  o.max_bytes = patient.size();
  documents += same_both_ways(patient, o);
  o.strict = true;
  documents += same_both_ways(patient, o);
  std::string deep = "<Questionnaire xmlns=\"http://hl7.org/fhir\"><status value=\"draft\"/>";
  for (int i = 0; i < 600; ++i) deep += "<item><linkId value=\"l\"/><type value=\"group\"/>";
  for (int i = 0; i < 600; ++i) deep += "</item>";
  deep += "</Questionnaire>";
  for (size_t depth : {size_t{256}, size_t{700}, size_t{1000}, size_t{5000}}) {
    o = {};
    o.max_depth = depth;
    documents += same_both_ways(deep, o);
  }
  CHECK(documents == 2 * 20 + 2 * 534 + 4 + 4);
}

TEST_CASE("fhir xml conformance: official XML examples read to the official JSON", "[fhir][xml][conformance]") {
  const auto files = xml_examples();
  REQUIRE(files.size() >= 20);
  const auto examples = quire_test::corpus_dir() / "fhir-r4" / "examples";
  const std::set<std::string> known = known_differences();
  std::set<std::string> seen;
  size_t equal = 0, with_known = 0;
  for (const auto &f : files) {
    const std::string name = f.filename().string();
    INFO(name);
    auto r = fhir::read_xml(quire_test::read_text(f));
    REQUIRE(r);
    CHECK(r->outcome().ok());
    std::string id;
    if (auto v = r->root().get_object().value().find("id")) id = std::string(v->get_string().value());
    const auto pair = examples / (std::string(r->resource_type()) + "-" + id + ".json");
    INFO(pair.filename().string());
    REQUIRE(std::filesystem::exists(pair));
    auto official = fhir::read(quire_test::read_text(pair));
    REQUIRE(official);
    std::vector<std::pair<std::string, std::string>> diffs;
    differences(r->root(), official->root(), std::string(r->resource_type()), diffs);
    for (const auto &[path, how] : diffs) {
      const std::string key = name + "\t" + path;
      INFO(path << ": " << how);
      CHECK(known.count(key) == 1);
      seen.insert(key);
    }
    (diffs.empty() ? equal : with_known) += 1;
  }
  for (const auto &k : known) {
    INFO("listed in known_differences.tsv but not found: " << k);
    CHECK(seen.count(k) == 1);
  }
  std::printf(
      "fhir xml conformance (%s): %zu official XML examples: %zu equal to the official JSON, %zu equal "
      "but for the source differences listed (%zu)\n",
      TARGET, files.size(), equal, with_known, known.size());
}

TEST_CASE("fhir xml conformance: official XML examples go XML -> JSON -> XML -> JSON unchanged",
          "[fhir][xml][conformance]") {
  std::ostringstream summary;
  summary << "# file\terrors\twarnings\tissues\tfirst_issue_line\tjson_compact_fnv1a\txml_pretty_fnv1a\n";
  for (const auto &f : xml_examples()) {
    INFO(f.filename().string());
    auto r = fhir::read_xml(quire_test::read_text(f));
    REQUIRE(r);
    const std::string json = fhir::write(r.value());
    auto pretty_xml = fhir::write_xml(r.value(), {.pretty = true});
    REQUIRE(pretty_xml);
    const auto &o = r->outcome();
    summary << f.filename().string() << '\t' << o.errors << '\t' << o.warnings << '\t' << o.issues.size() << '\t'
            << (o.issues.empty() ? 0 : o.issues[0].line) << '\t' << hex(fnv1a(json)) << '\t'
            << hex(fnv1a(pretty_xml.value())) << '\n';
    for (bool pretty : {false, true}) {
      auto xml = fhir::write_xml(r.value(), {.pretty = pretty});
      REQUIRE(xml);
      auto back = fhir::read_xml(xml.value());
      REQUIRE(back);
      CHECK(fhir::write(back.value()) == json);
    }
  }
  check_golden(xml_dir() / "xml_summary.tsv", summary.str());
}

TEST_CASE("fhir xml conformance: every corpus JSON example goes JSON -> XML -> JSON unchanged",
          "[fhir][xml][conformance]") {
  const auto examples = quire_test::corpus_dir() / "fhir-r4" / "examples";
  std::vector<std::filesystem::path> files;
  for (const auto &e : std::filesystem::directory_iterator(examples)) {
    if (e.path().extension() == ".json") files.push_back(e.path());
  }
  std::sort(files.begin(), files.end());
  std::ostringstream summary;
  summary << "# file\txml_compact_fnv1a\txml_pretty_fnv1a\n";
  size_t total = 0, same = 0;
  for (const auto &path : files) {
    ++total;
    INFO(path.filename().string());
    auto r = fhir::read(quire_test::read_text(path));
    REQUIRE(r);
    const std::string json = fhir::write(r.value());
    bool ok = true;
    summary << path.filename().string();
    for (bool pretty : {false, true}) {
      auto xml = fhir::write_xml(r.value(), {.pretty = pretty});
      REQUIRE(xml);
      summary << '\t' << hex(fnv1a(xml.value()));
      auto back = fhir::read_xml(xml.value());
      REQUIRE(back);
      CHECK(back->outcome().errors == r->outcome().errors);
      ok = ok && fhir::write(back.value()) == json;
    }
    summary << '\n';
    CHECK(ok);
    same += ok ? 1 : 0;
  }
  check_golden(xml_dir() / "corpus_xml_summary.tsv", summary.str());
  CHECK(total == 534);
  std::printf("fhir xml conformance (%s): JSON -> XML -> JSON: %zu/%zu corpus examples unchanged\n", TARGET, same,
              total);
}
