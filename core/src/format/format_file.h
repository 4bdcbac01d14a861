// Shared by the reader (format_reader.cpp) and the query engine (format_engine.h): what an open
// file holds, and how it loads directories, dictionaries, pages and index pages on demand.
#pragma once

#include <map>
#include <set>
#include <unordered_map>

#include "format_internal.h"

namespace quire::format {

namespace detail {

struct column_info {
  page_ref directory;  // the column's per-chunk directory and statistics
};

struct chunk_entry {
  page_ref page_directory;
  uint64_t data_bytes = 0;
  stats st;
};

struct page_entry {
  page_ref ref;
  uint32_t first_row = 0;  // within the chunk
  uint32_t rows = 0;
  uint8_t encoding = 0;  // value encoding << 4 | integer encoding (what the page's first bytes say)
  stats st;
};

struct page_directory {
  bool has_dictionary = false;
  uint64_t dictionary_size = 0;
  page_ref dictionary_ref;
  std::vector<page_entry> pages;
};

struct index_info {
  size_t column = 0;
  index_kind kind = index_kind::sorted;
  page_ref root;
  uint64_t entries = 0;
};

struct index_leaf {
  std::string first_key;
  uint64_t entries = 0;
  page_ref ref;
};

struct bloom_entry {
  page_ref ref;
  uint64_t bits = 0;
  uint8_t hashes = 0;
};

struct index_root {
  std::vector<index_leaf> leaves;
  std::vector<bloom_entry> blooms;  // hash indexes: one per chunk
};

/// One decoded page with its chunk's dictionary (for dictionary pages).
struct page_view {
  std::shared_ptr<const column_values> values;
  std::shared_ptr<const dictionary> dict;
  uint32_t first_row = 0;
  std::string_view text(uint32_t r) const {
    const auto &v = *values;
    if (v.dictionary) return dict->at(v.ids[r]);
    return std::string_view(v.text).substr(v.offsets[r], v.offsets[r + 1] - v.offsets[r]);
  }
};

enum class fetch_kind : uint8_t { data, index, directory, footer };

}  // namespace detail

struct file::impl {
  std::unique_ptr<byte_source> owned;
  const byte_source *source = nullptr;
  open_options options;
  uint64_t size = 0;
  uint64_t footer_offset = 0;
  format::schema sch;
  std::vector<detail::column_info> columns;
  uint64_t rows = 0;
  uint32_t chunk_rows = 1;
  uint64_t chunks = 0;
  int sorted_column = -1;
  std::vector<index_def> index_defs;
  std::vector<detail::index_info> indexes;
  std::string created_by;

  std::vector<std::shared_ptr<const std::vector<detail::chunk_entry>>> column_dirs;
  std::unordered_map<uint64_t, std::shared_ptr<const detail::page_directory>> page_dirs;
  std::unordered_map<uint64_t, std::shared_ptr<const detail::dictionary>> dicts;
  std::vector<std::shared_ptr<const detail::index_root>> roots;

  struct cached_page {
    uint64_t key;
    std::shared_ptr<const detail::column_values> values;
    uint64_t stamp;
  };
  std::vector<cached_page> cache;
  uint64_t clock = 0;
  ZSTD_DCtx *dctx = nullptr;

  read_counters counters;
  std::set<uint64_t> touched_blocks, touched_chunks, touched_columns;

  impl() = default;
  ~impl() { ZSTD_freeDCtx(dctx); }
  impl(const impl &) = delete;
  impl &operator=(const impl &) = delete;

  /// Reads, checks and decompresses a stored page. The buffer holds raw_length bytes plus
  /// DECODE_PADDING zeros. `what` names the page in errors (the error's path).
  result<std::vector<uint8_t>> fetch(const detail::page_ref &ref, const std::string &what, detail::fetch_kind kind);

  result<std::shared_ptr<const std::vector<detail::chunk_entry>>> column_directory(size_t column);
  result<std::shared_ptr<const detail::page_directory>> load_page_directory(size_t column, uint64_t chunk);
  result<std::shared_ptr<const detail::dictionary>> chunk_dictionary(size_t column, uint64_t chunk);
  result<detail::page_view> page(size_t column, uint64_t chunk, size_t page_index);
  result<std::shared_ptr<const detail::index_root>> load_index_root(size_t index);
  /// Fetches leaf `leaf` of index `index` and walks its entries, checked, calling
  /// visit(key, row) -> bool (false stops the walk); returns the index's root. Defined in
  /// format_reader.cpp, its only user.
  template <typename Visit>
  result<std::shared_ptr<const detail::index_root>> walk_index_leaf(size_t index, size_t leaf, Visit visit);
  /// Entries of leaf `leaf` of index `index` as (key, row) pairs.
  result<std::vector<std::pair<std::string, uint64_t>>> load_leaf(size_t index, size_t leaf);
  /// Appends the rows of leaf `leaf` whose key is in [lo, hi] (absent bounds are open) to `rows`,
  /// decoding keys into one reused buffer.
  result<void> scan_leaf(size_t index, size_t leaf, const std::optional<std::string> &lo,
                         const std::optional<std::string> &hi, std::vector<uint64_t> &rows);
  /// Whether chunk `chunk`'s Bloom filter (of hash index `index`) may hold `hash`.
  result<bool> bloom_may_contain(size_t index, uint64_t chunk, const std::vector<uint64_t> &hashes);

  uint32_t rows_in_chunk(uint64_t chunk) const {
    uint64_t first = chunk * chunk_rows;
    return static_cast<uint32_t>(std::min<uint64_t>(chunk_rows, rows - first));
  }
  std::string column_path(size_t column) const { return "columns." + sch.columns[column].name; }
  std::string index_path(size_t index) const {
    return "indexes." + sch.columns[indexes[index].column].name + ":" +
           std::string(index_kind_name(indexes[index].kind));
  }
  std::string leaf_path(size_t index, size_t leaf) const {
    return index_path(index) + ".leaves[" + std::to_string(leaf) + "]";
  }
  void touch_column(size_t column) {
    if (touched_columns.insert(column).second) counters.columns = touched_columns.size();
  }
};

}  // namespace quire::format
