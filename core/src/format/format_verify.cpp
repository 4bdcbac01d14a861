// verify: reads and checks every stored page of a file (CRC, decompression, decoding), that what a
// page holds is what its column's type promises, and that it lies within its zone map.
#include <cmath>

#include "../common/decimal_text.h"
#include "format_file.h"

namespace quire::format {

using namespace detail;

namespace {

/// The first row of a decoded page whose value lies outside the page's statistics (decimals,
/// compared as doubles of their text, and NaN bounds are not checked).
std::optional<uint32_t> outside_zone_map(column_type type, const page_view &v, const page_entry &pe) {
  const stats &s = pe.st;
  const auto &vals = *v.values;
  const domain d = domain_of(type);
  if (type == column_type::decimal) return std::nullopt;
  for (uint32_t r = 0; r < pe.rows; ++r) {
    if (!vals.is_valid(r)) continue;
    if (!s.has_min) return r;
    switch (d) {
      case domain::ints:
        if (vals.ints[r] < s.imin || vals.ints[r] > s.imax) return r;
        break;
      case domain::reals: {
        const double x = vals.reals[r];
        if (std::isnan(x) || std::isnan(s.rmin) || std::isnan(s.rmax)) break;
        if (x < s.rmin || x > s.rmax) return r;
        break;
      }
      case domain::text: {
        const std::string_view t = v.text(r);
        if (t < s.tmin || (s.has_max && t > s.tmax)) return r;
        break;
      }
    }
  }
  return std::nullopt;
}

}  // namespace

result<uint64_t> file::verify() {
  auto &f = *impl_;
  uint64_t pages = 0;
  for (size_t c = 0; c < f.sch.columns.size(); ++c) {
    for (uint64_t ch = 0; ch < f.chunks; ++ch) {
      auto dir = f.load_whole_directory(c, ch);
      if (!dir) return std::move(dir).error();
      pages += 2 + (dir.value()->two_level ? dir.value()->blocks.size() : 0);
      for (size_t p = 0; p < dir.value()->page_count; ++p) {
        auto v = f.page(c, ch, p);
        if (!v) return std::move(v).error();
        const auto &blk = dir.value()->blocks[dir.value()->block_of_page(p)];
        const page_entry &entry = blk.pages[p - blk.first_page];
        // A zone map narrower than its page would make a filter skip rows it should keep: every
        // value must lie within its page's bounds (a text minimum is a prefix, so a lower bound).
        if (auto row = outside_zone_map(f.sch.columns[c].type, *v, entry)) {
          quire::error e(error_code::CORRUPT_BLOCK,
                         "row " + std::to_string(v->first_row + *row) + " lies outside its page's zone map");
          e.path = "column " + f.sch.columns[c].name + ", chunk " + std::to_string(ch) + ", page " + std::to_string(p);
          return e;
        }
        // A decimal column stores its values as text; decoding a page does not read that text, so a
        // cell that is not a decimal number (a crafted page, or a damaged one read without its
        // checksum) would first show itself in an aggregate. verify() is where it is caught.
        if (f.sch.columns[c].type == column_type::decimal) {
          const auto &vals = *v->values;
          for (uint32_t r = 0; r < entry.rows; ++r) {
            quire::detail::decimal_text parts;
            if (vals.is_valid(r) &&
                !quire::detail::split_decimal_text(v->text(r), quire::detail::DECIMAL_EXPONENT, parts)) {
              quire::error e(error_code::CORRUPT_BLOCK,
                             "row " + std::to_string(v->first_row + r) +
                                 " of a decimal column holds text that is not a decimal number");
              e.path =
                  "column " + f.sch.columns[c].name + ", chunk " + std::to_string(ch) + ", page " + std::to_string(p);
              return e;
            }
          }
        }
        ++pages;
      }
      if (dir.value()->has_dictionary) ++pages;
    }
  }
  for (size_t i = 0; i < f.indexes.size(); ++i) {
    for (size_t seg = 0; seg < f.segments.size(); ++seg) {
      auto root = f.load_index_root(i, seg);
      if (!root) return std::move(root).error();
      ++pages;
      for (size_t l = 0; l < root.value()->leaves.size(); ++l) {
        auto entries = f.load_leaf(i, seg, l);
        if (!entries) return std::move(entries).error();
        ++pages;
      }
      for (uint64_t ch = 0; ch < root.value()->blooms.size(); ++ch) {
        auto may = f.bloom_may_contain(i, f.segments[seg].first_chunk + ch, {});
        if (!may) return std::move(may).error();
        ++pages;
      }
    }
  }
  return pages;
}

}  // namespace quire::format
