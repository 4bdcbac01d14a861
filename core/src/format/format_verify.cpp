// verify: reads and checks every stored page of a file (CRC, decompression, decoding), and that
// what a page holds is what its column's type promises.
#include "../common/decimal_text.h"
#include "format_file.h"

namespace quire::format {

using namespace detail;

result<uint64_t> file::verify() {
  auto &f = *impl_;
  uint64_t pages = 0;
  for (size_t c = 0; c < f.sch.columns.size(); ++c) {
    for (uint64_t ch = 0; ch < f.chunks; ++ch) {
      auto dir = f.load_page_directory(c, ch);
      if (!dir) return std::move(dir).error();
      pages += 2;
      for (size_t p = 0; p < dir.value()->pages.size(); ++p) {
        auto v = f.page(c, ch, p);
        if (!v) return std::move(v).error();
        // A decimal column stores its values as text; decoding a page does not read that text, so a
        // cell that is not a decimal number (a crafted page, or a damaged one read without its
        // checksum) would first show itself in an aggregate. verify() is where it is caught.
        if (f.sch.columns[c].type == column_type::decimal) {
          const auto &vals = *v->values;
          for (uint32_t r = 0; r < dir.value()->pages[p].rows; ++r) {
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
