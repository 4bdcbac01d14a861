// A view's rows written out: NDJSON, CSV, a .quire table or batches of typed columns in Arrow's
// layout, streamed (quire/view.h describes the column types and the bytes of each kind).
#include <algorithm>
#include <array>
#include <charconv>
#include <climits>
#include <span>
#include <unordered_map>

#include "../common/csv_field.h"
#include "../common/decimal_text.h"
#include "../common/line_end.h"
#include "quire/number_text.h"
#include "quire/view.h"
#include "view_bundle.h"

namespace quire::view {

namespace {

// What a column's cells must be, decided from the view alone (table_schema).
enum class target : uint8_t { boolean, integer, integer64, decimal, json, string };

// FHIRPath's System types as some views write them (`System.Integer`, or its URL form).
std::string_view without_system_prefix(std::string_view t) {
  for (std::string_view p : {std::string_view("http://hl7.org/fhirpath/System."), std::string_view("System.")}) {
    if (t.substr(0, p.size()) == p) return t.substr(p.size());
  }
  return t;
}

target target_of(const column_info &c) {
  if (c.collection) return target::json;
  std::string_view t = without_system_prefix(c.type);
  if (t == "boolean" || t == "Boolean") return target::boolean;
  if (t == "integer" || t == "positiveInt" || t == "unsignedInt" || t == "Integer") return target::integer;
  // FHIR R5's integer64 is a JSON string in resources: it is read from that form too.
  if (t == "integer64" || t == "Long") return target::integer64;
  if (t == "decimal" || t == "Decimal") return target::decimal;
  // System.String, Date, DateTime and Time are primitives spelled upper case; every other upper
  // case FHIR type name is a complex type (HumanName, Coding...), an object.
  if (t == "String" || t == "Date" || t == "DateTime" || t == "Time") return target::string;
  if (!t.empty() && t.find_first_of(".:/") == std::string_view::npos && t[0] >= 'A' && t[0] <= 'Z') return target::json;
  return target::string;
}

format::column_type column_type_of(target t) {
  switch (t) {
    case target::boolean: return format::column_type::boolean;
    case target::integer:
    case target::integer64: return format::column_type::integer;
    case target::decimal: return format::column_type::decimal;
    case target::json: return format::column_type::json;
    case target::string: return format::column_type::string;
  }
  return format::column_type::string;
}

std::string_view target_name(target t) {
  switch (t) {
    case target::boolean: return "boolean";
    case target::integer: return "integer";
    case target::integer64: return "integer64";
    case target::decimal: return "decimal";
    case target::json: return "json";
    case target::string: return "string";
  }
  return "string";
}

std::string_view cell_kind_name(cell_kind k) {
  switch (k) {
    case cell_kind::null_value: return "null";
    case cell_kind::boolean: return "a boolean";
    case cell_kind::integer: return "an integer";
    case cell_kind::decimal: return "a decimal";
    case cell_kind::string: return "a string";
    case cell_kind::array: return "an array";
    case cell_kind::object: return "an object";
  }
  return "a value";
}

std::optional<int64_t> parse_int64(std::string_view t) {
  int64_t v = 0;
  if (t.empty()) return std::nullopt;
  auto [end, ec] = std::from_chars(t.data(), t.data() + t.size(), v);
  if (ec != std::errc() || end != t.data() + t.size()) return std::nullopt;
  return v;
}

using quire::detail::append_csv_field;  // common/csv_field.h

bool ends_with_ci(std::string_view s, std::string_view suffix) {
  if (s.size() < suffix.size()) return false;
  s = s.substr(s.size() - suffix.size());
  for (size_t i = 0; i < s.size(); ++i) {
    char c = s[i];
    if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
    if (c != suffix[i]) return false;
  }
  return true;
}

}  // namespace

std::string_view output_kind_name(output_kind kind) noexcept {
  switch (kind) {
    case output_kind::ndjson: return "ndjson";
    case output_kind::csv: return "csv";
    case output_kind::quire: return "quire";
  }
  return "ndjson";
}

std::optional<output_kind> output_kind_for_path(std::string_view path) noexcept {
  if (ends_with_ci(path, ".ndjson") || ends_with_ci(path, ".jsonl")) return output_kind::ndjson;
  if (ends_with_ci(path, ".csv")) return output_kind::csv;
  if (ends_with_ci(path, ".quire")) return output_kind::quire;
  return std::nullopt;
}

namespace {
// 128-bit integers (GCC and Clang on both targets); __extension__ keeps -Wpedantic quiet.
__extension__ typedef unsigned __int128 uint128;
}  // namespace

std::string_view decimal128_misfit(std::string_view text, std::array<uint8_t, 16> &unscaled) noexcept {
  // The CLI's Parquet helper (native/parquet/quire-parquet.mjs) refuses the same texts: fraction
  // digits are counted as written (trailing zeros too), leading zeros of the integer part are not.
  static constexpr std::string_view MISFIT =
      "does not fit DECIMAL(38,18) exactly: at most 20 integer and 18 fraction digits, no exponent";
  unscaled.fill(0);
  quire::detail::decimal_text parts;
  if (!quire::detail::split_decimal_text(text, quire::detail::DECIMAL_EXPONENT, parts)) return "not a number";
  std::string_view whole = parts.integer;
  while (whole.size() > 1 && whole[0] == '0') whole.remove_prefix(1);
  if (whole == "0") whole = {};
  if (parts.has_exponent || parts.fraction.size() > DECIMAL128_SCALE ||
      whole.size() > DECIMAL128_PRECISION - DECIMAL128_SCALE) {
    return MISFIT;
  }
  // At most 38 digits: below 10^38 < 2^127, so the magnitude and its negation both fit.
  uint128 v = 0;
  for (char c : whole) v = v * 10 + static_cast<unsigned>(c - '0');
  for (char c : parts.fraction) v = v * 10 + static_cast<unsigned>(c - '0');
  for (size_t i = parts.fraction.size(); i < DECIMAL128_SCALE; ++i) v *= 10;
  if (parts.negative) v = ~v + 1;  // two's complement
  for (size_t i = 0; i < unscaled.size(); ++i) unscaled[i] = static_cast<uint8_t>(v >> (8 * i));
  return {};
}

result<format::schema> table_schema(const compiled_view &v) {
  const auto &cols = v.columns();
  if (cols.size() > format::MAX_COLUMNS) {
    std::string m = "the view has ";
    m += std::to_string(cols.size());
    m += " columns; a table holds at most ";
    m += std::to_string(format::MAX_COLUMNS);
    return error(error_code::INVALID_ARGUMENT, std::move(m));
  }
  format::schema s;
  s.columns.reserve(cols.size());
  for (const auto &c : cols) s.columns.push_back({c.name, column_type_of(target_of(c))});
  return s;
}

namespace {
// The sink a partitioned writer is made with: its rows go to its parts, never here.
class no_sink final : public format::byte_sink {
 public:
  result<void> write(std::span<const uint8_t>) override {
    return error(error_code::INVALID_ARGUMENT, "a partitioned writer writes into its parts");
  }
};
no_sink &unused_sink() {
  static no_sink sink;
  return sink;
}
}  // namespace

struct table_writer::impl {
  const compiled_view *view = nullptr;
  output_kind kind = output_kind::ndjson;
  format::byte_sink *sink = nullptr;
  view::runner run;
  std::vector<target> targets;
  std::unique_ptr<format::writer> table;  // .quire only

  // Partitioned .quire output: one writer per value of the partition column.
  part_sinks *parts = nullptr;
  size_t partition_col = 0;
  size_t max_partitions = 0;
  format::schema schema;
  format::write_options write;
  std::string partition_name;
  std::vector<std::unique_ptr<format::writer>> part_writers;
  std::vector<partition_info> partition_list;
  std::unordered_map<std::string, size_t> part_index;  // key: "\1" + value text, or "" for null
  std::string part_key;

  std::vector<row> rows;  // one resource's rows, dropped once written
  // The scratch of the column checks: one row's converted cells (one per thread).
  struct converter {
    std::vector<format::cell> cells;                // one row for the .quire writer
    std::vector<std::string> texts;                 // per column: a number or boolean printed for a text column
    std::vector<std::array<uint8_t, 16>> decimals;  // per column: DECIMAL(38,18)'s value (decimal128)
    explicit converter(size_t width) : cells(width), texts(width), decimals(width) {}
  };
  converter conv{0};
  std::string text;  // NDJSON/CSV output not yet handed to the sink

  ndjson::line_feeder lines;  // feed_serial's lines (an incomplete one carried over from earlier pieces)
  uint64_t line = 1;          // number of the line being read (or the next one)
  uint64_t line_start = 0;    // stream offset of its first byte
  uint64_t position = 0;      // stream offset of the next line after those read
  uint64_t resource_count = 0;
  uint64_t row_count = 0;
  error failed;  // set on the first error; returned by every later call
  bool finished = false;
  bool decimal128 = false;  // decimals must fit DECIMAL(38,18) (require_decimal128, batches)

  // Typed columns (create_batches): the batch being filled, handed to `batches` when full.
  batch_sink *batches = nullptr;
  batch_options batch_limits;
  column_batch batch;
  size_t batch_row_bytes = 0;  // a row's fixed-width bytes (validity, integers, decimals, offsets)
  size_t batch_text = 0;       // text bytes of the batch

  impl(const compiled_view &v, const run_options &o) : view(&v), run(v, run_options{.now = o.now}) {}

  // Where a value came from, for error messages.
  struct origin {
    uint64_t line = 0;        // NDJSON line; 0 for add_resource
    uint64_t line_start = 0;  // its stream offset
    std::string entry;        // `Bundle.entry[3].resource`, or ""
    json::value resource;
  };

  static std::string_view member_text(const json::object &obj, std::string_view key) {
    auto v = obj.find(key);
    if (!v) return {};
    auto t = v->get_string();
    return t ? t.value() : std::string_view();
  }

  static std::string describe_resource(uint64_t number, const origin &o) {
    std::string d = "resource ";
    d += std::to_string(number);
    if (auto obj = o.resource.get_object()) {
      std::string_view rt = member_text(*obj, "resourceType"), id = member_text(*obj, "id");
      if (!rt.empty()) {
        d += " (";
        d += rt;
        if (!id.empty()) {
          d += '/';
          d += id;
        }
        d += ')';
      }
    }
    if (!o.entry.empty()) {
      d += " at ";
      d += o.entry;
    }
    // describe() prints `line` only beside an offset, and these errors have none in the input.
    if (o.line) {
      d += ", line ";
      d += std::to_string(o.line);
    }
    return d;
  }

  error mismatch(size_t col, const cell &c, const origin &o, std::string_view why) const {
    const column_info &info = view->columns()[col];
    std::string m = "column ";
    m += info.name;
    m += " (";
    m += target_name(targets[col]);
    if (!info.type.empty()) {
      m += ", declared ";
      m += info.type;
    }
    m += ") cannot hold ";
    m += cell_kind_name(c.kind);
    m += ' ';
    // A long value is cut: the message names it, it need not carry it.
    std::string value;
    append_cell_json(value, c);
    if (value.size() > 64) {
      m.append(value, 0, 64);
      m += "...";
    } else {
      m += value;
    }
    if (!why.empty()) {
      m += " (";
      m += why;
      m += ')';
    }
    m += " in ";
    m += describe_resource(resource_count, o);
    error e(error_code::SCHEMA_MISMATCH, std::move(m));
    e.path = info.name;
    return e;
  }

  // Checks one cell against its column and, for .quire, makes its format::cell (cv.cells[col]).
  // False when the column cannot hold the cell, `why` then the reason the error adds (often none).
  bool convert(converter &cv, size_t col, const cell &c, std::string_view &why) const {
    format::cell &out = cv.cells[col];
    out = format::cell::null();
    if (c.kind == cell_kind::null_value) return true;
    switch (targets[col]) {
      case target::boolean:
        if (c.kind != cell_kind::boolean) return fail_with(why, "");
        out = format::cell::of(c.boolean);
        return true;
      case target::integer64:
        if (c.kind == cell_kind::string) return integer_of(c.text, out, why);
        [[fallthrough]];
      case target::integer:
        if (c.kind == cell_kind::integer) {
          out = format::cell::of(c.integer);
          return true;
        }
        // A decimal of integer text is a number past 64 bits, or `-0`.
        if (c.kind == cell_kind::decimal && c.text.find_first_of(".eE") == std::string::npos) {
          return integer_of(c.text, out, why);
        }
        return fail_with(why, "");
      case target::decimal:
        if (c.kind != cell_kind::decimal && c.kind != cell_kind::integer) return fail_with(why, "");
        if (decimal128) {
          std::string_view misfit = decimal128_misfit(text_of(c, cv.texts[col]), cv.decimals[col]);
          if (!misfit.empty()) return fail_with(why, misfit);
        }
        break;
      case target::json:
        if (c.kind != cell_kind::array && c.kind != cell_kind::object) return fail_with(why, "");
        break;
      case target::string:
        if (c.kind == cell_kind::array || c.kind == cell_kind::object) {
          return fail_with(why, "declare a complex type or collection: true to keep it as json");
        }
        break;
    }
    if (kind == output_kind::quire) out = format::cell::text(text_of(c, cv.texts[col]));
    return true;
  }

  static bool integer_of(std::string_view text, format::cell &out, std::string_view &why) {
    auto v = parse_int64(text);
    if (!v) return fail_with(why, "not a 64-bit integer");
    out = format::cell::of(*v);
    return true;
  }

  // A cell's text as CSV and a text column hold it: its own for strings, decimals and JSON, one
  // printed into `scratch` for integers and booleans.
  static std::string_view text_of(const cell &c, std::string &scratch) {
    if (c.kind != cell_kind::integer && c.kind != cell_kind::boolean) return c.text;
    scratch.clear();
    append_cell_text(scratch, c);
    return scratch;
  }

  static bool fail_with(std::string_view &why, std::string_view reason) {
    why = reason;
    return false;
  }

  result<void> flush_text(bool all) {
    if (text.empty() || (!all && text.size() < OUTPUT_FLUSH_BYTES)) return {};
    auto w = sink->write(std::span<const uint8_t>(reinterpret_cast<const uint8_t *>(text.data()), text.size()));
    if (!w) return w.error();
    text.clear();
    return {};
  }

  // Checks every cell of a row (false at the first its column cannot hold: `col` and `why` say
  // which and why) and, for NDJSON and CSV, appends the row's line to `out`.
  bool convert_row(converter &cv, const row &r, std::string &out, size_t &col, std::string_view &why) const {
    static const cell NULL_CELL;
    const size_t width = view->columns().size();
    for (col = 0; col < width; ++col) {
      if (!convert(cv, col, col < r.cells.size() ? r.cells[col] : NULL_CELL, why)) return false;
    }
    switch (kind) {
      case output_kind::ndjson:
        append_row_json(out, *view, r);
        out += '\n';
        break;
      case output_kind::csv:
        for (size_t c = 0; c < width; ++c) {
          if (c) out += ',';
          const cell &x = c < r.cells.size() ? r.cells[c] : NULL_CELL;
          if (x.kind != cell_kind::null_value) append_csv_field(out, text_of(x, cv.texts[c]));
        }
        out += '\n';
        break;
      case output_kind::quire: break;
    }
    return true;
  }

  // Writes rows of one resource; `where()` gives the resource's origin, asked only for an error.
  template <class Where>
  result<void> write_rows(std::span<const row> rs, const Where &where) {
    static const cell NULL_CELL;
    for (const row &r : rs) {
      size_t col = 0;
      std::string_view why;
      if (!convert_row(conv, r, text, col, why)) {
        return mismatch(col, col < r.cells.size() ? r.cells[col] : NULL_CELL, where(), why);
      }
      if (batches) {
        if (auto ok = append_to_batch(conv); !ok) return ok.error();
      } else if (kind == output_kind::quire) {
        format::writer *w = table.get();
        if (parts) {
          auto t = part_for(conv.cells[partition_col]);
          if (!t) return t.error();
          w = *t;
        }
        auto ok = w->append_row(conv.cells);
        if (!ok) return ok.error();
        if (parts) ++partition_list[part_index[part_key]].rows;
      }
      ++row_count;
      if (kind != output_kind::quire) {
        auto ok = flush_text(false);
        if (!ok) return ok.error();
      }
    }
    return {};
  }

  // --- typed columns (create_batches) ---

  void start_batch() {
    batch.rows = 0;
    batch_text = 0;
    for (column_buffer &b : batch.columns) {
      b.nulls = 0;
      b.validity.clear();
      b.values.clear();
      b.offsets.clear();
      if (b.type == format::column_type::string || b.type == format::column_type::json) b.offsets.push_back(0);
    }
  }

  // One row's converted cells (conv.cells, conv.decimals) appended in column_buffer's layout.
  result<void> append_to_batch(const converter &cv) {
    const uint64_t r = batch.rows;
    const auto bit = static_cast<uint8_t>(1u << (r & 7));
    for (size_t col = 0; col < batch.columns.size(); ++col) {
      column_buffer &b = batch.columns[col];
      const format::cell &x = cv.cells[col];
      const bool present = x.k != format::cell::kind::null_value;
      if ((r & 7) == 0) b.validity.push_back(0);
      if (present) b.validity.back() |= bit;
      else ++b.nulls;
      switch (b.type) {
        case format::column_type::boolean:
          if ((r & 7) == 0) b.values.push_back(0);
          if (present && x.b) b.values.back() |= bit;
          break;
        case format::column_type::integer: {
          const int64_t v = present ? x.i : 0;
          uint8_t le[8];
          for (size_t i = 0; i < 8; ++i) le[i] = static_cast<uint8_t>(static_cast<uint64_t>(v) >> (8 * i));
          b.values.insert(b.values.end(), le, le + 8);
          break;
        }
        case format::column_type::decimal: {
          static constexpr std::array<uint8_t, 16> ZERO{};
          const auto &v = present ? cv.decimals[col] : ZERO;
          b.values.insert(b.values.end(), v.begin(), v.end());
          break;
        }
        default:  // string, json: the only other types table_schema gives
          if (present) {
            if (x.s.size() > static_cast<size_t>(INT32_MAX) - b.values.size()) {
              return error(error_code::DOCUMENT_TOO_LARGE,
                           "column " + view->columns()[col].name +
                               "'s text in one batch would pass 2 GiB (Arrow's 32-bit offsets)");
            }
            b.values.insert(b.values.end(), x.s.begin(), x.s.end());
            batch_text += x.s.size();
          }
          b.offsets.push_back(static_cast<int32_t>(b.values.size()));
          break;
      }
    }
    ++batch.rows;
    if (batch.rows >= batch_limits.batch_rows ||
        batch_text + batch.rows * batch_row_bytes >= batch_limits.batch_bytes) {
      return flush_batch();
    }
    return {};
  }

  result<void> flush_batch() {
    if (batch.rows == 0) return {};
    auto ok = batches->write(batch);
    start_batch();
    return ok;
  }

  // The writer of the partition a row's cell names (opened on its first row); part_key is left
  // holding the partition's key.
  result<format::writer *> part_for(const format::cell &c) {
    part_key.clear();
    std::optional<std::string_view> value;
    switch (c.k) {
      case format::cell::kind::null_value: break;
      case format::cell::kind::integer: part_key = "\1" + std::to_string(c.i); break;
      case format::cell::kind::boolean: part_key = c.b ? "\1true" : "\1false"; break;
      case format::cell::kind::real:
        part_key = "\1";
        append_double(part_key, c.d);
        break;
      case format::cell::kind::text:
        part_key = "\1";
        part_key += c.s;
        break;
    }
    if (auto it = part_index.find(part_key); it != part_index.end()) return part_writers[it->second].get();
    if (!part_key.empty()) value = std::string_view(part_key).substr(1);
    if (part_writers.size() >= max_partitions) {
      return error(error_code::INVALID_ARGUMENT, "column " + partition_name + " has more than " +
                                                     std::to_string(max_partitions) +
                                                     " values: a partition column needs fewer (each holds a writer)");
    }
    auto segment = dataset::partition_segment(partition_name, value);
    if (!segment) return segment.error();
    auto sink = parts->open(*segment);
    if (!sink) return sink.error();
    auto w = format::writer::create(schema, write, **sink);
    if (!w) return w.error();
    partition_info info;
    info.segment = std::move(segment).value();
    if (value) info.value = std::string(*value);
    partition_list.push_back(std::move(info));
    part_writers.push_back(std::move(w).value());
    part_index.emplace(part_key, part_writers.size() - 1);
    return part_writers.back().get();
  }

  result<void> run_one(const json::value &resource, const origin &o) {
    ++resource_count;
    rows.clear();
    auto r = run.run_resource(resource, rows);
    if (!r) {
      error e = r.error();
      e.message += " in ";
      e.message += describe_resource(resource_count, o);
      // An offset here is into the view's expression (the path names it), not into the input.
      e.offset = error::NO_OFFSET;
      return e;
    }
    auto ok = write_rows(rows, [&o]() -> const origin & { return o; });
    rows.clear();
    return ok;
  }

  result<void> add(const json::value &resource, origin &o) {
    return detail::for_each_view_resource(view->resource(), resource, [&](const json::value &res, int64_t entry) {
      o.entry = entry >= 0 ? detail::bundle_entry_path(entry) : std::string();
      o.resource = res;
      return run_one(res, o);
    });
  }

  json::document line_doc;  // run_line's document, its buffers reused

  result<void> run_line(const ndjson::line &l) {
    if (l.blank()) return {};
    // One document reused from line to line (json::parse_into): allocating its buffers anew for
    // each line was a good part of a line's cost.
    auto parsed = json::parse_into(line_doc, l.text);
    error e;
    if (parsed) {
      origin o;
      o.line = line;
      o.line_start = line_start;
      auto ok = add(line_doc.root(), o);
      if (ok) return {};
      e = ok.error();
    } else {
      e = std::move(parsed).error();
    }
    if (e.offset != error::NO_OFFSET) e.offset += line_start;
    e.line = static_cast<uint32_t>(line);
    return e;
  }

  // --- feed_ndjson on threads ---------------------------------------------------------------
  // A round of whole lines is cut into runs, one a task; each task parses and runs its lines with
  // its own runner and document. For NDJSON and CSV a task also checks every cell and writes its
  // lines' text; for .quire it keeps the rows, which this thread checks and appends (the .quire
  // writer takes rows in order). This thread then takes the tasks' work in line order, counting
  // resources, rows and lines as feed_serial does: the output, the counts and every error are the
  // same as on one thread. A line its task could not run or write (not JSON, too long, a failing
  // resource, a value its column cannot hold) and everything after it in the round are read again
  // by feed_serial, which gives the output before the error and the error itself exactly as one
  // thread does.
  static constexpr size_t ROUND_BYTES = size_t{4} << 20;

  run_options options;
  struct helper {
    view::runner run;
    json::document doc;
    converter conv;
    helper(const compiled_view &v, const run_options &o)
        : run(v, run_options{.now = o.now}), conv(v.columns().size()) {}
  };
  std::vector<std::unique_ptr<helper>> helpers;  // tasks 1..n-1 (task 0 uses run and line_doc)

  struct ran_group {     // the rows of one resource (a line's, or one Bundle entry's)
    int64_t entry = -1;  // its Bundle entry, -1 for the line's own resource
    size_t first_row = 0, rows = 0;
  };
  struct ran_line {
    size_t begin = 0, end = 0;  // in the round, end at the line end
    size_t first_group = 0, groups = 0;
    size_t rows = 0, text_end = 0;  // NDJSON and CSV: rows written, the end of its text in ran_run::text
    bool failed = false;
  };
  struct ran_run {
    std::vector<ran_line> lines;
    std::vector<ran_group> groups;
    std::vector<row> rows;  // .quire: every row; NDJSON and CSV: one line's, written into text
    std::string text;
  };

  unsigned parts_for(size_t bytes) const { return parallel_parts(options, bytes); }

  // Runs the lines of round[begin, end) into `out`; stops at the first line it cannot run.
  void run_part(view::runner &r, json::document &doc, converter &cv, std::string_view round, size_t begin, size_t end,
                ran_run &out) const {
    ndjson::line_feeder part_lines(options.max_line_bytes);
    part_lines.restart(begin, 1);
    part_lines.feed(round.substr(begin, end - begin), true);
    while (true) {
      auto got = part_lines.next();
      if (got && !*got) return;
      ran_line l;
      l.first_group = out.groups.size();
      if (!got) {  // too long: read again by feed_serial, which gives the error
        l.begin = l.end = got.error().offset;
        l.failed = true;
        out.lines.push_back(l);
        return;
      }
      const ndjson::line &ln = **got;
      l.begin = ln.offset;
      l.end = ln.offset + ln.bytes;
      if (!ln.blank()) {
        l.failed = !run_resources(r, doc, ln.text, out);
        l.groups = out.groups.size() - l.first_group;
        if (!l.failed && kind != output_kind::quire) {
          // The line's rows become text here and are dropped: its resources' rows in order.
          size_t col = 0;
          std::string_view why;
          for (const row &rw : out.rows) {
            if (!convert_row(cv, rw, out.text, col, why)) {
              l.failed = true;
              break;
            }
          }
          l.rows = out.rows.size();
          out.rows.clear();
          out.groups.resize(l.first_group);
        }
      }
      l.text_end = out.text.size();
      out.lines.push_back(l);
      if (l.failed) return;
    }
  }

  // One line's resource, or each entry.resource of its Bundle, as add() reads them.
  bool run_resources(view::runner &r, json::document &doc, std::string_view text, ran_run &out) const {
    if (!json::parse_into(doc, text)) return false;
    return detail::for_each_view_resource(view->resource(), doc.root(),
                                          [&](const json::value &res, int64_t entry) {
                                            ran_group g{entry, out.rows.size(), 0};
                                            auto ok = r.run_resource(res, out.rows);
                                            if (!ok) return ok;
                                            g.rows = out.rows.size() - g.first_row;
                                            out.groups.push_back(g);
                                            return ok;
                                          })
        .ok();
  }

  // Where a resource of a line that ran came from, for an error: the line parsed again.
  origin origin_of(std::string_view text, const ran_group &g) {
    origin o;
    o.line = line;
    o.line_start = line_start;
    if (!text.empty() && text.back() == '\r') text.remove_suffix(1);
    if (!json::parse_into(line_doc, text)) return o;  // it parsed on its thread
    o.resource = line_doc.root();
    if (g.entry >= 0) {
      o.entry = detail::bundle_entry_path(g.entry);
      (void)detail::for_each_view_resource(view->resource(), line_doc.root(),
                                           [&](const json::value &res, int64_t entry) {
                                             if (entry == g.entry) o.resource = res;
                                             return result<void>();
                                           });
    }
    return o;
  }

  // A round of whole lines (it ends just past a line end; nothing is pending).
  result<void> feed_round(std::string_view round) {
    const unsigned parts = parts_for(round.size());
    if (parts <= 1) return feed_serial(round);
    const std::vector<size_t> cut = detail::cut_at_line_ends(round, parts);
    while (helpers.size() + 1 < parts) helpers.push_back(std::make_unique<helper>(*view, options));
    std::vector<ran_run> done(parts);
    options.tasks->run(parts, [&](size_t k) {
      if (k == 0) run_part(run, line_doc, conv, round, cut[0], cut[1], done[0]);
      else run_part(helpers[k - 1]->run, helpers[k - 1]->doc, helpers[k - 1]->conv, round, cut[k], cut[k + 1], done[k]);
    });
    for (const ran_run &part : done) {
      size_t text_at = 0;
      for (const ran_line &l : part.lines) {
        if (l.failed) return feed_serial(round.substr(l.begin));
        if (kind != output_kind::quire) {
          resource_count += l.groups;
          row_count += l.rows;
          text.append(part.text, text_at, l.text_end - text_at);
          text_at = l.text_end;
          if (auto ok = flush_text(false); !ok) return fail(ok.error());
          position += l.end - l.begin + 1;
          line += 1;
          line_start = position;
          continue;
        }
        for (size_t g = l.first_group; g < l.first_group + l.groups; ++g) {
          const ran_group &rg = part.groups[g];
          ++resource_count;
          auto ok = write_rows(std::span<const row>(part.rows.data() + rg.first_row, rg.rows),
                               [&]() { return origin_of(round.substr(l.begin, l.end - l.begin), rg); });
          if (!ok) {  // as run_line places an error of its line
            error e = ok.error();
            if (e.offset != error::NO_OFFSET) e.offset += line_start;
            e.line = static_cast<uint32_t>(line);
            return fail(std::move(e));
          }
        }
        position += l.end - l.begin + 1;
        line += 1;
        line_start = position;
      }
    }
    return {};
  }

  // NDJSON read on the calling thread, line by line (what feed_ndjson does without threads).
  // `last`: the stream ends with this piece.
  result<void> feed_serial(std::string_view piece, bool last = false) {
    // Whole lines read by feed_round moved the stream on without the feeder.
    if (!lines.holding()) lines.restart(position, line);
    lines.feed(piece, last);
    auto ok = lines.each([&](const ndjson::line &l) -> result<void> {
      line = l.number;
      line_start = l.offset;
      if (auto r = run_line(l); !r) return r;
      position = l.offset + l.bytes + 1;
      line = l.number + 1;
      line_start = position;
      return {};
    });
    if (!ok) return fail(ok.error());
    return {};
  }

  result<void> fail(error e) {
    failed = e;
    return e;
  }

  result<void> usable() const {
    if (failed.code != error_code::OK) return failed;
    if (finished) return error(error_code::INVALID_ARGUMENT, "the table_writer is finished");
    return {};
  }
};

table_writer::table_writer(std::unique_ptr<impl> p) : impl_(std::move(p)) {}
table_writer::~table_writer() = default;

result<std::unique_ptr<table_writer>> table_writer::create(const compiled_view &v, output_kind kind,
                                                           const format::write_options &options,
                                                           format::byte_sink &sink, const run_options &run) {
  auto schema = table_schema(v);
  if (!schema) return schema.error();
  auto p = std::make_unique<impl>(v, run);
  p->options = run;
  p->lines = ndjson::line_feeder(run.max_line_bytes);
  p->kind = kind;
  p->sink = &sink;
  const size_t width = v.columns().size();
  for (const auto &c : v.columns()) p->targets.push_back(target_of(c));
  p->conv = impl::converter(width);
  switch (kind) {
    case output_kind::quire: {
      auto w = format::writer::create(*schema, options, sink);
      if (!w) return w.error();
      p->table = std::move(w).value();
      break;
    }
    case output_kind::ndjson:
    case output_kind::csv:
      if (!options.indexes.empty() || !options.sorted_by.empty()) {
        std::string m = "indexes and sorted_by need a .quire output; ";
        m += output_kind_name(kind);
        m += " cannot hold them";
        return error(error_code::INVALID_ARGUMENT, std::move(m));
      }
      if (kind == output_kind::csv) {
        for (size_t i = 0; i < width; ++i) {
          if (i) p->text += ',';
          append_csv_field(p->text, v.columns()[i].name);
        }
        p->text += '\n';
      }
      break;
    default: return error(error_code::INVALID_ARGUMENT, "unknown output kind");
  }
  return std::unique_ptr<table_writer>(new table_writer(std::move(p)));
}

result<std::unique_ptr<table_writer>> table_writer::create_partitioned(const compiled_view &v, std::string_view column,
                                                                       const format::write_options &options,
                                                                       part_sinks &sinks, const run_options &run,
                                                                       size_t max_partitions) {
  auto schema = table_schema(v);
  if (!schema) return schema.error();
  auto col = schema->find(column);
  if (!col) {
    return error(error_code::NO_SUCH_COLUMN, "the view has no column " + std::string(column) + " to partition by");
  }
  if (schema->columns[*col].type == format::column_type::json) {
    return error(error_code::INVALID_ARGUMENT,
                 "column " + std::string(column) + " holds JSON: a partition column needs single values");
  }
  // The options are refused now, as create() refuses them, not at the first row: a writer is made
  // and dropped.
  {
    format::vector_sink probe;
    auto pw = format::writer::create(*schema, options, probe);
    if (!pw) return pw.error();
  }
  auto w = create(v, output_kind::ndjson, {}, unused_sink(), run);
  if (!w) return w.error();
  impl &p = *w.value()->impl_;
  p.kind = output_kind::quire;
  p.parts = &sinks;
  p.partition_col = *col;
  p.partition_name = std::string(column);
  p.max_partitions = max_partitions;
  p.schema = std::move(schema).value();
  p.write = options;
  return w;
}

result<std::unique_ptr<table_writer>> table_writer::create_batches(const compiled_view &v, batch_sink &sink,
                                                                   const batch_options &batches,
                                                                   const run_options &run) {
  auto schema = table_schema(v);
  if (!schema) return schema.error();
  // Made as an NDJSON writer that writes nowhere, then given the batch sink: the rows are kept
  // and checked on this thread, as for .quire (feed_round).
  auto w = create(v, output_kind::ndjson, {}, unused_sink(), run);
  if (!w) return w.error();
  impl &p = *w.value()->impl_;
  p.kind = output_kind::quire;
  p.batches = &sink;
  p.decimal128 = true;
  p.batch_limits.batch_rows = batches.batch_rows ? batches.batch_rows : batch_options::DEFAULT_BATCH_ROWS;
  p.batch_limits.batch_bytes = batches.batch_bytes ? batches.batch_bytes : batch_options::DEFAULT_BATCH_BYTES;
  p.batch.columns.resize(schema->columns.size());
  for (size_t i = 0; i < schema->columns.size(); ++i) {
    const format::column_type t = schema->columns[i].type;
    p.batch.columns[i].type = t;
    // What a row adds to each column: a byte for validity (a bit, counted high), then its values.
    p.batch_row_bytes += 1;
    if (t == format::column_type::integer) p.batch_row_bytes += 8;
    else if (t == format::column_type::decimal) p.batch_row_bytes += 16;
    else if (t != format::column_type::boolean) p.batch_row_bytes += 4;
  }
  p.start_batch();
  return w;
}

void table_writer::require_decimal128() noexcept { impl_->decimal128 = true; }

result<void> table_writer::add_resource(const json::value &resource_or_bundle) {
  impl &s = *impl_;
  if (auto ok = s.usable(); !ok) return ok;
  impl::origin o;
  auto ok = s.add(resource_or_bundle, o);
  if (!ok) return s.fail(ok.error());
  return {};
}

result<void> table_writer::feed_ndjson(std::string_view piece) {
  impl &s = *impl_;
  if (auto ok = s.usable(); !ok) return ok;
  // Whole lines go to threads in rounds of about ROUND_BYTES (a line longer than that is a round
  // of its own); the line that completes what was pending, and the piece's incomplete end, stay here.
  const size_t last = piece.rfind('\n');
  if (last == std::string_view::npos || s.parts_for(last + 1) <= 1) return s.feed_serial(piece);
  size_t pos = 0;
  if (s.lines.holding()) {
    pos = detail::find_line_end(piece) + 1;
    if (auto ok = s.feed_serial(piece.substr(0, pos)); !ok) return ok;
  }
  while (pos <= last) {
    size_t end = last + 1;
    if (end - pos > impl::ROUND_BYTES) end = detail::find_line_end(piece, pos + impl::ROUND_BYTES) + 1;
    if (auto ok = s.feed_round(piece.substr(pos, end - pos)); !ok) return ok;
    pos = end;
  }
  return s.feed_serial(piece.substr(pos));
}

result<void> table_writer::end_ndjson() {
  impl &s = *impl_;
  if (auto ok = s.usable(); !ok) return ok;
  if (s.lines.holding()) {
    if (auto ok = s.feed_serial({}, true); !ok) return ok;
  }
  // A writer that held one long last line gives it back now.
  s.lines = ndjson::line_feeder(s.options.max_line_bytes);
  s.line = 1;
  s.line_start = 0;
  s.position = 0;
  return {};
}

result<uint64_t> table_writer::finish() {
  impl &s = *impl_;
  if (auto ok = end_ndjson(); !ok) return ok.error();
  if (s.batches) {
    auto ok = s.flush_batch();
    if (!ok) return s.fail(ok.error()).error();
  } else if (s.kind == output_kind::quire) {
    for (auto &w : s.part_writers) {
      auto ok = w->finish();
      if (!ok) return s.fail(ok.error()).error();
    }
    if (s.table) {
      auto ok = s.table->finish();
      if (!ok) return s.fail(ok.error()).error();
    }
  } else {
    auto ok = s.flush_text(true);
    if (!ok) return s.fail(ok.error()).error();
  }
  s.finished = true;
  return s.row_count;
}

uint64_t table_writer::resources() const noexcept { return impl_->resource_count; }
uint64_t table_writer::rows() const noexcept { return impl_->row_count; }
const std::vector<partition_info> &table_writer::partitions() const noexcept { return impl_->partition_list; }

}  // namespace quire::view
