// Embind bindings of the NDJSON reader: a stream handle fed chunk by chunk (each chunk one copy
// into the wasm heap); each feed returns what the chunk's complete lines gave as one JSON text.
#include <emscripten/bind.h>

#include <cstdlib>

#include "bind_support.h"
#include "quire/ndjson.h"

namespace {

void append_error(std::string &out, const quire::error &e) {
  out += "{\"code\":\"";
  out += quire::error_name(e.code);
  out += "\",\"message\":";
  quire::json::append_quoted(out, e.message);
  out += ",\"offset\":" + (e.offset == quire::error::NO_OFFSET ? std::string("-1") : std::to_string(e.offset));
  out += ",\"line\":" + std::to_string(e.line) + ",\"column\":" + std::to_string(e.column) + ",\"path\":";
  quire::json::append_quoted(out, e.path);
  out += ",\"text\":";
  quire::json::append_quoted(out, e.describe());
  out += '}';
}

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
    begin();
    auto r = reader_->feed(std::string_view(reinterpret_cast<const char *>(bytes.data()), bytes.size()), visitor());
    return end(r);
  }

  std::string finish() {
    begin();
    auto r = reader_->finish(visitor());
    return end(r);
  }

  /// Counts so far, as JSON.
  std::string stats() const {
    const auto &s = reader_->counts();
    std::string out = "{\"bytes\":" + std::to_string(s.bytes) + ",\"lines\":" + std::to_string(s.lines) +
                      ",\"blankLines\":" + std::to_string(s.blank_lines) +
                      ",\"resources\":" + std::to_string(s.resources) + ",\"badLines\":" + std::to_string(s.bad_lines) +
                      ",\"invalidResources\":" + std::to_string(s.invalid_resources) +
                      ",\"issues\":" + std::to_string(s.issues) + ",\"longestLine\":" + std::to_string(s.longest_line) +
                      ",\"byType\":{";
    bool first = true;
    for (const auto &[type, count] : s.by_type) {
      if (!first) out += ',';
      first = false;
      quire::json::append_quoted(out, type);
      out += ':' + std::to_string(count);
    }
    return out + "}}";
  }

 private:
  std::unique_ptr<quire::ndjson::reader> reader_;
  std::string out_;
  bool first_ = true;

  void begin() {
    out_ = "{\"items\":[";
    first_ = true;
  }
  void item_start(uint64_t line) {
    if (!first_) out_ += ',';
    first_ = false;
    out_ += "{\"line\":" + std::to_string(line) + ',';
  }
  quire::ndjson::line_callback visitor() {
    return [this](const quire::ndjson::line_result &l) {
      if (l.error) {
        item_start(l.line);
        out_ += "\"error\":";
        append_error(out_, *l.error);
        out_ += '}';
        return true;
      }
      item_start(l.line);
      out_ += "\"offset\":" + std::to_string(l.offset) + ",\"resource\":";
      out_ += l.text;  // the line as read: valid JSON, numbers exactly as written
      out_ += '}';
      for (const auto &i : l.issues) {
        item_start(l.line);
        std::string one = quire::fhir::issues_to_json({i});
        out_ += "\"issue\":";
        out_.append(one, 1, one.size() - 2);
        out_ += '}';
      }
      return true;
    };
  }
  std::string end(const quire::result<void> &r) {
    out_ += "],\"error\":";
    if (r) out_ += "null";
    else append_error(out_, r.error());
    out_ += '}';
    return std::move(out_);
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
