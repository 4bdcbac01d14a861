// The query engine: a filter is compiled against the schema into typed predicates
// (format_predicate.h); chunks are skipped by their statistics (and Bloom filters for = and in on
// hash-indexed columns); an index turns one conjunct into candidate rows when that is cheaper than
// a scan (format_plan.cpp); then each remaining chunk is evaluated column by column, AND passing
// its selection on so later columns decode only the pages that still hold selected rows
// (format_scan.cpp). Rows are rendered only for the final selection, and only for the projected
// columns. The file's answers (format_results.cpp) and reports (format_explain.cpp) drive it.
#pragma once

#include <algorithm>
#include <optional>
#include <string>
#include <vector>

#include "format_file.h"
#include "format_predicate.h"
#include "format_selection.h"

namespace quire::format::detail {

struct plan_info {
  std::string index_column, index_kind, index_use;
  uint64_t index_candidates = 0;
  bool used_index = false;
  uint64_t chunks_total = 0, skipped_by_statistics = 0, skipped_by_bloom = 0, skipped_by_index = 0, scanned = 0;
  uint64_t rows_matched = 0;
  bool stopped_early = false;
};

/// The query engine's state for one call, over a file's impl.
struct engine {
  file::impl &f;
  plan_info info;

  explicit engine(file::impl &fi) : f(fi) { info.chunks_total = f.chunks; }

  int index_of(size_t column, index_kind kind) const {
    for (size_t i = 0; i < f.indexes.size(); ++i) {
      if (f.indexes[i].column == column && f.indexes[i].kind == kind) return static_cast<int>(i);
    }
    return -1;
  }

  // --- the plan (format_plan.cpp) ------------------------------------------------------------------

  // Chunk skipping: statistics first, then Bloom filters for = / in on hash-indexed columns.
  result<tri> on_chunk(const pred &p, uint64_t chunk, bool &by_bloom);

  /// Rows of index `ix` whose key is in [lo, hi] (an absent bound is open). `estimate_only` reads
  /// only the root and returns the entries of the leaves the range spans.
  /// `compact_key`, when given, is the one key looked up instead in segments whose index has compact
  /// leaves (a hash index's integer key, where lo = hi is its hash elsewhere).
  result<std::vector<uint64_t>> index_range(size_t ix, const std::optional<std::string> &lo,
                                            const std::optional<std::string> &hi, bool estimate_only,
                                            uint64_t &estimate, const std::string *compact_key = nullptr);

  /// Candidate rows for one conjunct from an index, or nullopt when no index serves it cheaply.
  result<std::optional<std::vector<uint64_t>>> candidates(const pred &p);

  /// Candidate rows from the best index for a top-level conjunct, or nullopt (scan).
  result<std::optional<std::vector<uint64_t>>> plan_index(const pred &p);

  // --- the scan (format_scan.cpp; for_each_chunk is a template, so it is here) ---------------------

  // Evaluation of a predicate over one chunk, for the rows `sel` selects; returns a subset of it
  // (a list when few rows are left, whatever the input's form).
  result<selection> eval(const pred &p, uint64_t chunk, const selection &sel);

  /// Calls fn(chunk, selection) for each chunk that may hold matching rows, in file order or
  /// reversed; fn returns false to stop. With no filter every row is selected and nothing is read.
  template <typename Fn>
  result<void> for_each_chunk(const std::optional<pred> &where, bool reverse, Fn fn) {
    std::optional<std::vector<uint64_t>> cand;
    if (where) {
      auto c = plan_index(*where);
      if (!c) return std::move(c).error();
      cand = std::move(c).value();
    }
    for (uint64_t n = 0; n < f.chunks; ++n) {
      uint64_t chunk = reverse ? f.chunks - 1 - n : n;
      const uint32_t rows = f.rows_in_chunk(chunk);
      // Deleted rows are never selected (a version-2 file's deletion vectors).
      const uint8_t *deleted = f.deleted_in_chunk(chunk);
      selection sel;
      if (cand) {
        // An index's candidates stay a list: a find selects one row, no chunk-wide mask.
        uint64_t first = f.chunk_first_row(chunk), end = first + rows;
        auto lo = std::lower_bound(cand->begin(), cand->end(), first);
        auto hi = std::lower_bound(lo, cand->end(), end);
        if (lo == hi) {
          ++info.skipped_by_index;
          continue;
        }
        std::vector<uint32_t> list;
        list.reserve(static_cast<size_t>(hi - lo));
        for (auto it = lo; it != hi; ++it) list.push_back(static_cast<uint32_t>(*it - first));
        sel = selection::of_list(rows, std::move(list));
        sel.drop(deleted);
      }
      if (where) {
        bool by_bloom = false;
        if (!cand) {
          auto t = on_chunk(*where, chunk, by_bloom);
          if (!t) return std::move(t).error();
          if (*t == tri::none) {
            if (by_bloom) ++info.skipped_by_bloom;
            else ++info.skipped_by_statistics;
            continue;
          }
          sel = selection::every(rows);
          sel.drop(deleted);
          if (*t == tri::all) {
            ++info.scanned;
            info.rows_matched += sel.count();
            if (!fn(chunk, sel)) {
              info.stopped_early = true;
              return {};
            }
            continue;
          }
        }
        ++info.scanned;
        auto out = eval(*where, chunk, sel);
        if (!out) return std::move(out).error();
        info.rows_matched += out->count();
        if (!fn(chunk, *out)) {
          info.stopped_early = true;
          return {};
        }
      } else {
        sel = selection::every(rows);
        sel.drop(deleted);
        ++info.scanned;
        info.rows_matched += sel.count();
        if (!fn(chunk, sel)) {
          info.stopped_early = true;
          return {};
        }
      }
    }
    return {};
  }

  // --- values out ----------------------------------------------------------------------------------

  /// Walks the pages of one column for ascending rows of one chunk.
  struct cursor {
    engine &e;
    size_t column;
    uint64_t chunk;
    std::shared_ptr<const page_directory> dir;
    size_t page_index = SIZE_MAX;
    page_view view;
    /// Set: each seek reads only its row's value (file::impl::row_view) into this, for a render of
    /// one row (a find), where decoding its pages whole would be wasted.
    std::shared_ptr<column_values> one_row;

    result<void> seek(uint32_t row);

    uint32_t local(uint32_t row) const { return row - view.first_row; }
    /// Seeks to each row i of the chunk that `selected` marks, in order, and calls fn(i). Returns
    /// false at the first seek that fails, its error in `failure`.
    template <typename Fn>
    bool each_selected(const selection &selected, quire::error &failure, Fn fn) {
      return selected.each([&](uint32_t i) {
        auto s = seek(i);
        if (!s) {
          failure = std::move(s).error();
          return false;
        }
        fn(i);
        return true;
      });
    }
  };

  void append_json(std::string &out, size_t column, const page_view &v, uint32_t i);
  /// A value that is not null as a person reads it (the text of a CSV field and of a cell):
  /// strings their text, dates and timestamps ISO text, the rest its JSON text. `field` is scratch.
  std::string_view display_text(std::string &field, size_t column, const page_view &v, uint32_t i);

  /// Appends rows (global row numbers, in output order) of `cols` to `out`: as JSON objects, NDJSON
  /// (each object ends in \n) or the members of an array; as CSV records (the caller writes the
  /// header and, for an array, the brackets); or as arrays of the cells' display texts. Row by row, one cursor per
  /// column: each cursor holds its decoded page (shared with the cache), so a row of 300 columns
  /// decodes nothing when its neighbour was in the same pages, however small the cache.
  result<void> render(std::string &out, const std::vector<uint64_t> &rows, const std::vector<size_t> &cols,
                      row_text form);

  /// Appends an order key of a value: 0x00 + the domain key, or 0x01 for null (nulls last).
  void append_order_key(std::string &out, size_t column, const page_view &v, uint32_t i);
  result<std::vector<size_t>> projection(const std::vector<std::string> &names);
  /// The column a query orders by (nullopt: file order); NO_SUCH_COLUMN when it names none. Every
  /// call that takes a query (query, count, aggregate, columns, explain) refuses the same orders.
  result<std::optional<size_t>> order_column(const query &q) const;

  /// The rows a query returns, in order (global row numbers).
  result<std::vector<uint64_t>> select(const query &q, const std::optional<pred> &where);
};

}  // namespace quire::format::detail
