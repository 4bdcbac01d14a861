// Opening a file (tail, then footer: nothing else) and loading the rest on demand: column
// directories, page directories, dictionaries, pages (through a small cache), index roots, leaves
// and Bloom filters. Every count and size read from the file is checked against the file's size
// and the open options before anything is allocated.
#include <algorithm>

#include "../common/alloc.h"
#include "format_file.h"

namespace quire::format {

using namespace detail;

namespace {

quire::error corrupt_file(std::string message, std::string path, uint64_t offset = quire::error::NO_OFFSET) {
  quire::error e(error_code::CORRUPT_FILE, std::move(message), offset);
  e.path = std::move(path);
  return e;
}

quire::error corrupt_block(std::string message, std::string path, uint64_t offset) {
  quire::error e(error_code::CORRUPT_BLOCK, std::move(message), offset);
  e.path = std::move(path);
  return e;
}

result<void> read_range(const byte_source &src, uint64_t offset, std::span<uint8_t> out) {
  return src.read_at(offset, out);
}

}  // namespace

result<std::vector<uint8_t>> file::impl::fetch(const page_ref &ref, const std::string &what, fetch_kind kind) {
  if (ref.offset < HEADER_SIZE || ref.offset > footer_offset || ref.stored_length > footer_offset - ref.offset) {
    return corrupt_file("points outside the file's data (offset " + std::to_string(ref.offset) + ", " +
                            std::to_string(ref.stored_length) + " bytes)",
                        what, ref.offset);
  }
  if (ref.raw_length > options.max_page_bytes) {
    return corrupt_block("declares " + std::to_string(ref.raw_length) +
                             " bytes once decompressed, more than max_page_bytes (" +
                             std::to_string(options.max_page_bytes) + ")",
                         what, ref.offset);
  }
  if (ref.compression != COMPRESSION_NONE && ref.compression != COMPRESSION_ZSTD) {
    return corrupt_block("unknown compression " + std::to_string(ref.compression), what, ref.offset);
  }
  if (ref.compression == COMPRESSION_NONE && ref.stored_length != ref.raw_length) {
    return corrupt_block("an uncompressed page whose stored and raw sizes differ", what, ref.offset);
  }
  std::vector<uint8_t> stored_copy;
  std::span<const uint8_t> stored;
  auto whole = source->contiguous();
  if (!whole.empty() && whole.size() == size) {
    stored = whole.subspan(static_cast<size_t>(ref.offset), ref.stored_length);
  } else {
    if (auto a = quire::detail::resize_or_oom(stored_copy, ref.stored_length, what); !a) return std::move(a).error();
    auto r = read_range(*source, ref.offset, stored_copy);
    if (!r) return std::move(r).error();
    stored = stored_copy;
  }
  counters.bytes += ref.stored_length;
  ++counters.reads;
  switch (kind) {
    case fetch_kind::data: break;  // counted by page() once decoded
    case fetch_kind::index: ++counters.index_pages; break;
    case fetch_kind::directory: ++counters.directory_pages; break;
    case fetch_kind::footer: break;
  }
  if (options.verify_checksums && crc32c(stored) != ref.crc)
    return corrupt_block("checksum mismatch", what, ref.offset);
  // Pages are bounded by max_page_bytes, but many large pages held open (or one large file) can
  // still exhaust the wasm heap: the decoded page is OUT_OF_MEMORY then, not an abort.
  std::vector<uint8_t> out;
  if (auto a = quire::detail::resize_or_oom(out, uint64_t{ref.raw_length} + DECODE_PADDING, what); !a)
    return std::move(a).error();
  if (ref.compression == COMPRESSION_NONE) {
    if (ref.raw_length) std::memcpy(out.data(), stored.data(), ref.raw_length);
    return out;
  }
  unsigned long long declared = ZSTD_getFrameContentSize(stored.data(), stored.size());
  if (declared == ZSTD_CONTENTSIZE_ERROR || (declared != ZSTD_CONTENTSIZE_UNKNOWN && declared != ref.raw_length)) {
    return corrupt_block("the compressed frame does not match its declared size", what, ref.offset);
  }
  if (!dctx) dctx = ZSTD_createDCtx();
  if (!dctx) return quire::error(error_code::OUT_OF_MEMORY, "cannot create a zstd context");
  size_t n = ZSTD_decompressDCtx(dctx, out.data(), ref.raw_length, stored.data(), stored.size());
  if (ZSTD_isError(n) || n != ref.raw_length)
    return corrupt_block("does not decompress to its declared size", what, ref.offset);
  return out;
}

result<std::shared_ptr<const std::vector<chunk_entry>>> file::impl::column_directory(size_t column) {
  if (column_dirs[column]) return column_dirs[column];
  touch_column(column);
  std::string path = column_path(column) + ".directory";
  auto raw = fetch(columns[column].directory, path, fetch_kind::directory);
  if (!raw) return std::move(raw).error();
  byte_reader r({raw->data(), columns[column].directory.raw_length});
  uint64_t count = r.varint();
  // A chunk entry takes at least 12 bytes: bound the count by the bytes before allocating.
  if (r.failed() || count != chunks || count > r.remaining() / 12 + 1) {
    return corrupt_file("lists " + std::to_string(count) + " chunks; the footer says " + std::to_string(chunks), path);
  }
  auto entries = std::make_shared<std::vector<chunk_entry>>();
  entries->reserve(static_cast<size_t>(count));
  domain d = domain_of(sch.columns[column].type);
  for (uint64_t i = 0; i < count; ++i) {
    chunk_entry e;
    e.page_directory = read_ref(r);
    e.data_bytes = r.varint();
    e.st = read_stats(r, d);
    e.st.rows = rows_in_chunk(i);
    if (r.failed() || e.st.nulls > e.st.rows) return corrupt_file("chunk " + std::to_string(i) + " is malformed", path);
    entries->push_back(std::move(e));
  }
  column_dirs[column] = entries;
  return column_dirs[column];
}

result<std::shared_ptr<const page_directory>> file::impl::load_page_directory(size_t column, uint64_t chunk) {
  uint64_t key = chunk * columns.size() + column;
  if (auto it = page_dirs.find(key); it != page_dirs.end()) return it->second;
  auto cd = column_directory(column);
  if (!cd) return std::move(cd).error();
  std::string path = column_path(column) + ".chunks[" + std::to_string(chunk) + "].directory";
  const auto &ref = (*cd.value())[chunk].page_directory;
  auto raw = fetch(ref, path, fetch_kind::directory);
  if (!raw) return std::move(raw).error();
  byte_reader r({raw->data(), ref.raw_length});
  auto dir = std::make_shared<detail::page_directory>();
  uint64_t count = r.varint();
  const uint32_t chunk_rows_here = rows_in_chunk(chunk);
  if (r.failed() || count == 0 || count > chunk_rows_here || count > r.remaining() / 8 + 1) {
    return corrupt_file("holds an impossible page count " + std::to_string(count), path);
  }
  dir->has_dictionary = r.u8() != 0;
  if (dir->has_dictionary) {
    dir->dictionary_size = r.varint();
    dir->dictionary_ref = read_ref(r);
    if (dir->dictionary_size > chunk_rows_here) return corrupt_file("a dictionary larger than its chunk", path);
  }
  dir->pages.reserve(static_cast<size_t>(count));
  domain d = domain_of(sch.columns[column].type);
  uint64_t first = 0;
  for (uint64_t i = 0; i < count; ++i) {
    page_entry p;
    p.ref = read_ref(r);
    uint64_t rows_here = r.varint();
    p.encoding = r.u8();
    p.st = read_stats(r, d);
    if (r.failed() || rows_here == 0 || rows_here > chunk_rows_here - first || p.st.nulls > rows_here) {
      return corrupt_file("page " + std::to_string(i) + " is malformed", path);
    }
    p.first_row = static_cast<uint32_t>(first);
    p.rows = static_cast<uint32_t>(rows_here);
    p.st.rows = rows_here;
    first += rows_here;
    dir->pages.push_back(std::move(p));
  }
  if (first != chunk_rows_here)
    return corrupt_file("its pages hold " + std::to_string(first) + " rows, not " + std::to_string(chunk_rows_here),
                        path);
  page_dirs.emplace(key, dir);
  return std::shared_ptr<const detail::page_directory>(dir);
}

result<std::shared_ptr<const dictionary>> file::impl::chunk_dictionary(size_t column, uint64_t chunk) {
  uint64_t key = chunk * columns.size() + column;
  if (auto it = dicts.find(key); it != dicts.end()) return it->second;
  auto dir = load_page_directory(column, chunk);
  if (!dir) return std::move(dir).error();
  std::string path = column_path(column) + ".chunks[" + std::to_string(chunk) + "].dictionary";
  const auto &ref = dir.value()->dictionary_ref;
  auto raw = fetch(ref, path, fetch_kind::data);
  if (!raw) return std::move(raw).error();
  ++counters.data_pages;
  auto d = std::make_shared<dictionary>();
  if (!decode_dictionary({raw->data(), ref.raw_length}, dir.value()->dictionary_size, *d) ||
      d->size() != dir.value()->dictionary_size) {
    return corrupt_block("the dictionary does not decode", path, ref.offset);
  }
  dicts.emplace(key, d);
  return std::shared_ptr<const dictionary>(d);
}

result<page_view> file::impl::page(size_t column, uint64_t chunk, size_t page_index) {
  auto dir = load_page_directory(column, chunk);
  if (!dir) return std::move(dir).error();
  const auto &entry = dir.value()->pages[page_index];
  page_view view;
  view.first_row = entry.first_row;
  if (dir.value()->has_dictionary) {
    auto d = chunk_dictionary(column, chunk);
    if (!d) return std::move(d).error();
    view.dict = *d;
  }
  uint64_t key = (chunk * columns.size() + column) * (uint64_t{MAX_CHUNK_ROWS} + 1) + page_index;
  for (auto &c : cache) {
    if (c.key == key && c.values) {
      c.stamp = ++clock;
      ++counters.cache_hits;
      view.values = c.values;
      return view;
    }
  }
  std::string path =
      column_path(column) + ".chunks[" + std::to_string(chunk) + "].pages[" + std::to_string(page_index) + "]";
  auto raw = fetch(entry.ref, path, fetch_kind::data);
  if (!raw) return std::move(raw).error();
  ++counters.data_pages;
  touch_column(column);
  if (touched_blocks.insert(chunk * columns.size() + column).second) counters.blocks = touched_blocks.size();
  if (touched_chunks.insert(chunk).second) counters.chunks = touched_chunks.size();
  auto values = std::make_shared<column_values>();
  if (!decode_page({raw->data(), entry.ref.raw_length}, sch.columns[column].type, entry.rows,
                   dir.value()->dictionary_size, *values)) {
    return corrupt_block("the page does not decode", path, entry.ref.offset);
  }
  view.values = values;
  if (options.cache_pages > 0) {
    if (cache.size() < options.cache_pages) {
      cache.push_back({key, values, ++clock});
    } else {
      auto oldest = std::min_element(cache.begin(), cache.end(),
                                     [](const cached_page &a, const cached_page &b) { return a.stamp < b.stamp; });
      *oldest = {key, values, ++clock};
    }
  }
  return view;
}

result<std::shared_ptr<const index_root>> file::impl::load_index_root(size_t index) {
  if (roots[index]) return roots[index];
  std::string path = index_path(index) + ".root";
  const auto &ref = indexes[index].root;
  auto raw = fetch(ref, path, fetch_kind::index);
  if (!raw) return std::move(raw).error();
  byte_reader r({raw->data(), ref.raw_length});
  auto root = std::make_shared<detail::index_root>();
  uint64_t leaves = r.varint();
  if (r.failed() || leaves > r.remaining() / 8 + 1) return corrupt_file("holds an impossible leaf count", path);
  root->leaves.reserve(static_cast<size_t>(leaves));
  for (uint64_t i = 0; i < leaves; ++i) {
    index_leaf l;
    l.first_key = std::string(r.bytes());
    l.entries = r.varint();
    l.ref = read_ref(r);
    if (r.failed()) return corrupt_file("leaf " + std::to_string(i) + " is malformed", path);
    if (i > 0 && !(root->leaves.back().first_key < l.first_key)) return corrupt_file("leaves are out of order", path);
    root->leaves.push_back(std::move(l));
  }
  uint64_t blooms = r.varint();
  if (r.failed() || (blooms != 0 && blooms != chunks) || blooms > r.remaining() / 8 + 1)
    return corrupt_file("holds an impossible Bloom filter count", path);
  for (uint64_t i = 0; i < blooms; ++i) {
    bloom_entry b;
    b.ref = read_ref(r);
    b.bits = r.varint();
    b.hashes = r.u8();
    if (r.failed() || b.bits == 0 || b.bits / 8 != b.ref.raw_length || b.hashes == 0 || b.hashes > 32) {
      return corrupt_file("Bloom filter " + std::to_string(i) + " is malformed", path);
    }
    root->blooms.push_back(b);
  }
  roots[index] = root;
  return roots[index];
}

namespace {

// Decodes a sorted-index leaf (prefix-compressed keys; a repeated key stores its row as a delta)
// and calls visit(key, row) for each entry in order until it returns false.
template <typename Visit>
result<void> walk_leaf(byte_reader &r, uint64_t entries, uint64_t rows, const std::string &path, Visit visit) {
  uint64_t count = r.varint();
  if (r.failed() || count != entries || count > r.remaining() / 3 + 1)
    return corrupt_file("holds an impossible entry count", path);
  std::string key;
  uint64_t row = 0;
  for (uint64_t i = 0; i < count; ++i) {
    uint64_t shared = r.varint();
    std::string_view suffix = r.bytes();
    uint64_t v = r.varint();
    if (r.failed() || shared > key.size()) return corrupt_file("entry " + std::to_string(i) + " is malformed", path);
    bool same = i > 0 && shared == key.size() && suffix.empty();
    key.resize(static_cast<size_t>(shared));
    key.append(suffix);
    row = same ? row + v : v;
    if (row >= rows) return corrupt_file("an entry points past the last row", path);
    if (!visit(key, row)) break;
  }
  return {};
}

}  // namespace

template <typename Visit>
result<std::shared_ptr<const index_root>> file::impl::walk_index_leaf(size_t index, size_t leaf, Visit visit) {
  auto root = load_index_root(index);
  if (!root) return std::move(root).error();
  const auto &l = root.value()->leaves[leaf];
  const std::string path = leaf_path(index, leaf);
  auto raw = fetch(l.ref, path, fetch_kind::index);
  if (!raw) return std::move(raw).error();
  byte_reader r({raw->data(), l.ref.raw_length});
  auto walked = walk_leaf(r, l.entries, rows, path, visit);
  if (!walked) return std::move(walked).error();
  return root;
}

result<std::vector<std::pair<std::string, uint64_t>>> file::impl::load_leaf(size_t index, size_t leaf) {
  std::vector<std::pair<std::string, uint64_t>> out;
  auto root = walk_index_leaf(index, leaf, [&](const std::string &key, uint64_t row) {
    out.emplace_back(key, row);
    return true;
  });
  if (!root) return std::move(root).error();
  if (!out.empty() && out.front().first != root.value()->leaves[leaf].first_key)
    return corrupt_file("the first key differs from the root's", leaf_path(index, leaf));
  return out;
}

result<void> file::impl::scan_leaf(size_t index, size_t leaf, const std::optional<std::string> &lo,
                                   const std::optional<std::string> &hi, std::vector<uint64_t> &out) {
  auto root = walk_index_leaf(index, leaf, [&](const std::string &key, uint64_t row) {
    if (hi && key > *hi) return false;
    if (!(lo && key < *lo)) out.push_back(row);
    return true;
  });
  if (!root) return std::move(root).error();
  return {};
}

result<bool> file::impl::bloom_may_contain(size_t index, uint64_t chunk, const std::vector<uint64_t> &hashes) {
  auto root = load_index_root(index);
  if (!root) return std::move(root).error();
  if (root.value()->blooms.size() != chunks) return true;
  const auto &b = root.value()->blooms[chunk];
  std::string path = index_path(index) + ".blooms[" + std::to_string(chunk) + "]";
  auto raw = fetch(b.ref, path, fetch_kind::index);
  if (!raw) return std::move(raw).error();
  for (uint64_t h : hashes) {
    bool all = true;
    for (uint32_t k = 0; k < b.hashes && all; ++k) {
      uint64_t bit = bloom_bit(h, k, b.bits);
      all = ((*raw)[bit >> 3] >> (bit & 7)) & 1;
    }
    if (all) return true;
  }
  return false;
}

// --- open ------------------------------------------------------------------------------------------

namespace {

result<file> open_impl(std::unique_ptr<file::impl> f, file (*make)(std::unique_ptr<file::impl>)) {
  const byte_source &src = *f->source;
  f->size = src.size();
  const uint64_t size = f->size;
  if (size < HEADER_SIZE + TAIL_SIZE) {
    return quire::error(error_code::NOT_A_QUIRE_FILE,
                        "too short to be a .quire file (" + std::to_string(size) + " bytes)", 0);
  }
  uint8_t head[HEADER_SIZE];
  auto r = src.read_at(0, head);
  if (!r) return std::move(r).error();
  if (std::memcmp(head, MAGIC, sizeof MAGIC) != 0)
    return quire::error(error_code::NOT_A_QUIRE_FILE, "the file does not start with the .quire magic", 0);
  uint16_t version;
  std::memcpy(&version, head + 6, 2);
  if (version != FORMAT_VERSION) {
    return quire::error(
        error_code::UNSUPPORTED_VERSION,
        "format version " + std::to_string(version) + "; this reader reads version " + std::to_string(FORMAT_VERSION),
        6);
  }
  uint8_t tail[TAIL_SIZE];
  r = src.read_at(size - TAIL_SIZE, tail);
  if (!r) return std::move(r).error();
  if (std::memcmp(tail + 16, MAGIC, sizeof MAGIC) != 0) {
    return quire::error(error_code::NOT_A_QUIRE_FILE, "the file does not end with the .quire magic (truncated?)",
                        size - 8);
  }
  std::memcpy(&version, tail + 22, 2);
  if (version != FORMAT_VERSION) {
    return quire::error(error_code::UNSUPPORTED_VERSION, "format version " + std::to_string(version) + " in the tail",
                        size - 2);
  }
  uint64_t footer_offset = load_u64(tail);
  uint32_t footer_length = load_u32(tail + 8);
  uint32_t footer_crc = load_u32(tail + 12);
  if (footer_length > f->options.max_footer_bytes) {
    return corrupt_file("the footer declares " + std::to_string(footer_length) + " bytes, more than max_footer_bytes",
                        "footer", size - TAIL_SIZE);
  }
  if (footer_offset < HEADER_SIZE || footer_offset > size - TAIL_SIZE ||
      footer_length != size - TAIL_SIZE - footer_offset) {
    return corrupt_file("the footer's offset and length do not fit the file", "footer", size - TAIL_SIZE);
  }
  f->footer_offset = footer_offset;
  std::vector<uint8_t> footer;
  if (auto a = quire::detail::resize_or_oom(footer, footer_length, "footer"); !a) return std::move(a).error();
  r = src.read_at(footer_offset, footer);
  if (!r) return std::move(r).error();
  f->counters.bytes += HEADER_SIZE + TAIL_SIZE + footer_length;
  f->counters.reads += 3;
  if (f->options.verify_checksums && crc32c(footer) != footer_crc)
    return corrupt_block("the footer's checksum does not match", "footer", footer_offset);

  byte_reader br(footer);
  f->rows = br.varint();
  uint64_t chunk_rows = br.varint();
  if (br.failed() || chunk_rows < 1 || chunk_rows > MAX_CHUNK_ROWS)
    return corrupt_file("chunk_rows out of range", "footer", footer_offset);
  f->chunk_rows = static_cast<uint32_t>(chunk_rows);
  f->chunks = (f->rows + chunk_rows - 1) / chunk_rows;
  // Every chunk stores at least one page per column: more chunks than bytes is a lie.
  if (f->chunks > size)
    return corrupt_file("the row count (" + std::to_string(f->rows) + ") is impossible for the file's size", "footer",
                        footer_offset);
  uint64_t ncols = br.varint();
  if (br.failed() || ncols == 0 || ncols > MAX_COLUMNS || ncols > br.remaining())
    return corrupt_file("an impossible column count", "footer", footer_offset);
  f->columns.resize(static_cast<size_t>(ncols));
  for (uint64_t i = 0; i < ncols; ++i) {
    std::string name(br.bytes());
    uint8_t type = br.u8();
    f->columns[i].directory = read_ref(br);
    if (br.failed() || name.empty() || !parse_type_name(type_name(static_cast<column_type>(type)))) {
      return corrupt_file("column " + std::to_string(i) + " is malformed", "footer", footer_offset);
    }
    f->sch.columns.push_back({std::move(name), static_cast<column_type>(type)});
  }
  uint64_t sorted = br.varint();
  if (br.failed() || sorted > ncols) return corrupt_file("sorted_by names no column", "footer", footer_offset);
  f->sorted_column = static_cast<int>(sorted) - 1;
  uint64_t nindexes = br.varint();
  if (br.failed() || nindexes > ncols * 3) return corrupt_file("an impossible index count", "footer", footer_offset);
  for (uint64_t i = 0; i < nindexes; ++i) {
    index_info ix;
    ix.column = static_cast<size_t>(br.varint());
    uint8_t kind = br.u8();
    ix.root = read_ref(br);
    ix.entries = br.varint();
    if (br.failed() || ix.column >= ncols || !parse_index_kind(index_kind_name(static_cast<index_kind>(kind)))) {
      return corrupt_file("index " + std::to_string(i) + " is malformed", "footer", footer_offset);
    }
    ix.kind = static_cast<index_kind>(kind);
    f->indexes.push_back(ix);
    f->index_defs.push_back({f->sch.columns[ix.column].name, ix.kind});
  }
  f->created_by = std::string(br.bytes());
  if (br.failed()) return corrupt_file("the footer ends early", "footer", footer_offset);
  f->column_dirs.resize(f->columns.size());
  f->roots.resize(f->indexes.size());
  return make(std::move(f));
}

}  // namespace

file::file(std::unique_ptr<impl> p) : impl_(std::move(p)) {}
file::file(file &&) noexcept = default;
file &file::operator=(file &&) noexcept = default;
file::~file() = default;

result<file> file::open(std::unique_ptr<byte_source> source, const open_options &options) {
  auto f = std::make_unique<impl>();
  f->owned = std::move(source);
  f->source = f->owned.get();
  f->options = options;
  return open_impl(std::move(f), [](std::unique_ptr<impl> p) { return file(std::move(p)); });
}

result<file> file::open(const byte_source &source, const open_options &options) {
  auto f = std::make_unique<impl>();
  f->source = &source;
  f->options = options;
  return open_impl(std::move(f), [](std::unique_ptr<impl> p) { return file(std::move(p)); });
}

const format::schema &file::schema() const noexcept { return impl_->sch; }
uint64_t file::row_count() const noexcept { return impl_->rows; }
uint32_t file::chunk_rows() const noexcept { return impl_->chunk_rows; }
uint64_t file::chunk_count() const noexcept { return impl_->chunks; }
std::string_view file::sorted_by() const noexcept {
  return impl_->sorted_column < 0
             ? std::string_view()
             : std::string_view(impl_->sch.columns[static_cast<size_t>(impl_->sorted_column)].name);
}
const std::vector<index_def> &file::indexes() const noexcept { return impl_->index_defs; }
uint64_t file::size() const noexcept { return impl_->size; }
read_counters file::counters() const noexcept { return impl_->counters; }

}  // namespace quire::format
