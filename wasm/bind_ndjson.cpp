// Embind bindings of the NDJSON reader: a stream handle fed chunk by chunk (each chunk one copy
// into the wasm heap); each feed returns what the chunk's complete lines gave as one JSON text,
// core's (quire::ndjson::feed_json).
#include <emscripten/bind.h>

#include <cstdlib>

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

}  // namespace

EMSCRIPTEN_BINDINGS(quire_ndjson) {
  using namespace emscripten;
  class_<ndjson_stream>("NdjsonStream")
      .constructor<double, bool, bool, double, double>()
      .function("feed", &ndjson_stream::feed)
      .function("finish", &ndjson_stream::finish)
      .function("stats", &ndjson_stream::stats);
}
