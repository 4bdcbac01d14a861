// The query engine: a filter is compiled against the schema into typed predicates; chunks are
// skipped by their statistics (and Bloom filters for = and in on hash-indexed columns); an index
// turns one conjunct into candidate rows when that is cheaper than a scan; then each remaining
// chunk is evaluated column by column, AND passing its selection on so later columns decode only
// the pages that still hold selected rows. Rows are rendered only for the final selection, and
// only for the projected columns.
#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstring>
#include <numeric>

#include "format_decimal.h"
#include "format_file.h"

namespace quire::format {

using namespace detail;

namespace {

// --- compiled predicates ------------------------------------------------------------------------

enum class pk : uint8_t { and_, or_, not_, always, never, is_null, not_null, range, set, contains, starts_with };

/// A compiled filter node. Ranges are over the column's domain: ints (inclusive bounds), reals
/// and text (bounds with inclusiveness; an absent bound is open). `negate` turns a range into
/// `!=` semantics: a non-null value outside the range.
struct pred {
  pk kind = pk::always;
  size_t column = 0;
  domain dom = domain::ints;
  bool negate = false;
  bool has_lo = false, has_hi = false, lo_incl = true, hi_incl = true;
  int64_t ilo = 0, ihi = 0;
  double rlo = 0, rhi = 0;
  std::string tlo, thi;
  std::vector<int64_t> iset;
  std::vector<double> rset;
  std::vector<std::string> tset;
  std::string pattern;
  std::vector<pred> kids;
};

enum class tri : uint8_t { none, some, all };

tri tri_not(tri t) { return t == tri::none ? tri::all : t == tri::all ? tri::none : tri::some; }

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

result<pred> compile(const filter &f, const format::schema &sch, size_t depth = 0) {
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

// --- testing one value ----------------------------------------------------------------------------

bool in_range(const pred &p, int64_t v) { return (!p.has_lo || v >= p.ilo) && (!p.has_hi || v <= p.ihi); }
bool in_range(const pred &p, double v) {
  return (!p.has_lo || (p.lo_incl ? v >= p.rlo : v > p.rlo)) && (!p.has_hi || (p.hi_incl ? v <= p.rhi : v < p.rhi));
}
bool in_range(const pred &p, std::string_view v) {
  return (!p.has_lo || (p.lo_incl ? v >= p.tlo : v > p.tlo)) && (!p.has_hi || (p.hi_incl ? v <= p.thi : v < p.thi));
}

bool test_int(const pred &p, int64_t v) {
  if (p.kind == pk::set) return std::binary_search(p.iset.begin(), p.iset.end(), v);
  return in_range(p, v) != p.negate;
}
bool test_real(const pred &p, double v) {
  if (p.kind == pk::set) return std::binary_search(p.rset.begin(), p.rset.end(), v);
  return in_range(p, v) != p.negate;
}
bool test_text(const pred &p, std::string_view v) {
  switch (p.kind) {
    case pk::contains: return v.find(p.pattern) != std::string_view::npos;
    case pk::starts_with: return v.substr(0, p.pattern.size()) == p.pattern;
    case pk::set: return std::binary_search(p.tset.begin(), p.tset.end(), v);
    default: return in_range(p, v) != p.negate;
  }
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

/// Hashes of the keys an = or in predicate looks for, as the writer hashed them.
std::vector<uint64_t> key_hashes(const pred &p) {
  std::vector<uint64_t> out;
  std::string k;
  auto add = [&]() {
    out.push_back(hash64(k));
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

void collect_columns(const pred &p, std::vector<size_t> &out) {
  if (p.kind == pk::and_ || p.kind == pk::or_ || p.kind == pk::not_) {
    for (const auto &k : p.kids) collect_columns(k, out);
  } else if (p.kind != pk::always && p.kind != pk::never) {
    if (std::find(out.begin(), out.end(), p.column) == out.end()) out.push_back(p.column);
  }
}

// --- the plan -------------------------------------------------------------------------------------

struct plan_info {
  std::string index_column, index_kind, index_use;
  uint64_t index_candidates = 0;
  bool used_index = false;
  uint64_t chunks_total = 0, skipped_by_statistics = 0, skipped_by_bloom = 0, skipped_by_index = 0, scanned = 0;
  uint64_t rows_matched = 0;
  bool stopped_early = false;
};

/// The query engine's state for one call, over a file's impl.
struct engine {
  file::impl &f;
  plan_info info;

  explicit engine(file::impl &fi) : f(fi) { info.chunks_total = f.chunks; }

  int index_of(size_t column, index_kind kind) const {
    for (size_t i = 0; i < f.indexes.size(); ++i) {
      if (f.indexes[i].column == column && f.indexes[i].kind == kind) return static_cast<int>(i);
    }
    return -1;
  }

  // Chunk skipping: statistics first, then Bloom filters for = / in on hash-indexed columns.
  result<tri> on_chunk(const pred &p, uint64_t chunk, bool &by_bloom) {
    switch (p.kind) {
      case pk::always: return tri::all;
      case pk::never: return tri::none;
      case pk::and_: {
        tri out = tri::all;
        for (const auto &k : p.kids) {
          auto t = on_chunk(k, chunk, by_bloom);
          if (!t) return t;
          if (*t == tri::none) return tri::none;
          if (*t == tri::some) out = tri::some;
        }
        return out;
      }
      case pk::or_: {
        tri out = tri::none;
        bool any_bloom = false;
        for (const auto &k : p.kids) {
          bool b = false;
          auto t = on_chunk(k, chunk, b);
          if (!t) return t;
          any_bloom |= b;
          if (*t == tri::all) return tri::all;
          if (*t == tri::some) out = tri::some;
        }
        if (out == tri::none) by_bloom |= any_bloom;
        return out;
      }
      case pk::not_: {
        bool ignored = false;  // a Bloom filter cannot prove "all"
        auto t = on_chunk(p.kids[0], chunk, ignored);
        if (!t) return t;
        if (*t == tri::none && ignored) return tri::some;
        return tri_not(*t);
      }
      default: break;
    }
    auto cd = f.column_directory(p.column);
    if (!cd) return std::move(cd).error();
    tri t = leaf_on_stats(p, (*cd.value())[chunk].st);
    if (t != tri::some) return t;
    int ix = index_of(p.column, index_kind::hash);
    if (ix >= 0) {
      auto hashes = key_hashes(p);
      if (!hashes.empty()) {
        auto may = f.bloom_may_contain(static_cast<size_t>(ix), chunk, hashes);
        if (!may) return std::move(may).error();
        if (!*may) {
          by_bloom = true;
          return tri::none;
        }
      }
    }
    return t;
  }

  // Evaluation of a predicate over one chunk, for the rows set in `mask`; returns a subset of it.
  result<std::vector<uint8_t>> eval(const pred &p, uint64_t chunk, const std::vector<uint8_t> &mask) {
    const uint32_t rows = f.rows_in_chunk(chunk);
    switch (p.kind) {
      case pk::always: return mask;
      case pk::never: return std::vector<uint8_t>(rows, 0);
      case pk::and_: {
        std::vector<uint8_t> sel = mask;
        for (const auto &k : p.kids) {
          if (std::find(sel.begin(), sel.end(), 1) == sel.end()) break;
          auto r = eval(k, chunk, sel);
          if (!r) return r;
          sel = std::move(r).value();
        }
        return sel;
      }
      case pk::or_: {
        std::vector<uint8_t> out(rows, 0), rest = mask;
        for (const auto &k : p.kids) {
          if (std::find(rest.begin(), rest.end(), 1) == rest.end()) break;
          auto r = eval(k, chunk, rest);
          if (!r) return r;
          for (uint32_t i = 0; i < rows; ++i) {
            if ((*r)[i]) {
              out[i] = 1;
              rest[i] = 0;
            }
          }
        }
        return out;
      }
      case pk::not_: {
        auto r = eval(p.kids[0], chunk, mask);
        if (!r) return r;
        std::vector<uint8_t> out(rows);
        for (uint32_t i = 0; i < rows; ++i) out[i] = mask[i] && !(*r)[i];
        return out;
      }
      default: break;
    }
    std::vector<uint8_t> out(rows, 0);
    auto dir = f.load_page_directory(p.column, chunk);
    if (!dir) return std::move(dir).error();
    const column_type type = f.sch.columns[p.column].type;
    std::vector<uint8_t> dict_match;
    bool dict_done = false;
    for (size_t pi = 0; pi < dir.value()->pages.size(); ++pi) {
      const auto &pe = dir.value()->pages[pi];
      const uint32_t from = pe.first_row, to = pe.first_row + pe.rows;
      if (std::find(mask.begin() + from, mask.begin() + to, 1) == mask.begin() + to) continue;
      tri t = leaf_on_stats(p, pe.st);
      if (t == tri::none) continue;
      if (t == tri::all) {
        std::copy(mask.begin() + from, mask.begin() + to, out.begin() + from);
        continue;
      }
      auto page = f.page(p.column, chunk, pi);
      if (!page) return std::move(page).error();
      const auto &v = *page->values;
      if (p.kind == pk::is_null || p.kind == pk::not_null) {
        bool want_null = p.kind == pk::is_null;
        for (uint32_t r = from; r < to; ++r)
          if (mask[r]) out[r] = v.is_valid(r - from) != want_null;
        continue;
      }
      if (v.dictionary && !dict_done) {
        const auto &d = *page->dict;
        dict_match.resize(d.size());
        for (size_t k = 0; k < d.size(); ++k) {
          dict_match[k] = type == column_type::decimal ? test_real(p, parse_double(d.at(static_cast<uint32_t>(k))))
                                                       : test_text(p, d.at(static_cast<uint32_t>(k)));
        }
        dict_done = true;
      }
      for (uint32_t r = from; r < to; ++r) {
        if (!mask[r]) continue;
        uint32_t i = r - from;
        if (!v.is_valid(i)) continue;
        bool m;
        if (v.dictionary) m = dict_match[v.ids[i]];
        else if (p.dom == domain::ints) m = test_int(p, v.ints[i]);
        else if (type == column_type::float64) m = test_real(p, v.reals[i]);
        else if (type == column_type::decimal) m = test_real(p, parse_double(page->text(i)));
        else m = test_text(p, page->text(i));
        out[r] = m;
      }
    }
    return out;
  }

  // --- indexes ----------------------------------------------------------------------------------

  /// Rows of index `ix` whose key is in [lo, hi] (an absent bound is open). `estimate_only` reads
  /// only the root and returns the entries of the leaves the range spans.
  result<std::vector<uint64_t>> index_range(size_t ix, const std::optional<std::string> &lo,
                                            const std::optional<std::string> &hi, bool estimate_only,
                                            uint64_t &estimate) {
    auto root = f.load_index_root(ix);
    if (!root) return std::move(root).error();
    const auto &leaves = root.value()->leaves;
    size_t start = 0;
    if (lo) {
      auto it = std::upper_bound(leaves.begin(), leaves.end(), *lo,
                                 [](const std::string &k, const index_leaf &l) { return k < l.first_key; });
      start = it == leaves.begin() ? 0 : static_cast<size_t>(it - leaves.begin()) - 1;
    }
    estimate = 0;
    std::vector<uint64_t> rows;
    for (size_t li = start; li < leaves.size(); ++li) {
      if (hi && leaves[li].first_key > *hi) break;
      estimate += leaves[li].entries;
      if (estimate_only) continue;
      auto scanned = f.scan_leaf(ix, li, lo, hi, rows);
      if (!scanned) return std::move(scanned).error();
    }
    return rows;
  }

  /// Candidate rows for one conjunct from an index, or nullopt when no index serves it cheaply.
  result<std::optional<std::vector<uint64_t>>> candidates(const pred &p) {
    if (p.kind != pk::range && p.kind != pk::set && p.kind != pk::contains && p.kind != pk::starts_with)
      return std::optional<std::vector<uint64_t>>();
    if (p.negate) return std::optional<std::vector<uint64_t>>();
    const column_type type = f.sch.columns[p.column].type;
    auto key_of = [&](int64_t i, double d, const std::string &s) {
      std::string k;
      switch (p.dom) {
        case domain::ints: append_int_key(k, i); break;
        case domain::reals: append_real_key(k, d); break;
        case domain::text: append_text_key(k, s); break;
      }
      return k;
    };
    auto done = [&](std::vector<uint64_t> rows, std::string kind, std::string use) {
      std::sort(rows.begin(), rows.end());
      rows.erase(std::unique(rows.begin(), rows.end()), rows.end());
      info.used_index = true;
      info.index_column = f.sch.columns[p.column].name;
      info.index_kind = std::move(kind);
      info.index_use = std::move(use);
      info.index_candidates = rows.size();
      return std::optional<std::vector<uint64_t>>(std::move(rows));
    };
    auto hashes = key_hashes(p);
    int hash_ix = index_of(p.column, index_kind::hash);
    if (!hashes.empty() && hash_ix >= 0) {
      std::vector<uint64_t> rows;
      for (uint64_t h : hashes) {
        std::string k;
        for (int s = 56; s >= 0; s -= 8) k.push_back(static_cast<char>((h >> s) & 0xFF));
        uint64_t est;
        auto r = index_range(static_cast<size_t>(hash_ix), k, k, false, est);
        if (!r) return std::move(r).error();
        rows.insert(rows.end(), r->begin(), r->end());
      }
      return done(std::move(rows), "hash", "lookup");
    }
    int sorted_ix = index_of(p.column, index_kind::sorted);
    if (sorted_ix >= 0 && (p.kind == pk::range || p.kind == pk::set)) {
      std::vector<std::pair<std::optional<std::string>, std::optional<std::string>>> ranges;
      if (p.kind == pk::set) {
        for (auto v : p.iset) {
          auto k = key_of(v, 0, {});
          ranges.emplace_back(k, k);
        }
        for (auto v : p.rset) {
          auto k = key_of(0, v, {});
          ranges.emplace_back(k, k);
        }
        for (auto &v : p.tset) {
          auto k = key_of(0, 0, v);
          ranges.emplace_back(k, k);
        }
      } else {
        std::optional<std::string> lo, hi;
        if (p.has_lo) lo = key_of(p.ilo, p.rlo, p.tlo);
        if (p.has_hi) hi = key_of(p.ihi, p.rhi, p.thi);
        ranges.emplace_back(lo, hi);
      }
      uint64_t total = 0;
      for (auto &[lo, hi] : ranges) {
        uint64_t est;
        auto r = index_range(static_cast<size_t>(sorted_ix), lo, hi, true, est);
        if (!r) return std::move(r).error();
        total += est;
      }
      // A range that spans much of the index is cheaper to scan with chunk statistics.
      if (total > std::max<uint64_t>(f.rows / 4, 1024)) return std::optional<std::vector<uint64_t>>();
      std::vector<uint64_t> rows;
      for (auto &[lo, hi] : ranges) {
        uint64_t est;
        auto r = index_range(static_cast<size_t>(sorted_ix), lo, hi, false, est);
        if (!r) return std::move(r).error();
        rows.insert(rows.end(), r->begin(), r->end());
      }
      return done(std::move(rows), "sorted", p.kind == pk::set ? "lookup" : "range");
    }
    int text_ix = index_of(p.column, index_kind::text);
    if (text_ix >= 0 && (p.kind == pk::contains || p.kind == pk::starts_with) && p.pattern.size() >= 3 &&
        (type == column_type::string || type == column_type::json)) {
      std::vector<std::string> grams;
      for (size_t i = 0; i + 3 <= p.pattern.size(); ++i) grams.push_back(p.pattern.substr(i, 3));
      std::sort(grams.begin(), grams.end());
      grams.erase(std::unique(grams.begin(), grams.end()), grams.end());
      // Rarest trigrams first; trigrams in more than a quarter of the rows do not narrow enough.
      std::vector<std::pair<uint64_t, std::string>> by_size;
      for (auto &g : grams) {
        uint64_t est;
        auto r = index_range(static_cast<size_t>(text_ix), g, g, true, est);
        if (!r) return std::move(r).error();
        by_size.emplace_back(est, g);
      }
      std::sort(by_size.begin(), by_size.end());
      std::optional<std::vector<uint64_t>> acc;
      for (auto &[est, g] : by_size) {
        if (acc && est > std::max<uint64_t>(f.rows / 4, 1024)) break;
        uint64_t e2;
        auto r = index_range(static_cast<size_t>(text_ix), g, g, false, e2);
        if (!r) return std::move(r).error();
        std::vector<uint64_t> rows = std::move(r).value();
        std::sort(rows.begin(), rows.end());
        if (!acc) {
          acc = std::move(rows);
        } else {
          std::vector<uint64_t> both;
          std::set_intersection(acc->begin(), acc->end(), rows.begin(), rows.end(), std::back_inserter(both));
          acc = std::move(both);
        }
        if (acc->empty()) break;
      }
      if (acc) return done(std::move(*acc), "text", "trigrams");
    }
    return std::optional<std::vector<uint64_t>>();
  }

  /// Candidate rows from the best index for a top-level conjunct, or nullopt (scan).
  result<std::optional<std::vector<uint64_t>>> plan_index(const pred &p) {
    std::vector<const pred *> conjuncts;
    if (p.kind == pk::and_)
      for (const auto &k : p.kids) conjuncts.push_back(&k);
    else conjuncts.push_back(&p);
    // Hash lookups first, then sorted lookups and ranges, then trigrams.
    std::stable_sort(conjuncts.begin(), conjuncts.end(), [&](const pred *a, const pred *b) {
      auto rank = [&](const pred *x) {
        if (x->kind == pk::contains || x->kind == pk::starts_with) return 3;
        if (!key_hashes(*x).empty() && index_of(x->column, index_kind::hash) >= 0) return 0;
        if (x->kind == pk::set || (x->kind == pk::range && !key_hashes(*x).empty())) return 1;
        return 2;
      };
      return rank(a) < rank(b);
    });
    for (const pred *c : conjuncts) {
      auto r = candidates(*c);
      if (!r) return r;
      if (*r) return r;
    }
    return std::optional<std::vector<uint64_t>>();
  }

  /// Calls fn(chunk, selection) for each chunk that may hold matching rows, in file order or
  /// reversed; fn returns false to stop. With no filter every row is selected and nothing is read.
  template <typename Fn>
  result<void> for_each_chunk(const std::optional<pred> &where, bool reverse, Fn fn) {
    std::optional<std::vector<uint64_t>> cand;
    if (where) {
      auto c = plan_index(*where);
      if (!c) return std::move(c).error();
      cand = std::move(c).value();
    }
    size_t cand_pos = 0;
    for (uint64_t n = 0; n < f.chunks; ++n) {
      uint64_t chunk = reverse ? f.chunks - 1 - n : n;
      const uint32_t rows = f.rows_in_chunk(chunk);
      // The chunk's row mask is built only for chunks that are not skipped (a find skips all but one).
      std::vector<uint8_t> mask;
      if (cand) {
        uint64_t first = chunk * f.chunk_rows, end = first + rows;
        auto lo = std::lower_bound(cand->begin(), cand->end(), first);
        auto hi = std::lower_bound(lo, cand->end(), end);
        (void)cand_pos;
        if (lo == hi) {
          ++info.skipped_by_index;
          continue;
        }
        mask.assign(rows, 0);
        for (auto it = lo; it != hi; ++it) mask[*it - first] = 1;
      }
      if (where) {
        bool by_bloom = false;
        if (!cand) {
          auto t = on_chunk(*where, chunk, by_bloom);
          if (!t) return std::move(t).error();
          if (*t == tri::none) {
            if (by_bloom) ++info.skipped_by_bloom;
            else ++info.skipped_by_statistics;
            continue;
          }
          mask.assign(rows, 1);
          if (*t == tri::all) {
            ++info.scanned;
            info.rows_matched += rows;
            if (!fn(chunk, mask)) {
              info.stopped_early = true;
              return {};
            }
            continue;
          }
        }
        ++info.scanned;
        auto sel = eval(*where, chunk, mask);
        if (!sel) return std::move(sel).error();
        info.rows_matched += static_cast<uint64_t>(std::count(sel->begin(), sel->end(), 1));
        if (!fn(chunk, *sel)) {
          info.stopped_early = true;
          return {};
        }
      } else {
        mask.assign(rows, 1);
        ++info.scanned;
        info.rows_matched += rows;
        if (!fn(chunk, mask)) {
          info.stopped_early = true;
          return {};
        }
      }
    }
    return {};
  }

  // --- values out ---------------------------------------------------------------------------------

  /// Walks the pages of one column for ascending rows of one chunk.
  struct cursor {
    engine &e;
    size_t column;
    uint64_t chunk;
    std::shared_ptr<const page_directory> dir;
    size_t page_index = SIZE_MAX;
    page_view view;

    result<void> seek(uint32_t row) {
      if (!dir) {
        auto d = e.f.load_page_directory(column, chunk);
        if (!d) return std::move(d).error();
        dir = *d;
      }
      if (page_index != SIZE_MAX) {
        const auto &pe = dir->pages[page_index];
        if (row >= pe.first_row && row < pe.first_row + pe.rows) return {};
      }
      auto it = std::upper_bound(dir->pages.begin(), dir->pages.end(), row,
                                 [](uint32_t r, const page_entry &p) { return r < p.first_row; });
      page_index = static_cast<size_t>(it - dir->pages.begin()) - 1;
      auto v = e.f.page(column, chunk, page_index);
      if (!v) return std::move(v).error();
      view = std::move(v).value();
      return {};
    }
    uint32_t local(uint32_t row) const { return row - view.first_row; }
  };

  void append_json(std::string &out, size_t column, const page_view &v, uint32_t i) {
    const auto &vals = *v.values;
    if (!vals.is_valid(i)) {
      out += "null";
      return;
    }
    switch (f.sch.columns[column].type) {
      case column_type::integer: {
        char buf[24];
        out.append(buf, static_cast<size_t>(std::to_chars(buf, buf + sizeof buf, vals.ints[i]).ptr - buf));
        break;
      }
      case column_type::float64: append_double(out, vals.reals[i]); break;
      case column_type::decimal:
      case column_type::json: out += v.text(i); break;
      case column_type::string: json::append_quoted(out, v.text(i)); break;
      case column_type::boolean: out += vals.ints[i] ? "true" : "false"; break;
      case column_type::date:
        out.push_back('"');
        append_date(out, vals.ints[i]);
        out.push_back('"');
        break;
      case column_type::timestamp:
        out.push_back('"');
        append_timestamp(out, vals.ints[i]);
        out.push_back('"');
        break;
    }
  }

  /// Appends rows (global row numbers, in output order) as JSON objects of `cols` to `out`: NDJSON
  /// (each object ends in \n) or, `as_array`, the members of an array. Row by row, one cursor per
  /// column: each cursor holds its decoded page (shared with the cache), so a row of 300 columns
  /// decodes nothing when its neighbour was in the same pages, however small the cache.
  result<void> render(std::string &out, const std::vector<uint64_t> &rows, const std::vector<size_t> &cols,
                      bool as_array) {
    std::vector<std::string> keys(cols.size());
    for (size_t ci = 0; ci < cols.size(); ++ci) {
      if (ci) keys[ci].push_back(',');
      json::append_quoted(keys[ci], f.sch.columns[cols[ci]].name);
      keys[ci].push_back(':');
    }
    std::vector<std::optional<cursor>> cursors(cols.size());
    for (size_t k = 0; k < rows.size(); ++k) {
      const uint64_t row = rows[k];
      const uint64_t chunk = row / f.chunk_rows;
      const uint32_t in_chunk = static_cast<uint32_t>(row - chunk * f.chunk_rows);
      if (as_array && k) out.push_back(',');
      out.push_back('{');
      for (size_t ci = 0; ci < cols.size(); ++ci) {
        auto &cur = cursors[ci];
        if (!cur || cur->chunk != chunk) cur.emplace(cursor{*this, cols[ci], chunk, nullptr, SIZE_MAX, {}});
        if (auto s = cur->seek(in_chunk); !s) return std::move(s).error();
        out += keys[ci];
        append_json(out, cols[ci], cur->view, cur->local(in_chunk));
      }
      out.push_back('}');
      if (!as_array) out.push_back('\n');
    }
    return {};
  }

  /// Appends an order key of a value: 0x00 + the domain key, or 0x01 for null (nulls last).
  void append_order_key(std::string &out, size_t column, const page_view &v, uint32_t i) {
    const auto &vals = *v.values;
    if (!vals.is_valid(i)) {
      out.push_back(1);
      return;
    }
    out.push_back(0);
    const column_type t = f.sch.columns[column].type;
    switch (domain_of(t)) {
      case domain::ints: append_int_key(out, vals.ints[i]); break;
      case domain::reals:
        append_real_key(out, t == column_type::decimal ? parse_double(v.text(i)) : vals.reals[i]);
        break;
      case domain::text: append_text_key(out, v.text(i)); break;
    }
  }

  result<std::vector<size_t>> projection(const std::vector<std::string> &names) {
    std::vector<size_t> cols;
    if (names.empty()) {
      for (size_t i = 0; i < f.sch.columns.size(); ++i) cols.push_back(i);
      return cols;
    }
    for (const auto &n : names) {
      auto c = f.sch.find(n);
      if (!c) return quire::error(error_code::NO_SUCH_COLUMN, "no column named '" + n + "'");
      cols.push_back(*c);
    }
    return cols;
  }

  /// The rows a query returns, in order (global row numbers).
  result<std::vector<uint64_t>> select(const query &q, const std::optional<pred> &where) {
    std::vector<uint64_t> out;
    const uint64_t want = q.limit == UINT64_MAX || q.offset > UINT64_MAX - q.limit ? UINT64_MAX : q.offset + q.limit;
    std::optional<size_t> order_col;
    if (!q.order_by.empty()) {
      auto c = f.sch.find(q.order_by);
      if (!c) return quire::error(error_code::NO_SUCH_COLUMN, "no column named '" + q.order_by + "'");
      order_col = *c;
    }
    const bool natural = !order_col || static_cast<int>(*order_col) == f.sorted_column;
    if (natural) {
      const bool reverse = order_col && q.descending;
      uint64_t skipped = 0;
      auto r = for_each_chunk(where, reverse, [&](uint64_t chunk, const std::vector<uint8_t> &sel) {
        const uint64_t first = chunk * f.chunk_rows;
        const uint32_t rows = static_cast<uint32_t>(sel.size());
        // Whole chunks within the offset are skipped by their count; sparse selections (a find
        // selects one row in 65,536) jump from one selected row to the next.
        const auto selected = static_cast<uint64_t>(std::count(sel.begin(), sel.end(), uint8_t{1}));
        if (selected == 0) return true;
        if (skipped + selected <= q.offset) {
          skipped += selected;
          return true;
        }
        if (!reverse && selected < rows / 64) {
          const uint8_t *base = sel.data();
          for (const uint8_t *p = base;
               (p = static_cast<const uint8_t *>(std::memchr(p, 1, static_cast<size_t>(base + rows - p)))) != nullptr;
               ++p) {
            if (skipped < q.offset) {
              ++skipped;
              continue;
            }
            if (out.size() >= q.limit) return false;
            out.push_back(first + static_cast<uint64_t>(p - base));
            if (p + 1 == base + rows) break;
          }
          return out.size() < q.limit;
        }
        for (uint32_t n = 0; n < rows; ++n) {
          uint32_t i = reverse ? rows - 1 - n : n;
          if (!sel[i]) continue;
          if (skipped < q.offset) {
            ++skipped;
            continue;
          }
          if (out.size() >= q.limit) return false;
          out.push_back(first + i);
        }
        return out.size() < q.limit;
      });
      if (!r) return std::move(r).error();
      return out;
    }
    // Ordered by another column: keep the best offset+limit (key, row) pairs.
    std::vector<std::pair<std::string, uint64_t>> best;
    auto cmp = [&](const std::pair<std::string, uint64_t> &a, const std::pair<std::string, uint64_t> &b) {
      if (a.first != b.first) return q.descending ? a.first > b.first : a.first < b.first;
      return q.descending ? a.second > b.second : a.second < b.second;
    };
    quire::error failure;
    // With a limit, chunks are visited from the end that sorts first (descending: the last chunk
    // first), and a chunk whose statistics cannot beat the k-th key kept so far is skipped without
    // reading its pages: the newest 50 of a table in time order read one chunk. Rows of a chunk
    // visited later lose ties (they are further from that end), so "not better" suffices to skip.
    const domain order_domain = domain_of(f.sch.columns[*order_col].type);
    std::shared_ptr<const std::vector<chunk_entry>> order_stats;
    if (want != UINT64_MAX && want > 0 && order_domain != domain::text) {
      auto d = f.column_directory(*order_col);
      if (!d) return std::move(d).error();
      order_stats = *d;
    }
    auto cannot_beat = [&](uint64_t chunk) {
      if (!order_stats || best.size() < want) return false;
      std::nth_element(best.begin(), best.begin() + static_cast<std::ptrdiff_t>(want - 1), best.end(), cmp);
      best.resize(static_cast<size_t>(want));
      const stats &st = (*order_stats)[static_cast<size_t>(chunk)].st;
      std::string chunk_best;
      const bool null_first = q.descending;  // the null key (0x01) sorts after every value
      if ((null_first && st.nulls > 0) || !(q.descending ? st.has_max : st.has_min)) {
        chunk_best.push_back(1);
      } else {
        chunk_best.push_back(0);
        if (order_domain == domain::ints) append_int_key(chunk_best, q.descending ? st.imax : st.imin);
        else append_real_key(chunk_best, q.descending ? st.rmax : st.rmin);
      }
      const std::string &kth = best[static_cast<size_t>(want - 1)].first;
      return q.descending ? chunk_best <= kth : chunk_best >= kth;
    };
    auto r = for_each_chunk(where, q.descending, [&](uint64_t chunk, const std::vector<uint8_t> &sel) {
      if (cannot_beat(chunk)) return true;
      const uint64_t first = chunk * f.chunk_rows;
      cursor cur{*this, *order_col, chunk, nullptr, SIZE_MAX, {}};
      for (uint32_t i = 0; i < sel.size(); ++i) {
        if (!sel[i]) continue;
        auto s = cur.seek(i);
        if (!s) {
          failure = std::move(s).error();
          return false;
        }
        std::string key;
        append_order_key(key, *order_col, cur.view, cur.local(i));
        best.emplace_back(std::move(key), first + i);
        if (want != UINT64_MAX && best.size() >= 2 * want + 1024) {
          std::nth_element(best.begin(), best.begin() + static_cast<std::ptrdiff_t>(want), best.end(), cmp);
          best.resize(static_cast<size_t>(want));
        }
      }
      return true;
    });
    if (!r) return std::move(r).error();
    if (failure.code != error_code::OK) return failure;
    std::sort(best.begin(), best.end(), cmp);
    for (uint64_t k = q.offset; k < best.size() && out.size() < q.limit; ++k)
      out.push_back(best[static_cast<size_t>(k)].second);
    return out;
  }
};

result<std::optional<pred>> compile_where(const std::optional<filter> &where, const format::schema &sch) {
  if (!where) return std::optional<pred>();
  auto p = compile(*where, sch);
  if (!p) return std::move(p).error();
  return std::optional<pred>(std::move(p).value());
}

}  // namespace

result<row_set> file::query(const format::query &q, bool as_array) {
  engine e(*impl_);
  auto where = compile_where(q.where, impl_->sch);
  if (!where) return std::move(where).error();
  auto cols = e.projection(q.columns);
  if (!cols) return std::move(cols).error();
  auto rows = e.select(q, *where);
  if (!rows) return std::move(rows).error();
  row_set out;
  out.count = rows->size();
  if (as_array) out.json.push_back('[');
  if (auto r = e.render(out.json, *rows, *cols, as_array); !r) return std::move(r).error();
  if (as_array) out.json.push_back(']');
  return out;
}

result<std::optional<std::string>> file::find(std::string_view column, const value &key,
                                              const std::vector<std::string> &columns) {
  format::query q;
  filter f;
  f.o = filter::op::eq;
  f.column = std::string(column);
  f.values.push_back(key);
  q.where = std::move(f);
  q.columns = columns;
  q.limit = 1;
  if (key.k == value::kind::null_value) return quire::error(error_code::WRONG_KEY, "find needs a key that is not null");
  auto r = query(q);
  if (!r) {
    auto e = std::move(r).error();
    if (e.code == error_code::INVALID_QUERY) e.code = error_code::WRONG_KEY;
    return e;
  }
  if (r->count == 0) return std::optional<std::string>();
  std::string row = std::move(r->json);
  if (!row.empty() && row.back() == '\n') row.pop_back();
  return std::optional<std::string>(std::move(row));
}

namespace {

bool plain_selection(const query &q) { return q.order_by.empty() && q.offset == 0 && q.limit == UINT64_MAX; }

/// Calls fn(chunk, selection) for the rows query(q) returns, grouped by chunk in file order: for a
/// query without order, offset or limit, the filter's own pass over the chunks; else the rows
/// select() returns (the order does not matter to the callers: sums and counts).
template <typename Fn>
result<void> for_each_selected(engine &e, const query &q, const std::optional<pred> &where, Fn fn) {
  if (plain_selection(q)) return e.for_each_chunk(where, false, fn);
  auto rows = e.select(q, where);
  if (!rows) return std::move(rows).error();
  std::sort(rows->begin(), rows->end());
  std::vector<uint8_t> mask;
  for (size_t k = 0; k < rows->size();) {
    const uint64_t chunk = (*rows)[k] / e.f.chunk_rows, first = chunk * e.f.chunk_rows;
    mask.assign(e.f.rows_in_chunk(chunk), 0);
    for (; k < rows->size() && (*rows)[k] / e.f.chunk_rows == chunk; ++k) mask[(*rows)[k] - first] = 1;
    if (!fn(chunk, mask)) return {};
  }
  return {};
}

/// Neumaier's compensated sum: the same digits on every target (plain IEEE operations in a fixed
/// order), and exact for sums of short decimals far longer than a plain sum stays exact.
struct compensated_sum {
  double sum = 0, compensation = 0;
  void add(double v) {
    const double t = sum + v;
    if (std::fabs(sum) >= std::fabs(v)) compensation += (sum - t) + v;
    else compensation += (v - t) + sum;
    sum = t;
  }
  double value() const { return std::isfinite(sum) ? sum + compensation : sum; }
};

}  // namespace

result<uint64_t> file::count(const format::query &q) {
  engine e(*impl_);
  auto p = compile_where(q.where, impl_->sch);
  if (!p) return std::move(p).error();
  if (auto c = e.projection(q.columns); !c) return std::move(c).error();
  if (!q.order_by.empty() && !impl_->sch.find(q.order_by))
    return quire::error(error_code::NO_SUCH_COLUMN, "no column named '" + q.order_by + "'");
  uint64_t matched = impl_->rows;
  if (*p) {
    auto r = e.for_each_chunk(*p, false, [](uint64_t, const std::vector<uint8_t> &) { return true; });
    if (!r) return std::move(r).error();
    matched = e.info.rows_matched;
  }
  // The order changes which rows, never how many.
  const uint64_t after_offset = matched > q.offset ? matched - q.offset : 0;
  return std::min(after_offset, q.limit);
}

result<aggregate_result> file::aggregate(std::string_view column, const format::query &q) {
  auto &f = *impl_;
  auto col = f.sch.find(column);
  if (!col) return quire::error(error_code::NO_SUCH_COLUMN, "no column named '" + std::string(column) + "'");
  engine e(f);
  auto p = compile_where(q.where, f.sch);
  if (!p) return std::move(p).error();
  if (auto c = e.projection(q.columns); !c) return std::move(c).error();
  const column_type type = f.sch.columns[*col].type;
  const domain dom = domain_of(type);
  aggregate_result out;
  out.column = std::string(column);
  out.type = type;
  int128 isum = 0;
  int64_t imin = 0, imax = 0;
  compensated_sum rsum;
  double rmin = 0, rmax = 0;
  bool nan_seen = false;
  std::string tmin, tmax;  // text columns, and decimals' own text
  decimal_sum dsum(MAX_EXACT_DECIMAL_DIGITS);
  decimal_parts dv, dmin, dmax;
  quire::error failure;
  // Page by page over the selected rows: numbers are summed and compared as numbers, decimals
  // exactly, text is copied only when it becomes the new least or greatest.
  auto r = for_each_selected(e, q, *p, [&](uint64_t chunk, const std::vector<uint8_t> &sel) {
    auto dir = f.load_page_directory(*col, chunk);
    if (!dir) {
      failure = std::move(dir).error();
      return false;
    }
    for (size_t pi = 0; pi < dir.value()->pages.size(); ++pi) {
      const auto &pe = dir.value()->pages[pi];
      const uint32_t from = pe.first_row, to = pe.first_row + pe.rows;
      uint64_t selected = static_cast<uint64_t>(std::count(sel.begin() + from, sel.begin() + to, 1));
      if (!selected) continue;
      out.rows += selected;
      auto view = f.page(*col, chunk, pi);
      if (!view) {
        failure = std::move(view).error();
        return false;
      }
      const auto &vals = *view->values;
      for (uint32_t r = from; r < to; ++r) {
        if (!sel[r]) continue;
        const uint32_t i = r - from;
        if (!vals.is_valid(i)) continue;
        const bool first = out.count++ == 0;
        if (dom == domain::ints) {
          int64_t v = vals.ints[i];
          isum += v;
          if (first || v < imin) imin = v;
          if (first || v > imax) imax = v;
        } else if (type == column_type::float64) {
          double v = vals.reals[i];
          if (std::isnan(v)) nan_seen = true;
          rsum.add(v);
          if (first || v < rmin) rmin = v;
          if (first || v > rmax) rmax = v;
        } else {
          std::string_view t = view->text(i);
          if (type == column_type::decimal) {
            if (auto parsed = parse_decimal(t, MAX_EXACT_DECIMAL_DIGITS, dv); !parsed) {
              failure = std::move(parsed).error();
              return false;
            }
            if (auto added = dsum.add(dv); !added) {
              failure = std::move(added).error();
              return false;
            }
            if (first || compare_decimals(dv, dmin) < 0) {
              dmin = dv;
              tmin.assign(t);
            }
            if (first || compare_decimals(dv, dmax) > 0) {
              dmax = dv;
              tmax.assign(t);
            }
          } else {
            if (first || t < tmin) tmin.assign(t);
            if (first || t > tmax) tmax.assign(t);
          }
        }
      }
    }
    return true;
  });
  if (!r) return std::move(r).error();
  if (failure.code != error_code::OK) {
    if (failure.path.empty()) failure.path = std::string(column);
    return failure;
  }
  if (!out.count) return out;
  const double n = static_cast<double>(out.count);
  switch (type) {
    case column_type::integer:
    case column_type::boolean:
      out.exact_sum = int128_text(isum);
      out.sum = static_cast<double>(isum);
      out.avg = out.sum / n;
      break;
    case column_type::float64:
      out.sum = rsum.value();
      out.avg = out.sum / n;
      break;
    case column_type::decimal:
      out.exact_sum = dsum.text();
      out.exact_avg = dsum.average(out.count, std::max<uint32_t>(dsum.scale(), DECIMAL_AVG_MIN_SCALE));
      out.sum = parse_double(out.exact_sum);
      out.avg = parse_double(out.exact_avg);
      break;
    default: break;
  }
  switch (dom) {
    case domain::ints:
      out.min = type == column_type::boolean ? value::of(imin != 0) : value::of(imin);
      out.max = type == column_type::boolean ? value::of(imax != 0) : value::of(imax);
      break;
    case domain::reals:
      if (type == column_type::float64) {
        if (nan_seen) rmin = rmax = std::nan("");
        out.min = value::of(rmin);
        out.max = value::of(rmax);
        out.finite = std::isfinite(out.sum) && std::isfinite(out.avg) && std::isfinite(rmin) && std::isfinite(rmax);
        break;
      }
      [[fallthrough]];
    case domain::text:
      out.min = value::text(std::move(tmin));
      out.max = value::text(std::move(tmax));
      break;
  }
  return out;
}

result<std::vector<column_array>> file::columns(const format::query &q) {
  auto &f = *impl_;
  engine e(f);
  auto cols = e.projection(q.columns);
  if (!cols) return std::move(cols).error();
  auto p = compile_where(q.where, f.sch);
  if (!p) return std::move(p).error();
  std::vector<column_array> out(cols->size());
  for (size_t c = 0; c < cols->size(); ++c) {
    out[c].name = f.sch.columns[(*cols)[c]].name;
    out[c].type = f.sch.columns[(*cols)[c]].type;
    if (stored_as_text(out[c].type)) out[c].text_offsets.push_back(0);
  }
  auto append = [](column_array &a, const engine::cursor &cur, uint32_t k) {
    const auto &vals = *cur.view.values;
    bool valid = vals.is_valid(k);
    a.valid.push_back(valid ? 1 : 0);
    switch (a.type) {
      case column_type::float64: a.reals.push_back(valid ? vals.reals[k] : 0); break;
      case column_type::decimal:
      case column_type::string:
      case column_type::json: {
        std::string_view t = valid ? cur.view.text(k) : std::string_view();
        if (a.type == column_type::decimal) a.reals.push_back(valid ? parse_double(t) : 0);
        a.text.append(t);
        a.text_offsets.push_back(static_cast<uint32_t>(a.text.size()));
        break;
      }
      default: a.ints.push_back(valid ? vals.ints[k] : 0); break;
    }
  };
  quire::error failure;
  if (!plain_selection(q)) {
    // In the query's order: one cursor per column, as rows are rendered.
    auto rows = e.select(q, *p);
    if (!rows) return std::move(rows).error();
    std::vector<std::optional<engine::cursor>> cursors(cols->size());
    for (uint64_t row : *rows) {
      const uint64_t chunk = row / f.chunk_rows;
      const uint32_t in_chunk = static_cast<uint32_t>(row - chunk * f.chunk_rows);
      for (size_t c = 0; c < cols->size(); ++c) {
        auto &cur = cursors[c];
        if (!cur || cur->chunk != chunk) cur.emplace(engine::cursor{e, (*cols)[c], chunk, nullptr, SIZE_MAX, {}});
        if (auto s = cur->seek(in_chunk); !s) return std::move(s).error();
        append(out[c], *cur, cur->local(in_chunk));
      }
    }
    return out;
  }
  auto r = e.for_each_chunk(*p, false, [&](uint64_t chunk, const std::vector<uint8_t> &sel) {
    for (size_t c = 0; c < cols->size(); ++c) {
      engine::cursor cur{e, (*cols)[c], chunk, nullptr, SIZE_MAX, {}};
      for (uint32_t i = 0; i < sel.size(); ++i) {
        if (!sel[i]) continue;
        auto s = cur.seek(i);
        if (!s) {
          failure = std::move(s).error();
          return false;
        }
        append(out[c], cur, cur.local(i));
      }
    }
    return true;
  });
  if (!r) return std::move(r).error();
  if (failure.code != error_code::OK) return failure;
  return out;
}

// --- explain and storage ----------------------------------------------------------------------------

namespace {

read_counters diff(const read_counters &a, const read_counters &b) {
  read_counters d;
  d.bytes = a.bytes - b.bytes;
  d.reads = a.reads - b.reads;
  d.data_pages = a.data_pages - b.data_pages;
  d.index_pages = a.index_pages - b.index_pages;
  d.directory_pages = a.directory_pages - b.directory_pages;
  d.cache_hits = a.cache_hits - b.cache_hits;
  return d;
}

}  // namespace

std::string filter_to_expression(const filter &f);

result<explain_report> file::explain(const format::query &q, bool analyze) {
  auto &f = *impl_;
  engine e(f);
  auto where = compile_where(q.where, f.sch);
  if (!where) return std::move(where).error();
  auto cols = e.projection(q.columns);
  if (!cols) return std::move(cols).error();
  // An analyzed run counts what it reads from a cold start: the cache and the sets of touched
  // blocks, chunks and columns are set aside and restored afterwards.
  read_counters before = f.counters;
  auto saved_cache = std::move(f.cache);
  auto saved_dirs = std::move(f.column_dirs);
  auto saved_pdirs = std::move(f.page_dirs);
  auto saved_dicts = std::move(f.dicts);
  auto saved_roots = std::move(f.roots);
  auto saved_blocks = std::move(f.touched_blocks), saved_chunks = std::move(f.touched_chunks),
       saved_columns = std::move(f.touched_columns);
  f.cache.clear();
  f.column_dirs.assign(f.columns.size(), nullptr);
  f.page_dirs.clear();
  f.dicts.clear();
  f.roots.assign(f.indexes.size(), nullptr);
  f.touched_blocks.clear();
  f.touched_chunks.clear();
  f.touched_columns.clear();
  uint64_t returned = 0;
  result<void> run;
  if (analyze) {
    auto rows = e.select(q, *where);
    if (!rows) run = std::move(rows).error();
    else {
      std::string rendered;
      if (auto r = e.render(rendered, *rows, *cols, false); !r) run = std::move(r).error();
      else returned = rows->size();
    }
  } else if (*where) {
    // The plan alone: which index, which chunks the statistics and Bloom filters skip.
    run = e.for_each_chunk(*where, false, [](uint64_t, const std::vector<uint8_t> &) { return true; });
  }
  read_counters used = diff(f.counters, before);
  used.blocks = f.touched_blocks.size();
  used.chunks = f.touched_chunks.size();
  used.columns = f.touched_columns.size();
  f.cache = std::move(saved_cache);
  f.column_dirs = std::move(saved_dirs);
  f.page_dirs = std::move(saved_pdirs);
  f.dicts = std::move(saved_dicts);
  f.roots = std::move(saved_roots);
  f.touched_blocks.insert(saved_blocks.begin(), saved_blocks.end());
  f.touched_chunks.insert(saved_chunks.begin(), saved_chunks.end());
  f.touched_columns.insert(saved_columns.begin(), saved_columns.end());
  f.counters.blocks = f.touched_blocks.size();
  f.counters.chunks = f.touched_chunks.size();
  f.counters.columns = f.touched_columns.size();
  if (!run) return std::move(run).error();

  explain_report out;
  if (q.where) out.where = filter_to_expression(*q.where);
  if (e.info.used_index)
    out.index =
        explain_report::index_use{e.info.index_column, e.info.index_kind, e.info.index_use, e.info.index_candidates};
  std::vector<size_t> filter_cols;
  if (*where) collect_columns(**where, filter_cols);
  for (size_t c : filter_cols) out.filter_columns.push_back(f.sch.columns[c].name);
  for (size_t c : *cols) out.columns.push_back(f.sch.columns[c].name);
  if (!q.order_by.empty()) {
    out.order = explain_report::order_plan{
        q.order_by, q.descending,
        f.sorted_column >= 0 && f.sch.columns[static_cast<size_t>(f.sorted_column)].name == q.order_by};
  }
  out.offset = q.offset;
  if (q.limit != UINT64_MAX) out.limit = q.limit;
  out.chunks = {e.info.chunks_total, e.info.skipped_by_statistics, e.info.skipped_by_bloom, e.info.skipped_by_index,
                e.info.scanned};
  out.analyzed = analyze;
  if (analyze) {
    out.rows_matched = e.info.rows_matched;
    out.rows_returned = returned;
    out.stopped_early = e.info.stopped_early;
    out.read = used;
  }
  return out;
}

namespace {

value stat_value(column_type type, const stats &s, bool min) {
  if (!(min ? s.has_min : s.has_max)) return value::null();
  switch (type) {
    case column_type::boolean: return value::of((min ? s.imin : s.imax) != 0);
    case column_type::integer:
    case column_type::date:
    case column_type::timestamp: return value::of(min ? s.imin : s.imax);
    case column_type::float64:
    case column_type::decimal: return value::of(min ? s.rmin : s.rmax);
    default: return value::text(min ? s.tmin : s.tmax);
  }
}

}  // namespace

result<std::vector<chunk_statistic>> file::chunk_statistics(std::string_view column) {
  auto &f = *impl_;
  auto col = f.sch.find(column);
  if (!col) return quire::error(error_code::NO_SUCH_COLUMN, "no column named '" + std::string(column) + "'");
  auto cd = f.column_directory(*col);
  if (!cd) return std::move(cd).error();
  std::vector<chunk_statistic> out;
  for (size_t i = 0; i < cd.value()->size(); ++i) {
    const auto &c = (*cd.value())[i];
    const column_type type = f.sch.columns[*col].type;
    out.push_back(
        {i, c.st.rows, c.st.nulls, stat_value(type, c.st, true), stat_value(type, c.st, false), c.data_bytes});
  }
  return out;
}

file_info file::info() const {
  const auto &f = *impl_;
  file_info i;
  i.bytes = f.size;
  i.rows = f.rows;
  i.chunk_rows = f.chunk_rows;
  i.chunks = f.chunks;
  if (f.sorted_column >= 0) i.sorted_by = f.sch.columns[static_cast<size_t>(f.sorted_column)].name;
  i.created_by = f.created_by;
  i.schema = f.sch;
  i.indexes = indexes();
  return i;
}

result<storage_report> file::storage() {
  auto &f = *impl_;
  storage_report out;
  out.info = info();
  out.footer_bytes = f.size - f.footer_offset;
  for (size_t c = 0; c < f.columns.size(); ++c) {
    auto cd = f.column_directory(c);
    if (!cd) return std::move(cd).error();
    storage_report::column_storage cs;
    cs.name = f.sch.columns[c].name;
    cs.type = f.sch.columns[c].type;
    std::map<std::string, uint64_t> encodings;
    for (uint64_t ch = 0; ch < cd.value()->size(); ++ch) {
      const auto &entry = (*cd.value())[ch];
      cs.data_bytes += entry.data_bytes;
      cs.directory_bytes += entry.page_directory.stored_length;
      cs.nulls += entry.st.nulls;
      auto pd = f.load_page_directory(c, ch);
      if (!pd) return std::move(pd).error();
      for (const auto &pe : pd.value()->pages) {
        ++cs.pages;
        cs.encoded_bytes += pe.ref.raw_length;
        ++encodings[encoding_name(pe.encoding)];
      }
      if (pd.value()->has_dictionary) cs.encoded_bytes += pd.value()->dictionary_ref.raw_length;
    }
    cs.directory_bytes += f.columns[c].directory.stored_length;
    cs.encodings.assign(encodings.begin(), encodings.end());
    out.columns.push_back(std::move(cs));
  }
  for (size_t i = 0; i < f.indexes.size(); ++i) {
    auto root = f.load_index_root(i);
    if (!root) return std::move(root).error();
    storage_report::index_storage is;
    uint64_t leaves = 0;
    for (const auto &l : root.value()->leaves) leaves += l.ref.stored_length;
    for (const auto &b : root.value()->blooms) is.bloom_bytes += b.ref.stored_length;
    is.column = f.sch.columns[f.indexes[i].column].name;
    is.kind = f.indexes[i].kind;
    is.entries = f.indexes[i].entries;
    is.leaves = root.value()->leaves.size();
    is.bytes = leaves + is.bloom_bytes + f.indexes[i].root.stored_length;
    out.indexes.push_back(std::move(is));
  }
  return out;
}

result<uint64_t> file::verify() {
  auto &f = *impl_;
  uint64_t pages = 0;
  for (size_t c = 0; c < f.columns.size(); ++c) {
    for (uint64_t ch = 0; ch < f.chunks; ++ch) {
      auto dir = f.load_page_directory(c, ch);
      if (!dir) return std::move(dir).error();
      pages += 2;
      for (size_t p = 0; p < dir.value()->pages.size(); ++p) {
        auto v = f.page(c, ch, p);
        if (!v) return std::move(v).error();
        ++pages;
      }
      if (dir.value()->has_dictionary) ++pages;
    }
  }
  for (size_t i = 0; i < f.indexes.size(); ++i) {
    auto root = f.load_index_root(i);
    if (!root) return std::move(root).error();
    ++pages;
    for (size_t l = 0; l < root.value()->leaves.size(); ++l) {
      auto entries = f.load_leaf(i, l);
      if (!entries) return std::move(entries).error();
      ++pages;
    }
    for (uint64_t ch = 0; ch < root.value()->blooms.size(); ++ch) {
      auto may = f.bloom_may_contain(i, ch, {});
      if (!may) return std::move(may).error();
      ++pages;
    }
  }
  return pages;
}

}  // namespace quire::format
