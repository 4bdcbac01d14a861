// Filters as text: the expression syntax of `quire query --where` (a recursive-descent parser with
// a depth bound), the JSON object form of the npm package, and the query object as JSON. The
// grammar is in docs/format.md.
#include <cctype>
#include <charconv>
#include <cmath>

#include "format_internal.h"

namespace quire::format {

using namespace detail;

namespace {

enum class tok : uint8_t { end, ident, quoted_ident, text, number, op, lparen, rparen, comma };

struct token {
  tok kind = tok::end;
  std::string text;
  size_t offset = 0;
};

bool keyword(const token &t, std::string_view kw) {
  if (t.kind != tok::ident || t.text.size() != kw.size()) return false;
  for (size_t i = 0; i < kw.size(); ++i) {
    if (std::tolower(static_cast<unsigned char>(t.text[i])) != kw[i]) return false;
  }
  return true;
}

class expr_parser {
 public:
  expr_parser(std::string_view s, size_t max_depth) : s_(s), max_depth_(max_depth) {}

  result<filter> parse() {
    auto t = advance();
    if (!t) return std::move(t).error();
    if (cur_.kind == tok::end) return error_at("the expression is empty");
    auto f = parse_or(0);
    if (!f) return f;
    if (cur_.kind != tok::end) return error_at("unexpected '" + cur_.text + "'");
    return f;
  }

 private:
  quire::error error_at(std::string message) const {
    return quire::error(error_code::INVALID_QUERY, std::move(message), cur_.offset);
  }

  result<void> advance() {
    size_t i = pos_;
    while (i < s_.size() && std::isspace(static_cast<unsigned char>(s_[i]))) ++i;
    cur_ = token();
    cur_.offset = i;
    if (i >= s_.size()) {
      pos_ = i;
      return {};
    }
    char c = s_[i];
    if (std::isalpha(static_cast<unsigned char>(c)) || c == '_') {
      size_t j = i;
      while (j < s_.size() && (std::isalnum(static_cast<unsigned char>(s_[j])) || s_[j] == '_' || s_[j] == '.')) ++j;
      cur_.kind = tok::ident;
      cur_.text = std::string(s_.substr(i, j - i));
      pos_ = j;
      return {};
    }
    if (c == '\'' || c == '"') {
      std::string out;
      size_t j = i + 1;
      while (true) {
        if (j >= s_.size())
          return quire::error(error_code::INVALID_QUERY,
                              std::string("a ") + (c == '\'' ? "string" : "quoted name") + " has no closing quote", i);
        if (s_[j] == c) {
          if (j + 1 < s_.size() && s_[j + 1] == c) {
            out.push_back(c);
            j += 2;
            continue;
          }
          break;
        }
        out.push_back(s_[j++]);
      }
      cur_.kind = c == '\'' ? tok::text : tok::quoted_ident;
      cur_.text = std::move(out);
      pos_ = j + 1;
      return {};
    }
    if (std::isdigit(static_cast<unsigned char>(c)) ||
        ((c == '-' || c == '+') && i + 1 < s_.size() &&
         (std::isdigit(static_cast<unsigned char>(s_[i + 1])) || s_[i + 1] == '.')) ||
        c == '.') {
      size_t j = i + 1;
      while (j < s_.size() && (std::isalnum(static_cast<unsigned char>(s_[j])) || s_[j] == '.' ||
                               ((s_[j] == '-' || s_[j] == '+') && (s_[j - 1] == 'e' || s_[j - 1] == 'E')))) {
        ++j;
      }
      cur_.kind = tok::number;
      cur_.text = std::string(s_.substr(i, j - i));
      pos_ = j;
      return {};
    }
    static constexpr std::string_view OPS[] = {"==", "!=", "<>", "<=", ">=", "=", "<", ">"};
    for (auto op : OPS) {
      if (s_.substr(i, op.size()) == op) {
        cur_.kind = tok::op;
        cur_.text = std::string(op);
        pos_ = i + op.size();
        return {};
      }
    }
    if (c == '(' || c == ')' || c == ',') {
      cur_.kind = c == '(' ? tok::lparen : c == ')' ? tok::rparen : tok::comma;
      cur_.text = std::string(1, c);
      pos_ = i + 1;
      return {};
    }
    return quire::error(error_code::INVALID_QUERY, "unexpected character '" + std::string(1, c) + "'", i);
  }

  result<filter> parse_or(size_t depth) {
    auto left = parse_and(depth);
    if (!left) return left;
    if (!keyword(cur_, "or")) return left;
    filter f;
    f.o = filter::op::or_;
    f.children.push_back(std::move(left).value());
    while (keyword(cur_, "or")) {
      auto a = advance();
      if (!a) return std::move(a).error();
      auto right = parse_and(depth);
      if (!right) return right;
      f.children.push_back(std::move(right).value());
    }
    return f;
  }

  result<filter> parse_and(size_t depth) {
    auto left = parse_unary(depth);
    if (!left) return left;
    if (!keyword(cur_, "and")) return left;
    filter f;
    f.o = filter::op::and_;
    f.children.push_back(std::move(left).value());
    while (keyword(cur_, "and")) {
      auto a = advance();
      if (!a) return std::move(a).error();
      auto right = parse_unary(depth);
      if (!right) return right;
      f.children.push_back(std::move(right).value());
    }
    return f;
  }

  result<filter> parse_unary(size_t depth) {
    if (depth >= max_depth_)
      return quire::error(error_code::MAX_DEPTH_EXCEEDED,
                          "the expression is nested deeper than " + std::to_string(max_depth_), cur_.offset);
    if (keyword(cur_, "not")) {
      auto a = advance();
      if (!a) return std::move(a).error();
      auto inner = parse_unary(depth + 1);
      if (!inner) return inner;
      filter f;
      f.o = filter::op::not_;
      f.children.push_back(std::move(inner).value());
      return f;
    }
    if (cur_.kind == tok::lparen) {
      auto a = advance();
      if (!a) return std::move(a).error();
      auto inner = parse_or(depth + 1);
      if (!inner) return inner;
      if (cur_.kind != tok::rparen) return error_at("expected ')'");
      auto b = advance();
      if (!b) return std::move(b).error();
      return inner;
    }
    return parse_comparison();
  }

  result<value> parse_literal() {
    value v;
    if (cur_.kind == tok::text) {
      v = value::text(cur_.text);
    } else if (cur_.kind == tok::number) {
      switch (classify_number(cur_.text[0] == '+' ? cur_.text.substr(1) : cur_.text)) {
        case number_class::integer: {
          int64_t i = 0;
          std::string_view t =
              cur_.text[0] == '+' ? std::string_view(cur_.text).substr(1) : std::string_view(cur_.text);
          std::from_chars(t.data(), t.data() + t.size(), i);
          v = value::of(i);
          break;
        }
        case number_class::real:
        case number_class::decimal: v = value::of(parse_double(cur_.text)); break;
        case number_class::not_a_number: return error_at("'" + cur_.text + "' is not a number");
      }
    } else if (keyword(cur_, "true") || keyword(cur_, "false")) {
      v = value::of(keyword(cur_, "true"));
    } else if (keyword(cur_, "null")) {
      v = value::null();
    } else {
      return error_at(cur_.kind == tok::end ? "expected a value at the end"
                                            : "expected a value, found '" + cur_.text + "'");
    }
    auto a = advance();
    if (!a) return std::move(a).error();
    return v;
  }

  result<filter> parse_comparison() {
    if (cur_.kind != tok::ident && cur_.kind != tok::quoted_ident) {
      return error_at(cur_.kind == tok::end ? "expected a column name at the end"
                                            : "expected a column name, found '" + cur_.text + "'");
    }
    filter f;
    f.column = cur_.text;
    auto a = advance();
    if (!a) return std::move(a).error();
    auto take = [&]() -> result<void> {
      auto v = parse_literal();
      if (!v) return std::move(v).error();
      f.values.push_back(std::move(v).value());
      return {};
    };
    bool negated_in = false;
    if (cur_.kind == tok::op) {
      const std::string op = cur_.text;
      f.o = op == "=" || op == "=="    ? filter::op::eq
            : op == "!=" || op == "<>" ? filter::op::ne
            : op == "<"                ? filter::op::lt
            : op == "<="               ? filter::op::le
            : op == ">"                ? filter::op::gt
                                       : filter::op::ge;
      auto b = advance();
      if (!b) return std::move(b).error();
      auto t = take();
      if (!t) return std::move(t).error();
      return f;
    }
    if (keyword(cur_, "is")) {
      auto b = advance();
      if (!b) return std::move(b).error();
      bool neg = false;
      if (keyword(cur_, "not")) {
        neg = true;
        auto c = advance();
        if (!c) return std::move(c).error();
      }
      if (!keyword(cur_, "null")) return error_at("expected null after is");
      auto c = advance();
      if (!c) return std::move(c).error();
      f.o = neg ? filter::op::is_not_null : filter::op::is_null;
      return f;
    }
    if (keyword(cur_, "contains") || keyword(cur_, "startswith") || keyword(cur_, "starts_with")) {
      f.o = keyword(cur_, "contains") ? filter::op::contains : filter::op::starts_with;
      auto b = advance();
      if (!b) return std::move(b).error();
      if (cur_.kind != tok::text) return error_at("contains and startsWith take a 'string'");
      auto t = take();
      if (!t) return std::move(t).error();
      return f;
    }
    if (keyword(cur_, "between")) {
      f.o = filter::op::between;
      auto b = advance();
      if (!b) return std::move(b).error();
      auto t = take();
      if (!t) return std::move(t).error();
      if (!keyword(cur_, "and")) return error_at("expected 'and' in between");
      auto c = advance();
      if (!c) return std::move(c).error();
      t = take();
      if (!t) return std::move(t).error();
      return f;
    }
    if (keyword(cur_, "not")) {
      negated_in = true;
      auto b = advance();
      if (!b) return std::move(b).error();
      if (!keyword(cur_, "in")) return error_at("expected 'in' after not");
    }
    if (keyword(cur_, "in")) {
      f.o = filter::op::in;
      auto b = advance();
      if (!b) return std::move(b).error();
      if (cur_.kind != tok::lparen) return error_at("expected '(' after in");
      auto c = advance();
      if (!c) return std::move(c).error();
      while (true) {
        if (f.values.size() >= 65536) return error_at("an in list longer than 65536 values");
        auto t = take();
        if (!t) return std::move(t).error();
        if (cur_.kind == tok::comma) {
          auto d = advance();
          if (!d) return std::move(d).error();
          continue;
        }
        if (cur_.kind != tok::rparen) return error_at("expected ',' or ')' in the in list");
        auto d = advance();
        if (!d) return std::move(d).error();
        break;
      }
      if (!negated_in) return f;
      filter n;
      n.o = filter::op::not_;
      n.children.push_back(std::move(f));
      return n;
    }
    return error_at(cur_.kind == tok::end ? "expected an operator after '" + f.column + "'"
                                          : "expected an operator, found '" + cur_.text + "'");
  }

  std::string_view s_;
  size_t max_depth_;
  size_t pos_ = 0;
  token cur_;
};

// --- JSON forms ---------------------------------------------------------------------------------------

result<value> json_value(const json::value &v) {
  switch (v.type()) {
    case json::kind::null_value: return value::null();
    case json::kind::boolean: return value::of(v.get_bool().value());
    case json::kind::string: return value::text(std::string(v.get_string().value()));
    case json::kind::number: {
      auto i = v.get_int64();
      if (i) return value::of(*i);
      return value::of(v.get_double().value());
    }
    default:
      return quire::error(error_code::INVALID_QUERY, "a filter value must be null, a boolean, a number or a string",
                          v.offset());
  }
}

result<filter> json_filter(const json::value &v, size_t depth, size_t max_depth);

result<filter> json_condition(std::string_view column, const json::value &v, size_t depth, size_t max_depth) {
  filter f;
  f.column = std::string(column);
  if (v.type() != json::kind::object) {
    auto x = json_value(v);
    if (!x) return std::move(x).error();
    if (x->k == value::kind::null_value) {
      f.o = filter::op::is_null;
      return f;
    }
    f.o = filter::op::eq;
    f.values.push_back(std::move(x).value());
    return f;
  }
  filter all;
  all.o = filter::op::and_;
  for (auto m : v.get_object().value()) {
    filter c;
    c.column = f.column;
    std::string_view op = m.key;
    if (op == "=" || op == "eq") c.o = filter::op::eq;
    else if (op == "!=" || op == "ne") c.o = filter::op::ne;
    else if (op == "<" || op == "lt") c.o = filter::op::lt;
    else if (op == "<=" || op == "le" || op == "lte") c.o = filter::op::le;
    else if (op == ">" || op == "gt") c.o = filter::op::gt;
    else if (op == ">=" || op == "ge" || op == "gte") c.o = filter::op::ge;
    else if (op == "in") c.o = filter::op::in;
    else if (op == "between") c.o = filter::op::between;
    else if (op == "contains") c.o = filter::op::contains;
    else if (op == "startsWith" || op == "starts_with") c.o = filter::op::starts_with;
    else if (op == "isNull" || op == "is_null") {
      auto b = m.val.get_bool();
      if (!b) return quire::error(error_code::INVALID_QUERY, "isNull takes true or false", m.val.offset());
      c.o = *b ? filter::op::is_null : filter::op::is_not_null;
      all.children.push_back(std::move(c));
      continue;
    } else {
      return quire::error(error_code::INVALID_QUERY, "unknown operator '" + std::string(op) + "'", m.val.offset());
    }
    if (c.o == filter::op::in || c.o == filter::op::between) {
      auto arr = m.val.get_array();
      if (!arr) return quire::error(error_code::INVALID_QUERY, std::string(op) + " takes an array", m.val.offset());
      for (auto e : arr.value()) {
        auto x = json_value(e);
        if (!x) return std::move(x).error();
        c.values.push_back(std::move(x).value());
      }
      if (c.o == filter::op::between && c.values.size() != 2)
        return quire::error(error_code::INVALID_QUERY, "between takes [low, high]", m.val.offset());
    } else {
      auto x = json_value(m.val);
      if (!x) return std::move(x).error();
      c.values.push_back(std::move(x).value());
    }
    all.children.push_back(std::move(c));
  }
  (void)depth;
  (void)max_depth;
  if (all.children.size() == 1) return std::move(all.children[0]);
  if (all.children.empty())
    return quire::error(error_code::INVALID_QUERY, "an empty condition on '" + f.column + "'", v.offset());
  return all;
}

result<filter> json_filter(const json::value &v, size_t depth, size_t max_depth) {
  if (depth >= max_depth)
    return quire::error(error_code::MAX_DEPTH_EXCEEDED, "the filter is nested deeper than " + std::to_string(max_depth),
                        v.offset());
  auto obj = v.get_object();
  if (!obj) return quire::error(error_code::INVALID_QUERY, "a filter must be a JSON object", v.offset());
  filter all;
  all.o = filter::op::and_;
  for (auto m : obj.value()) {
    if (m.key == "and" || m.key == "or") {
      auto arr = m.val.get_array();
      if (!arr)
        return quire::error(error_code::INVALID_QUERY, std::string(m.key) + " takes an array of filters",
                            m.val.offset());
      filter g;
      g.o = m.key == "and" ? filter::op::and_ : filter::op::or_;
      for (auto e : arr.value()) {
        auto c = json_filter(e, depth + 1, max_depth);
        if (!c) return c;
        g.children.push_back(std::move(c).value());
      }
      all.children.push_back(std::move(g));
    } else if (m.key == "not") {
      auto c = json_filter(m.val, depth + 1, max_depth);
      if (!c) return c;
      filter g;
      g.o = filter::op::not_;
      g.children.push_back(std::move(c).value());
      all.children.push_back(std::move(g));
    } else {
      auto c = json_condition(m.key, m.val, depth + 1, max_depth);
      if (!c) return c;
      all.children.push_back(std::move(c).value());
    }
  }
  if (all.children.size() == 1) return std::move(all.children[0]);
  return all;
}

quire::error as_query_error(quire::error e) {
  if (e.code != error_code::MAX_DEPTH_EXCEEDED && e.code != error_code::INVALID_QUERY) {
    e.message = "the filter is not valid JSON: " + e.message;
    e.code = error_code::INVALID_QUERY;
  }
  return e;
}

void append_literal(std::string &o, const value &v) {
  switch (v.k) {
    case value::kind::null_value: o += "null"; break;
    case value::kind::integer: o += std::to_string(v.i); break;
    case value::kind::real: append_double(o, v.d); break;
    case value::kind::boolean: o += v.b ? "true" : "false"; break;
    case value::kind::text:
      o.push_back('\'');
      for (char c : v.s) {
        if (c == '\'') o.push_back('\'');
        o.push_back(c);
      }
      o.push_back('\'');
      break;
  }
}

void append_column(std::string &o, const std::string &name) {
  bool plain = !name.empty() && (std::isalpha(static_cast<unsigned char>(name[0])) || name[0] == '_');
  for (char c : name) plain = plain && (std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '.');
  static constexpr std::string_view WORDS[] = {"and",  "or",   "not",   "in",       "between",    "is",
                                               "null", "true", "false", "contains", "startswith", "starts_with"};
  std::string lower;
  for (char c : name) lower.push_back(static_cast<char>(std::tolower(static_cast<unsigned char>(c))));
  for (auto w : WORDS) plain = plain && lower != w;
  if (plain) {
    o += name;
    return;
  }
  o.push_back('"');
  for (char c : name) {
    if (c == '"') o.push_back('"');
    o.push_back(c);
  }
  o.push_back('"');
}

void append_expression(std::string &o, const filter &f, bool nested) {
  switch (f.o) {
    case filter::op::and_:
    case filter::op::or_: {
      if (nested) o.push_back('(');
      for (size_t i = 0; i < f.children.size(); ++i) {
        if (i) o += f.o == filter::op::and_ ? " and " : " or ";
        append_expression(o, f.children[i], true);
      }
      if (nested) o.push_back(')');
      return;
    }
    case filter::op::not_:
      o += "not ";
      if (!f.children.empty()) append_expression(o, f.children[0], true);
      return;
    default: break;
  }
  append_column(o, f.column);
  auto one = [&](std::string_view op) {
    o += op;
    if (!f.values.empty()) append_literal(o, f.values[0]);
  };
  switch (f.o) {
    case filter::op::eq: one(" = "); break;
    case filter::op::ne: one(" != "); break;
    case filter::op::lt: one(" < "); break;
    case filter::op::le: one(" <= "); break;
    case filter::op::gt: one(" > "); break;
    case filter::op::ge: one(" >= "); break;
    case filter::op::contains: one(" contains "); break;
    case filter::op::starts_with: one(" startsWith "); break;
    case filter::op::is_null: o += " is null"; break;
    case filter::op::is_not_null: o += " is not null"; break;
    case filter::op::between:
      o += " between ";
      if (f.values.size() == 2) {
        append_literal(o, f.values[0]);
        o += " and ";
        append_literal(o, f.values[1]);
      }
      break;
    case filter::op::in:
      o += " in (";
      for (size_t i = 0; i < f.values.size(); ++i) {
        if (i) o += ", ";
        append_literal(o, f.values[i]);
      }
      o += ")";
      break;
    default: break;
  }
}

}  // namespace

result<filter> parse_expression(std::string_view text, size_t max_depth) {
  return expr_parser(text, max_depth).parse();
}

result<filter> parse_filter_json(std::string_view json_text, size_t max_depth) {
  json::limits lim;
  lim.max_depth = std::max<size_t>(max_depth * 2 + 4, 8);
  auto doc = json::parse(json_text, lim);
  if (!doc) return as_query_error(std::move(doc).error());
  return json_filter(doc->root(), 0, max_depth);
}

result<query> parse_query_json(std::string_view json_text) {
  json::limits lim;
  lim.max_depth = DEFAULT_MAX_EXPRESSION_DEPTH * 2 + 8;
  auto doc = json::parse(json_text, lim);
  if (!doc) return as_query_error(std::move(doc).error());
  auto obj = doc->root().get_object();
  if (!obj) return quire::error(error_code::INVALID_QUERY, "a query must be a JSON object", 0);
  query q;
  for (auto m : obj.value()) {
    if (m.key == "where") {
      if (m.val.type() == json::kind::null_value) continue;
      if (m.val.type() == json::kind::string) {
        auto f = parse_expression(m.val.get_string().value());
        if (!f) return std::move(f).error();
        q.where = std::move(f).value();
      } else {
        auto f = json_filter(m.val, 0, DEFAULT_MAX_EXPRESSION_DEPTH);
        if (!f) return std::move(f).error();
        q.where = std::move(f).value();
      }
    } else if (m.key == "columns") {
      if (m.val.type() == json::kind::null_value) continue;
      auto arr = m.val.get_array();
      if (!arr) return quire::error(error_code::INVALID_QUERY, "columns takes an array of names", m.val.offset());
      for (auto e : arr.value()) {
        auto s = e.get_string();
        if (!s) return quire::error(error_code::INVALID_QUERY, "columns takes an array of names", e.offset());
        q.columns.emplace_back(*s);
      }
    } else if (m.key == "orderBy" || m.key == "order_by") {
      if (m.val.type() == json::kind::null_value) continue;
      auto s = m.val.get_string();
      if (!s) return quire::error(error_code::INVALID_QUERY, "orderBy takes a column name", m.val.offset());
      q.order_by = std::string(*s);
    } else if (m.key == "descending") {
      auto b = m.val.get_bool();
      if (!b) return quire::error(error_code::INVALID_QUERY, "descending takes true or false", m.val.offset());
      q.descending = *b;
    } else if (m.key == "offset" || m.key == "limit") {
      if (m.val.type() == json::kind::null_value) continue;
      auto d = m.val.get_double();
      if (!d || *d < 0 || std::floor(*d) != *d)
        return quire::error(error_code::INVALID_QUERY, std::string(m.key) + " takes a whole number", m.val.offset());
      uint64_t n = *d >= 1.8e19 ? UINT64_MAX : static_cast<uint64_t>(*d);
      (m.key == "offset" ? q.offset : q.limit) = n;
    } else {
      return quire::error(error_code::INVALID_QUERY, "unknown query field '" + std::string(m.key) + "'",
                          m.val.offset());
    }
  }
  return q;
}

std::string filter_to_expression(const filter &f) {
  std::string o;
  append_expression(o, f, false);
  return o;
}

}  // namespace quire::format
