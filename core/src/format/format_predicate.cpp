// Compiling a filter into typed predicates, and what statistics say about them.
#include "format_predicate.h"

#include <cmath>

namespace quire::format::detail {

namespace {

quire::error bad_query(std::string message) { return quire::error(error_code::INVALID_QUERY, std::move(message)); }

std::string describe_value(const value &v) {
  switch (v.k) {
    case value::kind::null_value: return "null";
    case value::kind::integer: return std::to_string(v.i);
    case value::kind::real: {
      std::string s;
      append_double(s, v.d);
      return s;
    }
    case value::kind::boolean: return v.b ? "true" : "false";
    case value::kind::text: return "'" + v.s + "'";
  }
  return "?";
}

/// A literal as the column's domain value. For ints, a real literal is returned in `real_out` (the
/// caller adjusts bounds) and `is_real` is set.
struct domain_value {
  int64_t i = 0;
  double d = 0;
  std::string s;
  bool is_real = false;  // ints domain, literal with a fraction or out of range
};

result<domain_value> to_domain(const format::schema &sch, size_t col, const value &v) {
  const column_type t = sch.columns[col].type;
  domain_value out;
  auto mismatch = [&]() {
    return bad_query("cannot compare column '" + sch.columns[col].name + "' (" + std::string(type_name(t)) + ") with " +
                     describe_value(v));
  };
  switch (domain_of(t)) {
    case domain::ints:
      if (t == column_type::boolean) {
        if (v.k != value::kind::boolean) return mismatch();
        out.i = v.b ? 1 : 0;
        return out;
      }
      if (v.k == value::kind::integer) {
        out.i = v.i;
        return out;
      }
      if (v.k == value::kind::real) {
        if (std::floor(v.d) == v.d && std::fabs(v.d) < 9.2e18) out.i = static_cast<int64_t>(v.d);
        else out.is_real = true;
        out.d = v.d;
        return out;
      }
      if (v.k == value::kind::text && t == column_type::date) {
        if (auto d = parse_date(v.s)) {
          out.i = *d;
          return out;
        }
      }
      if (v.k == value::kind::text && t == column_type::timestamp) {
        if (auto ts = parse_timestamp(v.s, true)) {
          out.i = *ts;
          return out;
        }
      }
      return mismatch();
    case domain::reals:
      if (v.k == value::kind::integer) {
        out.d = static_cast<double>(v.i);
        return out;
      }
      if (v.k == value::kind::real) {
        out.d = v.d;
        return out;
      }
      if (v.k == value::kind::text && t == column_type::decimal && classify_number(v.s) != number_class::not_a_number) {
        out.d = parse_double(v.s);
        return out;
      }
      return mismatch();
    case domain::text:
      if (v.k == value::kind::text) {
        out.s = v.s;
        return out;
      }
      return mismatch();
  }
  return mismatch();
}

/// Sets an ints-domain bound from a real literal: the tightest integer bound that keeps the same rows.
void int_bound_from_real(pred &p, bool lower, bool inclusive, double d) {
  double b = lower ? (inclusive ? std::ceil(d) : std::floor(d) + 1) : (inclusive ? std::floor(d) : std::ceil(d) - 1);
  if (b > 9.2e18) {
    if (lower) {
      p.kind = pk::never;
    } else {
      p.has_hi = false;
    }
    return;
  }
  if (b < -9.2e18) {
    if (lower) {
      p.has_lo = false;
    } else {
      p.kind = pk::never;
    }
    return;
  }
  if (lower) {
    p.has_lo = true;
    p.ilo = static_cast<int64_t>(b);
  } else {
    p.has_hi = true;
    p.ihi = static_cast<int64_t>(b);
  }
}

result<void> set_bound(pred &p, const format::schema &sch, const value &v, bool lower, bool inclusive) {
  auto d = to_domain(sch, p.column, v);
  if (!d) return std::move(d).error();
  switch (p.dom) {
    case domain::ints:
      if (d->is_real) {
        int_bound_from_real(p, lower, inclusive, d->d);
      } else if (lower) {
        if (!inclusive && d->i == INT64_MAX) {
          p.kind = pk::never;
          return {};
        }
        p.has_lo = true;
        p.ilo = inclusive ? d->i : d->i + 1;
      } else {
        if (!inclusive && d->i == INT64_MIN) {
          p.kind = pk::never;
          return {};
        }
        p.has_hi = true;
        p.ihi = inclusive ? d->i : d->i - 1;
      }
      break;
    case domain::reals:
      if (lower) {
        p.has_lo = true;
        p.rlo = d->d;
        p.lo_incl = inclusive;
      } else {
        p.has_hi = true;
        p.rhi = d->d;
        p.hi_incl = inclusive;
      }
      break;
    case domain::text:
      if (lower) {
        p.has_lo = true;
        p.tlo = d->s;
        p.lo_incl = inclusive;
      } else {
        p.has_hi = true;
        p.thi = d->s;
        p.hi_incl = inclusive;
      }
      break;
  }
  return {};
}

}  // namespace

result<pred> compile(const filter &f, const format::schema &sch, size_t depth) {
  if (depth > DEFAULT_MAX_EXPRESSION_DEPTH * 4)
    return quire::error(error_code::MAX_DEPTH_EXCEEDED, "the filter is nested too deeply");
  pred p;
  switch (f.o) {
    case filter::op::and_:
    case filter::op::or_:
    case filter::op::not_: {
      p.kind = f.o == filter::op::and_ ? pk::and_ : f.o == filter::op::or_ ? pk::or_ : pk::not_;
      if (f.o == filter::op::not_ && f.children.size() != 1) return bad_query("not takes one filter");
      for (const auto &c : f.children) {
        auto k = compile(c, sch, depth + 1);
        if (!k) return k;
        p.kids.push_back(std::move(k).value());
      }
      return p;
    }
    default: break;
  }
  auto col = sch.find(f.column);
  if (!col) return quire::error(error_code::NO_SUCH_COLUMN, "no column named '" + f.column + "'");
  p.column = *col;
  const column_type type = sch.columns[*col].type;
  p.dom = domain_of(type);
  auto need = [&](size_t n) -> result<void> {
    if (f.values.size() != n)
      return bad_query("the comparison on '" + f.column + "' needs " + std::to_string(n) + " value(s)");
    return {};
  };
  switch (f.o) {
    case filter::op::is_null: p.kind = pk::is_null; return p;
    case filter::op::is_not_null: p.kind = pk::not_null; return p;
    case filter::op::contains:
    case filter::op::starts_with: {
      auto n = need(1);
      if (!n) return std::move(n).error();
      if (type != column_type::string && type != column_type::json)
        return bad_query("contains and startsWith need a string column; '" + f.column + "' is " +
                         std::string(type_name(type)));
      if (f.values[0].k != value::kind::text) return bad_query("contains and startsWith take text");
      p.kind = f.o == filter::op::contains ? pk::contains : pk::starts_with;
      p.pattern = f.values[0].s;
      return p;
    }
    case filter::op::eq:
    case filter::op::ne: {
      auto n = need(1);
      if (!n) return std::move(n).error();
      if (f.values[0].k == value::kind::null_value) {
        p.kind = f.o == filter::op::eq ? pk::is_null : pk::not_null;
        return p;
      }
      p.kind = pk::range;
      p.negate = f.o == filter::op::ne;
      auto a = set_bound(p, sch, f.values[0], true, true);
      if (!a) return std::move(a).error();
      if (p.kind == pk::range) {
        auto b = set_bound(p, sch, f.values[0], false, true);
        if (!b) return std::move(b).error();
      }
      if (p.dom == domain::ints && p.kind == pk::range && p.has_lo && p.has_hi && p.ilo > p.ihi) p.kind = pk::never;
      if (p.kind == pk::never && p.negate) p.kind = pk::not_null;
      return p;
    }
    case filter::op::lt:
    case filter::op::le:
    case filter::op::gt:
    case filter::op::ge: {
      auto n = need(1);
      if (!n) return std::move(n).error();
      if (f.values[0].k == value::kind::null_value) return bad_query("compare with null using 'is null'");
      p.kind = pk::range;
      bool lower = f.o == filter::op::gt || f.o == filter::op::ge;
      bool inclusive = f.o == filter::op::le || f.o == filter::op::ge;
      auto a = set_bound(p, sch, f.values[0], lower, inclusive);
      if (!a) return std::move(a).error();
      if (p.kind == pk::range && !p.has_lo && !p.has_hi) p.kind = pk::not_null;
      return p;
    }
    case filter::op::between: {
      auto n = need(2);
      if (!n) return std::move(n).error();
      p.kind = pk::range;
      auto a = set_bound(p, sch, f.values[0], true, true);
      if (!a) return std::move(a).error();
      if (p.kind == pk::range) {
        auto b = set_bound(p, sch, f.values[1], false, true);
        if (!b) return std::move(b).error();
      }
      if (p.dom == domain::ints && p.kind == pk::range && p.has_lo && p.has_hi && p.ilo > p.ihi) p.kind = pk::never;
      return p;
    }
    case filter::op::in: {
      p.kind = pk::set;
      for (const auto &v : f.values) {
        if (v.k == value::kind::null_value) continue;
        auto d = to_domain(sch, p.column, v);
        if (!d) return std::move(d).error();
        if (p.dom == domain::ints && !d->is_real) p.iset.push_back(d->i);
        else if (p.dom == domain::reals) p.rset.push_back(d->d);
        else if (p.dom == domain::text) p.tset.push_back(d->s);
      }
      std::sort(p.iset.begin(), p.iset.end());
      std::sort(p.rset.begin(), p.rset.end());
      std::sort(p.tset.begin(), p.tset.end());
      if (p.iset.empty() && p.rset.empty() && p.tset.empty()) p.kind = pk::never;
      return p;
    }
    default: break;
  }
  return bad_query("unknown operator");
}

// --- statistics ------------------------------------------------------------------------------------

tri leaf_on_stats(const pred &p, const stats &s) {
  if (s.rows == 0) return tri::none;
  if (p.kind == pk::is_null) return s.nulls == 0 ? tri::none : s.nulls == s.rows ? tri::all : tri::some;
  if (p.kind == pk::not_null) return s.nulls == s.rows ? tri::none : s.nulls == 0 ? tri::all : tri::some;
  if (s.nulls == s.rows) return tri::none;
  if (!s.has_min) return tri::some;
  const bool no_nulls = s.nulls == 0;
  switch (p.dom) {
    case domain::ints: {
      if (p.kind == pk::set) {
        auto it = std::lower_bound(p.iset.begin(), p.iset.end(), s.imin);
        if (it == p.iset.end() || *it > s.imax) return tri::none;
        return (s.imin == s.imax && no_nulls) ? tri::all : tri::some;
      }
      bool disjoint = (p.has_lo && s.imax < p.ilo) || (p.has_hi && s.imin > p.ihi);
      bool inside = (!p.has_lo || s.imin >= p.ilo) && (!p.has_hi || s.imax <= p.ihi);
      if (!p.negate) return disjoint ? tri::none : (inside && no_nulls) ? tri::all : tri::some;
      return inside ? tri::none : (disjoint && no_nulls) ? tri::all : tri::some;
    }
    case domain::reals: {
      if (p.kind == pk::set) {
        auto it = std::lower_bound(p.rset.begin(), p.rset.end(), s.rmin);
        if (it == p.rset.end() || *it > s.rmax) return tri::none;
        return tri::some;
      }
      bool disjoint = (p.has_lo && (p.lo_incl ? s.rmax < p.rlo : s.rmax <= p.rlo)) ||
                      (p.has_hi && (p.hi_incl ? s.rmin > p.rhi : s.rmin >= p.rhi));
      bool inside = in_range(p, s.rmin) && in_range(p, s.rmax);
      if (!p.negate) return disjoint ? tri::none : (inside && no_nulls) ? tri::all : tri::some;
      return inside ? tri::none : (disjoint && no_nulls) ? tri::all : tri::some;
    }
    case domain::text: {
      // tmin is a lower bound of every value (maybe a truncated prefix); tmax, when present, an upper bound.
      const std::string &mn = s.tmin;
      if (p.kind == pk::contains) return tri::some;
      if (p.kind == pk::starts_with) {
        if (s.has_max && s.tmax < p.pattern) return tri::none;
        if (mn > p.pattern && mn.compare(0, p.pattern.size(), p.pattern) != 0) return tri::none;
        return tri::some;
      }
      if (p.kind == pk::set) {
        auto it = std::lower_bound(p.tset.begin(), p.tset.end(), mn);
        if (it == p.tset.end() || (s.has_max && *it > s.tmax)) return tri::none;
        return tri::some;
      }
      bool disjoint = (p.has_hi && (p.hi_incl ? mn > p.thi : mn >= p.thi)) ||
                      (p.has_lo && s.has_max && (p.lo_incl ? s.tmax < p.tlo : s.tmax <= p.tlo));
      bool inside = s.has_max && in_range(p, std::string_view(mn)) && in_range(p, std::string_view(s.tmax)) &&
                    mn.size() < STAT_TEXT_BYTES;
      if (!p.negate) return disjoint ? tri::none : (inside && no_nulls) ? tri::all : tri::some;
      return (inside && s.has_max && mn == s.tmax) ? tri::none : (disjoint && no_nulls) ? tri::all : tri::some;
    }
  }
  return tri::some;
}

/// The order keys (append_*_key) of the values an = or in predicate looks for.
std::vector<std::string> lookup_keys(const pred &p) {
  std::vector<std::string> out;
  std::string k;
  auto add = [&]() {
    out.push_back(std::move(k));
    k.clear();
  };
  if (p.kind == pk::set) {
    for (auto v : p.iset) {
      append_int_key(k, v);
      add();
    }
    for (auto v : p.rset) {
      append_real_key(k, v);
      add();
    }
    for (auto &v : p.tset) {
      append_text_key(k, v);
      add();
    }
  } else if (p.kind == pk::range && !p.negate && p.has_lo && p.has_hi) {
    if (p.dom == domain::ints && p.ilo == p.ihi) {
      append_int_key(k, p.ilo);
      add();
    }
    if (p.dom == domain::reals && p.rlo == p.rhi && p.lo_incl && p.hi_incl) {
      append_real_key(k, p.rlo);
      add();
    }
    if (p.dom == domain::text && p.tlo == p.thi && p.lo_incl && p.hi_incl) {
      append_text_key(k, p.tlo);
      add();
    }
  }
  return out;
}

/// Hashes of the keys an = or in predicate looks for, as the writer hashed them.
std::vector<uint64_t> key_hashes(const pred &p) {
  std::vector<uint64_t> out;
  for (const auto &k : lookup_keys(p)) out.push_back(hash64(k));
  return out;
}

void collect_columns(const pred &p, std::vector<size_t> &out) {
  if (p.kind == pk::and_ || p.kind == pk::or_ || p.kind == pk::not_) {
    for (const auto &k : p.kids) collect_columns(k, out);
  } else if (p.kind != pk::always && p.kind != pk::never) {
    if (std::find(out.begin(), out.end(), p.column) == out.end()) out.push_back(p.column);
  }
}

result<std::optional<pred>> compile_where(const std::optional<filter> &where, const format::schema &sch) {
  if (!where) return std::optional<pred>();
  auto p = compile(*where, sch);
  if (!p) return std::move(p).error();
  return std::optional<pred>(std::move(p).value());
}

}  // namespace quire::format::detail
