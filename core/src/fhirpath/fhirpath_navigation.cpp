// Paths (FHIRPath N1 "Path selection"): member access over the JSON tape with the types the R4
// tables give each element, a primitive's `_name` companion (its id and extensions), choice
// elements (`value` matches valueQuantity...), and the tree navigation functions children() and
// descendants() (with repeat(), which walks as descendants() does).
#include <cstring>
#include <unordered_set>

#include "fhirpath_engine.h"

namespace quire::fhirpath {

namespace {

bool is_upper(char c) { return c >= 'A' && c <= 'Z'; }

uint16_t resource_type_of(const json::value &v) {
  if (v.type() != json::kind::object) return NO_FHIR_TYPE;
  auto rt = v.get_object().value().find("resourceType");
  if (!rt || rt->type() != json::kind::string) return NO_FHIR_TYPE;
  uint16_t t = fx::find_resource_type(rt->get_string().value());
  return t == fx::NO_TYPE ? NO_FHIR_TYPE : t;
}

}  // namespace

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

uint16_t extension_type() {
  static const uint16_t t = [] {
    type_spec ts;
    return resolve_type("FHIR", "Extension", ts) ? ts.fhir : NO_FHIR_TYPE;
  }();
  return t;
}

bool engine::member(const item &v, const node &nd, bool path_start, collection &out) {
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
      if (m) push_json(&*m, nullptr, name == "id" ? fx::primitive_type(fx::primitive::string) : extension_type(), out);
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
bool engine::no_member(const node &nd, uint16_t t) {
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
const member_slot &engine::member_rule(const node &nd, uint16_t t) {
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

// Every child element of an item (children()), with types.
void engine::children(const item &v, collection &out) {
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

// --- tree navigation (and repeat()) ---

bool engine::fn_children(const node &nd, const frame &, const collection &in, collection &out) {
  for (const item &v : in) children(v, out);
  return check_size(out, nd.pos);
}

bool engine::fn_repeat_descendants(const node &nd, const frame &, const collection &in, collection &out) {
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

}  // namespace quire::fhirpath
