// A byte source read range by range through a synchronous JavaScript reader: what the .quire
// reader (bind_format.cpp) and the NDJSON byte ranges (bind_ndjson.cpp) open large inputs with.
#pragma once

#include <emscripten/val.h>

#include <cstdint>
#include <string>

#include "quire/platform.h"

// reader.read(offset, length, pointer) through an import (bind_sources.cpp), `reader` an Emval
// handle.
extern "C" double quire_read_range(uintptr_t reader, double offset, double length, double pointer)
    __attribute__((import_module("env"), import_name("quire_read_range")));

namespace quire::wasm {

/// A byte source whose read_at calls JavaScript synchronously: `reader.read(offset, length,
/// pointer)` must copy the range into the heap at `pointer` and return the number of bytes it
/// copied (Node: fs.readSync on an open descriptor; a browser Worker: FileReaderSync over
/// Blob.slice). No Asyncify: the call returns before read_at does.
class js_range_source final : public quire::byte_source {
 public:
  js_range_source(double size, emscripten::val reader)
      : size_(static_cast<uint64_t>(size)), reader_(std::move(reader)) {}
  uint64_t size() const noexcept override { return size_; }
  quire::result<void> read_at(uint64_t offset, std::span<uint8_t> out) const override {
    if (offset > size_ || out.size() > size_ - offset) {
      return {quire::error_code::OUT_OF_RANGE, "read of " + std::to_string(out.size()) + " bytes past the end", offset};
    }
    if (out.empty()) return {};
    double got =
        quire_read_range(reinterpret_cast<uintptr_t>(reader_.as_handle()), static_cast<double>(offset),
                         static_cast<double>(out.size()), static_cast<double>(reinterpret_cast<uintptr_t>(out.data())));
    if (got != static_cast<double>(out.size())) {
      return {quire::error_code::IO_ERROR,
              "the reader returned " + std::to_string(static_cast<int64_t>(got)) + " of " + std::to_string(out.size()) +
                  " bytes",
              offset};
    }
    return {};
  }
  std::string_view kind() const noexcept override { return "range"; }

 private:
  uint64_t size_;
  emscripten::val reader_;
};

}  // namespace quire::wasm
