// The lexer and parser: FHIRPath text to the compiled node array, once per expression.
//
// Precedence climbing over the N1 grammar's operator table, so the recursion depth follows the
// nesting of the text (parentheses, arguments, unary signs), not the number of operators; and
// the depth of the produced tree is checked against limits::max_depth as nodes are made, so that
// a left-leaning chain (`1+1+1+...`, `a.b.c...`) cannot make evaluation recurse without bound.
#include <atomic>
#include <cstring>

#include "fhirpath_internal.h"
#include "fhirpath_regex.h"

namespace quire::fhirpath {
namespace {

enum class tok : uint8_t {
  end,
  identifier,
  delimited_identifier,
  string,
  number,
  date_time,
  time,
  variable,
  this_var,
  index_var,
  total_var,
  dot,
  lbracket,
  rbracket,
  lparen,
  rparen,
  lbrace,
  rbrace,
  comma,
  symbol,  // an operator written in symbols (`+`, `<=`, `!~`...): its text says which
};

/// The binary operators of the N1 grammar, by how they are written, with their precedence (higher
/// binds tighter).
struct binary_operator {
  std::string_view text;
  op kind;
  int precedence;
};
constexpr binary_operator BINARY_OPERATORS[] = {
    {"*", op::mul, 10},     {"/", op::div, 10},      {"div", op::idiv, 10},  {"mod", op::mod, 10},
    {"+", op::add, 9},      {"-", op::sub, 9},       {"&", op::concat, 9},   {"is", op::is_type, 8},
    {"as", op::as_type, 8}, {"|", op::union_set, 7}, {"<", op::lt, 6},       {">", op::gt, 6},
    {"<=", op::le, 6},      {">=", op::ge, 6},       {"=", op::eq, 5},       {"!=", op::ne, 5},
    {"~", op::equiv, 5},    {"!~", op::nequiv, 5},   {"in", op::in_set, 4},  {"contains", op::contains_set, 4},
    {"and", op::and_op, 3}, {"or", op::or_op, 2},    {"xor", op::xor_op, 2}, {"implies", op::implies, 1},
};

struct token {
  tok kind = tok::end;
  uint32_t pos = 0;
  std::string_view text;   // identifier/number/date text (no @, no T for times); string raw body
  std::string value;       // unescaped string / delimited identifier / variable name
  bool date_only = false;  // date_time token without a time part
};

bool is_ident_start(char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_'; }
bool is_digit(char c) { return c >= '0' && c <= '9'; }
bool is_ident_char(char c) { return is_ident_start(c) || is_digit(c); }

class parser {
 public:
  parser(std::string_view text, const limits &lim, expression::program &prog) : s_(text), lim_(lim), prog_(prog) {}

  result<void> run() {
    if (!next()) return err_;
    if (cur_.kind == tok::end) return fail(error_code::INVALID_FHIRPATH, cur_.pos, "the expression is empty");
    uint32_t root = parse_expr(0);
    if (failed_) return err_;
    if (cur_.kind != tok::end) return fail(error_code::INVALID_FHIRPATH, cur_.pos, "unexpected " + describe(cur_));
    prog_.root = root;
    return {};
  }

 private:
  std::string_view s_;
  const limits &lim_;
  expression::program &prog_;
  size_t i_ = 0;
  token cur_;
  bool failed_ = false;
  quire::error err_;
  size_t nest_ = 0;
  std::vector<uint32_t> depth_;

  quire::error fail(error_code c, uint32_t pos, std::string msg) {
    if (!failed_) {
      failed_ = true;
      err_ = quire::error(c, std::move(msg), pos);
    }
    return err_;
  }

  static std::string describe(const token &t) {
    if (t.kind == tok::end) return "end of expression";
    std::string out;
    out.reserve(t.text.size() + 2);
    out += '\'';
    out.append(t.text.data(), t.text.size());
    out += '\'';
    return out;
  }

  // --- lexer ---
  bool skip_space_and_comments() {
    while (i_ < s_.size()) {
      char c = s_[i_];
      if (c == ' ' || c == '\t' || c == '\r' || c == '\n' || c == '\f') {
        ++i_;
      } else if (c == '/' && i_ + 1 < s_.size() && s_[i_ + 1] == '/') {
        while (i_ < s_.size() && s_[i_] != '\n') ++i_;
      } else if (c == '/' && i_ + 1 < s_.size() && s_[i_ + 1] == '*') {
        size_t start = i_;
        size_t close = s_.find("*/", i_ + 2);
        if (close == std::string_view::npos) {
          fail(error_code::INVALID_FHIRPATH, static_cast<uint32_t>(start), "a comment that is never closed");
          return false;
        }
        i_ = close + 2;
      } else {
        break;
      }
    }
    return true;
  }

  bool lex_escaped(char quote, token &t) {
    size_t start = i_;
    ++i_;
    std::string out;
    while (true) {
      if (i_ >= s_.size()) {
        fail(error_code::INVALID_FHIRPATH, static_cast<uint32_t>(start), "a string or identifier that is never closed");
        return false;
      }
      char c = s_[i_];
      if (c == quote) {
        ++i_;
        break;
      }
      if (c == '\\') {
        if (i_ + 1 >= s_.size()) {
          fail(error_code::INVALID_FHIRPATH, static_cast<uint32_t>(start),
               "a string or identifier that is never closed");
          return false;
        }
        char e = s_[i_ + 1];
        i_ += 2;
        switch (e) {
          case '\'':
          case '"':
          case '`':
          case '\\':
          case '/': out += e; break;
          case 'f': out += '\f'; break;
          case 'n': out += '\n'; break;
          case 'r': out += '\r'; break;
          case 't': out += '\t'; break;
          case 'u': {
            if (i_ + 4 > s_.size()) {
              fail(error_code::INVALID_FHIRPATH, static_cast<uint32_t>(i_ - 2), "\\u needs four hex digits");
              return false;
            }
            uint32_t cp = 0;
            for (int k = 0; k < 4; ++k) {
              char h = s_[i_ + k];
              cp <<= 4;
              if (h >= '0' && h <= '9') cp |= h - '0';
              else if (h >= 'a' && h <= 'f') cp |= h - 'a' + 10;
              else if (h >= 'A' && h <= 'F') cp |= h - 'A' + 10;
              else {
                fail(error_code::INVALID_FHIRPATH, static_cast<uint32_t>(i_ - 2), "\\u needs four hex digits");
                return false;
              }
            }
            i_ += 4;
            if (cp < 0x80) out += static_cast<char>(cp);
            else if (cp < 0x800) {
              out += static_cast<char>(0xC0 | (cp >> 6));
              out += static_cast<char>(0x80 | (cp & 0x3F));
            } else {
              out += static_cast<char>(0xE0 | (cp >> 12));
              out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
              out += static_cast<char>(0x80 | (cp & 0x3F));
            }
            break;
          }
          default:
            fail(error_code::INVALID_FHIRPATH, static_cast<uint32_t>(i_ - 2), std::string("unknown escape \\") + e);
            return false;
        }
        continue;
      }
      out += c;
      ++i_;
    }
    t.text = s_.substr(start, i_ - start);
    t.value = std::move(out);
    return true;
  }

  size_t digits_at(size_t p, size_t n) const {
    size_t k = 0;
    while (k < n && p + k < s_.size() && is_digit(s_[p + k])) ++k;
    return k;
  }

  // hh(:mm(:ss(.fff)?)?)? at i_; returns false on a malformed time.
  bool lex_time_part() {
    if (digits_at(i_, 2) != 2) return false;
    i_ += 2;
    if (i_ < s_.size() && s_[i_] == ':' && digits_at(i_ + 1, 2) == 2) {
      i_ += 3;
      if (i_ < s_.size() && s_[i_] == ':' && digits_at(i_ + 1, 2) == 2) {
        i_ += 3;
        if (i_ + 1 < s_.size() && s_[i_] == '.' && is_digit(s_[i_ + 1])) {
          ++i_;
          while (i_ < s_.size() && is_digit(s_[i_])) ++i_;
        }
      }
    }
    return true;
  }

  bool lex_date(token &t) {
    size_t start = i_;  // at '@'
    ++i_;
    auto bad = [&](const char *why) {
      fail(error_code::INVALID_FHIRPATH, static_cast<uint32_t>(start), std::string("bad date/time literal: ") + why);
      return false;
    };
    if (i_ < s_.size() && s_[i_] == 'T') {
      ++i_;
      size_t body = i_;
      if (!lex_time_part()) return bad("a time needs hh, hh:mm or hh:mm:ss");
      if (i_ < s_.size() && (s_[i_] == 'Z' || ((s_[i_] == '+' || s_[i_] == '-') && digits_at(i_ + 1, 2) == 2 &&
                                               i_ + 3 < s_.size() && s_[i_ + 3] == ':')))
        return bad("a time has no timezone");
      t.kind = tok::time;
      t.text = s_.substr(body, i_ - body);
      return true;
    }
    size_t body = i_;
    if (digits_at(i_, 4) != 4) return bad("a date starts with a four-digit year");
    i_ += 4;
    t.date_only = true;
    if (i_ < s_.size() && s_[i_] == '-' && digits_at(i_ + 1, 2) == 2) {
      i_ += 3;
      if (i_ < s_.size() && s_[i_] == '-' && digits_at(i_ + 1, 2) == 2) i_ += 3;
    }
    if (i_ < s_.size() && s_[i_] == 'T') {
      ++i_;
      t.date_only = false;
      if (i_ < s_.size() && is_digit(s_[i_])) {
        if (!lex_time_part()) return bad("a time needs hh, hh:mm or hh:mm:ss");
        if (i_ < s_.size() && s_[i_] == 'Z') {
          ++i_;
        } else if (i_ < s_.size() && (s_[i_] == '+' || s_[i_] == '-') && digits_at(i_ + 1, 2) == 2 &&
                   i_ + 3 < s_.size() && s_[i_ + 3] == ':' && digits_at(i_ + 4, 2) == 2) {
          i_ += 6;
        }
      }
    }
    t.kind = tok::date_time;
    t.text = s_.substr(body, i_ - body);
    if (t.text.back() == 'T') t.text.remove_suffix(1);  // @2015T: a DateTime with year precision
    return true;
  }

  bool next() {
    token t;
    if (!skip_space_and_comments()) return false;
    t.pos = static_cast<uint32_t>(i_);
    if (i_ >= s_.size()) {
      t.kind = tok::end;
      cur_ = std::move(t);
      return true;
    }
    char c = s_[i_];
    auto single = [&](tok k, size_t n) {
      t.kind = k;
      t.text = s_.substr(i_, n);
      i_ += n;
    };
    if (is_ident_start(c)) {
      size_t st = i_;
      while (i_ < s_.size() && is_ident_char(s_[i_])) ++i_;
      t.kind = tok::identifier;
      t.text = s_.substr(st, i_ - st);
      t.value = std::string(t.text);
    } else if (is_digit(c)) {
      size_t st = i_;
      while (i_ < s_.size() && is_digit(s_[i_])) ++i_;
      if (i_ + 1 < s_.size() && s_[i_] == '.' && is_digit(s_[i_ + 1])) {
        ++i_;
        while (i_ < s_.size() && is_digit(s_[i_])) ++i_;
      }
      t.kind = tok::number;
      t.text = s_.substr(st, i_ - st);
      if (i_ < s_.size() && s_[i_] == 'L') ++i_;  // a Long literal: kept as an integer
    } else if (c == '\'') {
      t.kind = tok::string;
      if (!lex_escaped('\'', t)) return false;
    } else if (c == '`') {
      t.kind = tok::delimited_identifier;
      if (!lex_escaped('`', t)) return false;
    } else if (c == '@') {
      if (!lex_date(t)) return false;
    } else if (c == '%') {
      size_t st = i_;
      ++i_;
      if (i_ < s_.size() && s_[i_] == '`') {
        if (!lex_escaped('`', t)) return false;
      } else if (i_ < s_.size() && s_[i_] == '\'') {
        if (!lex_escaped('\'', t)) return false;
      } else if (i_ < s_.size() && is_ident_start(s_[i_])) {
        size_t b = i_;
        while (i_ < s_.size() && is_ident_char(s_[i_])) ++i_;
        t.value = std::string(s_.substr(b, i_ - b));
      } else {
        fail(error_code::INVALID_FHIRPATH, t.pos, "% must be followed by a variable name");
        return false;
      }
      t.kind = tok::variable;
      t.text = s_.substr(st, i_ - st);
    } else if (c == '$') {
      size_t st = i_;
      ++i_;
      while (i_ < s_.size() && is_ident_char(s_[i_])) ++i_;
      t.text = s_.substr(st, i_ - st);
      if (t.text == "$this") t.kind = tok::this_var;
      else if (t.text == "$index") t.kind = tok::index_var;
      else if (t.text == "$total") t.kind = tok::total_var;
      else {
        fail(error_code::INVALID_FHIRPATH, t.pos, "unknown special variable " + std::string(t.text));
        return false;
      }
    } else {
      char d = i_ + 1 < s_.size() ? s_[i_ + 1] : '\0';
      switch (c) {
        case '.': single(tok::dot, 1); break;
        case '[': single(tok::lbracket, 1); break;
        case ']': single(tok::rbracket, 1); break;
        case '(': single(tok::lparen, 1); break;
        case ')': single(tok::rparen, 1); break;
        case '{': single(tok::lbrace, 1); break;
        case '}': single(tok::rbrace, 1); break;
        case ',': single(tok::comma, 1); break;
        case '+':
        case '-':
        case '*':
        case '/':
        case '|':
        case '&':
        case '=':
        case '~': single(tok::symbol, 1); break;
        case '<':
        case '>': single(tok::symbol, d == '=' ? 2 : 1); break;
        case '!':
          if (d == '=' || d == '~') {
            single(tok::symbol, 2);
            break;
          }
          [[fallthrough]];
        default:
          fail(error_code::INVALID_FHIRPATH, t.pos, "unexpected character '" + std::string(1, c) + "'");
          return false;
      }
    }
    cur_ = std::move(t);
    return true;
  }

  // --- tree ---
  uint32_t make(op k, uint32_t pos, uint32_t a = NONE, uint32_t b = NONE) {
    node n;
    n.kind = k;
    n.pos = pos;
    n.a = a;
    n.b = b;
    uint32_t d = 1;
    if (a != NONE) d = std::max(d, depth_[a] + 1);
    if (b != NONE) d = std::max(d, depth_[b] + 1);
    prog_.nodes.push_back(std::move(n));
    depth_.push_back(d);
    if (d > lim_.max_depth)
      fail(error_code::MAX_DEPTH_EXCEEDED, pos,
           "the expression nests deeper than max_depth (" + std::to_string(lim_.max_depth) + ")");
    return static_cast<uint32_t>(prog_.nodes.size() - 1);
  }

  static int binary_precedence(const token &t, op &kind) {
    if (t.kind != tok::symbol && t.kind != tok::identifier) return -1;
    for (const auto &b : BINARY_OPERATORS) {
      if (b.text == t.text) {
        kind = b.kind;
        return b.precedence;
      }
    }
    return -1;
  }

  bool enter(uint32_t pos) {
    if (++nest_ > lim_.max_depth) {
      fail(error_code::MAX_DEPTH_EXCEEDED, pos,
           "the expression nests deeper than max_depth (" + std::to_string(lim_.max_depth) + ")");
      return false;
    }
    return true;
  }

  uint32_t parse_expr(int min_prec) {
    if (!enter(cur_.pos)) return NONE;
    uint32_t left = parse_unary();
    while (!failed_) {
      op kind;
      int prec = binary_precedence(cur_, kind);
      if (prec < 0 || prec < min_prec) break;
      uint32_t pos = cur_.pos;
      if (!next()) break;
      if (kind == op::is_type || kind == op::as_type) {
        type_spec ts;
        if (!parse_type_spec(ts)) break;
        left = make(kind, pos, left);
        if (!failed_) prog_.nodes[left].type = ts;
        continue;
      }
      uint32_t right = parse_expr(prec + 1);
      if (failed_) break;
      left = make(kind, pos, left, right);
    }
    --nest_;
    return failed_ ? NONE : left;
  }

  bool parse_type_spec(type_spec &ts) {
    uint32_t pos = cur_.pos;
    if (cur_.kind != tok::identifier && cur_.kind != tok::delimited_identifier) {
      fail(error_code::INVALID_FHIRPATH, pos, "a type name is expected, not " + describe(cur_));
      return false;
    }
    std::string first = cur_.value;
    if (!next()) return false;
    std::string ns, name = first;
    if (cur_.kind == tok::dot) {
      if (!next()) return false;
      if (cur_.kind != tok::identifier && cur_.kind != tok::delimited_identifier) {
        fail(error_code::INVALID_FHIRPATH, cur_.pos, "a type name is expected after '.'");
        return false;
      }
      ns = first;
      name = cur_.value;
      if (!next()) return false;
    }
    if (!resolve_type(ns, name, ts)) {
      fail(error_code::FHIRPATH_TYPE_ERROR, pos, "unknown type " + (ns.empty() ? name : ns + "." + name));
      return false;
    }
    return true;
  }

  uint32_t parse_unary() {
    if (cur_.kind == tok::symbol && (cur_.text == "-" || cur_.text == "+")) {
      bool minus = cur_.text == "-";
      uint32_t pos = cur_.pos;
      if (!next()) return NONE;
      if (!enter(pos)) return NONE;
      uint32_t operand = parse_unary();
      --nest_;
      if (failed_) return NONE;
      if (!minus) return operand;
      node &o = prog_.nodes[operand];
      // A sign directly before a number literal is part of the literal (`-1`, `-0.5 'mg'`).
      if (o.kind == op::literal && o.pos == pos + 1 &&
          (o.lit.kind == value_kind::integer || o.lit.kind == value_kind::decimal ||
           o.lit.kind == value_kind::quantity)) {
        o.lit.integer = -o.lit.integer;
        o.lit.dec.digits = -o.lit.dec.digits;
        o.pos = pos;
        return operand;
      }
      return make(op::negate, pos, operand);
    }
    return parse_postfix();
  }

  uint32_t parse_postfix() {
    uint32_t left = parse_term();
    while (!failed_) {
      if (cur_.kind == tok::dot) {
        if (!next()) return NONE;
        left = parse_invocation(left);
      } else if (cur_.kind == tok::lbracket) {
        uint32_t pos = cur_.pos;
        if (!next() || !enter(pos)) return NONE;
        uint32_t index = parse_expr(0);
        --nest_;
        if (failed_) return NONE;
        if (cur_.kind != tok::rbracket) {
          fail(error_code::INVALID_FHIRPATH, cur_.pos, "expected ']' but found " + describe(cur_));
          return NONE;
        }
        if (!next()) return NONE;
        left = make(op::indexer, pos, left, index);
      } else {
        break;
      }
    }
    return failed_ ? NONE : left;
  }

  // An identifier (or function call) after '.', or at the start of a term (focus == NONE).
  uint32_t parse_invocation(uint32_t focus) {
    uint32_t pos = cur_.pos;
    if (cur_.kind == tok::this_var || cur_.kind == tok::index_var || cur_.kind == tok::total_var) {
      op k = cur_.kind == tok::this_var ? op::this_item : cur_.kind == tok::index_var ? op::index_item : op::total_item;
      if (!next()) return NONE;
      // `x.$this` is not in the grammar's invocation rule, but $this after a dot means the same item.
      return focus == NONE ? make(k, pos) : make(k, pos, focus);
    }
    if (cur_.kind != tok::identifier && cur_.kind != tok::delimited_identifier) {
      fail(error_code::INVALID_FHIRPATH, pos, "a name is expected, not " + describe(cur_));
      return NONE;
    }
    bool delimited = cur_.kind == tok::delimited_identifier;
    std::string name = cur_.value;
    if (!next()) return NONE;
    if (cur_.kind == tok::lparen && !delimited) return parse_call(focus, name, pos);
    uint32_t n = make(op::member, pos, focus);
    if (failed_) return NONE;
    node &nd = prog_.nodes[n];
    // `Patient.name`: a capitalised name may select the context by its type. Resolved here, once,
    // rather than per resource.
    if (!name.empty() && name[0] >= 'A' && name[0] <= 'Z') {
      type_spec ts;
      if (resolve_type("", name, ts) && ts.ns != type_spec::space::system) {
        nd.type = ts;
        nd.names_type = true;
      }
    }
    nd.name = std::move(name);
    return n;
  }

  uint32_t parse_call(uint32_t focus, const std::string &name, uint32_t pos) {
    const function_info *f = find_function(name);
    if (!f) {
      fail(error_code::UNKNOWN_FUNCTION, pos, "unknown function " + name + "()");
      return NONE;
    }
    if (!next() || !enter(pos)) return NONE;  // '('
    std::vector<uint32_t> args;
    std::vector<uint32_t> arg_pos;
    bool type_arg = f->id == fn::ofType || f->id == fn::is_fn || f->id == fn::as_fn;
    type_spec ts;
    if (cur_.kind != tok::rparen) {
      while (true) {
        arg_pos.push_back(cur_.pos);
        if (type_arg && args.empty()) {
          if (!parse_type_spec(ts)) return NONE;
          args.push_back(NONE);
        } else {
          uint32_t a = parse_expr(0);
          if (failed_) return NONE;
          args.push_back(a);
        }
        if (cur_.kind == tok::comma) {
          if (!next()) return NONE;
          continue;
        }
        break;
      }
    }
    --nest_;
    if (cur_.kind != tok::rparen) {
      fail(error_code::INVALID_FHIRPATH, cur_.pos, "expected ')' or ',' but found " + describe(cur_));
      return NONE;
    }
    if (!next()) return NONE;
    if (args.size() < f->min_args || args.size() > f->max_args) {
      std::string want = f->min_args == f->max_args
                             ? std::to_string(f->min_args)
                             : std::to_string(f->min_args) + " to " + std::to_string(f->max_args);
      fail(error_code::UNKNOWN_FUNCTION, pos,
           name + "() takes " + want + " argument" + (f->max_args == 1 && f->min_args == 1 ? "" : "s") + ", not " +
               std::to_string(args.size()));
      return NONE;
    }
    uint32_t n = make(op::call, pos, focus);
    uint32_t d = depth_[n];
    for (uint32_t a : args)
      if (a != NONE) d = std::max(d, depth_[a] + 1);
    depth_[n] = d;
    if (d > lim_.max_depth)
      fail(error_code::MAX_DEPTH_EXCEEDED, pos,
           "the expression nests deeper than max_depth (" + std::to_string(lim_.max_depth) + ")");
    if (failed_) return NONE;
    node &nd = prog_.nodes[n];
    nd.function = f->id;
    nd.function_def = f;
    nd.name = name;
    nd.type = ts;
    nd.first_arg = static_cast<uint32_t>(prog_.args.size());
    nd.arg_count = static_cast<uint32_t>(args.size());
    prog_.args.insert(prog_.args.end(), args.begin(), args.end());
    return n;
  }

  std::string_view keep(std::string s) {
    prog_.strings.push_back(std::move(s));
    return prog_.strings.back();
  }

  uint32_t literal(uint32_t pos, const item &v) {
    uint32_t n = make(op::literal, pos);
    if (!failed_) prog_.nodes[n].lit = v;
    return n;
  }

  uint32_t parse_term() {
    uint32_t pos = cur_.pos;
    switch (cur_.kind) {
      case tok::number: {
        std::string_view text = cur_.text;
        if (!next()) return NONE;
        item v;
        bool is_int = text.find('.') == std::string_view::npos;
        if (is_int) {
          v.kind = value_kind::integer;
          int64_t x = 0;
          for (char c : text) {
            if (x > (INT64_MAX - (c - '0')) / 10) {
              fail(error_code::INVALID_FHIRPATH, pos, "integer literal out of range: " + std::string(text));
              return NONE;
            }
            x = x * 10 + (c - '0');
          }
          v.integer = x;
          v.dec = to_decimal(x);
        } else {
          v.kind = value_kind::decimal;
          if (!parse_decimal(text, v.dec)) {
            fail(error_code::INVALID_FHIRPATH, pos, "decimal literal out of range: " + std::string(text));
            return NONE;
          }
        }
        // A quantity: a number followed by a unit string or a calendar duration word.
        if (cur_.kind == tok::string || (cur_.kind == tok::identifier && !calendar_unit(cur_.text).empty())) {
          item q;
          q.kind = value_kind::quantity;
          q.dec = v.dec;
          q.text = keep(cur_.kind == tok::string ? cur_.value : std::string(cur_.text));
          if (!next()) return NONE;
          return literal(pos, q);
        }
        return literal(pos, v);
      }
      case tok::string: {
        item v;
        v.kind = value_kind::string;
        v.text = keep(cur_.value);
        if (!next()) return NONE;
        return literal(pos, v);
      }
      case tok::date_time:
      case tok::time: {
        item v;
        v.kind = cur_.kind == tok::time ? value_kind::time : cur_.date_only ? value_kind::date : value_kind::date_time;
        moment m;
        if (!parse_date_time(cur_.text, v.kind, m)) {
          fail(error_code::INVALID_FHIRPATH, pos, "bad date/time literal @" + std::string(cur_.text));
          return NONE;
        }
        v.text = keep(std::string(cur_.text));
        if (!next()) return NONE;
        return literal(pos, v);
      }
      case tok::lbrace: {
        if (!next()) return NONE;
        if (cur_.kind != tok::rbrace) {
          fail(error_code::INVALID_FHIRPATH, cur_.pos, "expected '}' after '{'");
          return NONE;
        }
        if (!next()) return NONE;
        return make(op::empty, pos);
      }
      case tok::lparen: {
        if (!next() || !enter(pos)) return NONE;
        uint32_t inner = parse_expr(0);
        --nest_;
        if (failed_) return NONE;
        if (cur_.kind != tok::rparen) {
          fail(error_code::INVALID_FHIRPATH, cur_.pos, "expected ')' but found " + describe(cur_));
          return NONE;
        }
        if (!next()) return NONE;
        return inner;
      }
      case tok::variable: {
        std::string name = cur_.value;
        if (!next()) return NONE;
        uint32_t n = make(op::variable, pos);
        if (!failed_) prog_.nodes[n].name = std::move(name);
        return n;
      }
      case tok::identifier:
        if (cur_.text == "true" || cur_.text == "false") {
          item v;
          v.kind = value_kind::boolean;
          v.boolean = cur_.text == "true";
          if (!next()) return NONE;
          return literal(pos, v);
        }
        return parse_invocation(NONE);
      case tok::delimited_identifier:
      case tok::this_var:
      case tok::index_var:
      case tok::total_var: return parse_invocation(NONE);
      default: fail(error_code::INVALID_FHIRPATH, pos, "unexpected " + describe(cur_)); return NONE;
    }
  }
};

}  // namespace

uint64_t next_program_id() noexcept {
  static std::atomic<uint64_t> next{1};
  return next.fetch_add(1, std::memory_order_relaxed);
}

expression::expression() : program_(std::make_unique<program>()) {}
expression::~expression() = default;
expression::expression(expression &&) noexcept = default;
expression &expression::operator=(expression &&) noexcept = default;
std::string_view expression::text() const noexcept { return program_->text; }

result<expression> compile(std::string_view text, const limits &lim) {
  if (text.size() > lim.max_expression_bytes)
    return quire::error(
        error_code::DOCUMENT_TOO_LARGE,
        "the expression is longer than max_expression_bytes (" + std::to_string(lim.max_expression_bytes) + ")", 0);
  expression e;
  e.program_->text = std::string(text);
  parser p(e.program_->text, lim, *e.program_);
  auto r = p.run();
  if (!r) return std::move(r).error();
  compile_constant_patterns(e.program_->nodes, e.program_->args);
  return e;
}

}  // namespace quire::fhirpath
