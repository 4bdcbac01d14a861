// Opening a file (tail, then footer: nothing else) and loading the rest on demand: column
// directories, page directories, dictionaries, pages (through a small cache), index roots, leaves
// and Bloom filters. Every count and size read from the file is checked against the file's size
// and the open options before anything is allocated.
#include <algorithm>
#include <array>
#include <cmath>

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

// The same, naming a path made only now (format_path.h).
quire::error corrupt_file(std::string message, const lazy_path &path, uint64_t offset = quire::error::NO_OFFSET) {
  return corrupt_file(std::move(message), path.str(), offset);
}
quire::error corrupt_block(std::string message, const lazy_path &path, uint64_t offset) {
  return corrupt_block(std::move(message), path.str(), offset);
}

/// Why the zone maps of `items` (a directory's pages, a top level's blocks, or a block's pages:
/// anything with `st`) cannot be those of the rows `c` bounds (a chunk's statistics, or a block's
/// zone map), or why their nulls do not add up to c's: null when they agree. Each bound must lie
/// within c's (ints and reals; text: a minimum at least c's cut to 15 bytes, an exact maximum at most
/// c's), and the least minimum and the greatest maximum be c's own (text: the least minimum, c's
/// cut to 15 bytes), so an item cannot claim c's extremes away from the one that has them.
template <typename Items>
const char *zone_maps_disagree(const Items &items, const stats &c, domain d) {
  uint64_t nulls = 0;
  const stats *least = nullptr, *greatest = nullptr;
  bool nan = false;
  for (const auto &item : items) {
    const stats &s = item.st;
    nulls += s.nulls;
    // Anything with a value has both bounds (a text maximum of 0xFF bytes alone cannot be rounded
    // up: absent), anything of nulls neither.
    if (s.has_min != (s.nulls < s.rows) || (s.has_max && !s.has_min) || (s.has_min && !s.has_max && d != domain::text))
      return "a page's zone map lacks a bound it must have";
    if (!s.has_min) continue;
    if (!c.has_min) return "a page's zone map holds values its chunk has not";
    switch (d) {
      case domain::ints:
        if (!least || s.imin < least->imin) least = &s;
        if (!greatest || s.imax > greatest->imax) greatest = &s;
        if (s.imin > s.imax || s.imin < c.imin || s.imax > c.imax) return "a page's zone map is outside its chunk's";
        break;
      case domain::reals:
        if (std::isnan(s.rmin) || std::isnan(s.rmax) || std::isnan(c.rmin) || std::isnan(c.rmax)) {
          nan = true;
          break;
        }
        if (s.rmin > s.rmax || s.rmin < c.rmin || s.rmax > c.rmax) return "a page's zone map is outside its chunk's";
        if (!least || s.rmin < least->rmin) least = &s;
        if (!greatest || s.rmax > greatest->rmax) greatest = &s;
        break;
      case domain::text: {
        const std::string_view chunk_min = std::string_view(c.tmin).substr(0, PAGE_STAT_TEXT_BYTES);
        if (!least || s.tmin < least->tmin) least = &s;
        if (std::string_view(s.tmin) < chunk_min || (s.has_max && s.tmin > s.tmax) ||
            (s.has_max && !s.max_bound && c.has_max && s.tmax > c.tmax))
          return "a page's zone map is outside its chunk's";
        break;
      }
    }
  }
  if (least && !nan) {
    const bool agree = d == domain::ints ? least->imin == c.imin && greatest->imax == c.imax
                       : d == domain::reals
                           ? least->rmin == c.rmin && greatest->rmax == c.rmax
                           : std::string_view(least->tmin) == std::string_view(c.tmin).substr(0, PAGE_STAT_TEXT_BYTES);
    if (!agree) return "its pages' zone maps do not reach its chunk's bounds";
  }
  if (nulls != c.nulls) return "its pages' nulls differ from its column summary's";
  return nullptr;
}

/// Why a page directory disagrees with its chunk's entry in the column summary (versions 4 and 5;
/// docs/format.md 1.4): a one-level directory's pages, or a two-level one's top level (page count,
/// stored and encoded bytes, the blocks' stored bytes, nulls, zone maps); null when it agrees. The
/// pages by encoding are checked once every page's entry is read (encodings_disagree).
const char *summary_disagrees(const chunk_entry &e, const page_directory &dir, domain d) {
  if (dir.page_count != e.pages) return "holds a page count other than its column summary's";
  uint64_t stored = 0, raw = 0, block_bytes = 0;
  if (dir.has_dictionary) {
    stored += dir.dictionary_ref.stored_length;
    raw += dir.dictionary_ref.raw_length;
  }
  for (const auto &b : dir.blocks) {
    stored += b.data_bytes;
    raw += b.encoded_bytes;
    if (dir.two_level) block_bytes += b.ref.stored_length;
  }
  if (stored != e.data_bytes || raw != e.encoded_bytes) return "its pages' sizes differ from its column summary's";
  if (block_bytes != e.block_bytes) return "its blocks' sizes differ from its column summary's";
  if (dir.two_level) return zone_maps_disagree(dir.blocks, e.st, d);
  return zone_maps_disagree(dir.blocks[0].pages, e.st, d);
}

/// Why a directory whose every entry is read disagrees with its column summary's pages by encoding.
const char *encodings_disagree(const chunk_entry &e, const page_directory &dir) {
  std::array<uint32_t, 256> by_encoding{};
  for (const auto &b : dir.blocks)
    for (const auto &p : b.pages) ++by_encoding[p.encoding];
  for (uint32_t k = 0; k < e.encoding_kinds; ++k)
    if (by_encoding[e.encoding(k).first] != e.encoding(k).second)
      return "its pages' encodings differ from its column summary's";
  return nullptr;
}

/// Why a block of a two-level directory disagrees with its entry in the top level (page count,
/// rows, stored and raw bytes, nulls, zone maps): null when it agrees.
const char *block_disagrees(const directory_block &b, domain d) {
  if (b.pages.size() != b.page_count) return "a block holds a page count other than its top level's";
  uint64_t rows = 0, stored = 0, raw = 0;
  for (const auto &p : b.pages) {
    rows += p.rows;
    stored += p.ref.stored_length;
    raw += p.ref.raw_length;
  }
  if (rows != b.rows) return "a block's pages hold rows other than its top level's";
  if (stored != b.data_bytes || raw != b.encoded_bytes) return "a block's pages' sizes differ from its top level's";
  if (const char *lie = zone_maps_disagree(b.pages, b.st, d)) return lie;
  return nullptr;
}

/// Reads `count` page entries (docs/format.md 1.5: page_ref, rows, encoding, zone map), the first
/// starting at row `first` of a chunk of `chunk_rows` rows, into `out`: the one decoder of entries,
/// for one-level directories and for blocks alike. False when one is malformed or its rows pass the chunk's.
bool read_page_entries(byte_reader &r, uint64_t count, domain d, uint32_t first, uint32_t chunk_rows,
                       std::vector<page_entry> &out) {
  out.reserve(out.size() + static_cast<size_t>(count));
  uint64_t at = first;
  for (uint64_t i = 0; i < count; ++i) {
    page_entry p;
    p.ref = read_ref(r);
    const uint64_t rows_here = r.varint();
    p.encoding = r.u8();
    p.st = read_stats(r, d);
    if (r.failed() || rows_here == 0 || rows_here > chunk_rows - at || p.st.nulls > rows_here) return false;
    p.first_row = static_cast<uint32_t>(at);
    p.rows = static_cast<uint32_t>(rows_here);
    p.st.rows = rows_here;
    at += rows_here;
    out.push_back(std::move(p));
  }
  return true;
}

// One zstd decompression context a thread, shared by every file the thread reads: a context is
// about 160 KB, which malloc maps and unmaps, so a context a file made each cold open a file
// (a lookup from a cold open: open, one page of each column, close) cost more than the pages.
// Decompression does not call back into the reader, so one thread never needs two at once.
ZSTD_DCtx *thread_dctx() {
  struct holder {
    ZSTD_DCtx *ctx = ZSTD_createDCtx();
    ~holder() { ZSTD_freeDCtx(ctx); }
  };
  thread_local holder h;
  if (!h.ctx) h.ctx = ZSTD_createDCtx();
  return h.ctx;
}

result<void> read_range(const byte_source &src, uint64_t offset, std::span<uint8_t> out) {
  return src.read_at(offset, out);
}

}  // namespace

result<std::vector<uint8_t>> file::impl::fetch(size_t seg, const page_ref &ref, const lazy_path &what,
                                               fetch_kind kind) {
  // resize_or_oom's own error, naming the page only when it is returned.
  auto sized = [&](std::vector<uint8_t> &v, uint64_t n) -> result<void> {
    if (quire::detail::resize_or_oom(v, n, {})) return {};
    return quire::detail::out_of_memory(n, what.str());
  };
  const segment_info &sg = segments[seg];
  if (ref.offset < HEADER_SIZE || ref.offset > sg.footer_offset || ref.stored_length > sg.footer_offset - ref.offset) {
    return corrupt_file("points outside the file's data (offset " + std::to_string(ref.offset) + ", " +
                            std::to_string(ref.stored_length) + " bytes)",
                        what, sg.base + ref.offset);
  }
  const uint64_t at = sg.base + ref.offset;
  if (ref.raw_length > options.max_page_bytes) {
    return corrupt_block("declares " + std::to_string(ref.raw_length) +
                             " bytes once decompressed, more than max_page_bytes (" +
                             std::to_string(options.max_page_bytes) + ")",
                         what, at);
  }
  if (ref.compression != COMPRESSION_NONE && ref.compression != COMPRESSION_ZSTD) {
    return corrupt_block("unknown compression " + std::to_string(ref.compression), what, at);
  }
  if (ref.compression == COMPRESSION_NONE && ref.stored_length != ref.raw_length + (sg.seal ? crypto::TAG_BYTES : 0)) {
    return corrupt_block("an uncompressed page whose stored and raw sizes differ", what, at);
  }
  std::vector<uint8_t> stored_copy, out;
  std::span<const uint8_t> stored;
  auto whole = source->contiguous();
  if (!whole.empty() && whole.size() == size) {
    stored = whole.subspan(static_cast<size_t>(at), ref.stored_length);
  } else if (ref.compression == COMPRESSION_NONE && !sg.seal) {
    // A plain page from a range source (npm's bytes, a file) is read into the buffer it is returned
    // in: its stored bytes are its raw bytes, so a second buffer and a copy of it would be waste.
    if (auto a = sized(out, uint64_t{ref.raw_length} + DECODE_PADDING); !a) return std::move(a).error();
    auto r = read_range(*source, at, {out.data(), ref.stored_length});
    if (!r) return std::move(r).error();
    stored = {out.data(), ref.stored_length};
  } else {
    if (auto a = sized(stored_copy, ref.stored_length); !a) return std::move(a).error();
    auto r = read_range(*source, at, stored_copy);
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
  if (options.verify_checksums && crc32c(stored) != ref.crc) return corrupt_block("checksum mismatch", what, at);
  // A sealed page is opened before it is decompressed: nothing of it is believed unauthenticated.
  std::vector<uint8_t> opened;
  if (sg.seal) {
    if (stored.size() < crypto::TAG_BYTES) return corrupt_block("too short to be sealed", what, at);
    if (auto a = sized(opened, stored.size() - crypto::TAG_BYTES); !a) return std::move(a).error();
    crypto::nonce n;
    std::string associated;
    segment_nonce(*sg.seal, ref.offset, 0, n, associated);
    auto o = crypto::open(opened, stored, {reinterpret_cast<const uint8_t *>(associated.data()), associated.size()}, n,
                          sg.seal->key);
    if (!o) return corrupt_block("does not authenticate (a changed, moved or foreign page)", what, at);
    stored = opened;
  }
  // Pages are bounded by max_page_bytes, but many large pages held open (or one large file) can
  // still exhaust the wasm heap: the decoded page is OUT_OF_MEMORY then, not an abort.
  if (!out.empty()) return out;  // read in place above
  if (auto a = sized(out, uint64_t{ref.raw_length} + DECODE_PADDING); !a) return std::move(a).error();
  if (ref.compression == COMPRESSION_NONE) {
    if (ref.raw_length) std::memcpy(out.data(), stored.data(), ref.raw_length);
    return out;
  }
  unsigned long long declared = ZSTD_getFrameContentSize(stored.data(), stored.size());
  if (declared == ZSTD_CONTENTSIZE_ERROR || (declared != ZSTD_CONTENTSIZE_UNKNOWN && declared != ref.raw_length)) {
    return corrupt_block("the compressed frame does not match its declared size", what, at);
  }
  ZSTD_DCtx *dctx = thread_dctx();
  if (!dctx) return quire::error(error_code::OUT_OF_MEMORY, "cannot create a zstd context");
  size_t n = ZSTD_decompressDCtx(dctx, out.data(), ref.raw_length, stored.data(), stored.size());
  if (ZSTD_isError(n) || n != ref.raw_length)
    return corrupt_block("does not decompress to its declared size", what, at);
  return out;
}

result<std::shared_ptr<const std::vector<chunk_entry>>> file::impl::column_directory(size_t column) {
  if (column_dirs[column]) return column_dirs[column];
  touch_column(column);
  auto entries = std::make_shared<std::vector<chunk_entry>>();
  entries->reserve(static_cast<size_t>(chunks));
  domain d = domain_of(sch.columns[column].type);
  for (size_t seg = 0; seg < segments.size(); ++seg) {
    const segment_info &sg = segments[seg];
    const auto path = [&] { return column_path(column) + segment_path(seg) + ".directory"; };
    const page_ref &ref = sg.columns[column].directory;
    auto raw = fetch(seg, ref, path, fetch_kind::directory);
    if (!raw) return std::move(raw).error();
    byte_reader r({raw->data(), ref.raw_length});
    uint64_t count = r.varint();
    // A chunk entry takes at least 12 bytes: bound the count by the bytes before allocating.
    if (r.failed() || count != sg.chunks || count > r.remaining() / 12 + 1) {
      return corrupt_file("lists " + std::to_string(count) + " chunks; the footer says " + std::to_string(sg.chunks),
                          path);
    }
    const bool summary = sg.version >= SUMMARY_VERSION;
    for (uint64_t i = 0; i < count; ++i) {
      chunk_entry e;
      e.page_directory = read_ref(r);
      e.data_bytes = r.varint();
      const uint32_t rows_here = rows_in_chunk(sg.first_chunk + i);
      if (summary) {
        // Page count, encoded bytes and pages by encoding (ascending, adding up to the count).
        e.summarized = true;
        const uint64_t pages = r.varint();
        e.encoded_bytes = r.varint();
        const uint64_t kinds = r.varint();
        if (r.failed() || pages == 0 || pages > rows_here || kinds == 0 || kinds > pages || kinds > 256)
          return corrupt_block("chunk " + std::to_string(i) + " lists an impossible page count", path,
                               sg.base + ref.offset);
        e.pages = static_cast<uint32_t>(pages);
        uint64_t listed = 0;
        for (uint64_t k = 0; k < kinds; ++k) {
          const uint8_t enc = r.u8();
          const uint64_t n = r.varint();
          if (r.failed() || n == 0 || n > pages || (k > 0 && enc <= e.encoding(k - 1).first))
            return corrupt_block("chunk " + std::to_string(i) + " lists its encodings out of order", path,
                                 sg.base + ref.offset);
          e.add_encoding(enc, static_cast<uint32_t>(n));
          listed += n;
        }
        if (listed != pages)
          return corrupt_block("chunk " + std::to_string(i) + "'s encodings do not add up to its pages", path,
                               sg.base + ref.offset);
        if (sg.version >= BLOCKED_DIRECTORY_VERSION) e.block_bytes = r.varint();
      }
      e.st = read_stats(r, d);
      e.st.rows = rows_here;
      if (r.failed() || e.st.nulls > e.st.rows)
        return corrupt_file("chunk " + std::to_string(i) + " is malformed", path);
      entries->push_back(std::move(e));
    }
  }
  column_dirs[column] = entries;
  return column_dirs[column];
}

result<std::shared_ptr<const page_directory>> file::impl::load_page_directory(size_t column, uint64_t chunk) {
  uint64_t key = chunk * sch.columns.size() + column;
  if (auto it = page_dirs.find(key); it != page_dirs.end()) return std::shared_ptr<const page_directory>(it->second);
  auto cd = column_directory(column);
  if (!cd) return std::move(cd).error();
  const auto path = [&] { return chunk_path(column, chunk, "directory"); };
  const auto &ref = (*cd.value())[chunk].page_directory;
  auto raw = fetch(chunk_segment[chunk], ref, path, fetch_kind::directory);
  if (!raw) return std::move(raw).error();
  byte_reader r({raw->data(), ref.raw_length});
  auto dir = std::make_shared<detail::page_directory>();
  uint64_t count = r.varint();
  const uint32_t chunk_rows_here = rows_in_chunk(chunk);
  if (r.failed() || count == 0 || count > chunk_rows_here) {
    return corrupt_file("holds an impossible page count " + std::to_string(count), path);
  }
  dir->page_count = static_cast<uint32_t>(count);
  const uint8_t flags = r.u8();
  // Flag 2 (a two-level directory) is version 5's; a version-4 reader took any other byte than 0 for
  // a dictionary, so older files keep that reading.
  const bool blocked_version = segment_of(chunk).version >= BLOCKED_DIRECTORY_VERSION;
  if (blocked_version && flags > (DIRECTORY_HAS_DICTIONARY | DIRECTORY_TWO_LEVEL))
    return corrupt_file("holds unknown flags", path);
  dir->has_dictionary = (blocked_version ? flags & DIRECTORY_HAS_DICTIONARY : flags) != 0;
  dir->two_level = blocked_version && (flags & DIRECTORY_TWO_LEVEL);
  if (dir->has_dictionary) {
    dir->dictionary_size = r.varint();
    dir->dictionary_ref = read_ref(r);
    if (dir->dictionary_size > chunk_rows_here) return corrupt_file("a dictionary larger than its chunk", path);
  }
  domain d = domain_of(sch.columns[column].type);
  if (!dir->two_level) {
    if (count > r.remaining() / 8 + 1)
      return corrupt_file("holds an impossible page count " + std::to_string(count), path);
    directory_block whole;
    whole.page_count = dir->page_count;
    whole.rows = chunk_rows_here;
    whole.loaded = true;
    if (!read_page_entries(r, count, d, 0, chunk_rows_here, whole.pages))
      return corrupt_file("a page is malformed", path);
    const uint32_t rows = whole.pages.back().first_row + whole.pages.back().rows;
    if (rows != chunk_rows_here)
      return corrupt_file("its pages hold " + std::to_string(rows) + " rows, not " + std::to_string(chunk_rows_here),
                          path);
    for (const auto &p : whole.pages) {
      whole.data_bytes += p.ref.stored_length;
      whole.encoded_bytes += p.ref.raw_length;
    }
    dir->blocks.push_back(std::move(whole));
    dir->blocks_loaded = 1;
  } else {
    // The top level (docs/format.md 1.5): per block its page_ref, pages, rows, stored and raw bytes
    // of its pages, and its zone map.
    const uint64_t block_count = r.varint();
    if (r.failed() || block_count < 2 || block_count > count || block_count > r.remaining() / 16 + 1)
      return corrupt_file("holds an impossible block count " + std::to_string(block_count), path);
    dir->blocks.resize(static_cast<size_t>(block_count));
    uint64_t first_page = 0, first_row = 0;
    for (auto &b : dir->blocks) {
      b.ref = read_ref(r);
      const uint64_t pages = r.varint(), rows = r.varint();
      b.data_bytes = r.varint();
      b.encoded_bytes = r.varint();
      b.st = read_stats(r, d);
      if (r.failed() || pages == 0 || pages > count - first_page || rows < pages ||
          rows > chunk_rows_here - first_row || b.st.nulls > rows)
        return corrupt_file("a block's entry is malformed", path);
      b.first_page = static_cast<uint32_t>(first_page);
      b.page_count = static_cast<uint32_t>(pages);
      b.first_row = static_cast<uint32_t>(first_row);
      b.rows = static_cast<uint32_t>(rows);
      b.st.rows = rows;
      b.zoned = true;
      first_page += pages;
      first_row += rows;
    }
    if (first_page != count || first_row != chunk_rows_here)
      return corrupt_file("its blocks hold " + std::to_string(first_page) + " pages of " + std::to_string(first_row) +
                              " rows, not " + std::to_string(count) + " of " + std::to_string(chunk_rows_here),
                          path);
  }
  if (dir->two_level && r.remaining() != 0) return corrupt_file("holds bytes past its entries", path);
  const auto &entry = (*cd.value())[chunk];
  if (entry.summarized) {
    if (const char *lie = summary_disagrees(entry, *dir, d))
      return corrupt_block(lie, path, segment_of(chunk).base + ref.offset);
    if (!dir->two_level)
      if (const char *lie = encodings_disagree(entry, *dir))
        return corrupt_block(lie, path, segment_of(chunk).base + ref.offset);
  } else if (dir->two_level) {
    return corrupt_file("a two-level directory in a table without column summaries", path);
  }
  page_dirs.emplace(key, dir);
  return std::shared_ptr<const detail::page_directory>(dir);
}

result<const std::vector<page_entry> *> file::impl::block_pages(size_t column, uint64_t chunk, size_t block) {
  auto top = load_page_directory(column, chunk);
  if (!top) return std::move(top).error();
  // The cached directory itself (load_page_directory hands it out as const): its blocks fill in.
  detail::page_directory &dir = *page_dirs.find(chunk * sch.columns.size() + column)->second;
  directory_block &b = dir.blocks[block];
  if (b.loaded) return &b.pages;
  const std::string path = chunk_path(column, chunk, "directory.blocks", block);
  auto raw = fetch(chunk_segment[chunk], b.ref, path, fetch_kind::directory);
  if (!raw) return std::move(raw).error();
  byte_reader r({raw->data(), b.ref.raw_length});
  const uint64_t count = r.varint();
  const domain d = domain_of(sch.columns[column].type);
  std::vector<page_entry> pages;
  const uint64_t at = segment_of(chunk).base + b.ref.offset;
  if (r.failed() || count != b.page_count || count > r.remaining() / 8 + 1)
    return corrupt_block("a block holds a page count other than its top level's", path, at);
  if (!read_page_entries(r, count, d, b.first_row, b.first_row + b.rows, pages) || r.remaining() != 0)
    return corrupt_block("a page's entry is malformed", path, at);
  b.pages = std::move(pages);
  if (const char *lie = block_disagrees(b, d)) {
    b.pages.clear();
    return corrupt_block(lie, path, at);
  }
  b.loaded = true;
  // Every entry read: the pages by encoding, which the top level does not list, against the summary.
  if (++dir.blocks_loaded == dir.blocks.size()) {
    if (const char *lie = encodings_disagree((*column_directory(column).value())[chunk], dir)) {
      b.loaded = false;
      --dir.blocks_loaded;
      b.pages.clear();
      return corrupt_block(lie, column_path(column) + ".chunks[" + std::to_string(chunk) + "].directory", at);
    }
  }
  return &b.pages;
}

result<std::shared_ptr<const page_directory>> file::impl::load_whole_directory(size_t column, uint64_t chunk) {
  auto dir = load_page_directory(column, chunk);
  if (!dir) return dir;
  for (size_t b = 0; b < dir.value()->blocks.size(); ++b) {
    if (dir.value()->blocks[b].loaded) continue;
    if (auto p = block_pages(column, chunk, b); !p) return std::move(p).error();
  }
  return dir;
}

result<const page_entry *> file::impl::page_entry_at(size_t column, uint64_t chunk, size_t page_index) {
  auto dir = load_page_directory(column, chunk);
  if (!dir) return std::move(dir).error();
  const size_t b = dir.value()->block_of_page(page_index);
  auto pages = block_pages(column, chunk, b);
  if (!pages) return std::move(pages).error();
  return &(*pages.value())[page_index - dir.value()->blocks[b].first_page];
}

result<size_t> file::impl::page_of_row(size_t column, uint64_t chunk, uint32_t row) {
  auto dir = load_page_directory(column, chunk);
  if (!dir) return std::move(dir).error();
  const size_t b = dir.value()->block_of_row(row);
  auto pages = block_pages(column, chunk, b);
  if (!pages) return std::move(pages).error();
  const auto &ps = *pages.value();
  auto it =
      std::upper_bound(ps.begin(), ps.end(), row, [](uint32_t r, const page_entry &p) { return r < p.first_row; });
  return dir.value()->blocks[b].first_page + static_cast<size_t>(it - ps.begin()) - 1;
}

result<std::shared_ptr<const dictionary>> file::impl::chunk_dictionary(size_t column, uint64_t chunk) {
  uint64_t key = chunk * sch.columns.size() + column;
  if (auto it = dicts.find(key); it != dicts.end()) return it->second;
  auto dir = load_page_directory(column, chunk);
  if (!dir) return std::move(dir).error();
  const auto path = [&] { return chunk_path(column, chunk, "dictionary"); };
  const auto &ref = dir.value()->dictionary_ref;
  auto raw = fetch(chunk_segment[chunk], ref, path, fetch_kind::data);
  if (!raw) return std::move(raw).error();
  ++counters.data_pages;
  auto d = std::make_shared<dictionary>();
  if (!decode_dictionary({raw->data(), ref.raw_length}, dir.value()->dictionary_size, *d) ||
      d->size() != dir.value()->dictionary_size) {
    return corrupt_block("the dictionary does not decode", path, segment_of(chunk).base + ref.offset);
  }
  dicts.emplace(key, d);
  return std::shared_ptr<const dictionary>(d);
}

result<page_view> file::impl::page(size_t column, uint64_t chunk, size_t page_index) {
  auto dir = load_page_directory(column, chunk);
  if (!dir) return std::move(dir).error();
  auto entry_at = page_entry_at(column, chunk, page_index);
  if (!entry_at) return std::move(entry_at).error();
  const auto &entry = *entry_at.value();
  page_view view;
  view.first_row = entry.first_row;
  if (dir.value()->has_dictionary) {
    auto d = chunk_dictionary(column, chunk);
    if (!d) return std::move(d).error();
    view.dict = *d;
  }
  uint64_t key = (chunk * sch.columns.size() + column) * (uint64_t{MAX_CHUNK_ROWS} + 1) + page_index;
  for (auto &c : cache) {
    if (c.key == key && c.values) {
      c.stamp = ++clock;
      ++counters.cache_hits;
      view.values = c.values;
      return view;
    }
  }
  const auto path = [&] { return chunk_path(column, chunk, "pages", page_index); };
  auto raw = fetch(chunk_segment[chunk], entry.ref, path, fetch_kind::data);
  if (!raw) return std::move(raw).error();
  ++counters.data_pages;
  touch_column(column);
  if (touched_blocks.insert(chunk * sch.columns.size() + column).second) counters.blocks = touched_blocks.size();
  if (touched_chunks.insert(chunk).second) counters.chunks = touched_chunks.size();
  auto values = std::make_shared<column_values>();
  if (!decode_page({raw->data(), entry.ref.raw_length}, sch.columns[column].type, entry.rows,
                   dir.value()->dictionary_size, *values)) {
    return corrupt_block("the page does not decode", path, segment_of(chunk).base + entry.ref.offset);
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

result<std::shared_ptr<const std::vector<uint8_t>>> file::impl::raw_page(size_t seg, const page_ref &ref, uint64_t key,
                                                                         const lazy_path &what) {
  for (auto &c : raw_cache) {
    if (c.key == key && c.bytes) {
      c.stamp = ++clock;
      ++counters.cache_hits;
      return c.bytes;
    }
  }
  auto raw = fetch(seg, ref, what, fetch_kind::data);
  if (!raw) return std::move(raw).error();
  ++counters.value_pages;
  auto bytes = std::make_shared<const std::vector<uint8_t>>(std::move(raw).value());
  if (options.cache_pages > 0) {
    if (raw_cache.empty()) raw_cache.reserve(std::min<size_t>(options.cache_pages, 16));
    if (raw_cache.size() < options.cache_pages) {
      raw_cache.push_back({key, bytes, ++clock});
    } else {
      auto oldest = std::min_element(raw_cache.begin(), raw_cache.end(),
                                     [](const cached_raw &a, const cached_raw &b) { return a.stamp < b.stamp; });
      *oldest = {key, bytes, ++clock};
    }
  }
  return bytes;
}

result<page_view> file::impl::row_view(size_t column, uint64_t chunk, size_t page_index, uint32_t row,
                                       const std::shared_ptr<column_values> &scratch) {
  auto dir = load_page_directory(column, chunk);
  if (!dir) return std::move(dir).error();
  auto entry_at = page_entry_at(column, chunk, page_index);
  if (!entry_at) return std::move(entry_at).error();
  const auto &entry = *entry_at.value();
  const uint64_t block = chunk * sch.columns.size() + column;
  const uint64_t key = block * (uint64_t{MAX_CHUNK_ROWS} + 1) + page_index;
  for (const auto &c : cache) {
    // Decoded already: the page itself (page() counts the hit).
    if (c.key == key && c.values) return page(column, chunk, page_index);
  }
  const auto path = [&] { return chunk_path(column, chunk, "pages", page_index); };
  auto raw = raw_page(chunk_segment[chunk], entry.ref, key, path);
  if (!raw) return std::move(raw).error();
  touch_column(column);
  if (touched_blocks.insert(block).second) counters.blocks = touched_blocks.size();
  if (touched_chunks.insert(chunk).second) counters.chunks = touched_chunks.size();
  if (row < entry.first_row ||
      !decode_page_value({raw.value()->data(), entry.ref.raw_length}, sch.columns[column].type, entry.rows,
                         dir.value()->dictionary_size, row - entry.first_row, *scratch)) {
    return corrupt_block("the page does not decode", path, segment_of(chunk).base + entry.ref.offset);
  }
  if (scratch->dictionary) {
    // The row's one entry: from the decoded dictionary when loaded, else from the dictionary's
    // bytes (the page of the slot past every data page's).
    if (!dir.value()->has_dictionary)
      return corrupt_block("a dictionary page in a chunk without a dictionary", path,
                           segment_of(chunk).base + entry.ref.offset);
    const uint32_t id = scratch->ids[0];
    std::string_view text;
    std::shared_ptr<const std::vector<uint8_t>> dict_bytes;
    if (auto it = dicts.find(block); it != dicts.end()) {
      text = it->second->at(id);
    } else {
      const auto dict_path = [&] { return chunk_path(column, chunk, "dictionary"); };
      const auto &ref = dir.value()->dictionary_ref;
      auto d = raw_page(chunk_segment[chunk], ref, block * (uint64_t{MAX_CHUNK_ROWS} + 1) + MAX_CHUNK_ROWS, dict_path);
      if (!d) return std::move(d).error();
      dict_bytes = std::move(d).value();
      if (!dictionary_entry({dict_bytes->data(), ref.raw_length}, dir.value()->dictionary_size, id, text))
        return corrupt_block("the dictionary does not decode", dict_path, segment_of(chunk).base + ref.offset);
    }
    scratch->dictionary = false;
    scratch->ids.clear();
    scratch->text.assign(text);
    scratch->offsets.assign({0, static_cast<uint32_t>(text.size())});
  }
  page_view view;
  view.values = scratch;
  view.first_row = row;
  return view;
}

result<std::shared_ptr<const index_root>> file::impl::load_index_root(size_t index, size_t seg) {
  const size_t slot = index * segments.size() + seg;
  if (roots[slot]) return roots[slot];
  const auto path = [&] { return index_path(index) + segment_path(seg) + ".root"; };
  const auto &ref = segments[seg].index_roots[index];
  const uint64_t seg_chunks = segments[seg].chunks;
  auto raw = fetch(seg, ref, path, fetch_kind::index);
  if (!raw) return std::move(raw).error();
  byte_reader r({raw->data(), ref.raw_length});
  auto root = std::make_shared<detail::index_root>();
  uint64_t leaves = r.varint();
  if (r.failed() || leaves > r.remaining() / 8 + 1) return corrupt_file("holds an impossible leaf count", path);
  root->leaves.reserve(static_cast<size_t>(leaves));
  const bool compact_leaves = compact(index, seg);
  const bool int_keys = compact_leaves && indexes[index].kind != index_kind::text;
  for (uint64_t i = 0; i < leaves; ++i) {
    index_leaf l;
    if (int_keys) {  // the first key's zvarint, kept as its order key (what lookups compare)
      const std::string_view b = r.bytes();
      byte_reader k({reinterpret_cast<const uint8_t *>(b.data()), b.size()});
      const int64_t first = k.svarint();
      if (k.failed() || k.remaining() != 0)
        return corrupt_file("leaf " + std::to_string(i) + "'s first key is malformed", path);
      append_int_key(l.first_key, first);
    } else {
      l.first_key = std::string(r.bytes());
      if (compact_leaves && l.first_key.size() != 3)
        return corrupt_file("leaf " + std::to_string(i) + "'s first key is not a trigram", path);
    }
    l.entries = r.varint();
    l.ref = read_ref(r);
    if (r.failed()) return corrupt_file("leaf " + std::to_string(i) + " is malformed", path);
    if (i > 0 && !(root->leaves.back().first_key < l.first_key)) return corrupt_file("leaves are out of order", path);
    root->leaves.push_back(std::move(l));
  }
  uint64_t blooms = r.varint();
  if (r.failed() || (blooms != 0 && (blooms != seg_chunks || compact_leaves)) || blooms > r.remaining() / 8 + 1)
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
  roots[slot] = root;
  return roots[slot];
}

namespace {

// Decodes a sorted-index leaf (prefix-compressed keys; a repeated key stores its row as a delta)
// and calls visit(key, row) for each entry in order until it returns false.
template <typename Visit>
result<void> walk_leaf(byte_reader &r, uint64_t entries, uint64_t rows, const lazy_path &path, Visit visit) {
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

/// Where a compact leaf is and what its root says of it: each check below holds for what the
/// writer wrote, so a leaf that breaks one lies (CORRUPT_BLOCK), and one that keeps them all
/// answers as the index was written.
struct leaf_bounds {
  const index_leaf &leaf;
  const std::string *next_first;  // the next leaf's first key (every key here is below it), or null
  uint64_t rows;                  // of the segment: every row is below it
  const lazy_path &path;
  uint64_t at;  // the leaf's offset in the file
};

// An integer-keyed leaf: varint count, then as integer sequences the keys, each distinct key's first
// row and (when a key has more than one row) the gaps between the rows of a key. All of it is
// checked before the first visit (a key out of order could hide rows behind a stopped walk).
template <typename Visit>
result<void> walk_int_leaf(byte_reader &r, const leaf_bounds &b, Visit visit) {
  const uint64_t count = r.varint();
  if (r.failed() || count != b.leaf.entries || count == 0 || count > b.rows)
    return corrupt_block("holds an impossible entry count", b.path, b.at);
  std::vector<int64_t> keys, rows, starts, gaps;
  if (!decode_ints(r, static_cast<size_t>(count), keys)) return corrupt_block("the leaf does not decode", b.path, b.at);
  size_t runs = 1;
  for (size_t i = 1; i < count; ++i) runs += keys[i] != keys[i - 1];
  if (!decode_ints(r, runs, starts) || (count > runs && !decode_ints(r, static_cast<size_t>(count) - runs, gaps)) ||
      r.remaining() != 0)
    return corrupt_block("the leaf does not decode", b.path, b.at);
  rows.resize(static_cast<size_t>(count));
  // Gaps summed modulo 2^64: one that wraps gives a row below its predecessor, checked below.
  for (size_t i = 0, s = 0, g = 0; i < count; ++i) {
    rows[i] = i == 0 || keys[i] != keys[i - 1]
                  ? starts[s++]
                  : static_cast<int64_t>(static_cast<uint64_t>(rows[i - 1]) + static_cast<uint64_t>(gaps[g++]));
  }
  std::string key;
  append_int_key(key, keys[0]);
  if (key != b.leaf.first_key) return corrupt_block("the first key differs from the root's", b.path, b.at);
  if (b.next_first && !(int_of_key(*b.next_first) > keys[count - 1]))
    return corrupt_block("a key reaches the next leaf's first key", b.path, b.at);
  for (size_t i = 0; i < count; ++i) {
    if (static_cast<uint64_t>(rows[i]) >= b.rows)
      return corrupt_block("an entry points past the last row", b.path, b.at);
    if (i > 0 && (keys[i] < keys[i - 1] || (keys[i] == keys[i - 1] && rows[i] <= rows[i - 1])))
      return corrupt_block("entries are out of order", b.path, b.at);
  }
  for (size_t i = 0; i < count; ++i) {
    key.clear();
    append_int_key(key, keys[i]);
    if (!visit(key, static_cast<uint64_t>(rows[i]))) break;
  }
  return {};
}

// A posting-list leaf: varint trigram count, then per trigram its 3 bytes, varint n, varint first
// row and (n > 1) the n - 1 gaps to the next rows as an integer sequence. A first pass decodes and checks every list
// (one list's rows in memory at a time, at most the segment's rows); the second decodes again and visits, up to the
// stop.
template <typename Visit>
result<void> walk_posting_leaf(byte_reader &r, const leaf_bounds &b, Visit visit) {
  std::vector<int64_t> rows, gaps;
  uint64_t grams = 0;
  for (int pass = 0; pass < 2; ++pass) {
    byte_reader p = r;
    grams = p.varint();
    if (p.failed() || grams == 0 || grams > p.remaining() / 5 + 1)
      return corrupt_block("holds an impossible trigram count", b.path, b.at);
    std::string key, prev;
    uint64_t total = 0;
    for (uint64_t g = 0; g < grams; ++g) {
      const auto gram = p.take(3);
      const uint64_t n = p.varint();
      if (p.failed() || n == 0 || n > b.rows || n > b.leaf.entries - total)
        return corrupt_block("list " + std::to_string(g) + " is malformed", b.path, b.at);
      key.assign(reinterpret_cast<const char *>(gram.data()), 3);
      if (g == 0 ? key != b.leaf.first_key : !(prev < key))
        return corrupt_block(g == 0 ? "the first key differs from the root's" : "trigrams are out of order", b.path,
                             b.at);
      if (b.next_first && !(key < *b.next_first))
        return corrupt_block("a key reaches the next leaf's first key", b.path, b.at);
      const uint64_t first = p.varint();
      if (p.failed() || (n > 1 && !decode_ints(p, static_cast<size_t>(n - 1), gaps)))
        return corrupt_block("list " + std::to_string(g) + " does not decode", b.path, b.at);
      rows.resize(static_cast<size_t>(n));
      rows[0] = static_cast<int64_t>(first);
      // Gaps summed modulo 2^64: one that wraps gives a row below its predecessor, checked below.
      for (size_t i = 1; i < n; ++i)
        rows[i] = static_cast<int64_t>(static_cast<uint64_t>(rows[i - 1]) + static_cast<uint64_t>(gaps[i - 1]));
      total += n;
      if (pass == 0) {
        for (size_t i = 0; i < n; ++i) {
          if (static_cast<uint64_t>(rows[i]) >= b.rows || (i > 0 && rows[i] <= rows[i - 1]))
            return corrupt_block("list " + std::to_string(g) + " holds rows out of order or past the last", b.path,
                                 b.at);
        }
      } else {
        for (size_t i = 0; i < n; ++i)
          if (!visit(key, static_cast<uint64_t>(rows[i]))) return {};
      }
      prev = key;
    }
    if (pass == 0 && (total != b.leaf.entries || p.remaining() != 0))
      return corrupt_block("its lists do not hold the root's entries", b.path, b.at);
  }
  return {};
}

}  // namespace

template <typename Visit>
result<std::shared_ptr<const index_root>> file::impl::walk_index_leaf(size_t index, size_t seg, size_t leaf,
                                                                      Visit visit) {
  auto root = load_index_root(index, seg);
  if (!root) return std::move(root).error();
  const auto &l = root.value()->leaves[leaf];
  const auto make_path = [&] { return leaf_path(index, seg, leaf); };
  const lazy_path path = make_path;
  auto raw = fetch(seg, l.ref, path, fetch_kind::index);
  if (!raw) return std::move(raw).error();
  byte_reader r({raw->data(), l.ref.raw_length});
  if (compact(index, seg)) {
    const auto &leaves = root.value()->leaves;
    const leaf_bounds b{l, leaf + 1 < leaves.size() ? &leaves[leaf + 1].first_key : nullptr, segments[seg].rows, path,
                        segments[seg].base + l.ref.offset};
    auto walked = indexes[index].kind == index_kind::text ? walk_posting_leaf(r, b, visit) : walk_int_leaf(r, b, visit);
    if (!walked) return std::move(walked).error();
    return root;
  }
  auto walked = walk_leaf(r, l.entries, segments[seg].rows, path, visit);
  if (!walked) return std::move(walked).error();
  return root;
}

result<std::vector<std::pair<std::string, uint64_t>>> file::impl::load_leaf(size_t index, size_t seg, size_t leaf) {
  std::vector<std::pair<std::string, uint64_t>> out;
  auto root = walk_index_leaf(index, seg, leaf, [&](const std::string &key, uint64_t row) {
    out.emplace_back(key, row);
    return true;
  });
  if (!root) return std::move(root).error();
  if (!out.empty() && out.front().first != root.value()->leaves[leaf].first_key)
    return corrupt_file("the first key differs from the root's", leaf_path(index, seg, leaf));
  return out;
}

result<void> file::impl::scan_leaf(size_t index, size_t seg, size_t leaf, const std::optional<std::string> &lo,
                                   const std::optional<std::string> &hi, std::vector<uint64_t> &out) {
  const uint64_t first = segments[seg].first_row;
  auto root = walk_index_leaf(index, seg, leaf, [&](const std::string &key, uint64_t row) {
    if (hi && key > *hi) return false;
    if (!(lo && key < *lo)) out.push_back(first + row);
    return true;
  });
  if (!root) return std::move(root).error();
  return {};
}

result<bool> file::impl::bloom_may_contain(size_t index, uint64_t chunk, const std::vector<uint64_t> &hashes) {
  const size_t seg = chunk_segment[chunk];
  const uint64_t local = chunk - segments[seg].first_chunk;
  auto root = load_index_root(index, seg);
  if (!root) return std::move(root).error();
  if (root.value()->blooms.size() != segments[seg].chunks) return true;
  const auto &b = root.value()->blooms[local];
  const auto path = [&] { return index_path(index) + segment_path(seg) + ".blooms[" + std::to_string(local) + "]"; };
  auto raw = fetch(seg, b.ref, path, fetch_kind::index);
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

namespace detail {

void segment_nonce(const sealing &s, uint64_t offset, uint8_t kind, crypto::nonce &n, std::string &associated) {
  std::memcpy(n.data(), s.salt.data(), 16);
  std::memcpy(n.data() + 16, &offset, 8);
  associated.assign(reinterpret_cast<const char *>(s.file_id.data()), 16);
  associated.append(reinterpret_cast<const char *>(s.salt.data()), 16);
  put_u64(associated, offset);
  put_u8(associated, kind);
}

result<void> seal_stored(std::string &stored, const sealing &s, uint64_t offset, uint8_t kind) {
  crypto::nonce n;
  std::string associated;
  segment_nonce(s, offset, kind, n, associated);
  std::string sealed(stored.size() + crypto::TAG_BYTES, '\0');
  auto r = crypto::seal({reinterpret_cast<uint8_t *>(sealed.data()), sealed.size()},
                        {reinterpret_cast<const uint8_t *>(stored.data()), stored.size()},
                        {reinterpret_cast<const uint8_t *>(associated.data()), associated.size()}, n, s.key);
  if (!r) return r;
  stored = std::move(sealed);
  return {};
}

/// The file-wide facts of one segment's footer, which every segment of a file must share.
struct segment_shape {
  format::schema sch;
  std::vector<index_def> index_defs;
  std::vector<index_kind> kinds;
  std::vector<size_t> index_columns;
  std::string created_by;
};

/// Reads the tail and footer of the segment `sg` (its base and length set) from `src`, opening the
/// footer when the segment is sealed, and fills the segment's counts, column directories and index
/// roots; the schema and index definitions go to `shape`.
result<void> read_segment(const byte_source &src, const open_options &options, segment_info &sg, segment_shape &shape,
                          read_counters &counters) {
  const uint64_t size = sg.length;
  if (size < HEADER_SIZE + TAIL_SIZE) {
    return quire::error(error_code::NOT_A_QUIRE_FILE,
                        "too short to be a .quire file (" + std::to_string(size) + " bytes)", sg.base);
  }
  uint8_t head[HEADER_SIZE];
  auto r = src.read_at(sg.base, head);
  if (!r) return std::move(r).error();
  if (std::memcmp(head, MAGIC, sizeof MAGIC) != 0)
    return quire::error(error_code::NOT_A_QUIRE_FILE, "the file does not start with the .quire magic", sg.base);
  uint16_t version;
  std::memcpy(&version, head + 6, 2);
  if (version != TABLE_VERSION && version != COMPACT_INDEX_VERSION && version != SUMMARY_VERSION &&
      version != BLOCKED_DIRECTORY_VERSION && version != MIXED_SCALE_VERSION) {
    return quire::error(error_code::UNSUPPORTED_VERSION,
                        "format version " + std::to_string(version) + "; this reader reads versions 1, 3, 4, 5 and 6",
                        sg.base + 6);
  }
  sg.version = version;
  uint8_t tail[TAIL_SIZE];
  r = src.read_at(sg.base + size - TAIL_SIZE, tail);
  if (!r) return std::move(r).error();
  if (std::memcmp(tail + 16, MAGIC, sizeof MAGIC) != 0) {
    return quire::error(error_code::NOT_A_QUIRE_FILE, "the file does not end with the .quire magic (truncated?)",
                        sg.base + size - 8);
  }
  std::memcpy(&version, tail + 22, 2);
  if (version != sg.version) {
    return quire::error(error_code::UNSUPPORTED_VERSION, "format version " + std::to_string(version) + " in the tail",
                        sg.base + size - 2);
  }
  const uint64_t footer_offset = load_u64(tail);
  const uint32_t footer_length = load_u32(tail + 8);
  const uint32_t footer_crc = load_u32(tail + 12);
  const uint64_t at = sg.base + footer_offset;
  if (footer_length > options.max_footer_bytes) {
    return corrupt_file("the footer declares " + std::to_string(footer_length) + " bytes, more than max_footer_bytes",
                        "footer", sg.base + size - TAIL_SIZE);
  }
  if (footer_offset < HEADER_SIZE || footer_offset > size - TAIL_SIZE ||
      footer_length != size - TAIL_SIZE - footer_offset) {
    return corrupt_file("the footer's offset and length do not fit the file", "footer", sg.base + size - TAIL_SIZE);
  }
  sg.footer_offset = footer_offset;
  std::vector<uint8_t> footer;
  if (auto a = quire::detail::resize_or_oom(footer, footer_length, "footer"); !a) return std::move(a).error();
  r = src.read_at(at, footer);
  if (!r) return std::move(r).error();
  counters.bytes += HEADER_SIZE + TAIL_SIZE + footer_length;
  counters.reads += 3;
  if (options.verify_checksums && crc32c(footer) != footer_crc)
    return corrupt_block("the footer's checksum does not match", "footer", at);
  if (sg.seal) {
    if (footer.size() < crypto::TAG_BYTES) return corrupt_block("the footer is too short to be sealed", "footer", at);
    std::vector<uint8_t> opened(footer.size() - crypto::TAG_BYTES);
    crypto::nonce n;
    std::string associated;
    segment_nonce(*sg.seal, footer_offset, 1, n, associated);
    auto o = crypto::open(opened, footer, {reinterpret_cast<const uint8_t *>(associated.data()), associated.size()}, n,
                          sg.seal->key);
    if (!o) return corrupt_block("the footer does not authenticate", "footer", at);
    footer = std::move(opened);
  }

  byte_reader br(footer);
  sg.rows = br.varint();
  uint64_t chunk_rows = br.varint();
  if (br.failed() || chunk_rows < 1 || chunk_rows > MAX_CHUNK_ROWS)
    return corrupt_file("chunk_rows out of range", "footer", at);
  sg.chunk_rows = static_cast<uint32_t>(chunk_rows);
  sg.chunks = (sg.rows + chunk_rows - 1) / chunk_rows;
  // Every chunk stores at least one page per column: more chunks than bytes is a lie.
  if (sg.chunks > size)
    return corrupt_file("the row count (" + std::to_string(sg.rows) + ") is impossible for the file's size", "footer",
                        at);
  uint64_t ncols = br.varint();
  if (br.failed() || ncols == 0 || ncols > MAX_COLUMNS || ncols > br.remaining())
    return corrupt_file("an impossible column count", "footer", at);
  sg.columns.resize(static_cast<size_t>(ncols));
  shape = {};
  for (uint64_t i = 0; i < ncols; ++i) {
    std::string name(br.bytes());
    uint8_t type = br.u8();
    sg.columns[i].directory = read_ref(br);
    if (br.failed() || name.empty() || !parse_type_name(type_name(static_cast<column_type>(type)))) {
      return corrupt_file("column " + std::to_string(i) + " is malformed", "footer", at);
    }
    shape.sch.columns.push_back({std::move(name), static_cast<column_type>(type)});
  }
  uint64_t sorted = br.varint();
  if (br.failed() || sorted > ncols) return corrupt_file("sorted_by names no column", "footer", at);
  sg.sorted_column = static_cast<int>(sorted) - 1;
  uint64_t nindexes = br.varint();
  if (br.failed() || nindexes > ncols * 3) return corrupt_file("an impossible index count", "footer", at);
  for (uint64_t i = 0; i < nindexes; ++i) {
    const uint64_t column = br.varint();
    uint8_t kind = br.u8();
    sg.index_roots.push_back(read_ref(br));
    sg.index_entries.push_back(br.varint());
    if (br.failed() || column >= ncols || !parse_index_kind(index_kind_name(static_cast<index_kind>(kind)))) {
      return corrupt_file("index " + std::to_string(i) + " is malformed", "footer", at);
    }
    shape.index_columns.push_back(static_cast<size_t>(column));
    shape.kinds.push_back(static_cast<index_kind>(kind));
    shape.index_defs.push_back({shape.sch.columns[static_cast<size_t>(column)].name, static_cast<index_kind>(kind)});
  }
  shape.created_by = std::string(br.bytes());
  if (br.failed()) return corrupt_file("the footer ends early", "footer", at);
  return {};
}

result<void> load_segments(file::impl &f, std::vector<segment_info> segments) {
  f.segments.clear();
  for (size_t i = 0; i < segments.size(); ++i) {
    segment_shape shape;
    auto r = read_segment(*f.source, f.options, segments[i], shape, f.counters);
    if (!r) return r;
    if (i == 0) {
      f.sch = shape.sch;
      f.index_defs = shape.index_defs;
      f.created_by = shape.created_by;
      f.indexes.clear();
      for (size_t k = 0; k < shape.kinds.size(); ++k) f.indexes.push_back({shape.index_columns[k], shape.kinds[k], 0});
    } else {
      bool same = shape.sch.columns.size() == f.sch.columns.size() && shape.index_defs.size() == f.index_defs.size();
      for (size_t c = 0; same && c < f.sch.columns.size(); ++c)
        same = shape.sch.columns[c].name == f.sch.columns[c].name && shape.sch.columns[c].type == f.sch.columns[c].type;
      for (size_t k = 0; same && k < f.index_defs.size(); ++k)
        same = shape.index_defs[k].column == f.index_defs[k].column && shape.index_defs[k].kind == f.index_defs[k].kind;
      if (!same) {
        return corrupt_file("segment " + std::to_string(i) + "'s schema or indexes differ from the first segment's",
                            "segments[" + std::to_string(i) + "]", segments[i].base);
      }
    }
    for (size_t k = 0; k < f.indexes.size(); ++k) f.indexes[k].entries += segments[i].index_entries[k];
    if (segments[i].deleted && segments[i].deleted->size() != segments[i].rows) {
      return corrupt_file("a deletion vector of " + std::to_string(segments[i].deleted->size()) + " rows for " +
                              std::to_string(segments[i].rows) + " rows",
                          "segments[" + std::to_string(i) + "]", segments[i].base);
    }
  }
  f.segments = std::move(segments);
  f.index_segments();
  return {};
}

}  // namespace detail

void file::impl::index_segments() {
  rows = deleted_rows = chunks = 0;
  chunk_segment.clear();
  for (size_t i = 0; i < segments.size(); ++i) {
    auto &s = segments[i];
    s.first_row = rows;
    s.first_chunk = chunks;
    rows += s.rows;
    deleted_rows += s.deleted_rows;
    chunks += s.chunks;
    chunk_segment.insert(chunk_segment.end(), static_cast<size_t>(s.chunks), static_cast<uint32_t>(i));
  }
  chunk_rows = segments.empty() ? 1 : segments[0].chunk_rows;
  footer_offset = segments.empty() ? 0 : segments.back().base + segments.back().footer_offset;
  sorted_column = segments.size() == 1 ? segments[0].sorted_column : -1;
  column_dirs.assign(sch.columns.size(), nullptr);
  roots.assign(indexes.size() * segments.size(), nullptr);
  page_dirs.clear();
  dicts.clear();
  cache.clear();
  raw_cache.clear();
}

namespace {

result<file> open_impl(std::unique_ptr<file::impl> f, file (*make)(std::unique_ptr<file::impl>)) {
  const byte_source &src = *f->source;
  f->size = src.size();
  if (f->size >= HEADER_SIZE) {
    uint8_t head[HEADER_SIZE];
    auto r = src.read_at(0, head);
    if (!r) return std::move(r).error();
    uint16_t version;
    std::memcpy(&version, head + 6, 2);
    if (std::memcmp(head, MAGIC, sizeof MAGIC) == 0 && version == 2) {
      auto o = open_store(*f);
      if (!o) return std::move(o).error();
      return make(std::move(f));
    }
  }
  std::vector<segment_info> one(1);
  one[0].base = 0;
  one[0].length = f->size;
  auto r = load_segments(*f, std::move(one));
  if (!r) return std::move(r).error();
  f->version = f->segments[0].version;
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
uint64_t file::row_count() const noexcept { return impl_->rows - impl_->deleted_rows; }
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
