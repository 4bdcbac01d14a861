// Benchmark cases of FHIR XML: fhir.xml.read (R4 XML to the resource: expat, the JSON form built
// from the elements, read and validated as JSON is), fhir.xml.validate (the findings only) and
// fhir.xml.write (R4 XML of a resource already read). The inputs are the JSON shapes of
// fhir_cases.cpp written as pretty XML by core itself, so each reads to the resource its JSON
// twin does and the cases compare with fhir.read on the same shapes.
#include <string>

#include "../shapes/fhir_shapes.h"
#include "fhir_fold.h"
#include "quire/bench.h"
#include "quire/fhir.h"

namespace quire::bench {
namespace {

constexpr size_t KIB = 1024;

std::string as_xml(const std::string &json) {
  auto r = fhir::read(json);
  if (!r) return "<not-a-resource/>";  // fails the case loudly: the shape is not a resource
  auto x = fhir::write_xml(*r, {.pretty = true});
  return x ? std::move(x).value() : "<not-writable/>";
}

result<uint64_t> read_op(std::string_view input) {
  auto r = fhir::read_xml(input);
  if (!r) return r.error();
  uint64_t d = digest(r->resource_type());
  d = mix(d, r->document().value_count());
  return fold_outcome(d, r->outcome());
}

result<uint64_t> validate_op(std::string_view input) {
  fhir::options o;
  o.input_syntax = fhir::syntax::xml;
  return fold_outcome(0, fhir::validate(input, o));
}

// As fhir.write: the resource is read once per input and kept (the harness runs one thread).
result<uint64_t> write_op(std::string_view input) {
  static const char *data = nullptr;
  static size_t size = 0;
  static fhir::resource resource;
  if (data != input.data() || size != input.size()) {
    resource = fhir::resource{};
    auto r = fhir::read_xml(input);
    if (!r) return r.error();
    resource = std::move(r).value();
    data = input.data();
    size = input.size();
  }
  auto x = fhir::write_xml(resource);
  if (!x) return x.error();
  return digest(*x);
}

struct shape {
  const char *name;
  uint64_t items;
  std::string (*make)();
  bool opaque_payload;
};

const shape SHAPES[] = {
    {"vital-signs-observation", 1, [] { return as_xml(shapes::fhir_vital_signs_observation()); }, false},
    {"transaction-bundle-1000", 1000, [] { return as_xml(shapes::fhir_transaction_bundle(1000)); }, false},
    {"searchset-bundle-1000", 1000, [] { return as_xml(shapes::fhir_searchset_bundle(1000)); }, false},
    {"patient-contained-300", 300, [] { return as_xml(shapes::fhir_patient_contained(300)); }, false},
    {"binary-base64-64kib", 1, [] { return as_xml(shapes::fhir_binary_pdf(64 * KIB)); }, true},
};

struct operation {
  const char *name;
  result<uint64_t> (*run)(std::string_view);
};

const operation OPS[] = {{"fhir.xml.read", read_op}, {"fhir.xml.validate", validate_op}, {"fhir.xml.write", write_op}};

struct register_all {
  register_all() {
    for (const auto &s : SHAPES) {
      for (const auto &op : OPS) {
        case_def c{op.name, s.name, s.make, op.run, s.items};
        c.opaque_payload = s.opaque_payload;
        registration{std::move(c)};
      }
    }
  }
} registered;

}  // namespace
}  // namespace quire::bench
