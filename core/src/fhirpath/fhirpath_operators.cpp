// Operators (N1 "Operators"): boolean logic (and or xor implies, three-valued), collections
// (| in contains), math (+ - * / div mod and & on numbers, strings and quantities), date/time
// arithmetic (a date plus a calendar duration), unary minus and the indexer.
#include "fhirpath_engine.h"

namespace quire::fhirpath {

// --- boolean logic ---

// Three-valued truth of a collection used as a boolean: -1 empty, 0 false, 1 true.
int engine::truth(const collection &c, uint32_t pos, bool &ok) {
  ok = true;
  if (c.empty()) return -1;
  if (c.size() > 1) {
    ok = type_error(pos, "a boolean operand must be a single item, not " + std::to_string(c.size()));
    return -1;
  }
  if (c[0].kind == value_kind::boolean) return c[0].boolean ? 1 : 0;
  return 1;  // N1 singleton evaluation: one item that is not a boolean counts as true
}

bool engine::logic(const node &nd, const frame &f, collection &out) {
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

// --- collections ---

// Set operations compare pairwise; their total cost is bounded by limits::max_comparisons
// (past it the evaluation fails, and callers return false once s_.failed is set).
bool engine::contains_item(const collection &c, const item &v, size_t from) {
  if (from < c.size()) {
    s_.comparisons += c.size() - from;
    if (s_.comparisons > s_.lim.max_comparisons) {
      fail(error_code::RESULT_TOO_LARGE, 0,
           "set operations compared more than max_comparisons (" + std::to_string(s_.lim.max_comparisons) + ") pairs");
      return false;
    }
  }
  for (size_t i = from; i < c.size(); ++i)
    if (equal_items(c[i], v) == 1) return true;
  return false;
}

bool engine::union_of(const collection &a, const collection &b, uint32_t pos, collection &out) {
  size_t start = out.size();
  for (const collection *c : {&a, &b})
    for (const item &v : *c)
      if (!contains_item(out, v, start)) out.push_back(v);
  return !s_.failed && check_size(out, pos);
}

bool engine::binary(const node &nd, const frame &f, collection &out) {
  scratch a(s_), b(s_);
  if (!eval(nd.a, f, *a) || !eval(nd.b, f, *b)) return false;
  switch (nd.kind) {
    case op::union_set: return union_of(*a, *b, nd.pos, out);
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

// --- math ---

bool engine::arithmetic(const node &nd, const item &x, const item &y, collection &out) {
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
      return fail(error_code::RESULT_TOO_LARGE, nd.pos, "a string grew past max_string_bytes");
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

}  // namespace quire::fhirpath
