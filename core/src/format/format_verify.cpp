// verify: reads and checks every stored page of a file (CRC, decompression, decoding).
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
