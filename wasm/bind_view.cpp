// Embind bindings of SQL on FHIR ViewDefinitions and of FHIRPath. Views and expressions are
// compiled once into handles; each run takes one copy of its input in the wasm heap and returns
// one record: an error, or core's text of the result (rows as NDJSON lines, a FHIRPath
// collection as a JSON array), which the wrapper parses. A view's rows also come out as typed
// columns in Arrow's layout (ViewBatchWriter), which the wrapper hands to apache-arrow.
#include <emscripten/bind.h>

#include <chrono>
#include <memory>
#include <string>
#include <vector>

#include "../core/src/common/alloc.h"
#include "bind_stream_writer.h"
#include "bind_support.h"
#include "quire/fhirpath.h"
#include "quire/format.h"
#include "quire/json.h"
#include "quire/view.h"

namespace {

// now(), today() and timeOfDay() give the time read here (Date.now() under Emscripten): core reads
// no clock. A view's runner reads it when it is made.
quire::fhirpath::clock_reading read_clock() {
  auto since_epoch = std::chrono::system_clock::now().time_since_epoch();
  return {std::chrono::duration_cast<std::chrono::milliseconds>(since_epoch).count(), 0};
}

using quire::wasm::error_record;

/// A result: an error (code "" on success) or core's text.
struct text_record {
  error_record error;
  std::string text;
};

std::string_view heap_text(uintptr_t pointer, size_t length) {
  auto bytes = quire::wasm::heap_bytes(pointer, length);
  return {reinterpret_cast<const char *>(bytes.data()), bytes.size()};
}

/// Embind copies a returned string into a fresh malloc whose failure 3.1.6 does not check: a text
/// sized by the data (rows, a collection) must fit twice, or it is OUT_OF_MEMORY, not an abort.
text_record text_result(std::string text, const char *what) {
  text_record out;
  if (text.size() >= quire::detail::PROBE_THRESHOLD && !quire::detail::can_allocate(text.size())) {
    out.error = quire::wasm::to_record(quire::detail::out_of_memory(text.size(), what));
    return out;
  }
  out.text = std::move(text);
  return out;
}

text_record error_result(const quire::error &e) {
  text_record out;
  out.error = quire::wasm::to_record(e);
  return out;
}

std::string rows_ndjson(const quire::view::compiled_view &v, const std::vector<quire::view::row> &rows) {
  std::string text;
  for (const auto &r : rows) {
    quire::view::append_row_json(text, v, r);
    text += '\n';
  }
  return text;
}

/// A compiled ViewDefinition. Shared with the streams made from it, so that closing the view
/// while a stream is open leaves the stream working.
class view_handle {
 public:
  view_handle(uintptr_t pointer, size_t length) {
    auto r = quire::view::compile(heap_text(pointer, length));
    if (r) view_ = std::make_shared<quire::view::compiled_view>(std::move(r).value());
    else error_ = quire::wasm::to_record(r.error());
  }

  error_record error() const { return error_; }
  std::string resource() const { return view_ ? std::string(view_->resource()) : std::string(); }
  std::string name() const { return view_ ? std::string(view_->name()) : std::string(); }
  std::string columns() const { return view_ ? quire::view::columns_to_json(*view_) : std::string("[]"); }

  /// The rows of a resource, a Bundle, a JSON array of resources or NDJSON, as NDJSON lines.
  text_record run(uintptr_t pointer, size_t length) {
    if (!view_) return text_record{error_, {}};  // the wrapper never runs a view that did not compile
    if (!runner_)
      runner_ = std::make_unique<quire::view::runner>(*view_, quire::view::run_options{.now = read_clock()});
    std::vector<quire::view::row> rows;
    auto ok = runner_->run_text(heap_text(pointer, length), rows);
    if (!ok) return error_result(ok.error());
    return text_result(rows_ndjson(*view_, rows), "the view's rows");
  }

  const std::shared_ptr<quire::view::compiled_view> &shared() const { return view_; }

 private:
  std::shared_ptr<quire::view::compiled_view> view_;
  std::unique_ptr<quire::view::runner> runner_;
  error_record error_;
};

/// NDJSON fed piece by piece; each feed returns the rows of the lines it completed.
class view_stream {
 public:
  view_stream(const view_handle &v, double max_line_bytes)
      : view_(v.shared()),
        feeder_(*view_,
                max_line_bytes > 0 ? static_cast<uint64_t>(max_line_bytes)
                                   : quire::view::ndjson_feeder::DEFAULT_MAX_LINE_BYTES,
                quire::view::run_options{.now = read_clock()}) {}

  /// The rows of the lines before a bad one come with its error, so that the stream gives them.
  text_record feed(uintptr_t pointer, size_t length) {
    std::vector<quire::view::row> rows;
    return with_rows(feeder_.feed(heap_text(pointer, length), rows), rows);
  }

  text_record finish() {
    std::vector<quire::view::row> rows;
    return with_rows(feeder_.finish(rows), rows);
  }

 private:
  std::shared_ptr<quire::view::compiled_view> view_;  // the feeder points into it
  quire::view::ndjson_feeder feeder_;

  text_record with_rows(const quire::result<void> &ok, const std::vector<quire::view::row> &rows) {
    text_record out = text_result(rows_ndjson(*view_, rows), "the view's rows");
    if (!ok && out.error.code.empty()) out.error = quire::wasm::to_record(ok.error());
    return out;
  }
};

/// A view's rows written as NDJSON, CSV or a .quire table (core's table_writer), fed NDJSON piece
/// by piece, for quire::wasm::stream_writer (as format's stream writer is).
class view_table_origin {
 public:
  using writer_type = quire::view::table_writer;

  view_table_origin(const view_handle &v, const std::string &kind, const std::string &options_json)
      : view_(v.shared()),
        kind_(kind == "csv"      ? quire::view::output_kind::csv
              : kind == "ndjson" ? quire::view::output_kind::ndjson
                                 : quire::view::output_kind::quire),
        options_json_(options_json) {}

  quire::result<std::unique_ptr<quire::view::table_writer>> create(quire::format::byte_sink &sink) {
    quire::format::write_options options;
    quire::format::input_options input;  // the view fixes the schema: nothing to read here
    auto parsed = quire::format::parse_write_options_json(options_json_, options, input);
    if (!parsed) return parsed.error();
    return quire::view::table_writer::create(*view_, kind_, options, sink,
                                             quire::view::run_options{.now = read_clock()});
  }

  static quire::result<void> feed(quire::view::table_writer &writer, std::string_view piece) {
    return writer.feed_ndjson(piece);
  }

 private:
  std::shared_ptr<quire::view::compiled_view> view_;  // the writer points into it
  quire::view::output_kind kind_;
  std::string options_json_;
};

/// Where a batch of typed columns is in the heap (column_buffer's layout, quire/view.h): heap
/// pointers and byte counts, 0 where the type has no such buffer.
struct batch_column_record {
  double nulls = 0;
  double validity = 0, validity_bytes = 0;
  double values = 0, values_bytes = 0;
  double offsets = 0;  // rows + 1 int32 values
};

/// A view's rows as typed columns (table_writer::create_batches), fed NDJSON piece by piece. The
/// batches a call completes are held here until the wrapper has copied them out (batches(),
/// batchRows(), column(), then clearBatches()), so the heap holds the writer's batch and what one
/// piece completed, never the whole table.
class view_batch_writer final : public quire::view::batch_sink {
 public:
  view_batch_writer(const view_handle &v, double batch_rows) : view_(v.shared()) {
    quire::view::batch_options options;
    // The wrapper passes a whole number from 1 to 2^31 (0: the default); anything else is the default.
    if (batch_rows >= 1 && batch_rows <= 2147483648.0) options.batch_rows = static_cast<size_t>(batch_rows);
    auto w = quire::view::table_writer::create_batches(*view_, *this, options,
                                                       quire::view::run_options{.now = read_clock()});
    if (!w) {
      error_ = quire::wasm::to_record(w.error());
      return;
    }
    writer_ = std::move(w).value();
    auto schema = quire::view::table_schema(*view_);
    for (const auto &c : schema->columns) {
      if (!types_.empty()) types_ += ',';
      types_ += quire::format::type_name(c.type);
    }
  }

  quire::result<void> write(quire::view::column_batch &batch) override {
    quire::view::column_batch kept;
    kept.rows = batch.rows;
    kept.columns.resize(batch.columns.size());
    for (size_t i = 0; i < batch.columns.size(); ++i) {
      auto &from = batch.columns[i];
      auto &to = kept.columns[i];
      to.type = from.type;
      to.nulls = from.nulls;
      to.validity = std::move(from.validity);
      to.values = std::move(from.values);
      to.offsets = std::move(from.offsets);
    }
    ready_.push_back(std::move(kept));
    return {};
  }

  error_record error() const { return error_; }
  /// The table types of the columns, comma-separated (`string,integer,decimal`), "" on error.
  std::string types() const { return types_; }

  error_record feed(uintptr_t pointer, size_t length) {
    if (!writer_) return error_;
    auto r = writer_->feed_ndjson(std::string_view(reinterpret_cast<const char *>(pointer), length));
    return r ? error_record() : quire::wasm::to_record(r.error());
  }

  error_record finish() {
    if (!writer_) return error_;
    auto r = writer_->finish();
    if (!r) return quire::wasm::to_record(r.error());
    rows_ = static_cast<double>(*r);
    return {};
  }

  double rows() const { return rows_; }
  double batches() const { return static_cast<double>(ready_.size()); }
  double batch_rows(size_t b) const { return b < ready_.size() ? static_cast<double>(ready_[b].rows) : 0; }

  batch_column_record column(size_t b, size_t c) const {
    batch_column_record r;
    if (b >= ready_.size() || c >= ready_[b].columns.size()) return r;
    const auto &col = ready_[b].columns[c];
    auto ptr = [](const void *p) { return static_cast<double>(reinterpret_cast<uintptr_t>(p)); };
    r.nulls = static_cast<double>(col.nulls);
    r.validity = ptr(col.validity.data());
    r.validity_bytes = static_cast<double>(col.validity.size());
    r.values = ptr(col.values.data());
    r.values_bytes = static_cast<double>(col.values.size());
    r.offsets = col.offsets.empty() ? 0 : ptr(col.offsets.data());
    return r;
  }

  void clear_batches() { ready_.clear(); }

 private:
  std::shared_ptr<quire::view::compiled_view> view_;  // the writer points into it
  std::unique_ptr<quire::view::table_writer> writer_;
  std::vector<quire::view::column_batch> ready_;
  std::string types_;
  error_record error_;
  double rows_ = 0;
};

/// A compiled FHIRPath expression with its evaluator.
class fhirpath_handle {
 public:
  fhirpath_handle(uintptr_t pointer, size_t length) {
    auto r = quire::fhirpath::compile(heap_text(pointer, length));
    if (r) expr_ = std::make_unique<quire::fhirpath::expression>(std::move(r).value());
    else error_ = quire::wasm::to_record(r.error());
  }

  error_record error() const { return error_; }
  std::string text() const { return expr_ ? std::string(expr_->text()) : std::string(); }

  /// The result collection over one resource (JSON text), as a JSON array.
  text_record evaluate(uintptr_t pointer, size_t length) {
    if (!expr_) return text_record{error_, {}};  // the wrapper never evaluates one that did not compile
    auto source = quire::borrow_bytes(quire::wasm::heap_bytes(pointer, length), quire::wasm::INPUT_PADDING);
    auto doc = quire::json::parse(*source);
    if (!doc) return error_result(doc.error());
    quire::fhirpath::environment env;
    env.now = read_clock();
    auto out = evaluator_.evaluate(*expr_, doc->root(), env);
    if (!out) return error_result(out.error());
    return text_result(quire::fhirpath::to_json(**out), "the FHIRPath result");
  }

 private:
  std::unique_ptr<quire::fhirpath::expression> expr_;
  quire::fhirpath::evaluator evaluator_;
  error_record error_;
};

}  // namespace

QUIRE_BINDINGS(view) {
  using namespace emscripten;
  value_object<text_record>("ViewTextRecord").field("error", &text_record::error).field("text", &text_record::text);
  class_<view_handle>("CompiledView")
      .constructor<uintptr_t, size_t>()
      .function("error", &view_handle::error)
      .function("resource", &view_handle::resource)
      .function("name", &view_handle::name)
      .function("columns", &view_handle::columns)
      .function("run", &view_handle::run);
  class_<view_stream>("ViewStream")
      .constructor<const view_handle &, double>()
      .function("feed", &view_stream::feed)
      .function("finish", &view_stream::finish);
  quire::wasm::register_stream_writer<view_table_origin, const view_handle &, std::string, std::string>("ViewWriter");
  value_object<batch_column_record>("ViewBatchColumn")
      .field("nulls", &batch_column_record::nulls)
      .field("validity", &batch_column_record::validity)
      .field("validityBytes", &batch_column_record::validity_bytes)
      .field("values", &batch_column_record::values)
      .field("valuesBytes", &batch_column_record::values_bytes)
      .field("offsets", &batch_column_record::offsets);
  class_<view_batch_writer>("ViewBatchWriter")
      .constructor<const view_handle &, double>()
      .function("error", &view_batch_writer::error)
      .function("types", &view_batch_writer::types)
      .function("feed", &view_batch_writer::feed, allow_raw_pointers())
      .function("finish", &view_batch_writer::finish)
      .function("rows", &view_batch_writer::rows)
      .function("batches", &view_batch_writer::batches)
      .function("batchRows", &view_batch_writer::batch_rows)
      .function("column", &view_batch_writer::column)
      .function("clearBatches", &view_batch_writer::clear_batches);
  class_<fhirpath_handle>("FhirpathExpression")
      .constructor<uintptr_t, size_t>()
      .function("error", &fhirpath_handle::error)
      .function("text", &fhirpath_handle::text)
      .function("evaluate", &fhirpath_handle::evaluate);
}
