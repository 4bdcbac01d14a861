// Utility functions (N1 "Utility functions": trace(), now(), today(), timeOfDay(); FHIRPath 2's
// precision(), lowBoundary(), highBoundary(), comparable()), not() (N1 "Boolean logic"),
// aggregate() (N1 "Aggregates") and sort().
#include <algorithm>

#include "../common/calendar.h"
#include "fhirpath_engine.h"

namespace quire::fhirpath {

bool engine::fn_not(const node &nd, const frame &, const collection &in, collection &out) {
  if (in.empty()) return true;
  bool ok;
  int t = truth(in, nd.pos, ok);
  if (!ok) return false;
  out.push_back(boolean_item(t == 0));
  return true;
}

bool engine::fn_trace(const node &, const frame &, const collection &in, collection &out) {
  out.insert(out.end(), in.begin(), in.end());
  return true;
}

bool engine::fn_now_today_time_of_day(const node &nd, const frame &, const collection &, collection &out) {
  // Core reads no clock: the caller's reading comes with the environment.
  if (!s_.env || !s_.env->now)
    return fail(error_code::INVALID_ARGUMENT, nd.pos,
                nd.name + "() needs the current time, which the caller passes (environment::now)");
  const clock_reading &now = *s_.env->now;
  const int64_t local_ms = now.unix_ms + int64_t{now.utc_offset_minutes} * 60000;
  const int64_t days = local_ms >= 0 ? local_ms / 86400000 : -((-local_ms + 86399999) / 86400000);
  const int64_t rest = local_ms - days * 86400000;
  int64_t year;
  unsigned month, day;
  quire::detail::civil_from_days(days, year, month, day);
  moment m;
  m.year = static_cast<int>(year);
  m.month = static_cast<int>(month);
  m.day = static_cast<int>(day);
  m.has_tz = true;
  m.tz_minutes = now.utc_offset_minutes;
  m.precision = 3;
  m.hour = static_cast<int>(rest / 3600000);
  m.minute = static_cast<int>(rest / 60000 % 60);
  m.second = static_cast<int>(rest / 1000 % 60);
  m.millis = static_cast<int>(rest % 1000);
  item v;
  if (nd.function == fn::today) {
    v.kind = value_kind::date;
  } else if (nd.function == fn::now) {
    m.precision = 7;
    v.kind = value_kind::date_time;
  } else {
    m.precision = 7;
    m.is_time = true;
    v.kind = value_kind::time;
  }
  v.text = keep(moment_text(m));
  out.push_back(v);
  return true;
}

// --- precision and boundaries ---

bool engine::fn_precision(const node &nd, const frame &, const collection &in, collection &out) {
  if (in.empty()) return true;
  const item *vp = single(in, nd.pos, ("the input of " + nd.name + "()").c_str());
  if (!vp) return false;
  const item &v = *vp;
  if (v.kind == value_kind::decimal) {
    out.push_back(integer_item(std::max(v.dec.scale, 0)));
  } else if (v.kind == value_kind::integer) {
    out.push_back(integer_item(0));
  } else if (is_moment(v)) {
    size_t digits = 0;
    for (char c : v.text) {
      if (c == 'Z' || c == '+' || (c == '-' && digits >= 8)) break;
      if (c >= '0' && c <= '9') ++digits;
    }
    out.push_back(integer_item(static_cast<int64_t>(digits)));
  } else {
    return type_error(nd.pos, "precision() needs a decimal, a date or a time");
  }
  return true;
}

bool engine::fn_boundary(const node &nd, const frame &f, const collection &in, collection &out) {
  if (in.empty()) return true;
  const item *vp = single(in, nd.pos, ("the input of " + nd.name + "()").c_str());
  if (!vp) return false;
  const item &v = *vp;
  bool present = false;
  int64_t p = 0;
  if (nd.arg_count) {
    scratch a(s_);
    if (!arg_integer(nd, 0, f, *a, present, p)) return false;
  }
  bool high = nd.function == fn::highBoundary;
  if (is_number(v) || v.kind == value_kind::quantity || is_quantity_like(v)) {
    decimal d;
    std::string_view unit;
    bool q = !is_number(v);
    if (q) {
      if (!quantity_of(v, d, unit)) return true;
    } else {
      d = v.dec;
    }
    if (!present) p = 8;
    if (p < 0 || p > 18) return true;
    // The value's uncertainty is half a unit of its last digit.
    decimal half{5, d.scale + 1}, b;
    if (!add_decimal(d, half, b, !high)) return true;
    decimal r = b;
    if (!rescale(r, std::max<int32_t>(b.scale, static_cast<int32_t>(p)))) return true;
    if (p < b.scale) {
      // Toward the boundary's side, but a boundary smaller than the last kept digit is zero.
      int64_t pw = 1;
      bool tiny = b.scale - p > 18;  // 10^19 does not fit: every held value is smaller
      for (int i = 0; i < b.scale - p && !tiny; ++i) pw *= 10;
      int64_t qd = tiny ? 0 : b.digits / pw, rem = tiny ? 0 : b.digits % pw;
      uint64_t mag = b.digits < 0 ? uint64_t(0) - static_cast<uint64_t>(b.digits) : static_cast<uint64_t>(b.digits);
      if (tiny || mag < static_cast<uint64_t>(pw)) {
        qd = 0;
      } else if (!high && rem < 0) {
        --qd;
      } else if (high && rem > 0) {
        ++qd;
      }
      r = decimal{qd, static_cast<int32_t>(p)};
    }
    if (q) out.push_back(quantity_item(r, unit));
    else out.push_back(decimal_item(r));
    return true;
  }
  if (is_moment(v)) {
    moment m;
    if (!parse_date_time(v.text, v.kind, m)) return true;
    // Without a precision the boundary has the type's full precision: a Date's is the day (8).
    if (!present) p = v.kind == value_kind::time ? 9 : v.kind == value_kind::date ? 8 : 17;
    // Digits of precision to a field count: 4 year, 6 month, 8 day, 10 hour, 12 minute, 14 second, 17 ms.
    uint8_t want;
    if (v.kind == value_kind::time) {
      if (p == 2) want = 4;
      else if (p == 4) want = 5;
      else if (p == 6) want = 6;
      else if (p == 9) want = 7;
      else return true;
    } else {
      if (p == 4) want = 1;
      else if (p == 6) want = 2;
      else if (p == 8) want = 3;
      else if (p == 10) want = 4;
      else if (p == 12) want = 5;
      else if (p == 14) want = 6;
      else if (p == 17) want = 7;
      else return true;
    }
    if (v.kind == value_kind::date && want > 3) return true;
    if (m.precision < 2) m.month = high ? 12 : 1;
    if (m.precision < 3) m.day = high ? quire::detail::days_in_month(m.year, m.month) : 1;
    if (m.precision < 4) m.hour = high ? 23 : 0;
    if (m.precision < 5) m.minute = high ? 59 : 0;
    if (m.precision < 6) m.second = high ? 59 : 0;
    if (m.precision < 7) m.millis = high ? 999 : 0;
    if (!m.is_time && want >= 4 && !m.has_tz) {
      // Without a timezone the moment could be anywhere from +14:00 to -12:00.
      m.has_tz = true;
      m.tz_minutes = high ? -12 * 60 : 14 * 60;
    }
    m.precision = want;
    item r;
    r.kind = v.kind;
    r.text = keep(moment_text(m));
    out.push_back(r);
    return true;
  }
  return type_error(nd.pos, nd.name + "() needs a number, a quantity, a date or a time");
}

bool engine::fn_comparable(const node &nd, const frame &f, const collection &in, collection &out) {
  scratch a(s_);
  const item *o;
  if (!arg_single(nd, 0, f, *a, o)) return false;
  if (in.empty() || !o) return true;
  const item *v = single(in, nd.pos, "the input of comparable()");
  if (!v) return false;
  decimal x, y;
  std::string_view ux, uy;
  if (!quantity_of(*v, x, ux) || !quantity_of(*o, y, uy)) return type_error(nd.pos, "comparable() needs quantities");
  bool c1, c2;
  out.push_back(boolean_item(units_comparable(comparable_unit(ux, c1), comparable_unit(uy, c2))));
  return true;
}

// --- aggregates, sort ---

bool engine::fn_aggregate(const node &nd, const frame &f, const collection &in, collection &out) {
  scratch total(s_), next(s_);
  if (nd.arg_count > 1 && !arg(nd, 1, f, *total)) return false;
  for (size_t i = 0; i < in.size(); ++i) {
    frame g = per_item(in, i);
    g.total = &total.get();
    next->clear();
    if (!arg(nd, 0, g, *next)) return false;
    std::swap(*total, *next);
  }
  out.insert(out.end(), total->begin(), total->end());
  return true;
}

bool engine::fn_sort(const node &nd, const frame &, const collection &in, collection &out) {
  std::vector<size_t> order(in.size());
  for (size_t i = 0; i < order.size(); ++i) order[i] = i;
  // Keys per item and per argument; a leading unary minus sorts that key descending.
  size_t nk = nd.arg_count;
  std::vector<item> keys(in.size() * std::max<size_t>(nk, 1));
  std::vector<bool> has(keys.size(), false);
  std::vector<bool> desc(std::max<size_t>(nk, 1), false);
  for (size_t k = 0; k < nk; ++k) {
    uint32_t an = prog_.args[nd.first_arg + k];
    if (prog_.nodes[an].kind == op::negate) {
      desc[k] = true;
      an = prog_.nodes[an].a;
    }
    for (size_t i = 0; i < in.size(); ++i) {
      scratch r(s_);
      frame g = per_item(in, i);
      if (!eval(an, g, *r)) return false;
      if (r->size() > 1) return type_error(nd.pos, "a sort key must be a single item");
      if (r->size() == 1) {
        keys[i * nk + k] = (*r)[0];
        has[i * nk + k] = true;
      }
    }
  }
  if (nk == 0) {
    for (size_t i = 0; i < in.size(); ++i) {
      keys[i] = in[i];
      has[i] = true;
    }
    nk = 1;
  }
  bool bad = false;
  auto cmp_items = [&](const item &x, const item &y) -> int {
    if (is_number(x) && is_number(y)) return compare_decimal(x.dec, y.dec);
    if (x.kind == value_kind::string && y.kind == value_kind::string) return x.text < y.text ? -1 : x.text > y.text;
    if (is_moment(x) && is_moment(y)) {
      moment a, b;
      if (parse_date_time(x.text, x.kind, a) && parse_date_time(y.text, y.kind, b)) {
        int c = compare_moment(a, b);
        return c >= 2 ? 0 : c;
      }
    }
    if (x.kind == value_kind::boolean && y.kind == value_kind::boolean) return int(x.boolean) - int(y.boolean);
    bad = true;
    return 0;
  };
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) {
    for (size_t k = 0; k < nk; ++k) {
      bool ha = has[a * nk + k], hb = has[b * nk + k];
      if (!ha || !hb) {
        if (ha != hb) return desc[k] ? ha : hb;  // empty keys first
        continue;
      }
      int c = cmp_items(keys[a * nk + k], keys[b * nk + k]);
      if (c != 0) return desc[k] ? c > 0 : c < 0;
    }
    return false;
  });
  if (bad) return type_error(nd.pos, "sort() keys of types that cannot be ordered");
  for (size_t i : order) out.push_back(in[i]);
  return true;
}

}  // namespace quire::fhirpath
