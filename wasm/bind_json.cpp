// Embind bindings of the JSON layer. Input bytes arrive as one copy in the wasm heap (pointer and
// length, padded by the wrapper); results leave as one small record or one JSON text.
#include <emscripten/bind.h>

#include <cstdlib>

#include "bind_support.h"
#include "quire/json.h"

namespace {

using quire::wasm::error_record;

struct stats_record {
  error_record error;
  double nulls = 0, booleans = 0, numbers = 0, strings = 0, arrays = 0, objects = 0, keys = 0, max_depth = 0, bytes = 0;
};

quire::json::limits make_limits(double max_depth, double max_bytes) {
  quire::json::limits lim;
  if (max_depth > 0) lim.max_depth = static_cast<size_t>(max_depth);
  if (max_bytes > 0) lim.max_document_bytes = static_cast<uint64_t>(max_bytes);
  return lim;
}

stats_record check_json(uintptr_t pointer, size_t length, double max_depth, double max_bytes) {
  auto source = quire::borrow_bytes(quire::wasm::heap_bytes(pointer, length), quire::wasm::INPUT_PADDING);
  auto r = quire::json::check(*source, make_limits(max_depth, max_bytes));
  stats_record out;
  if (!r) {
    out.error = quire::wasm::to_record(r.error());
    return out;
  }
  const auto &s = r.value();
  out.nulls = static_cast<double>(s.nulls);
  out.booleans = static_cast<double>(s.booleans);
  out.numbers = static_cast<double>(s.numbers);
  out.strings = static_cast<double>(s.strings);
  out.arrays = static_cast<double>(s.arrays);
  out.objects = static_cast<double>(s.objects);
  out.keys = static_cast<double>(s.keys);
  out.max_depth = static_cast<double>(s.max_depth);
  out.bytes = static_cast<double>(s.bytes);
  return out;
}

/// A parsed document held in the wasm heap, with the input buffer it borrows (freed with it).
class json_document {
 public:
  json_document(uintptr_t pointer, size_t length, double max_depth, double max_bytes)
      : buffer_(reinterpret_cast<void *>(pointer)) {
    auto source = quire::borrow_bytes(quire::wasm::heap_bytes(pointer, length), quire::wasm::INPUT_PADDING);
    auto r = quire::json::parse(*source, make_limits(max_depth, max_bytes));
    if (r) doc_ = std::move(r).value();
    else error_ = quire::wasm::to_record(r.error());
  }
  ~json_document() { std::free(buffer_); }
  json_document(const json_document &) = delete;
  json_document &operator=(const json_document &) = delete;

  error_record error() const { return error_; }
  double value_count() const { return static_cast<double>(doc_.value_count()); }
  double max_depth() const { return static_cast<double>(doc_.max_depth()); }
  double memory_bytes() const { return static_cast<double>(doc_.memory_bytes()); }

  /// The value at a JSON Pointer as compact JSON text (numbers exactly as written); "" when absent.
  std::string text_at(const std::string &pointer) const {
    auto v = doc_.root().at_pointer(pointer);
    if (!v || !v->has_value()) return {};
    return quire::json::to_json(**v);
  }
  /// The kind of the value at a JSON Pointer ("object", "number"...); "" when absent.
  std::string kind_at(const std::string &pointer) const {
    auto v = doc_.root().at_pointer(pointer);
    if (!v || !v->has_value()) return {};
    return std::string(quire::json::kind_name((*v)->type()));
  }

 private:
  void *buffer_;
  quire::json::document doc_;
  error_record error_;
};

}  // namespace

QUIRE_BINDINGS(json) {
  using namespace emscripten;
  value_object<stats_record>("JsonStatsRecord")
      .field("error", &stats_record::error)
      .field("nulls", &stats_record::nulls)
      .field("booleans", &stats_record::booleans)
      .field("numbers", &stats_record::numbers)
      .field("strings", &stats_record::strings)
      .field("arrays", &stats_record::arrays)
      .field("objects", &stats_record::objects)
      .field("keys", &stats_record::keys)
      .field("maxDepth", &stats_record::max_depth)
      .field("bytes", &stats_record::bytes);
  function("jsonCheck", &check_json);
  class_<json_document>("JsonDocument")
      .constructor<uintptr_t, size_t, double, double>()
      .function("error", &json_document::error)
      .function("valueCount", &json_document::value_count)
      .function("maxDepth", &json_document::max_depth)
      .function("memoryBytes", &json_document::memory_bytes)
      .function("textAt", &json_document::text_at)
      .function("kindAt", &json_document::kind_at);
}
