// SQL on FHIR v2 ViewDefinitions: checking and compiling a view, running it over resources.
//
// A view compiles to a tree of select nodes, each with its own columns, nested selects and
// unionAll branches. Every column gets one output index once (a unionAll's branches share the
// first branch's indices, which the check made equal by name and order), so running a node
// produces rows of the full width and joining a node's parts is a cross product that fills in
// disjoint cells.
#include "quire/view.h"

#include <algorithm>
#include <charconv>
#include <iterator>
#include <optional>
#include <utility>

#include "../common/decimal_text.h"
#include "../common/line_end.h"
#include "view_bundle.h"

namespace quire::view {

namespace {

enum class iteration : uint8_t { plain, for_each, for_each_or_null, repeat };

struct column_def {
  fhirpath::expression expr;
  size_t index = 0;  // output column
  bool collection = false;
  std::string path;  // place in the view, for run-time errors
};

struct select_node {
  iteration iter = iteration::plain;
  fhirpath::expression iter_expr;                  // forEach / forEachOrNull
  std::vector<fhirpath::expression> repeat_exprs;  // repeat
  std::string path;
  std::vector<column_def> columns;
  std::vector<select_node> selects;
  std::vector<select_node> union_all;
  size_t first_column = 0;  // [first_column, end_column): every output column this node fills
  size_t end_column = 0;
  bool one_row = false;  // always exactly one row: no iteration, no unionAll, and so for its selects
};

struct where_def {
  fhirpath::expression expr;
  std::string path;
};

error at(error e, std::string path) {
  if (e.path.empty()) {
    e.path = std::move(path);
  } else {
    e.path = path + "." + e.path;
  }
  return e;
}

error invalid(std::string path, std::string message) {
  error e(error_code::INVALID_VIEW, std::move(message));
  e.path = std::move(path);
  return e;
}

// Parses a JSON number's text into an exact decimal; false when it does not fit (exponents,
// more than 18 digits).
bool parse_decimal(std::string_view t, fhirpath::decimal &out) {
  quire::detail::decimal_text parts;
  if (!quire::detail::split_decimal_text(t, 0, parts) || parts.integer.size() + parts.fraction.size() > 18)
    return false;
  int64_t digits = 0;
  for (std::string_view part : {parts.integer, parts.fraction})
    for (char c : part) digits = digits * 10 + (c - '0');
  out.digits = parts.negative ? -digits : digits;
  out.scale = static_cast<int32_t>(parts.fraction.size());
  return true;
}

}  // namespace

bool valid_column_name(std::string_view n) {
  if (n.empty()) return false;
  auto alpha = [](char c) { return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z'); };
  if (!alpha(n[0])) return false;
  for (char c : n) {
    if (!alpha(c) && !(c >= '0' && c <= '9') && c != '_') return false;
  }
  return true;
}

struct compiled_view::program {
  json::document doc;  // the view's own copy: constants' strings point into it
  std::string resource;
  std::string name;
  std::vector<column_info> columns;
  std::vector<std::string> keys;     // per column, its name quoted and a colon: `"id":`, written before each cell
  std::vector<select_node> selects;  // the view's top-level select (a plain node each)
  std::vector<where_def> wheres;
  std::vector<std::pair<std::string, fhirpath::collection>> constants;
  view::limits lim;
};

namespace {

struct compiler {
  compiled_view::program &p;

  result<fhirpath::expression> expression_at(const json::value &v, const std::string &path) {
    auto s = v.get_string();
    if (!s) return invalid(path, path + " must be a FHIRPath string");
    auto e = fhirpath::compile(*s, p.lim.fhirpath);
    if (!e) {
      error err = std::move(e).error();
      err.message = path + " (\"" + std::string(s->substr(0, 80)) + "\"): " + err.message;
      return at(std::move(err), path);
    }
    return std::move(e).value();
  }

  // Compiles one select object into `node`; `names` gets the node's column names in output order.
  result<void> select(const json::value &v, const std::string &path, size_t depth, select_node &node,
                      std::vector<std::string> &names) {
    if (depth > p.lim.max_select_depth) {
      error e(error_code::MAX_DEPTH_EXCEEDED, "selects nested deeper than max_select_depth");
      e.path = path;
      return e;
    }
    auto obj = v.get_object();
    if (!obj) return invalid(path, path + " must be an object");
    node.path = path;
    int iterations = 0;
    std::optional<json::value> columns, selects, unions;
    for (auto [key, val] : *obj) {
      std::string kp = path + "." + std::string(key);
      if (key == "forEach" || key == "forEachOrNull") {
        auto e = expression_at(val, kp);
        if (!e) return e.error();
        node.iter_expr = std::move(e).value();
        node.iter = key == "forEach" ? iteration::for_each : iteration::for_each_or_null;
        ++iterations;
      } else if (key == "repeat") {
        auto arr = val.get_array();
        if (!arr || arr->size() == 0) return invalid(kp, kp + " must be a non-empty array of FHIRPath strings");
        size_t i = 0;
        for (json::value item : *arr) {
          auto e = expression_at(item, kp + "[" + std::to_string(i++) + "]");
          if (!e) return e.error();
          node.repeat_exprs.push_back(std::move(e).value());
        }
        node.iter = iteration::repeat;
        ++iterations;
      } else if (key == "column") {
        columns = val;
      } else if (key == "select") {
        selects = val;
      } else if (key == "unionAll") {
        unions = val;
      } else if (key == "id" || key == "extension" || key == "modifierExtension") {
      } else {
        return invalid(kp, "unknown element " + kp);
      }
    }
    if (iterations > 1) return invalid(path, path + " has more than one of forEach, forEachOrNull and repeat");
    if (columns) {
      auto arr = columns->get_array();
      if (!arr) return invalid(path + ".column", path + ".column must be an array");
      size_t i = 0;
      for (json::value c : *arr) {
        std::string cp = path + ".column[" + std::to_string(i++) + "]";
        auto co = c.get_object();
        if (!co) return invalid(cp, cp + " must be an object");
        column_info info;
        column_def def;
        def.path = cp;
        bool has_path = false, has_name = false;
        for (auto [key, val] : *co) {
          std::string kp = cp + "." + std::string(key);
          if (key == "name") {
            auto s = val.get_string();
            if (!s || !valid_column_name(*s))
              return invalid(kp, kp + " must be a letter then letters, digits or _ (got " + json::to_json(val) + ")");
            info.name = std::string(*s);
            has_name = true;
          } else if (key == "path") {
            auto e = expression_at(val, kp);
            if (!e) return e.error();
            def.expr = std::move(e).value();
            has_path = true;
          } else if (key == "type") {
            auto s = val.get_string();
            if (!s) return invalid(kp, kp + " must be a string");
            info.type = std::string(*s);
          } else if (key == "collection") {
            auto b = val.get_bool();
            if (!b) return invalid(kp, kp + " must be a boolean");
            info.collection = *b;
          } else if (key == "description" || key == "tag" || key == "id" || key == "extension") {
          } else {
            return invalid(kp, "unknown element " + kp);
          }
        }
        if (!has_name) return invalid(cp + ".name", cp + " has no name");
        if (!has_path) return invalid(cp + ".path", cp + " has no path");
        def.collection = info.collection;
        names.push_back(info.name);
        node.columns.push_back(std::move(def));
        p.columns.push_back(std::move(info));  // provisional: reordered by assign()
      }
    }
    if (selects) {
      auto arr = selects->get_array();
      if (!arr) return invalid(path + ".select", path + ".select must be an array");
      size_t i = 0;
      for (json::value s : *arr) {
        select_node child;
        auto r = select(s, path + ".select[" + std::to_string(i++) + "]", depth + 1, child, names);
        if (!r) return r.error();
        node.selects.push_back(std::move(child));
      }
    }
    if (unions) {
      auto arr = unions->get_array();
      if (!arr) return invalid(path + ".unionAll", path + ".unionAll must be an array");
      size_t i = 0;
      std::vector<std::string> first;
      for (json::value s : *arr) {
        std::string up = path + ".unionAll[" + std::to_string(i) + "]";
        select_node child;
        std::vector<std::string> branch;
        auto r = select(s, up, depth + 1, child, branch);
        if (!r) return r.error();
        if (i == 0) {
          first = branch;
        } else if (branch != first) {
          std::string a, b;
          for (auto &n : first) a += (a.empty() ? "" : ",") + n;
          for (auto &n : branch) b += (b.empty() ? "" : ",") + n;
          return invalid(up, up + " has columns (" + b + ") where unionAll[0] has (" + a +
                                 "): the branches of a unionAll must have the same columns in the same order");
        }
        node.union_all.push_back(std::move(child));
        ++i;
      }
      names.insert(names.end(), first.begin(), first.end());
    }
    return {};
  }
};

// Gives every column of `node` its output index, in output order; unionAll branches share them.
// `infos` is the compile-order list (provisional), `out` the output list.
size_t assign(select_node &node, size_t base, const std::vector<column_info> &infos, size_t &next_info,
              std::vector<column_info> &out, bool record) {
  node.first_column = base;
  size_t at = base;
  for (auto &c : node.columns) {
    c.index = at++;
    if (record) out.push_back(infos[next_info]);
    ++next_info;
  }
  for (auto &s : node.selects) at = assign(s, at, infos, next_info, out, record);
  size_t end = at;
  bool first = true;
  for (auto &u : node.union_all) {
    end = assign(u, at, infos, next_info, out, record && first);
    first = false;
  }
  node.end_column = end;
  return end;
}

// Marks the nodes whose rows are always exactly one (see select_node::one_row).
bool mark_one_row(select_node &node) {
  bool one = node.iter == iteration::plain && node.union_all.empty();
  for (auto &s : node.selects) one = mark_one_row(s) && one;
  for (auto &u : node.union_all) mark_one_row(u);
  node.one_row = one;
  return one;
}

}  // namespace

compiled_view::compiled_view() : program_(std::make_unique<program>()) {}
compiled_view::~compiled_view() = default;
compiled_view::compiled_view(compiled_view &&) noexcept = default;
compiled_view &compiled_view::operator=(compiled_view &&) noexcept = default;
std::string_view compiled_view::resource() const noexcept { return program_->resource; }
std::string_view compiled_view::name() const noexcept { return program_->name; }
const std::vector<column_info> &compiled_view::columns() const noexcept { return program_->columns; }
const limits &compiled_view::limits() const noexcept { return program_->lim; }

result<compiled_view> compile(std::string_view view_json, const limits &lim) {
  if (view_json.size() > lim.max_view_bytes) {
    return error(error_code::DOCUMENT_TOO_LARGE, "the view is larger than max_view_bytes");
  }
  auto doc = json::parse(view_json);
  if (!doc) return std::move(doc).error();
  compiled_view out;
  compiled_view::program &p = *out.program_;
  p.lim = lim;
  p.doc = std::move(doc).value();
  json::value root = p.doc.root();
  auto obj = root.get_object();
  if (!obj) return invalid("", "a ViewDefinition must be a JSON object");
  compiler c{p};
  std::optional<json::value> select, where, constants;
  for (auto [key, val] : *obj) {
    std::string k(key);
    if (key == "resource") {
      auto s = val.get_string();
      if (!s || s->empty()) return invalid(k, "resource must be a FHIR resource type name");
      p.resource = std::string(*s);
    } else if (key == "name") {
      auto s = val.get_string();
      if (!s) return invalid(k, "name must be a string");
      p.name = std::string(*s);
    } else if (key == "select") {
      select = val;
    } else if (key == "where") {
      where = val;
    } else if (key == "constant") {
      constants = val;
    }
    // Other elements (resourceType, url, status, title, fhirVersion, meta...) say nothing the
    // runner acts on.
  }
  if (p.resource.empty()) return invalid("resource", "the view has no resource");
  if (!select) return invalid("select", "the view has no select");
  if (constants) {
    auto arr = constants->get_array();
    if (!arr) return invalid("constant", "constant must be an array");
    size_t i = 0;
    for (json::value cv : *arr) {
      std::string cp = "constant[" + std::to_string(i++) + "]";
      auto co = cv.get_object();
      if (!co) return invalid(cp, cp + " must be an object");
      std::string name;
      fhirpath::collection value;
      int values = 0;
      for (auto [key, val] : *co) {
        if (key == "name") {
          auto s = val.get_string();
          if (!s || !valid_column_name(*s)) return invalid(cp + ".name", cp + ".name must be a name");
          name = std::string(*s);
        } else if (key.substr(0, 5) == "value" && key.size() > 5) {
          ++values;
          std::string_view type = key.substr(5);
          fhirpath::item it;
          if (type == "Boolean") {
            auto b = val.get_bool();
            if (!b) return invalid(cp + "." + std::string(key), cp + "." + std::string(key) + " must be a boolean");
            it.kind = fhirpath::value_kind::boolean;
            it.boolean = *b;
          } else if (type == "Integer" || type == "PositiveInt" || type == "UnsignedInt" || type == "Integer64") {
            auto n = val.get_int64();
            if (!n) return invalid(cp + "." + std::string(key), cp + "." + std::string(key) + " must be an integer");
            it.kind = fhirpath::value_kind::integer;
            it.integer = *n;
            it.dec = fhirpath::decimal{*n, 0};  // the engine compares integers with decimals through it
          } else if (type == "Decimal") {
            auto t = val.get_number_text();
            if (!t || !parse_decimal(*t, it.dec))
              return invalid(cp + "." + std::string(key),
                             cp + "." + std::string(key) + " must be a decimal of at most 18 digits");
            it.kind = fhirpath::value_kind::decimal;
          } else {
            auto s = val.get_string();
            if (!s) return invalid(cp + "." + std::string(key), cp + "." + std::string(key) + " must be a string");
            it.text = *s;
            if (type == "Date") it.kind = fhirpath::value_kind::date;
            else if (type == "DateTime" || type == "Instant") it.kind = fhirpath::value_kind::date_time;
            else if (type == "Time") it.kind = fhirpath::value_kind::time;
            else it.kind = fhirpath::value_kind::string;
          }
          value.push_back(it);
        } else if (key == "id" || key == "extension") {
        } else {
          return invalid(cp + "." + std::string(key), "unknown element " + cp + "." + std::string(key));
        }
      }
      if (name.empty()) return invalid(cp + ".name", cp + " has no name");
      if (values != 1) return invalid(cp, cp + " (" + name + ") must have exactly one value[x]");
      for (auto &existing : p.constants) {
        if (existing.first == name) return invalid(cp + ".name", "constant " + name + " is defined twice");
      }
      if (name == "rowIndex" || name == "resource" || name == "rootResource" || name == "context") {
        return invalid(cp + ".name", "constant " + name + " hides a variable the runner defines");
      }
      p.constants.emplace_back(std::move(name), std::move(value));
    }
  }
  {
    auto arr = select->get_array();
    if (!arr || arr->size() == 0) return invalid("select", "select must be a non-empty array");
    std::vector<std::string> names;
    size_t i = 0;
    for (json::value s : *arr) {
      select_node node;
      auto r = c.select(s, "select[" + std::to_string(i++) + "]", 1, node, names);
      if (!r) return r.error();
      p.selects.push_back(std::move(node));
    }
    std::vector<column_info> infos = std::move(p.columns);
    p.columns.clear();
    size_t next_info = 0, at = 0;
    for (auto &node : p.selects) at = assign(node, at, infos, next_info, p.columns, true);
    for (auto &node : p.selects) mark_one_row(node);
    for (size_t a = 0; a < p.columns.size(); ++a) {
      for (size_t b = a + 1; b < p.columns.size(); ++b) {
        if (p.columns[a].name == p.columns[b].name) {
          return invalid("select",
                         "column name " + p.columns[a].name + " is used twice (names must be unique in a view)");
        }
      }
    }
  }
  for (const auto &col : p.columns) {
    std::string key;
    json::append_quoted(key, col.name);
    key += ':';
    p.keys.push_back(std::move(key));
  }
  if (where) {
    auto arr = where->get_array();
    if (!arr) return invalid("where", "where must be an array");
    size_t i = 0;
    for (json::value w : *arr) {
      std::string wp = "where[" + std::to_string(i++) + "]";
      auto wo = w.get_object();
      if (!wo) return invalid(wp, wp + " must be an object");
      auto pv = wo->find("path");
      if (!pv) return invalid(wp + ".path", wp + " has no path");
      auto e = c.expression_at(*pv, wp + ".path");
      if (!e) return e.error();
      p.wheres.push_back({std::move(e).value(), wp + ".path"});
    }
  }
  return out;
}

// --- running ---

namespace {

// Where an expression sits in the view, for its errors. The text is built only when one occurs:
// a path string built per cell per resource was a good part of running a flat view.
struct place {
  std::string_view base;    // the node's or column's path
  std::string_view suffix;  // `.path`, `.forEach`, `.repeat`...
  size_t index = SIZE_MAX;  // `[i]` after the suffix (repeat's expressions), SIZE_MAX for none

  std::string text() const {
    std::string t(base);
    t += suffix;
    if (index != SIZE_MAX) {
      t += '[';
      t += std::to_string(index);
      t += ']';
    }
    return t;
  }
};

}  // namespace

struct runner::state {
  const compiled_view *view = nullptr;
  const compiled_view::program *p = nullptr;
  run_options options;
  // run_ndjson's runners for the threads beyond the calling one, made when first needed and kept.
  std::vector<std::unique_ptr<runner>> helpers;
  fhirpath::evaluator ev;
  fhirpath::environment env;
  json::value resource;
  fhirpath::item resource_item;  // the resource being run, as the evaluator's %resource
  // The FHIR type context_item() found for the view's resource type: every resource run has that
  // resourceType, so later ones are typed_item()s of it, without looking the name up again.
  std::optional<uint16_t> resource_type;
  json::document line;  // run_ndjson's document, its buffers reused from line to line
  size_t width = 0;
  std::vector<row> *out = nullptr;
  // A one_row select is written straight into the row being built (fill) instead of going through
  // node_rows and cross: the same cells, without the vectors of rows between. Not when the row
  // limit is 0, where cross and node_rows fail on the first row.
  bool fill_one_row = false;

  state(const compiled_view &v, const run_options &o)
      : view(&v), p(&v.compiled()), options(o), ev(v.compiled().lim.fhirpath) {
    const compiled_view::program &prog = *p;
    env.constants = prog.constants;
    env.now = o.now;
    fhirpath::item idx;
    idx.kind = fhirpath::value_kind::integer;
    env.constants.emplace_back("rowIndex", fhirpath::collection{idx});
    width = prog.columns.size();
    fill_one_row = prog.lim.max_rows_per_resource >= 1;
  }

  // The result lives in the evaluator until its next evaluation: callers that keep it (forEach
  // contexts, repeat) copy it; columns read it in place (a copy per cell was one allocation each).
  result<const fhirpath::collection *> eval(const fhirpath::expression &e, const fhirpath::item &ctx, int64_t row_index,
                                            const place &where) {
    fhirpath::item &idx = env.constants.back().second[0];
    idx.integer = row_index;
    idx.dec = fhirpath::decimal{row_index, 0};  // the engine compares integers with decimals through it
    auto r = ev.evaluate(e, ctx, env);
    if (!r) {
      error err = std::move(r).error();
      std::string path = where.text();
      std::string message = path;
      message += ": ";
      message += err.message;
      err.message = std::move(message);
      return at(std::move(err), std::move(path));
    }
    return *r;
  }

  static bool is_negative_zero(const json::value &number) {
    auto t = number.get_number_text();
    return t && *t == "-0";
  }

  // One item's cell, typed from the item's own kind; the text goes into the cell's own string
  // (its buffer reused from row to row).
  static void set_cell(cell &c, const fhirpath::item &it) {
    c.text.clear();
    switch (it.kind) {
      case fhirpath::value_kind::boolean:
        c.kind = cell_kind::boolean;
        c.boolean = it.boolean;
        return;
      case fhirpath::value_kind::integer:
        // An integer read from the resource keeps its text: `-0` is no 64-bit integer's shortest text.
        if (!it.in_tape || !is_negative_zero(it.node)) {
          c.kind = cell_kind::integer;
          c.integer = it.integer;
          return;
        }
        break;
      default: break;
    }
    switch (fhirpath::append_text(c.text, it)) {
      case fhirpath::json_form::null_value: c.kind = cell_kind::null_value; return;
      case fhirpath::json_form::boolean:
        c.kind = cell_kind::boolean;
        c.boolean = c.text == "true";
        c.text.clear();
        return;
      case fhirpath::json_form::number: {
        int64_t v = 0;
        const char *end = c.text.data() + c.text.size();
        auto [at, ec] = std::from_chars(c.text.data(), end, v);
        if (ec == std::errc() && at == end && c.text != "-0") {
          c.kind = cell_kind::integer;
          c.integer = v;
          c.text.clear();
        } else {
          c.kind = cell_kind::decimal;
        }
        return;
      }
      case fhirpath::json_form::string: c.kind = cell_kind::string; return;
      case fhirpath::json_form::json: c.kind = c.text[0] == '[' ? cell_kind::array : cell_kind::object; return;
    }
  }

  result<void> check_rows(size_t n) const {
    if (n > p->lim.max_rows_per_resource) {
      return error(error_code::RESULT_TOO_LARGE,
                   "the view gives more than max_rows_per_resource rows for one resource");
    }
    return {};
  }

  // a × b: each pair's row has b's cells in [first, end) where b has a value, a's cells elsewhere
  // (their columns are disjoint). The last use of a row of either side moves its cells instead of
  // copying them.
  result<std::vector<row>> cross(std::vector<row> a, std::vector<row> b, size_t first, size_t end) {
    if (!b.empty() && a.size() > p->lim.max_rows_per_resource / b.size()) return check_rows(SIZE_MAX).error();
    std::vector<row> out;
    out.reserve(a.size() * b.size());
    for (size_t ia = 0; ia < a.size(); ++ia) {
      row &ra = a[ia];
      const bool last_a = ia + 1 == a.size();
      for (size_t ib = 0; ib < b.size(); ++ib) {
        row &rb = b[ib];
        const bool last_b = ib + 1 == b.size();
        row r = last_a ? std::move(rb) : rb;
        for (size_t i = 0; i < r.cells.size(); ++i) {
          const bool from_b = i >= first && i < end && r.cells[i].kind != cell_kind::null_value;
          if (from_b) continue;
          if (ra.cells[i].kind == cell_kind::null_value) {
            r.cells[i] = cell{};
          } else if (last_b) {
            r.cells[i] = std::move(ra.cells[i]);
          } else {
            r.cells[i] = ra.cells[i];
          }
        }
        out.push_back(std::move(r));
      }
    }
    return out;
  }

  result<void> collect_repeat(const select_node &node, const fhirpath::item &ctx, int64_t row_index, size_t depth,
                              fhirpath::collection &out) {
    if (depth > p->lim.max_repeat_depth) {
      std::string path = node.path;
      path += ".repeat";
      std::string message = path;
      message += " descends deeper than max_repeat_depth";
      error e(error_code::MAX_DEPTH_EXCEEDED, std::move(message));
      e.path = std::move(path);
      return e;
    }
    fhirpath::collection children;
    for (size_t i = 0; i < node.repeat_exprs.size(); ++i) {
      auto r = eval(node.repeat_exprs[i], ctx, row_index, place{node.path, ".repeat", i});
      if (!r) return r.error();
      children.insert(children.end(), (*r)->begin(), (*r)->end());
    }
    for (const auto &c : children) {
      out.push_back(c);
      if (out.size() > p->lim.max_rows_per_resource) return check_rows(out.size());
      auto r = collect_repeat(node, c, row_index, depth + 1, out);
      if (!r) return r;
    }
    return {};
  }

  // One column's value for one context, into `value` (a null cell when the column gives nothing).
  result<void> column_cell(const column_def &col, const fhirpath::item &c, int64_t idx, cell &value) {
    auto got = eval(col.expr, c, idx, place{col.path, ".path"});
    if (!got) return got.error();
    const fhirpath::collection &r = **got;
    if (col.collection) {
      value.kind = cell_kind::array;
      value.text.clear();
      fhirpath::append_json(value.text, r);
    } else if (r.size() > 1) {
      std::string path = col.path;
      path += ".path";
      std::string message = path;
      message += " gives ";
      message += std::to_string(r.size());
      message += " values in a column that is not a collection";
      error e(error_code::FHIRPATH_TYPE_ERROR, std::move(message));
      e.path = std::move(path);
      return e;
    } else if (r.size() == 1) {
      set_cell(value, r[0]);
    } else {
      value = cell{};
    }
    return {};
  }

  // The cells of a one_row node for one context, written into `r`: what node_rows gives for it and
  // cross joins in, in the same order of evaluation (so the same first error).
  result<void> fill(const select_node &node, const fhirpath::item &ctx, int64_t row_index, row &r) {
    for (const auto &col : node.columns) {
      auto v = column_cell(col, ctx, row_index, r.cells[col.index]);
      if (!v) return v;
    }
    for (const auto &s : node.selects) {
      auto v = fill(s, ctx, row_index, r);
      if (!v) return v;
    }
    return {};
  }

  // Joins the rows of each of `selects` (for one context) into `first`, the one row built so far:
  // while `single`, one_row selects are filled into it in place; from the first select that is
  // not one_row, `first` moves into `rows` (single becomes false) and the rest are crossed. On
  // return the rows are `first` when still single, else `rows` (which crosses may have emptied).
  result<void> join_selects(const std::vector<select_node> &selects, const fhirpath::item &ctx, int64_t row_index,
                            row &first, bool &single, std::vector<row> &rows) {
    for (const auto &s : selects) {
      if (single && s.one_row && fill_one_row) {
        auto ok = fill(s, ctx, row_index, first);
        if (!ok) return ok;
        continue;
      }
      if (single) {
        rows.push_back(std::move(first));
        single = false;
      }
      auto sub = node_rows(s, ctx, row_index);
      if (!sub) return sub.error();
      auto joined = cross(std::move(rows), std::move(sub).value(), s.first_column, s.end_column);
      if (!joined) return joined.error();
      rows = std::move(joined).value();
    }
    return {};
  }

  // The rows of one node for one context item.
  result<std::vector<row>> node_rows(const select_node &node, const fhirpath::item &ctx, int64_t row_index) {
    fhirpath::collection contexts;
    switch (node.iter) {
      case iteration::plain: contexts.push_back(ctx); break;
      case iteration::for_each:
      case iteration::for_each_or_null: {
        auto r = eval(node.iter_expr, ctx, row_index,
                      place{node.path, node.iter == iteration::for_each ? ".forEach" : ".forEachOrNull"});
        if (!r) return r.error();
        contexts = **r;  // kept across the columns' evaluations
        break;
      }
      case iteration::repeat: {
        auto r = collect_repeat(node, ctx, row_index, 1, contexts);
        if (!r) return r.error();
        break;
      }
    }
    std::vector<row> out;
    if (contexts.empty()) {
      if (node.iter != iteration::for_each_or_null) return out;
      // One row of nulls, but its own columns are still evaluated, against `null` with %rowIndex
      // 0: `%rowIndex` gives 0 there as in the specification's reference runner, paths give nothing.
      static const json::document null_doc = json::parse("null").value();
      row r{std::vector<cell>(width)};
      fhirpath::item nothing = fhirpath::context_item(null_doc.root());
      for (const auto &col : node.columns) {
        auto v = column_cell(col, nothing, 0, r.cells[col.index]);
        if (!v) return v.error();
      }
      out.push_back(std::move(r));
      return out;
    }
    bool iterates = node.iter != iteration::plain;
    for (size_t k = 0; k < contexts.size(); ++k) {
      const fhirpath::item &c = contexts[k];
      int64_t idx = iterates ? static_cast<int64_t>(k) : row_index;
      row first{std::vector<cell>(width)};
      for (const auto &col : node.columns) {
        auto v = column_cell(col, c, idx, first.cells[col.index]);
        if (!v) return v.error();
      }
      bool single = true;
      std::vector<row> rows;
      auto ok = join_selects(node.selects, c, idx, first, single, rows);
      if (!ok) return ok.error();
      if (!node.union_all.empty()) {
        if (single) {
          rows.push_back(std::move(first));
          single = false;
        }
        std::vector<row> all;
        size_t from = node.union_all.front().first_column, end = node.union_all.front().end_column;
        for (const auto &u : node.union_all) {
          auto sub = node_rows(u, c, idx);
          if (!sub) return sub.error();
          for (auto &r : *sub) all.push_back(std::move(r));
          auto counted = check_rows(all.size());
          if (!counted) return counted.error();
        }
        auto joined = cross(std::move(rows), std::move(all), from, end);
        if (!joined) return joined.error();
        rows = std::move(joined).value();
      }
      if (single) {
        out.push_back(std::move(first));
      } else {
        for (auto &r : rows) out.push_back(std::move(r));
      }
      auto counted = check_rows(out.size());
      if (!counted) return counted.error();
    }
    return out;
  }

  result<void> run(const json::value &resource) {
    auto obj = resource.get_object();
    if (!obj) return {};
    auto rt = obj->find("resourceType");
    if (!rt) return {};
    auto rts = rt->get_string();
    if (!rts || *rts != p->resource) return {};
    env.resource = &resource;
    env.root_resource = &resource;
    // Its type looked up once per view, not per resource nor per column.
    if (resource_type) {
      resource_item = fhirpath::typed_item(&resource, *resource_type, nullptr);
    } else {
      resource_item = fhirpath::context_item(resource);
      resource_type = resource_item.fhir_type;
    }
    env.resource_item = &resource_item;
    env.root_resource_item = &resource_item;
    const fhirpath::item &ctx = resource_item;
    for (const auto &w : p->wheres) {
      auto got = eval(w.expr, ctx, 0, place{w.path, ""});
      if (!got) return got.error();
      const fhirpath::collection &r = **got;
      if (r.empty()) return {};
      if (r.size() != 1 || r[0].kind != fhirpath::value_kind::boolean) {
        std::string message = w.path;
        message += " must give one boolean (got ";
        message += fhirpath::to_json(r);
        message += ')';
        error e(error_code::FHIRPATH_TYPE_ERROR, std::move(message));
        e.path = w.path;
        return e;
      }
      if (!r[0].boolean) return {};
    }
    row first{std::vector<cell>(width)};
    bool single = true;
    std::vector<row> rows;
    auto ok = join_selects(p->selects, ctx, 0, first, single, rows);
    if (!ok) return ok;
    if (single) {
      out->push_back(std::move(first));
    } else {
      for (auto &r : rows) out->push_back(std::move(r));
    }
    return {};
  }
};

runner::runner(const compiled_view &v, const run_options &options) : state_(std::make_unique<state>(v, options)) {}
runner::~runner() = default;
runner::runner(runner &&) noexcept = default;
runner &runner::operator=(runner &&) noexcept = default;

result<void> runner::run_resource(const json::value &resource, std::vector<row> &out) {
  state_->out = &out;
  return state_->run(resource);
}

result<void> runner::run(const json::value &resource, std::vector<row> &out) {
  state_->out = &out;
  return detail::for_each_view_resource(state_->p->resource, resource, [&](const json::value &r, int64_t entry) {
    auto ok = state_->run(r);
    if (!ok && entry >= 0) return result<void>(at(ok.error(), detail::bundle_entry_path(entry)));
    return ok;
  });
}

result<void> runner::run_bundle(const json::value &bundle, std::vector<row> &out) {
  auto obj = bundle.get_object();
  if (!obj) return error(error_code::WRONG_TYPE, "a Bundle must be a JSON object", bundle.offset());
  state_->out = &out;
  return detail::for_each_bundle_entry(*obj, [&](const json::value &r, int64_t entry) {
    auto ok = state_->run(r);
    if (!ok) return result<void>(at(ok.error(), detail::bundle_entry_path(entry)));
    return ok;
  });
}

namespace {

// A running error of one NDJSON line: its offset is into the view's expression (the path names
// it), not into the input, and describe() prints `line` only beside an offset, so the message
// names the line instead.
error on_line(error e, uint32_t line) {
  e.offset = error::NO_OFFSET;
  e.line = line;
  e.message += " (NDJSON line ";
  e.message += std::to_string(line);
  e.message += ')';
  return e;
}

}  // namespace

namespace {

// One NDJSON line's rows (none for a blank one); errors placed in the stream.
result<void> run_line(runner &run, json::document &doc, const ndjson::line &l, std::vector<row> &out) {
  if (l.blank()) return {};
  const uint32_t line = static_cast<uint32_t>(l.number);
  if (auto parsed = json::parse_into(doc, l.text); !parsed) {
    error e = std::move(parsed).error();
    if (e.offset != error::NO_OFFSET) e.offset += l.offset;
    e.line = line;
    return e;
  }
  auto r = run.run(doc.root(), out);
  if (!r) return on_line(r.error(), line);
  return {};
}

// The lines of text[begin, end) (whole lines: end is the text's end or just past a line end),
// numbered from first_line; `lines` counts those read. Offsets in errors are into the whole text.
result<void> run_lines(runner &run, json::document &doc, std::string_view text, size_t begin, size_t end,
                       uint32_t first_line, uint64_t max_line_bytes, std::vector<row> &out, uint32_t &lines) {
  ndjson::line_feeder feeder(max_line_bytes);
  feeder.restart(begin, first_line);
  feeder.feed(text.substr(begin, end - begin), true);
  auto ok = feeder.each([&](const ndjson::line &l) { return run_line(run, doc, l, out); });
  lines = static_cast<uint32_t>(feeder.next_number() - first_line);
  return ok;
}

}  // namespace

unsigned parallel_parts(const run_options &o, size_t bytes) noexcept {
  if (!o.tasks || bytes < o.min_parallel_bytes || o.tasks->concurrency() <= 1) return 1;
  return std::min(o.threads ? o.threads : o.tasks->concurrency(), run_options::MAX_THREADS);
}

result<void> runner::run_ndjson(std::string_view text, std::vector<row> &out) {
  state &s = *state_;
  const unsigned parts = parallel_parts(s.options, text.size());
  uint32_t lines = 0;
  const uint64_t max = s.options.max_line_bytes;
  if (parts <= 1) return run_lines(*this, s.line, text, 0, text.size(), 1, max, out, lines);

  // Cut the text into runs of whole lines of about equal size, one a task. A task's line numbers
  // are not known until the runs before it are counted: a task that fails stops, and its run is
  // read again below on this thread, numbered from its real first line, for the rows before the
  // error and the error itself exactly as one thread gives them.
  const std::vector<size_t> cut = detail::cut_at_line_ends(text, parts);
  while (s.helpers.size() + 1 < parts)
    s.helpers.push_back(std::make_unique<runner>(*s.view, run_options{.now = s.options.now}));
  struct part {
    std::vector<row> rows;
    uint32_t lines = 0;
    bool failed = false;
  };
  std::vector<part> done(parts);
  s.options.tasks->run(parts, [&](size_t k) {
    runner &r = k == 0 ? *this : *s.helpers[k - 1];
    json::document &doc = r.state_->line;
    done[k].failed = !run_lines(r, doc, text, cut[k], cut[k + 1], 1, max, done[k].rows, done[k].lines);
  });
  uint32_t line = 1;
  for (unsigned k = 0; k < parts; ++k) {
    if (done[k].failed) {
      auto again = run_lines(*this, s.line, text, cut[k], cut[k + 1], line, max, out, lines);
      if (!again) return again;
      line += lines;  // it failed on its thread, not here (memory that was short then): go on
      continue;
    }
    if (out.empty()) out = std::move(done[k].rows);
    else
      out.insert(out.end(), std::make_move_iterator(done[k].rows.begin()), std::make_move_iterator(done[k].rows.end()));
    line += done[k].lines;
  }
  return {};
}

result<void> runner::run_text(std::string_view text, std::vector<row> &out) {
  // Text with nothing in it is an NDJSON export without lines: no rows, as run_ndjson gives.
  if (text.find_first_not_of(" \t\r\n") == std::string_view::npos) return {};
  auto doc = json::parse(text);
  if (!doc) {
    // The first value read and more followed it: NDJSON, read line by line.
    if (doc.code() == error_code::TRAILING_CONTENT) return run_ndjson(text, out);
    return std::move(doc).error();
  }
  const json::value root = doc->root();
  if (auto arr = root.get_array()) {
    for (json::value r : *arr) {
      auto ok = run(r, out);
      if (!ok) return ok;
    }
    return {};
  }
  return run(root, out);
}

struct ndjson_feeder::state {
  runner run;
  ndjson::line_feeder lines;
  std::optional<error> stopped;  // the error that stopped the stream
  json::document doc;            // the line being run, its buffers reused (json::parse_into)

  state(const compiled_view &v, uint64_t max, const run_options &o) : run(v, o), lines(max) {}

  result<void> read(std::vector<row> &out) {
    auto ok = lines.each([&](const ndjson::line &l) { return run_line(run, doc, l, out); });
    if (!ok) stopped = ok.error();
    return ok;
  }
};

ndjson_feeder::ndjson_feeder(const compiled_view &v, uint64_t max_line_bytes, const run_options &run)
    : state_(std::make_unique<state>(v, max_line_bytes, run)) {}
ndjson_feeder::~ndjson_feeder() = default;
ndjson_feeder::ndjson_feeder(ndjson_feeder &&) noexcept = default;
ndjson_feeder &ndjson_feeder::operator=(ndjson_feeder &&) noexcept = default;

result<void> ndjson_feeder::feed(std::string_view piece, std::vector<row> &out) {
  state &s = *state_;
  if (s.stopped) return *s.stopped;
  s.lines.feed(piece);
  return s.read(out);
}

result<void> ndjson_feeder::finish(std::vector<row> &out) {
  state &s = *state_;
  if (s.stopped) return *s.stopped;
  s.lines.feed({}, true);
  return s.read(out);
}

std::string columns_to_json(const compiled_view &v) {
  std::string out = "[";
  bool first = true;
  for (const auto &c : v.columns()) {
    if (!first) out += ',';
    first = false;
    out += "{\"name\":";
    json::append_quoted(out, c.name);
    out += ",\"type\":";
    json::append_quoted(out, c.type);
    out += ",\"collection\":";
    out += c.collection ? "true" : "false";
    out += '}';
  }
  out += ']';
  return out;
}

void append_cell_text(std::string &out, const cell &c) {
  switch (c.kind) {
    case cell_kind::null_value: return;
    case cell_kind::boolean: out += c.boolean ? "true" : "false"; return;
    case cell_kind::integer: {
      char digits[24];
      out.append(digits, std::to_chars(digits, digits + sizeof digits, c.integer).ptr);
      return;
    }
    default: out += c.text; return;
  }
}

void append_cell_json(std::string &out, const cell &c) {
  switch (c.kind) {
    case cell_kind::null_value: out += "null"; return;
    case cell_kind::string: json::append_quoted(out, c.text); return;
    default: append_cell_text(out, c); return;
  }
}

void append_row_json(std::string &out, const compiled_view &v, const row &r) {
  const auto &keys = v.compiled().keys;
  out += '{';
  for (size_t i = 0; i < keys.size(); ++i) {
    if (i) out += ',';
    out += keys[i];
    if (i < r.cells.size()) {
      append_cell_json(out, r.cells[i]);
    } else {
      out += "null";
    }
  }
  out += '}';
}

std::string rows_to_json(const compiled_view &v, const std::vector<row> &rows) {
  std::string out = "[";
  for (size_t i = 0; i < rows.size(); ++i) {
    if (i) out += ',';
    append_row_json(out, v, rows[i]);
  }
  out += ']';
  return out;
}

}  // namespace quire::view
