// core/src/format/format_selection.h: a chunk's selection as every row, a row list or a byte mask
// answers the same (counts, ranges, order, deletions) in each form, and a builder keeps a list
// while the rows are few — a lookup's one row never becomes a chunk-wide mask.
#include <catch2/catch.hpp>
#include <cstdint>
#include <vector>

#include "../core/src/format/format_selection.h"

using quire::format::detail::selection;
using quire::format::detail::selection_builder;

namespace {

std::vector<uint32_t> rows_of(const selection &s, uint32_t from = 0, uint32_t to = UINT32_MAX) {
  std::vector<uint32_t> out;
  s.each(
      [&](uint32_t r) {
        out.push_back(r);
        return true;
      },
      from, to);
  return out;
}

// The same rows in the three forms (every row only when all are selected).
std::vector<selection> forms(uint32_t rows, const std::vector<uint8_t> &mask) {
  std::vector<uint32_t> list;
  for (uint32_t r = 0; r < rows; ++r)
    if (mask[r]) list.push_back(r);
  std::vector<selection> out{selection::of_list(rows, list), selection::of_mask(mask), selection::fitted(mask)};
  if (list.size() == rows) out.push_back(selection::every(rows));
  return out;
}

}  // namespace

TEST_CASE("format selection: every form answers alike", "[format][selection]") {
  uint64_t x = 0x9e3779b97f4a7c15ULL;
  auto next = [&] {
    x ^= x << 13;
    x ^= x >> 7;
    x ^= x << 17;
    return x;
  };
  for (uint32_t rows : {1u, 7u, 1000u, 65536u}) {
    for (uint32_t density : {0u, 1u, 50u, 1000u, 1001u}) {  // per mille; 1001 = every row
      std::vector<uint8_t> mask(rows);
      for (auto &m : mask) m = density > 1000 || next() % 1000 < density ? 1 : 0;
      std::vector<uint32_t> want;
      for (uint32_t r = 0; r < rows; ++r)
        if (mask[r]) want.push_back(r);
      std::vector<uint8_t> deleted(rows);
      for (auto &d : deleted) d = next() % 3 == 0 ? 1 : 0;
      std::vector<uint32_t> kept;
      for (uint32_t r : want)
        if (!deleted[r]) kept.push_back(r);
      const uint32_t from = rows / 3, to = rows - rows / 4;
      std::vector<uint32_t> in_range;
      for (uint32_t r : want)
        if (r >= from && r < to) in_range.push_back(r);
      for (const auto &s : forms(rows, mask)) {
        CAPTURE(rows, density, static_cast<int>(s.kind()));
        CHECK(s.rows() == rows);
        CHECK(s.count() == want.size());
        CHECK(s.empty() == want.empty());
        CHECK(rows_of(s) == want);
        CHECK(rows_of(s, from, to) == in_range);
        CHECK(s.count_in(from, to) == in_range.size());
        CHECK(s.count_in(from, to, 2) == std::min<size_t>(in_range.size(), 2));
        CHECK(s.first_in(from, to) == (in_range.empty() ? to : in_range.front()));
        std::vector<uint32_t> backwards;
        s.each_reverse([&](uint32_t r) {
          backwards.push_back(r);
          return true;
        });
        CHECK(std::vector<uint32_t>(backwards.rbegin(), backwards.rend()) == want);
        CHECK(s.to_mask() == mask);
        selection d = s;
        d.drop(deleted.data());
        CHECK(rows_of(d) == kept);
        // A stop ends the walk at once.
        uint32_t seen = 0;
        CHECK(s.each([&](uint32_t) { return ++seen < 2; }) == (want.size() < 2));
      }
    }
  }
}

TEST_CASE("format selection: a builder keeps few rows as a list, many as a mask", "[format][selection]") {
  const uint32_t rows = 65536;
  SECTION("one row: a list") {
    selection_builder b(rows);
    b.add_if(10, false);
    b.add_if(123, true);
    auto s = b.finish();
    CHECK(s.kind() == selection::form::list);
    CHECK(rows_of(s) == std::vector<uint32_t>{123});
  }
  SECTION("past 1/64 of the chunk: a mask, the same rows") {
    selection_builder b(rows);
    std::vector<uint32_t> want;
    for (uint32_t r = 0; r < rows; r += 7) {
      b.add_if(r, r % 2 == 0);
      if (r % 2 == 0) want.push_back(r);
    }
    auto s = b.finish();
    CHECK(s.kind() == selection::form::mask);
    CHECK(rows_of(s) == want);
  }
  SECTION("ranges of another selection, of each form") {
    std::vector<uint8_t> mask(rows, 0);
    for (uint32_t r = 100; r < 200; ++r) mask[r] = 1;
    for (const auto &from : {selection::of_mask(mask), selection::fitted(mask), selection::every(rows)}) {
      selection_builder b(rows);
      b.add(5);
      b.add_from(from, 150, 3000);
      auto s = b.finish();
      std::vector<uint32_t> want{5};
      const uint32_t last = from.kind() == selection::form::all ? 3000 : 200;
      for (uint32_t r = 150; r < last; ++r) want.push_back(r);
      CHECK(rows_of(s) == want);
      CHECK(s.kind() == (want.size() > rows / 64 ? selection::form::mask : selection::form::list));
    }
  }
}
