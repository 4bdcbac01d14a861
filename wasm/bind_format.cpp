// Embind bindings of the .quire format. Bytes come in once (pointer and length in the heap) or by
// ranges through a synchronous JavaScript reader; results leave as one JSON text, or as columnar
// buffers that the wrapper copies out of the heap at once.
#include <emscripten/bind.h>
#include <emscripten/val.h>

#include <cstdlib>
#include <cstring>

#include "../core/src/common/alloc.h"
#include "bind_sources.h"
#include "bind_stream_writer.h"
#include "bind_support.h"
#include "quire/format.h"
#include "quire/json.h"

namespace {

using quire::wasm::error_record;
using quire::wasm::js_range_source;
namespace fmt = quire::format;

struct text_result {
  error_record error;
  std::string text;
  bool present = false;
};

struct number_result {
  error_record error;
  double value = 0;
};

text_result fail(const quire::error &e) {
  text_result r;
  r.error = quire::wasm::to_record(e);
  return r;
}

text_result ok_text(std::string s) {
  // Embind 3.1.6 copies a returned std::string into a malloc whose failure it does not check: a
  // text the heap cannot hold a second copy of is OUT_OF_MEMORY here, not a write to address 0.
  if (s.size() >= quire::detail::PROBE_THRESHOLD && !quire::detail::can_allocate(s.size() + 16)) {
    return fail(quire::detail::out_of_memory(s.size(), "a result's text"));
  }
  text_result r;
  r.text = std::move(s);
  r.present = true;
  return r;
}

/// The query every call takes, as JSON (core's parse_query_json); "" is the empty query.
quire::result<fmt::query> parse_query(const std::string &query_json) {
  if (query_json.empty()) return fmt::query();
  return fmt::parse_query_json(query_json);
}

/// A column copied out in bulk: numbers as doubles (NaN at nulls), text as one UTF-8 buffer with
/// offsets in UTF-16 code units (so the wrapper decodes it with one TextDecoder call and slices).
struct column_buffers {
  std::string name, type;
  std::vector<uint8_t> valid;
  std::vector<double> numbers;
  std::vector<int64_t> ints;  // typed: integer, timestamp (µs), date (days), boolean (0/1)
  std::string text;
  std::vector<uint32_t> offsets;
};

uint32_t utf16_length(std::string_view s) {
  uint32_t n = 0;
  for (unsigned char c : s) {
    if ((c & 0xC0) != 0x80) n += c >= 0xF0 ? 2 : 1;
  }
  return n;
}

struct column_record {
  std::string name, type;
  double rows = 0;
  double valid = 0, numbers = 0, ints = 0, text = 0, text_length = 0, offsets = 0;  // heap pointers (0: none)
};

class format_file {
 public:
  /// Ranges read through `reader` (js/src/format.ts: a Node file, a Blob, or bytes in JavaScript
  /// memory read where they are). `key` (32 bytes, the owner's or a partition's) or `passphrase`
  /// opens a sealed file; "" none.
  format_file(double size, emscripten::val reader, const std::string &key, const std::string &passphrase) {
    open(std::make_unique<js_range_source>(size, std::move(reader)), key, passphrase);
  }

  error_record error() const { return error_; }

  std::string info() const { return fmt::to_json(file_->info()); }

  /// The rows in the row text core names `form` (fmt::row_text_named: ndjson, array, csv, cells).
  text_result query(const std::string &query_json, const std::string &form) {
    auto f = fmt::row_text_named(form);
    if (!f) return fail(f.error());
    auto q = parse_query(query_json);
    if (!q) return fail(q.error());
    auto r = file_->query(*q, *f);
    if (!r) return fail(r.error());
    return ok_text(std::move(r->json));
  }

  /// `query_json` carries the columns to return; `form` as in query() (ndjson: an object).
  text_result find(const std::string &column, const std::string &key_json, const std::string &query_json,
                   const std::string &form) {
    auto f = fmt::row_text_named(form);
    if (!f) return fail(f.error());
    auto key = fmt::parse_key_json(key_json);
    if (!key) return fail(key.error());
    auto q = parse_query(query_json);
    if (!q) return fail(q.error());
    auto r = file_->find(column, *key, q->columns, *f);
    if (!r) return fail(r.error());
    if (!r->has_value()) return text_result();
    return ok_text(std::move(**r));
  }

  /// find() for the npm wrapper's find and findText: the row's UTF-8 text as a Uint8Array view of
  /// the heap (valid until the next call on this file), undefined when no row has the key, null on
  /// an error (last_error() holds it). One value crosses, where a text_result is a record of eight
  /// members, four of them strings each copied out through its own call; and a view is decoded by
  /// the wrapper with one TextDecoder call, where Embind's std::string is scanned byte by byte
  /// twice in JavaScript first.
  emscripten::val find_row(const std::string &column, const std::string &key_json, const std::string &query_json,
                           const std::string &form) {
    text_result r = find(column, key_json, query_json, form);
    if (!r.error.code.empty()) {
      last_error_ = std::move(r.error);
      return emscripten::val::null();
    }
    if (!r.present) return emscripten::val::undefined();
    text_ = std::move(r.text);
    return text_view();
  }

  /// info() as find_row's row: a view of core's to_json(file_info), decoded at once by the wrapper.
  emscripten::val info_bytes() {
    text_ = fmt::to_json(file_->info());
    return text_view();
  }

  error_record last_error() const { return last_error_; }

  /// Whether the file opened: error() is read only when it did not.
  bool ok() const { return file_ != nullptr; }

  number_result count(const std::string &query_json) {
    number_result out;
    auto q = parse_query(query_json);
    if (!q) {
      out.error = quire::wasm::to_record(q.error());
      return out;
    }
    auto n = file_->count(*q);
    if (!n) {
      out.error = quire::wasm::to_record(n.error());
      return out;
    }
    out.value = static_cast<double>(*n);
    return out;
  }

  text_result aggregate(const std::string &column, const std::string &query_json) {
    auto q = parse_query(query_json);
    if (!q) return fail(q.error());
    auto a = file_->aggregate(column, *q);
    if (!a) return fail(a.error());
    return ok_text(fmt::to_json(*a));
  }

  text_result explain(const std::string &query_json, bool analyze) {
    auto q = parse_query(query_json);
    if (!q) return fail(q.error());
    auto r = file_->explain(*q, analyze);
    if (!r) return fail(r.error());
    return ok_text(fmt::to_json(*r));
  }

  text_result storage() {
    auto r = file_->storage();
    if (!r) return fail(r.error());
    return ok_text(fmt::to_json(*r));
  }

  text_result chunk_statistics(const std::string &column) {
    auto r = file_->chunk_statistics(column);
    if (!r) return fail(r.error());
    return ok_text(fmt::to_json(*r, file_->schema().columns[*file_->schema().find(column)].type));
  }

  number_result verify() {
    number_result out;
    auto r = file_->verify();
    if (!r) out.error = quire::wasm::to_record(r.error());
    else out.value = static_cast<double>(*r);
    return out;
  }

  std::string counters() const { return fmt::to_json(file_->counters()); }

  /// Decodes the columns into buffers held here until the next call; column(i) says where they are.
  /// `typed`: core's own arrays (ints as int64, text offsets in bytes, decimals as text), no
  /// conversion; else numbers as doubles (NaN at nulls) and text offsets in UTF-16 code units.
  number_result load_columns(const std::string &query_json, bool typed) {
    number_result out;
    columns_.clear();
    auto q = parse_query(query_json);
    if (!q) {
      out.error = quire::wasm::to_record(q.error());
      return out;
    }
    auto cols = file_->columns(*q);
    if (!cols) {
      out.error = quire::wasm::to_record(cols.error());
      return out;
    }
    for (auto &c : *cols) {
      column_buffers b;
      b.name = c.name;
      b.type = std::string(fmt::type_name(c.type));
      b.valid = std::move(c.valid);
      const size_t rows = b.valid.size();
      if (typed) {
        if (c.type == fmt::column_type::string || c.type == fmt::column_type::json ||
            c.type == fmt::column_type::decimal) {
          b.text = std::move(c.text);
          b.offsets = std::move(c.text_offsets);
        } else if (c.type == fmt::column_type::float64) {
          b.numbers = std::move(c.reals);
        } else {
          b.ints = std::move(c.ints);
        }
        columns_.push_back(std::move(b));
        continue;
      }
      switch (c.type) {
        case fmt::column_type::string:
        case fmt::column_type::json: {
          b.offsets.reserve(rows + 1);
          b.offsets.push_back(0);
          uint32_t units = 0;
          for (size_t r = 0; r < rows; ++r) {
            units += utf16_length(
                std::string_view(c.text).substr(c.text_offsets[r], c.text_offsets[r + 1] - c.text_offsets[r]));
            b.offsets.push_back(units);
          }
          b.text = std::move(c.text);
          break;
        }
        case fmt::column_type::float64:
        case fmt::column_type::decimal: b.numbers = std::move(c.reals); break;
        case fmt::column_type::timestamp:
          // Milliseconds, as JavaScript's Date counts them (fractions keep the microseconds).
          b.numbers.resize(rows);
          for (size_t r = 0; r < rows; ++r) b.numbers[r] = static_cast<double>(c.ints[r]) / 1000.0;
          break;
        default:
          b.numbers.resize(rows);
          for (size_t r = 0; r < rows; ++r) b.numbers[r] = static_cast<double>(c.ints[r]);
          break;
      }
      for (size_t r = 0; r < b.numbers.size(); ++r) {
        if (!b.valid[r]) b.numbers[r] = __builtin_nan("");
      }
      columns_.push_back(std::move(b));
    }
    out.value = static_cast<double>(columns_.size());
    return out;
  }

  column_record column(size_t i) const {
    column_record r;
    if (i >= columns_.size()) return r;
    const auto &b = columns_[i];
    r.name = b.name;
    r.type = b.type;
    r.rows = static_cast<double>(b.valid.size());
    auto ptr = [](const void *p) { return static_cast<double>(reinterpret_cast<uintptr_t>(p)); };
    r.valid = ptr(b.valid.data());
    r.numbers = b.numbers.empty() ? 0 : ptr(b.numbers.data());
    r.ints = b.ints.empty() ? 0 : ptr(b.ints.data());
    r.text = ptr(b.text.data());
    r.text_length = static_cast<double>(b.text.size());
    r.offsets = b.offsets.empty() ? 0 : ptr(b.offsets.data());
    return r;
  }

  void release_columns() { columns_.clear(); }

 private:
  void open(std::unique_ptr<quire::byte_source> source, const std::string &key, const std::string &passphrase) {
    fmt::open_options o;
    o.key = key;
    o.passphrase = passphrase;
    auto f = fmt::file::open(std::move(source), o);
    if (!f) error_ = quire::wasm::to_record(f.error());
    else file_ = std::make_unique<fmt::file>(std::move(f).value());
  }

  emscripten::val text_view() const {
    return emscripten::val(
        emscripten::typed_memory_view(text_.size(), reinterpret_cast<const unsigned char *>(text_.data())));
  }

  std::unique_ptr<fmt::file> file_;
  error_record error_, last_error_;
  std::string text_;  // the last find_row's row or info_bytes' text, which the wrapper decodes before its next call
  std::vector<column_buffers> columns_;
};

/// Written file bytes, held until the wrapper copies them out.
class format_bytes {
 public:
  error_record error() const { return error_; }
  double pointer() const { return static_cast<double>(reinterpret_cast<uintptr_t>(sink_.bytes.data())); }
  double size() const { return static_cast<double>(sink_.bytes.size()); }
  double rows() const { return rows_; }

  void write(uintptr_t pointer, size_t length, const std::string &from, const std::string &options_json) {
    std::string_view input(reinterpret_cast<const char *>(pointer), length);
    fmt::write_options opts;
    fmt::input_options in;
    auto parsed = fmt::parse_write_options_json(options_json, opts, in);
    if (!parsed) {
      error_ = quire::wasm::to_record(parsed.error());
      return;
    }
    auto r = from == "csv" ? fmt::write_csv(input, opts, sink_, in) : fmt::write_ndjson(input, opts, sink_, in);
    if (!r) {
      error_ = quire::wasm::to_record(r.error());
      sink_.bytes.clear();
      return;
    }
    rows_ = static_cast<double>(*r);
  }

  /// Rows given as columns (fmt::write_columns): `columns` descriptors of COLUMN_WORDS 32-bit words
  /// at `descriptors`, each [name, name length, kinds, ints, reals, text, text length, offsets]
  /// (heap pointers, 0 for a span not given: ints and reals hold `rows` values, offsets rows + 1).
  void write_columns(uintptr_t descriptors, size_t columns, size_t rows, const std::string &options_json) {
    fmt::write_options opts;
    fmt::input_options in;
    auto parsed = fmt::parse_write_options_json(options_json, opts, in);
    if (!parsed) {
      error_ = quire::wasm::to_record(parsed.error());
      return;
    }
    const auto *words = reinterpret_cast<const uint32_t *>(descriptors);
    std::vector<fmt::column_input> input(columns);
    for (size_t c = 0; c < columns; ++c) {
      const uint32_t *d = words + c * COLUMN_WORDS;
      auto &col = input[c];
      col.name = std::string_view(reinterpret_cast<const char *>(d[0]), d[1]);
      col.kinds = {reinterpret_cast<const uint8_t *>(d[2]), rows};
      if (d[3]) col.ints = {reinterpret_cast<const int64_t *>(d[3]), rows};
      if (d[4]) col.reals = {reinterpret_cast<const double *>(d[4]), rows};
      if (d[5]) col.text = std::string_view(reinterpret_cast<const char *>(d[5]), d[6]);
      if (d[7]) col.text_offsets = {reinterpret_cast<const uint32_t *>(d[7]), rows + 1};
    }
    auto r = fmt::write_columns(input, rows, opts, sink_, in);
    if (!r) {
      error_ = quire::wasm::to_record(r.error());
      sink_.bytes.clear();
      return;
    }
    rows_ = static_cast<double>(*r);
  }

  static constexpr size_t COLUMN_WORDS = 8;

 private:
  fmt::vector_sink sink_;
  error_record error_;
  double rows_ = 0;
};

format_bytes *write_columns(uintptr_t descriptors, size_t columns, size_t rows, std::string options_json) {
  auto *out = new format_bytes();
  out->write_columns(descriptors, columns, rows, options_json);
  return out;
}

format_file *open_reader(double size, emscripten::val reader, std::string key, std::string passphrase) {
  return new format_file(size, std::move(reader), key, passphrase);
}

format_bytes *write_table(uintptr_t pointer, size_t length, std::string from, std::string options_json) {
  auto *out = new format_bytes();
  out->write(pointer, length, from, options_json);
  return out;
}

}  // namespace

QUIRE_BINDINGS(format) {
  using namespace emscripten;
  value_object<text_result>("FormatTextResult")
      .field("error", &text_result::error)
      .field("text", &text_result::text)
      .field("present", &text_result::present);
  value_object<number_result>("FormatNumberResult")
      .field("error", &number_result::error)
      .field("value", &number_result::value);
  value_object<column_record>("FormatColumnRecord")
      .field("name", &column_record::name)
      .field("type", &column_record::type)
      .field("rows", &column_record::rows)
      .field("valid", &column_record::valid)
      .field("numbers", &column_record::numbers)
      .field("ints", &column_record::ints)
      .field("text", &column_record::text)
      .field("textLength", &column_record::text_length)
      .field("offsets", &column_record::offsets);
  class_<format_file>("FormatFile")
      .function("error", &format_file::error)
      .function("info", &format_file::info)
      .function("infoBytes", &format_file::info_bytes)
      .function("query", &format_file::query)
      .function("findRow", &format_file::find_row)
      .function("lastError", &format_file::last_error)
      .function("ok", &format_file::ok)
      .function("count", &format_file::count)
      .function("aggregate", &format_file::aggregate)
      .function("explain", &format_file::explain)
      .function("storage", &format_file::storage)
      .function("chunkStatistics", &format_file::chunk_statistics)
      .function("verify", &format_file::verify)
      .function("counters", &format_file::counters)
      .function("loadColumns", &format_file::load_columns)
      .function("column", &format_file::column)
      .function("releaseColumns", &format_file::release_columns);
  class_<format_bytes>("FormatBytes")
      .function("error", &format_bytes::error)
      .function("pointer", &format_bytes::pointer)
      .function("size", &format_bytes::size)
      .function("rows", &format_bytes::rows);
  function("formatWrite", &write_table, allow_raw_pointers());
  function("formatWriteColumns", &write_columns, allow_raw_pointers());
  function("formatOpenReader", &open_reader, allow_raw_pointers());
}

// --- the streaming writer (format.writeStream, format.writeFile with a stream) ---------------------

namespace {

/// NDJSON or CSV into a .quire file (fmt::text_writer), for quire::wasm::stream_writer. The options
/// live here: the writer refers to them.
class text_stream_origin {
 public:
  using writer_type = fmt::text_writer;

  text_stream_origin(const std::string &from, const std::string &options_json)
      : format_(from == "csv" ? fmt::text_format::csv : fmt::text_format::ndjson), options_json_(options_json) {}

  quire::result<std::unique_ptr<fmt::text_writer>> create(fmt::byte_sink &sink) {
    auto parsed = fmt::parse_write_options_json(options_json_, options_, input_);
    if (!parsed) return parsed.error();
    return fmt::text_writer::create(format_, options_, sink, input_);
  }

  static quire::result<void> feed(fmt::text_writer &writer, std::string_view piece) { return writer.feed(piece); }

 private:
  fmt::text_format format_;
  std::string options_json_;
  fmt::write_options options_;
  fmt::input_options input_;
};

}  // namespace

QUIRE_BINDINGS(format_stream) {
  quire::wasm::register_stream_writer<text_stream_origin, std::string, std::string>("FormatStreamWriter");
}
