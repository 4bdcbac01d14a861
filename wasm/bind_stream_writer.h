// Shared by the Embind binding files: a core writer fed piece by piece from JavaScript
// (format.writeStream's NDJSON/CSV writer in bind_format.cpp, a view's table writer in
// bind_view.cpp), and its registration under the one set of names the wrapper calls.
#pragma once

#include <emscripten/bind.h>

#include <cstdint>
#include <memory>
#include <string_view>

#include "bind_support.h"
#include "quire/format.h"

namespace quire::wasm {

/// A core writer fed piece by piece (each piece one copy into the heap). The file's bytes collect
/// in the heap only until the wrapper copies them out after each call (outputPointer, outputSize,
/// then clearOutput), so the heap holds the writer's state, not the whole file.
///
/// `Origin` makes the writer and keeps alive what it points into (its options, a compiled view):
/// constructed from the binding's constructor arguments, it has `using writer_type = ...;`,
/// `result<std::unique_ptr<writer_type>> create(quire::format::byte_sink &)` and
/// `static result<void> feed(writer_type &, std::string_view piece)`; `writer_type::finish()`
/// returns the rows written. Errors from creating the writer are returned by error() and by every
/// later call.
template <class Origin>
class stream_writer {
 public:
  template <class... Args>
  explicit stream_writer(const Args &...args) : origin_(args...) {
    auto w = origin_.create(sink_);
    if (!w) error_ = to_record(w.error());
    else writer_ = std::move(w).value();
  }

  error_record error() const { return error_; }

  error_record feed(uintptr_t pointer, size_t length) {
    if (!writer_) return error_;
    auto r = Origin::feed(*writer_, std::string_view(reinterpret_cast<const char *>(pointer), length));
    return r ? error_record() : to_record(r.error());
  }

  error_record finish() {
    if (!writer_) return error_;
    auto r = writer_->finish();
    if (!r) return to_record(r.error());
    rows_ = static_cast<double>(*r);
    return {};
  }

  double rows() const { return rows_; }
  double output_pointer() const { return static_cast<double>(reinterpret_cast<uintptr_t>(sink_.bytes.data())); }
  double output_size() const { return static_cast<double>(sink_.bytes.size()); }
  void clear_output() { sink_.bytes.clear(); }

 private:
  Origin origin_;                    // first: the writer points into it until it is destroyed
  quire::format::vector_sink sink_;  // before writer_: written into until it is destroyed
  std::unique_ptr<typename Origin::writer_type> writer_;
  error_record error_;
  double rows_ = 0;
};

/// Registers stream_writer<Origin> as the JS class `name`, made by `new name(ConstructorArgs...)`.
/// Each method is the instantiation's own (not a base class's): Embind registers a member
/// function under the class that declares it.
template <class Origin, class... ConstructorArgs>
void register_stream_writer(const char *name) {
  using namespace emscripten;
  using writer = stream_writer<Origin>;
  class_<writer>(name)
      .template constructor<ConstructorArgs...>()
      .function("error", &writer::error)
      .function("feed", &writer::feed, allow_raw_pointers())
      .function("finish", &writer::finish)
      .function("rows", &writer::rows)
      .function("outputPointer", &writer::output_pointer)
      .function("outputSize", &writer::output_size)
      .function("clearOutput", &writer::clear_output);
}

}  // namespace quire::wasm
