// quire/result.h — a value or a quire::error, in the shape of simdjson's simdjson_result.
//
//   quire::result<document> r = quire::json::parse(bytes);
//   if (!r) { std::puts(r.error().describe().c_str()); return 1; }
//   document doc = std::move(r).value();
#pragma once

#include <cassert>
#include <utility>
#include <variant>

#include "quire/error.h"

namespace quire {

template <typename T>
class [[nodiscard]] result {
 public:
  result(T value) : state_(std::in_place_index<0>, std::move(value)) {}
  result(quire::error err) : state_(std::in_place_index<1>, std::move(err)) {}
  result(error_code code, std::string message, uint64_t offset = error::NO_OFFSET)
      : state_(std::in_place_index<1>, quire::error(code, std::move(message), offset)) {}

  bool ok() const noexcept { return state_.index() == 0; }
  explicit operator bool() const noexcept { return ok(); }

  /// The value. Calling it on an error is a programmer error (asserted).
  T &value() & {
    assert(ok());
    return std::get<0>(state_);
  }
  const T &value() const & {
    assert(ok());
    return std::get<0>(state_);
  }
  T value() && {
    assert(ok());
    return std::get<0>(std::move(state_));
  }
  T *operator->() { return &value(); }
  const T *operator->() const { return &value(); }
  T &operator*() & { return value(); }
  const T &operator*() const & { return value(); }

  /// The error. Calling it on a value is a programmer error (asserted).
  const quire::error &error() const & {
    assert(!ok());
    return std::get<1>(state_);
  }
  quire::error error() && {
    assert(!ok());
    return std::get<1>(std::move(state_));
  }
  error_code code() const noexcept { return ok() ? error_code::OK : std::get<1>(state_).code; }

 private:
  std::variant<T, quire::error> state_;
};

/// A result with no value: success or an error.
template <>
class [[nodiscard]] result<void> {
 public:
  result() = default;
  result(quire::error err) : err_(std::move(err)) {}
  result(error_code code, std::string message, uint64_t offset = error::NO_OFFSET)
      : err_(code, std::move(message), offset) {}

  bool ok() const noexcept { return err_.code == error_code::OK; }
  explicit operator bool() const noexcept { return ok(); }
  const quire::error &error() const & { return err_; }
  quire::error error() && { return std::move(err_); }
  error_code code() const noexcept { return err_.code; }

 private:
  quire::error err_;
};

}  // namespace quire
