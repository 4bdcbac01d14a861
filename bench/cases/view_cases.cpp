// Benchmark cases of SQL on FHIR ViewDefinitions and FHIRPath (issue 12, item 7), from NDJSON
// bytes: a synthetic Bulk Data export in the corpus export's shapes (bench/shapes/view_shapes.h)
// of 10,000 and 100,000 resources, a fifth Patients and the rest Observations, one file each.
//   view.patient_flat        a patient-demographics view, ten flat columns, over the Patient file
//   view.observation_coding  forEach code.coding (1-3 codings each), over the Observation file
//   fhirpath.evaluate        six expressions per Patient, each compiled once
// Each call starts from the bytes (every line parsed) and ends with the rows' text, as
// view::table_writer writes NDJSON (append_row_json's bytes, one row a line, every cell checked
// against its column's type): the checksum is a digest of that text, so that the three targets
// must agree row for row. The same text is each view case's answer, which bench/peers_view.mjs checks
// @medplum/core's evalSqlOnFhir against. Scaling gates on the resource count, each with a
// quadratic twin.
#include <algorithm>
#include <string>
#include <vector>

#include "../shapes/view_shapes.h"
#include "quire/bench.h"
#include "quire/fhirpath.h"
#include "quire/json.h"
#include "quire/platform.h"
#include "quire/view.h"

namespace quire::bench {
namespace {

// The ViewDefinitions (also handed to the peer, so both run the very same views).
const char *const PATIENT_FLAT_VIEW =
    R"v({"resourceType":"ViewDefinition","name":"patient_demographics",)v"
    R"v("status":"active","resource":"Patient","select":[{"column":[)v"
    R"v({"name":"id","path":"id","type":"id"},)v"
    R"v({"name":"gender","path":"gender","type":"code"},)v"
    R"v({"name":"birth_date","path":"birthDate","type":"date"},)v"
    R"v({"name":"family","path":"name.first().family","type":"string"},)v"
    R"v({"name":"given","path":"name.first().given.join(' ')","type":"string"},)v"
    R"v({"name":"phone","path":"telecom.where(system = 'phone').value.first()",)v"
    R"v("type":"string"},)v"
    R"v({"name":"mrn","path":"identifier.where(type.coding.code = 'MR').value.first()",)v"
    R"v("type":"string"},)v"
    R"v({"name":"city","path":"address.first().city","type":"string"},)v"
    R"v({"name":"postal_code","path":"address.first().postalCode","type":"string"},)v"
    R"v({"name":"marital_status","path":"maritalStatus.coding.first().code",)v"
    R"v("type":"code"}]}]})v";

const char *const OBSERVATION_CODING_VIEW =
    R"v({"resourceType":"ViewDefinition","name":"observation_coding","status":"active","resource":"Observation",)v"
    R"v("select":[{"column":[)v"
    R"v({"name":"id","path":"id","type":"id"},)v"
    R"v({"name":"patient_id","path":"subject.getReferenceKey(Patient)","type":"string"},)v"
    R"v({"name":"effective","path":"effective.ofType(dateTime)","type":"dateTime"},)v"
    R"v({"name":"value","path":"value.ofType(Quantity).value","type":"decimal"},)v"
    R"v({"name":"unit","path":"value.ofType(Quantity).code","type":"code"}]},)v"
    R"v({"forEach":"code.coding","column":[)v"
    R"v({"name":"system","path":"system","type":"uri"},)v"
    R"v({"name":"code","path":"code","type":"code"},)v"
    R"v({"name":"display","path":"display","type":"string"}]}]})v";

// FHIRPath expressions evaluated per Patient: member paths, where() filters, functions, a date
// comparison, string concatenation.
const char *const EXPRESSIONS[] = {
    "name.where(use = 'official').family.first()",
    "identifier.where(system = 'https://github.com/synthetichealth/synthea').value",
    ("extension.where(url = 'http://hl7.org/fhir/us/core/StructureDefinition/us-core-race')"
     ".extension.where(url = 'text').value"),
    "birthDate < @1970-01-01",
    "name.given.first() + ' ' + name.family.first()",
    "telecom.where(system = 'phone' and use = 'home').exists() and address.city.exists()",
};

// Compiled once per process: a case measures running the view, not compiling it (a
// compilation error shows as the case's error).
struct compiled_views {
  result<view::compiled_view> patient_flat = view::compile(PATIENT_FLAT_VIEW);
  result<view::compiled_view> observation_coding = view::compile(OBSERVATION_CODING_VIEW);
};
const compiled_views &views() {
  static const compiled_views v;
  return v;
}

// The rows' text, kept in one string.
class string_sink final : public format::byte_sink {
 public:
  std::string text;
  result<void> write(std::span<const uint8_t> bytes) override {
    text.append(reinterpret_cast<const char *>(bytes.data()), bytes.size());
    return {};
  }
};

// Runs a view over NDJSON and writes its rows' text, one JSON object a line, as an application
// would: a table_writer whose lines run on the target's threads (natively one per hardware thread,
// or `quire-bench --threads N`; in WebAssembly the calling thread alone: quire/platform.h).
result<std::string> view_rows_text(const result<view::compiled_view> &v, std::string_view input) {
  if (!v) return v.error();
  string_sink out;
  out.text.reserve(input.size() / 4);
  auto w = view::table_writer::create(*v, view::output_kind::ndjson, {}, out,
                                      {.tasks = &default_task_runner(), .threads = case_threads()});
  if (!w) return w.error();
  if (auto ok = w.value()->feed_ndjson(input); !ok) return ok.error();
  if (auto rows = w.value()->finish(); !rows) return rows.error();
  return std::move(out.text);
}

uint64_t rows_digest(const std::string &text) {
  uint64_t lines = 0;
  for (char c : text) lines += c == '\n';
  return mix(digest_words(text), lines);
}

result<uint64_t> patient_flat_op(std::string_view input) {
  auto text = view_rows_text(views().patient_flat, input);
  if (!text) return text.error();
  return rows_digest(*text);
}

result<uint64_t> observation_coding_op(std::string_view input) {
  auto text = view_rows_text(views().observation_coding, input);
  if (!text) return text.error();
  return rows_digest(*text);
}

struct compiled_expressions {
  std::vector<fhirpath::expression> list;
  error failure{error_code::OK, ""};
  compiled_expressions() {
    for (const char *text : EXPRESSIONS) {
      auto e = fhirpath::compile(text);
      if (!e) {
        failure = e.error();
        return;
      }
      list.push_back(std::move(e).value());
    }
  }
};

result<uint64_t> fhirpath_op(std::string_view input) {
  static const compiled_expressions exprs;
  if (exprs.failure.code != error_code::OK) return exprs.failure;
  fhirpath::evaluator ev;
  json::document doc;  // one document, its buffers reused from line to line
  uint64_t d = 0;
  std::string text;
  size_t pos = 0;
  while (pos < input.size()) {
    size_t end = input.find('\n', pos);
    if (end == std::string_view::npos) end = input.size();
    std::string_view line = input.substr(pos, end - pos);
    pos = end + 1;
    if (line.empty()) continue;
    if (auto parsed = json::parse_into(doc, line); !parsed) return parsed.error();
    fhirpath::item ctx = fhirpath::context_item(doc.root());
    text.clear();
    for (const auto &e : exprs.list) {
      auto out = ev.evaluate(e, ctx);
      if (!out) return out.error();
      text += fhirpath::to_json(**out);
      text += '\t';
    }
    d = digest(text, d);
  }
  return d;
}

constexpr size_t SMALL = 10000;
constexpr size_t FULL = 100000;

std::string shape_name(const char *what, size_t resources, size_t count) {
  std::string out = "export-";
  out += std::to_string(resources);
  out += '-';
  out += what;
  out += '-';
  out += std::to_string(count);
  return out;
}

struct register_all {
  register_all() {
    for (size_t resources : {SMALL, FULL}) {
      auto counts = shapes::view_export_counts(resources);
      auto patients = [resources] { return shapes::view_export_patients(resources); };
      auto observations = [resources] { return shapes::view_export_observations(resources); };
      // The Patient file's shape name says the export it belongs to and its own count:
      // export-100000-patients-20000.
      std::string ps = shape_name("patients", resources, counts.patients);
      std::string os = shape_name("observations", resources, counts.observations);
      case_def flat{"view.patient_flat", ps, patients, patient_flat_op, counts.patients};
      flat.peer_spec = PATIENT_FLAT_VIEW;
      flat.answer = [](std::string_view in) { return view_rows_text(views().patient_flat, in); };
      registration{std::move(flat)};
      case_def obs{"view.observation_coding", os, observations, observation_coding_op, counts.observations};
      obs.peer_spec = OBSERVATION_CODING_VIEW;
      obs.answer = [](std::string_view in) { return view_rows_text(views().observation_coding, in); };
      registration{std::move(obs)};
      registration{{"fhirpath.evaluate", ps, patients, fhirpath_op, counts.patients}};
    }
  }
} registered;

// Quadratic twin: the rows, then for each row a scan of the rows before it for one with the same
// text (a naive duplicate check), each pair compared byte by byte over the whole line (no early
// exit, so the n²/2 comparisons outweigh the view's own work at the base size and the ratio at
// four times shows the square).
result<uint64_t> duplicate_scan(const result<view::compiled_view> &v, std::string_view input) {
  auto text = view_rows_text(v, input);
  if (!text) return text.error();
  std::vector<std::string_view> lines;
  size_t pos = 0;
  while (pos < text->size()) {
    size_t end = text->find('\n', pos);
    lines.push_back(std::string_view(*text).substr(pos, end - pos));
    pos = end + 1;
  }
  uint64_t duplicates = 0, same_bytes = 0;
  for (size_t i = 0; i < lines.size(); ++i) {
    for (size_t j = 0; j < i; ++j) {
      const size_t n = std::min(lines[i].size(), lines[j].size());
      size_t same = 0;
      for (size_t k = 0; k < n; ++k) same += lines[i][k] == lines[j][k];
      same_bytes += same;
      duplicates += same == lines[i].size() && lines[i].size() == lines[j].size();
    }
  }
  return mix(mix(rows_digest(*text), duplicates), same_bytes);
}
result<uint64_t> patient_duplicates_quadratic(std::string_view input) {
  return duplicate_scan(views().patient_flat, input);
}
result<uint64_t> observation_duplicates_quadratic(std::string_view input) {
  return duplicate_scan(views().observation_coding, input);
}

// 2,000 Patients at the base (an export of 10,000 resources), 8,000 at four times; 1,000
// Observations (about 2,000 rows) at the base, 4,000 at four times.
std::string patients_at(uint64_t scale) { return shapes::view_export_patients(static_cast<size_t>(SMALL * scale)); }
std::string observations_at(uint64_t scale) {
  return shapes::view_export_observations(static_cast<size_t>(SMALL * scale / 8));
}

gate_registration patient_flat_count{
    {"view.patient_flat/resources", patients_at, patient_flat_op, patient_duplicates_quadratic}};
gate_registration observation_count{
    {"view.observation_coding/resources", observations_at, observation_coding_op, observation_duplicates_quadratic}};
gate_registration fhirpath_count{
    {"fhirpath.evaluate/resources", patients_at, fhirpath_op, patient_duplicates_quadratic}};

}  // namespace
}  // namespace quire::bench
