// Shared by the reader (format_reader.cpp) and the query engine (format_engine.h): what an open
// file holds, and how it loads directories, dictionaries, pages and index pages on demand.
#pragma once

#include <algorithm>
#include <array>
#include <map>
#include <set>
#include <unordered_map>

#include "format_internal.h"
#include "format_path.h"
#include "quire/crypto.h"

namespace quire::format {

namespace detail {

struct column_info {
  page_ref directory;  // the column's per-chunk directory and statistics
};

struct chunk_entry {
  page_ref page_directory;
  uint64_t data_bytes = 0;
  stats st;
  // Version 4's column summary (docs/format.md 1.4); `summarized` false in older tables.
  bool summarized = false;
  uint32_t pages = 0;
  uint64_t encoded_bytes = 0;  // raw bytes of its pages and dictionary
  /// (encoding byte, pages) ascending: a chunk's pages use one to three encodings, kept inline (a
  /// cold lookup decodes every chunk's entry), the rest in more_encodings.
  uint32_t encoding_kinds = 0;
  std::array<std::pair<uint8_t, uint32_t>, 4> few_encodings{};
  /// Version 5: stored bytes of the page directory's blocks (0 when it is one-level), so the
  /// storage report counts them without reading the directory.
  uint64_t block_bytes = 0;
  std::vector<std::pair<uint8_t, uint32_t>> more_encodings;
  std::pair<uint8_t, uint32_t> encoding(size_t k) const { return k < 4 ? few_encodings[k] : more_encodings[k - 4]; }
  void add_encoding(uint8_t encoding, uint32_t pages) {
    if (encoding_kinds < 4) few_encodings[encoding_kinds] = {encoding, pages};
    else more_encodings.emplace_back(encoding, pages);
    ++encoding_kinds;
  }
};

struct page_entry {
  page_ref ref;
  uint32_t first_row = 0;  // within the chunk
  uint32_t rows = 0;
  uint8_t encoding = 0;  // value encoding << 4 | integer encoding (what the page's first bytes say)
  stats st;
};

/// Consecutive pages of a chunk's directory. A one-level directory is one block, loaded with it; a
/// two-level one (version 5, docs/format.md 1.5) lists its blocks in its top level, each with the
/// zone map of its pages, and a block's entries are read when a row or page in it is asked for.
struct directory_block {
  page_ref ref;  // two-level: where the block's entries are stored
  uint32_t first_page = 0, page_count = 0;
  uint32_t first_row = 0, rows = 0;            // within the chunk
  uint64_t data_bytes = 0, encoded_bytes = 0;  // stored and raw bytes of its pages
  stats st;             // two-level: its pages' zone maps in one (what a filter may skip the block by)
  bool zoned = false;   // st holds a zone map (a one-level directory's one block has none)
  bool loaded = false;  // pages holds its entries
  std::vector<page_entry> pages;
};

struct page_directory {
  bool has_dictionary = false;
  uint64_t dictionary_size = 0;
  page_ref dictionary_ref;
  uint32_t page_count = 0;
  bool two_level = false;
  std::vector<directory_block> blocks;  // in row order; never resized once read
  size_t blocks_loaded = 0;
  /// The block holding page `page` (< page_count) / row `row` (< the chunk's rows).
  size_t block_of_page(size_t page) const {
    auto it = std::upper_bound(blocks.begin(), blocks.end(), page,
                               [](size_t p, const directory_block &b) { return p < b.first_page; });
    return static_cast<size_t>(it - blocks.begin()) - 1;
  }
  size_t block_of_row(uint32_t row) const {
    auto it = std::upper_bound(blocks.begin(), blocks.end(), row,
                               [](uint32_t r, const directory_block &b) { return r < b.first_row; });
    return static_cast<size_t>(it - blocks.begin()) - 1;
  }
};

struct index_info {
  size_t column = 0;
  index_kind kind = index_kind::sorted;
  uint64_t entries = 0;  // in every segment
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
    v.ensure_text();
    return std::string_view(v.text).substr(v.offsets[r], v.offsets[r + 1] - v.offsets[r]);
  }
};

enum class fetch_kind : uint8_t { data, index, directory, footer };

/// How a sealed segment's pages are sealed (docs/format.md, "Sealing"): under the partition's data
/// key, each page's nonce the segment's salt and the page's offset within the segment, its
/// associated data the file id, the salt, the offset and the kind of object.
struct sealing {
  crypto::key key;
  std::array<uint8_t, 16> file_id{};
  std::array<uint8_t, 16> salt{};
};

/// One segment: a table of version-1 layout (header, pages, footer, tail) stored in a byte range of
/// the file, whose page offsets count from the range's start. A version-1 file is one segment at 0;
/// a version-2 file holds a segment per partition and commit (format_store.cpp).
struct segment_info {
  uint64_t base = 0, length = 0;  // absolute byte range
  uint16_t version =
      TABLE_VERSION;           // of its header and tail: 1, 3 (COMPACT_INDEX_VERSION), 4 (SUMMARY_VERSION), 5 or 6
  uint64_t footer_offset = 0;  // within the range
  uint64_t rows = 0, first_row = 0;
  uint64_t chunks = 0, first_chunk = 0;
  uint32_t chunk_rows = 1;
  int sorted_column = -1;
  std::vector<column_info> columns;
  std::vector<page_ref> index_roots;
  std::vector<uint64_t> index_entries;
  std::shared_ptr<const sealing> seal;  // null: the segment's pages are plain
  /// One byte a row, 1 where the row is deleted (null: none is).
  std::shared_ptr<const std::vector<uint8_t>> deleted;
  uint64_t deleted_rows = 0;
};

/// Seals a stored page or footer of a sealed segment in place: `stored` gains the tag.
result<void> seal_stored(std::string &stored, const sealing &s, uint64_t offset, uint8_t kind);
/// The associated data and nonce of a segment's object at `offset` (kind 0 a page, 1 the footer).
void segment_nonce(const sealing &s, uint64_t offset, uint8_t kind, crypto::nonce &n, std::string &associated);

}  // namespace detail

struct file::impl {
  std::unique_ptr<byte_source> owned;
  const byte_source *source = nullptr;
  open_options options;
  uint64_t size = 0;
  uint64_t footer_offset = 0;  // of the last segment (version 1: the file's footer)
  format::schema sch;
  /// The file's segments in row order; global chunk c is chunk c - first_chunk of segment
  /// chunk_segment[c], global row r is row r - first_row of the segment holding it.
  std::vector<detail::segment_info> segments;
  std::vector<uint32_t> chunk_segment;
  size_t columns_count = 0;
  uint64_t rows = 0;          // rows stored, deleted ones included (row numbers stay put)
  uint64_t deleted_rows = 0;  // of those, deleted
  uint32_t chunk_rows = 1;    // of the first segment
  uint64_t chunks = 0;
  int sorted_column = -1;  // only when every row is in one segment sorted by it
  uint64_t version = 1, commit = 0;
  std::string partition_by;
  bool sealed = false, partition_key = false;
  uint64_t partitions = 0, partitions_read = 0;
  std::vector<index_def> index_defs;
  std::vector<detail::index_info> indexes;
  std::string created_by;

  std::vector<std::shared_ptr<const std::vector<detail::chunk_entry>>> column_dirs;
  std::unordered_map<uint64_t, std::shared_ptr<detail::page_directory>> page_dirs;
  std::unordered_map<uint64_t, std::shared_ptr<const detail::dictionary>> dicts;
  std::vector<std::shared_ptr<const detail::index_root>> roots;  // index i of segment s: i * segments + s

  struct cached_page {
    uint64_t key;
    std::shared_ptr<const detail::column_values> values;
    uint64_t stamp;
  };
  std::vector<cached_page> cache;
  /// Fetched pages not decoded whole (row_view's), at most options.cache_pages of them: a find's
  /// filter and its row read the key's page once.
  struct cached_raw {
    uint64_t key;
    std::shared_ptr<const std::vector<uint8_t>> bytes;  // raw_length + DECODE_PADDING
    uint64_t stamp;
  };
  std::vector<cached_raw> raw_cache;
  uint64_t clock = 0;

  read_counters counters;
  std::set<uint64_t> touched_blocks, touched_chunks, touched_columns;

  impl() = default;
  impl(const impl &) = delete;
  impl &operator=(const impl &) = delete;

  /// Reads, checks and decompresses a stored page. The buffer holds raw_length bytes plus
  /// DECODE_PADDING zeros. `what` names the page in errors (the error's path).
  result<std::vector<uint8_t>> fetch(size_t segment, const detail::page_ref &ref, const detail::lazy_path &what,
                                     detail::fetch_kind kind);

  result<std::shared_ptr<const std::vector<detail::chunk_entry>>> column_directory(size_t column);
  /// A chunk's page directory: a two-level one's top level, its blocks not yet read (block_pages,
  /// page_entry_at and page_of_row read them); a one-level one whole.
  result<std::shared_ptr<const detail::page_directory>> load_page_directory(size_t column, uint64_t chunk);
  /// The same with every block read and checked (verify, and scans over every page).
  result<std::shared_ptr<const detail::page_directory>> load_whole_directory(size_t column, uint64_t chunk);
  /// Block `block`'s page entries, read and checked against its top-level entry the first time.
  result<const std::vector<detail::page_entry> *> block_pages(size_t column, uint64_t chunk, size_t block);
  /// Entry `page_index` of a chunk's directory (reading the block that holds it).
  result<const detail::page_entry *> page_entry_at(size_t column, uint64_t chunk, size_t page_index);
  /// The page holding row `row` of a chunk (reading the block that holds it).
  result<size_t> page_of_row(size_t column, uint64_t chunk, uint32_t row);
  result<std::shared_ptr<const detail::dictionary>> chunk_dictionary(size_t column, uint64_t chunk);
  result<detail::page_view> page(size_t column, uint64_t chunk, size_t page_index);
  /// Row `row` (of the chunk) of column `column` as a view: the decoded page when the cache holds
  /// it, else a one-row view (first_row = row) decoded into `scratch` from the page's bytes alone
  /// (decode_page_value; a dictionary page's text through dictionary_entry, or the decoded
  /// dictionary when that is loaded). The view is valid until `scratch` is used again.
  result<detail::page_view> row_view(size_t column, uint64_t chunk, size_t page_index, uint32_t row,
                                     const std::shared_ptr<detail::column_values> &scratch);
  /// The bytes of a page fetched for row_view (cached in raw_cache under `key`).
  result<std::shared_ptr<const std::vector<uint8_t>>> raw_page(size_t segment, const detail::page_ref &ref,
                                                               uint64_t key, const detail::lazy_path &what);
  /// Index `index`'s root in segment `segment` (each segment indexes its own rows).
  result<std::shared_ptr<const detail::index_root>> load_index_root(size_t index, size_t segment);
  /// Fetches leaf `leaf` of index `index` of a segment and walks its entries, checked, calling
  /// visit(key, row) -> bool (false stops the walk; rows are the segment's own); returns the root.
  /// Defined in format_reader.cpp, its only user.
  template <typename Visit>
  result<std::shared_ptr<const detail::index_root>> walk_index_leaf(size_t index, size_t segment, size_t leaf,
                                                                    Visit visit);
  /// Entries of leaf `leaf` of index `index` of a segment as (key, segment row) pairs.
  result<std::vector<std::pair<std::string, uint64_t>>> load_leaf(size_t index, size_t segment, size_t leaf);
  /// Appends the rows (global numbers) of leaf `leaf` of a segment's index whose key is in [lo, hi]
  /// (absent bounds are open) to `rows`, decoding keys into one reused buffer.
  result<void> scan_leaf(size_t index, size_t segment, size_t leaf, const std::optional<std::string> &lo,
                         const std::optional<std::string> &hi, std::vector<uint64_t> &rows);
  /// Whether chunk `chunk`'s Bloom filter (of hash index `index`) may hold `hash`.
  result<bool> bloom_may_contain(size_t index, uint64_t chunk, const std::vector<uint64_t> &hashes);

  /// Whether index `index` of segment `seg` has compact leaves (a version-3 segment, compact_index).
  bool compact(size_t index, size_t seg) const {
    return segments[seg].version >= detail::COMPACT_INDEX_VERSION &&
           detail::compact_index(sch.columns[indexes[index].column].type, indexes[index].kind);
  }
  const detail::segment_info &segment_of(uint64_t chunk) const { return segments[chunk_segment[chunk]]; }
  uint32_t rows_in_chunk(uint64_t chunk) const {
    const auto &s = segment_of(chunk);
    const uint64_t first = (chunk - s.first_chunk) * s.chunk_rows;
    return static_cast<uint32_t>(std::min<uint64_t>(s.chunk_rows, s.rows - first));
  }
  uint64_t chunk_first_row(uint64_t chunk) const {
    const auto &s = segment_of(chunk);
    return s.first_row + (chunk - s.first_chunk) * s.chunk_rows;
  }
  uint64_t chunk_of_row(uint64_t row) const {
    if (segments.size() == 1) return row / chunk_rows;
    auto it = std::upper_bound(segments.begin(), segments.end(), row,
                               [](uint64_t r, const detail::segment_info &s) { return r < s.first_row; });
    const auto &s = *(it - 1);
    return s.first_chunk + (row - s.first_row) / s.chunk_rows;
  }
  /// The deleted rows of a chunk, one byte a row (null: none is deleted).
  const uint8_t *deleted_in_chunk(uint64_t chunk) const {
    const auto &s = segment_of(chunk);
    if (!s.deleted) return nullptr;
    return s.deleted->data() + (chunk - s.first_chunk) * s.chunk_rows;
  }
  /// Sets up chunks, rows and the caches once `segments` is filled.
  void index_segments();
  std::string column_path(size_t column) const { return "columns." + sch.columns[column].name; }
  /// `columns.NAME.chunks[C].PART` (PART `pages[P]` when `page` is given), built in one allocation:
  /// a lookup names a dozen pages it reads, for errors it almost never reports.
  std::string chunk_path(size_t column, uint64_t chunk, std::string_view part, size_t page = SIZE_MAX) const {
    const std::string &name = sch.columns[column].name;
    std::string p;
    p.reserve(name.size() + part.size() + 64);
    p.append("columns.").append(name).append(".chunks[").append(std::to_string(chunk)).append("].").append(part);
    if (page != SIZE_MAX) p.append("[").append(std::to_string(page)).append("]");
    return p;
  }
  std::string index_path(size_t index) const {
    return "indexes." + sch.columns[indexes[index].column].name + ":" +
           std::string(index_kind_name(indexes[index].kind));
  }
  std::string leaf_path(size_t index, size_t segment, size_t leaf) const {
    return index_path(index) + segment_path(segment) + ".leaves[" + std::to_string(leaf) + "]";
  }
  std::string segment_path(size_t segment) const {
    return segments.size() == 1 ? std::string() : ".segments[" + std::to_string(segment) + "]";
  }
  void touch_column(size_t column) {
    if (touched_columns.insert(column).second) counters.columns = touched_columns.size();
  }
};

}  // namespace quire::format

namespace quire::format::detail {

/// Reads each segment's footer (opening it when sealed), checks that they share one schema and
/// one set of indexes, and sets `f` up over them (format_reader.cpp).
result<void> load_segments(file::impl &f, std::vector<segment_info> segments);
/// Opens a version-2 file into `f`: its last whole commit, the partitions `f.options`' key reads
/// (format_store.cpp).
result<void> open_store(file::impl &f);

}  // namespace quire::format::detail
