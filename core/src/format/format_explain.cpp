// explain: the plan of a query (which index, which chunks statistics and Bloom filters skip) and,
// analyzed, what running it read from a cold start.
#include "format_engine.h"

namespace quire::format {

using namespace detail;

namespace {

read_counters diff(const read_counters &a, const read_counters &b) {
  read_counters d;
  d.bytes = a.bytes - b.bytes;
  d.reads = a.reads - b.reads;
  d.data_pages = a.data_pages - b.data_pages;
  d.value_pages = a.value_pages - b.value_pages;
  d.index_pages = a.index_pages - b.index_pages;
  d.directory_pages = a.directory_pages - b.directory_pages;
  d.cache_hits = a.cache_hits - b.cache_hits;
  return d;
}

}  // namespace

std::string filter_to_expression(const filter &f);

result<explain_report> file::explain(const format::query &q, bool analyze) {
  auto &f = *impl_;
  engine e(f);
  auto where = compile_where(q.where, f.sch);
  if (!where) return std::move(where).error();
  auto cols = e.projection(q.columns);
  if (!cols) return std::move(cols).error();
  if (auto o = e.order_column(q); !o) return std::move(o).error();
  // An analyzed run counts what it reads from a cold start: the cache and the sets of touched
  // blocks, chunks and columns are set aside and restored afterwards.
  read_counters before = f.counters;
  auto saved_cache = std::move(f.cache);
  auto saved_raw = std::move(f.raw_cache);
  auto saved_dirs = std::move(f.column_dirs);
  auto saved_pdirs = std::move(f.page_dirs);
  auto saved_dicts = std::move(f.dicts);
  auto saved_roots = std::move(f.roots);
  auto saved_blocks = std::move(f.touched_blocks), saved_chunks = std::move(f.touched_chunks),
       saved_columns = std::move(f.touched_columns);
  f.cache.clear();
  f.raw_cache.clear();
  f.column_dirs.assign(f.sch.columns.size(), nullptr);
  f.page_dirs.clear();
  f.dicts.clear();
  f.roots.assign(f.indexes.size() * f.segments.size(), nullptr);
  f.touched_blocks.clear();
  f.touched_chunks.clear();
  f.touched_columns.clear();
  uint64_t returned = 0;
  result<void> run;
  if (analyze) {
    auto rows = e.select(q, *where);
    if (!rows) run = std::move(rows).error();
    else {
      std::string rendered;
      if (auto r = e.render(rendered, *rows, *cols, row_text::ndjson); !r) run = std::move(r).error();
      else returned = rows->size();
    }
  } else if (*where) {
    // The plan alone: which index, which chunks the statistics and Bloom filters skip.
    run = e.for_each_chunk(*where, false, [](uint64_t, const selection &) { return true; });
  }
  read_counters used = diff(f.counters, before);
  used.blocks = f.touched_blocks.size();
  used.chunks = f.touched_chunks.size();
  used.columns = f.touched_columns.size();
  f.cache = std::move(saved_cache);
  f.raw_cache = std::move(saved_raw);
  f.column_dirs = std::move(saved_dirs);
  f.page_dirs = std::move(saved_pdirs);
  f.dicts = std::move(saved_dicts);
  f.roots = std::move(saved_roots);
  f.touched_blocks.insert(saved_blocks.begin(), saved_blocks.end());
  f.touched_chunks.insert(saved_chunks.begin(), saved_chunks.end());
  f.touched_columns.insert(saved_columns.begin(), saved_columns.end());
  f.counters.blocks = f.touched_blocks.size();
  f.counters.chunks = f.touched_chunks.size();
  f.counters.columns = f.touched_columns.size();
  if (!run) return std::move(run).error();

  explain_report out;
  if (q.where) out.where = filter_to_expression(*q.where);
  if (e.info.used_index)
    out.index =
        explain_report::index_use{e.info.index_column, e.info.index_kind, e.info.index_use, e.info.index_candidates};
  std::vector<size_t> filter_cols;
  if (*where) collect_columns(**where, filter_cols);
  for (size_t c : filter_cols) out.filter_columns.push_back(f.sch.columns[c].name);
  for (size_t c : *cols) out.columns.push_back(f.sch.columns[c].name);
  if (!q.order_by.empty()) {
    out.order = explain_report::order_plan{
        q.order_by, q.descending,
        f.sorted_column >= 0 && f.sch.columns[static_cast<size_t>(f.sorted_column)].name == q.order_by};
  }
  out.offset = q.offset;
  if (q.limit != UINT64_MAX) out.limit = q.limit;
  out.chunks = {e.info.chunks_total, e.info.skipped_by_statistics, e.info.skipped_by_bloom, e.info.skipped_by_index,
                e.info.scanned};
  out.analyzed = analyze;
  if (analyze) {
    out.rows_matched = e.info.rows_matched;
    out.rows_returned = returned;
    out.stopped_early = e.info.stopped_early;
    out.read = used;
  }
  return out;
}

}  // namespace quire::format
