// Types (N1 "Types and Reflection"): the `is` and `as` operators' test, ofType(), is(), as(),
// type(); System and FHIR type names, and FHIR R4's inheritance (the R4 tables' types, the
// primitives' specialisations, the abstract Resource, DomainResource, Element, BackboneElement).
#include "fhirpath_engine.h"

namespace quire::fhirpath {

std::string_view fhir_type_name(uint16_t t) noexcept {
  if (t >= fx::TYPE_COUNT) return {};
  if (fx::TYPES[t].kind == fx::type_kind::backbone) return "BackboneElement";
  return fx::TYPES[t].name.view();
}

namespace {
bool is_domain_resource(std::string_view n) { return n != "Bundle" && n != "Binary" && n != "Parameters"; }
// R4's primitive specialisations (StructureDefinition.baseDefinition), and the Quantity profiles.
std::string_view fhir_base(std::string_view n) {
  if (n == "code" || n == "id" || n == "markdown") return "string";
  if (n == "url" || n == "canonical" || n == "uuid" || n == "oid") return "uri";
  if (n == "positiveInt" || n == "unsignedInt") return "integer";
  if (n == "Age" || n == "Count" || n == "Distance" || n == "Duration" || n == "MoneyQuantity" || n == "SimpleQuantity")
    return "Quantity";
  return {};
}
}  // namespace

bool fhir_is_a(uint16_t t, const type_spec &spec) noexcept {
  if (t >= fx::TYPE_COUNT) return false;
  const fx::type_def &d = fx::TYPES[t];
  if (spec.ns == type_spec::space::abstract_fhir) {
    switch (spec.abstract_kind) {
      case ABSTRACT_ANY: return true;
      case ABSTRACT_RESOURCE: return d.kind == fx::type_kind::resource || d.kind == fx::type_kind::any_resource;
      case ABSTRACT_DOMAIN_RESOURCE: return d.kind == fx::type_kind::resource && is_domain_resource(d.name.view());
      case ABSTRACT_ELEMENT: return d.kind != fx::type_kind::resource && d.kind != fx::type_kind::any_resource;
      case ABSTRACT_BACKBONE: return d.kind == fx::type_kind::backbone;
      default: return false;
    }
  }
  if (spec.ns != type_spec::space::fhir) return false;
  if (t == spec.fhir) return true;
  std::string_view want = fx::TYPES[spec.fhir].name.view();
  for (std::string_view n = d.name.view(); !n.empty(); n = fhir_base(n))
    if (n == want) return true;
  return false;
}

bool resolve_type(std::string_view ns, std::string_view name, type_spec &out) noexcept {
  out = type_spec{};
  struct sys {
    std::string_view n;
    value_kind k;
  };
  static const sys SYSTEM[] = {{"Boolean", value_kind::boolean}, {"Integer", value_kind::integer},
                               {"Decimal", value_kind::decimal}, {"String", value_kind::string},
                               {"Date", value_kind::date},       {"DateTime", value_kind::date_time},
                               {"Time", value_kind::time},       {"Quantity", value_kind::quantity}};
  if (ns.empty() || ns == "FHIR") {
    uint8_t abs = name == "Resource"          ? ABSTRACT_RESOURCE
                  : name == "DomainResource"  ? ABSTRACT_DOMAIN_RESOURCE
                  : name == "Element"         ? ABSTRACT_ELEMENT
                  : name == "BackboneElement" ? ABSTRACT_BACKBONE
                                              : 0;
    if (abs) {
      out.ns = type_spec::space::abstract_fhir;
      out.abstract_kind = abs;
      return true;
    }
    for (size_t t = 0; t < fx::TYPE_COUNT; ++t) {
      if (fx::TYPES[t].kind == fx::type_kind::backbone) continue;
      if (fx::TYPES[t].name.view() == name) {
        out.ns = type_spec::space::fhir;
        out.fhir = static_cast<uint16_t>(t);
        out.unqualified = ns.empty();
        if (ns.empty() && name == "Quantity") out.system_kind = value_kind::quantity;
        return true;
      }
    }
    if (ns == "FHIR") return false;
  }
  if (ns.empty() || ns == "System") {
    for (const sys &s : SYSTEM) {
      if (s.n == name) {
        out.ns = type_spec::space::system;
        out.system_kind = s.k;
        return true;
      }
    }
    if (ns == "System" && name == "Any") {
      out.ns = type_spec::space::abstract_fhir;
      out.abstract_kind = ABSTRACT_ANY;
      return true;
    }
    if (ns == "System" && !name.empty()) {
      // System holds no such type, so nothing is of it (`Patient.is(System.Patient)` is false).
      out.ns = type_spec::space::abstract_fhir;
      out.abstract_kind = ABSTRACT_NOTHING;
      return true;
    }
  }
  return false;
}

std::string type_spec_name(const type_spec &t) {
  switch (t.ns) {
    case type_spec::space::fhir: return "FHIR." + std::string(fx::TYPES[t.fhir].name.view());
    case type_spec::space::abstract_fhir: return "FHIR.(abstract)";
    default: break;
  }
  return "System";
}

std::string type_name(const item &v) {
  if (v.fhir_type != NO_FHIR_TYPE) return "FHIR." + std::string(fhir_type_name(v.fhir_type));
  switch (v.kind) {
    case value_kind::boolean: return "System.Boolean";
    case value_kind::integer: return "System.Integer";
    case value_kind::decimal: return "System.Decimal";
    case value_kind::string: return "System.String";
    case value_kind::date: return "System.Date";
    case value_kind::date_time: return "System.DateTime";
    case value_kind::time: return "System.Time";
    case value_kind::quantity: return "System.Quantity";
    case value_kind::type_info: return "System.Object";
    case value_kind::element: return "System.Object";
  }
  return "System.Object";
}

bool is_a(const item &v, const type_spec &ts) {
  if (ts.ns == type_spec::space::abstract_fhir && ts.abstract_kind == ABSTRACT_ANY) return true;
  if (v.fhir_type != NO_FHIR_TYPE) {
    if (ts.ns == type_spec::space::system) return false;
    return fhir_is_a(v.fhir_type, ts);
  }
  if (ts.ns == type_spec::space::system) return v.kind == ts.system_kind && v.kind != value_kind::element;
  if (ts.unqualified && ts.system_kind == value_kind::quantity && v.kind == value_kind::quantity) return true;
  return false;
}

bool engine::fn_of_type(const node &nd, const frame &, const collection &in, collection &out) {
  for (const item &v : in)
    if (is_a(v, nd.type)) out.push_back(v);
  return true;
}

bool engine::fn_is_as(const node &nd, const frame &, const collection &in, collection &out) {
  if (in.empty()) return true;
  if (nd.function == fn::as_fn && in.size() > 1 && s_.env && s_.env->as_function_filters) {
    for (const item &x : in) {
      if (is_a(x, nd.type)) out.push_back(x);
    }
    return true;
  }
  const item *v = single(in, nd.pos, nd.function == fn::is_fn ? "the input of is()" : "the input of as()");
  if (!v) return false;
  bool yes = is_a(*v, nd.type);
  if (nd.function == fn::is_fn) out.push_back(boolean_item(yes));
  else if (yes) out.push_back(*v);
  return true;
}

bool engine::fn_type(const node &, const frame &, const collection &in, collection &out) {
  for (const item &v : in) {
    item t;
    t.kind = value_kind::type_info;
    std::string full = type_name(v);
    size_t dot = full.find('.');
    t.text2 = keep(full.substr(0, dot));
    t.text = keep(full.substr(dot + 1));
    out.push_back(t);
  }
  return true;
}

}  // namespace quire::fhirpath
