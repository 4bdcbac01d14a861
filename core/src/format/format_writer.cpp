// The writer: rows → typed values → (optionally sorted through the bounded sorter) → one chunk of
// column buffers → encoded, compressed, checksummed pages → the sink. Indexes collect (key, row)
// entries in their own bounded sorters and are written after the last chunk, then the column
// directories, the footer and the tail (docs/format.md, "Layout").
#include <algorithm>
#include <bit>
#include <cmath>
#include <map>
#include <unordered_map>

#include "format_internal.h"
#include "quire/version.h"

namespace quire::format {

using namespace detail;

std::string_view type_name(column_type type) noexcept {
  switch (type) {
    case column_type::integer: return "integer";
    case column_type::float64: return "float";
    case column_type::decimal: return "decimal";
    case column_type::string: return "string";
    case column_type::boolean: return "boolean";
    case column_type::date: return "date";
    case column_type::timestamp: return "timestamp";
    case column_type::json: return "json";
  }
  return "unknown";
}

std::optional<column_type> parse_type_name(std::string_view name) noexcept {
  for (auto t : {column_type::integer, column_type::float64, column_type::decimal, column_type::string,
                 column_type::boolean, column_type::date, column_type::timestamp, column_type::json}) {
    if (type_name(t) == name) return t;
  }
  return std::nullopt;
}

std::string_view index_kind_name(index_kind kind) noexcept {
  switch (kind) {
    case index_kind::sorted: return "sorted";
    case index_kind::hash: return "hash";
    case index_kind::text: return "text";
  }
  return "unknown";
}

std::optional<index_kind> parse_index_kind(std::string_view name) noexcept {
  for (auto k : {index_kind::sorted, index_kind::hash, index_kind::text}) {
    if (index_kind_name(k) == name) return k;
  }
  return std::nullopt;
}

std::optional<size_t> schema::find(std::string_view name) const noexcept {
  for (size_t i = 0; i < columns.size(); ++i) {
    if (columns[i].name == name) return i;
  }
  return std::nullopt;
}

namespace {

/// A value converted to its column's storage: ints, a double, or text.
struct typed {
  bool null = true;
  int64_t i = 0;
  double d = 0;
  std::string_view s;
};

// `c` converted to a column of `type`'s storage into `t`; nullopt when it converts, else why not
// ("" when the cell is of the wrong kind).
std::optional<std::string> convert_cell(column_type type, const cell &c, typed &t, std::string &text_store) {
  t = typed{};
  if (c.k == cell::kind::null_value) return std::nullopt;
  t.null = false;
  switch (type) {
    case column_type::integer:
      if (c.k == cell::kind::integer) {
        t.i = c.i;
        return std::nullopt;
      }
      if (c.k == cell::kind::real && std::floor(c.d) == c.d && std::fabs(c.d) < 9.2e18) {
        t.i = static_cast<int64_t>(c.d);
        return std::nullopt;
      }
      return std::string("");
    case column_type::float64:
      if (c.k == cell::kind::integer) {
        t.d = static_cast<double>(c.i);
        return std::nullopt;
      }
      if (c.k == cell::kind::real && std::isfinite(c.d)) {
        t.d = c.d;
        return std::nullopt;
      }
      return std::string("");
    case column_type::decimal:
      if (c.k == cell::kind::text) {
        if (classify_number(c.s) == number_class::not_a_number) return std::string("not a number");
        t.s = c.s;
        return std::nullopt;
      }
      if (c.k == cell::kind::integer) {
        text_store = std::to_string(c.i);
        t.s = text_store;
        return std::nullopt;
      }
      if (c.k == cell::kind::real && std::isfinite(c.d)) {
        text_store.clear();
        append_double(text_store, c.d);
        t.s = text_store;
        return std::nullopt;
      }
      return std::string("");
    case column_type::string:
      if (c.k == cell::kind::text) {
        t.s = c.s;
        return std::nullopt;
      }
      return std::string("");
    case column_type::boolean:
      if (c.k == cell::kind::boolean) {
        t.i = c.b ? 1 : 0;
        return std::nullopt;
      }
      return std::string("");
    case column_type::date:
      if (c.k == cell::kind::integer) {
        t.i = c.i;
        return std::nullopt;
      }
      if (c.k == cell::kind::text) {
        auto d = parse_date(c.s);
        if (!d) return std::string("not a YYYY-MM-DD date");
        t.i = *d;
        return std::nullopt;
      }
      return std::string("");
    case column_type::timestamp:
      if (c.k == cell::kind::integer) {
        t.i = c.i;
        return std::nullopt;
      }
      if (c.k == cell::kind::text) {
        auto ts = parse_timestamp(c.s, true);
        if (!ts) return std::string("not an ISO 8601 timestamp");
        t.i = *ts;
        return std::nullopt;
      }
      return std::string("");
    case column_type::json:
      if (c.k == cell::kind::text) {
        if (auto ok = json::check(c.s); !ok) return "not JSON: " + ok.error().message;
        t.s = c.s;
        return std::nullopt;
      }
      return std::string("");
  }
  return std::string("");
}

/// A text value's hash for the writer's dictionary table: eight bytes a step (only the table's
/// speed depends on it, never the file: ids are given in first-seen order).
uint64_t dictionary_hash(std::string_view v) noexcept {
  uint64_t h = 0x9e3779b97f4a7c15ull ^ v.size();
  const auto *p = reinterpret_cast<const uint8_t *>(v.data());
  size_t n = v.size();
  for (; n >= 8; p += 8, n -= 8) h = (h ^ load_u64(p)) * 0xbf58476d1ce4e5b9ull;
  uint64_t tail = 0;
  for (size_t i = 0; i < n; ++i) tail |= uint64_t{p[i]} << (8 * i);
  h = (h ^ tail) * 0x94d049bb133111ebull;
  return h ^ (h >> 29);
}

/// A text index's batch pairs: the row in the low 40 bits, the trigram above.
constexpr unsigned TRIGRAM_ROW_BITS = 40;
constexpr uint64_t TRIGRAM_ROW_LIMIT = uint64_t{1} << TRIGRAM_ROW_BITS;
/// Pairs a batch holds before it is merged, checked between rows (512 KiB, and as much again to
/// sort them; 2^18 was no faster natively): several rows of a trigram a lookup.
constexpr size_t TRIGRAM_BATCH = size_t{1} << 16;

constexpr uint32_t BLOOM_HASHES = 7;
constexpr uint32_t BLOOM_BITS_PER_KEY = 10;

}  // namespace

struct writer::impl {
  format::schema sch;
  write_options opt;
  byte_sink &sink;
  ZSTD_CCtx *cctx = nullptr;
  uint64_t offset = 0;
  bool failed = false;
  bool finished = false;
  uint64_t rows_in = 0;
  uint64_t rows_out = 0;
  int sort_column = -1;
  std::unique_ptr<run_sorter> row_sorter;
  std::string scratch, key_scratch, owned_text;
  std::vector<uint32_t> dict_slots;      // flush_column's dictionary table
  std::vector<typed> typed_row;          // append_row's converted cells
  std::vector<std::string> text_stores;  // and the text it made (decimals from numbers)

  struct column_buffer {
    std::vector<uint8_t> valid;
    std::vector<int64_t> ints;
    std::vector<double> reals;
    std::string text;
    std::vector<uint32_t> offsets{0};
    uint64_t nulls = 0;
  };
  std::vector<column_buffer> buffers;
  uint32_t buffered = 0;
  std::vector<std::string> column_dirs;  // per column: serialised chunk entries
  uint64_t chunks = 0;

  struct index_state {
    index_def def;
    size_t column;
    std::unique_ptr<run_sorter> sorter;
    // text: the entries while they fit half the index's share (no sort, no spill); null once
    // drained into the sorter, which takes the rest.
    std::unique_ptr<posting_lists> postings;
    std::vector<uint64_t> pairs;             // text: (trigram, row) not yet merged (merge_trigram_pairs)
    std::vector<uint64_t> chunk_hashes;      // hash: the keys of the current chunk
    std::vector<std::string> bloom_entries;  // hash: per chunk, a serialised (ref, bits, k)
    // Version 3's compact leaves (compact_index): integer keys, or posting lists; no Bloom filter.
    bool compact = false;
  };
  // Version 4 for every new table (its indexes have compact leaves where they may), 5 when its
  // first chunk has a page directory of more than DIRECTORY_BLOCK_PAGES pages, 6 when its first
  // chunk has a decimal page of mixed places (docs/format.md 1): the header, which says it, waits
  // in `pending` with the first chunk's bytes until that is known.
  uint16_t version = SUMMARY_VERSION;
  bool header_pending = true;
  std::string pending;
  std::vector<size_t> first_block_bytes_at;  // per column: where its first chunk's summary entry
                                             // takes block_bytes, should the file become version 5
  std::vector<index_state> indexes;
  std::vector<index_def> skipped_indexes;  // asked for, answered by the order (answered_by_order)

  impl(const format::schema &s, const write_options &o, byte_sink &k) : sch(s), opt(o), sink(k) {}
  ~impl() { ZSTD_freeCCtx(cctx); }

  result<void> emit(std::string_view bytes) {
    if (header_pending) {
      pending.append(bytes);
      offset += bytes.size();
      return {};
    }
    auto r = sink.write({reinterpret_cast<const uint8_t *>(bytes.data()), bytes.size()});
    if (!r) return r;
    offset += bytes.size();
    return {};
  }

  /// Raises the version of a file whose header still waits (its first chunk's column `c` needs
  /// `v`). From version 5 every summary entry holds block_bytes: the columns of the first chunk
  /// written before this one gain 0 (one-level directories).
  void raise_version(uint16_t v, size_t c) {
    if (version >= v) return;
    if (version < BLOCKED_DIRECTORY_VERSION)
      for (size_t k = 0; k < c; ++k) column_dirs[k].insert(first_block_bytes_at[k], 1, '\0');
    version = v;
  }

  /// Writes the header, now that the version is known, and what waited behind it.
  result<void> release_header() {
    if (!header_pending) return {};
    header_pending = false;
    std::string header(MAGIC, sizeof MAGIC);
    put_u16(header, version);
    header += pending;
    pending = std::string();
    offset -= header.size();
    return emit(header);
  }

  /// `compress` false: stored raw (a two-level directory's top level, decoded first by every lookup).
  result<page_ref> write_page(std::string_view raw, bool compress = true) {
    page_ref ref;
    std::string stored =
        seal_page(raw, opt.compression_level, compress && worth_compressing(raw) ? cctx : nullptr, ref);
    ref.offset = offset;
    if (opt.sealer) {
      auto s = opt.sealer->seal(stored, offset, 0);
      if (!s) return std::move(s).error();
      ref.stored_length = static_cast<uint32_t>(stored.size());
      ref.crc = crc32c(stored);
    }
    auto r = emit(stored);
    if (!r) return std::move(r).error();
    return ref;
  }

  quire::error mismatch(size_t col, const cell &c, std::string_view why) const {
    static constexpr std::string_view KIND[] = {"null", "an integer", "a number", "a boolean", "text"};
    quire::error e(error_code::SCHEMA_MISMATCH,
                   "row " + std::to_string(rows_in + 1) + ": column '" + sch.columns[col].name + "' (" +
                       std::string(type_name(sch.columns[col].type)) + ") cannot hold " +
                       std::string(KIND[static_cast<int>(c.k)]) + (why.empty() ? "" : ": " + std::string(why)));
    e.path = sch.columns[col].name;
    return e;
  }

  /// Converts a cell to the column's storage. `text_store` keeps text made here (decimals from numbers).
  result<typed> convert(size_t col, const cell &c, std::string &text_store) const {
    typed t;
    if (auto why = convert_cell(sch.columns[col].type, c, t, text_store)) return mismatch(col, c, *why);
    return t;
  }

  void append_key(std::string &out, size_t col, const typed &t) const {
    switch (domain_of(sch.columns[col].type)) {
      case domain::ints: append_int_key(out, t.i); break;
      case domain::reals:
        append_real_key(out, sch.columns[col].type == column_type::decimal ? parse_double(t.s) : t.d);
        break;
      case domain::text: append_text_key(out, t.s); break;
    }
  }

  // --- stage 2: rows in final order -------------------------------------------------------------

  result<void> add_row(const std::vector<typed> &row) {
    const uint64_t row_number = rows_out;
    for (size_t c = 0; c < row.size(); ++c) {
      auto &b = buffers[c];
      const typed &t = row[c];
      b.valid.push_back(t.null ? 0 : 1);
      b.nulls += t.null;
      switch (sch.columns[c].type) {
        case column_type::float64: b.reals.push_back(t.null ? 0 : t.d); break;
        case column_type::string:
        case column_type::decimal:
        case column_type::json:
          if (!t.null) b.text.append(t.s);
          b.offsets.push_back(static_cast<uint32_t>(b.text.size()));
          break;
        default: b.ints.push_back(t.null ? 0 : t.i); break;
      }
    }
    for (auto &ix : indexes) {
      const typed &t = row[ix.column];
      if (t.null) continue;
      key_scratch.clear();
      switch (ix.def.kind) {
        case index_kind::sorted:
          append_key(key_scratch, ix.column, t);
          put_be64(key_scratch, row_number);
          ix.sorter->add(key_scratch, {});
          break;
        case index_kind::hash: {
          append_key(key_scratch, ix.column, t);
          if (ix.compact) {  // integer keys: the key itself, as a sorted index holds it
            put_be64(key_scratch, row_number);
            ix.sorter->add(key_scratch, {});
            break;
          }
          uint64_t h = hash64(key_scratch);
          key_scratch.clear();
          put_be64(key_scratch, h);
          put_be64(key_scratch, row_number);
          ix.sorter->add(key_scratch, {});
          ix.chunk_hashes.push_back(h);
          break;
        }
        case index_kind::text: {
          if (row_number < TRIGRAM_ROW_LIMIT) {
            // Every trigram of the value as (trigram, row) into the batch; sorted and merged into
            // the lists a batch at a time (merge_trigram_pairs), duplicates dropped there.
            // Reserved past the batch by a value's worth, so that it does not double on the row
            // that fills it.
            if (ix.pairs.capacity() < TRIGRAM_BATCH) ix.pairs.reserve(TRIGRAM_BATCH + t.s.size());
            const auto *p = reinterpret_cast<const uint8_t *>(t.s.data());
            for (size_t i = 0; i + 3 <= t.s.size(); ++i) {
              const uint64_t g = (uint64_t{p[i]} << 16) | (uint64_t{p[i + 1]} << 8) | p[i + 2];
              ix.pairs.push_back(g << TRIGRAM_ROW_BITS | row_number);
            }
            break;
          }
          merge_trigram_pairs(ix);
          distinct_trigrams(t.s, grams_scratch);
          if (ix.postings) {
            bool fits = true;
            for (uint32_t g : grams_scratch) fits &= ix.postings->add(g, row_number);
            if (!fits) drain_postings(ix);
            break;
          }
          for (uint32_t g : grams_scratch) add_trigram_entry(ix, g, row_number);
          break;
        }
      }
    }
    for (auto &ix : indexes)
      if (ix.pairs.size() >= TRIGRAM_BATCH) merge_trigram_pairs(ix);
    ++rows_out;
    if (++buffered == opt.chunk_rows) return flush_chunk();
    return {};
  }

  /// Rows per page so that a page holds about page_bytes once encoded.
  // Rows per page: page_bytes of encoded values, and at most page_bytes / 2 rows, because a page is
  // decoded whole to read one row of it — a chunk of sequential ids encodes to a few bytes but would
  // decode to 512 KiB of integers (a point lookup's memory).
  uint32_t rows_per_page(double bytes_per_row) const {
    double rows = static_cast<double>(opt.page_bytes) / std::max(bytes_per_row, 0.01);
    return static_cast<uint32_t>(std::clamp(rows, 1.0, static_cast<double>(opt.page_bytes / 2)));
  }

  result<void> flush_column(size_t c) {
    auto &b = buffers[c];
    const column_type type = sch.columns[c].type;
    const domain dom = domain_of(type);
    const uint32_t rows = buffered;
    auto text_at = [&](uint32_t r) {
      return std::string_view(b.text).substr(b.offsets[r], b.offsets[r + 1] - b.offsets[r]);
    };
    // Min and max over rows [from, to) (text as views into the buffer: no copy per new minimum),
    // folded into `range`; a page's range, and the chunk's as the fold of its pages'.
    struct value_range {
      bool any = false;
      int64_t imin = 0, imax = 0;
      double rmin = 0, rmax = 0;
      std::string_view tmin, tmax;
    };
    auto fold_range = [&](uint32_t from, uint32_t to, value_range &range) {
      for (uint32_t r = from; r < to; ++r) {
        if (!b.valid[r]) continue;
        const bool first = !range.any;
        switch (dom) {
          case domain::ints:
            if (first || b.ints[r] < range.imin) range.imin = b.ints[r];
            if (first || b.ints[r] > range.imax) range.imax = b.ints[r];
            break;
          case domain::reals: {
            double v = type == column_type::decimal ? parse_double(text_at(r)) : b.reals[r];
            if (first || v < range.rmin) range.rmin = v;
            if (first || v > range.rmax) range.rmax = v;
            break;
          }
          case domain::text: {
            std::string_view v = text_at(r);
            if (first || v < range.tmin) range.tmin = v;
            if (first || v > range.tmax) range.tmax = v;
            break;
          }
        }
        range.any = true;
      }
    };
    auto fold_into = [&](const value_range &page, value_range &range) {
      if (!page.any) return;
      const bool first = !range.any;
      if (first || page.imin < range.imin) range.imin = page.imin;
      if (first || page.imax > range.imax) range.imax = page.imax;
      if (first || page.rmin < range.rmin) range.rmin = page.rmin;
      if (first || page.rmax > range.rmax) range.rmax = page.rmax;
      if (first || page.tmin < range.tmin) range.tmin = page.tmin;
      if (first || page.tmax > range.tmax) range.tmax = page.tmax;
      range.any = true;
    };
    // A page's text bounds are 15-byte prefixes, the maximum rounded up when cut; the column
    // summary's a 64-byte prefix of the minimum and the maximum when it fits (docs/format.md 1.4, 1.5).
    auto stats_of = [&](uint64_t count, uint64_t nulls, const value_range &range, bool page) {
      stats s;
      s.rows = count;
      s.nulls = nulls;
      s.has_min = s.has_max = range.any;
      s.imin = range.imin;
      s.imax = range.imax;
      s.rmin = range.rmin;
      s.rmax = range.rmax;
      if (dom == domain::text && range.any && page) {
        s.tmin = std::string(range.tmin.substr(0, PAGE_STAT_TEXT_BYTES + 1));
        s.tmax = std::string(range.tmax.substr(0, PAGE_STAT_TEXT_BYTES + 1));
        shorten_text_bounds(s, PAGE_STAT_TEXT_BYTES);
      } else if (dom == domain::text && range.any) {
        s.tmin = std::string(range.tmin.substr(0, STAT_TEXT_BYTES));
        if (range.tmax.size() > STAT_TEXT_BYTES) s.has_max = false;
        else s.tmax = std::string(range.tmax);
      }
      return s;
    };
    value_range chunk_range;

    // Dictionary for text when values repeat enough.
    bool use_dict = false;
    dictionary dict;
    std::vector<uint32_t> ids;
    if (stored_as_text(type)) {
      ids.assign(rows, 0);
      dict.offsets.assign(1, 0);
      bool give_up = false;
      const uint64_t present = rows - b.nulls;
      // First-seen ids through a flat open-addressing table of 1 + id (0: empty), at most half
      // full: the dictionary gives up past present / 2 + 1 entries, so the table never fills.
      const size_t slots = std::bit_ceil(std::max<size_t>(16, 2 * (present / 2 + 2)));
      dict_slots.assign(slots, 0);
      const size_t mask = slots - 1;
      for (uint32_t r = 0; r < rows && !give_up; ++r) {
        if (!b.valid[r]) continue;
        const std::string_view v = text_at(r);
        size_t at = static_cast<size_t>(dictionary_hash(v)) & mask;
        uint32_t id = 0;
        while (true) {
          const uint32_t slot = dict_slots[at];
          if (slot == 0) {
            id = static_cast<uint32_t>(dict.size());
            dict_slots[at] = id + 1;
            dict.text.append(v);
            dict.offsets.push_back(static_cast<uint32_t>(dict.text.size()));
            if (dict.size() > present / 2 + 1 || dict.text.size() > (size_t{1} << 20)) give_up = true;
            break;
          }
          if (dict.at(slot - 1) == v) {
            id = slot - 1;
            break;
          }
          at = (at + 1) & mask;
        }
        ids[r] = id;
      }
      use_dict = !give_up && present > 0;
    }

    // Bytes per row once encoded, to size the pages.
    double per_row = 8;
    std::vector<int64_t> dense;
    switch (dom) {
      case domain::ints: {
        dense.reserve(rows);
        for (uint32_t r = 0; r < rows; ++r)
          if (b.valid[r]) dense.push_back(b.ints[r]);
        scratch.clear();
        encode_ints(scratch, dense);
        per_row = static_cast<double>(scratch.size()) / std::max<uint32_t>(rows, 1);
        break;
      }
      default:
        if (type == column_type::float64) {
          std::vector<double> present_reals;
          present_reals.reserve(rows);
          for (uint32_t r = 0; r < rows; ++r)
            if (b.valid[r]) present_reals.push_back(b.reals[r]);
          unsigned places = 0;
          if (scale_decimals(present_reals, places, dense)) {
            scratch.clear();
            encode_ints(scratch, dense);
            per_row = static_cast<double>(scratch.size()) / std::max<uint32_t>(rows, 1);
          }
        } else if (use_dict) per_row = std::max(1.0, static_cast<double>(std::bit_width(dict.size()))) / 8.0;
        else per_row = static_cast<double>(b.text.size()) / std::max<uint32_t>(rows, 1) + 1;
        break;
    }
    const uint32_t page_rows = rows_per_page(per_row);

    std::string dir;
    uint64_t data_bytes = 0, encoded_bytes = 0;
    std::map<uint8_t, uint64_t> encodings;  // pages by encoding byte, for the column summary
    uint32_t page_count = (rows + page_rows - 1) / page_rows;
    // More pages than a block holds: two-level (version 5), when the file is or may still become it.
    const bool two_level =
        page_count > DIRECTORY_BLOCK_PAGES && (version >= BLOCKED_DIRECTORY_VERSION || header_pending);
    if (two_level) raise_version(BLOCKED_DIRECTORY_VERSION, c);
    // Where each page's entry starts in `dir`, and what a block's top-level entry sums of it.
    struct page_info {
      size_t entry_at = 0;
      uint32_t rows = 0;
      uint64_t nulls = 0, stored = 0, raw = 0;
      value_range range;
    };
    std::vector<page_info> infos;
    if (two_level) infos.reserve(page_count);
    put_varint(dir, page_count);
    put_u8(dir, (use_dict ? DIRECTORY_HAS_DICTIONARY : 0) | (two_level ? DIRECTORY_TWO_LEVEL : 0));
    if (use_dict) {
      scratch.clear();
      encode_dictionary(scratch, dict);
      put_varint(dir, dict.size());
      // Every lookup in the chunk decodes its dictionary whole, so a small one is stored raw:
      // the customers' three dictionaries decompressed were a fifth of a cold find natively, for
      // 1.3% of the file's bytes (docs/format.md §2). A larger one is compressed as any page.
      auto ref = write_page(scratch, scratch.size() > RAW_DICTIONARY_BYTES);
      if (!ref) return std::move(ref).error();
      put_ref(dir, *ref);
      data_bytes += ref->stored_length;
      encoded_bytes += ref->raw_length;
    }
    std::string raw;
    std::vector<int64_t> values;
    std::vector<double> reals;
    unsigned places = 0;
    std::vector<int64_t> value_places;
    // A decimal page's values as scaled integers: SCALED when they all have the same places, else
    // SCALED_MIXED (version 6: when the file is or may still become it) when every one is plain
    // and fits 18 digits at the page's most places; TEXT otherwise.
    auto scale_page = [&](uint32_t from, uint32_t to, std::vector<int64_t> &out, unsigned &k) -> uint8_t {
      out.clear();
      value_places.clear();
      const auto text = [&] {
        out.clear();
        return VALUES_TEXT_PLAIN;
      };
      const bool mixed_allowed = version >= MIXED_SCALE_VERSION || header_pending;
      bool mixed = false;
      k = UINT32_MAX;
      for (uint32_t r = from; r < to; ++r) {
        if (!b.valid[r]) continue;
        unsigned own = UINT32_MAX;
        auto m = scale_decimal_text(text_at(r), own);
        if (!m || (own != k && k != UINT32_MAX && !mixed_allowed)) return text();
        mixed |= own != k && k != UINT32_MAX;
        k = k == UINT32_MAX ? own : std::max(k, own);
        out.push_back(*m);
        value_places.push_back(own);
      }
      if (k == UINT32_MAX) k = 0;
      if (!mixed) return VALUES_DECIMAL_SCALED;
      // Every value at the page's places: at most 18 digits still.
      for (size_t i = 0; i < out.size(); ++i) {
        const int64_t f = SCALED_POWERS_OF_TEN[k - value_places[i]];
        const int64_t limit = SCALED_POWERS_OF_TEN[MAX_SCALED_DIGITS] / f;
        if (out[i] >= limit || out[i] <= -limit) return text();
        out[i] *= f;
      }
      return VALUES_DECIMAL_SCALED_MIXED;
    };
    for (uint32_t from = 0; from < rows; from += page_rows) {
      uint32_t to = std::min(rows, from + page_rows);
      value_range page_range;
      fold_range(from, to, page_range);
      fold_into(page_range, chunk_range);
      uint64_t page_nulls = 0;
      if (b.nulls)
        for (uint32_t r = from; r < to; ++r) page_nulls += !b.valid[r];
      stats ps = stats_of(to - from, page_nulls, page_range, true);
      raw.clear();
      encode_validity(raw, std::span<const uint8_t>(b.valid).subspan(from, to - from), ps.nulls);
      values.clear();
      uint8_t value_tag, int_tag = 0;
      size_t tag_at = 0;
      if (dom == domain::ints) {
        value_tag = VALUES_INTS;
        put_u8(raw, value_tag);
        for (uint32_t r = from; r < to; ++r)
          if (b.valid[r]) values.push_back(b.ints[r]);
        tag_at = raw.size();
        encode_ints(raw, values);
      } else if (type == column_type::float64) {
        reals.clear();
        for (uint32_t r = from; r < to; ++r)
          if (b.valid[r]) reals.push_back(b.reals[r]);
        unsigned places = 0;
        if (scale_decimals(reals, places, values)) {
          // Short decimals (prices, measurements) as integers: FOR packs cents in 3 bytes, not 8.
          value_tag = VALUES_F64_DECIMAL;
          put_u8(raw, value_tag);
          put_u8(raw, static_cast<uint8_t>(places));
          tag_at = raw.size();
          encode_ints(raw, values);
        } else {
          value_tag = VALUES_F64;
          put_u8(raw, value_tag);
          for (double x : reals) raw.append(reinterpret_cast<const char *>(&x), 8);
        }
      } else if (use_dict) {
        value_tag = VALUES_TEXT_DICT;
        put_u8(raw, value_tag);
        for (uint32_t r = from; r < to; ++r)
          if (b.valid[r]) values.push_back(ids[r]);
        tag_at = raw.size();
        encode_ints(raw, values);
      } else if (type == column_type::decimal &&
                 (value_tag = scale_page(from, to, values, places)) != VALUES_TEXT_PLAIN) {
        // Decimals as scaled integers: the page's places, the integers, and (mixed) each value's
        // own places, which the integer sequence packs in a few bits or one run.
        put_u8(raw, value_tag);
        put_u8(raw, static_cast<uint8_t>(places));
        tag_at = raw.size();
        encode_ints(raw, values);
        if (value_tag == VALUES_DECIMAL_SCALED_MIXED) {
          encode_ints(raw, value_places);
          raise_version(MIXED_SCALE_VERSION, c);
        }
      } else {
        value_tag = VALUES_TEXT_PLAIN;
        put_u8(raw, value_tag);
        for (uint32_t r = from; r < to; ++r)
          if (b.valid[r]) values.push_back(b.offsets[r + 1] - b.offsets[r]);
        tag_at = raw.size();
        encode_ints(raw, values);
        for (uint32_t r = from; r < to; ++r)
          if (b.valid[r]) raw.append(text_at(r));
      }
      if (tag_at) int_tag = static_cast<uint8_t>(raw[tag_at]);
      auto ref = write_page(raw);
      if (!ref) return std::move(ref).error();
      data_bytes += ref->stored_length;
      encoded_bytes += ref->raw_length;
      const auto encoding = static_cast<uint8_t>(value_tag << 4 | int_tag);
      ++encodings[encoding];
      if (two_level)
        infos.push_back({dir.size(), to - from, ps.nulls, ref->stored_length, ref->raw_length, page_range});
      put_ref(dir, *ref);
      put_varint(dir, to - from);
      put_u8(dir, encoding);
      put_stats(dir, dom, ps);
    }
    const stats chunk_stats = stats_of(rows, b.nulls, chunk_range, false);
    uint64_t block_bytes = 0;
    if (two_level) {
      // The blocks (each `varint pages` and its pages' entries, as a one-level directory has them),
      // then the top level in place of the entries: per block its page_ref, pages, rows, stored and
      // raw bytes, and the zone map of its pages (docs/format.md 1.5).
      const size_t entries_at = infos.front().entry_at;
      std::string top = dir.substr(0, entries_at), block;
      const uint32_t block_count = (page_count + DIRECTORY_BLOCK_PAGES - 1) / DIRECTORY_BLOCK_PAGES;
      put_varint(top, block_count);
      for (uint32_t first = 0; first < page_count; first += DIRECTORY_BLOCK_PAGES) {
        const uint32_t last = std::min(page_count, first + DIRECTORY_BLOCK_PAGES);
        const size_t end = last < page_count ? infos[last].entry_at : dir.size();
        block.clear();
        put_varint(block, last - first);
        block.append(dir, infos[first].entry_at, end - infos[first].entry_at);
        auto block_ref = write_page(block);
        if (!block_ref) return std::move(block_ref).error();
        block_bytes += block_ref->stored_length;
        uint64_t block_rows = 0, nulls = 0, stored = 0, raw_bytes = 0;
        value_range range;
        for (uint32_t i = first; i < last; ++i) {
          block_rows += infos[i].rows;
          nulls += infos[i].nulls;
          stored += infos[i].stored;
          raw_bytes += infos[i].raw;
          fold_into(infos[i].range, range);
        }
        put_ref(top, *block_ref);
        put_varint(top, last - first);
        put_varint(top, block_rows);
        put_varint(top, stored);
        put_varint(top, raw_bytes);
        put_stats(top, dom, stats_of(block_rows, nulls, range, true));
      }
      dir = std::move(top);
    }
    auto dir_ref = write_page(dir, !two_level);
    if (!dir_ref) return std::move(dir_ref).error();
    // The chunk's entry in the column summary (docs/format.md 1.4).
    auto &cd = column_dirs[c];
    put_ref(cd, *dir_ref);
    put_varint(cd, data_bytes);
    put_varint(cd, page_count);
    put_varint(cd, encoded_bytes);
    put_varint(cd, encodings.size());
    for (const auto &[encoding, pages] : encodings) {
      put_u8(cd, encoding);
      put_varint(cd, pages);
    }
    if (version >= BLOCKED_DIRECTORY_VERSION) put_varint(cd, block_bytes);
    else if (header_pending) first_block_bytes_at[c] = cd.size();
    put_stats(cd, dom, chunk_stats);
    return {};
  }

  result<void> flush_chunk() {
    if (buffered == 0) return {};
    for (size_t c = 0; c < buffers.size(); ++c) {
      auto r = flush_column(c);
      if (!r) return r;
      auto &b = buffers[c];
      b.valid.clear();
      b.ints.clear();
      b.reals.clear();
      b.text.clear();
      b.offsets.assign(1, 0);
      b.nulls = 0;
    }
    for (auto &ix : indexes) {
      if (ix.def.kind != index_kind::hash || ix.compact) continue;
      uint64_t bits = std::max<uint64_t>(64, (ix.chunk_hashes.size() * BLOOM_BITS_PER_KEY + 63) / 64 * 64);
      std::string filter(bits / 8, '\0');
      for (uint64_t h : ix.chunk_hashes) {
        for (uint32_t k = 0; k < BLOOM_HASHES; ++k) {
          uint64_t bit = bloom_bit(h, k, bits);
          filter[bit >> 3] = static_cast<char>(filter[bit >> 3] | (1 << (bit & 7)));
        }
      }
      auto ref = write_page(filter);
      if (!ref) return std::move(ref).error();
      std::string entry;
      put_ref(entry, *ref);
      put_varint(entry, bits);
      put_u8(entry, BLOOM_HASHES);
      ix.bloom_entries.push_back(std::move(entry));
      ix.chunk_hashes.clear();
    }
    ++chunks;
    buffered = 0;
    return release_header();
  }

  // --- indexes ------------------------------------------------------------------------------------

  std::vector<uint32_t> grams_scratch;
  std::vector<uint64_t> pair_scratch, row_scratch;
  std::vector<size_t> bucket_scratch;

  void add_trigram_entry(index_state &ix, uint32_t g, uint64_t row) {
    key_scratch.clear();
    append_trigram_key(key_scratch, g);
    put_be64(key_scratch, row);
    ix.sorter->add(key_scratch, {});
  }

  /// A text index's batch of (trigram << TRIGRAM_ROW_BITS | row) pairs into its posting lists
  /// (or its sorter once they spilled): sorted by trigram, stable, so each trigram's rows stay in
  /// the increasing order they were added in, then one list append per trigram. Sort and merge
  /// instead of a table lookup per entry; the index's bytes are the same.
  void merge_trigram_pairs(index_state &ix) {
    auto &pairs = ix.pairs;
    if (pairs.empty()) return;
    // Least significant digit first, two passes of 12 bits over the trigram's 24.
    constexpr unsigned DIGIT = 12;
    constexpr size_t BUCKETS = size_t{1} << DIGIT;
    pair_scratch.resize(pairs.size());
    std::vector<uint64_t> *from = &pairs, *to = &pair_scratch;
    for (unsigned shift = TRIGRAM_ROW_BITS; shift < TRIGRAM_ROW_BITS + 24; shift += DIGIT) {
      bucket_scratch.assign(BUCKETS, 0);
      for (uint64_t v : *from) ++bucket_scratch[(v >> shift) & (BUCKETS - 1)];
      size_t sum = 0;
      for (auto &c : bucket_scratch) {
        const size_t n = c;
        c = sum;
        sum += n;
      }
      uint64_t *out = to->data();
      for (uint64_t v : *from) out[bucket_scratch[(v >> shift) & (BUCKETS - 1)]++] = v;
      std::swap(from, to);
    }
    // Two passes: the sorted pairs are back in `pairs`.
    constexpr uint64_t ROW_MASK = (uint64_t{1} << TRIGRAM_ROW_BITS) - 1;
    for (size_t i = 0; i < pairs.size();) {
      const uint32_t g = static_cast<uint32_t>(pairs[i] >> TRIGRAM_ROW_BITS);
      size_t j = i;
      row_scratch.clear();
      for (; j < pairs.size() && (pairs[j] >> TRIGRAM_ROW_BITS) == g; ++j) {
        const uint64_t row = pairs[j] & ROW_MASK;
        if (row_scratch.empty() || row_scratch.back() != row) row_scratch.push_back(row);
      }
      i = j;
      if (ix.postings) {
        if (!ix.postings->add_rows(g, row_scratch)) drain_postings(ix);
        continue;
      }
      for (uint64_t row : row_scratch) add_trigram_entry(ix, g, row);
    }
    pairs.clear();
  }

  /// Moves a text index's posting lists into its sorter, in key order, and leaves the rest to it.
  void drain_postings(index_state &ix) {
    (void)ix.postings->drain([&](uint32_t g, uint64_t row) -> result<void> {
      add_trigram_entry(ix, g, row);
      return {};
    });
    ix.postings.reset();
  }

  /// A root over compact leaves: per leaf its first key (bytes: the key's zvarint for integer keys,
  /// the trigram's 3 bytes for posting lists), entries and page, then no Bloom filter (count 0).
  struct compact_root {
    std::string leaves;
    uint64_t count = 0;
  };
  result<void> put_compact_leaf(compact_root &root, std::string_view first_key, uint64_t leaf_entries,
                                std::string_view raw) {
    auto ref = write_page(raw);
    if (!ref) return std::move(ref).error();
    put_bytes(root.leaves, first_key);
    put_varint(root.leaves, leaf_entries);
    put_ref(root.leaves, *ref);
    ++root.count;
    return {};
  }
  result<page_ref> write_compact_root(const compact_root &root) {
    std::string raw;
    put_varint(raw, root.count);
    raw.append(root.leaves);
    put_varint(raw, 0);
    return write_page(raw);
  }

  /// Integer keys (the ints domain, sorted and hash alike): a leaf is its entry count, then as
  /// integer sequences its keys (encode_ints: ascending keys come out DELTA, FOR or RLE), the first
  /// row of each distinct key (FOR at the width of their span) and, when a key has more than one
  /// row, the gaps between the rows of a key. A leaf closes where the key changes, once it holds
  /// page_bytes / 2 entries (it is decoded whole) or about page_bytes of bits by the widest key
  /// step and the rows' span.
  result<page_ref> write_int_index(index_state &ix, uint64_t &entries) {
    compact_root root;
    std::vector<int64_t> keys, rows, starts, gaps;
    uint64_t max_step = 0, row_lo = UINT64_MAX, row_hi = 0;
    entries = 0;
    const size_t max_entries = std::max<size_t>(opt.page_bytes / 2, 1);
    auto close = [&]() -> result<void> {
      if (keys.empty()) return {};
      std::string raw, first;
      put_varint(raw, keys.size());
      encode_ints(raw, keys);
      // Each key's first row, then the gaps between the rows of one key: a key held by many rows
      // (an age, a country code) costs the bits of its gaps, not of the whole table's rows.
      starts.clear();
      gaps.clear();
      for (size_t i = 0; i < keys.size(); ++i) {
        if (i == 0 || keys[i] != keys[i - 1]) starts.push_back(rows[i]);
        else gaps.push_back(rows[i] - rows[i - 1]);
      }
      encode_ints(raw, starts);
      if (!gaps.empty()) encode_ints(raw, gaps);
      put_svarint(first, keys.front());
      auto r = put_compact_leaf(root, first, keys.size(), raw);
      keys.clear();
      rows.clear();
      max_step = 0;
      row_lo = UINT64_MAX;
      row_hi = 0;
      return r;
    };
    std::string_view key, payload;
    while (true) {
      auto more = ix.sorter->next(key, payload);
      if (!more) return std::move(more).error();
      if (!*more) break;
      const int64_t k = int_of_key(key);
      uint64_t row = 0;
      for (size_t i = 8; i < 16; ++i) row = (row << 8) | static_cast<uint8_t>(key[i]);
      if (!keys.empty() && k != keys.back()) {
        const uint64_t bits = std::bit_width(max_step) + std::bit_width(row_hi - row_lo);
        if (keys.size() >= max_entries || keys.size() * bits >= uint64_t{opt.page_bytes} * 8) {
          auto c = close();
          if (!c) return std::move(c).error();
        }
      }
      if (!keys.empty()) max_step = std::max(max_step, static_cast<uint64_t>(k) - static_cast<uint64_t>(keys.back()));
      row_lo = std::min(row_lo, row);
      row_hi = std::max(row_hi, row);
      keys.push_back(k);
      rows.push_back(static_cast<int64_t>(row));
      ++entries;
    }
    auto c = close();
    if (!c) return std::move(c).error();
    ix.sorter.reset();
    return write_compact_root(root);
  }

  /// Posting lists (text indexes): a leaf is its trigram count, then per trigram (ascending) its
  /// 3 bytes, its row count n, its first row (varint) and, when n > 1, the n - 1 gaps to the next
  /// rows as an integer sequence (encode_ints: RLE where rows run on, FOR at the widest gap
  /// elsewhere). A leaf closes between trigrams once it holds page_bytes, or 4 × page_bytes rows
  /// (it is decoded whole: runs of rows take a few bytes). The lists come whole from
  /// posting_lists, or from the sorter when they spilled.
  result<page_ref> write_posting_index(index_state &ix, uint64_t &entries) {
    compact_root root;
    std::string leaf, first;
    uint64_t grams = 0, leaf_entries = 0;
    std::vector<int64_t> rows;
    entries = 0;
    auto close = [&]() -> result<void> {
      if (grams == 0) return {};
      std::string raw;
      put_varint(raw, grams);
      raw.append(leaf);
      auto r = put_compact_leaf(root, first, leaf_entries, raw);
      leaf.clear();
      grams = 0;
      leaf_entries = 0;
      return r;
    };
    auto add_list = [&](uint32_t g) -> result<void> {
      if (leaf.size() >= opt.page_bytes || leaf_entries >= uint64_t{4} * opt.page_bytes) {
        auto r = close();
        if (!r) return r;
      }
      if (grams == 0) {
        first.clear();
        append_trigram_key(first, g);
      }
      append_trigram_key(leaf, g);
      put_varint(leaf, rows.size());
      put_varint(leaf, static_cast<uint64_t>(rows[0]));
      if (rows.size() > 1) {  // the gaps: RLE where rows run on, FOR at the widest gap elsewhere
        for (size_t i = rows.size() - 1; i > 0; --i) rows[i] -= rows[i - 1];
        encode_ints(leaf, std::span<const int64_t>(rows).subspan(1));
      }
      ++grams;
      leaf_entries += rows.size();
      entries += rows.size();
      rows.clear();
      return {};
    };
    if (ix.postings) {
      auto d = ix.postings->drain_lists([&](uint32_t g, std::string_view deltas, uint64_t, uint64_t) -> result<void> {
        uint64_t row = 0;
        for (size_t at = 0; at < deltas.size();) {
          uint64_t delta = 0;
          for (int shift = 0;; shift += 7) {
            const auto b = static_cast<uint8_t>(deltas[at++]);
            delta |= static_cast<uint64_t>(b & 0x7F) << shift;
            if (!(b & 0x80)) break;
          }
          row += delta;
          rows.push_back(static_cast<int64_t>(row));
        }
        return add_list(g);
      });
      if (!d) return std::move(d).error();
      ix.postings.reset();
    } else {
      std::string_view key, payload;
      uint32_t gram = 0;
      while (true) {
        auto more = ix.sorter->next(key, payload);
        if (!more) return std::move(more).error();
        if (!*more) break;
        const uint32_t g = (uint32_t{static_cast<uint8_t>(key[0])} << 16) |
                           (uint32_t{static_cast<uint8_t>(key[1])} << 8) | static_cast<uint8_t>(key[2]);
        if (!rows.empty() && g != gram) {
          auto a = add_list(gram);
          if (!a) return std::move(a).error();
        }
        gram = g;
        uint64_t row = 0;
        for (size_t i = 3; i < 11; ++i) row = (row << 8) | static_cast<uint8_t>(key[i]);
        rows.push_back(static_cast<int64_t>(row));
      }
      if (!rows.empty()) {
        auto a = add_list(gram);
        if (!a) return std::move(a).error();
      }
    }
    auto c = close();
    if (!c) return std::move(c).error();
    ix.sorter.reset();
    return write_compact_root(root);
  }

  /// Leaves of (key, row) entries and a root listing each leaf's first key: shared by all kinds.
  result<page_ref> write_index(index_state &ix, uint64_t &entries) {
    merge_trigram_pairs(ix);
    std::vector<uint64_t>().swap(ix.pairs);
    std::vector<uint64_t>().swap(pair_scratch);
    if (!ix.postings) {
      auto fin = ix.sorter->finish();
      if (!fin) return std::move(fin).error();
    }
    if (ix.compact)
      return ix.def.kind == index_kind::text ? write_posting_index(ix, entries) : write_int_index(ix, entries);
    std::string root_leaves, leaf, prev_key, first_key;
    uint64_t leaf_count = 0, leaf_entries = 0;
    uint64_t prev_row = 0;
    entries = 0;
    auto close_leaf = [&]() -> result<void> {
      if (leaf_entries == 0) return {};
      std::string raw;
      put_varint(raw, leaf_entries);
      raw.append(leaf);
      auto ref = write_page(raw);
      if (!ref) return std::move(ref).error();
      put_bytes(root_leaves, first_key);
      put_varint(root_leaves, leaf_entries);
      put_ref(root_leaves, *ref);
      ++leaf_count;
      leaf.clear();
      leaf_entries = 0;
      return {};
    };
    // One entry into the leaves: its key (without the row) and its row, in key order.
    auto put_entry = [&](std::string_view k, uint64_t row) -> result<void> {
      if (leaf.size() >= opt.page_bytes && k != prev_key) {
        auto r = close_leaf();
        if (!r) return std::move(r).error();
      }
      if (leaf_entries == 0) {
        first_key.assign(k);
        prev_key.clear();
      }
      size_t shared = 0;
      bool same = leaf_entries > 0 && k == prev_key;
      if (leaf_entries > 0) {
        while (shared < k.size() && shared < prev_key.size() && k[shared] == prev_key[shared]) ++shared;
      }
      put_varint(leaf, shared);
      put_bytes(leaf, k.substr(shared));
      put_varint(leaf, same ? row - prev_row : row);
      prev_key.assign(k);
      prev_row = row;
      ++leaf_entries;
      ++entries;
      return {};
    };
    if (ix.postings) {
      // A trigram's first row goes in as any entry; its other rows share its key whole (shared 3,
      // no suffix) and a leaf closes only where the key changes, so each is the bytes 3, 0 and the
      // row's delta — the very varint its posting list holds.
      std::string gram_key;
      auto d = ix.postings->drain_lists(
          [&](uint32_t g, std::string_view deltas, uint64_t count, uint64_t last_row) -> result<void> {
            gram_key.clear();
            append_trigram_key(gram_key, g);
            size_t at = 0;
            uint64_t first = 0;
            for (int shift = 0;; shift += 7) {
              const auto b = static_cast<uint8_t>(deltas[at++]);
              first |= static_cast<uint64_t>(b & 0x7F) << shift;
              if (!(b & 0x80)) break;
            }
            auto p = put_entry(gram_key, first);
            if (!p) return p;
            while (at < deltas.size()) {
              const size_t start = at;
              while (static_cast<uint8_t>(deltas[at]) & 0x80) ++at;
              ++at;
              leaf.push_back(static_cast<char>(gram_key.size()));
              leaf.push_back(0);
              leaf.append(deltas.substr(start, at - start));
            }
            leaf_entries += count - 1;
            entries += count - 1;
            prev_row = last_row;
            return {};
          });
      if (!d) return std::move(d).error();
      ix.postings.reset();
    } else {
      std::string_view key, payload;
      while (true) {
        auto more = ix.sorter->next(key, payload);
        if (!more) return std::move(more).error();
        if (!*more) break;
        uint64_t row = 0;
        for (size_t i = key.size() - 8; i < key.size(); ++i) row = (row << 8) | static_cast<uint8_t>(key[i]);
        auto p = put_entry(key.substr(0, key.size() - 8), row);
        if (!p) return std::move(p).error();
      }
    }
    auto r = close_leaf();
    if (!r) return std::move(r).error();
    std::string root;
    put_varint(root, leaf_count);
    root.append(root_leaves);
    put_varint(root, ix.bloom_entries.size());
    for (const auto &e : ix.bloom_entries) root.append(e);
    ix.sorter.reset();
    return write_page(root);
  }

  result<uint64_t> finish() {
    if (row_sorter) {
      auto fin = row_sorter->finish();
      if (!fin) return std::move(fin).error();
      std::vector<typed> row(sch.columns.size());
      std::string_view key, payload;
      while (true) {
        auto more = row_sorter->next(key, payload);
        if (!more) return std::move(more).error();
        if (!*more) break;
        byte_reader r({reinterpret_cast<const uint8_t *>(payload.data()), payload.size()});
        for (auto &t : row) {
          uint8_t tag = r.u8();
          t = typed();
          t.null = tag == 0;
          if (tag == 1) t.i = r.svarint();
          else if (tag == 2) t.d = r.f64();
          else if (tag == 3) t.s = r.bytes();
        }
        auto a = add_row(row);
        if (!a) return std::move(a).error();
      }
      row_sorter.reset();
    }
    auto f = flush_chunk();
    if (!f) return std::move(f).error();
    if (auto h = release_header(); !h) return std::move(h).error();

    std::string footer;
    put_varint(footer, rows_out);
    put_varint(footer, opt.chunk_rows);
    std::vector<page_ref> index_roots;
    std::vector<uint64_t> index_entries;
    for (auto &ix : indexes) {
      uint64_t entries = 0;
      auto root = write_index(ix, entries);
      if (!root) return std::move(root).error();
      index_roots.push_back(*root);
      index_entries.push_back(entries);
    }
    put_varint(footer, sch.columns.size());
    for (size_t c = 0; c < sch.columns.size(); ++c) {
      std::string cd;
      put_varint(cd, chunks);
      cd.append(column_dirs[c]);
      auto ref = write_page(cd);
      if (!ref) return std::move(ref).error();
      put_bytes(footer, sch.columns[c].name);
      put_u8(footer, static_cast<uint8_t>(sch.columns[c].type));
      put_ref(footer, *ref);
    }
    put_varint(footer, static_cast<uint64_t>(sort_column + 1));
    put_varint(footer, indexes.size());
    for (size_t i = 0; i < indexes.size(); ++i) {
      put_varint(footer, indexes[i].column);
      put_u8(footer, static_cast<uint8_t>(indexes[i].def.kind));
      put_ref(footer, index_roots[i]);
      put_varint(footer, index_entries[i]);
    }
    put_bytes(footer, "quire " + std::string(quire::version().version));
    uint64_t footer_offset = offset;
    if (opt.sealer) {
      auto s = opt.sealer->seal(footer, footer_offset, 1);
      if (!s) return std::move(s).error();
    }
    auto e = emit(footer);
    if (!e) return std::move(e).error();
    std::string tail;
    put_u64(tail, footer_offset);
    put_u32(tail, static_cast<uint32_t>(footer.size()));
    put_u32(tail, crc32c(footer));
    tail.append(MAGIC, sizeof MAGIC);
    put_u16(tail, version);
    e = emit(tail);
    if (!e) return std::move(e).error();
    return offset;
  }
};

writer::writer(std::unique_ptr<impl> p) : impl_(std::move(p)) {}
writer::~writer() = default;
uint64_t writer::rows() const noexcept { return impl_->rows_in; }

bool answered_by_order(const write_options &options, const index_def &def) noexcept {
  return !options.sorted_by.empty() && def.column == options.sorted_by && def.kind != index_kind::text;
}

result<std::unique_ptr<writer>> writer::create(const format::schema &s, const write_options &o, byte_sink &sink) {
  if (s.columns.empty()) return quire::error(error_code::INVALID_ARGUMENT, "a table needs at least one column");
  if (s.columns.size() > MAX_COLUMNS)
    return quire::error(error_code::INVALID_ARGUMENT, "more than " + std::to_string(MAX_COLUMNS) + " columns");
  for (size_t i = 0; i < s.columns.size(); ++i) {
    if (s.columns[i].name.empty())
      return quire::error(error_code::INVALID_ARGUMENT, "column " + std::to_string(i + 1) + " has no name");
    if (s.find(s.columns[i].name) != i)
      return quire::error(error_code::INVALID_ARGUMENT, "column '" + s.columns[i].name + "' appears twice");
    if (!parse_type_name(type_name(s.columns[i].type)))
      return quire::error(error_code::INVALID_ARGUMENT, "column '" + s.columns[i].name + "' has an unknown type");
  }
  if (auto in_range = check_write_options(o); !in_range) return std::move(in_range).error();
  // A chunk is buffered whole before it is encoded: wide tables get fewer rows per chunk, so that
  // the buffer holds at most MAX_CHUNK_CELLS values whatever the width (300 columns: 8,192 rows).
  write_options capped = o;
  const uint64_t cell_cap = std::max<uint64_t>(1024, std::bit_floor(MAX_CHUNK_CELLS / s.columns.size()));
  if (capped.chunk_rows > cell_cap) capped.chunk_rows = static_cast<uint32_t>(cell_cap);
  auto p = std::make_unique<impl>(s, capped, sink);
  p->cctx = ZSTD_createCCtx();
  if (!p->cctx) return quire::error(error_code::OUT_OF_MEMORY, "cannot create a zstd context");
  p->buffers.resize(s.columns.size());
  p->column_dirs.resize(s.columns.size());
  size_t sorters = static_cast<size_t>(std::count_if(o.indexes.begin(), o.indexes.end(),
                                                     [&](const index_def &d) { return !answered_by_order(o, d); })) +
                   (o.sorted_by.empty() ? 0 : 1);
  size_t share = sorters ? o.sort_memory_bytes / sorters : o.sort_memory_bytes;
  if (!o.sorted_by.empty()) {
    auto c = s.find(o.sorted_by);
    if (!c) return quire::error(error_code::NO_SUCH_COLUMN, "sorted_by names no column: '" + o.sorted_by + "'");
    p->sort_column = static_cast<int>(*c);
    p->row_sorter = std::make_unique<run_sorter>(share, o.spill);
  }
  for (const auto &d : o.indexes) {
    auto c = s.find(d.column);
    if (!c) return quire::error(error_code::NO_SUCH_COLUMN, "an index names no column: '" + d.column + "'");
    column_type t = s.columns[*c].type;
    if (d.kind == index_kind::text && t != column_type::string && t != column_type::json) {
      return quire::error(error_code::INVALID_ARGUMENT, "a text index needs a string or json column; '" + d.column +
                                                            "' is " + std::string(type_name(t)));
    }
    if (!parse_index_kind(index_kind_name(d.kind)))
      return quire::error(error_code::INVALID_ARGUMENT, "unknown index kind");
    for (const auto &other : o.indexes) {
      if (&other == &d) break;
      if (other.column == d.column && other.kind == d.kind)
        return quire::error(error_code::INVALID_ARGUMENT,
                            "index " + d.column + ":" + std::string(index_kind_name(d.kind)) + " is asked twice");
    }
    if (answered_by_order(o, d)) {
      p->skipped_indexes.push_back(d);
      continue;
    }
    p->indexes.push_back(
        {d, *c, std::make_unique<run_sorter>(share, o.spill), nullptr, {}, {}, {}, compact_index(t, d.kind)});
    if (d.kind == index_kind::text) p->indexes.back().postings = std::make_unique<posting_lists>(share / 2);
  }
  // The header is written with the first chunk, when the version is known (release_header).
  p->offset = HEADER_SIZE;
  p->first_block_bytes_at.assign(s.columns.size(), 0);
  return std::unique_ptr<writer>(new writer(std::move(p)));
}

bool accepts(column_type type, const cell &c) {
  typed t;
  std::string store;
  return !convert_cell(type, c, t, store);
}

result<void> writer::append_row(std::span<const cell> row) {
  auto &w = *impl_;
  if (w.failed || w.finished) return quire::error(error_code::INVALID_ARGUMENT, "the writer has failed or finished");
  if (row.size() != w.sch.columns.size()) {
    w.failed = true;
    return quire::error(error_code::INVALID_ARGUMENT, "row " + std::to_string(w.rows_in + 1) + " has " +
                                                          std::to_string(row.size()) + " cells; the schema has " +
                                                          std::to_string(w.sch.columns.size()) + " columns");
  }
  // Reused from row to row: a row costs no allocation of its own.
  auto &typed_row = w.typed_row;
  auto &stores = w.text_stores;
  typed_row.resize(row.size());
  stores.resize(row.size());
  for (size_t c = 0; c < row.size(); ++c) {
    auto t = w.convert(c, row[c], stores[c]);
    if (!t) {
      w.failed = true;
      return std::move(t).error();
    }
    typed_row[c] = *t;
  }
  if (w.row_sorter) {
    w.key_scratch.clear();
    const typed &k = typed_row[static_cast<size_t>(w.sort_column)];
    w.key_scratch.push_back(k.null ? 1 : 0);
    if (!k.null) w.append_key(w.key_scratch, static_cast<size_t>(w.sort_column), k);
    put_be64(w.key_scratch, w.rows_in);
    w.scratch.clear();
    for (size_t c = 0; c < row.size(); ++c) {
      const typed &t = typed_row[c];
      if (t.null) {
        put_u8(w.scratch, 0);
        continue;
      }
      switch (w.sch.columns[c].type) {
        case column_type::float64:
          put_u8(w.scratch, 2);
          w.scratch.append(reinterpret_cast<const char *>(&t.d), 8);
          break;
        case column_type::string:
        case column_type::decimal:
        case column_type::json:
          put_u8(w.scratch, 3);
          put_bytes(w.scratch, t.s);
          break;
        default:
          put_u8(w.scratch, 1);
          put_svarint(w.scratch, t.i);
          break;
      }
    }
    w.row_sorter->add(w.key_scratch, w.scratch);
    ++w.rows_in;
    return {};
  }
  auto r = w.add_row(typed_row);
  if (!r) {
    w.failed = true;
    return r;
  }
  ++w.rows_in;
  return {};
}

result<uint64_t> writer::finish() {
  auto &w = *impl_;
  if (w.failed || w.finished) return quire::error(error_code::INVALID_ARGUMENT, "the writer has failed or finished");
  w.finished = true;
  return w.finish();
}

}  // namespace quire::format
