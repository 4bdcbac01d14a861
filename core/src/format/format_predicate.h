// The compiled filter: a query's filter checked against the schema once and turned into typed
// predicates over each column's domain (format_predicate.cpp), tested value by value in the scan
// and against statistics (a chunk's or a page's min/max/nulls) to skip what cannot match.
#pragma once

#include <algorithm>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "format_internal.h"

namespace quire::format::detail {

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

inline tri tri_not(tri t) { return t == tri::none ? tri::all : t == tri::all ? tri::none : tri::some; }

/// Compiles a filter against the schema; nesting beyond the expression depth limit is an error.
result<pred> compile(const filter &f, const format::schema &sch, size_t depth = 0);
/// compile() for a query's optional filter.
result<std::optional<pred>> compile_where(const std::optional<filter> &where, const format::schema &sch);

// --- testing one value ----------------------------------------------------------------------------

inline bool in_range(const pred &p, int64_t v) { return (!p.has_lo || v >= p.ilo) && (!p.has_hi || v <= p.ihi); }
inline bool in_range(const pred &p, double v) {
  return (!p.has_lo || (p.lo_incl ? v >= p.rlo : v > p.rlo)) && (!p.has_hi || (p.hi_incl ? v <= p.rhi : v < p.rhi));
}
inline bool in_range(const pred &p, std::string_view v) {
  return (!p.has_lo || (p.lo_incl ? v >= p.tlo : v > p.tlo)) && (!p.has_hi || (p.hi_incl ? v <= p.thi : v < p.thi));
}

inline bool test_int(const pred &p, int64_t v) {
  if (p.kind == pk::set) return std::binary_search(p.iset.begin(), p.iset.end(), v);
  return in_range(p, v) != p.negate;
}
inline bool test_real(const pred &p, double v) {
  if (p.kind == pk::set) return std::binary_search(p.rset.begin(), p.rset.end(), v);
  return in_range(p, v) != p.negate;
}
inline bool test_text(const pred &p, std::string_view v) {
  switch (p.kind) {
    case pk::contains: return v.find(p.pattern) != std::string_view::npos;
    case pk::starts_with: return v.substr(0, p.pattern.size()) == p.pattern;
    case pk::set: return std::binary_search(p.tset.begin(), p.tset.end(), v);
    default: return in_range(p, v) != p.negate;
  }
}

// --- statistics ------------------------------------------------------------------------------------

/// Whether none, some or all of the rows that `s` describes can match the leaf predicate `p`.
tri leaf_on_stats(const pred &p, const stats &s);
/// Hashes of the keys an = or in predicate looks for, as the writer hashed them.
std::vector<uint64_t> key_hashes(const pred &p);
/// The order keys of those values (what a hash index with integer keys holds, docs/format.md 1.7).
std::vector<std::string> lookup_keys(const pred &p);
/// Appends the columns a predicate reads, each once, in the order first seen.
void collect_columns(const pred &p, std::vector<size_t> &out);

}  // namespace quire::format::detail
