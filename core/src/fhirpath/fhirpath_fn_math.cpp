// Math (N1 "Math"): abs(), ceiling(), exp(), floor(), ln(), log(), power(), round(), sqrt(),
// truncate(), exact on decimals where the answer is (the others through a double, to 15 digits).
#include <algorithm>
#include <cmath>

#include "fhirpath_engine.h"

namespace quire::fhirpath {

bool engine::fn_math(const node &nd, const frame &, const collection &in, collection &out) {
  return math_function(nd, in, out);
}

bool engine::fn_math_with_argument(const node &nd, const frame &f, const collection &in, collection &out) {
  // Arguments are evaluated once, relative to the outer $this.
  scratch a(s_);
  if (nd.arg_count && !arg(nd, 0, f, *a)) return false;
  if (nd.arg_count && a->empty()) return true;
  if (a->size() > 1) return type_error(nd.pos, nd.name + "() needs a single argument");
  collection both;
  both.assign(in.begin(), in.end());
  if (nd.arg_count) both.push_back((*a)[0]);
  return math_function(nd, both, out);
}

bool engine::math_function(const node &nd, const collection &in, collection &out) {
  bool with_arg = nd.arg_count > 0;
  size_t n_in = in.size() - (with_arg ? 1 : 0);
  if (n_in == 0) return true;
  if (n_in > 1) return type_error(nd.pos, nd.name + "() on " + std::to_string(n_in) + " items");
  const item &v = in[0];
  const item *a = with_arg ? &in[1] : nullptr;
  if (nd.function == fn::abs && v.dec.digits == INT64_MIN) return true;  // no positive twin: empty
  if (nd.function == fn::abs && v.kind == value_kind::quantity) {
    item q = v;
    if (q.dec.digits < 0) q.dec.digits = -q.dec.digits;
    out.push_back(q);
    return true;
  }
  if (!is_number(v)) return type_error(nd.pos, nd.name + "() needs a number, not " + type_name(v));
  if (a && !is_number(*a)) return type_error(nd.pos, nd.name + "() needs a number argument");
  switch (nd.function) {
    case fn::abs:
      if (v.kind == value_kind::integer) {
        if (v.integer != INT64_MIN) out.push_back(integer_item(v.integer < 0 ? -v.integer : v.integer));
      } else {
        out.push_back(decimal_item(decimal{v.dec.digits < 0 ? -v.dec.digits : v.dec.digits, v.dec.scale}));
      }
      return true;
    case fn::ceiling:
    case fn::floor:
    case fn::truncate: {
      decimal d = v.dec;
      if (d.scale < 0 && !rescale(d, 0)) return true;  // a huge value beyond 64 bits: empty
      int64_t p = 1;
      for (int i = 0; i < d.scale; ++i) p *= 10;
      int64_t q = d.digits / p, r = d.digits % p;
      if (nd.function == fn::ceiling && r > 0) ++q;
      if (nd.function == fn::floor && r < 0) --q;
      out.push_back(integer_item(q));
      return true;
    }
    case fn::round: {
      int64_t places = 0;
      if (a) {
        if (a->kind != value_kind::integer || a->integer < 0)
          return type_error(nd.pos, "round() needs a non-negative integer");
        places = std::min<int64_t>(a->integer, 18);
      }
      decimal d = v.dec;
      if (d.scale > places) rescale(d, static_cast<int32_t>(places));
      out.push_back(decimal_item(d));
      return true;
    }
    case fn::sqrt:
    case fn::exp:
    case fn::ln:
    case fn::log:
    case fn::power: {
      if (nd.function == fn::power && v.kind == value_kind::integer && a->kind == value_kind::integer &&
          a->integer >= 0) {
        int64_t r = 1;
        for (int64_t i = 0; i < a->integer; ++i) {
          if (__builtin_mul_overflow(r, v.integer, &r)) return true;
          if (r == 0 || r == 1) break;
        }
        out.push_back(integer_item(r));
        return true;
      }
      double x = decimal_to_double(v.dec), r;
      switch (nd.function) {
        case fn::sqrt: r = std::sqrt(x); break;
        case fn::exp: r = std::exp(x); break;
        case fn::ln: r = std::log(x); break;
        case fn::log: r = std::log(x) / std::log(decimal_to_double(a->dec)); break;
        default: r = std::pow(x, decimal_to_double(a->dec)); break;
      }
      decimal d;
      if (double_to_decimal(r, d)) out.push_back(decimal_item(d));
      return true;
    }
    default: return type_error(nd.pos, "unsupported math function");
  }
}

}  // namespace quire::fhirpath
