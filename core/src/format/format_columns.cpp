// A table handed over as columns (the npm package's format.write of row objects): each row's value
// is a value_kind, the JSON value an NDJSON line would hold for the key, read here into the very
// cells write_ndjson makes of that value (format_input.cpp's ndjson_rows), so both give the same
// bytes. Inference folds each column's values in row order with the NDJSON path's rules and keeps
// the first row that fails, as a line-by-line reading would meet it.
#include <algorithm>
#include <charconv>
#include <cmath>
#include <unordered_map>

#include "format_internal.h"

namespace quire::format {

using namespace detail;

namespace {

constexpr uint8_t KIND_COUNT = static_cast<uint8_t>(value_kind::json_text) + 1;

bool text_like(value_kind k) noexcept {
  return k == value_kind::number_text || k == value_kind::text || k == value_kind::json_text;
}

quire::error bad_columns(std::string message) { return quire::error(error_code::INVALID_ARGUMENT, std::move(message)); }

quire::error at_row(quire::error e, uint64_t row, std::string_view column) {
  e.line = static_cast<uint32_t>(std::min<uint64_t>(row + 1, UINT32_MAX));
  if (e.path.empty()) e.path = std::string(column);
  return e;
}

/// Checks that every span is as long as the kinds need and that the offsets stay in the text.
result<void> check_columns(std::span<const column_input> columns, uint64_t rows) {
  if (columns.size() > MAX_COLUMNS) return bad_columns("more than " + std::to_string(MAX_COLUMNS) + " columns");
  std::unordered_map<std::string_view, size_t> names;
  for (const auto &c : columns) {
    if (c.name.empty()) return bad_columns("a column has an empty name");
    if (!names.emplace(c.name, 0).second) return bad_columns("column '" + std::string(c.name) + "' is given twice");
    if (c.kinds.size() != rows)
      return bad_columns("column '" + std::string(c.name) + "' has " + std::to_string(c.kinds.size()) + " kinds for " +
                         std::to_string(rows) + " rows");
    bool ints = false, reals = false, text = false;
    for (uint8_t k : c.kinds) {
      if (k >= KIND_COUNT) return bad_columns("column '" + std::string(c.name) + "' has an unknown value kind");
      ints |= k == static_cast<uint8_t>(value_kind::integer);
      reals |= k == static_cast<uint8_t>(value_kind::real);
      text |= text_like(static_cast<value_kind>(k));
    }
    auto short_span = [&](std::string_view what) {
      return bad_columns("column '" + std::string(c.name) + "': " + std::string(what) + " shorter than its rows");
    };
    if (ints && c.ints.size() < rows) return short_span("ints");
    if (reals && c.reals.size() < rows) return short_span("reals");
    if (text) {
      if (c.text_offsets.size() < rows + 1) return short_span("text_offsets");
      for (uint64_t r = 0; r < rows; ++r) {
        if (c.text_offsets[r] > c.text_offsets[r + 1])
          return bad_columns("column '" + std::string(c.name) + "': text offsets go back at row " +
                             std::to_string(r + 1));
      }
      if (c.text_offsets[rows] > c.text.size())
        return bad_columns("column '" + std::string(c.name) + "': text offsets pass the end of its text");
    }
  }
  return {};
}

std::string_view text_at(const column_input &c, uint64_t r) {
  return c.text.substr(c.text_offsets[r], c.text_offsets[r + 1] - c.text_offsets[r]);
}

/// 2^53: below it an integral double's JSON text is its exact digits.
constexpr double EXACT_INTEGERS = 9007199254740992.0;

/// The type a real infers as: the type of its JSON text (append_double's, as JavaScript prints it).
column_type real_type(double d, std::string &scratch) {
  if (std::fabs(d) < EXACT_INTEGERS && std::trunc(d) == d) return column_type::integer;
  scratch.clear();
  append_double(scratch, d);
  return number_text_type(scratch);
}

/// The cell write_ndjson makes of a JSON number with text `t` in a column of `type`.
cell number_text_cell(column_type type, std::string_view t) {
  if (type == column_type::decimal) return cell::text(t);
  if (type == column_type::integer || type == column_type::date || type == column_type::timestamp) {
    int64_t i = 0;
    if (classify_number(t) == number_class::integer) {
      auto [p, ec] = std::from_chars(t.data(), t.data() + t.size(), i);
      if (ec == std::errc() && p == t.data() + t.size()) return cell::of(i);
    }
  }
  return cell::of(parse_double(t));
}

/// The same for a real: its text only when it is not exactly an integer below 2^53.
cell real_cell(column_type type, double d, std::string &scratch) {
  if (!std::isfinite(d)) return cell::null();
  const bool exact_integer = std::fabs(d) < EXACT_INTEGERS && std::trunc(d) == d;
  switch (type) {
    case column_type::integer:
    case column_type::date:
    case column_type::timestamp:
      if (exact_integer) return cell::of(static_cast<int64_t>(d));
      if (std::trunc(d) != d) return cell::of(d);
      scratch.clear();
      append_double(scratch, d);
      return number_text_cell(type, scratch);
    // -0 prints as 0, which reads back as +0. A decimal's text is append_double's: the writer
    // makes it so.
    default: return cell::of(d == 0 ? 0.0 : d);
  }
}

/// One column's type over its rows; the first row where it fails.
struct column_inference {
  std::optional<column_type> type;
  uint64_t failed_row = UINT64_MAX;
  column_type before = column_type::string, then = column_type::string;
};

column_inference infer_column(const column_input &c, uint64_t rows, uint64_t stop_at) {
  column_inference out;
  std::string scratch;
  for (uint64_t r = 0; r < rows && r < stop_at; ++r) {
    std::optional<column_type> t;
    switch (static_cast<value_kind>(c.kinds[r])) {
      case value_kind::absent:
      case value_kind::null_value: break;
      case value_kind::boolean_false:
      case value_kind::boolean_true: t = column_type::boolean; break;
      case value_kind::integer: t = column_type::integer; break;
      case value_kind::real:
        if (std::isfinite(c.reals[r])) t = real_type(c.reals[r], scratch);
        break;
      case value_kind::number_text: t = number_text_type(text_at(c, r)); break;
      case value_kind::text: t = text_value_type(text_at(c, r)); break;
      case value_kind::json_text: t = column_type::json; break;
    }
    if (!t) continue;
    if (!out.type) {
      out.type = t;
      continue;
    }
    auto j = join_types(*out.type, *t, false);
    if (!j) {
      out.failed_row = r;
      out.before = *out.type;
      out.then = *t;
      return out;
    }
    out.type = j;
  }
  return out;
}

result<format::schema> infer_checked(std::span<const column_input> columns, uint64_t rows) {
  if (columns.empty()) return quire::error(error_code::EMPTY_INPUT, "the rows hold no object with a key");
  format::schema s;
  // The first failing row over all columns (an earlier column first within a row): only rows
  // before the failure found so far need looking at.
  uint64_t failed_row = UINT64_MAX;
  size_t failed_column = 0;
  column_inference failure;
  for (size_t i = 0; i < columns.size(); ++i) {
    auto inf = infer_column(columns[i], rows, failed_row == UINT64_MAX ? UINT64_MAX : failed_row + 1);
    if (inf.failed_row < failed_row) {
      failed_row = inf.failed_row;
      failed_column = i;
      failure = inf;
    }
    s.columns.push_back({std::string(columns[i].name), inf.type.value_or(column_type::string)});
  }
  if (failed_row != UINT64_MAX) {
    const std::string name(columns[failed_column].name);
    return at_row(quire::error(error_code::SCHEMA_MISMATCH,
                               "column '" + name + "' holds " + std::string(type_name(failure.before)) +
                                   " values and then " + std::string(type_name(failure.then))),
                  failed_row, name);
  }
  return s;
}

}  // namespace

result<format::schema> infer_columns_schema(std::span<const column_input> columns, uint64_t rows) {
  auto ok = check_columns(columns, rows);
  if (!ok) return std::move(ok).error();
  return infer_checked(columns, rows);
}

result<uint64_t> write_columns(std::span<const column_input> columns, uint64_t rows, const write_options &options,
                               byte_sink &sink, const input_options &input) {
  auto ok = check_columns(columns, rows);
  if (!ok) return std::move(ok).error();
  format::schema sch;
  if (input.schema) {
    sch = *input.schema;
  } else {
    auto inferred = infer_checked(columns, rows);
    if (!inferred) return std::move(inferred).error();
    sch = std::move(inferred).value();
  }
  // Which given column feeds each schema column; a column the schema lacks is an unknown key at
  // its first row that has it (write_ndjson's error for that line).
  // Rows before it are written first, so that an earlier row's bad value is the error, as it is
  // for the NDJSON read line by line.
  std::vector<const column_input *> source(sch.columns.size(), nullptr);
  uint64_t unknown_row = UINT64_MAX;
  std::string unknown_name;
  for (const auto &c : columns) {
    auto at = sch.find(c.name);
    if (at) {
      source[*at] = &c;
      continue;
    }
    auto first = std::find_if(c.kinds.begin(), c.kinds.end(),
                              [](uint8_t k) { return k != static_cast<uint8_t>(value_kind::absent); });
    const auto row_of = static_cast<uint64_t>(first - c.kinds.begin());
    if (first != c.kinds.end() && row_of < unknown_row) {
      unknown_row = row_of;
      unknown_name = std::string(c.name);
    }
  }
  auto w = writer::create(sch, options, sink);
  if (!w) return std::move(w).error();
  std::vector<cell> row(sch.columns.size());
  std::vector<std::string> json_text(sch.columns.size()), scratch(sch.columns.size());
  for (uint64_t r = 0; r < rows; ++r) {
    if (r == unknown_row)
      return at_row(
          quire::error(error_code::SCHEMA_MISMATCH, "key '" + unknown_name + "' is not a column of the schema"), r,
          unknown_name);
    for (size_t c = 0; c < sch.columns.size(); ++c) {
      const column_input *col = source[c];
      cell &out = row[c];
      out = cell::null();
      if (!col) continue;
      const column_type type = sch.columns[c].type;
      switch (static_cast<value_kind>(col->kinds[r])) {
        case value_kind::absent:
        case value_kind::null_value: break;
        case value_kind::boolean_false: out = cell::of(false); break;
        case value_kind::boolean_true: out = cell::of(true); break;
        case value_kind::integer:
          // As the integer's digits read: an integer cell where NDJSON's get_int64 gives one, else
          // the double a float or text column sees.
          if (type == column_type::integer || type == column_type::date || type == column_type::timestamp ||
              type == column_type::decimal)
            out = cell::of(col->ints[r]);
          else out = cell::of(static_cast<double>(col->ints[r]));
          break;
        case value_kind::real: out = real_cell(type, col->reals[r], scratch[c]); break;
        case value_kind::number_text: {
          auto t = text_at(*col, r);
          if (classify_number(t) == number_class::not_a_number)
            return at_row(bad_columns("row " + std::to_string(r + 1) + ": '" + std::string(t.substr(0, 40)) +
                                      "' is not a JSON number (column '" + std::string(col->name) + "')"),
                          r, col->name);
          out = number_text_cell(type, t);
          break;
        }
        case value_kind::text: out = cell::text(text_at(*col, r)); break;
        case value_kind::json_text: {
          auto t = text_at(*col, r);
          auto doc = json::parse(t);
          if (!doc) return at_row(std::move(doc).error(), r, col->name);
          const json::kind k = doc->root().type();
          if (k != json::kind::object && k != json::kind::array)
            return at_row(bad_columns("row " + std::to_string(r + 1) + ": column '" + std::string(col->name) +
                                      "': json_text holds a JSON " + std::string(json::kind_name(k)) +
                                      ", not an object or an array"),
                          r, col->name);
          if (type != column_type::json)
            return at_row(quire::error(error_code::SCHEMA_MISMATCH,
                                       "column '" + sch.columns[c].name + "' (" + std::string(type_name(type)) +
                                           ") cannot hold a JSON " + std::string(json::kind_name(k))),
                          r, sch.columns[c].name);
          json_text[c] = json::to_json(doc->root());
          out = cell::text(json_text[c]);
          break;
        }
      }
    }
    auto a = w.value()->append_row(row);
    if (!a) return at_row(std::move(a).error(), r, "");
  }
  auto f = w.value()->finish();
  if (!f) return std::move(f).error();
  return w.value()->rows();
}

}  // namespace quire::format
