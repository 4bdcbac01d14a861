// The rows of one chunk that a query step selects, in one of three forms: every row, a sorted
// list of rows, or one byte a row. A lookup selects one row in 65,536 (an index's candidate, a
// find's key): as a list it costs a few bytes where a byte mask costs a chunk-wide allocation,
// fill and scan at each step. A scan that keeps many rows uses the mask, whose test is one load.
// Every step takes any form and the engine's evaluator is written once over `each`.
#pragma once

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <vector>

namespace quire::format::detail {

class selection {
 public:
  enum class form : uint8_t { all, list, mask };

  selection() = default;
  /// Every row of a chunk of `rows` rows.
  static selection every(uint32_t rows) {
    selection s;
    s.rows_ = rows;
    s.form_ = form::all;
    return s;
  }
  /// The rows in `list` (ascending, each once, each below `rows`).
  static selection of_list(uint32_t rows, std::vector<uint32_t> list) {
    selection s;
    s.rows_ = rows;
    s.form_ = form::list;
    s.list_ = std::move(list);
    return s;
  }
  /// The rows whose byte in `mask` is 1 (one byte a row of the chunk).
  static selection of_mask(std::vector<uint8_t> mask) {
    selection s;
    s.rows_ = static_cast<uint32_t>(mask.size());
    s.form_ = form::mask;
    s.mask_ = std::move(mask);
    return s;
  }

  /// The rows of `mask`, as a list when they are few (what or and not leave after a lookup).
  static selection fitted(std::vector<uint8_t> mask) {
    const auto rows = static_cast<uint32_t>(mask.size());
    const uint32_t few = std::max<uint32_t>(rows / 64, 16);
    uint32_t n = 0;
    for (const uint8_t *p = mask.data(), *end = mask.data() + rows;
         n <= few && (p = static_cast<const uint8_t *>(std::memchr(p, 1, static_cast<size_t>(end - p)))) != nullptr;
         ++p)
      ++n;
    if (n > few) return of_mask(std::move(mask));
    std::vector<uint32_t> list;
    list.reserve(n);
    for (const uint8_t *p = mask.data(), *end = mask.data() + rows;
         (p = static_cast<const uint8_t *>(std::memchr(p, 1, static_cast<size_t>(end - p)))) != nullptr; ++p)
      list.push_back(static_cast<uint32_t>(p - mask.data()));
    return of_list(rows, std::move(list));
  }

  /// The chunk's row count (not the selected rows').
  uint32_t rows() const { return rows_; }
  form kind() const { return form_; }

  uint64_t count() const {
    switch (form_) {
      case form::all: return rows_;
      case form::list: return list_.size();
      case form::mask: return static_cast<uint64_t>(std::count(mask_.begin(), mask_.end(), uint8_t{1}));
    }
    return 0;
  }
  bool empty() const {
    switch (form_) {
      case form::all: return rows_ == 0;
      case form::list: return list_.empty();
      case form::mask: return std::memchr(mask_.data(), 1, mask_.size()) == nullptr;
    }
    return true;
  }
  /// Selected rows in [from, to), counted up to `cap` (a caller asking "none, one or more" stops at 2).
  uint32_t count_in(uint32_t from, uint32_t to, uint32_t cap = UINT32_MAX) const {
    switch (form_) {
      case form::all: return std::min(to - from, cap);
      case form::list: {
        auto [lo, hi] = list_range(from, to);
        return std::min(static_cast<uint32_t>(hi - lo), cap);
      }
      case form::mask: {
        if (cap == UINT32_MAX)
          return static_cast<uint32_t>(std::count(mask_.begin() + from, mask_.begin() + to, uint8_t{1}));
        uint32_t n = 0;
        for (const uint8_t *p = mask_.data() + from, *end = mask_.data() + to;
             n < cap && (p = static_cast<const uint8_t *>(std::memchr(p, 1, static_cast<size_t>(end - p)))) != nullptr;
             ++p)
          ++n;
        return n;
      }
    }
    return 0;
  }
  /// The first selected row in [from, to), or `to`.
  uint32_t first_in(uint32_t from, uint32_t to) const {
    switch (form_) {
      case form::all: return from;
      case form::list: {
        auto [lo, hi] = list_range(from, to);
        return lo == hi ? to : *lo;
      }
      case form::mask: {
        const void *p = std::memchr(mask_.data() + from, 1, to - from);
        return p ? static_cast<uint32_t>(static_cast<const uint8_t *>(p) - mask_.data()) : to;
      }
    }
    return to;
  }

  /// Calls fn(row) for each selected row in [from, to), ascending; fn returns false to stop.
  /// Returns false when it stopped.
  template <typename Fn>
  [[gnu::always_inline]] bool each(Fn fn, uint32_t from = 0, uint32_t to = UINT32_MAX) const {
    to = std::min(to, rows_);
    switch (form_) {
      case form::all:
        for (uint32_t r = from; r < to; ++r)
          if (!fn(r)) return false;
        return true;
      case form::list: {
        auto [lo, hi] = list_range(from, to);
        for (auto it = lo; it != hi; ++it)
          if (!fn(*it)) return false;
        return true;
      }
      case form::mask: {
        const uint8_t *base = mask_.data();
        for (uint32_t r = from; r < to; ++r) {
          if (!base[r]) continue;
          if (!fn(r)) return false;
        }
        return true;
      }
    }
    return true;
  }
  /// The mask's bytes (form mask only).
  const uint8_t *mask_data() const { return mask_.data(); }
  /// each() from the last row to the first.
  template <typename Fn>
  bool each_reverse(Fn fn) const {
    switch (form_) {
      case form::all:
        for (uint32_t r = rows_; r-- > 0;)
          if (!fn(r)) return false;
        return true;
      case form::list:
        for (auto it = list_.rbegin(); it != list_.rend(); ++it)
          if (!fn(*it)) return false;
        return true;
      case form::mask:
        for (uint32_t r = rows_; r-- > 0;)
          if (mask_[r] && !fn(r)) return false;
        return true;
    }
    return true;
  }

  /// Drops the rows `deleted` marks (one byte a row of the chunk).
  void drop(const uint8_t *deleted) {
    if (!deleted) return;
    switch (form_) {
      case form::all:
        mask_.resize(rows_);
        for (uint32_t i = 0; i < rows_; ++i) mask_[i] = static_cast<uint8_t>(!deleted[i]);
        form_ = form::mask;
        break;
      case form::list: std::erase_if(list_, [&](uint32_t r) { return deleted[r] != 0; }); break;
      case form::mask:
        for (uint32_t i = 0; i < rows_; ++i) mask_[i] &= static_cast<uint8_t>(!deleted[i]);
        break;
    }
  }

  /// One byte a row (or, or not, which combine whole selections).
  std::vector<uint8_t> to_mask() const {
    if (form_ == form::mask) return mask_;
    std::vector<uint8_t> m(rows_, form_ == form::all ? 1 : 0);
    if (form_ == form::list)
      for (uint32_t r : list_) m[r] = 1;
    return m;
  }

 private:
  std::pair<std::vector<uint32_t>::const_iterator, std::vector<uint32_t>::const_iterator> list_range(
      uint32_t from, uint32_t to) const {
    auto lo = from == 0 ? list_.begin() : std::lower_bound(list_.begin(), list_.end(), from);
    auto hi = to >= rows_ ? list_.end() : std::lower_bound(lo, list_.end(), to);
    return {lo, hi};
  }

  uint32_t rows_ = 0;
  form form_ = form::list;
  std::vector<uint32_t> list_;
  std::vector<uint8_t> mask_;
};

/// Builds a selection from rows added in ascending order: a list while they are few, a mask once
/// they pass 1/64 of the chunk (a mask then costs less than the list would, and tests in one load).
class selection_builder {
 public:
  explicit selection_builder(uint32_t rows) : rows_(rows), limit_(std::max<uint32_t>(rows / 64, 16)) {}

  void add(uint32_t r) {
    if (dense_) {
      dense_[r] = 1;
      return;
    }
    list_.push_back(r);
    if (list_.size() > limit_) densify();
  }
  /// add(r) when `selected`; a mask stores it without a branch.
  void add_if(uint32_t r, bool selected) {
    if (dense_) dense_[r] = static_cast<uint8_t>(selected);
    else if (selected) add(r);
  }
  /// Adds the rows of `s` in [from, to) (above every row added so far).
  void add_from(const selection &s, uint32_t from, uint32_t to) {
    if (!dense_ && s.count_in(from, to, limit_ + 1) + list_.size() > limit_) densify();
    if (dense_ && s.kind() == selection::form::all) {
      std::memset(dense_ + from, 1, to - from);
      return;
    }
    s.each(
        [&](uint32_t r) {
          add(r);
          return true;
        },
        from, to);
  }
  /// The mask's bytes, made a mask first when it is a list: for a caller that sets a whole page's
  /// rows at once (rows above every row added so far are still 0).
  uint8_t *dense() {
    if (!dense_) densify();
    return dense_;
  }
  selection finish() {
    if (dense_) return selection::of_mask(std::move(mask_));
    return selection::of_list(rows_, std::move(list_));
  }
  /// finish(), a mask of few rows made a list (selection::fitted).
  selection finish_fitted() {
    if (dense_) return selection::fitted(std::move(mask_));
    return selection::of_list(rows_, std::move(list_));
  }

 private:
  void densify() {
    mask_.assign(rows_, 0);
    for (uint32_t r : list_) mask_[r] = 1;
    list_ = {};
    dense_ = mask_.data();
  }

  uint32_t rows_, limit_;
  uint8_t *dense_ = nullptr;  // the mask's bytes once it is one
  std::vector<uint32_t> list_;
  std::vector<uint8_t> mask_;
};

}  // namespace quire::format::detail
