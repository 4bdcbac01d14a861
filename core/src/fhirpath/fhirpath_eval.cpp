// The evaluator: walks the compiled nodes over the JSON tape.
//
// Every node appends its result to a collection the caller gives it; intermediate collections
// come from a stack of buffers kept in the evaluator, so evaluating one expression over many
// resources reuses the same memory. Items from the resource are views into the tape with the
// FHIR type the R4 tables give the element; computed strings live in the evaluator's arena until
// the next evaluate().
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <unordered_set>

#include "../common/calendar.h"
#include "../common/decimal_text.h"
#include "../common/utf8.h"
#include "fhirpath_internal.h"

namespace quire::fhirpath {

// What a member name means on objects of one FHIR type, found once from the R4 tables and kept
// (engine::member_rule): finding it per key with fx::find_key was a good part of evaluating.
enum class member_mode : uint8_t {
  seen,     // met once: looked up as `general` this time, the rule is found the next time
  general,  // look every candidate key up (a choice element: `value` matches valueQuantity...)
  exact,    // only the key `name` (and its `_name` companion) can match; its type is `type`
  none,     // no key of the type matches
};
struct member_slot {
  uint64_t program = 0;  // expression::program::id; 0: empty
  uint32_t node = 0;
  uint16_t fhir_type = NO_FHIR_TYPE;
  member_mode mode = member_mode::general;
  uint16_t type = NO_FHIR_TYPE;
};

struct evaluator::state {
  limits lim;
  // Two-way set associative on (program, node, type), made on first use (fhir's validation makes
  // an evaluator per resource, most of which never reach a member step twice).
  std::vector<member_slot> members;
  const expression::program *prog = nullptr;
  const environment *env = nullptr;
  item context;
  item resource;
  item root_resource;
  // %resource and %rootResource are typed on first use: looking a resource's type up costs more
  // than many expressions that never name them (fhir evaluates invariants by the hundred thousand).
  bool resources_ready = false;
  std::vector<std::unique_ptr<collection>> pool;
  size_t pool_used = 0;
  std::deque<std::string> strings;
  collection out;
  quire::error err;
  bool failed = false;
  uint64_t comparisons = 0;
};

namespace {

using state = evaluator::state;

struct frame {
  const item *this_items = nullptr;
  size_t this_count = 0;
  int64_t index = 0;
  const collection *total = nullptr;
};

// A buffer borrowed from the evaluator's pool for the length of a scope.
class scratch {
 public:
  explicit scratch(state &s) : s_(s) {
    if (s_.pool_used == s_.pool.size()) s_.pool.push_back(std::make_unique<collection>());
    c_ = s_.pool[s_.pool_used++].get();
    c_->clear();
  }
  ~scratch() { --s_.pool_used; }
  scratch(const scratch &) = delete;
  scratch &operator=(const scratch &) = delete;
  collection &operator*() { return *c_; }
  collection *operator->() { return c_; }
  collection &get() { return *c_; }

 private:
  state &s_;
  collection *c_;
};

bool is_upper(char c) { return c >= 'A' && c <= 'Z'; }

uint16_t resource_type_of(const json::value &v) {
  if (v.type() != json::kind::object) return NO_FHIR_TYPE;
  auto rt = v.get_object().value().find("resourceType");
  if (!rt || rt->type() != json::kind::string) return NO_FHIR_TYPE;
  uint16_t t = fx::find_resource_type(rt->get_string().value());
  return t == fx::NO_TYPE ? NO_FHIR_TYPE : t;
}

item boolean_item(bool b) {
  item v;
  v.kind = value_kind::boolean;
  v.boolean = b;
  return v;
}
item integer_item(int64_t i) {
  item v;
  v.kind = value_kind::integer;
  v.integer = i;
  v.dec = to_decimal(i);
  return v;
}
item decimal_item(decimal d) {
  item v;
  v.kind = value_kind::decimal;
  v.dec = d;
  return v;
}

// Fills `it` (a default item) for one JSON value of FHIR type t (NO_FHIR_TYPE: untyped JSON).
// Collections get their items built in place (fill_item(out.emplace_back(), ...)): an item is
// about 100 bytes, and building one then copying it in was a good part of a member step.
void fill_item(item &it, const json::value &v, uint16_t t, const json::value *companion) {
  it.in_tape = true;
  it.node = v;
  if (companion) {
    it.has_companion = true;
    it.companion = *companion;
  }
  if (t != NO_FHIR_TYPE && t < fx::TYPE_COUNT && fx::TYPES[t].kind == fx::type_kind::any_resource)
    t = resource_type_of(v);
  it.fhir_type = t;
  fx::primitive p = t != NO_FHIR_TYPE && t < fx::TYPE_COUNT ? fx::TYPES[t].prim : fx::primitive::none;
  switch (v.type()) {
    case json::kind::object:
      it.kind = value_kind::element;
      if (t == NO_FHIR_TYPE) it.fhir_type = resource_type_of(v);
      break;
    case json::kind::string:
      it.text = v.get_string().value();
      it.kind = value_kind::string;
      // The kind comes from the element's type; the text is parsed only when a date is compared
      // or computed with (a malformed one then compares as text).
      if (p == fx::primitive::date) it.kind = value_kind::date;
      else if (p == fx::primitive::dateTime || p == fx::primitive::instant) it.kind = value_kind::date_time;
      else if (p == fx::primitive::time) it.kind = value_kind::time;
      break;
    case json::kind::number: {
      std::string_view text = v.get_number_text().value();
      bool integral = p == fx::primitive::integer || p == fx::primitive::positiveInt ||
                      p == fx::primitive::unsignedInt ||
                      (p == fx::primitive::none && text.find_first_of(".eE") == std::string_view::npos);
      auto i = v.get_int64();
      if (integral && i) {
        it.kind = value_kind::integer;
        it.integer = *i;
        it.dec = to_decimal(*i);
      } else {
        it.kind = value_kind::decimal;
        if (!parse_decimal(text, it.dec)) it.dec = decimal{};
      }
      break;
    }
    case json::kind::boolean:
      it.kind = value_kind::boolean;
      it.boolean = v.get_bool().value();
      break;
    default:
      it.kind = value_kind::element;  // null: a primitive with only its `_name` companion
      break;
  }
}

item make_item(const json::value &v, uint16_t t, const json::value *companion) {
  item it;
  fill_item(it, v, t, companion);
  return it;
}

// Appends the items of a JSON member (a value or an array of them) with their companions.
void push_json(const json::value *v, const json::value *comp, uint16_t t, collection &out) {
  if (v && v->type() == json::kind::array) {
    auto arr = v->get_array().value();
    std::optional<json::array> carr;
    if (comp && comp->type() == json::kind::array) carr = comp->get_array().value();
    std::optional<json::array::iterator> ci;
    if (carr) ci = carr->begin();
    for (json::value e : arr) {
      json::value c;
      bool use_c = false;
      if (ci && *ci != carr->end()) {
        c = **ci;
        ++*ci;
        use_c = c.type() == json::kind::object;
      }
      if (e.is_null() && !use_c) continue;
      fill_item(out.emplace_back(), e, t, use_c ? &c : nullptr);
    }
    return;
  }
  if (v) {
    if (v->is_null() && !(comp && comp->type() == json::kind::object)) return;
    fill_item(out.emplace_back(), *v, t, comp && comp->type() == json::kind::object ? comp : nullptr);
    return;
  }
  // Only the companion: primitives that have extensions but no value.
  if (!comp) return;
  if (comp->type() == json::kind::array) {
    for (json::value c : comp->get_array().value()) {
      if (c.type() != json::kind::object) continue;
      json::value none = c;
      item it = make_item(none, t, &c);
      it.kind = value_kind::element;
      it.in_tape = false;
      out.push_back(it);
    }
  } else if (comp->type() == json::kind::object) {
    item it = make_item(*comp, t, comp);
    it.kind = value_kind::element;
    it.in_tape = false;
    out.push_back(it);
  }
}

bool is_primitive_type(uint16_t t) {
  return t != NO_FHIR_TYPE && t < fx::TYPE_COUNT && fx::TYPES[t].kind == fx::type_kind::primitive;
}

class engine {
 public:
  explicit engine(state &s) : s_(s), prog_(*s.prog) {}

  bool eval(uint32_t n, const frame &f, collection &out) {
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
        if ((v->kind == value_kind::integer && v->integer == INT64_MIN) ||
            (is_number(*v) && v->dec.digits == INT64_MIN))
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

  // --- errors and helpers ---
  bool fail(error_code c, uint32_t pos, std::string msg) {
    if (!s_.failed) {
      s_.failed = true;
      s_.err = quire::error(c, std::move(msg), pos);
    }
    return false;
  }
  bool type_error(uint32_t pos, std::string msg) { return fail(error_code::FHIRPATH_TYPE_ERROR, pos, std::move(msg)); }
  bool check_size(const collection &c, uint32_t pos) {
    if (c.size() > s_.lim.max_collection)
      return fail(error_code::DOCUMENT_TOO_LARGE, pos,
                  "a collection grew past max_collection (" + std::to_string(s_.lim.max_collection) + ")");
    return true;
  }
  const item *single(const collection &c, uint32_t pos, const char *what) {
    if (c.size() != 1) {
      type_error(pos, std::string(what) + " must be a single item, not " + std::to_string(c.size()));
      return nullptr;
    }
    return &c[0];
  }
  std::string_view keep(std::string s) {
    s_.strings.push_back(std::move(s));
    return s_.strings.back();
  }
  item string_item(std::string s) {
    item v;
    v.kind = value_kind::string;
    v.text = keep(std::move(s));
    return v;
  }

  // --- variables ---
  bool variable(const node &nd, collection &out) {
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

  // --- navigation ---
  bool member(const item &v, const node &nd, bool path_start, collection &out) {
    std::string_view name = nd.name;
    if (v.kind == value_kind::type_info) {
      if (name == "name") out.push_back(string_item(std::string(v.text)));
      else if (name == "namespace") out.push_back(string_item(std::string(v.text2)));
      return true;
    }
    uint16_t t = v.fhir_type;
    // A type name at the start of a path selects the context when it is of that type.
    if (nd.names_type && t != NO_FHIR_TYPE && t < fx::TYPE_COUNT && fx::TYPES[t].kind == fx::type_kind::resource) {
      const type_spec &ts = nd.type;
      {
        if (fhir_is_a(t, ts)) {
          out.push_back(v);
          return true;
        }
        if (path_start && ts.ns == type_spec::space::fhir && fx::TYPES[ts.fhir].kind == fx::type_kind::resource)
          return type_error(nd.pos,
                            std::string(name) + " does not match the context's type " + std::string(fhir_type_name(t)));
      }
    }
    if (v.has_companion && (name == "extension" || name == "id") &&
        (is_primitive_type(t) || !v.in_tape || v.node.type() != json::kind::object)) {
      auto o = v.companion.get_object();
      if (o) {
        auto m = o->find(name);
        if (m)
          push_json(&*m, nullptr, name == "id" ? fx::primitive_type(fx::primitive::string) : extension_type(), out);
      }
      return true;
    }
    if (!v.in_tape || v.node.type() != json::kind::object) return true;
    auto obj = v.node.get_object().value();
    bool typed = t != NO_FHIR_TYPE && t < fx::TYPE_COUNT && fx::TYPES[t].kind != fx::type_kind::primitive;
    std::optional<json::value> val, comp;
    uint16_t vt = NO_FHIR_TYPE;
    if (typed) {
      const member_slot &rule = member_rule(nd, t);
      if (rule.mode == member_mode::none) return no_member(nd, t);
      if (rule.mode == member_mode::exact) {
        // The keys the loop below would accept, compared by length first; the last of each wins,
        // as there.
        const size_t n = name.size();
        const char first = name[0];
        for (json::member m : obj) {
          std::string_view key = m.key;
          if (key.size() == n) {
            if (key[0] == first && std::memcmp(key.data(), name.data(), n) == 0) val = m.val;
          } else if (key.size() == n + 1 && key[0] == '_' && key[1] == first &&
                     std::memcmp(key.data() + 1, name.data(), n) == 0) {
            comp = m.val;
          }
        }
        if (!val && !comp) return true;
        push_json(val ? &*val : nullptr, comp ? &*comp : nullptr, rule.type, out);
        return true;
      }
    }
    for (json::member m : obj) {
      std::string_view key = m.key;
      bool underscore = !key.empty() && key[0] == '_';
      std::string_view base = underscore ? key.substr(1) : key;
      if (base.size() < name.size() || base[0] != name[0] || std::memcmp(base.data(), name.data(), name.size()) != 0)
        continue;
      bool exact = base.size() == name.size();
      if (!exact && !is_upper(base[name.size()])) continue;
      if (typed) {
        const fx::key_def *k = fx::find_key(t, base);
        if (!k) continue;
        const fx::element_def &e = fx::ELEMENTS[k->element];
        if (e.name.view() != name) continue;
        vt = k->type;
      } else if (!exact && (val || comp)) {
        continue;
      }
      if (underscore) comp = m.val;
      else val = m.val;
      if (!typed && !exact) vt = NO_FHIR_TYPE;
    }
    if (!val && !comp) return typed ? no_member(nd, t) : true;
    push_json(val ? &*val : nullptr, comp ? &*comp : nullptr, vt, out);
    return true;
  }

  // A name the type does not define gives an empty collection, as N1 asks of a path that finds
  // nothing (descendants() mixes types, so a stricter rule would reject valid paths)...
  bool no_member(const node &nd, uint16_t t) {
    std::string_view name = nd.name;
    // ...but `valueQuantity` is a JSON key, not a FHIRPath name: the element is `value` (FHIR R4,
    // "Choice of data types").
    const fx::key_def *k = fx::find_key(t, name);
    if (k && fx::ELEMENTS[k->element].is_choice)
      return type_error(nd.pos, std::string(name) + " is a JSON key of the choice element " +
                                    std::string(fx::ELEMENTS[k->element].name.view()) + "[x]: use " +
                                    std::string(fx::ELEMENTS[k->element].name.view()) + ".ofType(...)");
    return true;
  }

  // The keys of objects of type t that a member node's name matches: those whose element is named
  // so, as the general loop in member() finds them key by key (fx::find_key of each candidate).
  const member_slot &member_rule(const node &nd, uint16_t t) {
    const auto n = static_cast<uint32_t>(&nd - prog_.nodes.data());
    if (s_.members.empty()) s_.members.resize(512);
    const uint64_t h = (prog_.id * 0x9E3779B97F4A7C15ull) ^ (uint64_t{n} << 16) ^ t;
    // Two ways: a pair whose slot another pair of the same resource also uses would otherwise
    // miss on every resource (a miss scans the type's keys).
    const size_t i = (h ^ (h >> 29)) & (s_.members.size() - 2);
    auto hit = [&](const member_slot &m) { return m.program == prog_.id && m.node == n && m.fhir_type == t; };
    member_slot *found = hit(s_.members[i]) ? &s_.members[i] : hit(s_.members[i + 1]) ? &s_.members[i + 1] : nullptr;
    if (found && found->mode != member_mode::seen) return *found;
    if (!found) {
      // A pair met once costs only this slot: finding its rule (a binary search) pays back only
      // when it comes again, as a view's columns do on every resource; many of an invariant's
      // steps run once (and the general loop looks keys up only when the object has one).
      s_.members[i + 1] = s_.members[i];  // the newest in the first way, the one it displaces in the second
      member_slot &slot = s_.members[i];
      slot.program = prog_.id;
      slot.node = n;
      slot.fhir_type = t;
      slot.mode = member_mode::seen;
      return slot;
    }
    member_slot &slot = *found;
    std::string_view name = nd.name;
    const fx::type_def &td = fx::TYPES[t];
    // A key whose element is named `name` is `name` itself or `name` and a type (a choice): all
    // begin with `name`, and a type's keys are sorted, so they are the keys from lower_bound(name)
    // while the prefix holds. A miss costs one binary search, as one fx::find_key did.
    const fx::key_def *first = fx::KEYS + td.first_key, *last = first + td.key_count;
    const fx::key_def *k =
        std::lower_bound(first, last, name, [](const fx::key_def &d, std::string_view s) { return d.key.view() < s; });
    const fx::key_def *match = nullptr;
    size_t matches = 0;
    for (; k != last && k->key.view().substr(0, name.size()) == name; ++k) {
      if (fx::ELEMENTS[k->element].name.view() != name) continue;
      match = k;
      ++matches;
    }
    if (matches == 0) {
      slot.mode = member_mode::none;
    } else if (matches == 1 && match->key.view() == name) {
      slot.mode = member_mode::exact;
      slot.type = match->type;
    } else {
      slot.mode = member_mode::general;
    }
    return slot;
  }

  static uint16_t extension_type() {
    static const uint16_t t = [] {
      type_spec ts;
      return resolve_type("FHIR", "Extension", ts) ? ts.fhir : NO_FHIR_TYPE;
    }();
    return t;
  }

  // Every child element of an item (children()), with types.
  void children(const item &v, collection &out) {
    if (v.has_companion && (is_primitive_type(v.fhir_type) || !v.in_tape || v.node.type() != json::kind::object)) {
      auto o = v.companion.get_object();
      if (o) {
        for (json::member m : *o) {
          if (m.key == "extension") push_json(&m.val, nullptr, extension_type(), out);
          else if (m.key == "id") push_json(&m.val, nullptr, fx::primitive_type(fx::primitive::string), out);
        }
      }
      return;
    }
    if (!v.in_tape || v.node.type() != json::kind::object) return;
    auto obj = v.node.get_object().value();
    uint16_t t = v.fhir_type;
    bool typed = t != NO_FHIR_TYPE && t < fx::TYPE_COUNT && fx::TYPES[t].kind != fx::type_kind::primitive;
    // Most objects have no `_name` companion at all: then no key's companion need be searched for
    // (a scan of the object per key, which made children() quadratic in the object's size).
    bool companions = false;
    for (json::member m : obj) {
      if (!m.key.empty() && m.key[0] == '_') {
        companions = true;
        break;
      }
    }
    for (json::member m : obj) {
      std::string_view key = m.key;
      if (key == "resourceType") continue;
      if (!key.empty() && key[0] == '_') {
        // A companion on its own (no value member): the primitive exists through its extensions.
        std::string_view base = key.substr(1);
        if (obj.find(base)) continue;
        uint16_t vt = NO_FHIR_TYPE;
        if (typed) {
          const fx::key_def *k = fx::find_key(t, base);
          if (k) vt = k->type;
        }
        push_json(nullptr, &m.val, vt, out);
        continue;
      }
      uint16_t vt = NO_FHIR_TYPE;
      if (typed) {
        const fx::key_def *k = fx::find_key(t, key);
        if (k) vt = k->type;
      }
      std::optional<json::value> comp;
      if (companions && key.size() < 200) {
        char buf[201];
        buf[0] = '_';
        std::memcpy(buf + 1, key.data(), key.size());
        comp = obj.find(std::string_view(buf, key.size() + 1));
      }
      push_json(&m.val, comp ? &*comp : nullptr, vt, out);
    }
  }

  // --- types ---
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

  // --- values ---
  static bool is_number(const item &v) { return v.kind == value_kind::integer || v.kind == value_kind::decimal; }
  static bool is_moment(const item &v) {
    return v.kind == value_kind::date || v.kind == value_kind::date_time || v.kind == value_kind::time;
  }

  // A quantity from a System quantity or a FHIR Quantity element.
  static bool quantity_of(const item &v, decimal &value, std::string_view &unit) {
    if (v.kind == value_kind::quantity) {
      value = v.dec;
      unit = v.text;
      return true;
    }
    if (v.kind != value_kind::element || !v.in_tape || v.node.type() != json::kind::object) return false;
    auto o = v.node.get_object().value();
    auto val = o.find("value");
    if (!val || val->type() != json::kind::number) return false;
    if (!parse_decimal(val->get_number_text().value(), value)) return false;
    auto code = o.find("code");
    auto sys = o.find("system");
    auto u = o.find("unit");
    unit = {};
    if (code && code->type() == json::kind::string &&
        (!sys || (sys->type() == json::kind::string && sys->get_string().value() == "http://unitsofmeasure.org")))
      unit = code->get_string().value();
    else if (u && u->type() == json::kind::string) unit = u->get_string().value();
    else if (code && code->type() == json::kind::string) unit = code->get_string().value();
    return true;
  }
  bool is_quantity_like(const item &v) {
    if (v.kind == value_kind::quantity) return true;
    if (v.kind != value_kind::element || v.fhir_type == NO_FHIR_TYPE) return false;
    static const type_spec q = [] {
      type_spec t;
      resolve_type("FHIR", "Quantity", t);
      return t;
    }();
    return fhir_is_a(v.fhir_type, q);
  }

  // Units in one spelling for comparison: calendar words with an exact UCUM twin become that code.
  static std::string_view comparable_unit(std::string_view u, bool &calendar_year_month) {
    std::string_view c = calendar_unit(u);
    calendar_year_month = c == "year" || c == "month";
    if (!c.empty()) {
      std::string_view uc = ucum_for_calendar(c);
      return uc.empty() ? c : uc;
    }
    return u;
  }

  // Compares two quantities: -1/0/1, or 2 when not comparable.
  static int compare_quantities(decimal av, std::string_view au, decimal bv, std::string_view bu) {
    bool ya, yb;
    std::string_view ua = comparable_unit(au, ya), ub = comparable_unit(bu, yb);
    if (ya || yb) {
      if (calendar_unit(au) != calendar_unit(bu)) return 2;  // `1 year` vs 1 'a': not comparable
      return compare_decimal(av, bv);
    }
    if (ua == ub) return compare_decimal(av, bv);
    decimal conv;
    if (convert_units(bv, ub, ua, conv)) return compare_decimal(av, conv);
    return 2;
  }

  // = on two items: 1 true, 0 false, -1 empty.
  int equal_items(const item &a, const item &b) {
    if (is_number(a) && is_number(b)) return compare_decimal(a.dec, b.dec) == 0;
    if (a.kind == value_kind::string && b.kind == value_kind::string) return a.text == b.text;
    if (a.kind == value_kind::boolean && b.kind == value_kind::boolean) return a.boolean == b.boolean;
    if (is_moment(a) && is_moment(b)) {
      moment x, y;
      if (!parse_date_time(a.text, a.kind, x) || !parse_date_time(b.text, b.kind, y)) return a.text == b.text;
      int c = compare_moment(x, y);
      return c == 2 ? -1 : c == 0;
    }
    if (a.kind == value_kind::type_info && b.kind == value_kind::type_info)
      return a.text == b.text && a.text2 == b.text2;
    if ((a.kind == value_kind::quantity || b.kind == value_kind::quantity) && is_quantity_like(a) &&
        is_quantity_like(b)) {
      decimal av, bv;
      std::string_view au, bu;
      if (!quantity_of(a, av, au) || !quantity_of(b, bv, bu)) return 0;
      int c = compare_quantities(av, au, bv, bu);
      return c == 2 ? -1 : c == 0;
    }
    if (a.kind == value_kind::element && b.kind == value_kind::element) {
      if (a.in_tape && b.in_tape) return same_json(a.node, b.node);
      if (a.has_companion && b.has_companion) return same_json(a.companion, b.companion);
      return 0;
    }
    return 0;
  }

  static bool same_json(const json::value &a, const json::value &b) {
    if (a.type() != b.type()) return false;
    switch (a.type()) {
      case json::kind::null_value: return true;
      case json::kind::boolean: return a.get_bool().value() == b.get_bool().value();
      case json::kind::string: return a.get_string().value() == b.get_string().value();
      case json::kind::number: {
        decimal x, y;
        if (!parse_decimal(a.get_number_text().value(), x) || !parse_decimal(b.get_number_text().value(), y))
          return a.get_number_text().value() == b.get_number_text().value();
        return compare_decimal(x, y) == 0;
      }
      case json::kind::array: {
        auto x = a.get_array().value(), y = b.get_array().value();
        if (x.size() != y.size()) return false;
        auto i = x.begin(), j = y.begin();
        for (; i != x.end(); ++i, ++j)
          if (!same_json(*i, *j)) return false;
        return true;
      }
      case json::kind::object: {
        auto x = a.get_object().value(), y = b.get_object().value();
        if (x.size() != y.size()) return false;
        for (json::member m : x) {
          auto o = y.find(m.key);
          if (!o || !same_json(m.val, *o)) return false;
        }
        return true;
      }
    }
    return false;
  }

  static std::string normalize_space_lower(std::string_view s) {
    std::string out;
    bool space = false;
    for (char c : s) {
      if (c == ' ' || c == '\t' || c == '\n' || c == '\r') {
        space = true;
        continue;
      }
      if (space && !out.empty()) out += ' ';
      space = false;
      out += (c >= 'A' && c <= 'Z') ? static_cast<char>(c - 'A' + 'a') : c;
    }
    return out;
  }

  bool equivalent_items(const item &a, const item &b) {
    if (is_number(a) && is_number(b)) {
      decimal x = a.dec, y = b.dec;
      int32_t s = std::min(x.scale, y.scale);
      rescale(x, s);
      rescale(y, s);
      return compare_decimal(x, y) == 0;
    }
    if (a.kind == value_kind::string && b.kind == value_kind::string)
      return normalize_space_lower(a.text) == normalize_space_lower(b.text);
    if (is_moment(a) && is_moment(b)) {
      moment x, y;
      if (!parse_date_time(a.text, a.kind, x) || !parse_date_time(b.text, b.kind, y)) return false;
      return compare_moment(x, y) == 0;
    }
    if ((a.kind == value_kind::quantity || b.kind == value_kind::quantity) && is_quantity_like(a) &&
        is_quantity_like(b)) {
      decimal av, bv;
      std::string_view au, bu;
      if (!quantity_of(a, av, au) || !quantity_of(b, bv, bu)) return false;
      bool ya, yb;
      std::string_view ua = comparable_unit(au, ya), ub = comparable_unit(bu, yb);
      if (ya || yb) {
        // N1: calendar years and months are equivalent to the UCUM 'a' and 'mo'.
        std::string_view ca = calendar_unit(au), cb = calendar_unit(bu);
        std::string_view na = ca == "year"    ? "a"
                              : ca == "month" ? "mo"
                                              : ua,
                         nb = cb == "year"    ? "a"
                              : cb == "month" ? "mo"
                                              : ub;
        if (na != nb) return false;
        return compare_decimal(av, bv) == 0;
      }
      decimal conv;
      if (ua != ub && !convert_units(bv, ub, ua, conv)) return false;
      if (ua == ub) conv = bv;
      int32_t s = std::min(av.scale, conv.scale);
      rescale(av, s);
      rescale(conv, s);
      return compare_decimal(av, conv) == 0;
    }
    int e = equal_items(a, b);
    return e == 1;
  }

  // --- operators ---
  // Three-valued truth of a collection used as a boolean: -1 empty, 0 false, 1 true.
  int truth(const collection &c, uint32_t pos, bool &ok) {
    ok = true;
    if (c.empty()) return -1;
    if (c.size() > 1) {
      ok = type_error(pos, "a boolean operand must be a single item, not " + std::to_string(c.size()));
      return -1;
    }
    if (c[0].kind == value_kind::boolean) return c[0].boolean ? 1 : 0;
    return 1;  // N1 singleton evaluation: one item that is not a boolean counts as true
  }

  bool logic(const node &nd, const frame &f, collection &out) {
    scratch a(s_), b(s_);
    if (!eval(nd.a, f, *a)) return false;
    bool ok;
    int x = truth(*a, nd.pos, ok);
    if (!ok) return false;
    // Short-circuits (N1 allows it; the result is the same whenever the right side is defined).
    if (nd.kind == op::and_op && x == 0) return out.push_back(boolean_item(false)), true;
    if (nd.kind == op::or_op && x == 1) return out.push_back(boolean_item(true)), true;
    if (nd.kind == op::implies && x == 0) return out.push_back(boolean_item(true)), true;
    if (!eval(nd.b, f, *b)) return false;
    int y = truth(*b, nd.pos, ok);
    if (!ok) return false;
    int r = -1;
    switch (nd.kind) {
      case op::and_op: r = (x == 0 || y == 0) ? 0 : (x == 1 && y == 1) ? 1 : -1; break;
      case op::or_op: r = (x == 1 || y == 1) ? 1 : (x == 0 && y == 0) ? 0 : -1; break;
      case op::xor_op: r = (x < 0 || y < 0) ? -1 : (x != y); break;
      case op::implies: r = x == 1 ? y : (y == 1 ? 1 : -1); break;
      default: break;
    }
    if (r >= 0) out.push_back(boolean_item(r == 1));
    return true;
  }

  // Set operations compare pairwise; their total cost is bounded by limits::max_comparisons
  // (past it the evaluation fails, and callers return false once s_.failed is set).
  bool contains_item(const collection &c, const item &v, size_t from = 0) {
    if (from < c.size()) {
      s_.comparisons += c.size() - from;
      if (s_.comparisons > s_.lim.max_comparisons) {
        fail(
            error_code::DOCUMENT_TOO_LARGE, 0,
            "set operations compared more than max_comparisons (" + std::to_string(s_.lim.max_comparisons) + ") pairs");
        return false;
      }
    }
    for (size_t i = from; i < c.size(); ++i)
      if (equal_items(c[i], v) == 1) return true;
    return false;
  }

  bool binary(const node &nd, const frame &f, collection &out) {
    scratch a(s_), b(s_);
    if (!eval(nd.a, f, *a) || !eval(nd.b, f, *b)) return false;
    switch (nd.kind) {
      case op::union_set: {
        size_t start = out.size();
        for (const collection *c : {&*a, &*b})
          for (const item &v : *c)
            if (!contains_item(out, v, start)) out.push_back(v);
        return !s_.failed && check_size(out, nd.pos);
      }
      case op::eq:
      case op::ne: {
        if (a->empty() || b->empty()) return true;
        int r = 1;
        if (a->size() != b->size()) {
          r = 0;
        } else {
          for (size_t i = 0; i < a->size() && r != 0; ++i) {
            int e = equal_items((*a)[i], (*b)[i]);
            if (e == 0) r = 0;
            else if (e < 0) r = -1;
          }
        }
        if (r < 0) return true;
        out.push_back(boolean_item(nd.kind == op::eq ? r == 1 : r == 0));
        return true;
      }
      case op::equiv:
      case op::nequiv: {
        bool r = a->size() == b->size();
        if (r) {
          std::vector<bool> used(b->size(), false);
          for (const item &x : *a) {
            bool found = false;
            for (size_t j = 0; j < b->size(); ++j) {
              if (!used[j] && equivalent_items(x, (*b)[j])) {
                used[j] = found = true;
                break;
              }
            }
            if (!found) {
              r = false;
              break;
            }
          }
        }
        out.push_back(boolean_item(nd.kind == op::equiv ? r : !r));
        return true;
      }
      case op::in_set:
      case op::contains_set: {
        collection &needle = nd.kind == op::in_set ? *a : *b;
        collection &hay = nd.kind == op::in_set ? *b : *a;
        if (needle.empty()) return true;
        const item *v =
            single(needle, nd.pos, nd.kind == op::in_set ? "the left operand of in" : "the right operand of contains");
        if (!v) return false;
        out.push_back(boolean_item(contains_item(hay, *v)));
        return !s_.failed;
      }
      case op::concat: {
        if (a->size() > 1 || b->size() > 1) return type_error(nd.pos, "& needs single items");
        std::string s;
        for (const collection *c : {&*a, &*b}) {
          if (c->empty()) continue;
          const item &v = (*c)[0];
          if (v.kind != value_kind::string) return type_error(nd.pos, "& needs strings, not " + type_name(v));
          s += v.text;
        }
        out.push_back(string_item(std::move(s)));
        return true;
      }
      default: break;
    }
    if (a->empty() || b->empty()) return true;
    const char *what = "an operand";
    const item *x = single(*a, nd.pos, what);
    if (!x) return false;
    const item *y = single(*b, nd.pos, what);
    if (!y) return false;
    switch (nd.kind) {
      case op::lt:
      case op::gt:
      case op::le:
      case op::ge: return compare(nd, *x, *y, out);
      default: return arithmetic(nd, *x, *y, out);
    }
  }

  bool compare(const node &nd, const item &x, const item &y, collection &out) {
    int c;
    if (is_number(x) && is_number(y)) {
      c = compare_decimal(x.dec, y.dec);
    } else if (x.kind == value_kind::string && y.kind == value_kind::string) {
      c = x.text < y.text ? -1 : x.text > y.text ? 1 : 0;
    } else if (is_moment(x) && is_moment(y)) {
      moment m1, m2;
      if (!parse_date_time(x.text, x.kind, m1) || !parse_date_time(y.text, y.kind, m2))
        return type_error(nd.pos, "cannot compare these dates");
      c = compare_moment(m1, m2);
      if (c == 3) return type_error(nd.pos, "cannot compare a time of day with a date");
      if (c == 2) return true;
    } else if (is_quantity_like(x) && is_quantity_like(y)) {
      decimal av, bv;
      std::string_view au, bu;
      if (!quantity_of(x, av, au) || !quantity_of(y, bv, bu)) return true;
      c = compare_quantities(av, au, bv, bu);
      if (c == 2) return true;
    } else {
      return type_error(nd.pos, "cannot compare " + type_name(x) + " with " + type_name(y));
    }
    bool r = nd.kind == op::lt ? c < 0 : nd.kind == op::gt ? c > 0 : nd.kind == op::le ? c <= 0 : c >= 0;
    out.push_back(boolean_item(r));
    return true;
  }

  item quantity_item(decimal v, std::string_view unit) {
    item q;
    q.kind = value_kind::quantity;
    q.dec = v;
    q.text = keep(std::string(unit));
    return q;
  }

  bool arithmetic(const node &nd, const item &x, const item &y, collection &out) {
    op k = nd.kind;
    if (x.kind == value_kind::integer && y.kind == value_kind::integer && k != op::div) {
      int64_t r = 0;
      bool overflow = false;
      switch (k) {
        case op::add: overflow = __builtin_add_overflow(x.integer, y.integer, &r); break;
        case op::sub: overflow = __builtin_sub_overflow(x.integer, y.integer, &r); break;
        case op::mul: overflow = __builtin_mul_overflow(x.integer, y.integer, &r); break;
        case op::idiv:
          if (y.integer == 0 || (x.integer == INT64_MIN && y.integer == -1)) return true;
          r = x.integer / y.integer;
          break;
        case op::mod:
          if (y.integer == 0 || (x.integer == INT64_MIN && y.integer == -1)) return true;
          r = x.integer % y.integer;
          break;
        default: return type_error(nd.pos, "unsupported operator");
      }
      if (!overflow) out.push_back(integer_item(r));
      return true;
    }
    if (is_number(x) && is_number(y)) {
      decimal r;
      bool ok = true;
      switch (k) {
        case op::add: ok = add_decimal(x.dec, y.dec, r, false); break;
        case op::sub: ok = add_decimal(x.dec, y.dec, r, true); break;
        case op::mul: ok = mul_decimal(x.dec, y.dec, r); break;
        case op::div: ok = div_decimal(x.dec, y.dec, r); break;
        case op::idiv:
        case op::mod: {
          if (y.dec.digits == 0) return true;
          decimal q;
          if (!div_decimal(x.dec, y.dec, q)) return true;
          rescale(q, q.scale);
          // Truncate toward zero.
          decimal t = q;
          if (t.scale < 0 && !rescale(t, 0)) return true;
          while (t.scale > 0) {
            t.digits /= 10;
            --t.scale;
          }
          if (k == op::idiv) {
            out.push_back(integer_item(t.digits));
            return true;
          }
          decimal prod;
          ok = mul_decimal(t, y.dec, prod) && add_decimal(x.dec, prod, r, true);
          break;
        }
        default: return type_error(nd.pos, "unsupported operator");
      }
      if (ok) out.push_back(decimal_item(r));
      return true;
    }
    if (x.kind == value_kind::string && y.kind == value_kind::string && k == op::add) {
      if (x.text.size() + y.text.size() > s_.lim.max_string_bytes)
        return fail(error_code::DOCUMENT_TOO_LARGE, nd.pos, "a string grew past max_string_bytes");
      out.push_back(string_item(std::string(x.text) + std::string(y.text)));
      return true;
    }
    if (is_moment(x) && is_quantity_like(y) && (k == op::add || k == op::sub)) {
      decimal v;
      std::string_view unit;
      if (!quantity_of(y, v, unit)) return true;
      std::string_view cal = calendar_unit(unit);
      if (cal.empty()) {
        static const std::pair<std::string_view, std::string_view> UCUM[] = {
            {"wk", "week"}, {"d", "day"}, {"h", "hour"}, {"min", "minute"}, {"s", "second"}, {"ms", "millisecond"}};
        for (auto &p : UCUM)
          if (unit == p.first) cal = p.second;
      }
      if (cal.empty())
        return type_error(nd.pos, "cannot add '" + std::string(unit) + "' to a date (only calendar durations)");
      moment m;
      if (!parse_date_time(x.text, x.kind, m)) return type_error(nd.pos, "bad date");
      while (v.scale > 0) {  // whole units only (N1: decimal values are truncated)
        v.digits /= 10;
        --v.scale;
      }
      int64_t amount = k == op::sub ? -v.digits : v.digits;
      if (!add_to_moment(m, amount, cal)) return true;
      item r;
      r.kind = x.kind;
      r.text = keep(moment_text(m));
      out.push_back(r);
      return true;
    }
    if (is_quantity_like(x) && is_quantity_like(y)) {
      decimal av, bv, r;
      std::string_view au, bu;
      if (!quantity_of(x, av, au) || !quantity_of(y, bv, bu)) return true;
      if (k == op::add || k == op::sub) {
        decimal conv;
        if (au != bu && !convert_units(bv, bu, au, conv)) return true;
        if (au == bu) conv = bv;
        if (add_decimal(av, conv, r, k == op::sub)) out.push_back(quantity_item(r, au));
        return true;
      }
      if (k == op::mul || k == op::div) {
        // Operands of one dimension are brought to its base unit first (cm × m → m2).
        std::string unit;
        std::string_view base = base_unit(au);
        decimal ca = av, cb = bv;
        if (au == bu) {
          unit = k == op::mul ? std::string(au) + "2" : "1";
        } else if (!base.empty() && base == base_unit(bu) && convert_units(av, au, base, ca) &&
                   convert_units(bv, bu, base, cb)) {
          unit = k == op::mul ? std::string(base) + "2" : "1";
        } else {
          unit = std::string(au) + (k == op::mul ? "." : "/") + std::string(bu);
        }
        bool ok = k == op::mul ? mul_decimal(ca, cb, r) : div_decimal(ca, cb, r);
        if (ok) out.push_back(quantity_item(r, unit));
        return true;
      }
    }
    if (is_quantity_like(x) && is_number(y) && (k == op::mul || k == op::div)) {
      decimal av, r;
      std::string_view au;
      if (!quantity_of(x, av, au)) return true;
      bool ok = k == op::mul ? mul_decimal(av, y.dec, r) : div_decimal(av, y.dec, r);
      if (ok) out.push_back(quantity_item(r, au));
      return true;
    }
    if (is_number(x) && is_quantity_like(y) && k == op::mul) {
      decimal bv, r;
      std::string_view bu;
      if (!quantity_of(y, bv, bu)) return true;
      if (mul_decimal(x.dec, bv, r)) out.push_back(quantity_item(r, bu));
      return true;
    }
    return type_error(nd.pos, "cannot apply the operator to " + type_name(x) + " and " + type_name(y));
  }

  // --- functions (below: they share the helpers above) ---
  bool call(const node &nd, const frame &f, collection &out);
  bool string_function(const node &nd, const frame &f, const collection &in, collection &out);
  bool math_function(const node &nd, const collection &in, collection &out);
  bool conversion_function(const node &nd, const collection &in, collection &out);
  bool boundary_function(const node &nd, const frame &f, const collection &in, collection &out);

  bool arg(const node &nd, uint32_t i, const frame &f, collection &out) {
    return eval(prog_.args[nd.first_arg + i], f, out);
  }
  // Evaluates argument i once (relative to the outer $this) and takes its single item, if any.
  bool arg_single(const node &nd, uint32_t i, const frame &f, collection &buf, const item *&v) {
    v = nullptr;
    if (!arg(nd, i, f, buf)) return false;
    if (buf.empty()) return true;
    v = single(buf, nd.pos, "the argument");
    return v != nullptr;
  }
  bool arg_integer(const node &nd, uint32_t i, const frame &f, collection &buf, bool &present, int64_t &value) {
    const item *v;
    present = false;
    if (!arg_single(nd, i, f, buf, v)) return false;
    if (!v) return true;
    if (v->kind != value_kind::integer) return type_error(nd.pos, nd.name + "() needs an integer argument");
    present = true;
    value = v->integer;
    return true;
  }
  bool arg_string(const node &nd, uint32_t i, const frame &f, collection &buf, bool &present, std::string_view &value) {
    const item *v;
    present = false;
    if (!arg_single(nd, i, f, buf, v)) return false;
    if (!v) return true;
    if (v->kind != value_kind::string) return type_error(nd.pos, nd.name + "() needs a string argument");
    present = true;
    value = v->text;
    return true;
  }

  state &s_;
  const expression::program &prog_;
};

// -------------------------------------------------------------------------------------------
// Functions

bool engine::call(const node &nd, const frame &f, collection &out) {
  scratch in_buf(s_);
  collection &in = *in_buf;
  if (nd.a == NONE) {
    in.assign(f.this_items, f.this_items + f.this_count);
  } else if (!eval(nd.a, f, in)) {
    return false;
  }
  auto per_item = [&](size_t i) {
    frame g;
    g.this_items = &in[i];
    g.this_count = 1;
    g.index = static_cast<int64_t>(i);
    return g;
  };
  switch (nd.function) {
    case fn::empty: out.push_back(boolean_item(in.empty())); return true;
    case fn::exists:
      if (nd.arg_count == 0) {
        out.push_back(boolean_item(!in.empty()));
        return true;
      }
      [[fallthrough]];
    case fn::where: {
      bool any = false;
      for (size_t i = 0; i < in.size(); ++i) {
        scratch r(s_);
        frame g = per_item(i);
        if (!arg(nd, 0, g, *r)) return false;
        bool ok;
        int t = truth(*r, nd.pos, ok);
        if (!ok) return false;
        if (t == 1) {
          if (nd.function == fn::exists) {
            any = true;
            break;
          }
          out.push_back(in[i]);
        }
      }
      if (nd.function == fn::exists) out.push_back(boolean_item(any));
      return true;
    }
    case fn::all: {
      bool all = true;
      for (size_t i = 0; i < in.size() && all; ++i) {
        scratch r(s_);
        frame g = per_item(i);
        if (!arg(nd, 0, g, *r)) return false;
        bool ok;
        int t = truth(*r, nd.pos, ok);
        if (!ok) return false;
        if (t != 1) all = false;
      }
      out.push_back(boolean_item(all));
      return true;
    }
    case fn::allTrue:
    case fn::anyTrue:
    case fn::allFalse:
    case fn::anyFalse: {
      bool want = nd.function == fn::allTrue || nd.function == fn::anyTrue;
      bool every = nd.function == fn::allTrue || nd.function == fn::allFalse;
      bool r = every;
      for (const item &v : in) {
        if (v.kind != value_kind::boolean)
          return type_error(nd.pos, nd.name + "() needs booleans, not " + type_name(v));
        if (every && v.boolean != want) r = false;
        if (!every && v.boolean == want) r = true;
      }
      out.push_back(boolean_item(r));
      return true;
    }
    case fn::subsetOf:
    case fn::supersetOf: {
      scratch other(s_);
      if (!arg(nd, 0, f, *other)) return false;
      const collection &sub = nd.function == fn::subsetOf ? in : *other;
      const collection &sup = nd.function == fn::subsetOf ? *other : in;
      bool r = true;
      for (const item &v : sub)
        if (!contains_item(sup, v)) {
          r = false;
          break;
        }
      out.push_back(boolean_item(r));
      return !s_.failed;
    }
    case fn::count: out.push_back(integer_item(static_cast<int64_t>(in.size()))); return true;
    case fn::distinct: {
      size_t start = out.size();
      for (const item &v : in)
        if (!contains_item(out, v, start)) out.push_back(v);
      return !s_.failed;
    }
    case fn::isDistinct: {
      // Strings are equal only when their texts are: sorting them is exact and n·log n, where the
      // pairwise loop below is quadratic (FHIR's bdl-7 asks it of every Bundle's fullUrls).
      if (in.size() > 16 &&
          std::all_of(in.begin(), in.end(), [](const item &v) { return v.kind == value_kind::string; })) {
        std::vector<std::string_view> texts;
        texts.reserve(in.size());
        for (const item &v : in) texts.push_back(v.text);
        std::sort(texts.begin(), texts.end());
        out.push_back(boolean_item(std::adjacent_find(texts.begin(), texts.end()) == texts.end()));
        return true;
      }
      scratch seen(s_);
      bool r = true;
      for (const item &v : in) {
        if (contains_item(*seen, v)) {
          r = false;
          break;
        }
        seen->push_back(v);
      }
      out.push_back(boolean_item(r));
      return !s_.failed;
    }
    case fn::select:
      for (size_t i = 0; i < in.size(); ++i) {
        frame g = per_item(i);
        if (!arg(nd, 0, g, out)) return false;
        if (!check_size(out, nd.pos)) return false;
      }
      return true;
    case fn::repeat:
    case fn::descendants: {
      // Breadth first; an item already in the output is not expanded again (N1: repeat() stops
      // when no new items are found), and the output is bounded by max_collection.
      scratch queue(s_);
      std::unordered_set<uint64_t> seen;
      queue->assign(in.begin(), in.end());
      size_t head = 0;
      size_t start = out.size();
      while (head < queue->size()) {
        item cur = (*queue)[head++];
        scratch next(s_);
        if (nd.function == fn::repeat) {
          frame g;
          g.this_items = &cur;
          g.this_count = 1;
          if (!arg(nd, 0, g, *next)) return false;
        } else {
          children(cur, *next);
        }
        for (const item &v : *next) {
          if (nd.function == fn::repeat) {
            // Items of the resource are the same when they are at the same place; computed ones
            // are compared by value (bounded by max_comparisons).
            if (v.in_tape) {
              if (!seen.insert(v.node.offset()).second) continue;
            } else {
              scratch computed_only(s_);
              for (size_t j = start; j < out.size(); ++j)
                if (!out[j].in_tape) computed_only->push_back(out[j]);
              bool dup = contains_item(*computed_only, v);
              if (s_.failed) return false;
              if (dup) continue;
            }
          }
          out.push_back(v);
          queue->push_back(v);
          if (!check_size(out, nd.pos)) return false;
        }
      }
      return true;
    }
    case fn::children:
      for (const item &v : in) children(v, out);
      return check_size(out, nd.pos);
    case fn::ofType:
      for (const item &v : in)
        if (is_a(v, nd.type)) out.push_back(v);
      return true;
    case fn::is_fn:
    case fn::as_fn: {
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
    case fn::single:
      if (in.size() > 1) return type_error(nd.pos, "single() on " + std::to_string(in.size()) + " items");
      out.insert(out.end(), in.begin(), in.end());
      return true;
    case fn::first:
      if (!in.empty()) out.push_back(in.front());
      return true;
    case fn::last:
      if (!in.empty()) out.push_back(in.back());
      return true;
    case fn::tail:
      if (in.size() > 1) out.insert(out.end(), in.begin() + 1, in.end());
      return true;
    case fn::skip:
    case fn::take: {
      scratch a(s_);
      bool present;
      int64_t n = 0;
      if (!arg_integer(nd, 0, f, *a, present, n)) return false;
      if (!present) return true;
      size_t k = n <= 0 ? 0 : std::min<size_t>(static_cast<size_t>(n), in.size());
      if (nd.function == fn::skip) out.insert(out.end(), in.begin() + static_cast<std::ptrdiff_t>(k), in.end());
      else out.insert(out.end(), in.begin(), in.begin() + static_cast<std::ptrdiff_t>(k));
      return true;
    }
    case fn::intersect: {
      scratch other(s_);
      if (!arg(nd, 0, f, *other)) return false;
      size_t start = out.size();
      for (const item &v : in)
        if (contains_item(*other, v) && !contains_item(out, v, start)) out.push_back(v);
      return !s_.failed;
    }
    case fn::exclude: {
      scratch other(s_);
      if (!arg(nd, 0, f, *other)) return false;
      for (const item &v : in)
        if (!contains_item(*other, v)) out.push_back(v);
      return !s_.failed;
    }
    case fn::union_fn:
    case fn::combine: {
      scratch other(s_);
      if (!arg(nd, 0, f, *other)) return false;
      if (nd.function == fn::combine) {
        out.insert(out.end(), in.begin(), in.end());
        out.insert(out.end(), other->begin(), other->end());
        return check_size(out, nd.pos);
      }
      size_t start = out.size();
      for (const collection *c : {&in, &other.get()})
        for (const item &v : *c)
          if (!contains_item(out, v, start)) out.push_back(v);
      return !s_.failed && check_size(out, nd.pos);
    }
    case fn::iif: {
      if (in.size() > 1) return type_error(nd.pos, "iif() on " + std::to_string(in.size()) + " items");
      frame g = f;
      if (nd.a != NONE) {
        g.this_items = in.data();
        g.this_count = in.size();
      }
      scratch c(s_);
      if (!arg(nd, 0, g, *c)) return false;
      if (c->size() > 1) return type_error(nd.pos, "the criterion of iif() must be a single boolean");
      if (c->size() == 1 && (*c)[0].kind != value_kind::boolean)
        return type_error(nd.pos, "the criterion of iif() must be a boolean");
      bool yes = c->size() == 1 && (*c)[0].boolean;
      if (yes) return arg(nd, 1, g, out);
      if (nd.arg_count > 2) return arg(nd, 2, g, out);
      return true;
    }
    case fn::not_fn: {
      if (in.empty()) return true;
      bool ok;
      int t = truth(in, nd.pos, ok);
      if (!ok) return false;
      out.push_back(boolean_item(t == 0));
      return true;
    }
    case fn::trace: return out.insert(out.end(), in.begin(), in.end()), true;
    case fn::type:
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
    case fn::aggregate: {
      scratch total(s_), next(s_);
      if (nd.arg_count > 1 && !arg(nd, 1, f, *total)) return false;
      for (size_t i = 0; i < in.size(); ++i) {
        frame g = per_item(i);
        g.total = &total.get();
        next->clear();
        if (!arg(nd, 0, g, *next)) return false;
        std::swap(*total, *next);
      }
      out.insert(out.end(), total->begin(), total->end());
      return true;
    }
    case fn::sort: {
      std::vector<size_t> order(in.size());
      for (size_t i = 0; i < order.size(); ++i) order[i] = i;
      // Keys per item and per argument; a leading unary minus sorts that key descending.
      size_t nk = nd.arg_count;
      std::vector<item> keys(in.size() * std::max<size_t>(nk, 1));
      std::vector<bool> has(keys.size(), false);
      std::vector<bool> desc(std::max<size_t>(nk, 1), false);
      for (size_t k = 0; k < nk; ++k) {
        uint32_t an = prog_.args[nd.first_arg + k];
        if (prog_.nodes[an].kind == op::negate) {
          desc[k] = true;
          an = prog_.nodes[an].a;
        }
        for (size_t i = 0; i < in.size(); ++i) {
          scratch r(s_);
          frame g = per_item(i);
          if (!eval(an, g, *r)) return false;
          if (r->size() > 1) return type_error(nd.pos, "a sort key must be a single item");
          if (r->size() == 1) {
            keys[i * nk + k] = (*r)[0];
            has[i * nk + k] = true;
          }
        }
      }
      if (nk == 0) {
        for (size_t i = 0; i < in.size(); ++i) {
          keys[i] = in[i];
          has[i] = true;
        }
        nk = 1;
      }
      bool bad = false;
      auto cmp_items = [&](const item &x, const item &y) -> int {
        if (is_number(x) && is_number(y)) return compare_decimal(x.dec, y.dec);
        if (x.kind == value_kind::string && y.kind == value_kind::string) return x.text < y.text ? -1 : x.text > y.text;
        if (is_moment(x) && is_moment(y)) {
          moment a, b;
          if (parse_date_time(x.text, x.kind, a) && parse_date_time(y.text, y.kind, b)) {
            int c = compare_moment(a, b);
            return c >= 2 ? 0 : c;
          }
        }
        if (x.kind == value_kind::boolean && y.kind == value_kind::boolean) return int(x.boolean) - int(y.boolean);
        bad = true;
        return 0;
      };
      std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) {
        for (size_t k = 0; k < nk; ++k) {
          bool ha = has[a * nk + k], hb = has[b * nk + k];
          if (!ha || !hb) {
            if (ha != hb) return desc[k] ? ha : hb;  // empty keys first
            continue;
          }
          int c = cmp_items(keys[a * nk + k], keys[b * nk + k]);
          if (c != 0) return desc[k] ? c > 0 : c < 0;
        }
        return false;
      });
      if (bad) return type_error(nd.pos, "sort() keys of types that cannot be ordered");
      for (size_t i : order) out.push_back(in[i]);
      return true;
    }
    case fn::extension: {
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
    case fn::hasValue:
    case fn::getValue: {
      bool has = in.size() == 1 && in[0].kind != value_kind::element && in[0].kind != value_kind::type_info;
      if (nd.function == fn::hasValue) out.push_back(boolean_item(has));
      else if (has) out.push_back(in[0]);
      return true;
    }
    case fn::conformsTo: {
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
    case fn::now:
    case fn::today:
    case fn::timeOfDay: {
      auto now = std::chrono::system_clock::now();
      int64_t ms = std::chrono::duration_cast<std::chrono::milliseconds>(now.time_since_epoch()).count();
      moment m;
      m.year = 1970;
      m.has_tz = true;
      m.precision = 3;
      add_to_moment(m, ms / 86400000, "day");
      int64_t rest = ms % 86400000;
      m.hour = static_cast<int>(rest / 3600000);
      m.minute = static_cast<int>(rest / 60000 % 60);
      m.second = static_cast<int>(rest / 1000 % 60);
      m.millis = static_cast<int>(rest % 1000);
      item v;
      if (nd.function == fn::today) {
        v.kind = value_kind::date;
      } else if (nd.function == fn::now) {
        m.precision = 7;
        v.kind = value_kind::date_time;
      } else {
        m.precision = 7;
        m.is_time = true;
        v.kind = value_kind::time;
      }
      v.text = keep(moment_text(m));
      out.push_back(v);
      return true;
    }
    case fn::getResourceKey: {
      for (const item &v : in) {
        if (!v.in_tape || v.node.type() != json::kind::object) continue;
        auto id = v.node.get_object().value().find("id");
        if (id && id->type() == json::kind::string)
          out.push_back(make_item(*id, fx::primitive_type(fx::primitive::id), nullptr));
      }
      return true;
    }
    case fn::getReferenceKey: {
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
    case fn::resolve:
    case fn::memberOf:
    case fn::subsumes:
    case fn::subsumedBy:
    case fn::htmlChecks:
    case fn::elementDefinition:
    case fn::checkModifiers:
      return fail(error_code::INVALID_ARGUMENT, nd.pos,
                  nd.name + "() needs a terminology server or a resolver, which quire does not have");
    case fn::lowBoundary:
    case fn::highBoundary:
    case fn::precision:
    case fn::comparable: return boundary_function(nd, f, in, out);
    case fn::abs:
    case fn::ceiling:
    case fn::exp:
    case fn::floor:
    case fn::ln:
    case fn::log:
    case fn::power:
    case fn::round:
    case fn::sqrt:
    case fn::truncate: {
      if (nd.function == fn::log || nd.function == fn::power || nd.function == fn::round) {
        // Arguments are evaluated once, relative to the outer $this.
        scratch a(s_);
        if (nd.arg_count && !arg(nd, 0, f, *a)) return false;
        if (nd.arg_count && a->empty()) return true;
        if (a->size() > 1) return type_error(nd.pos, nd.name + "() needs a single argument");
        collection both;
        both.assign(in.begin(), in.end());
        if (nd.arg_count) both.push_back((*a)[0]);
        return math_function(nd, both, out);
      }
      return math_function(nd, in, out);
    }
    default: break;
  }
  if (nd.function >= fn::toBoolean && nd.function <= fn::convertsToQuantity) return conversion_function(nd, in, out);
  return string_function(nd, f, in, out);
}

bool engine::math_function(const node &nd, const collection &in, collection &out) {
  bool with_arg = nd.arg_count > 0;
  size_t n_in = in.size() - (with_arg ? 1 : 0);
  if (n_in == 0) return true;
  if (n_in > 1) return type_error(nd.pos, nd.name + "() on " + std::to_string(n_in) + " items");
  const item &v = in[0];
  const item *a = with_arg ? &in[1] : nullptr;
  if (nd.function == fn::abs && v.dec.digits == INT64_MIN) return true;  // no positive twin: empty
  if (nd.function == fn::abs && v.kind == value_kind::quantity) {
    item q = v;
    if (q.dec.digits < 0) q.dec.digits = -q.dec.digits;
    out.push_back(q);
    return true;
  }
  if (!is_number(v)) return type_error(nd.pos, nd.name + "() needs a number, not " + type_name(v));
  if (a && !is_number(*a)) return type_error(nd.pos, nd.name + "() needs a number argument");
  switch (nd.function) {
    case fn::abs:
      if (v.kind == value_kind::integer) {
        if (v.integer != INT64_MIN) out.push_back(integer_item(v.integer < 0 ? -v.integer : v.integer));
      } else {
        out.push_back(decimal_item(decimal{v.dec.digits < 0 ? -v.dec.digits : v.dec.digits, v.dec.scale}));
      }
      return true;
    case fn::ceiling:
    case fn::floor:
    case fn::truncate: {
      decimal d = v.dec;
      if (d.scale < 0 && !rescale(d, 0)) return true;  // a huge value beyond 64 bits: empty
      int64_t p = 1;
      for (int i = 0; i < d.scale; ++i) p *= 10;
      int64_t q = d.digits / p, r = d.digits % p;
      if (nd.function == fn::ceiling && r > 0) ++q;
      if (nd.function == fn::floor && r < 0) --q;
      out.push_back(integer_item(q));
      return true;
    }
    case fn::round: {
      int64_t places = 0;
      if (a) {
        if (a->kind != value_kind::integer || a->integer < 0)
          return type_error(nd.pos, "round() needs a non-negative integer");
        places = std::min<int64_t>(a->integer, 18);
      }
      decimal d = v.dec;
      if (d.scale > places) rescale(d, static_cast<int32_t>(places));
      out.push_back(decimal_item(d));
      return true;
    }
    case fn::sqrt:
    case fn::exp:
    case fn::ln:
    case fn::log:
    case fn::power: {
      if (nd.function == fn::power && v.kind == value_kind::integer && a->kind == value_kind::integer &&
          a->integer >= 0) {
        int64_t r = 1;
        for (int64_t i = 0; i < a->integer; ++i) {
          if (__builtin_mul_overflow(r, v.integer, &r)) return true;
          if (r == 0 || r == 1) break;
        }
        out.push_back(integer_item(r));
        return true;
      }
      double x = decimal_to_double(v.dec), r;
      switch (nd.function) {
        case fn::sqrt: r = std::sqrt(x); break;
        case fn::exp: r = std::exp(x); break;
        case fn::ln: r = std::log(x); break;
        case fn::log: r = std::log(x) / std::log(decimal_to_double(a->dec)); break;
        default: r = std::pow(x, decimal_to_double(a->dec)); break;
      }
      decimal d;
      if (double_to_decimal(r, d)) out.push_back(decimal_item(d));
      return true;
    }
    default: return type_error(nd.pos, "unsupported math function");
  }
}

namespace {
bool parse_integer_text(std::string_view s, int64_t &out) {
  size_t i = 0;
  bool neg = false;
  if (i < s.size() && (s[i] == '+' || s[i] == '-')) neg = s[i++] == '-';
  if (i == s.size()) return false;
  int64_t v = 0;
  for (; i < s.size(); ++i) {
    if (s[i] < '0' || s[i] > '9') return false;
    if (__builtin_mul_overflow(v, 10, &v) || __builtin_add_overflow(v, s[i] - '0', &v)) return false;
  }
  out = neg ? -v : v;
  return true;
}
// toDecimal() and toQuantity() accept N1's decimal form: a sign, digits, a fraction, no exponent.
bool decimal_text_ok(std::string_view s) {
  quire::detail::decimal_text parts;
  return quire::detail::split_decimal_text(s, quire::detail::DECIMAL_PLUS, parts);
}
}  // namespace

bool engine::conversion_function(const node &nd, const collection &in, collection &out) {
  if (in.empty()) return true;
  const item *vp = single(in, nd.pos, ("the input of " + nd.name + "()").c_str());
  if (!vp) return false;
  const item &v = *vp;
  bool converts = false;
  item r;
  switch (nd.function) {
    case fn::toBoolean:
    case fn::convertsToBoolean:
      if (v.kind == value_kind::boolean) {
        r = boolean_item(v.boolean);
        converts = true;
      } else if (v.kind == value_kind::integer && (v.integer == 0 || v.integer == 1)) {
        r = boolean_item(v.integer == 1);
        converts = true;
      } else if (v.kind == value_kind::decimal &&
                 (compare_decimal(v.dec, {0, 0}) == 0 || compare_decimal(v.dec, {1, 0}) == 0)) {
        r = boolean_item(compare_decimal(v.dec, {1, 0}) == 0);
        converts = true;
      } else if (v.kind == value_kind::string) {
        std::string l = normalize_space_lower(v.text);
        if (l == "true" || l == "t" || l == "yes" || l == "y" || l == "1" || l == "1.0") {
          r = boolean_item(true);
          converts = true;
        } else if (l == "false" || l == "f" || l == "no" || l == "n" || l == "0" || l == "0.0") {
          r = boolean_item(false);
          converts = true;
        }
      }
      break;
    case fn::toInteger:
    case fn::convertsToInteger:
      if (v.kind == value_kind::integer) {
        r = integer_item(v.integer);
        converts = true;
      } else if (v.kind == value_kind::boolean) {
        r = integer_item(v.boolean ? 1 : 0);
        converts = true;
      } else if (v.kind == value_kind::string) {
        int64_t i;
        if (parse_integer_text(v.text, i)) {
          r = integer_item(i);
          converts = true;
        }
      }
      break;
    case fn::toDecimal:
    case fn::convertsToDecimal:
      if (is_number(v)) {
        r = decimal_item(v.dec);
        converts = true;
      } else if (v.kind == value_kind::boolean) {
        r = decimal_item(decimal{v.boolean ? 1 : 0, 0});
        converts = true;
      } else if (v.kind == value_kind::string && decimal_text_ok(v.text)) {
        decimal d;
        if (parse_decimal(v.text, d)) {
          r = decimal_item(d);
          converts = true;
        }
      }
      break;
    case fn::toString:
    case fn::convertsToString:
      converts = true;
      switch (v.kind) {
        case value_kind::string: r = v; break;
        case value_kind::boolean: r = string_item(v.boolean ? "true" : "false"); break;
        case value_kind::integer: r = string_item(std::to_string(v.integer)); break;
        case value_kind::decimal:
          r = string_item(v.in_tape && v.node.type() == json::kind::number
                              ? std::string(v.node.get_number_text().value())
                              : decimal_text(v.dec));
          break;
        case value_kind::date:
        case value_kind::date_time:
        case value_kind::time: r = string_item(std::string(v.text)); break;
        case value_kind::quantity: {
          std::string s = decimal_text(v.dec);
          s += ' ';
          bool quote = calendar_unit(v.text).empty();
          if (quote) s += '\'';
          s.append(v.text.data(), v.text.size());
          if (quote) s += '\'';
          r = string_item(std::move(s));
          break;
        }
        default: converts = false; break;
      }
      break;
    case fn::toDate:
    case fn::convertsToDate:
    case fn::toDateTime:
    case fn::convertsToDateTime:
    case fn::toTime:
    case fn::convertsToTime: {
      value_kind want = (nd.function == fn::toDate || nd.function == fn::convertsToDate)   ? value_kind::date
                        : (nd.function == fn::toTime || nd.function == fn::convertsToTime) ? value_kind::time
                                                                                           : value_kind::date_time;
      if (v.kind == want) {
        r = v;
        converts = true;
      } else if (v.kind == value_kind::string || (want == value_kind::date_time && v.kind == value_kind::date) ||
                 (want == value_kind::date && v.kind == value_kind::date_time)) {
        moment m;
        std::string_view text = v.text;
        value_kind parse_as = want;
        if (want == value_kind::date_time && text.find('T') == std::string_view::npos) parse_as = value_kind::date;
        if (want == value_kind::date && v.kind == value_kind::date_time) {
          if (parse_date_time(text, value_kind::date_time, m)) {
            m.precision = std::min<uint8_t>(m.precision, 3);
            m.has_tz = false;
            r.kind = want;
            r.text = keep(moment_text(m));
            converts = true;
          }
        } else if (parse_date_time(text, parse_as, m)) {
          r.kind = want;
          r.text = v.in_tape ? text : keep(std::string(text));
          converts = true;
        }
      }
      break;
    }
    case fn::toQuantity:
    case fn::convertsToQuantity:
      if (v.kind == value_kind::quantity) {
        r = v;
        converts = true;
      } else if (is_number(v)) {
        r = quantity_item(v.dec, "1");
        converts = true;
      } else if (v.kind == value_kind::boolean) {
        r = quantity_item(decimal{v.boolean ? 1 : 0, 0}, "1");
        converts = true;
      } else if (is_quantity_like(v)) {
        decimal d;
        std::string_view u;
        if (quantity_of(v, d, u)) {
          r = quantity_item(d, u);
          converts = true;
        }
      } else if (v.kind == value_kind::string) {
        std::string_view s = v.text;
        size_t sp = s.find(' ');
        std::string_view num = s.substr(0, sp),
                         unit = sp == std::string_view::npos ? std::string_view("1") : s.substr(sp + 1);
        while (!unit.empty() && unit.front() == ' ') unit.remove_prefix(1);
        decimal d;
        bool unit_ok = true;
        std::string u(unit);
        if (sp != std::string_view::npos) {
          if (unit.size() >= 2 && unit.front() == '\'' && unit.back() == '\'')
            u = std::string(unit.substr(1, unit.size() - 2));
          else if (!calendar_unit(unit).empty()) u = std::string(unit);
          else unit_ok = false;
        }
        if (unit_ok && decimal_text_ok(num) && parse_decimal(num, d)) {
          r = quantity_item(d, u);
          converts = true;
        }
      }
      break;
    default: return type_error(nd.pos, "unsupported conversion");
  }
  bool is_test = nd.function == fn::convertsToBoolean || nd.function == fn::convertsToInteger ||
                 nd.function == fn::convertsToDecimal || nd.function == fn::convertsToString ||
                 nd.function == fn::convertsToDate || nd.function == fn::convertsToDateTime ||
                 nd.function == fn::convertsToTime || nd.function == fn::convertsToQuantity;
  if (is_test) out.push_back(boolean_item(converts));
  else if (converts) {
    r.fhir_type = NO_FHIR_TYPE;  // a conversion gives a System value
    r.in_tape = false;
    r.has_companion = false;
    out.push_back(r);
  }
  return true;
}

bool engine::boundary_function(const node &nd, const frame &f, const collection &in, collection &out) {
  if (nd.function == fn::comparable) {
    scratch a(s_);
    const item *o;
    if (!arg_single(nd, 0, f, *a, o)) return false;
    if (in.empty() || !o) return true;
    const item *v = single(in, nd.pos, "the input of comparable()");
    if (!v) return false;
    decimal x, y;
    std::string_view ux, uy;
    if (!quantity_of(*v, x, ux) || !quantity_of(*o, y, uy)) return type_error(nd.pos, "comparable() needs quantities");
    bool c1, c2;
    out.push_back(boolean_item(units_comparable(comparable_unit(ux, c1), comparable_unit(uy, c2))));
    return true;
  }
  if (in.empty()) return true;
  const item *vp = single(in, nd.pos, ("the input of " + nd.name + "()").c_str());
  if (!vp) return false;
  const item &v = *vp;
  bool present = false;
  int64_t p = 0;
  if (nd.arg_count) {
    scratch a(s_);
    if (!arg_integer(nd, 0, f, *a, present, p)) return false;
  }
  if (nd.function == fn::precision) {
    if (v.kind == value_kind::decimal) {
      out.push_back(integer_item(std::max(v.dec.scale, 0)));
    } else if (v.kind == value_kind::integer) {
      out.push_back(integer_item(0));
    } else if (is_moment(v)) {
      size_t digits = 0;
      for (char c : v.text) {
        if (c == 'Z' || c == '+' || (c == '-' && digits >= 8)) break;
        if (c >= '0' && c <= '9') ++digits;
      }
      out.push_back(integer_item(static_cast<int64_t>(digits)));
    } else {
      return type_error(nd.pos, "precision() needs a decimal, a date or a time");
    }
    return true;
  }
  bool high = nd.function == fn::highBoundary;
  if (is_number(v) || v.kind == value_kind::quantity || is_quantity_like(v)) {
    decimal d;
    std::string_view unit;
    bool q = !is_number(v);
    if (q) {
      if (!quantity_of(v, d, unit)) return true;
    } else {
      d = v.dec;
    }
    if (!present) p = 8;
    if (p < 0 || p > 18) return true;
    // The value's uncertainty is half a unit of its last digit.
    decimal half{5, d.scale + 1}, b;
    if (!add_decimal(d, half, b, !high)) return true;
    decimal r = b;
    if (!rescale(r, std::max<int32_t>(b.scale, static_cast<int32_t>(p)))) return true;
    if (p < b.scale) {
      // Toward the boundary's side, but a boundary smaller than the last kept digit is zero.
      int64_t pw = 1;
      bool tiny = b.scale - p > 18;  // 10^19 does not fit: every held value is smaller
      for (int i = 0; i < b.scale - p && !tiny; ++i) pw *= 10;
      int64_t qd = tiny ? 0 : b.digits / pw, rem = tiny ? 0 : b.digits % pw;
      uint64_t mag = b.digits < 0 ? uint64_t(0) - static_cast<uint64_t>(b.digits) : static_cast<uint64_t>(b.digits);
      if (tiny || mag < static_cast<uint64_t>(pw)) {
        qd = 0;
      } else if (!high && rem < 0) {
        --qd;
      } else if (high && rem > 0) {
        ++qd;
      }
      r = decimal{qd, static_cast<int32_t>(p)};
    }
    if (q) out.push_back(quantity_item(r, unit));
    else out.push_back(decimal_item(r));
    return true;
  }
  if (is_moment(v)) {
    moment m;
    if (!parse_date_time(v.text, v.kind, m)) return true;
    // Without a precision the boundary has the type's full precision: a Date's is the day (8).
    if (!present) p = v.kind == value_kind::time ? 9 : v.kind == value_kind::date ? 8 : 17;
    // Digits of precision to a field count: 4 year, 6 month, 8 day, 10 hour, 12 minute, 14 second, 17 ms.
    uint8_t want;
    if (v.kind == value_kind::time) {
      if (p == 2) want = 4;
      else if (p == 4) want = 5;
      else if (p == 6) want = 6;
      else if (p == 9) want = 7;
      else return true;
    } else {
      if (p == 4) want = 1;
      else if (p == 6) want = 2;
      else if (p == 8) want = 3;
      else if (p == 10) want = 4;
      else if (p == 12) want = 5;
      else if (p == 14) want = 6;
      else if (p == 17) want = 7;
      else return true;
    }
    if (v.kind == value_kind::date && want > 3) return true;
    if (m.precision < 2) m.month = high ? 12 : 1;
    if (m.precision < 3) m.day = high ? quire::detail::days_in_month(m.year, m.month) : 1;
    if (m.precision < 4) m.hour = high ? 23 : 0;
    if (m.precision < 5) m.minute = high ? 59 : 0;
    if (m.precision < 6) m.second = high ? 59 : 0;
    if (m.precision < 7) m.millis = high ? 999 : 0;
    if (!m.is_time && want >= 4 && !m.has_tz) {
      // Without a timezone the moment could be anywhere from +14:00 to -12:00.
      m.has_tz = true;
      m.tz_minutes = high ? -12 * 60 : 14 * 60;
    }
    m.precision = want;
    item r;
    r.kind = v.kind;
    r.text = keep(moment_text(m));
    out.push_back(r);
    return true;
  }
  return type_error(nd.pos, nd.name + "() needs a number, a quantity, a date or a time");
}

namespace {
const char B64[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
std::string base64_encode(std::string_view s, bool url) {
  std::string out;
  for (size_t i = 0; i < s.size(); i += 3) {
    size_t n = std::min<size_t>(3, s.size() - i);
    uint32_t v = static_cast<uint32_t>(static_cast<unsigned char>(s[i])) << 16;
    if (n > 1) v |= static_cast<uint32_t>(static_cast<unsigned char>(s[i + 1])) << 8;
    if (n > 2) v |= static_cast<unsigned char>(s[i + 2]);
    for (size_t k = 0; k < 4; ++k) {
      if (k > n) {
        out += '=';
        continue;
      }
      char c = B64[(v >> (18 - 6 * k)) & 63];
      if (url && c == '+') c = '-';
      if (url && c == '/') c = '_';
      out += c;
    }
  }
  return out;
}
bool base64_decode(std::string_view s, std::string &out) {
  uint32_t acc = 0;
  int bits = 0;
  for (char c : s) {
    int v;
    if (c >= 'A' && c <= 'Z') v = c - 'A';
    else if (c >= 'a' && c <= 'z') v = c - 'a' + 26;
    else if (c >= '0' && c <= '9') v = c - '0' + 52;
    else if (c == '+' || c == '-') v = 62;
    else if (c == '/' || c == '_') v = 63;
    else if (c == '=') break;
    else return false;
    acc = (acc << 6) | static_cast<uint32_t>(v);
    bits += 6;
    if (bits >= 8) {
      bits -= 8;
      out += static_cast<char>((acc >> bits) & 0xFF);
    }
  }
  return true;
}
}  // namespace

bool engine::string_function(const node &nd, const frame &f, const collection &in, collection &out) {
  // trim/split/join etc. all take a single string input; join takes a list.
  if (nd.function == fn::join) {
    scratch a(s_);
    bool present = false;
    std::string_view sep;
    if (nd.arg_count && !arg_string(nd, 0, f, *a, present, sep)) return false;
    std::string s;
    for (size_t i = 0; i < in.size(); ++i) {
      if (in[i].kind != value_kind::string) return type_error(nd.pos, "join() needs strings, not " + type_name(in[i]));
      if (i) s += sep;
      s += in[i].text;
      if (s.size() > s_.lim.max_string_bytes)
        return fail(error_code::DOCUMENT_TOO_LARGE, nd.pos, "join() grew past max_string_bytes");
    }
    out.push_back(string_item(std::move(s)));
    return true;
  }
  if (in.empty()) return true;
  const item *vp = single(in, nd.pos, ("the input of " + nd.name + "()").c_str());
  if (!vp) return false;
  const item &v = *vp;
  if (v.kind != value_kind::string) return type_error(nd.pos, nd.name + "() needs a string, not " + type_name(v));
  std::string_view s = v.text;
  scratch a0(s_), a1(s_);
  bool p0 = false, p1 = false;
  std::string_view x, y;
  auto two_strings = [&]() {
    if (!arg_string(nd, 0, f, *a0, p0, x)) return false;
    if (nd.arg_count > 1 && !arg_string(nd, 1, f, *a1, p1, y)) return false;
    return true;
  };
  switch (nd.function) {
    case fn::indexOf:
      if (!two_strings()) return false;
      if (!p0) return true;
      {
        size_t at = s.find(x);
        out.push_back(
            integer_item(at == std::string_view::npos ? -1 : static_cast<int64_t>(utf8_length(s.substr(0, at)))));
      }
      return true;
    case fn::substring: {
      bool ps, pl = false;
      int64_t start = 0, len = 0;
      if (!arg_integer(nd, 0, f, *a0, ps, start)) return false;
      if (nd.arg_count > 1 && !arg_integer(nd, 1, f, *a1, pl, len)) return false;
      if (!ps) return true;
      int64_t n = static_cast<int64_t>(utf8_length(s));
      if (start < 0 || start >= n) return true;
      size_t b = utf8_offset(s, static_cast<size_t>(start));
      size_t e = s.size();
      if (pl) {
        if (len <= 0) return out.push_back(string_item("")), true;
        e = start + len >= n ? s.size() : utf8_offset(s, static_cast<size_t>(start + len));
      }  // substring(start, {}) is substring(start)
      out.push_back(string_item(std::string(s.substr(b, e - b))));
      return true;
    }
    case fn::startsWith:
    case fn::endsWith:
    case fn::contains:
      if (!two_strings()) return false;
      if (!p0) return true;
      if (nd.function == fn::startsWith) out.push_back(boolean_item(s.substr(0, x.size()) == x));
      else if (nd.function == fn::endsWith)
        out.push_back(boolean_item(s.size() >= x.size() && s.substr(s.size() - x.size()) == x));
      else out.push_back(boolean_item(s.find(x) != std::string_view::npos));
      return true;
    case fn::upper:
    case fn::lower: {
      std::string r(s);
      for (char &c : r) {
        if (nd.function == fn::upper && c >= 'a' && c <= 'z') c = static_cast<char>(c - 'a' + 'A');
        if (nd.function == fn::lower && c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
      }
      out.push_back(string_item(std::move(r)));
      return true;
    }
    case fn::replace: {
      if (!two_strings()) return false;
      if (!p0 || !p1) return true;
      std::string r;
      if (x.empty()) {
        // Between every character, and at both ends.
        r += y;
        for (size_t i = 0; i < s.size(); ++i) {
          r += s[i];
          if (i + 1 == s.size() || (static_cast<unsigned char>(s[i + 1]) & 0xC0) != 0x80) r += y;
          if (r.size() > s_.lim.max_string_bytes)
            return fail(error_code::DOCUMENT_TOO_LARGE, nd.pos, "replace() grew past max_string_bytes");
        }
      } else {
        size_t i = 0;
        while (true) {
          size_t at = s.find(x, i);
          if (at == std::string_view::npos) break;
          r += s.substr(i, at - i);
          r += y;
          i = at + x.size();
          if (r.size() > s_.lim.max_string_bytes)
            return fail(error_code::DOCUMENT_TOO_LARGE, nd.pos, "replace() grew past max_string_bytes");
        }
        r += s.substr(i);
      }
      out.push_back(string_item(std::move(r)));
      return true;
    }
    case fn::matches:
    case fn::matchesFull: {
      if (!two_strings()) return false;
      if (!p0) return true;
      regex_match m;
      int r = regex_search(x, s, 0, nd.function == fn::matchesFull, m);
      if (r == -1) return fail(error_code::INVALID_ARGUMENT, nd.pos, "bad regular expression " + std::string(x));
      if (r == -2) return fail(error_code::DOCUMENT_TOO_LARGE, nd.pos, "the regular expression took too many steps");
      out.push_back(boolean_item(r == 1));
      return true;
    }
    case fn::replaceMatches: {
      if (!two_strings()) return false;
      if (!p0 || !p1) return true;
      if (x.empty()) return out.push_back(v), true;
      std::string r;
      size_t i = 0;
      while (i <= s.size()) {
        regex_match m;
        int found = regex_search(x, s, i, false, m);
        if (found == -1) return fail(error_code::INVALID_ARGUMENT, nd.pos, "bad regular expression " + std::string(x));
        if (found == -2)
          return fail(error_code::DOCUMENT_TOO_LARGE, nd.pos, "the regular expression took too many steps");
        if (found == 0) break;
        r += s.substr(i, m.begin - i);
        for (size_t k = 0; k < y.size(); ++k) {
          if (y[k] == '$' && k + 1 < y.size() && y[k + 1] >= '0' && y[k + 1] <= '9') {
            size_t g = static_cast<size_t>(y[k + 1] - '0');
            if (g == 0) r += s.substr(m.begin, m.end - m.begin);
            else if (g <= m.groups.size() && m.groups[g - 1].first != NONE)
              r += s.substr(m.groups[g - 1].first, m.groups[g - 1].second - m.groups[g - 1].first);
            ++k;
          } else {
            r += y[k];
          }
        }
        if (r.size() > s_.lim.max_string_bytes)
          return fail(error_code::DOCUMENT_TOO_LARGE, nd.pos, "replaceMatches() grew past max_string_bytes");
        if (m.end == m.begin) {
          if (m.end < s.size()) r += s[m.end];
          i = m.end + 1;
        } else {
          i = m.end;
        }
      }
      if (i < s.size()) r += s.substr(i);
      out.push_back(string_item(std::move(r)));
      return true;
    }
    case fn::length: out.push_back(integer_item(static_cast<int64_t>(utf8_length(s)))); return true;
    case fn::toChars:
      for (size_t i = 0; i < s.size();) {
        size_t j = i + 1;
        while (j < s.size() && (static_cast<unsigned char>(s[j]) & 0xC0) == 0x80) ++j;
        item c;
        c.kind = value_kind::string;
        c.text = s.substr(i, j - i);
        out.push_back(c);
        i = j;
      }
      return check_size(out, nd.pos);
    case fn::split: {
      if (!two_strings()) return false;
      if (!p0) return true;
      if (x.empty()) {
        out.push_back(v);
        return true;
      }
      size_t i = 0;
      while (true) {
        size_t at = s.find(x, i);
        item part;
        part.kind = value_kind::string;
        part.text = s.substr(i, at == std::string_view::npos ? std::string_view::npos : at - i);
        out.push_back(part);
        if (!check_size(out, nd.pos)) return false;
        if (at == std::string_view::npos) break;
        i = at + x.size();
      }
      return true;
    }
    case fn::trim: {
      size_t b = 0, e = s.size();
      auto ws = [](char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v'; };
      while (b < e && ws(s[b])) ++b;
      while (e > b && ws(s[e - 1])) --e;
      item t;
      t.kind = value_kind::string;
      t.text = s.substr(b, e - b);
      out.push_back(t);
      return true;
    }
    case fn::encode:
    case fn::decode: {
      if (!two_strings()) return false;
      if (!p0) return true;
      std::string r;
      if (x == "base64" || x == "urlbase64") {
        if (nd.function == fn::encode) {
          r = base64_encode(s, x == "urlbase64");
        } else if (!base64_decode(s, r)) {
          return true;
        }
      } else if (x == "hex") {
        static const char H[] = "0123456789abcdef";
        if (nd.function == fn::encode) {
          for (unsigned char c : s) {
            r += H[c >> 4];
            r += H[c & 15];
          }
        } else {
          if (s.size() % 2) return true;
          for (size_t i = 0; i < s.size(); i += 2) {
            auto hv = [](char c) {
              return c >= '0' && c <= '9'   ? c - '0'
                     : c >= 'a' && c <= 'f' ? c - 'a' + 10
                     : c >= 'A' && c <= 'F' ? c - 'A' + 10
                                            : -1;
            };
            int h = hv(s[i]), l = hv(s[i + 1]);
            if (h < 0 || l < 0) return true;
            r += static_cast<char>(h * 16 + l);
          }
        }
      } else {
        return fail(error_code::INVALID_ARGUMENT, nd.pos, nd.name + "(): unknown encoding " + std::string(x));
      }
      out.push_back(string_item(std::move(r)));
      return true;
    }
    case fn::escape:
    case fn::unescape: {
      if (!two_strings()) return false;
      if (!p0) return true;
      std::string r;
      bool esc = nd.function == fn::escape;
      if (x == "html") {
        if (esc) {
          for (char c : s) {
            switch (c) {
              case '&': r += "&amp;"; break;
              case '<': r += "&lt;"; break;
              case '>': r += "&gt;"; break;
              case '"': r += "&quot;"; break;
              case '\'': r += "&#39;"; break;
              default: r += c;
            }
          }
        } else {
          for (size_t i = 0; i < s.size(); ++i) {
            if (s[i] == '&') {
              size_t semi = s.find(';', i);
              if (semi != std::string_view::npos && semi - i <= 10) {
                std::string_view ent = s.substr(i + 1, semi - i - 1);
                bool done = true;
                if (ent == "amp") r += '&';
                else if (ent == "lt") r += '<';
                else if (ent == "gt") r += '>';
                else if (ent == "quot") r += '"';
                else if (ent == "apos") r += '\'';
                else if (ent.size() > 1 && ent[0] == '#') {
                  uint32_t cp = 0;
                  bool hex = ent[1] == 'x' || ent[1] == 'X';
                  for (size_t k = hex ? 2 : 1; k < ent.size(); ++k) {
                    char c = ent[k];
                    int d = c >= '0' && c <= '9'          ? c - '0'
                            : hex && c >= 'a' && c <= 'f' ? c - 'a' + 10
                            : hex && c >= 'A' && c <= 'F' ? c - 'A' + 10
                                                          : -1;
                    if (d < 0 || cp > 0x10FFFF) {
                      done = false;
                      break;
                    }
                    cp = cp * (hex ? 16 : 10) + static_cast<uint32_t>(d);
                  }
                  if (done) quire::detail::append_utf8(r, cp);
                } else {
                  done = false;
                }
                if (done) {
                  i = semi;
                  continue;
                }
              }
            }
            r += s[i];
          }
        }
      } else if (x == "json") {
        if (esc) {
          for (char c : s) {
            switch (c) {
              case '"': r += "\\\""; break;
              case '\\': r += "\\\\"; break;
              case '\n': r += "\\n"; break;
              case '\r': r += "\\r"; break;
              case '\t': r += "\\t"; break;
              case '\f': r += "\\f"; break;
              case '\b': r += "\\b"; break;
              default:
                if (static_cast<unsigned char>(c) < 0x20) {
                  char buf[8];
                  std::snprintf(buf, sizeof buf, "\\u%04x", static_cast<unsigned>(c));
                  r += buf;
                } else {
                  r += c;
                }
            }
          }
        } else {
          for (size_t i = 0; i < s.size(); ++i) {
            if (s[i] != '\\' || i + 1 >= s.size()) {
              r += s[i];
              continue;
            }
            char e = s[++i];
            switch (e) {
              case 'n': r += '\n'; break;
              case 'r': r += '\r'; break;
              case 't': r += '\t'; break;
              case 'f': r += '\f'; break;
              case 'b': r += '\b'; break;
              case 'u': {
                uint32_t cp = 0;
                size_t k = 0;
                for (; k < 4 && i + 1 + k < s.size(); ++k) {
                  char c = s[i + 1 + k];
                  int d = c >= '0' && c <= '9'   ? c - '0'
                          : c >= 'a' && c <= 'f' ? c - 'a' + 10
                          : c >= 'A' && c <= 'F' ? c - 'A' + 10
                                                 : -1;
                  if (d < 0) break;
                  cp = cp * 16 + static_cast<uint32_t>(d);
                }
                if (k == 4) {
                  quire::detail::append_utf8(r, cp);
                  i += 4;
                } else {
                  r += "\\u";
                }
                break;
              }
              default: r += e;
            }
          }
        }
      } else {
        return fail(error_code::INVALID_ARGUMENT, nd.pos, nd.name + "(): unknown format " + std::string(x));
      }
      out.push_back(string_item(std::move(r)));
      return true;
    }
    default: break;
  }
  return type_error(nd.pos, "unsupported function " + nd.name + "()");
}

}  // namespace

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
