// Equality and equivalence (N1 "Equality": = != ~ !~) and the comparison of values (< > <= >=):
// numbers as exact decimals, strings, partial dates and times, quantities with their units
// converted, and elements (the same JSON).
#include <algorithm>

#include "fhirpath_engine.h"

namespace quire::fhirpath {

// --- quantities ---

// A quantity from a System quantity or a FHIR Quantity element.
bool quantity_of(const item &v, decimal &value, std::string_view &unit) {
  if (v.kind == value_kind::quantity) {
    value = v.dec;
    unit = v.text;
    return true;
  }
  if (v.kind != value_kind::element || !v.in_tape || v.node.type() != json::kind::object) return false;
  auto o = v.node.get_object().value();
  auto val = o.find("value");
  if (!val || val->type() != json::kind::number) return false;
  if (!parse_decimal(val->get_number_text().value(), value)) return false;
  auto code = o.find("code");
  auto sys = o.find("system");
  auto u = o.find("unit");
  unit = {};
  if (code && code->type() == json::kind::string &&
      (!sys || (sys->type() == json::kind::string && sys->get_string().value() == "http://unitsofmeasure.org")))
    unit = code->get_string().value();
  else if (u && u->type() == json::kind::string) unit = u->get_string().value();
  else if (code && code->type() == json::kind::string) unit = code->get_string().value();
  return true;
}
bool is_quantity_like(const item &v) {
  if (v.kind == value_kind::quantity) return true;
  if (v.kind != value_kind::element || v.fhir_type == NO_FHIR_TYPE) return false;
  static const type_spec q = [] {
    type_spec t;
    resolve_type("FHIR", "Quantity", t);
    return t;
  }();
  return fhir_is_a(v.fhir_type, q);
}

// Units in one spelling for comparison: calendar words with an exact UCUM twin become that code.
std::string_view comparable_unit(std::string_view u, bool &calendar_year_month) {
  std::string_view c = calendar_unit(u);
  calendar_year_month = c == "year" || c == "month";
  if (!c.empty()) {
    std::string_view uc = ucum_for_calendar(c);
    return uc.empty() ? c : uc;
  }
  return u;
}

// Compares two quantities: -1/0/1, or 2 when not comparable.
int compare_quantities(decimal av, std::string_view au, decimal bv, std::string_view bu) {
  bool ya, yb;
  std::string_view ua = comparable_unit(au, ya), ub = comparable_unit(bu, yb);
  if (ya || yb) {
    if (calendar_unit(au) != calendar_unit(bu)) return 2;  // `1 year` vs 1 'a': not comparable
    return compare_decimal(av, bv);
  }
  if (ua == ub) return compare_decimal(av, bv);
  decimal conv;
  if (convert_units(bv, ub, ua, conv)) return compare_decimal(av, conv);
  return 2;
}

namespace {

bool same_json(const json::value &a, const json::value &b) {
  if (a.type() != b.type()) return false;
  switch (a.type()) {
    case json::kind::null_value: return true;
    case json::kind::boolean: return a.get_bool().value() == b.get_bool().value();
    case json::kind::string: return a.get_string().value() == b.get_string().value();
    case json::kind::number: {
      decimal x, y;
      if (!parse_decimal(a.get_number_text().value(), x) || !parse_decimal(b.get_number_text().value(), y))
        return a.get_number_text().value() == b.get_number_text().value();
      return compare_decimal(x, y) == 0;
    }
    case json::kind::array: {
      auto x = a.get_array().value(), y = b.get_array().value();
      if (x.size() != y.size()) return false;
      auto i = x.begin(), j = y.begin();
      for (; i != x.end(); ++i, ++j)
        if (!same_json(*i, *j)) return false;
      return true;
    }
    case json::kind::object: {
      auto x = a.get_object().value(), y = b.get_object().value();
      if (x.size() != y.size()) return false;
      for (json::member m : x) {
        auto o = y.find(m.key);
        if (!o || !same_json(m.val, *o)) return false;
      }
      return true;
    }
  }
  return false;
}

}  // namespace

std::string normalize_space_lower(std::string_view s) {
  std::string out;
  bool space = false;
  for (char c : s) {
    if (c == ' ' || c == '\t' || c == '\n' || c == '\r') {
      space = true;
      continue;
    }
    if (space && !out.empty()) out += ' ';
    space = false;
    out += (c >= 'A' && c <= 'Z') ? static_cast<char>(c - 'A' + 'a') : c;
  }
  return out;
}

// --- equality and equivalence ---

// = on two items: 1 true, 0 false, -1 empty.
int engine::equal_items(const item &a, const item &b) {
  if (is_number(a) && is_number(b)) return compare_decimal(a.dec, b.dec) == 0;
  if (a.kind == value_kind::string && b.kind == value_kind::string) return a.text == b.text;
  if (a.kind == value_kind::boolean && b.kind == value_kind::boolean) return a.boolean == b.boolean;
  if (is_moment(a) && is_moment(b)) {
    moment x, y;
    if (!parse_date_time(a.text, a.kind, x) || !parse_date_time(b.text, b.kind, y)) return a.text == b.text;
    int c = compare_moment(x, y);
    return c == 2 ? -1 : c == 0;
  }
  if (a.kind == value_kind::type_info && b.kind == value_kind::type_info) return a.text == b.text && a.text2 == b.text2;
  if ((a.kind == value_kind::quantity || b.kind == value_kind::quantity) && is_quantity_like(a) &&
      is_quantity_like(b)) {
    decimal av, bv;
    std::string_view au, bu;
    if (!quantity_of(a, av, au) || !quantity_of(b, bv, bu)) return 0;
    int c = compare_quantities(av, au, bv, bu);
    return c == 2 ? -1 : c == 0;
  }
  if (a.kind == value_kind::element && b.kind == value_kind::element) {
    if (a.in_tape && b.in_tape) return same_json(a.node, b.node);
    if (a.has_companion && b.has_companion) return same_json(a.companion, b.companion);
    return 0;
  }
  return 0;
}

bool engine::equivalent_items(const item &a, const item &b) {
  if (is_number(a) && is_number(b)) {
    decimal x = a.dec, y = b.dec;
    int32_t s = std::min(x.scale, y.scale);
    rescale(x, s);
    rescale(y, s);
    return compare_decimal(x, y) == 0;
  }
  if (a.kind == value_kind::string && b.kind == value_kind::string)
    return normalize_space_lower(a.text) == normalize_space_lower(b.text);
  if (is_moment(a) && is_moment(b)) {
    moment x, y;
    if (!parse_date_time(a.text, a.kind, x) || !parse_date_time(b.text, b.kind, y)) return false;
    return compare_moment(x, y) == 0;
  }
  if ((a.kind == value_kind::quantity || b.kind == value_kind::quantity) && is_quantity_like(a) &&
      is_quantity_like(b)) {
    decimal av, bv;
    std::string_view au, bu;
    if (!quantity_of(a, av, au) || !quantity_of(b, bv, bu)) return false;
    bool ya, yb;
    std::string_view ua = comparable_unit(au, ya), ub = comparable_unit(bu, yb);
    if (ya || yb) {
      // N1: calendar years and months are equivalent to the UCUM 'a' and 'mo'.
      std::string_view ca = calendar_unit(au), cb = calendar_unit(bu);
      std::string_view na = ca == "year"    ? "a"
                            : ca == "month" ? "mo"
                                            : ua,
                       nb = cb == "year"    ? "a"
                            : cb == "month" ? "mo"
                                            : ub;
      if (na != nb) return false;
      return compare_decimal(av, bv) == 0;
    }
    decimal conv;
    if (ua != ub && !convert_units(bv, ub, ua, conv)) return false;
    if (ua == ub) conv = bv;
    int32_t s = std::min(av.scale, conv.scale);
    rescale(av, s);
    rescale(conv, s);
    return compare_decimal(av, conv) == 0;
  }
  int e = equal_items(a, b);
  return e == 1;
}

// --- comparison ---

bool engine::compare(const node &nd, const item &x, const item &y, collection &out) {
  int c;
  if (is_number(x) && is_number(y)) {
    c = compare_decimal(x.dec, y.dec);
  } else if (x.kind == value_kind::string && y.kind == value_kind::string) {
    c = x.text < y.text ? -1 : x.text > y.text ? 1 : 0;
  } else if (is_moment(x) && is_moment(y)) {
    moment m1, m2;
    if (!parse_date_time(x.text, x.kind, m1) || !parse_date_time(y.text, y.kind, m2))
      return type_error(nd.pos, "cannot compare these dates");
    c = compare_moment(m1, m2);
    if (c == 3) return type_error(nd.pos, "cannot compare a time of day with a date");
    if (c == 2) return true;
  } else if (is_quantity_like(x) && is_quantity_like(y)) {
    decimal av, bv;
    std::string_view au, bu;
    if (!quantity_of(x, av, au) || !quantity_of(y, bv, bu)) return true;
    c = compare_quantities(av, au, bv, bu);
    if (c == 2) return true;
  } else {
    return type_error(nd.pos, "cannot compare " + type_name(x) + " with " + type_name(y));
  }
  bool r = nd.kind == op::lt ? c < 0 : nd.kind == op::gt ? c > 0 : nd.kind == op::le ? c <= 0 : c >= 0;
  out.push_back(boolean_item(r));
  return true;
}

}  // namespace quire::fhirpath
