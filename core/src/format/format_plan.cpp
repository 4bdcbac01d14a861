// The plan: which chunks a filter can skip by statistics and Bloom filters, and which index (hash,
// sorted or trigram) turns a conjunct into candidate rows when that is cheaper than a scan.
#include <algorithm>
#include <iterator>

#include "format_engine.h"

namespace quire::format::detail {

result<tri> engine::on_chunk(const pred &p, uint64_t chunk, bool &by_bloom) {
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

result<std::vector<uint64_t>> engine::index_range(size_t ix, const std::optional<std::string> &lo_key,
                                                  const std::optional<std::string> &hi_key, bool estimate_only,
                                                  uint64_t &estimate, const std::string *compact_key) {
  estimate = 0;
  std::vector<uint64_t> rows;
  // Each segment indexes its own rows: their ranges are walked in segment order, so the rows come
  // out ascending by segment (and, within one, in the index's order).
  for (size_t seg = 0; seg < f.segments.size(); ++seg) {
    auto root = f.load_index_root(ix, seg);
    if (!root) return std::move(root).error();
    const auto &leaves = root.value()->leaves;
    const bool alt = compact_key && f.compact(ix, seg);
    const std::optional<std::string> &lo = alt ? std::optional<std::string>(*compact_key) : lo_key;
    const std::optional<std::string> &hi = alt ? lo : hi_key;
    size_t start = 0;
    if (lo) {
      auto it = std::upper_bound(leaves.begin(), leaves.end(), *lo,
                                 [](const std::string &k, const index_leaf &l) { return k < l.first_key; });
      start = it == leaves.begin() ? 0 : static_cast<size_t>(it - leaves.begin()) - 1;
    }
    for (size_t li = start; li < leaves.size(); ++li) {
      if (hi && leaves[li].first_key > *hi) break;
      estimate += leaves[li].entries;
      if (estimate_only) continue;
      auto scanned = f.scan_leaf(ix, seg, li, lo, hi, rows);
      if (!scanned) return std::move(scanned).error();
    }
  }
  return rows;
}

result<std::optional<std::vector<uint64_t>>> engine::candidates(const pred &p) {
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
  auto keys = lookup_keys(p);
  int hash_ix = index_of(p.column, index_kind::hash);
  if (!keys.empty() && hash_ix >= 0) {
    std::vector<uint64_t> rows;
    for (const auto &key : keys) {
      std::string k;
      put_be64(k, hash64(key));
      uint64_t est;
      auto r = index_range(static_cast<size_t>(hash_ix), k, k, false, est, &key);
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
    std::vector<uint32_t> packed;
    distinct_trigrams(p.pattern, packed);
    std::vector<std::string> grams(packed.size());
    for (size_t i = 0; i < packed.size(); ++i) append_trigram_key(grams[i], packed[i]);
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

result<std::optional<std::vector<uint64_t>>> engine::plan_index(const pred &p) {
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

}  // namespace quire::format::detail
