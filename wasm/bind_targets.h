// A store's file in JavaScript's hands, shared by the store's and the listener's bindings: an
// append_target whose bytes a Node file or the wrapper's memory holds, and the random source the
// wrapper gives (crypto.getRandomValues).
#pragma once

#include <emscripten/val.h>

#include <cstdint>
#include <string>

#include "quire/store.h"

namespace quire::wasm {

inline double heap_address(const void *p) { return static_cast<double>(reinterpret_cast<uintptr_t>(p)); }

/// An append_target whose bytes JavaScript holds. `target` answers size() -> bytes,
/// read(offset, length, pointer) -> bytes copied into the heap, and append(pointer, length),
/// sync(), truncate(size) -> "" or the operating system's message (IO_ERROR here). Its hooks
/// never throw: the wrapper catches and answers with the message.
class js_target final : public format::append_target {
 public:
  explicit js_target(emscripten::val target) : target_(std::move(target)) {}
  uint64_t size() const noexcept override { return static_cast<uint64_t>(target_.call<double>("size")); }
  result<void> read_at(uint64_t offset, std::span<uint8_t> out) const override {
    if (offset > size() || out.size() > size() - offset) {
      return {error_code::OUT_OF_RANGE, "read of " + std::to_string(out.size()) + " bytes past the end", offset};
    }
    if (out.empty()) return {};
    double got = target_.call<double>("read", static_cast<double>(offset), static_cast<double>(out.size()),
                                      heap_address(out.data()));
    if (got != static_cast<double>(out.size())) {
      return {error_code::IO_ERROR,
              "the file returned " + std::to_string(static_cast<int64_t>(got)) + " of " + std::to_string(out.size()) +
                  " bytes",
              offset};
    }
    return {};
  }
  std::string_view kind() const noexcept override { return "range"; }
  result<void> append(std::span<const uint8_t> bytes) override {
    return answer(target_.call<std::string>("append", heap_address(bytes.data()), static_cast<double>(bytes.size())));
  }
  result<void> sync() override { return answer(target_.call<std::string>("sync")); }
  result<void> truncate(uint64_t size) override {
    return answer(target_.call<std::string>("truncate", static_cast<double>(size)));
  }

 private:
  static result<void> answer(const std::string &message) {
    if (message.empty()) return {};
    return error(error_code::IO_ERROR, message);
  }

  emscripten::val target_;
};

/// hooks.random(pointer, length) fills the heap range from crypto.getRandomValues: "" or a message.
inline format::random_source random_from(emscripten::val hooks) {
  return [hooks](std::span<uint8_t> out) -> result<void> {
    if (out.empty()) return {};
    auto message = hooks.call<std::string>("random", heap_address(out.data()), static_cast<double>(out.size()));
    if (message.empty()) return {};
    return error(error_code::IO_ERROR, message);
  };
}

}  // namespace quire::wasm
