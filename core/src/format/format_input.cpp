// NDJSON and CSV into the writer: schema inference (one pass) and conversion of each record to
// cells (a second pass). Each NDJSON line is parsed alone, so memory holds one line's document
// plus the writer's chunk.
#include <charconv>
#include <unordered_map>

#include "format_internal.h"

namespace quire::format {

using namespace detail;

namespace {

/// A column's type while inferring: nullopt until a non-null value is seen.
struct inferred {
  std::string name;
  std::optional<column_type> type;
};

/// The type both a and b fit, or nullopt. In CSV (`text_input`) every other mix becomes string.
std::optional<column_type> join(column_type a, column_type b, bool text_input) {
  using T = column_type;
  if (a == b) return a;
  auto is = [&](T x, T y) { return (a == x && b == y) || (a == y && b == x); };
  if (is(T::integer, T::float64)) return T::float64;
  if (is(T::integer, T::decimal) || is(T::float64, T::decimal)) return T::decimal;
  if (is(T::date, T::timestamp)) return T::timestamp;
  if (is(T::date, T::string) || is(T::timestamp, T::string)) return T::string;
  if (text_input) return T::string;
  return std::nullopt;
}

column_type text_type(std::string_view s) {
  if (parse_date(s)) return column_type::date;
  if (parse_timestamp(s)) return column_type::timestamp;
  return column_type::string;
}

column_type number_type(std::string_view text) {
  switch (classify_number(text)) {
    case number_class::integer: return column_type::integer;
    case number_class::real: return column_type::float64;
    default: return column_type::decimal;
  }
}

/// Splits NDJSON into lines, skipping blank ones; calls fn(line, offset, line_number).
template <typename Fn>
result<void> for_each_line(std::string_view text, size_t max_line_bytes, Fn fn) {
  size_t pos = 0;
  uint32_t line_no = 0;
  while (pos < text.size()) {
    size_t end = text.find('\n', pos);
    if (end == std::string_view::npos) end = text.size();
    ++line_no;
    std::string_view line = text.substr(pos, end - pos);
    size_t start = pos;
    pos = end + 1;
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    if (line.find_first_not_of(" \t\r") == std::string_view::npos) continue;
    if (line.size() > max_line_bytes) {
      quire::error e(error_code::LINE_TOO_LONG, "a line is longer than max_line_bytes (" + std::to_string(max_line_bytes) + ")", start);
      e.line = line_no;
      e.column = 1;
      return e;
    }
    auto r = fn(line, start, line_no);
    if (!r) return r;
  }
  return {};
}

/// Moves an error found inside one line to the whole input's coordinates.
quire::error at_line(quire::error e, size_t line_offset, uint32_t line_no, uint64_t offset_in_line) {
  e.offset = line_offset + (offset_in_line == quire::error::NO_OFFSET ? 0 : offset_in_line);
  e.line = line_no;
  e.column = static_cast<uint32_t>((offset_in_line == quire::error::NO_OFFSET ? 0 : offset_in_line) + 1);
  return e;
}

result<json::document> parse_line(std::string_view line, size_t offset, uint32_t line_no, const json::limits &lim) {
  auto doc = json::parse(line, lim);
  if (!doc) {
    auto e = std::move(doc).error();
    uint64_t in_line = e.offset;
    return at_line(std::move(e), offset, line_no, in_line);
  }
  if (doc->root().type() != json::kind::object) {
    return at_line(quire::error(error_code::WRONG_TYPE, "an NDJSON line must hold a JSON object"), offset, line_no, 0);
  }
  return doc;
}

format::schema finish_schema(std::vector<inferred> &cols) {
  format::schema s;
  for (auto &c : cols) s.columns.push_back({c.name, c.type.value_or(column_type::string)});
  return s;
}

}  // namespace

result<format::schema> infer_ndjson_schema(std::string_view text, const input_options &options) {
  std::vector<inferred> cols;
  std::unordered_map<std::string, size_t> by_name;
  auto r = for_each_line(text, options.max_line_bytes, [&](std::string_view line, size_t offset, uint32_t line_no) -> result<void> {
    auto doc = parse_line(line, offset, line_no, options.json);
    if (!doc) return std::move(doc).error();
    for (auto m : doc->root().get_object().value()) {
      auto [it, added] = by_name.try_emplace(std::string(m.key), cols.size());
      if (added) {
        if (cols.size() >= MAX_COLUMNS) return at_line(quire::error(error_code::INVALID_ARGUMENT, "more than " + std::to_string(MAX_COLUMNS) + " columns"), offset, line_no, m.val.offset());
        cols.push_back({std::string(m.key), std::nullopt});
      }
      std::optional<column_type> t;
      switch (m.val.type()) {
        case json::kind::null_value: break;
        case json::kind::boolean: t = column_type::boolean; break;
        case json::kind::number: t = number_type(m.val.get_number_text().value()); break;
        case json::kind::string: t = text_type(m.val.get_string().value()); break;
        case json::kind::array:
        case json::kind::object: t = column_type::json; break;
      }
      if (!t) continue;
      auto &col = cols[it->second];
      if (!col.type) {
        col.type = t;
        continue;
      }
      auto j = join(*col.type, *t, false);
      if (!j) {
        quire::error e(error_code::SCHEMA_MISMATCH, "column '" + col.name + "' holds " + std::string(type_name(*col.type)) +
                                                        " values and then " + std::string(type_name(*t)));
        e.path = col.name;
        return at_line(std::move(e), offset, line_no, m.val.offset());
      }
      col.type = j;
    }
    return {};
  });
  if (!r) return std::move(r).error();
  if (cols.empty()) return quire::error(error_code::EMPTY_INPUT, "the NDJSON holds no object with a key");
  return finish_schema(cols);
}

result<uint64_t> write_ndjson(std::string_view text, const write_options &options, byte_sink &sink, const input_options &input) {
  format::schema sch;
  if (input.schema) {
    sch = *input.schema;
  } else {
    auto s = infer_ndjson_schema(text, input);
    if (!s) return std::move(s).error();
    sch = std::move(s).value();
  }
  auto w = writer::create(sch, options, sink);
  if (!w) return std::move(w).error();
  std::unordered_map<std::string_view, size_t> by_name;
  for (size_t i = 0; i < sch.columns.size(); ++i) by_name.emplace(sch.columns[i].name, i);
  std::vector<cell> row(sch.columns.size());
  std::vector<std::string> json_text(sch.columns.size());
  std::vector<uint64_t> value_offset(sch.columns.size());
  auto r = for_each_line(text, input.max_line_bytes, [&](std::string_view line, size_t offset, uint32_t line_no) -> result<void> {
    auto doc = parse_line(line, offset, line_no, input.json);
    if (!doc) return std::move(doc).error();
    std::fill(row.begin(), row.end(), cell::null());
    for (auto m : doc->root().get_object().value()) {
      auto it = by_name.find(m.key);
      if (it == by_name.end()) {
        quire::error e(error_code::SCHEMA_MISMATCH, "key '" + std::string(m.key) + "' is not a column of the schema");
        e.path = std::string(m.key);
        return at_line(std::move(e), offset, line_no, m.val.offset());
      }
      size_t c = it->second;
      value_offset[c] = m.val.offset();
      cell &out = row[c];
      const column_type type = sch.columns[c].type;
      switch (m.val.type()) {
        case json::kind::null_value: out = cell::null(); break;
        case json::kind::boolean: out = cell::of(m.val.get_bool().value()); break;
        case json::kind::number: {
          auto t = m.val.get_number_text().value();
          if (type == column_type::decimal) {
            out = cell::text(t);
          } else if (type == column_type::integer || type == column_type::date || type == column_type::timestamp) {
            auto i = m.val.get_int64();
            out = i ? cell::of(*i) : cell::of(m.val.get_double().value());
          } else {
            out = cell::of(m.val.get_double().value());
          }
          break;
        }
        case json::kind::string: out = cell::text(m.val.get_string().value()); break;
        case json::kind::array:
        case json::kind::object:
          if (type != column_type::json) {
            quire::error e(error_code::SCHEMA_MISMATCH, "column '" + sch.columns[c].name + "' (" + std::string(type_name(type)) +
                                                            ") cannot hold a JSON " + std::string(json::kind_name(m.val.type())));
            e.path = sch.columns[c].name;
            return at_line(std::move(e), offset, line_no, m.val.offset());
          }
          json_text[c] = json::to_json(m.val);
          out = cell::text(json_text[c]);
          break;
      }
    }
    auto a = w.value()->append_row(row);
    if (!a) {
      auto e = std::move(a).error();
      uint64_t in_line = 0;
      if (auto c = sch.find(e.path)) in_line = value_offset[*c];
      return at_line(std::move(e), offset, line_no, in_line);
    }
    return {};
  });
  if (!r) return std::move(r).error();
  auto f = w.value()->finish();
  if (!f) return std::move(f).error();
  return w.value()->rows();
}

// --- CSV ------------------------------------------------------------------------------------------

namespace {

std::optional<column_type> csv_field_type(std::string_view f) {
  if (f.empty()) return std::nullopt;
  switch (classify_number(f)) {
    case number_class::integer: return column_type::integer;
    case number_class::real: return column_type::float64;
    case number_class::decimal: return column_type::decimal;
    case number_class::not_a_number: break;
  }
  if (f == "true" || f == "false") return column_type::boolean;
  return text_type(f);
}

result<std::vector<std::string>> read_header(csv::reader &rd, std::vector<std::string_view> &fields) {
  auto more = rd.next(fields);
  if (!more) return std::move(more).error();
  if (!*more) return quire::error(error_code::EMPTY_INPUT, "the CSV has no header row");
  std::vector<std::string> names;
  for (size_t i = 0; i < fields.size(); ++i) {
    std::string name(fields[i]);
    if (name.empty()) return csv::make_error("column " + std::to_string(i + 1) + " of the header has no name", rd.record_offset(), rd.record_line(), static_cast<uint32_t>(i + 1));
    for (const auto &n : names) {
      if (n == name) return csv::make_error("the header names column '" + name + "' twice", rd.record_offset(), rd.record_line(), static_cast<uint32_t>(i + 1));
    }
    names.push_back(std::move(name));
  }
  return names;
}

result<void> check_width(const csv::reader &rd, size_t got, size_t want) {
  if (got == want) return {};
  return csv::make_error("a row has " + std::to_string(got) + " fields; the header has " + std::to_string(want), rd.record_offset(),
                         rd.record_line(), static_cast<uint32_t>(std::min(got, want) + 1));
}

}  // namespace

result<format::schema> infer_csv_schema(std::string_view text, const input_options &options) {
  csv::reader rd(text, options.csv);
  std::vector<std::string_view> fields;
  auto names = read_header(rd, fields);
  if (!names) return std::move(names).error();
  std::vector<inferred> cols;
  for (auto &n : *names) cols.push_back({n, std::nullopt});
  while (true) {
    auto more = rd.next(fields);
    if (!more) return std::move(more).error();
    if (!*more) break;
    auto w = check_width(rd, fields.size(), cols.size());
    if (!w) return std::move(w).error();
    for (size_t i = 0; i < fields.size(); ++i) {
      auto t = csv_field_type(fields[i]);
      if (!t) continue;
      cols[i].type = cols[i].type ? join(*cols[i].type, *t, true) : t;
    }
  }
  return finish_schema(cols);
}

result<uint64_t> write_csv(std::string_view text, const write_options &options, byte_sink &sink, const input_options &input) {
  format::schema sch;
  if (input.schema) {
    sch = *input.schema;
  } else {
    auto s = infer_csv_schema(text, input);
    if (!s) return std::move(s).error();
    sch = std::move(s).value();
  }
  csv::reader rd(text, input.csv);
  std::vector<std::string_view> fields;
  auto names = read_header(rd, fields);
  if (!names) return std::move(names).error();
  // Columns are matched by name, so a given schema may list them in another order.
  std::vector<size_t> to_column(names->size());
  for (size_t i = 0; i < names->size(); ++i) {
    auto c = sch.find((*names)[i]);
    if (!c) {
      quire::error e = csv::make_error("header column '" + (*names)[i] + "' is not in the schema", rd.record_offset(), rd.record_line(), static_cast<uint32_t>(i + 1));
      e.code = error_code::SCHEMA_MISMATCH;
      e.path = (*names)[i];
      return e;
    }
    to_column[i] = *c;
  }
  auto w = writer::create(sch, options, sink);
  if (!w) return std::move(w).error();
  std::vector<cell> row(sch.columns.size());
  while (true) {
    auto more = rd.next(fields);
    if (!more) return std::move(more).error();
    if (!*more) break;
    auto width = check_width(rd, fields.size(), names->size());
    if (!width) return std::move(width).error();
    std::fill(row.begin(), row.end(), cell::null());
    for (size_t i = 0; i < fields.size(); ++i) {
      std::string_view f = fields[i];
      if (f.empty()) continue;
      size_t c = to_column[i];
      cell &out = row[c];
      auto bad = [&](std::string_view what) {
        // Appended piece by piece: g++ 12 warns (-Wrestrict, a false positive) on `"'" + std::string(...)`.
        std::string msg = "'";
        msg.append(f.substr(0, 40)).append("' is not ").append(what).append(" (column '").append(sch.columns[c].name).append("')");
        quire::error e = csv::make_error(std::move(msg), rd.record_offset(), rd.record_line(), static_cast<uint32_t>(i + 1));
        e.code = error_code::SCHEMA_MISMATCH;
        e.path = sch.columns[c].name;
        return e;
      };
      switch (sch.columns[c].type) {
        case column_type::integer: {
          int64_t v;
          auto [p, ec] = std::from_chars(f.data(), f.data() + f.size(), v);
          if (ec != std::errc() || p != f.data() + f.size()) return bad("an integer");
          out = cell::of(v);
          break;
        }
        case column_type::float64:
          if (classify_number(f) == number_class::not_a_number) return bad("a number");
          out = cell::of(parse_double(f));
          break;
        case column_type::boolean:
          if (f != "true" && f != "false") return bad("true or false");
          out = cell::of(f == "true");
          break;
        default: out = cell::text(f); break;
      }
    }
    auto a = w.value()->append_row(row);
    if (!a) {
      auto e = std::move(a).error();
      e.offset = rd.record_offset();
      e.line = rd.record_line();
      if (auto c = sch.find(e.path)) {
        for (size_t i = 0; i < to_column.size(); ++i) if (to_column[i] == *c) e.column = static_cast<uint32_t>(i + 1);
      }
      return e;
    }
  }
  auto f = w.value()->finish();
  if (!f) return std::move(f).error();
  return w.value()->rows();
}

}  // namespace quire::format
