// The R4 invariants (ElementDefinition.constraint) compiled once with the FHIRPath engine, the
// list of those it cannot evaluate, and the native shortcut for ele-1, which applies to every
// element of every resource.
#include <algorithm>
#include <cstring>
#include <initializer_list>
#include <optional>

#include "fhir_internal.h"

namespace quire::fhir {
namespace detail {

namespace {

// ele-1 and dom-3 exactly as R4 writes them: only these texts take the shortcuts.
constexpr std::string_view ELE_1 = "hasValue() or (children().count() > id.count())";
constexpr std::string_view DOM_3 =
    "contained.where((('#'+id in (%resource.descendants().reference | %resource.descendants().as(canonical) | "
    "%resource.descendants().as(uri) | %resource.descendants().as(url))) or descendants().where(reference = "
    "'#').exists() or descendants().where(as(canonical) = '#').exists() or descendants().where(as(canonical) = "
    "'#').exists()).not()).trace('unmatched', id).empty()";

constexpr std::string_view REF_1 =
    "reference.startsWith('#').not() or (reference.substring(1).trace('url') in "
    "%rootResource.contained.id.trace('ids'))";

constexpr std::string_view BDL_7 =
    "(type = 'history') or entry.where(fullUrl.exists()).select(fullUrl&resource.meta.versionId).isDistinct()";

constexpr std::string_view BDL_5 = "resource.exists() or request.exists() or response.exists()";
constexpr std::string_view BDL_8 = "fullUrl.contains('/_history/').not()";
constexpr std::string_view BDL_2 = "entry.search.empty() or (type = 'searchset')";
constexpr std::string_view BDL_3 =
    "entry.all(request.exists() = (%resource.type = 'batch' or %resource.type = 'transaction' or %resource.type = "
    "'history'))";
constexpr std::string_view BDL_4 =
    "entry.all(response.exists() = (%resource.type = 'batch-response' or %resource.type = 'transaction-response' or "
    "%resource.type = 'history'))";

// Whether `key` is `name` (text_words.h: std::string_view's == calls memcmp, a byte at a time in
// wasm, and the Bundle shortcuts compare several keys of every entry).
bool key_is(std::string_view key, std::string_view name) noexcept { return quire::detail::same_text(key, name); }

// The `reference` strings of every object below the root (`%resource.descendants().reference`
// includes those inside contained resources, not the root's own member).
void collect_references(const json::value &v, bool below_root, std::vector<std::string_view> &out) {
  if (v.type() == json::kind::array) {
    if (auto arr = v.get_array()) {
      for (json::value x : *arr) collect_references(x, below_root, out);
    }
    return;
  }
  if (v.type() != json::kind::object) return;
  auto obj = v.get_object();
  if (!obj) return;
  for (json::member m : *obj) {
    if (below_root && m.key == "reference" && m.val.type() == json::kind::string)
      out.push_back(m.val.get_string().value());
    if (m.val.type() == json::kind::object || m.val.type() == json::kind::array) collect_references(m.val, true, out);
  }
}

// Invariants whose R4 text cannot hold on valid data under FHIRPath's own rules: reported as
// unchecked (with this reason) rather than failing correct resources. Keep it short and exact.
struct defect {
  std::string_view key, expression, reason;
};
constexpr defect DEFECTS[] = {
    {"que-7", "operator = 'exists' implies (answer is Boolean)",
     "R4 writes `answer is Boolean`, the System type, which a FHIR boolean is not in FHIRPath (N1 "
     "types; the R4 FHIRPath suite's testInheritance): it would fail every valid `exists` condition "
     "(the official example Questionnaire-bb)"},
};

// Every (invariant, context type) pair the walk can meet: a key's list with the key's type, a
// type's own list with the type. Each gets its direct check where some of it lowers.
void lower_all(invariant_set &set) {
  std::vector<std::pair<uint16_t, uint16_t>> pairs;  // (constraint, type)
  auto add = [&](constraint_range r, uint16_t type) {
    for (uint32_t i = r.first; i < r.first + r.count; ++i) pairs.emplace_back(CONSTRAINT_LISTS[i], type);
  };
  for (size_t k = 0; k < KEY_COUNT; ++k) add(KEY_CONSTRAINTS[k], KEYS[k].type);
  for (size_t t = 0; t < TYPE_COUNT; ++t) add(TYPE_CONSTRAINTS[t], static_cast<uint16_t>(t));
  std::sort(pairs.begin(), pairs.end());
  pairs.erase(std::unique(pairs.begin(), pairs.end()), pairs.end());
  // %resource is the context itself for a resource type's own invariants, unless some key has
  // that type (then the context may be a value inside another resource: none in R4).
  std::vector<bool> key_typed(TYPE_COUNT);
  for (size_t k = 0; k < KEY_COUNT; ++k)
    if (KEYS[k].type < TYPE_COUNT) key_typed[KEYS[k].type] = true;
  for (auto [index, type] : pairs) {
    compiled_invariant &c = set.all[index];
    if (!c.expr || type >= TYPE_COUNT) continue;
    bool context_is_resource = TYPES[type].kind == type_kind::resource && !key_typed[type];
    uint32_t root = lower_direct_check(*c.expr, type, context_is_resource, set.direct_nodes);
    if (root != 0xFFFFFFFF) c.direct.emplace_back(type, root);
  }
}

invariant_set compile_all() {
  invariant_set set;
  std::vector<compiled_invariant> &out = set.all;
  out.resize(CONSTRAINT_COUNT);
  fhirpath::limits lim = invariant_limits();
  for (size_t i = 0; i < CONSTRAINT_COUNT; ++i) {
    compiled_invariant &c = out[i];
    c.def = &CONSTRAINTS[i];
    std::string_view text = c.def->expression.view();
    if (text.empty()) {
      c.unchecked = "the definition gives no FHIRPath expression";
      continue;
    }
    bool defective = false;
    for (const defect &d : DEFECTS) {
      if (d.key == c.def->key.view() && d.expression == text) {
        c.unchecked = d.reason;
        defective = true;
      }
    }
    if (defective) continue;
    auto e = fhirpath::compile(text, lim);
    if (!e) {
      c.unchecked = "its expression does not compile: ";
      c.unchecked += e.error().describe();
      continue;
    }
    // Evaluating around a function quire lacks could give a wrong false (or a true by luck):
    // such an invariant is never evaluated, only reported.
    if (std::string_view f = fhirpath::unsupported_function(*e); !f.empty()) {
      c.unchecked = "it calls ";
      c.unchecked += f;
      c.unchecked += "(), which quire cannot evaluate (no resolver, terminology server or XHTML checker)";
      continue;
    }
    if (c.def->key.view() == "ele-1" && text == ELE_1) c.shortcut = invariant_shortcut::ele_1;
    if (c.def->key.view() == "dom-3" && text == DOM_3) c.shortcut = invariant_shortcut::dom_3;
    if (c.def->key.view() == "ref-1" && text == REF_1) c.shortcut = invariant_shortcut::ref_1;
    if (c.def->key.view() == "dom-6" && text == "text.`div`.exists()") c.shortcut = invariant_shortcut::dom_6;
    if (c.def->key.view() == "bdl-7" && text == BDL_7) c.shortcut = invariant_shortcut::bdl_7;
    if (c.def->key.view() == "bdl-2" && text == BDL_2) c.shortcut = invariant_shortcut::bdl_2;
    if (c.def->key.view() == "bdl-3" && text == BDL_3) c.shortcut = invariant_shortcut::bdl_3;
    if (c.def->key.view() == "bdl-4" && text == BDL_4) c.shortcut = invariant_shortcut::bdl_4;
    if (c.def->key.view() == "bdl-5" && text == BDL_5) c.shortcut = invariant_shortcut::bdl_5;
    if (c.def->key.view() == "bdl-8" && text == BDL_8) c.shortcut = invariant_shortcut::bdl_8;
    // `contained.<path>.empty()` terms only: all true when there is no contained resource.
    if ((c.def->key.view() == "dom-2" && text == "contained.contained.empty()") ||
        (c.def->key.view() == "dom-4" &&
         text == "contained.meta.versionId.empty() and contained.meta.lastUpdated.empty()") ||
        (c.def->key.view() == "dom-5" && text == "contained.meta.security.empty()"))
      c.shortcut = invariant_shortcut::about_contained;
    c.expr = std::move(e).value();
  }
  for (size_t i = 0; i < out.size(); ++i) {
    compiled_invariant &c = out[i];
    if (c.shortcut == invariant_shortcut::ele_1) set.ele_1 = static_cast<uint16_t>(i);
    c.failed_details.append(c.def->key.view()).append(": ").append(c.def->human.view());
    if (!c.expr)
      c.unchecked_details.append("invariant ").append(c.def->key.view()).append(" not checked: ") += c.unchecked;
  }
  lower_all(set);
  return set;
}

}  // namespace

fhirpath::limits invariant_limits() {
  fhirpath::limits lim;
  // Set operations in invariants (isDistinct() over a Bundle's entries, dom-3's `in` over every
  // reference) are quadratic: 4 million pairs is about 2,800 entries, tens of milliseconds.
  lim.max_comparisons = 4'000'000;
  lim.max_collection = 1'000'000;
  return lim;
}

const invariant_set &compiled_invariant_set() {
  // Immutable after its first initialisation (thread-safe): not hidden mutable state.
  static const invariant_set set = compile_all();
  return set;
}

bool ele_1_holds(const json::value *value, const json::value *companion) noexcept {
  (void)companion;
  if (!value || value->is_null()) return false;          // a primitive with only extensions: ask the engine
  if (value->type() != json::kind::object) return true;  // a primitive's value: hasValue() is true
  // A complex value holds when some member other than id gives children() an item: the engine
  // counts every member but resourceType (unknown ones too), each non-null array item once.
  auto obj = value->get_object();
  if (!obj) return false;
  for (json::member m : *obj) {
    if (m.key == "id" || m.key == "resourceType" || (!m.key.empty() && m.key[0] == '_')) continue;
    switch (m.val.type()) {
      case json::kind::null_value: break;
      case json::kind::array: {
        auto arr = m.val.get_array();
        if (!arr) break;
        for (json::value v : *arr) {
          if (!v.is_null()) return true;
        }
        break;
      }
      default: return true;
    }
  }
  return false;
}

bool dom_3_holds(const json::value &resource) {
  auto obj = resource.get_object();
  if (!obj) return false;
  auto contained = obj->find("contained");
  if (!contained) return true;  // contained.where(...) is empty: dom-3 holds
  auto arr = contained->get_array();
  if (!arr) return false;
  std::vector<std::string_view> refs;
  collect_references(resource, false, refs);
  std::sort(refs.begin(), refs.end());
  std::string local;
  for (json::value c : *arr) {
    auto o = c.get_object();
    if (!o) return false;
    auto id = o->find("id");
    if (!id || id->type() != json::kind::string) return false;
    local.clear();
    local += '#';
    local += id->get_string().value();
    if (!std::binary_search(refs.begin(), refs.end(), std::string_view(local))) return false;
  }
  return true;
}

bundle_entries bundle_entry_facts(const json::value &bundle) {
  bundle_entries f;
  auto obj = bundle.get_object();
  if (!obj) return f;
  std::optional<json::value> entry;
  uint32_t types = 0, entry_keys = 0;
  bool odd = false;  // `_type`, `_entry`
  for (json::member m : *obj) {
    if (m.key == "type") {
      ++types;
      if (m.val.type() == json::kind::string) f.type = m.val.get_string().value();
      else odd = true;
    } else if (m.key == "_type" || m.key == "_entry") {
      odd = true;
    } else if (m.key == "entry") {
      ++entry_keys;
      entry = m.val;
    }
  }
  f.type_plain = types == 1 && !odd;
  if (odd || entry_keys > 1) return f;
  if (entry) {
    auto arr = entry->get_array();
    if (!arr) return f;
    for (json::value e : *arr) {
      auto eo = e.get_object();
      if (!eo) return f;
      uint32_t search = 0, request = 0, response = 0;
      for (json::member m : *eo) {
        std::string_view k = m.key;
        if (k.size() < 6 || k.size() > 9) continue;  // search, request, response, and `_` before them
        uint32_t *count = key_is(k, "search")     ? &search
                          : key_is(k, "request")  ? &request
                          : key_is(k, "response") ? &response
                                                  : nullptr;
        if (!count) {
          if (key_is(k, "_search") || key_is(k, "_request") || key_is(k, "_response")) return f;
          continue;
        }
        // An object with members: one item for the engine as for the direct check.
        if (m.val.type() != json::kind::object || m.val.get_object().value().size() == 0) return f;
        ++*count;
      }
      if (search > 1 || request > 1 || response > 1) return f;
      ++f.entries;
      f.search += search;
      f.request += request;
      f.response += response;
    }
  }
  f.plain = true;
  return f;
}

bundle_entry_check bundle_entry_holds(const json::value &entry) noexcept {
  bundle_entry_check out;
  if (entry.type() != json::kind::object) return out;
  uint32_t resources = 0, urls = 0;
  bool resource_odd = false, url_odd = false;
  for (json::member m : entry.get_object().value()) {
    std::string_view k = m.key;
    if (key_is(k, "resource")) {
      ++resources;
      if (m.val.type() != json::kind::object || m.val.get_object().value().size() == 0) resource_odd = true;
    } else if (key_is(k, "fullUrl")) {
      ++urls;
      // contains() of a uri's text, as the direct check reads it.
      if (m.val.type() != json::kind::string || m.val.get_string().value().find("/_history/") != std::string_view::npos)
        url_odd = true;
    } else if (key_is(k, "_resource")) {
      resource_odd = true;
    } else if (key_is(k, "_fullUrl")) {
      url_odd = true;
    }
  }
  out.resource = resources == 1 && !resource_odd;
  out.full_url = urls <= 1 && !url_odd;
  return out;
}

bool bundle_entries_hold(invariant_shortcut which, const bundle_entries &f) noexcept {
  if (!f.plain) return false;
  switch (which) {
    case invariant_shortcut::bdl_2: return f.search == 0 || (f.type_plain && f.type == "searchset");
    case invariant_shortcut::bdl_3: {
      if (!f.type_plain) return false;  // no type: each `=` is empty, and all() is false
      bool needed = f.type == "batch" || f.type == "transaction" || f.type == "history";
      return f.request == (needed ? f.entries : 0);
    }
    case invariant_shortcut::bdl_4: {
      if (!f.type_plain) return false;
      bool needed = f.type == "batch-response" || f.type == "transaction-response" || f.type == "history";
      return f.response == (needed ? f.entries : 0);
    }
    default: return false;
  }
}

bool bdl_7_holds(const json::value &bundle) {
  auto obj = bundle.get_object();
  if (!obj) return false;
  if (auto type = obj->find("type");
      type && type->type() == json::kind::string && type->get_string().value() == "history")
    return true;
  if (obj->find("_type")) return false;
  auto entries = obj->find("entry");
  if (!entries) return true;  // isDistinct() of nothing
  auto arr = entries->get_array();
  if (!arr) return false;
  // Each entry's fullUrl, and its resource's meta.versionId: plain strings only (a `_x` companion,
  // an array or a null is the engine's to judge).
  std::vector<std::pair<std::string_view, std::string_view>> keys;
  keys.reserve(arr->size());
  // The first member of each name, as find() gives it, in one pass over the object (find() is a
  // pass per name: five or six a Bundle entry, each comparing keys by a call to memcmp in wasm).
  auto first_members = [](const json::object &o, std::initializer_list<std::string_view> names,
                          std::optional<json::value> *out) {
    for (json::member m : o) {
      size_t i = 0;
      for (std::string_view name : names) {
        if (!out[i] && key_is(m.key, name)) out[i] = m.val;
        ++i;
      }
    }
  };
  // A string member that is not empty, or absent: false when its form is the engine's to judge.
  auto string_member = [](const std::optional<json::value> &v, const std::optional<json::value> &underscored,
                          std::string_view &out) {
    if (underscored) return false;
    if (!v) return true;
    if (v->type() != json::kind::string) return false;
    out = v->get_string().value();
    return !out.empty();
  };
  for (json::value e : *arr) {
    auto eo = e.get_object();
    if (!eo) return false;
    std::string_view url, version;
    std::optional<json::value> entry_members[3];  // fullUrl, _fullUrl, resource
    first_members(*eo, {"fullUrl", "_fullUrl", "resource"}, entry_members);
    if (!string_member(entry_members[0], entry_members[1], url)) return false;
    if (url.empty()) continue;
    if (const auto &r = entry_members[2]) {
      auto ro = r->get_object();
      if (!ro) return false;
      std::optional<json::value> meta;
      first_members(*ro, {"meta"}, &meta);
      if (meta) {
        auto mo = meta->get_object();
        if (!mo) return false;
        std::optional<json::value> meta_members[2];  // versionId, _versionId
        first_members(*mo, {"versionId", "_versionId"}, meta_members);
        if (!string_member(meta_members[0], meta_members[1], version)) return false;
      }
    }
    keys.emplace_back(url, version);
  }
  // Distinct as concatenated strings, compared without building them (most Bundles have no
  // versionId: then the fullUrls alone, with memcmp).
  auto concat_compare = [](const std::pair<std::string_view, std::string_view> &x,
                           const std::pair<std::string_view, std::string_view> &y) {
    if (x.second.empty() && y.second.empty()) return x.first.compare(y.first);
    const size_t nx = x.first.size() + x.second.size(), ny = y.first.size() + y.second.size();
    for (size_t i = 0; i < nx && i < ny; ++i) {
      char cx = i < x.first.size() ? x.first[i] : x.second[i - x.first.size()];
      char cy = i < y.first.size() ? y.first[i] : y.second[i - y.first.size()];
      if (cx != cy) return static_cast<unsigned char>(cx) < static_cast<unsigned char>(cy) ? -1 : 1;
    }
    return nx < ny ? -1 : nx > ny ? 1 : 0;
  };
  // Sorted by a hash of the concatenation (integers, not strings); only keys of equal hash are
  // compared. Without any versionId the fullUrl is hashed eight bytes at a time.
  bool versions = false;
  for (const auto &k : keys) versions = versions || !k.second.empty();
  std::vector<std::pair<uint64_t, uint32_t>> hashed(keys.size());
  for (size_t i = 0; i < keys.size(); ++i) {
    const auto &k = keys[i];
    uint64_t h = 0x84222325CBF29CE4ull;
    if (!versions) {
      const char *p = k.first.data();
      size_t n = k.first.size();
      for (; n >= 8; p += 8, n -= 8) {
        uint64_t w;
        std::memcpy(&w, p, 8);
        h = (h ^ w) * 0x9E3779B97F4A7C15ull;
        h ^= h >> 32;
      }
      uint64_t w = 0;
      std::memcpy(&w, p, n);
      h = (h ^ w ^ (uint64_t{k.first.size()} << 56)) * 0x9E3779B97F4A7C15ull;
    } else {
      for (std::string_view part : {k.first, k.second})
        for (unsigned char c : part) h = (h ^ c) * 0x100000001B3ull;
    }
    h ^= h >> 29;
    hashed[i] = {h, static_cast<uint32_t>(i)};
  }
  std::sort(hashed.begin(), hashed.end());
  for (size_t i = 1; i < hashed.size(); ++i) {
    // A run of equal hashes: every pair in it (a run is nearly always one key long).
    for (size_t j = i; j-- > 0 && hashed[j].first == hashed[i].first;)
      if (concat_compare(keys[hashed[j].second], keys[hashed[i].second]) == 0) return false;
  }
  return true;
}

}  // namespace detail

std::vector<invariant_info> invariants() {
  const auto &all = detail::compiled_invariants();
  std::vector<invariant_info> out;
  out.reserve(all.size());
  for (const auto &c : all) {
    invariant_info i;
    i.key = c.def->key.view();
    i.severity = c.def->warning ? severity::warning : severity::error;
    i.human = c.def->human.view();
    i.expression = c.def->expression.view();
    i.checked = c.expr.has_value();
    i.reason = c.unchecked;
    i.direct = !c.direct.empty();
    out.push_back(i);
  }
  // CONSTRAINTS is sorted by its generator's signature, which starts with the key.
  return out;
}

}  // namespace quire::fhir
