// The functions on collections, by N1's groups: existence (empty(), exists(), all(), allTrue() and
// its kin, subsetOf(), supersetOf(), count(), distinct(), isDistinct()), filtering and projection
// (where(), select(); repeat() walks as descendants() does, ofType() is a type's), subsetting
// (single(), first(), last(), tail(), skip(), take(), intersect(), exclude()) and combining
// (union(), combine()).
#include <algorithm>

#include "fhirpath_engine.h"

namespace quire::fhirpath {

// --- existence ---

bool engine::fn_empty(const node &, const frame &, const collection &in, collection &out) {
  out.push_back(boolean_item(in.empty()));
  return true;
}

bool engine::fn_exists(const node &nd, const frame &, const collection &in, collection &out) {
  bool any = false;
  if (nd.arg_count == 0) {
    any = !in.empty();
  } else {
    for (size_t i = 0; i < in.size() && !any; ++i) {
      int t;
      if (!criterion(nd, in, i, t)) return false;
      any = t == 1;
    }
  }
  out.push_back(boolean_item(any));
  return true;
}

bool engine::fn_all(const node &nd, const frame &, const collection &in, collection &out) {
  bool all = true;
  for (size_t i = 0; i < in.size() && all; ++i) {
    int t;
    if (!criterion(nd, in, i, t)) return false;
    if (t != 1) all = false;
  }
  out.push_back(boolean_item(all));
  return true;
}

bool engine::fn_all_any_true_false(const node &nd, const frame &, const collection &in, collection &out) {
  bool want = nd.function == fn::allTrue || nd.function == fn::anyTrue;
  bool every = nd.function == fn::allTrue || nd.function == fn::allFalse;
  bool r = every;
  for (const item &v : in) {
    if (v.kind != value_kind::boolean) return type_error(nd.pos, nd.name + "() needs booleans, not " + type_name(v));
    if (every && v.boolean != want) r = false;
    if (!every && v.boolean == want) r = true;
  }
  out.push_back(boolean_item(r));
  return true;
}

bool engine::fn_subset_superset(const node &nd, const frame &f, const collection &in, collection &out) {
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

bool engine::fn_count(const node &, const frame &, const collection &in, collection &out) {
  out.push_back(integer_item(static_cast<int64_t>(in.size())));
  return true;
}

bool engine::fn_distinct(const node &, const frame &, const collection &in, collection &out) {
  size_t start = out.size();
  for (const item &v : in)
    if (!contains_item(out, v, start)) out.push_back(v);
  return !s_.failed;
}

bool engine::fn_is_distinct(const node &, const frame &, const collection &in, collection &out) {
  // Strings are equal only when their texts are: sorting them is exact and n·log n, where the
  // pairwise loop below is quadratic (FHIR's bdl-7 asks it of every Bundle's fullUrls).
  if (in.size() > 16 && std::all_of(in.begin(), in.end(), [](const item &v) { return v.kind == value_kind::string; })) {
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

// --- filtering and projection ---

bool engine::fn_where(const node &nd, const frame &, const collection &in, collection &out) {
  for (size_t i = 0; i < in.size(); ++i) {
    int t;
    if (!criterion(nd, in, i, t)) return false;
    if (t == 1) out.push_back(in[i]);
  }
  return true;
}

bool engine::fn_select(const node &nd, const frame &, const collection &in, collection &out) {
  for (size_t i = 0; i < in.size(); ++i) {
    frame g = per_item(in, i);
    if (!arg(nd, 0, g, out)) return false;
    if (!check_size(out, nd.pos)) return false;
  }
  return true;
}

// --- subsetting ---

bool engine::fn_single(const node &nd, const frame &, const collection &in, collection &out) {
  if (in.size() > 1) return type_error(nd.pos, "single() on " + std::to_string(in.size()) + " items");
  out.insert(out.end(), in.begin(), in.end());
  return true;
}

bool engine::fn_first(const node &, const frame &, const collection &in, collection &out) {
  if (!in.empty()) out.push_back(in.front());
  return true;
}

bool engine::fn_last(const node &, const frame &, const collection &in, collection &out) {
  if (!in.empty()) out.push_back(in.back());
  return true;
}

bool engine::fn_tail(const node &, const frame &, const collection &in, collection &out) {
  if (in.size() > 1) out.insert(out.end(), in.begin() + 1, in.end());
  return true;
}

bool engine::fn_skip_take(const node &nd, const frame &f, const collection &in, collection &out) {
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

bool engine::fn_intersect(const node &nd, const frame &f, const collection &in, collection &out) {
  scratch other(s_);
  if (!arg(nd, 0, f, *other)) return false;
  size_t start = out.size();
  for (const item &v : in)
    if (contains_item(*other, v) && !contains_item(out, v, start)) out.push_back(v);
  return !s_.failed;
}

bool engine::fn_exclude(const node &nd, const frame &f, const collection &in, collection &out) {
  scratch other(s_);
  if (!arg(nd, 0, f, *other)) return false;
  for (const item &v : in)
    if (!contains_item(*other, v)) out.push_back(v);
  return !s_.failed;
}

// --- combining ---

bool engine::fn_union(const node &nd, const frame &f, const collection &in, collection &out) {
  scratch other(s_);
  if (!arg(nd, 0, f, *other)) return false;
  return union_of(in, *other, nd.pos, out);
}

bool engine::fn_combine(const node &nd, const frame &f, const collection &in, collection &out) {
  scratch other(s_);
  if (!arg(nd, 0, f, *other)) return false;
  out.insert(out.end(), in.begin(), in.end());
  out.insert(out.end(), other->begin(), other->end());
  return check_size(out, nd.pos);
}

}  // namespace quire::fhirpath
