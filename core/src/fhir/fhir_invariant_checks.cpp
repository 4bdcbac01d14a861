// Direct checks: the common shapes of the R4 invariants (`exists()`, `empty()`, `hasValue()`,
// `count()` sums, `=`/`!=` against a literal, `in` a list of strings, `contains()`,
// `startsWith()` and `matches()` on a primitive, `where()` filters, `and`/`or`/`xor`/`implies`/
// `not()` of those) run over the tape without the FHIRPath engine and without allocating. They are
// lowered from the engine's own compiled form of each expression (the same parse, so the two never
// read an expression differently), once per invariant and per type it applies to, when the
// invariants are compiled. A node the lowering does not know stays opaque: evaluating it answers
// "unknown", and so does any data a direct check is not certain about (a `_x` companion, a null,
// a repeated key, a value of the wrong JSON form, several items where one is expected): then the
// engine decides, so the answers are always the engine's.
#include <algorithm>
#include <array>
#include <cstring>
#include <optional>

#include "../fhirpath/fhirpath_internal.h"
#include "../fhirpath/fhirpath_regex.h"
#include "fhir_internal.h"

namespace quire::fhir::detail {

namespace {

namespace fp = quire::fhirpath;

constexpr uint32_t NIL = 0xFFFFFFFF;

bool is_upper(char c) { return c >= 'A' && c <= 'Z'; }

// What a direct node gives: unknown (ask the engine), nothing (the empty collection), a boolean or
// an integer (a single item).
struct answer {
  enum class kind : uint8_t { unknown, empty, boolean, integer } k = kind::unknown;
  int64_t v = 0;
  static answer unknown() { return {}; }
  static answer empty() { return {kind::empty, 0}; }
  static answer of(bool b) { return {kind::boolean, b ? 1 : 0}; }
  static answer count(int64_t n) { return {kind::integer, n}; }
};

// The items a path gives, as far as a test needs them: how many, and the first one.
struct items {
  bool known = true;
  uint32_t count = 0;
  json::value first;
  uint16_t first_type = NO_TYPE;
};

class lowering {
 public:
  lowering(const fp::expression::program &prog, std::vector<direct_node> &pool) : prog_(prog), pool_(pool) {}

  // The root of the direct form of the whole expression for a context of type `type`; NIL when it
  // would only ever answer "unknown".
  uint32_t lower_root(uint16_t type, bool context_is_resource) {
    resource_type_ = context_is_resource ? type : NO_TYPE;
    uint32_t r = lower_test(prog_.root, type);
    if (r == NIL || pool_[r].k == direct_node::kind::opaque) return NIL;
    return r;
  }

 private:
  const fp::expression::program &prog_;
  std::vector<direct_node> &pool_;
  uint16_t resource_type_ = NO_TYPE;  // %resource's type when it is the context (the root's $this)

  uint32_t push(direct_node n) {
    using K = direct_node::kind;
    auto constant = [&](uint32_t i) { return i != NIL && pool_[i].constant; };
    switch (n.k) {
      case K::opaque: n.constant = false; break;
      case K::resource_var:
      case K::lit_string:
      case K::lit_boolean:
      case K::lit_integer: n.constant = true; break;
      case K::and_op:
      case K::or_op:
      case K::xor_op:
      case K::implies:
      case K::eq:
      case K::ne:
      case K::lt:
      case K::gt:
      case K::le:
      case K::ge:
      case K::add: n.constant = constant(n.a) && constant(n.b); break;
      default: n.constant = constant(n.a); break;  // a path's input, a function's input
    }
    pool_.push_back(n);
    return static_cast<uint32_t>(pool_.size() - 1);
  }
  bool is_opaque(uint32_t i) const { return pool_[i].k == direct_node::kind::opaque; }
  uint32_t opaque() {
    direct_node n;
    n.k = direct_node::kind::opaque;
    return push(n);
  }
  const fp::node &at(uint32_t i) const { return prog_.nodes[i]; }
  uint32_t arg(const fp::node &nd, uint32_t i) const { return prog_.args[nd.first_arg + i]; }

  static bool is_object_type(uint16_t t) {
    return t != NO_TYPE && t < TYPE_COUNT &&
           (TYPES[t].kind == type_kind::complex || TYPES[t].kind == type_kind::backbone ||
            TYPES[t].kind == type_kind::resource);
  }

  // A path of members and where() filters starting at $this (of type `self`): the node, and the
  // type of its items in `out_type` (NO_TYPE when unknown: a choice, a resource of any type).
  uint32_t lower_path(uint32_t i, uint16_t self, uint16_t &out_type) {
    const fp::node &nd = at(i);
    if (nd.kind == fp::op::variable && nd.name == "resource" && resource_type_ != NO_TYPE) {
      direct_node n;
      n.k = direct_node::kind::resource_var;
      n.item_type = resource_type_;
      out_type = resource_type_;
      return push(n);
    }
    if (nd.kind == fp::op::member) {
      uint16_t in_type = self;
      uint32_t input = NIL;
      if (nd.a != NONE_INPUT) {
        input = lower_path(nd.a, self, in_type);
        if (input == NIL) return NIL;
      }
      if (!is_object_type(in_type)) return NIL;
      // A type's name at the start of a path may select the context itself (fhirpath_navigation.cpp).
      if (nd.names_type && TYPES[in_type].kind == type_kind::resource &&
          (fp::fhir_is_a(in_type, nd.type) ||
           (nd.type.ns == fp::type_spec::space::fhir && TYPES[nd.type.fhir].kind == type_kind::resource)))
        return NIL;
      const type_def &td = TYPES[in_type];
      std::string_view name = nd.name;
      const key_def *first = KEYS + td.first_key, *last = first + td.key_count;
      const key_def *k =
          std::lower_bound(first, last, name, [](const key_def &d, std::string_view s) { return d.key.view() < s; });
      const key_def *match = nullptr;
      size_t matches = 0;
      for (; k != last && k->key.view().substr(0, name.size()) == name; ++k) {
        if (ELEMENTS[k->element].name.view() != name) continue;
        match = k;
        ++matches;
      }
      if (matches == 0) return NIL;  // the engine decides what an unknown name gives
      direct_node n;
      n.k = direct_node::kind::member;
      n.a = input;
      n.type = in_type;
      n.name = ELEMENTS[match->element].name.view();
      n.element = match->element;
      n.choice = !(matches == 1 && match->key.view() == name);
      n.item_type = n.choice ? NO_TYPE : match->type;
      if (n.item_type != NO_TYPE && TYPES[n.item_type].kind == type_kind::any_resource) n.item_type = NO_TYPE;
      out_type = n.item_type;
      return push(n);
    }
    // trace() gives its input (its arguments are only logged, and quire logs nothing).
    if (nd.kind == fp::op::call && nd.function == fp::fn::trace && nd.a != NONE_INPUT)
      return lower_path(nd.a, self, out_type);
    if (nd.kind == fp::op::call && nd.function == fp::fn::where && nd.a != NONE_INPUT && nd.arg_count == 1) {
      uint16_t in_type = NO_TYPE;
      uint32_t input = lower_path(nd.a, self, in_type);
      if (input == NIL || !is_object_type(in_type)) return NIL;
      direct_node n;
      n.k = direct_node::kind::where;
      n.a = input;
      n.b = lower_test(arg(nd, 0), in_type);
      n.item_type = in_type;
      out_type = in_type;
      return push(n);
    }
    return NIL;
  }

  uint32_t lower_literal(const fp::node &nd) {
    direct_node n;
    switch (nd.lit.kind) {
      case fp::value_kind::string:
        n.k = direct_node::kind::lit_string;
        n.name = nd.lit.text;
        break;
      case fp::value_kind::boolean:
        n.k = direct_node::kind::lit_boolean;
        n.integer = nd.lit.boolean ? 1 : 0;
        break;
      case fp::value_kind::integer:
        n.k = direct_node::kind::lit_integer;
        n.integer = nd.lit.integer;
        break;
      default: return NIL;
    }
    return push(n);
  }

  // An operand of `=`, `!=`, `in`, comparisons or `+`: a literal, a path, or a test.
  uint32_t lower_operand(uint32_t i, uint16_t self) {
    const fp::node &nd = at(i);
    if (nd.kind == fp::op::literal) return lower_literal(nd);
    uint16_t t = NO_TYPE;
    if (nd.kind == fp::op::member ||
        (nd.kind == fp::op::call && (nd.function == fp::fn::where || nd.function == fp::fn::trace))) {
      uint32_t p = lower_path(i, self, t);
      if (p == NIL) return NIL;
      direct_node n;
      n.k = direct_node::kind::path_value;
      n.a = p;
      n.item_type = t;
      return push(n);
    }
    uint32_t r = lower_test(i, self);
    if (r == NIL || pool_[r].k == direct_node::kind::opaque) return NIL;
    return r;
  }

  // The string literals of `('a' | 'b' | ...)` into the pool as lit_string nodes.
  bool lower_strings(uint32_t i, std::vector<uint32_t> &out) {
    const fp::node &nd = at(i);
    if (nd.kind == fp::op::literal && nd.lit.kind == fp::value_kind::string) {
      out.push_back(lower_literal(nd));
      return true;
    }
    if (nd.kind == fp::op::union_set) return lower_strings(nd.a, out) && lower_strings(nd.b, out);
    return false;
  }

  // A node that gives a boolean or an integer (exists(), `and`...); opaque when not lowered.
  uint32_t lower_test(uint32_t i, uint16_t self) {
    const fp::node &nd = at(i);
    direct_node n;
    switch (nd.kind) {
      case fp::op::and_op:
      case fp::op::or_op:
      case fp::op::xor_op:
      case fp::op::implies:
        n.k = nd.kind == fp::op::and_op   ? direct_node::kind::and_op
              : nd.kind == fp::op::or_op  ? direct_node::kind::or_op
              : nd.kind == fp::op::xor_op ? direct_node::kind::xor_op
                                          : direct_node::kind::implies;
        n.a = lower_test(nd.a, self);
        n.b = lower_test(nd.b, self);
        if (is_opaque(n.a) && is_opaque(n.b)) return opaque();  // it would only ever say "unknown"
        return push(n);
      case fp::op::eq:
      case fp::op::ne:
      case fp::op::lt:
      case fp::op::gt:
      case fp::op::le:
      case fp::op::ge:
      case fp::op::add: {
        n.k = nd.kind == fp::op::eq   ? direct_node::kind::eq
              : nd.kind == fp::op::ne ? direct_node::kind::ne
              : nd.kind == fp::op::lt ? direct_node::kind::lt
              : nd.kind == fp::op::gt ? direct_node::kind::gt
              : nd.kind == fp::op::le ? direct_node::kind::le
              : nd.kind == fp::op::ge ? direct_node::kind::ge
                                      : direct_node::kind::add;
        n.a = lower_operand(nd.a, self);
        n.b = lower_operand(nd.b, self);
        if (n.a == NIL || n.b == NIL) return opaque();
        return push(n);
      }
      case fp::op::in_set: {
        n.k = direct_node::kind::in_strings;
        n.a = lower_operand(nd.a, self);
        std::vector<uint32_t> lits;
        if (n.a == NIL || pool_[n.a].k != direct_node::kind::path_value || !lower_strings(nd.b, lits)) return opaque();
        n.first = lits.empty() ? 0 : lits.front();
        n.count = static_cast<uint32_t>(lits.size());
        // lower_strings pushed the literals one after another.
        for (size_t j = 1; j < lits.size(); ++j)
          if (lits[j] != lits[0] + j) return opaque();
        return push(n);
      }
      case fp::op::call: break;
      default: return opaque();
    }
    if (nd.a == NONE_INPUT) return opaque();
    switch (nd.function) {
      case fp::fn::exists:
      case fp::fn::empty:
      case fp::fn::count:
      case fp::fn::hasValue: {
        if (nd.arg_count != 0) return opaque();
        uint16_t t = NO_TYPE;
        n.a = lower_path(nd.a, self, t);
        if (n.a == NIL) return opaque();
        n.k = nd.function == fp::fn::exists  ? direct_node::kind::exists
              : nd.function == fp::fn::empty ? direct_node::kind::empty
              : nd.function == fp::fn::count ? direct_node::kind::count
                                             : direct_node::kind::has_value;
        return push(n);
      }
      case fp::fn::all: {
        if (nd.arg_count != 1) return opaque();
        uint16_t t = NO_TYPE;
        n.a = lower_path(nd.a, self, t);
        if (n.a == NIL || !is_object_type(t)) return opaque();
        n.k = direct_node::kind::all;
        n.b = lower_test(arg(nd, 0), t);
        return push(n);
      }
      case fp::fn::not_fn: {
        if (nd.arg_count != 0) return opaque();
        n.k = direct_node::kind::not_op;
        n.a = lower_test(nd.a, self);
        if (is_opaque(n.a)) return opaque();
        return push(n);
      }
      case fp::fn::contains:
      case fp::fn::startsWith:
      case fp::fn::matches: {
        if (nd.arg_count != 1) return opaque();
        const fp::node &x = at(arg(nd, 0));
        if (x.kind != fp::op::literal || x.lit.kind != fp::value_kind::string) return opaque();
        uint16_t t = NO_TYPE;
        n.a = lower_path(nd.a, self, t);
        if (n.a == NIL) return opaque();
        n.name = x.lit.text;
        if (nd.function == fp::fn::matches) {
          // The engine compiled a constant pattern once; without it (a bad pattern) the engine
          // reports the error.
          if (!nd.pattern) return opaque();
          n.pattern = nd.pattern.get();
          n.k = direct_node::kind::matches;
        } else {
          n.k = nd.function == fp::fn::contains ? direct_node::kind::contains : direct_node::kind::starts_with;
        }
        return push(n);
      }
      default: return opaque();
    }
  }

  static constexpr uint32_t NONE_INPUT = fp::NONE;
};

// --- evaluation ---

class evaluation {
 public:
  evaluation(const std::vector<direct_node> &pool, const json::value &resource) : pool_(pool), resource_(resource) {}

  // A test's answer; one that does not depend on $this (`%resource.type = 'batch'` inside
  // `entry.all(...)`) is computed once per check.
  answer test(uint32_t i, const json::value &self) const {
    if (!pool_[i].constant) return compute(i, self);
    for (uint8_t j = 0; j < memo_count_; ++j)
      if (memo_[j].first == i) return memo_[j].second;
    answer a = compute(i, self);
    if (memo_count_ < memo_.size()) memo_[memo_count_++] = {i, a};
    return a;
  }

 private:
  answer compute(uint32_t i, const json::value &self) const {
    const direct_node &n = pool_[i];
    using K = direct_node::kind;
    switch (n.k) {
      case K::and_op:
      case K::or_op:
      case K::implies:
      case K::xor_op: {
        int x = truth(test(n.a, self));
        if (x == UNKNOWN) return answer::unknown();
        if (n.k == K::and_op && x == 0) return answer::of(false);
        if (n.k == K::or_op && x == 1) return answer::of(true);
        if (n.k == K::implies && x == 0) return answer::of(true);
        int y = truth(test(n.b, self));
        if (y == UNKNOWN) return answer::unknown();
        int r = -1;
        switch (n.k) {
          case K::and_op: r = (x == 0 || y == 0) ? 0 : (x == 1 && y == 1) ? 1 : -1; break;
          case K::or_op: r = (x == 1 || y == 1) ? 1 : (x == 0 && y == 0) ? 0 : -1; break;
          case K::xor_op: r = (x < 0 || y < 0) ? -1 : (x != y); break;
          default: r = x == 1 ? y : (y == 1 ? 1 : -1); break;
        }
        return r < 0 ? answer::empty() : answer::of(r == 1);
      }
      case K::not_op: {
        answer a = test(n.a, self);
        if (a.k == answer::kind::unknown || a.k == answer::kind::empty) return a;
        // One item that is not a boolean counts as true.
        return answer::of(a.k == answer::kind::boolean ? a.v == 0 : false);
      }
      case K::exists:
      case K::empty:
      case K::count: {
        items it = walk(n.a, self, n.k == K::count ? UINT32_MAX : 1);
        if (!it.known) return answer::unknown();
        if (n.k == K::count) return answer::count(it.count);
        return answer::of((it.count > 0) == (n.k == K::exists));
      }
      case K::all: {
        bool all = true, sure = true;
        auto each_item = [&](const json::value &v, uint16_t) {
          int x = truth(test(n.b, v));
          if (x == UNKNOWN) sure = false;
          else if (x != 1) all = false;
          return sure && all;
        };
        bool known = true;
        visit(n.a, self, each_item, known);
        if (!known || !sure) return answer::unknown();
        return answer::of(all);
      }
      case K::has_value: {
        items it = walk(n.a, self, 2);
        if (!it.known) return answer::unknown();
        if (it.count != 1) return answer::of(false);
        json::kind k = it.first.type();
        return answer::of(k == json::kind::string || k == json::kind::number || k == json::kind::boolean);
      }
      case K::contains:
      case K::starts_with:
      case K::matches: {
        items it = walk(n.a, self, 2);
        if (!it.known || it.count > 1) return answer::unknown();
        if (it.count == 0) return answer::empty();
        std::string_view s;
        if (!string_of(it, s)) return answer::unknown();
        if (n.k == K::contains) return answer::of(s.find(n.name) != std::string_view::npos);
        if (n.k == K::starts_with) return answer::of(s.substr(0, n.name.size()) == n.name);
        return answer::of(n.pattern->search(s, 0, false, nullptr));
      }
      case K::in_strings: {
        items it = walk(pool_[n.a].a, self, 2);
        if (!it.known || it.count > 1) return answer::unknown();
        if (it.count == 0) return answer::empty();
        std::string_view s;
        if (!string_of(it, s)) return answer::unknown();
        for (uint32_t j = 0; j < n.count; ++j)
          if (pool_[n.first + j].name == s) return answer::of(true);
        return answer::of(false);
      }
      case K::eq:
      case K::ne: return equality(n, self);
      case K::lt:
      case K::gt:
      case K::le:
      case K::ge: return comparison(n, self);
      case K::add: {
        answer a = operand_integer(n.a, self), b = operand_integer(n.b, self);
        if (a.k == answer::kind::unknown || b.k == answer::kind::unknown) return answer::unknown();
        if (a.k == answer::kind::empty || b.k == answer::kind::empty) return answer::empty();
        switch (n.k) {
          case K::lt: return answer::of(a.v < b.v);
          case K::gt: return answer::of(a.v > b.v);
          case K::le: return answer::of(a.v <= b.v);
          case K::ge: return answer::of(a.v >= b.v);
          default: return answer::count(a.v + b.v);  // counts and small literals: no overflow
        }
      }
      default: return answer::unknown();
    }
  }

  const std::vector<direct_node> &pool_;
  const json::value &resource_;  // the context of the whole check: %resource where resource_var is lowered
  mutable std::array<std::pair<uint32_t, answer>, 8> memo_{};
  mutable uint8_t memo_count_ = 0;
  static constexpr int UNKNOWN = 2;

  // The singleton evaluation of a boolean operand: -1 empty, 0, 1; UNKNOWN.
  static int truth(answer a) {
    switch (a.k) {
      case answer::kind::empty: return -1;
      case answer::kind::boolean: return static_cast<int>(a.v);
      case answer::kind::integer: return 1;  // one item that is not a boolean counts as true
      default: return UNKNOWN;
    }
  }

  // A string primitive's text (not a date or time, which the engine compares as moments).
  static bool string_of(const items &it, std::string_view &s) {
    if (it.first_type == NO_TYPE || TYPES[it.first_type].kind != type_kind::primitive) return false;
    primitive p = TYPES[it.first_type].prim;
    if (!is_string_primitive(p) || p == primitive::date || p == primitive::dateTime || p == primitive::instant ||
        p == primitive::time)
      return false;
    if (it.first.type() != json::kind::string) return false;
    s = it.first.get_string().value();
    return true;
  }

  // An integer operand: a literal, a count, a sum; or an integer primitive of a path.
  answer operand_integer(uint32_t i, const json::value &self) const {
    const direct_node &n = pool_[i];
    if (n.k == direct_node::kind::lit_integer) return answer::count(n.integer);
    if (n.k == direct_node::kind::path_value) return answer::unknown();
    answer a = test(i, self);
    if (a.k == answer::kind::boolean) return answer::unknown();
    return a;
  }

  // One operand of a comparison: a number (integer or decimal) or a date/time text, as the
  // engine's items hold them (fill_item in fhirpath_navigation.cpp).
  struct ordered {
    enum class kind : uint8_t { unknown, empty, number, moment } k = kind::unknown;
    fp::decimal dec;
    std::string_view text;
    fp::value_kind moment_kind = fp::value_kind::date;
  };

  ordered operand_ordered(uint32_t i, const json::value &self) const {
    const direct_node &n = pool_[i];
    ordered out;
    if (n.k != direct_node::kind::path_value) {
      answer a = operand_integer(i, self);
      if (a.k == answer::kind::empty) out.k = ordered::kind::empty;
      if (a.k == answer::kind::integer) {
        out.k = ordered::kind::number;
        out.dec = fp::to_decimal(a.v);
      }
      return out;
    }
    items it = walk(n.a, self, 2);
    if (!it.known || it.count > 1) return out;  // several: the engine's error
    if (it.count == 0) {
      out.k = ordered::kind::empty;
      return out;
    }
    if (it.first_type == NO_TYPE || TYPES[it.first_type].kind != type_kind::primitive) return out;
    primitive p = TYPES[it.first_type].prim;
    const json::value &v = it.first;
    if (p == primitive::date || p == primitive::dateTime || p == primitive::instant || p == primitive::time) {
      if (v.type() != json::kind::string) return out;
      out.k = ordered::kind::moment;
      out.text = v.get_string().value();
      out.moment_kind = p == primitive::date   ? fp::value_kind::date
                        : p == primitive::time ? fp::value_kind::time
                                               : fp::value_kind::date_time;
      return out;
    }
    bool integral = p == primitive::integer || p == primitive::positiveInt || p == primitive::unsignedInt;
    if (!integral && p != primitive::decimal) return out;
    if (v.type() != json::kind::number) return out;
    auto as_int = v.get_int64();
    if (integral && as_int) {
      out.dec = fp::to_decimal(*as_int);
    } else if (!fp::parse_decimal(v.get_number_text().value(), out.dec)) {
      out.dec = fp::decimal{};
    }
    out.k = ordered::kind::number;
    return out;
  }

  answer comparison(const direct_node &n, const json::value &self) const {
    ordered a = operand_ordered(n.a, self);
    if (a.k == ordered::kind::unknown) return answer::unknown();
    ordered b = operand_ordered(n.b, self);
    if (b.k == ordered::kind::unknown) return answer::unknown();
    if (a.k == ordered::kind::empty || b.k == ordered::kind::empty) return answer::empty();
    if (a.k != b.k) return answer::unknown();  // the engine's type error
    int c;
    if (a.k == ordered::kind::number) {
      c = fp::compare_decimal(a.dec, b.dec);
    } else {
      fp::moment x, y;
      if (!fp::parse_date_time(a.text, a.moment_kind, x) || !fp::parse_date_time(b.text, b.moment_kind, y))
        return answer::unknown();
      c = fp::compare_moment(x, y);
      if (c == 3) return answer::unknown();
      if (c == 2) return answer::empty();
    }
    using K = direct_node::kind;
    return answer::of(n.k == K::lt ? c < 0 : n.k == K::gt ? c > 0 : n.k == K::le ? c <= 0 : c >= 0);
  }

  // One side of `=`/`!=`: its size (0, 1, more) and its single item as a kind and value.
  struct side {
    bool known = false;
    uint32_t count = 0;
    enum class kind : uint8_t { string, boolean, integer } k = kind::string;
    std::string_view s;
    int64_t v = 0;
  };

  side operand_side(uint32_t i, const json::value &self) const {
    const direct_node &n = pool_[i];
    side out;
    using K = direct_node::kind;
    if (n.k == K::lit_string || n.k == K::lit_boolean || n.k == K::lit_integer) {
      out.known = true;
      out.count = 1;
      out.k = n.k == K::lit_string    ? side::kind::string
              : n.k == K::lit_boolean ? side::kind::boolean
                                      : side::kind::integer;
      out.s = n.name;
      out.v = n.integer;
      return out;
    }
    if (n.k == K::path_value) {
      items it = walk(n.a, self, 2);
      if (!it.known) return out;
      out.count = it.count;
      if (it.count != 1) {
        out.known = it.count == 0;
        return out;
      }
      if (string_of(it, out.s)) {
        out.known = true;
        out.k = side::kind::string;
        return out;
      }
      if (it.first_type != NO_TYPE && TYPES[it.first_type].kind == type_kind::primitive &&
          TYPES[it.first_type].prim == primitive::boolean && it.first.type() == json::kind::boolean) {
        out.known = true;
        out.k = side::kind::boolean;
        out.v = it.first.get_bool().value() ? 1 : 0;
      }
      return out;
    }
    answer a = test(i, self);
    if (a.k == answer::kind::unknown) return out;
    out.known = true;
    if (a.k == answer::kind::empty) return out;
    out.count = 1;
    out.k = a.k == answer::kind::boolean ? side::kind::boolean : side::kind::integer;
    out.v = a.v;
    return out;
  }

  answer equality(const direct_node &n, const json::value &self) const {
    side a = operand_side(n.a, self);
    if (!a.known && a.count <= 1) return answer::unknown();
    side b = operand_side(n.b, self);
    if (!b.known && b.count <= 1) return answer::unknown();
    if (a.count == 0 || b.count == 0) return answer::empty();
    bool eq;
    if (a.count != b.count) {
      eq = false;
    } else if (a.count == 1 && a.known && b.known) {
      if (a.k != b.k) eq = false;
      else if (a.k == side::kind::string) eq = a.s == b.s;
      else eq = a.v == b.v;
    } else {
      return answer::unknown();  // several items on both sides: compared pairwise by the engine
    }
    return answer::of(n.k == direct_node::kind::eq ? eq : !eq);
  }

  // A path's steps (member and where nodes) from its start outwards, and where it starts: $this,
  // or %resource. Built per walk from the nodes' input links (a path is a few steps long).
  static constexpr uint32_t MAX_STEPS = 16;
  struct chain {
    uint32_t steps[MAX_STEPS];
    uint32_t count = 0;
    bool from_resource = false;
    uint16_t resource_type = NO_TYPE;
  };
  bool chain_of(uint32_t i, chain &c) const {
    uint32_t reversed[MAX_STEPS];
    uint32_t n = 0;
    for (;;) {
      const direct_node &d = pool_[i];
      if (d.k == direct_node::kind::resource_var) {
        c.from_resource = true;
        c.resource_type = d.item_type;
        break;
      }
      if (n == MAX_STEPS) return false;
      reversed[n++] = i;
      if (d.a == NIL) break;  // a member of $this (a where node always has an input)
      i = d.a;
    }
    c.count = n;
    for (uint32_t j = 0; j < n; ++j) c.steps[j] = reversed[n - 1 - j];
    return true;
  }

  // Sends each item of the path to `to` (a function object: bool(value, type), false to stop),
  // step `depth` onwards applied to `v`. One template per kind of sink, the steps a loop and a
  // recursion over a handful of levels: no call through a function pointer per item (in wasm an
  // indirect call the engine cannot inline), which the walk paid per level and per item.
  // `known` becomes false on data the direct check is not certain about. Returns false to stop.
  template <class Sink>
  bool each(const chain &c, uint32_t depth, const json::value &v, uint16_t t, Sink &to, bool &known) const {
    if (depth == c.count) return to(v, t);
    const direct_node &n = pool_[c.steps[depth]];
    if (n.k == direct_node::kind::where) {
      int x = truth(test(n.b, v));
      if (x == UNKNOWN) {
        known = false;
        return false;
      }
      return x == 1 ? each(c, depth + 1, v, t, to, known) : true;
    }
    json::value val;
    uint16_t vt = n.item_type;
    switch (member(n, v, val, vt)) {
      case found::none: return true;
      case found::uncertain: known = false; return false;
      case found::one: break;
    }
    if (val.type() == json::kind::array) {
      for (json::value e : val.get_array().value()) {
        if (e.is_null()) {
          known = false;
          return false;
        }
        if (!each(c, depth + 1, e, vt, to, known)) return false;
      }
      return true;
    }
    if (val.is_null()) {
      known = false;
      return false;
    }
    return each(c, depth + 1, val, vt, to, known);
  }

  // Sends each item of path node i with $this = self to `to`; see each().
  template <class Sink>
  bool visit(uint32_t i, const json::value &self, Sink &to, bool &known) const {
    chain c;
    if (!chain_of(i, c)) {
      known = false;
      return false;
    }
    if (c.from_resource) return each(c, 0, resource_, c.resource_type, to, known);
    return each(c, 0, self, NO_TYPE, to, known);
  }

  // Counts the items of a path (up to `limit`), keeping the first; unknown when the data is not
  // certain to give what the engine would.
  items walk(uint32_t i, const json::value &self, uint32_t limit) const {
    items out;
    const direct_node &n = pool_[i];
    if (n.k == direct_node::kind::member && n.a == NIL) {
      // A member of $this (`resource.exists()`, `code.empty()`, `start` and `end`: most paths):
      // its items counted here, as each() would, without building the path's steps.
      json::value val;
      uint16_t t = n.item_type;
      switch (member(n, self, val, t)) {
        case found::none: return out;
        case found::uncertain: out.known = false; return out;
        case found::one: break;
      }
      if (val.type() == json::kind::array) {
        for (json::value e : val.get_array().value()) {
          if (e.is_null()) {
            out.known = false;
            return out;
          }
          if (out.count == 0) {
            out.first = e;
            out.first_type = t;
          }
          if (++out.count >= limit) return out;
        }
        return out;
      }
      if (val.is_null()) {
        out.known = false;
        return out;
      }
      out.first = val;
      out.first_type = t;
      out.count = 1;
      return out;
    }
    auto counter = [&out, limit](const json::value &v, uint16_t t) {
      if (out.count == 0) {
        out.first = v;
        out.first_type = t;
      }
      return ++out.count < limit;
    };
    visit(i, self, counter, out.known);
    return out;
  }

  enum class found : uint8_t { none, one, uncertain };

  // The value of member node n in one object (the engine's member(), where it is certain): none,
  // one (in `val`, its items' type in `t`), or uncertain (not an object, a `_x` companion, a second
  // key for the element: the engine's rules, not ours).
  found member(const direct_node &n, const json::value &obj_value, json::value &val, uint16_t &t) const {
    if (obj_value.type() != json::kind::object) return found::uncertain;
    auto obj = obj_value.get_object().value();
    const std::string_view name = n.name;
    const size_t len = name.size();
    bool have = false;
    for (json::member m : obj) {
      std::string_view key = m.key;
      // The name itself or `_name`; a choice's `nameType` or `_nameType`: any other length is
      // another member.
      const size_t size = key.size();
      if (n.choice ? size <= len : (size != len && size != len + 1)) continue;
      const bool underscore = key[0] == '_';
      const size_t skip = underscore ? 1 : 0;
      if (size - skip < len || key[skip] != name[0] || !quire::detail::same_bytes(key.data() + skip, name.data(), len))
        continue;
      if (size - skip != len) {
        if (!n.choice || !is_upper(key[skip + len])) continue;
        const key_def *k = find_key_hashed(n.type, key.substr(skip));
        if (!k || k->element != n.element) continue;
        t = TYPES[k->type].kind == type_kind::any_resource ? NO_TYPE : k->type;
      } else if (n.choice) {
        continue;
      }
      if (underscore || have) return found::uncertain;
      val = m.val;
      have = true;
    }
    return have ? found::one : found::none;
  }
};

}  // namespace

uint32_t lower_direct_check(const fhirpath::expression &expr, uint16_t type, bool context_is_resource,
                            std::vector<direct_node> &pool) {
  lowering l(expr.compiled(), pool);
  return l.lower_root(type, context_is_resource);
}

direct_outcome run_direct_check(const std::vector<direct_node> &pool, uint32_t root, const json::value &self) {
  answer a = evaluation(pool, self).test(root, self);
  switch (a.k) {
    case answer::kind::unknown: return direct_outcome::unknown;
    case answer::kind::boolean: return a.v ? direct_outcome::holds : direct_outcome::fails;
    default: return direct_outcome::holds;  // empty, or an integer: only a false fails
  }
}

}  // namespace quire::fhir::detail
