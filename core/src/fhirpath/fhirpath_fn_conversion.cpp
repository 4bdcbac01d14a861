// Conversion (N1 "Conversion"): iif(), and toBoolean() ... toQuantity() with their convertsTo*()
// twins, which share one converter each: the twin says whether the conversion gives a value.
#include <algorithm>

#include "../common/decimal_text.h"
#include "fhirpath_engine.h"

namespace quire::fhirpath {

bool engine::fn_iif(const node &nd, const frame &f, const collection &in, collection &out) {
  if (in.size() > 1) return type_error(nd.pos, "iif() on " + std::to_string(in.size()) + " items");
  frame g = f;
  if (nd.a != NONE) {
    g.this_items = in.data();
    g.this_count = in.size();
  }
  scratch c(s_);
  if (!arg(nd, 0, g, *c)) return false;
  if (c->size() > 1) return type_error(nd.pos, "the criterion of iif() must be a single boolean");
  if (c->size() == 1 && (*c)[0].kind != value_kind::boolean)
    return type_error(nd.pos, "the criterion of iif() must be a boolean");
  bool yes = c->size() == 1 && (*c)[0].boolean;
  if (yes) return arg(nd, 1, g, out);
  if (nd.arg_count > 2) return arg(nd, 2, g, out);
  return true;
}

namespace {
bool parse_integer_text(std::string_view s, int64_t &out) {
  size_t i = 0;
  bool neg = false;
  if (i < s.size() && (s[i] == '+' || s[i] == '-')) neg = s[i++] == '-';
  if (i == s.size()) return false;
  int64_t v = 0;
  for (; i < s.size(); ++i) {
    if (s[i] < '0' || s[i] > '9') return false;
    if (__builtin_mul_overflow(v, 10, &v) || __builtin_add_overflow(v, s[i] - '0', &v)) return false;
  }
  out = neg ? -v : v;
  return true;
}
// toDecimal() and toQuantity() accept N1's decimal form: a sign, digits, a fraction, no exponent.
bool decimal_text_ok(std::string_view s) {
  quire::detail::decimal_text parts;
  return quire::detail::split_decimal_text(s, quire::detail::DECIMAL_PLUS, parts);
}

}  // namespace

bool engine::convert(const node &nd, const collection &in, collection &out, converter to) {
  if (in.empty()) return true;
  const item *vp = single(in, nd.pos, ("the input of " + nd.name + "()").c_str());
  if (!vp) return false;
  item r;
  bool converts = (this->*to)(nd, *vp, r);
  bool is_test = nd.function == fn::convertsToBoolean || nd.function == fn::convertsToInteger ||
                 nd.function == fn::convertsToDecimal || nd.function == fn::convertsToString ||
                 nd.function == fn::convertsToDate || nd.function == fn::convertsToDateTime ||
                 nd.function == fn::convertsToTime || nd.function == fn::convertsToQuantity;
  if (is_test) out.push_back(boolean_item(converts));
  else if (converts) {
    r.fhir_type = NO_FHIR_TYPE;  // a conversion gives a System value
    r.in_tape = false;
    r.has_companion = false;
    out.push_back(r);
  }
  return true;
}

bool engine::fn_to_boolean(const node &nd, const frame &, const collection &in, collection &out) {
  return convert(nd, in, out, &engine::to_boolean);
}
bool engine::to_boolean(const node &, const item &v, item &r) {
  bool converts = false;
  if (v.kind == value_kind::boolean) {
    r = boolean_item(v.boolean);
    converts = true;
  } else if (v.kind == value_kind::integer && (v.integer == 0 || v.integer == 1)) {
    r = boolean_item(v.integer == 1);
    converts = true;
  } else if (v.kind == value_kind::decimal &&
             (compare_decimal(v.dec, {0, 0}) == 0 || compare_decimal(v.dec, {1, 0}) == 0)) {
    r = boolean_item(compare_decimal(v.dec, {1, 0}) == 0);
    converts = true;
  } else if (v.kind == value_kind::string) {
    std::string l = normalize_space_lower(v.text);
    if (l == "true" || l == "t" || l == "yes" || l == "y" || l == "1" || l == "1.0") {
      r = boolean_item(true);
      converts = true;
    } else if (l == "false" || l == "f" || l == "no" || l == "n" || l == "0" || l == "0.0") {
      r = boolean_item(false);
      converts = true;
    }
  }
  return converts;
}

bool engine::fn_to_integer(const node &nd, const frame &, const collection &in, collection &out) {
  return convert(nd, in, out, &engine::to_integer);
}
bool engine::to_integer(const node &, const item &v, item &r) {
  bool converts = false;
  if (v.kind == value_kind::integer) {
    r = integer_item(v.integer);
    converts = true;
  } else if (v.kind == value_kind::boolean) {
    r = integer_item(v.boolean ? 1 : 0);
    converts = true;
  } else if (v.kind == value_kind::string) {
    int64_t i;
    if (parse_integer_text(v.text, i)) {
      r = integer_item(i);
      converts = true;
    }
  }
  return converts;
}

bool engine::fn_to_decimal(const node &nd, const frame &, const collection &in, collection &out) {
  return convert(nd, in, out, &engine::to_decimal);
}
bool engine::to_decimal(const node &, const item &v, item &r) {
  bool converts = false;
  if (is_number(v)) {
    r = decimal_item(v.dec);
    converts = true;
  } else if (v.kind == value_kind::boolean) {
    r = decimal_item(decimal{v.boolean ? 1 : 0, 0});
    converts = true;
  } else if (v.kind == value_kind::string && decimal_text_ok(v.text)) {
    decimal d;
    if (parse_decimal(v.text, d)) {
      r = decimal_item(d);
      converts = true;
    }
  }
  return converts;
}

bool engine::fn_to_string(const node &nd, const frame &, const collection &in, collection &out) {
  return convert(nd, in, out, &engine::to_string);
}
bool engine::to_string(const node &, const item &v, item &r) {
  bool converts = false;
  converts = true;
  switch (v.kind) {
    case value_kind::string: r = v; break;
    case value_kind::boolean: r = string_item(v.boolean ? "true" : "false"); break;
    case value_kind::integer: r = string_item(std::to_string(v.integer)); break;
    case value_kind::decimal:
      r = string_item(v.in_tape && v.node.type() == json::kind::number ? std::string(v.node.get_number_text().value())
                                                                       : decimal_text(v.dec));
      break;
    case value_kind::date:
    case value_kind::date_time:
    case value_kind::time: r = string_item(std::string(v.text)); break;
    case value_kind::quantity: r = string_item(quantity_text(v.dec, v.text)); break;
    default: converts = false; break;
  }
  return converts;
}

bool engine::fn_to_date_time(const node &nd, const frame &, const collection &in, collection &out) {
  return convert(nd, in, out, &engine::to_date_time);
}
bool engine::to_date_time(const node &nd, const item &v, item &r) {
  bool converts = false;
  value_kind want = (nd.function == fn::toDate || nd.function == fn::convertsToDate)   ? value_kind::date
                    : (nd.function == fn::toTime || nd.function == fn::convertsToTime) ? value_kind::time
                                                                                       : value_kind::date_time;
  if (v.kind == want) {
    r = v;
    converts = true;
  } else if (v.kind == value_kind::string || (want == value_kind::date_time && v.kind == value_kind::date) ||
             (want == value_kind::date && v.kind == value_kind::date_time)) {
    moment m;
    std::string_view text = v.text;
    value_kind parse_as = want;
    if (want == value_kind::date_time && text.find('T') == std::string_view::npos) parse_as = value_kind::date;
    if (want == value_kind::date && v.kind == value_kind::date_time) {
      if (parse_date_time(text, value_kind::date_time, m)) {
        m.precision = std::min<uint8_t>(m.precision, 3);
        m.has_tz = false;
        r.kind = want;
        r.text = keep(moment_text(m));
        converts = true;
      }
    } else if (parse_date_time(text, parse_as, m)) {
      r.kind = want;
      r.text = v.in_tape ? text : keep(std::string(text));
      converts = true;
    }
  }
  return converts;
}

bool engine::fn_to_quantity(const node &nd, const frame &, const collection &in, collection &out) {
  return convert(nd, in, out, &engine::to_quantity);
}
bool engine::to_quantity(const node &, const item &v, item &r) {
  bool converts = false;
  if (v.kind == value_kind::quantity) {
    r = v;
    converts = true;
  } else if (is_number(v)) {
    r = quantity_item(v.dec, "1");
    converts = true;
  } else if (v.kind == value_kind::boolean) {
    r = quantity_item(decimal{v.boolean ? 1 : 0, 0}, "1");
    converts = true;
  } else if (is_quantity_like(v)) {
    decimal d;
    std::string_view u;
    if (quantity_of(v, d, u)) {
      r = quantity_item(d, u);
      converts = true;
    }
  } else if (v.kind == value_kind::string) {
    std::string_view s = v.text;
    size_t sp = s.find(' ');
    std::string_view num = s.substr(0, sp),
                     unit = sp == std::string_view::npos ? std::string_view("1") : s.substr(sp + 1);
    while (!unit.empty() && unit.front() == ' ') unit.remove_prefix(1);
    decimal d;
    bool unit_ok = true;
    std::string u(unit);
    if (sp != std::string_view::npos) {
      if (unit.size() >= 2 && unit.front() == '\'' && unit.back() == '\'')
        u = std::string(unit.substr(1, unit.size() - 2));
      else if (!calendar_unit(unit).empty()) u = std::string(unit);
      else unit_ok = false;
    }
    if (unit_ok && decimal_text_ok(num) && parse_decimal(num, d)) {
      r = quantity_item(d, u);
      converts = true;
    }
  }
  return converts;
}

}  // namespace quire::fhirpath
