// FHIR's additions to FHIRPath (FHIR R4 "FHIRPath": extension(), hasValue(), getValue(),
// conformsTo() with the base profiles; resolve(), memberOf() and the others that need a resolver
// or a terminology server, refused) and SQL on FHIR's getResourceKey(), getReferenceKey().
#include "fhirpath_engine.h"

namespace quire::fhirpath {

bool engine::fn_extension(const node &nd, const frame &f, const collection &in, collection &out) {
  scratch u(s_);
  bool present;
  std::string_view url;
  if (!arg_string(nd, 0, f, *u, present, url)) return false;
  if (!present) return true;
  node m;
  m.kind = op::member;
  m.pos = nd.pos;
  m.name = "extension";
  for (const item &v : in) {
    scratch exts(s_);
    if (!member(v, m, false, *exts)) return false;
    for (const item &e : *exts) {
      if (!e.in_tape || e.node.type() != json::kind::object) continue;
      auto uv = e.node.get_object().value().find("url");
      if (uv && uv->type() == json::kind::string && uv->get_string().value() == url) out.push_back(e);
    }
  }
  return true;
}

bool engine::fn_has_get_value(const node &nd, const frame &, const collection &in, collection &out) {
  bool has = in.size() == 1 && in[0].kind != value_kind::element && in[0].kind != value_kind::type_info;
  if (nd.function == fn::hasValue) out.push_back(boolean_item(has));
  else if (has) out.push_back(in[0]);
  return true;
}

bool engine::fn_conforms_to(const node &nd, const frame &f, const collection &in, collection &out) {
  scratch u(s_);
  bool present;
  std::string_view url;
  if (!arg_string(nd, 0, f, *u, present, url)) return false;
  if (!present) return true;
  constexpr std::string_view BASE = "http://hl7.org/fhir/StructureDefinition/";
  if (url.substr(0, BASE.size()) != BASE)
    return fail(error_code::INVALID_ARGUMENT, nd.pos,
                "conformsTo() knows only the base profiles (" + std::string(BASE) + "...)");
  type_spec ts;
  if (!resolve_type("FHIR", url.substr(BASE.size()), ts))
    return fail(error_code::INVALID_ARGUMENT, nd.pos, "conformsTo(): no such base profile " + std::string(url));
  for (const item &v : in) out.push_back(boolean_item(v.fhir_type != NO_FHIR_TYPE && fhir_is_a(v.fhir_type, ts)));
  return true;
}

bool engine::fn_unsupported(const node &nd, const frame &, const collection &, collection &) {
  return fail(error_code::INVALID_ARGUMENT, nd.pos,
              nd.name + "() needs a terminology server or a resolver, which quire does not have");
}

bool engine::fn_get_resource_key(const node &, const frame &, const collection &in, collection &out) {
  for (const item &v : in) {
    if (!v.in_tape || v.node.type() != json::kind::object) continue;
    auto id = v.node.get_object().value().find("id");
    if (id && id->type() == json::kind::string)
      out.push_back(make_item(*id, fx::primitive_type(fx::primitive::id), nullptr));
  }
  return true;
}

bool engine::fn_get_reference_key(const node &nd, const frame &, const collection &in, collection &out) {
  type_spec want;
  bool typed = false;
  if (nd.arg_count == 1) {
    uint32_t an = prog_.args[nd.first_arg];
    const node &a = prog_.nodes[an];
    if (a.kind == op::member && a.a == NONE && a.names_type) {
      want = a.type;
      typed = true;
    }
  }
  for (const item &v : in) {
    if (!v.in_tape || v.node.type() != json::kind::object) continue;
    auto ref = v.node.get_object().value().find("reference");
    if (!ref || ref->type() != json::kind::string) continue;
    std::string_view r = ref->get_string().value();
    size_t hist = r.find("/_history/");
    if (hist != std::string_view::npos) r = r.substr(0, hist);
    size_t slash = r.rfind('/');
    if (slash == std::string_view::npos) continue;
    std::string_view type = r.substr(0, slash), id = r.substr(slash + 1);
    size_t prev = type.rfind('/');
    if (prev != std::string_view::npos) type = type.substr(prev + 1);
    if (typed && (want.ns != type_spec::space::fhir || fx::TYPES[want.fhir].name.view() != type)) continue;
    out.push_back(string_item(std::string(id)));
  }
  return true;
}

}  // namespace quire::fhirpath
