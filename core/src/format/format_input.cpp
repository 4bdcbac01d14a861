// NDJSON and CSV into the writer: schema inference and conversion of each record to cells. The
// whole-text calls (write_ndjson, write_csv) infer in one pass and convert in a second; the
// text_writer feeds the very same per-line and per-record steps from pieces of input, so both give
// the same bytes. NDJSON is cut into lines by ndjson::line_feeder (its limit and LINE_TOO_LONG
// text), CSV pieces into records by csv::record_scanner. Each NDJSON line is parsed alone, so
// memory holds one line's document plus the writer's chunk.
#include <algorithm>
#include <charconv>
#include <cstring>
#include <unordered_map>

#include "format_internal.h"
#include "quire/ndjson.h"

namespace quire::format {

namespace detail {

std::optional<column_type> join_types(column_type a, column_type b, bool text_input) {
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

column_type text_value_type(std::string_view s) {
  if (parse_date(s)) return column_type::date;
  if (parse_timestamp(s)) return column_type::timestamp;
  return column_type::string;
}

column_type number_text_type(std::string_view text) {
  switch (classify_number(text)) {
    case number_class::integer: return column_type::integer;
    case number_class::real: return column_type::float64;
    default: return column_type::decimal;
  }
}

}  // namespace detail

using namespace detail;

namespace {

/// A column's type while inferring: nullopt until a non-null value is seen.
struct inferred {
  std::string name;
  std::optional<column_type> type;
};

format::schema finish_schema(const std::vector<inferred> &cols) {
  format::schema s;
  for (const auto &c : cols) s.columns.push_back({c.name, c.type.value_or(column_type::string)});
  return s;
}

// --- NDJSON -----------------------------------------------------------------------------------------

/// Splits NDJSON into lines (ndjson::line_feeder), skipping blank ones; calls fn(line, offset, line_number).
template <typename Fn>
result<void> for_each_line(std::string_view text, size_t max_line_bytes, Fn fn) {
  ndjson::line_feeder lines(max_line_bytes);
  lines.feed(text, true);
  return lines.each([&](const ndjson::line &l) -> result<void> {
    if (l.blank()) return {};
    return fn(l.text, l.offset, static_cast<uint32_t>(l.number));
  });
}

/// Moves an error found inside one line to the whole input's coordinates.
quire::error at_line(quire::error e, uint64_t line_offset, uint32_t line_no, uint64_t offset_in_line) {
  e.offset = line_offset + (offset_in_line == quire::error::NO_OFFSET ? 0 : offset_in_line);
  e.line = line_no;
  e.column = static_cast<uint32_t>((offset_in_line == quire::error::NO_OFFSET ? 0 : offset_in_line) + 1);
  return e;
}

result<json::document> parse_line(std::string_view line, uint64_t offset, uint32_t line_no, const json::limits &lim) {
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

/// NDJSON schema inference, one line at a time.
class ndjson_inference {
 public:
  result<void> add(std::string_view line, uint64_t offset, uint32_t line_no, const json::limits &lim) {
    auto doc = parse_line(line, offset, line_no, lim);
    if (!doc) return std::move(doc).error();
    for (auto m : doc->root().get_object().value()) {
      auto [it, added] = by_name_.try_emplace(std::string(m.key), cols_.size());
      if (added) {
        if (cols_.size() >= MAX_COLUMNS)
          return at_line(
              quire::error(error_code::INVALID_ARGUMENT, "more than " + std::to_string(MAX_COLUMNS) + " columns"),
              offset, line_no, m.val.offset());
        cols_.push_back({std::string(m.key), std::nullopt});
      }
      std::optional<column_type> t;
      switch (m.val.type()) {
        case json::kind::null_value: break;
        case json::kind::boolean: t = column_type::boolean; break;
        case json::kind::number: t = number_text_type(m.val.get_number_text().value()); break;
        case json::kind::string: t = text_value_type(m.val.get_string().value()); break;
        case json::kind::array:
        case json::kind::object: t = column_type::json; break;
      }
      if (!t) continue;
      auto &col = cols_[it->second];
      if (!col.type) {
        col.type = t;
        continue;
      }
      auto j = join_types(*col.type, *t, false);
      if (!j) {
        quire::error e(error_code::SCHEMA_MISMATCH, "column '" + col.name + "' holds " +
                                                        std::string(type_name(*col.type)) + " values and then " +
                                                        std::string(type_name(*t)));
        e.path = col.name;
        return at_line(std::move(e), offset, line_no, m.val.offset());
      }
      col.type = j;
    }
    return {};
  }

  bool has_columns() const noexcept { return !cols_.empty(); }

  result<format::schema> schema() const {
    if (cols_.empty()) return quire::error(error_code::EMPTY_INPUT, "the NDJSON holds no object with a key");
    return finish_schema(cols_);
  }

 private:
  std::vector<inferred> cols_;
  std::unordered_map<std::string, size_t> by_name_;
};

/// Converts NDJSON lines to rows of a schema and appends them to a writer.
class ndjson_rows {
 public:
  ndjson_rows(const format::schema &sch, writer &w)
      : sch_(sch), w_(w), row_(sch.columns.size()), json_text_(sch.columns.size()), value_offset_(sch.columns.size()) {
    for (size_t i = 0; i < sch_.columns.size(); ++i) by_name_.emplace(sch_.columns[i].name, i);
  }

  result<void> add(std::string_view line, uint64_t offset, uint32_t line_no, const json::limits &lim) {
    auto doc = parse_line(line, offset, line_no, lim);
    if (!doc) return std::move(doc).error();
    std::fill(row_.begin(), row_.end(), cell::null());
    for (auto m : doc->root().get_object().value()) {
      auto it = by_name_.find(m.key);
      if (it == by_name_.end()) {
        quire::error e(error_code::SCHEMA_MISMATCH, "key '" + std::string(m.key) + "' is not a column of the schema");
        e.path = std::string(m.key);
        return at_line(std::move(e), offset, line_no, m.val.offset());
      }
      size_t c = it->second;
      value_offset_[c] = m.val.offset();
      cell &out = row_[c];
      const column_type type = sch_.columns[c].type;
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
            quire::error e(error_code::SCHEMA_MISMATCH, "column '" + sch_.columns[c].name + "' (" +
                                                            std::string(type_name(type)) + ") cannot hold a JSON " +
                                                            std::string(json::kind_name(m.val.type())));
            e.path = sch_.columns[c].name;
            return at_line(std::move(e), offset, line_no, m.val.offset());
          }
          json_text_[c] = json::to_json(m.val);
          out = cell::text(json_text_[c]);
          break;
      }
    }
    auto a = w_.append_row(row_);
    if (!a) {
      auto e = std::move(a).error();
      uint64_t in_line = 0;
      if (auto c = sch_.find(e.path)) in_line = value_offset_[*c];
      return at_line(std::move(e), offset, line_no, in_line);
    }
    return {};
  }

 private:
  const format::schema &sch_;
  writer &w_;
  std::unordered_map<std::string_view, size_t> by_name_;
  std::vector<cell> row_;
  std::vector<std::string> json_text_;
  std::vector<uint64_t> value_offset_;
};

// --- CSV --------------------------------------------------------------------------------------------

std::optional<column_type> csv_field_type(std::string_view f) {
  if (f.empty()) return std::nullopt;
  switch (classify_number(f)) {
    case number_class::integer: return column_type::integer;
    case number_class::real: return column_type::float64;
    case number_class::decimal: return column_type::decimal;
    case number_class::not_a_number: break;
  }
  if (f == "true" || f == "false") return column_type::boolean;
  return text_value_type(f);
}

/// Where a record begins in the whole input.
struct record_at {
  uint64_t offset;
  uint32_t line;
};

/// Reads the records of `text`, which begins at input offset `base_offset` on line `base_line`;
/// calls fn(fields, record_at). The reader's own coordinates are moved to the whole input's.
template <typename Fn>
result<void> for_each_record(std::string_view text, uint64_t base_offset, uint32_t base_line, const csv::options &opts,
                             std::vector<std::string_view> &fields, Fn fn) {
  csv::reader rd(text, opts);
  while (true) {
    auto more = rd.next(fields);
    if (!more) {
      auto e = std::move(more).error();
      if (e.offset != quire::error::NO_OFFSET) e.offset += base_offset;
      if (e.line) e.line += base_line - 1;
      return e;
    }
    if (!*more) return {};
    auto r = fn(fields, record_at{base_offset + rd.record_offset(), base_line - 1 + rd.record_line()});
    if (!r) return r;
  }
}

result<std::vector<std::string>> header_names(const std::vector<std::string_view> &fields, record_at at) {
  std::vector<std::string> names;
  for (size_t i = 0; i < fields.size(); ++i) {
    std::string name(fields[i]);
    if (name.empty())
      return csv::make_error("column " + std::to_string(i + 1) + " of the header has no name", at.offset, at.line,
                             static_cast<uint32_t>(i + 1));
    for (const auto &n : names) {
      if (n == name)
        return csv::make_error("the header names column '" + name + "' twice", at.offset, at.line,
                               static_cast<uint32_t>(i + 1));
    }
    names.push_back(std::move(name));
  }
  return names;
}

result<void> check_width(record_at at, size_t got, size_t want) {
  if (got == want) return {};
  return csv::make_error("a row has " + std::to_string(got) + " fields; the header has " + std::to_string(want),
                         at.offset, at.line, static_cast<uint32_t>(std::min(got, want) + 1));
}

quire::error no_header() { return quire::error(error_code::EMPTY_INPUT, "the CSV has no header row"); }

/// CSV schema inference, one record at a time (the first is the header).
class csv_inference {
 public:
  result<void> add(const std::vector<std::string_view> &fields, record_at at) {
    if (!header_) {
      auto names = header_names(fields, at);
      if (!names) return std::move(names).error();
      for (auto &n : *names) cols_.push_back({std::move(n), std::nullopt});
      header_ = true;
      return {};
    }
    auto w = check_width(at, fields.size(), cols_.size());
    if (!w) return w;
    for (size_t i = 0; i < fields.size(); ++i) {
      auto t = csv_field_type(fields[i]);
      if (!t) continue;
      cols_[i].type = cols_[i].type ? join_types(*cols_[i].type, *t, true) : t;
    }
    return {};
  }
  bool has_header() const noexcept { return header_; }
  result<format::schema> schema() const {
    if (!header_) return no_header();
    return finish_schema(cols_);
  }

 private:
  std::vector<inferred> cols_;
  bool header_ = false;
};

/// Converts CSV records to rows of a schema: the first record is the header, matched to the
/// schema's columns by name (so a given schema may list them in another order); the writer is
/// created once the header is known to fit, as write_csv always did.
class csv_rows {
 public:
  csv_rows(const format::schema &sch, const write_options &options, byte_sink &sink)
      : sch_(sch), options_(options), sink_(sink), row_(sch.columns.size()) {}

  bool has_header() const noexcept { return header_; }
  writer *output() const noexcept { return w_.get(); }

  result<void> add(const std::vector<std::string_view> &fields, record_at at) {
    if (!header_) return header(fields, at);
    auto width = check_width(at, fields.size(), names_.size());
    if (!width) return width;
    std::fill(row_.begin(), row_.end(), cell::null());
    for (size_t i = 0; i < fields.size(); ++i) {
      std::string_view f = fields[i];
      if (f.empty()) continue;
      size_t c = to_column_[i];
      cell &out = row_[c];
      auto bad = [&](std::string_view what) {
        // Appended piece by piece: g++ 12 warns (-Wrestrict, a false positive) on `"'" + std::string(...)`.
        std::string msg = "'";
        msg.append(f.substr(0, 40))
            .append("' is not ")
            .append(what)
            .append(" (column '")
            .append(sch_.columns[c].name)
            .append("')");
        quire::error e = csv::make_error(std::move(msg), at.offset, at.line, static_cast<uint32_t>(i + 1));
        e.code = error_code::SCHEMA_MISMATCH;
        e.path = sch_.columns[c].name;
        return e;
      };
      switch (sch_.columns[c].type) {
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
    auto a = w_->append_row(row_);
    if (!a) {
      auto e = std::move(a).error();
      e.offset = at.offset;
      e.line = at.line;
      if (auto c = sch_.find(e.path)) {
        for (size_t i = 0; i < to_column_.size(); ++i)
          if (to_column_[i] == *c) e.column = static_cast<uint32_t>(i + 1);
      }
      return e;
    }
    return {};
  }

 private:
  result<void> header(const std::vector<std::string_view> &fields, record_at at) {
    auto names = header_names(fields, at);
    if (!names) return std::move(names).error();
    names_ = std::move(names).value();
    to_column_.resize(names_.size());
    for (size_t i = 0; i < names_.size(); ++i) {
      auto c = sch_.find(names_[i]);
      if (!c) {
        quire::error e = csv::make_error("header column '" + names_[i] + "' is not in the schema", at.offset, at.line,
                                         static_cast<uint32_t>(i + 1));
        e.code = error_code::SCHEMA_MISMATCH;
        e.path = names_[i];
        return e;
      }
      to_column_[i] = *c;
    }
    auto w = writer::create(sch_, options_, sink_);
    if (!w) return std::move(w).error();
    w_ = std::move(w).value();
    header_ = true;
    return {};
  }

  const format::schema &sch_;
  const write_options &options_;
  byte_sink &sink_;
  std::unique_ptr<writer> w_;
  bool header_ = false;
  std::vector<std::string> names_;
  std::vector<size_t> to_column_;
  std::vector<cell> row_;
};

/// The schema `input` gives, or the one `infer` finds over the whole text.
result<format::schema> given_or_inferred(std::string_view text, const input_options &input,
                                         result<format::schema> (*infer)(std::string_view, const input_options &)) {
  if (input.schema) return *input.schema;
  return infer(text, input);
}

/// Ends the file `w` writes; returns its rows.
result<uint64_t> finish_rows(writer &w) {
  auto f = w.finish();
  if (!f) return std::move(f).error();
  return w.rows();
}

}  // namespace

result<format::schema> infer_ndjson_schema(std::string_view text, const input_options &options) {
  ndjson_inference inf;
  auto r = for_each_line(text, options.max_line_bytes, [&](std::string_view line, uint64_t offset, uint32_t line_no) {
    return inf.add(line, offset, line_no, options.json);
  });
  if (!r) return std::move(r).error();
  return inf.schema();
}

result<uint64_t> write_ndjson(std::string_view text, const write_options &options, byte_sink &sink,
                              const input_options &input) {
  auto sch = given_or_inferred(text, input, infer_ndjson_schema);
  if (!sch) return std::move(sch).error();
  auto w = writer::create(*sch, options, sink);
  if (!w) return std::move(w).error();
  ndjson_rows rows(*sch, *w.value());
  auto r = for_each_line(text, input.max_line_bytes, [&](std::string_view line, uint64_t offset, uint32_t line_no) {
    return rows.add(line, offset, line_no, input.json);
  });
  if (!r) return std::move(r).error();
  return finish_rows(*w.value());
}

result<format::schema> infer_csv_schema(std::string_view text, const input_options &options) {
  csv_inference inf;
  std::vector<std::string_view> fields;
  auto r = for_each_record(text, 0, 1, options.csv, fields,
                           [&](const std::vector<std::string_view> &f, record_at at) { return inf.add(f, at); });
  if (!r) return std::move(r).error();
  return inf.schema();
}

result<uint64_t> write_csv(std::string_view text, const write_options &options, byte_sink &sink,
                           const input_options &input) {
  auto sch = given_or_inferred(text, input, infer_csv_schema);
  if (!sch) return std::move(sch).error();
  csv_rows rows(*sch, options, sink);
  std::vector<std::string_view> fields;
  auto r = for_each_record(text, 0, 1, input.csv, fields,
                           [&](const std::vector<std::string_view> &f, record_at at) { return rows.add(f, at); });
  if (!r) return std::move(r).error();
  if (!rows.has_header()) return no_header();
  return finish_rows(*rows.output());
}

// --- text_writer: the same steps, fed in pieces ---------------------------------------------------------

namespace {

/// Bytes of a CSV piece taken into the buffer at once, so a huge piece does not double its memory.
constexpr size_t FEED_SLICE = size_t{1} << 20;

}  // namespace

struct text_writer::impl {
  text_format kind;
  write_options options;
  byte_sink &sink;
  input_options input;

  // The schema, and what turns units into rows (ndjson_out / csv_out) once it is known. A unit is
  // one NDJSON line or one CSV record.
  std::optional<format::schema> sch;
  bool inferring = false;     // rows are held until the schema is inferred
  bool infer_only = false;    // a schema_inferrer: every row is inferred, none held or written
  bool sch_inferred = false;  // the schema came from the first rows, not from input_options
  ndjson_inference ndjson_inf;
  csv_inference csv_inf;
  uint64_t inferred_rows = 0;
  uint64_t inferred_end = 0;  // input offset where the inferred units end
  std::unique_ptr<writer> ndjson_writer;
  std::unique_ptr<ndjson_rows> ndjson_out;
  std::unique_ptr<csv_rows> csv_out;
  std::vector<std::string_view> fields;
  bool failed = false, finished = false;

  // NDJSON: the line feeder cuts the pieces into lines, holding only a line split across pieces.
  // While a schema is inferred, the lines read are copied here, to be written once it is known.
  ndjson::line_feeder lines;
  uint64_t fed = 0;  // input bytes fed so far
  struct held_line {
    size_t begin, size;  // in held_text
    uint64_t offset;
    uint32_t number;
  };
  std::string held_text;
  std::vector<held_line> held;

  // CSV: input not yet written, cut into records by the record scanner. Once written, a record's
  // bytes are dropped but its last byte ('\n') is kept in front of the next, so that a csv::reader
  // over "\n" + record skips it as a blank line and never takes the record's first bytes for a
  // byte order mark. While a schema is inferred nothing is dropped: the buffer starts at the
  // input's start.
  std::string buffer;
  uint64_t buffer_offset = 0;  // input offset of buffer[0]
  size_t unit_start = 0;       // buffer index of the record being scanned
  uint32_t unit_line = 1;      // its line
  size_t scan = 0;             // next buffer index to scan
  csv::record_scanner csv_scanner;
  bool start_checked = false;  // the byte order mark has been looked for

  impl(text_format k, const write_options &o, byte_sink &s, const input_options &in)
      : kind(k), options(o), sink(s), input(in), lines(in.max_line_bytes), csv_scanner(in.csv.delimiter) {}

  writer *output() const {
    return kind == text_format::ndjson ? ndjson_writer.get() : (csv_out ? csv_out->output() : nullptr);
  }

  bool ready() const noexcept { return kind == text_format::ndjson ? ndjson_inf.has_columns() : csv_inf.has_header(); }

  /// One complete unit, ending at input offset `end`: read by infer() while the schema is
  /// inferred, else by write().
  template <typename Infer, typename Write>
  result<void> unit(uint64_t end, Infer &&infer, Write &&write) {
    if (infer_only) return infer();
    if (inferring) {
      if (ready() && inferred_rows > 0 && end > input.infer_bytes) {
        auto f = end_inference();
        if (!f) return f;
      } else {
        auto r = infer();
        if (!r) return r;
        inferred_end = end;
        if (ready() && inferred_rows >= std::max<size_t>(input.infer_rows, 1)) return end_inference();
        if (!ready() && end > input.infer_bytes) {
          return quire::error(
              error_code::EMPTY_INPUT,
              kind == text_format::ndjson
                  ? "no object with a key in the first " + std::to_string(input.infer_bytes) + " bytes (infer_bytes)"
                  : "no header row in the first " + std::to_string(input.infer_bytes) + " bytes (infer_bytes)");
        }
        return {};
      }
    }
    auto r = write();
    if (!r && sch_inferred && r.code() == error_code::SCHEMA_MISMATCH) {
      auto e = std::move(r).error();
      e.message += " (the schema was inferred from the first " + std::to_string(inferred_rows) +
                   " rows; a given schema avoids this)";
      return e;
    }
    return r;
  }

  /// Reads a piece of NDJSON; `last`: the input ends with it.
  result<void> feed_lines(std::string_view piece, bool last) {
    lines.feed(piece, last);
    fed += piece.size();
    return lines.each([&](const ndjson::line &l) { return line(l); });
  }

  result<void> line(const ndjson::line &l) {
    const auto number = static_cast<uint32_t>(l.number);
    // Past its '\n', but for a last line without one.
    const uint64_t end = std::min(l.offset + l.bytes + 1, fed);
    return unit(
        end,
        [&]() -> result<void> {
          if (l.blank()) return {};
          auto r = ndjson_inf.add(l.text, l.offset, number, input.json);
          if (!r) return r;
          ++inferred_rows;
          if (!infer_only) {
            held.push_back({held_text.size(), l.text.size(), l.offset, number});
            held_text.append(l.text);
          }
          return {};
        },
        [&]() -> result<void> {
          if (l.blank()) return {};
          return ndjson_out->add(l.text, l.offset, number, input.json);
        });
  }

  /// Reads the CSV the buffer holds; `at_end`: the input is over, so a last record needs no line end.
  result<void> consume_records(bool at_end) {
    if (!start_checked) {
      if (buffer.size() < 3 && !at_end) return {};
      // csv::reader skips a byte order mark at the start of the input: so does the scan.
      if (buffer.size() >= 3 && static_cast<uint8_t>(buffer[0]) == 0xEF && static_cast<uint8_t>(buffer[1]) == 0xBB &&
          static_cast<uint8_t>(buffer[2]) == 0xBF) {
        scan = 3;
      }
      start_checked = true;
    }
    while (true) {
      const size_t end = csv_scanner.find_end(buffer, scan);
      if (end == std::string::npos) {
        scan = buffer.size();
        break;
      }
      scan = end;
      auto r = record(unit_start, end);
      if (!r) return r;
      unit_start = end;
      unit_line += csv_scanner.newlines();
      csv_scanner.next_record();
    }
    if (at_end && unit_start < buffer.size()) {
      auto r = record(unit_start, buffer.size());
      if (!r) return r;
      unit_start = buffer.size();
    }
    if (buffer.size() - unit_start > input.max_line_bytes) {
      quire::error e(error_code::LINE_TOO_LONG,
                     "a record is longer than max_line_bytes (" + std::to_string(input.max_line_bytes) + ")",
                     buffer_offset + unit_start);
      e.line = unit_line;
      e.column = 1;
      return e;
    }
    if ((!inferring || infer_only) && unit_start > 1) {
      const size_t drop = unit_start - 1;
      buffer.erase(0, drop);
      buffer_offset += drop;
      unit_start -= drop;
      scan -= drop;
    }
    return {};
  }

  /// One complete CSV record: buffer[begin, end).
  result<void> record(size_t begin, size_t end) {
    return unit(
        buffer_offset + end,
        [&] {
          return csv_units(begin, end, [&](const std::vector<std::string_view> &f, record_at at) -> result<void> {
            bool was_header = !csv_inf.has_header();
            auto r = csv_inf.add(f, at);
            if (!r) return r;
            if (!was_header) ++inferred_rows;
            return {};
          });
        },
        [&] {
          if (!csv_out) csv_out = std::make_unique<csv_rows>(*sch, options, sink);
          return csv_units(begin, end,
                           [&](const std::vector<std::string_view> &f, record_at at) { return csv_out->add(f, at); });
        });
  }

  /// The records of buffer[begin, end), read with the '\n' before them when there is one.
  template <typename Fn>
  result<void> csv_units(size_t begin, size_t end, Fn fn) {
    if (begin == 0) {
      return for_each_record(std::string_view(buffer).substr(0, end), buffer_offset, unit_line, input.csv, fields, fn);
    }
    return for_each_record(std::string_view(buffer).substr(begin - 1, end - begin + 1), buffer_offset + begin - 1,
                           unit_line - 1, input.csv, fields, fn);
  }

  /// The schema is known: write the units held for inference as the whole-text calls would.
  result<void> end_inference() {
    auto s = kind == text_format::ndjson ? ndjson_inf.schema() : csv_inf.schema();
    if (!s) return std::move(s).error();
    sch = std::move(s).value();
    inferring = false;
    sch_inferred = true;
    auto started = start_output();
    if (!started) return started;
    if (kind == text_format::ndjson) {
      for (const auto &h : held) {
        auto r = ndjson_out->add(std::string_view(held_text).substr(h.begin, h.size), h.offset, h.number, input.json);
        if (!r) return r;
      }
      held = {};
      held_text = {};
      return {};
    }
    csv_out = std::make_unique<csv_rows>(*sch, options, sink);
    return for_each_record(std::string_view(buffer).substr(0, inferred_end), 0, 1, input.csv, fields,
                           [&](const std::vector<std::string_view> &f, record_at at) { return csv_out->add(f, at); });
  }

  result<void> feed(std::string_view piece);
  /// The input is over: reads a last unit that has no line end.
  result<void> end_input();
  quire::error used_up() const {
    return quire::error(error_code::INVALID_ARGUMENT, infer_only ? "the schema inferrer has failed or finished"
                                                                 : "the text writer has failed or finished");
  }

  /// NDJSON writes from the start; CSV creates its writer once the header has been matched.
  result<void> start_output() {
    if (kind != text_format::ndjson) return {};
    auto w = writer::create(*sch, options, sink);
    if (!w) return std::move(w).error();
    ndjson_writer = std::move(w).value();
    ndjson_out = std::make_unique<ndjson_rows>(*sch, *ndjson_writer);
    return {};
  }
};

result<std::unique_ptr<text_writer>> text_writer::create(text_format format, const write_options &options,
                                                         byte_sink &sink, const input_options &input) {
  if (format != text_format::ndjson && format != text_format::csv)
    return quire::error(error_code::INVALID_ARGUMENT, "unknown text format");
  auto p = std::make_unique<impl>(format, options, sink, input);
  if (input.schema) {
    p->sch = *input.schema;
    auto r = p->start_output();
    if (!r) return std::move(r).error();
  } else {
    p->inferring = true;
  }
  return std::unique_ptr<text_writer>(new text_writer(std::move(p)));
}

result<void> text_writer::impl::feed(std::string_view piece) {
  if (failed || finished) return used_up();
  if (kind == text_format::ndjson) {
    auto r = feed_lines(piece, false);
    failed = !r;
    return r;
  }
  while (!piece.empty()) {
    size_t take = std::min(piece.size(), FEED_SLICE);
    buffer.append(piece.data(), take);
    piece.remove_prefix(take);
    auto r = consume_records(false);
    if (!r) {
      failed = true;
      return r;
    }
  }
  return {};
}

result<void> text_writer::impl::end_input() {
  if (failed || finished) return used_up();
  finished = true;
  return kind == text_format::ndjson ? feed_lines({}, true) : consume_records(true);
}

text_writer::text_writer(std::unique_ptr<impl> p) : impl_(std::move(p)) {}
text_writer::~text_writer() = default;

uint64_t text_writer::rows() const noexcept {
  const writer *w = impl_->output();
  return w ? w->rows() : 0;
}

result<void> text_writer::feed(std::string_view piece) { return impl_->feed(piece); }

result<uint64_t> text_writer::finish() {
  auto &t = *impl_;
  auto r = t.end_input();
  if (!r) return std::move(r).error();
  if (t.inferring) {
    auto e = t.end_inference();
    if (!e) return std::move(e).error();
  }
  if (t.kind == text_format::csv && !(t.csv_out && t.csv_out->has_header())) return no_header();
  return finish_rows(*t.output());
}

// --- schema_inferrer: a text_writer that only infers -----------------------------------------------------

namespace {

/// Where an inferring-only text_writer would write: it never does.
class no_sink final : public byte_sink {
 public:
  result<void> write(std::span<const uint8_t>) override { return {}; }
};

no_sink nothing_written;
const write_options no_options;

}  // namespace

result<std::unique_ptr<schema_inferrer>> schema_inferrer::create(text_format format, const input_options &input) {
  if (format != text_format::ndjson && format != text_format::csv)
    return quire::error(error_code::INVALID_ARGUMENT, "unknown text format");
  auto p = std::make_unique<text_writer::impl>(format, no_options, nothing_written, input);
  p->inferring = true;
  p->infer_only = true;
  return std::unique_ptr<schema_inferrer>(
      new schema_inferrer(std::unique_ptr<text_writer>(new text_writer(std::move(p)))));
}

schema_inferrer::schema_inferrer(std::unique_ptr<text_writer> reader) : reader_(std::move(reader)) {}
schema_inferrer::~schema_inferrer() = default;

result<void> schema_inferrer::feed(std::string_view piece) { return reader_->impl_->feed(piece); }

result<format::schema> schema_inferrer::finish() {
  auto &t = *reader_->impl_;
  auto r = t.end_input();
  if (!r) return std::move(r).error();
  return t.kind == text_format::ndjson ? t.ndjson_inf.schema() : t.csv_inf.schema();
}

}  // namespace quire::format
