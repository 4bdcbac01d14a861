// The evaluator: walks the compiled nodes over the JSON tape (the engine's other parts, one file
// per chapter of the specification, are listed in fhirpath_engine.h), and the public entry points.
#include "fhirpath_engine.h"

namespace quire::fhirpath {

bool engine::eval(uint32_t n, const frame &f, collection &out) {
  const node &nd = prog_.nodes[n];
  switch (nd.kind) {
    case op::literal: out.push_back(nd.lit); return true;
    case op::empty: return true;
    case op::this_item: out.insert(out.end(), f.this_items, f.this_items + f.this_count); return true;
    case op::index_item: out.push_back(integer_item(f.index)); return true;
    case op::total_item:
      if (f.total) out.insert(out.end(), f.total->begin(), f.total->end());
      return true;
    case op::variable: return variable(nd, out);
    case op::member: {
      if (nd.a == NONE) {
        for (size_t i = 0; i < f.this_count; ++i)
          if (!member(f.this_items[i], nd, true, out)) return false;
        return true;
      }
      scratch focus(s_);
      if (!eval(nd.a, f, *focus)) return false;
      for (const item &v : *focus)
        if (!member(v, nd, false, out)) return false;
      return check_size(out, nd.pos);
    }
    case op::call: return call(nd, f, out);
    case op::indexer: {
      scratch focus(s_), idx(s_);
      if (!eval(nd.a, f, *focus) || !eval(nd.b, f, *idx)) return false;
      if (idx->empty()) return true;
      const item *i = single(*idx, nd.pos, "an index");
      if (!i) return false;
      if (i->kind != value_kind::integer) return type_error(nd.pos, "an index must be an integer");
      if (i->integer >= 0 && static_cast<uint64_t>(i->integer) < focus->size())
        out.push_back((*focus)[static_cast<size_t>(i->integer)]);
      return true;
    }
    case op::negate: {
      scratch a(s_);
      if (!eval(nd.a, f, *a)) return false;
      if (a->empty()) return true;
      const item *v = single(*a, nd.pos, "the operand of unary minus");
      if (!v) return false;
      // -INT64_MIN does not exist: like any overflow, the result is empty.
      if ((v->kind == value_kind::integer && v->integer == INT64_MIN) || (is_number(*v) && v->dec.digits == INT64_MIN))
        return true;
      if (v->kind == value_kind::integer) {
        out.push_back(integer_item(-v->integer));
      } else if (v->kind == value_kind::decimal) {
        out.push_back(decimal_item(decimal{-v->dec.digits, v->dec.scale}));
      } else if (v->kind == value_kind::quantity) {
        if (v->dec.digits == INT64_MIN) return true;
        item q = *v;
        q.dec.digits = -q.dec.digits;
        q.in_tape = false;
        out.push_back(q);
      } else {
        return type_error(nd.pos, "unary minus needs a number or a quantity, not " + type_name(*v));
      }
      return true;
    }
    case op::is_type:
    case op::as_type: {
      scratch a(s_);
      if (!eval(nd.a, f, *a)) return false;
      if (a->empty()) return true;
      const item *v = single(*a, nd.pos, nd.kind == op::is_type ? "the operand of is" : "the operand of as");
      if (!v) return false;
      bool yes = is_a(*v, nd.type);
      if (nd.kind == op::is_type) out.push_back(boolean_item(yes));
      else if (yes) out.push_back(*v);
      return true;
    }
    case op::and_op:
    case op::or_op:
    case op::xor_op:
    case op::implies: return logic(nd, f, out);
    default: return binary(nd, f, out);
  }
}

// --- variables ---
bool engine::variable(const node &nd, collection &out) {
  const std::string &n = nd.name;
  if (s_.env) {
    for (const auto &c : s_.env->constants) {
      if (c.first == n) {
        out.insert(out.end(), c.second.begin(), c.second.end());
        return true;
      }
    }
  }
  if (n == "context") {
    out.push_back(s_.context);
    return true;
  }
  if (n == "resource" || n == "rootResource") {
    if (!s_.resources_ready) {
      const environment *env = s_.env;
      // Typed on first use (most expressions never name them); a caller that already has the
      // items (the view runner, once per resource) hands them over.
      s_.resource = env && env->resource_item ? *env->resource_item
                    : env && env->resource    ? context_item(*env->resource)
                                              : s_.context;
      s_.root_resource = env && env->root_resource_item ? *env->root_resource_item
                         : env && env->root_resource    ? context_item(*env->root_resource)
                                                        : s_.resource;
      s_.resources_ready = true;
    }
    out.push_back(n == "resource" ? s_.resource : s_.root_resource);
    return true;
  }
  std::string_view text;
  std::string built;
  if (n == "ucum") text = "http://unitsofmeasure.org";
  else if (n == "sct") text = "http://snomed.info/sct";
  else if (n == "loinc") text = "http://loinc.org";
  else if (n.rfind("vs-", 0) == 0) built = "http://hl7.org/fhir/ValueSet/" + n.substr(3);
  else if (n.rfind("ext-", 0) == 0) built = "http://hl7.org/fhir/StructureDefinition/" + n.substr(4);
  else return fail(error_code::INVALID_FHIRPATH, nd.pos, "unknown variable %" + n);
  item v;
  v.kind = value_kind::string;
  v.text = built.empty() ? text : keep(std::move(built));
  out.push_back(v);
  return true;
}

// --- calls ---

bool engine::call(const node &nd, const frame &f, collection &out) {
  scratch in_buf(s_);
  collection &in = *in_buf;
  if (nd.a == NONE) {
    in.assign(f.this_items, f.this_items + f.this_count);
  } else if (!eval(nd.a, f, in)) {
    return false;
  }
  return (this->*nd.function_def->impl)(nd, f, in, out);
}

bool engine::criterion(const node &nd, const collection &in, size_t i, int &truth_value) {
  scratch r(s_);
  if (!arg(nd, 0, per_item(in, i), *r)) return false;
  bool ok;
  truth_value = truth(*r, nd.pos, ok);
  return ok;
}

bool engine::arg_single(const node &nd, uint32_t i, const frame &f, collection &buf, const item *&v) {
  v = nullptr;
  if (!arg(nd, i, f, buf)) return false;
  if (buf.empty()) return true;
  v = single(buf, nd.pos, "the argument");
  return v != nullptr;
}
bool engine::arg_integer(const node &nd, uint32_t i, const frame &f, collection &buf, bool &present, int64_t &value) {
  const item *v;
  present = false;
  if (!arg_single(nd, i, f, buf, v)) return false;
  if (!v) return true;
  if (v->kind != value_kind::integer) return type_error(nd.pos, nd.name + "() needs an integer argument");
  present = true;
  value = v->integer;
  return true;
}
bool engine::arg_string(const node &nd, uint32_t i, const frame &f, collection &buf, bool &present,
                        std::string_view &value) {
  const item *v;
  present = false;
  if (!arg_single(nd, i, f, buf, v)) return false;
  if (!v) return true;
  if (v->kind != value_kind::string) return type_error(nd.pos, nd.name + "() needs a string argument");
  present = true;
  value = v->text;
  return true;
}

evaluator::evaluator(const limits &lim) : state_(std::make_unique<state>()) { state_->lim = lim; }
evaluator::~evaluator() = default;
evaluator::evaluator(evaluator &&) noexcept = default;
evaluator &evaluator::operator=(evaluator &&) noexcept = default;

item context_item(const json::value &v) { return make_item(v, NO_FHIR_TYPE, nullptr); }

item typed_item(const json::value *value, uint16_t fhir_type, const json::value *companion) {
  const json::value *comp = companion && companion->type() == json::kind::object ? companion : nullptr;
  if (value && !value->is_null()) return make_item(*value, fhir_type, comp);
  if (!comp) return item{};
  // As push_json makes it: a primitive that exists only through its companion's id and extensions.
  item it = make_item(*comp, fhir_type, comp);
  it.kind = value_kind::element;
  it.in_tape = false;
  return it;
}

std::string_view unsupported_function(const expression &expr) noexcept {
  for (const node &nd : expr.compiled().nodes) {
    if (nd.kind != op::call) continue;
    switch (nd.function) {
      case fn::resolve:
      case fn::memberOf:
      case fn::subsumes:
      case fn::subsumedBy:
      case fn::htmlChecks:
      case fn::elementDefinition:
      case fn::checkModifiers: return nd.name;
      default: break;
    }
  }
  return {};
}

result<const collection *> evaluator::evaluate(const expression &expr, const json::value &context,
                                               const environment &env) {
  return evaluate(expr, context_item(context), env);
}

result<const collection *> evaluator::evaluate(const expression &expr, const item &context, const environment &env) {
  state &s = *state_;
  s.prog = &expr.compiled();
  s.env = &env;
  if (!s.strings.empty()) s.strings.clear();
  s.out.clear();
  s.failed = false;
  s.comparisons = 0;
  s.pool_used = 0;
  s.context = context;
  s.resources_ready = false;
  if (s.prog->root == NONE) return &s.out;
  engine e(s);
  frame f;
  f.this_items = &s.context;
  f.this_count = 1;
  if (!e.eval(s.prog->root, f, s.out)) return s.err;
  return &s.out;
}

}  // namespace quire::fhirpath
