// Embind bindings of the NDJSON reader: a stream handle fed chunk by chunk (each chunk one copy
// into the wasm heap); each feed returns what the chunk's complete lines gave as one JSON text,
// core's (quire::ndjson::feed_json).
#include <emscripten/bind.h>

#include <cstdlib>

#include "bind_sources.h"
#include "bind_support.h"
#include "quire/ndjson.h"

namespace {

/// A stream: feed(pointer, length) and finish() return `{"items":[...],"error":null|{...}}`, each
/// item `{"line":N,"offset":N,"resource":{...}}`, `{"line":N,"issue":{...}}` or `{"line":N,"error":{...}}`.
class ndjson_stream {
 public:
  ndjson_stream(double max_line_bytes, bool continue_on_error, bool strict, double max_depth, double max_issues) {
    quire::ndjson::options o;
    if (max_line_bytes > 0) o.max_line_bytes = static_cast<uint64_t>(max_line_bytes);
    o.continue_on_error = continue_on_error;
    o.fhir.strict = strict;
    if (max_depth > 0) o.fhir.max_depth = static_cast<size_t>(max_depth);
    if (max_issues > 0) o.fhir.max_issues = static_cast<size_t>(max_issues);
    reader_ = std::make_unique<quire::ndjson::reader>(o);
  }

  std::string feed(uintptr_t pointer, size_t length) {
    auto bytes = quire::wasm::heap_bytes(pointer, length);
    out_.begin();
    auto r = reader_->feed(std::string_view(reinterpret_cast<const char *>(bytes.data()), bytes.size()), visitor());
    return out_.end(r);
  }

  std::string finish() {
    out_.begin();
    auto r = reader_->finish(visitor());
    return out_.end(r);
  }

  /// Counts so far, as JSON.
  std::string stats() const { return quire::ndjson::stats_json(reader_->counts(), quire::ndjson::key_case::camel); }

 private:
  std::unique_ptr<quire::ndjson::reader> reader_;
  quire::ndjson::feed_json out_;

  quire::ndjson::line_callback visitor() {
    return [this](const quire::ndjson::line_result &l) {
      out_.add(l);
      return true;
    };
  }
};

/// Byte ranges of an input read through a JavaScript reader (bind_sources.h): core's answer, or
/// its error.
struct range_record {
  quire::wasm::error_record error;
  double start = 0, end = 0;
};
struct split_record {
  quire::wasm::error_record error;
  std::string text;  // quire split's lines: {"part","start","end","bytes"}
};

range_record line_range(double size, emscripten::val reader, double start, double end) {
  range_record out;
  quire::wasm::js_range_source source(size, std::move(reader));
  auto r = quire::ndjson::line_range(source, {static_cast<uint64_t>(start), static_cast<uint64_t>(end)});
  if (!r) {
    out.error = quire::wasm::to_record(r.error());
    return out;
  }
  out.start = static_cast<double>(r->start);
  out.end = static_cast<double>(r->end);
  return out;
}

split_record split_lines(double size, emscripten::val reader, double parts) {
  split_record out;
  quire::wasm::js_range_source source(size, std::move(reader));
  auto r = quire::ndjson::split_lines(source, static_cast<uint64_t>(parts));
  if (!r) {
    out.error = quire::wasm::to_record(r.error());
    return out;
  }
  for (size_t i = 0; i < r->size(); ++i) {
    out.text += quire::ndjson::byte_range_json((*r)[i], i);
    out.text += '\n';
  }
  return out;
}

}  // namespace

QUIRE_BINDINGS(ndjson) {
  using namespace emscripten;
  class_<ndjson_stream>("NdjsonStream")
      .constructor<double, bool, bool, double, double>()
      .function("feed", &ndjson_stream::feed)
      .function("finish", &ndjson_stream::finish)
      .function("stats", &ndjson_stream::stats);
  value_object<range_record>("NdjsonRangeRecord")
      .field("error", &range_record::error)
      .field("start", &range_record::start)
      .field("end", &range_record::end);
  value_object<split_record>("NdjsonSplitRecord")
      .field("error", &split_record::error)
      .field("text", &split_record::text);
  function("ndjsonLineRange", &line_range);
  function("ndjsonSplit", &split_lines);
}
