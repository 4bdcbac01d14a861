// Reading and validating FHIR R4 JSON: one walk of the parsed document against the generated
// definition tables. Every object is visited once and its members sorted once (by their element's
// place in the definition), so the cost is linear in the input (times the log of an object's member
// count); nothing is rescanned per reference — `#id` targets are looked up in a sorted list of the
// container's contained ids, built once per resource.
#include <algorithm>
#include <bit>
#include <charconv>
#include <cstring>
#include <optional>
#include <string>
#include <vector>

#include "fhir_internal.h"

#if defined(__wasm_simd128__)
#include <wasm_simd128.h>
#endif

namespace quire::fhir {
namespace {

using namespace detail;

constexpr std::string_view STRUCTURE = "structure";
constexpr std::string_view REQUIRED = "required";
constexpr std::string_view VALUE = "value";
constexpr std::string_view INVALID = "invalid";
constexpr std::string_view CODE_INVALID = "code-invalid";
constexpr std::string_view NOT_FOUND = "not-found";
constexpr std::string_view NOT_SUPPORTED = "not-supported";
constexpr std::string_view TOO_COSTLY = "too-costly";
constexpr std::string_view INVARIANT = "invariant";
constexpr std::string_view INFORMATIONAL = "informational";

// The walk recurses once per level of JSON nesting: in wasm the call stack is V8's (about 1 MB),
// so whatever the caller asks, fhir reads at most this deep.
constexpr size_t HARD_MAX_DEPTH = 1024;

constexpr uint32_t NO_DIRECT = 0xFFFFFFFF;

// A value quoted in a message: at most 60 bytes (whole UTF-8 characters), control characters
// escaped so that a message is always one printable line.
std::string quoted_excerpt(std::string_view s) {
  static const char *hex = "0123456789abcdef";
  size_t cut = s.size();
  if (cut > 60) {
    cut = 57;
    while (cut > 0 && (static_cast<unsigned char>(s[cut]) & 0xC0) == 0x80) --cut;
  }
  std::string out = "'";
  for (char c : s.substr(0, cut)) {
    auto u = static_cast<unsigned char>(c);
    if (u >= 0x20 && u != 0x7F) {
      out += c;
    } else if (c == '\t') {
      out += "\\t";
    } else if (c == '\n') {
      out += "\\n";
    } else if (c == '\r') {
      out += "\\r";
    } else {
      out += "\\u00";
      out += hex[u >> 4];
      out += hex[u & 15];
    }
  }
  if (cut < s.size()) out += "...";
  return out + "'";
}

uint16_t reference_type() {
  // Immutable after its first initialisation (thread-safe): not hidden mutable state.
  static const uint16_t index = [] {
    for (size_t i = 0; i < TYPE_COUNT; ++i) {
      if (TYPES[i].name.view() == "Reference" && TYPES[i].kind == type_kind::complex) return static_cast<uint16_t>(i);
    }
    return NO_TYPE;
  }();
  return index;
}

std::string_view type_display_name(uint16_t type) {
  std::string_view n = TYPES[type].name.view();
  return n;
}

// Each type's required elements (min > 0), in the definition's order: the walk merges an object's
// members with these instead of visiting every element of the type.
class required_index {
 public:
  required_index() {
    starts_.reserve(TYPE_COUNT + 1);
    for (size_t t = 0; t < TYPE_COUNT; ++t) {
      starts_.push_back(static_cast<uint32_t>(elements_.size()));
      const type_def &def = TYPES[t];
      for (uint32_t e = def.first_element; e < def.first_element + def.element_count; ++e)
        if (ELEMENTS[e].min > 0) elements_.push_back(e);
    }
    starts_.push_back(static_cast<uint32_t>(elements_.size()));
  }
  /// The first of `type`'s required elements; of(type + 1) is past its last.
  const uint32_t *of(uint16_t type) const noexcept { return elements_.data() + starts_[type]; }

 private:
  std::vector<uint32_t> starts_;
  std::vector<uint32_t> elements_;
};

const required_index &required_elements() {
  // Immutable after its first initialisation (thread-safe): not hidden mutable state.
  static const required_index index;
  return index;
}

// Line starts, built on the first issue that needs a line number (valid input never pays for it).
class line_index {
 public:
  explicit line_index(std::string_view text) : text_(text) {}
  void locate(uint64_t offset, uint32_t &line, uint32_t &column) {
    if (!built_) {
      // Every resource with narrative has an (informational) issue now, so this runs often.
      const char *begin = text_.data(), *end = begin + text_.size();
      const char *p = begin;
#if defined(__wasm_simd128__)
      // Emscripten's memchr reads a word at a time: on a 650 KB Bundle the scan was 3% of
      // fhir.validate through npm. Sixteen bytes at a time, each newline's place from the mask.
      for (; end - p >= 16; p += 16) {
        auto mask = static_cast<uint32_t>(wasm_i8x16_bitmask(wasm_i8x16_eq(wasm_v128_load(p), wasm_i8x16_splat('\n'))));
        for (; mask != 0; mask &= mask - 1)
          newlines_.push_back(static_cast<uint32_t>(p - begin) + static_cast<uint32_t>(std::countr_zero(mask)));
      }
#endif
      while (p < end) {
        const void *nl = std::memchr(p, '\n', static_cast<size_t>(end - p));
        if (!nl) break;
        p = static_cast<const char *>(nl);
        newlines_.push_back(static_cast<uint32_t>(p - begin));
        ++p;
      }
      built_ = true;
    }
    auto it = std::lower_bound(newlines_.begin(), newlines_.end(), offset);
    size_t index = static_cast<size_t>(it - newlines_.begin());
    uint64_t line_start = index == 0 ? 0 : uint64_t{newlines_[index - 1]} + 1;
    line = static_cast<uint32_t>(index + 1);
    column = static_cast<uint32_t>(offset - line_start + 1);
  }

 private:
  std::string_view text_;
  std::vector<uint32_t> newlines_;
  bool built_ = false;
};

// The FHIRPath location of the value being walked, as segments that point into the input and the
// tables: its text is made only for an issue (most values have none), so walking an element costs
// a push and a pop, and no string work.
class location {
 public:
  void reset(std::string_view root) {
    if (segs_.size() < 32) segs_.resize(32);  // deeper than most resources: one allocation
    used_ = 0;
    push(seg::root, root);
  }
  size_t mark() const noexcept { return used_; }
  void back_to(size_t mark) noexcept { used_ = mark; }
  void member(std::string_view name) { push(seg::member, name); }
  // `name.ofType(type)`: the type by its index into TYPES.
  void choice(std::string_view name, uint16_t type) { push(seg::choice, name, type); }
  // An array's index fits in 32 bits: the tape's indexes are 32-bit.
  void index(size_t i) { push(seg::item, {}, 0, static_cast<uint32_t>(i)); }

  void append_to(std::string &out) const {
    for (size_t k = 0; k < used_; ++k) {
      const seg &g = segs_[k];
      const std::string_view name(g.name, g.length);
      switch (g.kind) {
        case seg::root: out += name; break;
        case seg::member:
          out += '.';
          out += name;
          break;
        case seg::choice:
          out += '.';
          out += name;
          out += ".ofType(";
          out += TYPES[g.type].name.view();
          out += ')';
          break;
        case seg::item: {
          char buf[24];
          buf[0] = '[';
          auto r = std::to_chars(buf + 1, buf + sizeof buf - 1, g.length);
          *r.ptr++ = ']';
          out.append(buf, static_cast<size_t>(r.ptr - buf));
          break;
        }
      }
    }
  }
  std::string text() const {
    std::string out;
    append_to(out);
    return out;
  }

 private:
  // 16 bytes (was 48, with two string views and a size_t): two pushes per member walked.
  struct seg {
    enum kind_t : uint8_t { root, member, choice, item };
    const char *name;
    uint32_t length;  // the name's; item: the index
    uint16_t type;    // choice: the type of `name.ofType(type)`
    kind_t kind;
  };
  // A push per element walked: the vector's size is the capacity, `used_` the depth, so a push is
  // a store and an increment (vector::push_back was an out-of-line call, 5% of a Bundle's walk).
  void push(seg::kind_t kind, std::string_view name, uint16_t type = 0, uint32_t index = 0) {
    if (used_ == segs_.size()) grow();
    segs_[used_++] = seg{name.data(), kind == seg::item ? index : static_cast<uint32_t>(name.size()), type, kind};
  }
  [[gnu::noinline]] void grow() { segs_.resize(segs_.size() * 2); }
  std::vector<seg> segs_;
  size_t used_ = 0;
};

class walker {
 public:
  walker(const options &opts, std::string_view input, outcome &out)
      : opts_(opts),
        lines_(input),
        out_(out),
        invariants_(compiled_invariant_set()),
        keys_(key_index::get()),
        required_(required_elements()),
        reference_type_(reference_type()) {}

  size_t unknown_count = 0;
  size_t first_unknown = SIZE_MAX;  // index of the first unknown-element issue
  bool contained_limit_hit = false;
  uint64_t contained_limit_offset = 0;
  std::string contained_limit_path;

  void walk_root(json::value root, uint16_t type) {
    path_.reset(TYPES[type].name.view());
    scope_.clear();
    walk_resource_body(root, type, false);
  }

 private:
  // The key is held as its pointer and length, written from scalars (see walk_object's loop).
  struct slot {
    uint32_t key_index;  // into KEYS (and KEY_CONSTRAINTS)
    uint16_t element;
    uint16_t type;
    uint32_t member;
    uint32_t key_length;
    const char *key_data;
    json::value val;
    bool underscore;
    std::string_view key() const noexcept { return {key_data, key_length}; }
  };
  struct scope {
    std::vector<std::string_view> contained_ids;  // sorted
  };

  const options &opts_;
  line_index lines_;
  outcome &out_;
  const invariant_set &invariants_;
  const key_index &keys_;
  // The function statics the walk reads per object, read once per call.
  const required_index &required_;
  const uint16_t reference_type_;
  location path_;
  // A stack: each object uses [base, end) while it is walked. As the location's segments: the
  // vector's size is its capacity and `slots_used_` the top, so a push is a store and an increment.
  std::vector<slot> slots_;
  size_t slots_used_ = 0;
  void push_slot(const slot &s) {
    if (slots_used_ == slots_.size()) grow_slots();
    slots_[slots_used_++] = s;
  }
  [[gnu::noinline]] void grow_slots() { slots_.resize(slots_.empty() ? 64 : slots_.size() * 2); }
  std::vector<scope> scope_;  // resources being walked that may hold contained resources
  bool in_contained_ = false;
  bool stopped_ = false;
  // Invariants: the resources being walked (%resource is the last, %rootResource its container
  // when it is contained), the evaluator (made on the first evaluation), and which invariants
  // were reported as unchecked already (once per call).
  struct resource_frame {
    json::value value;
    bool contained;
    bool has_contained;  // a `contained` member (dom-2, dom-3, dom-4, dom-5 hold without one)
    bool has_div;        // `text` is an object with a string `div` (dom-6 holds)
    bool no_text;        // no `text` or `_text` member at all (dom-6 fails)
  };
  std::vector<resource_frame> resources_;
  std::optional<fhirpath::evaluator> evaluator_;
  std::vector<bool> unchecked_reported_;

  void add(severity sev, std::string_view code, uint64_t offset, std::string details, std::string_view extra_path = {},
           std::string_view key = {}) {
    if (stopped_) return;
    if (out_.issues.size() >= opts_.max_issues) {
      stopped_ = true;
      out_.truncated = true;
      issue cut;
      cut.severity = severity::information;
      cut.code = TOO_COSTLY;
      cut.details = "more issues were found; stopped after max_issues (" + std::to_string(opts_.max_issues) + ")";
      cut.expression = path_.text();
      cut.offset = offset;
      lines_.locate(offset, cut.line, cut.column);
      out_.issues.push_back(std::move(cut));
      return;
    }
    issue i;
    i.severity = sev;
    i.code = code;
    i.key = key;
    i.details = std::move(details);
    path_.append_to(i.expression);
    i.expression.append(extra_path);
    i.offset = offset;
    lines_.locate(offset, i.line, i.column);
    if (sev == severity::error) ++out_.errors;
    if (sev == severity::warning) ++out_.warnings;
    out_.issues.push_back(std::move(i));
  }

  // A resource inside another (contained, Bundle.entry.resource, Parameters.parameter.resource).
  void walk_resource(json::value v, bool contained) {
    if (v.type() != json::kind::object) {
      add(severity::error, STRUCTURE, v.offset(),
          "a resource must be a JSON object, found " + std::string(json::kind_name(v.type())));
      return;
    }
    auto obj = v.get_object().value();
    auto rt = obj.find("resourceType");
    if (!rt) {
      add(severity::error, INVALID, v.offset(), "a resource needs a resourceType");
      return;
    }
    if (rt->type() != json::kind::string) {
      add(severity::error, STRUCTURE, rt->offset(), "resourceType must be a string", ".resourceType");
      return;
    }
    uint16_t type = find_resource_type(rt->get_string().value());
    if (type == NO_TYPE) {
      add(severity::error, NOT_SUPPORTED, rt->offset(),
          "unknown resourceType " + quoted_excerpt(rt->get_string().value()), ".resourceType");
      return;
    }
    bool was_contained = in_contained_;
    in_contained_ = contained;
    walk_resource_body(v, type, contained);
    in_contained_ = was_contained;
  }

  void walk_resource_body(json::value v, uint16_t type, bool contained) {
    // A contained resource's `#id` references resolve against its container's contained list.
    bool own_scope = !contained;
    // The members the resource's own invariants ask about, found in one pass (as find() would:
    // the first of each key).
    std::optional<json::value> contained_member, text_member;
    bool text_key = false;  // `text` or `_text`
    for (json::member m : v.get_object().value()) {
      if (!contained_member && m.key == "contained") {
        contained_member = m.val;
      } else if (m.key == "text") {
        if (!text_member) text_member = m.val;
        text_key = true;
      } else if (m.key == "_text") {
        text_key = true;
      }
    }
    bool has_div = false;
    if (text_member && text_member->type() == json::kind::object) {
      auto div = text_member->get_object().value().find("div");
      has_div = div && div->type() == json::kind::string;
    }
    if (own_scope) {
      scope s;
      if (auto c = contained_member; c && c->type() == json::kind::array) {
        auto arr = c->get_array().value();
        if (arr.size() > opts_.max_contained) {
          if (!contained_limit_hit) {
            contained_limit_hit = true;
            contained_limit_offset = c->offset();
            contained_limit_path = path_.text() + ".contained";
          }
          add(severity::error, TOO_COSTLY, c->offset(),
              std::to_string(arr.size()) + " contained resources exceed max_contained (" +
                  std::to_string(opts_.max_contained) + ")",
              ".contained");
          return;
        }
        for (auto item : arr) {
          if (item.type() != json::kind::object) continue;
          auto id = item.get_object().value().find("id");
          if (id && id->type() == json::kind::string) s.contained_ids.push_back(id->get_string().value());
        }
        std::sort(s.contained_ids.begin(), s.contained_ids.end());
      }
      scope_.push_back(std::move(s));
    }
    resources_.push_back(resource_frame{v, contained, contained_member.has_value(), has_div, !text_key});
    if (opts_.check_invariants) { check_invariants(TYPE_CONSTRAINTS[type], type, &v, nullptr, v.offset(), true); }
    walk_object(v, type);
    resources_.pop_back();
    if (own_scope) scope_.pop_back();
  }

  // Whether a value has the JSON form of its type, so that its invariants mean something (a
  // value of the wrong form is reported already).
  static bool has_form(uint16_t type, const json::value *value, const json::value *companion) {
    const type_def &t = TYPES[type];
    // An empty object is an error already (and ele-1's very case): not reported twice.
    if (t.kind != type_kind::primitive)
      return value && value->type() == json::kind::object && value->get_object().value().size() > 0;
    if (!value || value->is_null()) return companion && companion->type() == json::kind::object;
    if (is_string_primitive(t.prim)) return value->type() == json::kind::string;
    if (t.prim == primitive::boolean) return value->type() == json::kind::boolean;
    return value->type() == json::kind::number;
  }

  // The invariants of one value under key `key_index` (its element's and its type's).
  void check_key(uint32_t key_index, const json::value *value, const json::value *companion, uint64_t offset) {
    if (!opts_.check_invariants || stopped_) return;
    const constraint_range r = KEY_CONSTRAINTS[key_index];
    if (r.count == 0) return;
    // Most values are primitives whose only invariant is ele-1, which a value holds (hasValue()),
    // or objects of a type whose only invariant is ele-1 (Coding, CodeableConcept, Identifier,
    // HumanName, Meta...), which its shortcut answers: check_invariants' loop would reach the
    // same answer for them.
    if (r.count == 1 && CONSTRAINT_LISTS[r.first] == invariants_.ele_1 && opts_.invariant_fast_paths && value) {
      json::kind k = value->type();
      if (k == json::kind::string || k == json::kind::number || k == json::kind::boolean) return;
      if (k == json::kind::object && ele_1_holds(value, companion)) return;
    }
    uint16_t type = KEYS[key_index].type;
    if (!has_form(type, value, companion)) return;
    check_invariants(r, type, value, companion, offset);
  }

  // ref-1 (a `#id` reference names a contained resource of %rootResource) where the answer is
  // certain: the engine rebuilds %rootResource.contained.id for every reference (quadratic in the
  // contained resources); the walk has those ids sorted already (scope_, the container's).
  bool ref_1_holds(const json::value *value) const {
    if (!value || value->type() != json::kind::object) return false;
    // The first `reference` member, as find() gives it; keys compared by words (text_words.h),
    // not by a call to find() and to memcmp for each member (in wasm both are calls; 1,250 a
    // Bundle of 1,000).
    std::optional<json::value> r;
    for (json::member m : value->get_object().value()) {
      if (quire::detail::same_text(m.key, "reference")) {
        r = m.val;
        break;
      }
    }
    if (!r) return true;  // startsWith() of nothing: the expression is empty, not false
    if (r->type() != json::kind::string) return false;
    std::string_view s = r->get_string().value();
    if (s.empty() || s[0] != '#') return true;
    if (scope_.empty()) return false;
    const auto &ids = scope_.back().contained_ids;
    return std::binary_search(ids.begin(), ids.end(), s.substr(1));
  }

  // `why` empty: the invariant is never evaluated, and its issue's details were made when it was
  // compiled.
  void report_unchecked(uint16_t index, std::string_view why, uint64_t offset) {
    if (unchecked_reported_.empty()) unchecked_reported_.resize(CONSTRAINT_COUNT);
    if (unchecked_reported_[index]) return;
    unchecked_reported_[index] = true;
    const constraint_def &def = CONSTRAINTS[index];
    std::string details;
    if (why.empty()) {
      details = invariants_.all[index].unchecked_details;
    } else {
      details.append("invariant ").append(def.key.view()).append(" not checked: ").append(why);
    }
    add(severity::information, INFORMATIONAL, offset, std::move(details), {}, def.key.view());
  }

  // own_resource: the value is the resource being walked (its own invariants, dom-2...).
  void check_invariants(constraint_range r, uint16_t type, const json::value *value, const json::value *companion,
                        uint64_t offset, bool own_resource = false) {
    const invariant_set &set = invariants_;
    const auto &all = set.all;
    // The context item is made when the first invariant needs the engine (most elements have only
    // ele-1, which the shortcut answers).
    std::optional<fhirpath::item> self;
    std::optional<bundle_entries> entries;    // a Bundle's, for bdl-2, bdl-3, bdl-4
    std::optional<bundle_entry_check> entry;  // a Bundle entry's, for bdl-5, bdl-8
    for (uint32_t i = r.first; i < r.first + r.count && !stopped_; ++i) {
      uint16_t index = CONSTRAINT_LISTS[i];
      const compiled_invariant &inv = all[index];
      if (!inv.expr) {
        report_unchecked(index, {}, offset);
        continue;
      }
      if (opts_.invariant_fast_paths && inv.shortcut == invariant_shortcut::ele_1 && ele_1_holds(value, companion))
        continue;
      if (opts_.invariant_fast_paths && inv.shortcut == invariant_shortcut::dom_3 && own_resource && value &&
          (!resources_.back().has_contained || dom_3_holds(*value)))
        continue;
      if (opts_.invariant_fast_paths && inv.shortcut == invariant_shortcut::ref_1 && ref_1_holds(value)) continue;
      if (opts_.invariant_fast_paths && inv.shortcut == invariant_shortcut::bdl_7 && own_resource && value &&
          bdl_7_holds(*value))
        continue;
      // bdl-2, bdl-3, bdl-4: one pass over the entries for the three (a direct check's pass each).
      if (opts_.invariant_fast_paths && own_resource && value &&
          (inv.shortcut == invariant_shortcut::bdl_2 || inv.shortcut == invariant_shortcut::bdl_3 ||
           inv.shortcut == invariant_shortcut::bdl_4)) {
        if (!entries) entries = bundle_entry_facts(*value);
        if (bundle_entries_hold(inv.shortcut, *entries)) continue;
      }
      // bdl-5, bdl-8 on a Bundle entry: one pass over its members for the two.
      if (opts_.invariant_fast_paths &&
          (inv.shortcut == invariant_shortcut::bdl_5 || inv.shortcut == invariant_shortcut::bdl_8) && value) {
        if (!entry) entry = bundle_entry_holds(*value);
        if (inv.shortcut == invariant_shortcut::bdl_5 ? entry->resource : entry->full_url) continue;
      }
      if (opts_.invariant_fast_paths && own_resource && value && value->type() == json::kind::object) {
        const resource_frame &here = resources_.back();
        if (inv.shortcut == invariant_shortcut::about_contained && !here.has_contained) continue;
        if (inv.shortcut == invariant_shortcut::dom_6 && here.has_div) continue;
      }
      // R4, DomainResource.text: "Contained resources do not have narrative" (dom-1 of STU3 forbade
      // it); dom-6's advice is for the resources that are not contained.
      if (inv.shortcut == invariant_shortcut::dom_6 && own_resource && resources_.back().contained) continue;
      // dom-6 (`text.div.exists()`) on a resource with no `text` member, nor `_text`: false, as the
      // direct check and the engine answer; without running the check's scan of the resource's
      // members (each of a Bundle's resources without narrative ran it, a fifth of the direct
      // checks' time in wasm).
      if (opts_.invariant_fast_paths && inv.shortcut == invariant_shortcut::dom_6 && own_resource && value &&
          value->type() == json::kind::object && resources_.back().no_text) {
        report_failed(index, offset);
        continue;
      }
      if (opts_.invariant_fast_paths && value && value->type() == json::kind::object) {
        uint32_t root = inv.direct_root(type);
        if (root != NO_DIRECT) {
          direct_outcome d = run_direct_check(set.direct_nodes, root, *value);
          if (d == direct_outcome::holds) continue;
          if (d == direct_outcome::fails) {
            report_failed(index, offset);
            continue;
          }
        }
      }
      if (!evaluator_) evaluator_.emplace(invariant_limits());
      if (!self) self = fhirpath::typed_item(value, type, companion);
      fhirpath::environment env;
      const resource_frame &here = resources_.back();
      env.resource = &here.value;
      env.root_resource =
          here.contained && resources_.size() > 1 ? &resources_[resources_.size() - 2].value : &here.value;
      env.as_function_filters = true;
      auto result = evaluator_->evaluate(*inv.expr, *self, env);
      if (!result) {
        std::string why = "evaluating it failed here: ";
        why += result.error().describe();
        report_unchecked(index, why, offset);
        continue;
      }
      // FHIRPath's singleton evaluation: only a false fails; an empty result is "unknown" (dates of
      // different precision), not a violation.
      const fhirpath::collection &c = **result;
      if (c.size() == 1 && c[0].kind == fhirpath::value_kind::boolean && !c[0].boolean) report_failed(index, offset);
    }
  }

  void report_failed(uint16_t index, uint64_t offset) {
    const constraint_def &def = CONSTRAINTS[index];
    add(def.warning ? severity::warning : severity::error, INVARIANT, offset, invariants_.all[index].failed_details, {},
        def.key.view());
  }

  void walk_object(json::value v, uint16_t type) {
    auto obj = v.get_object().value();
    if (obj.size() == 0) {
      add(severity::error, INVALID, v.offset(),
          "an object must have at least one property (FHIR JSON has no empty objects)");
      return;
    }
    const type_def &t = TYPES[type];
    const size_t base = slots_used_;
    uint32_t member = 0;
    const bool is_resource = t.kind == type_kind::resource || t.kind == type_kind::any_resource;
    for (auto it = obj.begin(), last = obj.end(); it != last; ++it) {
      if (stopped_) break;
      ++member;
      // The key's pointer and length and the value read from the iterator apart, never as one
      // json::member or string_view that lives across the loop's body: GCC kept those on the
      // stack, written in two 8-byte stores and read back in one 16-byte load that the processor
      // cannot forward from them (a stall per member, a third of walk_object's samples under perf
      // on a Bundle).
      const char *const key_data = (*it).key.data();
      const size_t key_length = (*it).key.size();
      if (is_resource && key_length == 12 && std::memcmp(key_data, "resourceType", 12) == 0) continue;
      const bool underscore = key_length > 1 && key_data[0] == '_';
      const key_row k = keys_.find(type, std::string_view(key_data + underscore, key_length - underscore));
      if (!k.found() || (underscore && TYPES[k.type].kind != type_kind::primitive)) {
        const std::string_view key(key_data, key_length);
        size_t mark = path_.mark();
        path_.member(key);
        if (first_unknown == SIZE_MAX) first_unknown = out_.issues.size();
        ++unknown_count;
        add(severity::error, STRUCTURE, (*it).val.offset(),
            "unknown element " + quoted_excerpt(key) + " in " + std::string(type_display_name(type)));
        path_.back_to(mark);
        continue;
      }
      push_slot(
          slot{k.key, k.element, k.type, member, static_cast<uint32_t>(key_length), key_data, (*it).val, underscore});
    }
    auto in_order = [](const slot &a, const slot &b) {
      if (a.element != b.element) return a.element < b.element;
      if (a.underscore != b.underscore) return !a.underscore;
      return a.member < b.member;
    };
    // Writers put members in the definition's order: most objects are sorted already.
    const auto first_slot = slots_.begin() + static_cast<std::ptrdiff_t>(base);
    const auto last_slot = slots_.begin() + static_cast<std::ptrdiff_t>(slots_used_);
    if (!std::is_sorted(first_slot, last_slot, in_order)) std::sort(first_slot, last_slot, in_order);

    // Merge the definition's required elements with the sorted members, in the definition's
    // order: each required one that is missing, and each present element once. Only the members
    // and the required elements are visited, not every element of the type (a Patient has 28,
    // an object of a Bundle's resource usually two or three members).
    size_t s = base;
    const size_t end = slots_used_;
    const uint32_t *req = required_.of(type);
    const uint32_t *const req_end = required_.of(static_cast<uint16_t>(type + 1));
    while (s < end && !stopped_) {
      const uint32_t e = slots_[s].element;
      for (; req < req_end && *req < e && !stopped_; ++req) report_missing(ELEMENTS[*req], v.offset());
      if (stopped_) break;
      if (req < req_end && *req == e) ++req;
      size_t group = s;
      while (s < end && slots_[s].element == e) ++s;
      walk_group(ELEMENTS[e], group, s);
    }
    for (; req < req_end && !stopped_; ++req) report_missing(ELEMENTS[*req], v.offset());
    slots_used_ = base;
    if (type == reference_type_ && opts_.check_references && !stopped_) check_reference(obj);
  }

  void report_missing(const element_def &def, uint64_t offset) {
    std::string key(def.name.view());
    if (def.is_choice) key += "[x]";
    add(severity::error, REQUIRED, offset,
        "missing required element '" + key + "' (minimum " + std::to_string(def.min) + ")", "");
  }

  // The members of one element: its value (`x`, or one choice `valueX`) and its `_x` companion.
  void walk_group(const element_def &def, size_t first, size_t last) {
    // One member, nearly every element: no duplicates to look for, one copy.
    if (last == first + 1) {
      const slot one = slots_[first];
      walk_element(def, one.underscore ? nullptr : &one, one.underscore ? &one : nullptr);
      return;
    }
    const slot *value = nullptr;
    const slot *ext = nullptr;
    for (size_t i = first; i < last; ++i) {
      const slot cur = slots_[i];
      const slot *&target = cur.underscore ? ext : value;
      if (target) {
        size_t mark = path_.mark();
        path_.member(cur.key());
        if (target->type == cur.type) {
          add(severity::error, STRUCTURE, cur.val.offset(), "duplicate property " + quoted_excerpt(cur.key()));
        } else {
          add(severity::error, STRUCTURE, cur.val.offset(),
              "only one type of " + std::string(def.name.view()) + "[x] may be present, found " +
                  quoted_excerpt(target->key()) + " and " + quoted_excerpt(cur.key()));
        }
        path_.back_to(mark);
        continue;
      }
      target = &slots_[i];
    }
    // Copies: walking values below pushes onto slots_, which may move it.
    slot value_copy{}, ext_copy{};
    if (value) value_copy = *value;
    if (ext) ext_copy = *ext;
    if (value && ext && value_copy.type != ext_copy.type) {
      add(severity::error, STRUCTURE, ext_copy.val.offset(),
          quoted_excerpt(ext_copy.key()) + " does not match " + quoted_excerpt(value_copy.key()),
          "." + std::string(ext_copy.key()));
      ext = nullptr;
    }
    walk_element(def, value ? &value_copy : nullptr, ext ? &ext_copy : nullptr);
  }

  // An element's value and `_x` companion (either may be null, not both), off the slots_ stack.
  void walk_element(const element_def &def, const slot *value, const slot *ext) {
    const slot &any = value ? *value : *ext;
    size_t mark = path_.mark();
    if (def.is_choice) {
      path_.choice(def.name.view(), any.type);
    } else {
      path_.member(def.name.view());
    }
    if (def.is_array) {
      walk_array(def, any.type, value, ext);
    } else {
      if (!(value && value->val.type() == json::kind::array)) {
        check_key(any.key_index, value ? &value->val : nullptr, ext ? &ext->val : nullptr,
                  value ? value->val.offset() : ext->val.offset());
      }
      if (value) {
        if (value->val.type() == json::kind::array) {
          add(severity::error, STRUCTURE, value->val.offset(),
              "'" + std::string(value->key()) + "' has at most one value: it must not be an array");
        } else {
          walk_item(def, value->type, value->val, ext != nullptr);
        }
      }
      if (ext) {
        if (ext->val.type() != json::kind::object) {
          add(severity::error, STRUCTURE, ext->val.offset(), "'" + std::string(ext->key()) + "' must be an object");
        } else {
          walk_object(ext->val, ext->type);
        }
      }
    }
    path_.back_to(mark);
  }

  void walk_array(const element_def &def, uint16_t type, const slot *value, const slot *ext) {
    const uint32_t key_index = value ? value->key_index : ext->key_index;
    std::optional<json::array> values, exts;
    if (value) {
      if (value->val.type() != json::kind::array) {
        add(severity::error, STRUCTURE, value->val.offset(),
            "'" + std::string(value->key()) + "' repeats: it must be an array");
        return;
      }
      values = value->val.get_array().value();
    }
    if (ext) {
      if (ext->val.type() != json::kind::array) {
        add(severity::error, STRUCTURE, ext->val.offset(),
            "'" + std::string(ext->key()) + "' repeats: it must be an array");
        return;
      }
      exts = ext->val.get_array().value();
    }
    size_t n = values ? values->size() : exts->size();
    uint64_t where = values ? values->offset() : exts->offset();
    if (n == 0) {
      add(severity::error, INVALID, where, "an array must have at least one element (FHIR JSON has no empty arrays)");
      return;
    }
    if (values && exts && values->size() != exts->size()) {
      add(severity::error, STRUCTURE, exts->offset(),
          "'" + std::string(ext->key()) + "' has " + std::to_string(exts->size()) + " elements but '" +
              std::string(value->key()) + "' has " + std::to_string(values->size()));
      exts.reset();
    }
    if (n < def.min)
      add(severity::error, REQUIRED, where,
          "at least " + std::to_string(def.min) + " elements required, found " + std::to_string(n));
    if (def.max != UNBOUNDED && n > def.max) {
      add(severity::error, STRUCTURE, where,
          "at most " + std::to_string(def.max) + " elements allowed, found " + std::to_string(n));
    }
    std::optional<json::array::iterator> vi, ei;
    if (values) vi = values->begin();
    if (exts) ei = exts->begin();
    for (size_t i = 0; i < n && !stopped_; ++i) {
      size_t mark = path_.mark();
      path_.index(i);
      bool has_ext = false;
      json::value item_value, item_ext;
      if (values) item_value = **vi;
      if (exts) item_ext = **ei;
      check_key(key_index, values ? &item_value : nullptr, exts ? &item_ext : nullptr,
                values ? item_value.offset() : item_ext.offset());
      if (exts) {
        json::value e = **ei;
        ++*ei;
        if (e.type() == json::kind::object) {
          has_ext = true;
          walk_object(e, type);
        } else if (e.type() != json::kind::null_value) {
          add(severity::error, STRUCTURE, e.offset(),
              "elements of '" + std::string(ext->key()) + "' must be objects or null");
        }
      }
      if (values) {
        json::value v = **vi;
        ++*vi;
        walk_item(def, type, v, has_ext);
      } else if (!has_ext && exts) {
        add(severity::error, INVALID, exts->offset(),
            "null in '" + std::string(ext->key()) + "' with no value beside it");
      }
      path_.back_to(mark);
    }
  }

  // One value of an element of type `type`; `has_ext` says whether a `_x` object stands beside it.
  void walk_item(const element_def &def, uint16_t type, json::value v, bool has_ext) {
    const type_def &t = TYPES[type];
    if (v.type() == json::kind::null_value) {
      if (!has_ext || !def.is_array) {
        add(severity::error, INVALID, v.offset(),
            def.is_array
                ? "null is allowed in a primitive array only where the '_' array has an extension at the same place"
                : "null is not a FHIR value");
      }
      return;
    }
    switch (t.kind) {
      case type_kind::primitive: walk_primitive(def, t.prim, v); return;
      case type_kind::complex:
      case type_kind::backbone:
        if (v.type() != json::kind::object) {
          add(severity::error, STRUCTURE, v.offset(),
              "expected an object (" + std::string(type_display_name(type)) + "), found " +
                  std::string(json::kind_name(v.type())));
          return;
        }
        walk_object(v, type);
        return;
      case type_kind::resource:
      case type_kind::any_resource: {
        bool contained = def.name.view() == "contained";
        if (contained && in_contained_) {
          // dom-2 (on the container) reports it when invariants are checked; nested resources are
          // never walked.
          if (!opts_.check_invariants)
            add(severity::error, INVALID, v.offset(), "a contained resource must not contain resources (dom-2)");
          return;
        }
        walk_resource(v, contained);
        return;
      }
    }
  }

  void walk_primitive(const element_def &def, primitive p, json::value v) {
    // Only issues name the type: it is looked up then, not for every primitive walked.
    auto type_name = [p] { return TYPES[primitive_type(p)].name.view(); };
    if (is_string_primitive(p)) {
      if (v.type() != json::kind::string) {
        add(severity::error, STRUCTURE, v.offset(),
            "a " + std::string(type_name()) + " is a JSON string, found " + std::string(json::kind_name(v.type())));
        return;
      }
      std::string_view s = v.get_string().value();
      if (s.empty()) {
        add(severity::error, INVALID, v.offset(), "a string must not be empty (FHIR JSON has no empty strings)");
        return;
      }
      if (const char *why = check_string_format(p, s)) {
        add(severity::error, VALUE, v.offset(),
            "invalid " + std::string(type_name()) + " " + quoted_excerpt(s) + ": " + why);
        return;
      }
      if (def.code_set >= 0 && opts_.check_codes && !code_in_set(def.code_set, s)) {
        add(severity::error, CODE_INVALID, v.offset(),
            "code " + quoted_excerpt(s) + " is not in the required value set " +
                std::string(CODE_SETS[def.code_set].value_set.view()));
      }
      return;
    }
    if (p == primitive::boolean) {
      if (v.type() != json::kind::boolean) {
        add(severity::error, STRUCTURE, v.offset(),
            "a boolean is JSON true or false, found " + std::string(json::kind_name(v.type())));
      }
      return;
    }
    if (v.type() != json::kind::number) {
      add(severity::error, STRUCTURE, v.offset(),
          "a " + std::string(type_name()) + " is a JSON number, found " + std::string(json::kind_name(v.type())));
      return;
    }
    std::string_view text = v.get_number_text().value();
    bool is_integer = text.find_first_of(".eE") == std::string_view::npos;
    if (const char *why = check_number_format(p, text, is_integer)) {
      add(severity::error, VALUE, v.offset(),
          "invalid " + std::string(type_name()) + " " + std::string(text.substr(0, 40)) + ": " + why);
    }
  }

  void check_reference(json::object obj) {
    auto r = obj.find("reference");
    if (!r || r->type() != json::kind::string) return;
    std::string_view s = r->get_string().value();
    if (s.empty()) return;  // reported as an empty string already
    const char *why = nullptr;
    if (s[0] == '#') {
      // With invariants, ref-1 (%rootResource.contained.id) makes this same check.
      if (opts_.check_invariants) return;
      std::string_view id = s.substr(1);
      if (!id.empty()) {
        bool found = !scope_.empty() &&
                     std::binary_search(scope_.back().contained_ids.begin(), scope_.back().contained_ids.end(), id);
        if (!found) {
          add(severity::error, NOT_FOUND, r->offset(), "no contained resource has id " + quoted_excerpt(id),
              ".reference");
        }
      }
      return;
    }
    if (s.substr(0, 9) == "urn:uuid:") {
      if (!is_valid_uuid(s)) why = "not a valid urn:uuid";
    } else if (s.substr(0, 8) == "urn:oid:") {
      if (!is_valid_oid(s)) why = "not a valid urn:oid";
    } else {
      size_t colon = s.find(':');
      size_t slash = s.find('/');
      bool absolute = colon != std::string_view::npos && (slash == std::string_view::npos || colon < slash);
      if (!absolute) {
        // Relative: Type/id, Type/id/_history/version, or a conditional Type?search (transactions).
        size_t question = s.find('?');
        std::string_view path = s.substr(0, question);
        size_t cut = path.find('/');
        std::string_view type = path.substr(0, cut);
        if (find_resource_type(type) == NO_TYPE) {
          why = "a relative reference starts with a resource type (Patient/123)";
        } else if (question == std::string_view::npos) {
          if (cut == std::string_view::npos) {
            why = "a relative reference is Type/id";
          } else {
            std::string_view rest = path.substr(cut + 1);
            size_t hist = rest.find('/');
            std::string_view id = rest.substr(0, hist);
            if (!is_valid_id(id)) {
              why = "the id of a relative reference is 1 to 64 of A-Z a-z 0-9 - .";
            } else if (hist != std::string_view::npos) {
              std::string_view tail = rest.substr(hist);
              if (tail.substr(0, 10) != "/_history/" || !is_valid_id(tail.substr(10)))
                why = "expected Type/id/_history/version";
            }
          }
        } else if (cut != std::string_view::npos) {
          why = "a conditional reference is Type?search";
        }
      }
    }
    if (why)
      add(severity::error, VALUE, r->offset(), "invalid reference " + quoted_excerpt(s) + ": " + why, ".reference");
  }
};

quire::error read_error(error_code code, std::string message, uint64_t offset, std::string path,
                        std::string_view input) {
  quire::error e(code, std::move(message), offset);
  e.path = std::move(path);
  locate(e, input);
  return e;
}

json::limits json_limits(const options &opts) {
  json::limits lim;
  lim.max_depth = opts.max_depth < HARD_MAX_DEPTH ? opts.max_depth : HARD_MAX_DEPTH;
  lim.max_document_bytes = opts.max_bytes;
  return lim;
}

result<resource> read_document(json::document doc, const options &opts) {
  std::string_view input = doc.input();
  json::value root = doc.root();
  if (root.type() != json::kind::object) {
    return read_error(error_code::INVALID_RESOURCE,
                      "a FHIR resource is a JSON object, found " + std::string(json::kind_name(root.type())),
                      root.offset(), "", input);
  }
  auto rt = root.get_object().value().find("resourceType");
  if (!rt) return read_error(error_code::INVALID_RESOURCE, "the object has no resourceType", root.offset(), "", input);
  if (rt->type() != json::kind::string) {
    return read_error(error_code::INVALID_RESOURCE, "resourceType must be a string", rt->offset(), "resourceType",
                      input);
  }
  uint16_t type = find_resource_type(rt->get_string().value());
  if (type == NO_TYPE) {
    return read_error(error_code::INVALID_RESOURCE, "unknown resourceType " + quoted_excerpt(rt->get_string().value()),
                      rt->offset(), "resourceType", input);
  }
  resource r;
  resource_access::set_type(r, type);
  outcome &out = resource_access::outcome(r);
  walker w(opts, input, out);
  w.walk_root(root, type);
  if (w.contained_limit_hit) {
    return read_error(error_code::TOO_MANY_CONTAINED,
                      out.issues.empty() ? "too many contained resources" : out.issues.back().details,
                      w.contained_limit_offset, w.contained_limit_path, input);
  }
  if (opts.strict && w.unknown_count > 0) {
    const issue &first = out.issues[w.first_unknown];
    quire::error e(error_code::UNKNOWN_ELEMENT, first.details, first.offset);
    e.line = first.line;
    e.column = first.column;
    e.path = first.expression;
    return e;
  }
  resource_access::doc(r) = std::move(doc);
  return r;
}

outcome outcome_of_error(const quire::error &e) {
  outcome o;
  issue i;
  i.severity = severity::error;
  switch (e.code) {
    case error_code::MAX_DEPTH_EXCEEDED:
    case error_code::DOCUMENT_TOO_LARGE:
    case error_code::RESULT_TOO_LARGE:
    case error_code::TOO_MANY_CONTAINED:
    case error_code::OUT_OF_MEMORY: i.code = TOO_COSTLY; break;
    case error_code::INVALID_RESOURCE:
    case error_code::EMPTY_INPUT: i.code = INVALID; break;
    default: i.code = STRUCTURE; break;
  }
  i.details = e.message;
  i.expression = e.path;
  i.offset = e.offset == quire::error::NO_OFFSET ? 0 : e.offset;
  i.line = e.line;
  i.column = e.column;
  i.error = e.code;
  o.issues.push_back(std::move(i));
  o.errors = 1;
  return o;
}

bool wants_xml(std::string_view input, const options &opts) noexcept {
  return opts.input_syntax == syntax::xml || (opts.input_syntax == syntax::detect && looks_like_xml(input));
}

}  // namespace

std::string_view severity_name(severity s) noexcept {
  switch (s) {
    case severity::error: return "error";
    case severity::warning: return "warning";
    case severity::information: return "information";
  }
  return "error";
}

std::string_view resource::resource_type() const noexcept { return detail::TYPES[type_].name.view(); }

std::string_view definitions_version() noexcept { return detail::DEFINITIONS_VERSION.view(); }

result<resource> detail::read_built_document(json::document doc, const options &opts) {
  return read_document(std::move(doc), opts);
}

result<resource> read(std::string_view input, const options &opts) {
  if (wants_xml(input, opts)) return read_xml(input, opts);
  auto doc = json::parse(input, json_limits(opts));
  if (!doc) return std::move(doc).error();
  return read_document(std::move(doc).value(), opts);
}

result<resource> read(const byte_source &source, const options &opts) {
  if (opts.input_syntax != syntax::json) {
    // XML is read from contiguous bytes: a source that has none is read whole first.
    std::span<const uint8_t> bytes = source.contiguous();
    std::string copy;
    if (bytes.empty() && source.size() > 0) {
      if (source.size() > opts.max_bytes) {
        return quire::error(error_code::DOCUMENT_TOO_LARGE, "the input is larger than max_bytes", 0);
      }
      copy.resize(static_cast<size_t>(source.size()));
      auto got = source.read_at(0, std::span<uint8_t>(reinterpret_cast<uint8_t *>(copy.data()), copy.size()));
      if (!got) return std::move(got).error();
      bytes = std::span<const uint8_t>(reinterpret_cast<const uint8_t *>(copy.data()), copy.size());
    }
    std::string_view text(reinterpret_cast<const char *>(bytes.data()), bytes.size());
    if (wants_xml(text, opts)) return read_xml(text, opts);
  }
  auto doc = json::parse(source, json_limits(opts));
  if (!doc) return std::move(doc).error();
  return read_document(std::move(doc).value(), opts);
}

outcome validate(std::string_view input, const options &opts) {
  options lenient = opts;
  lenient.strict = false;
  auto r = read(input, lenient);
  if (!r) return outcome_of_error(r.error());
  return std::move(resource_access::outcome(r.value()));
}

outcome validate(const byte_source &source, const options &opts) {
  options lenient = opts;
  lenient.strict = false;
  auto r = read(source, lenient);
  if (!r) return outcome_of_error(r.error());
  return std::move(resource_access::outcome(r.value()));
}

}  // namespace quire::fhir
