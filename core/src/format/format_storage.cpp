// Reports on what a file holds: per-chunk statistics of a column, the file's summary, and where
// its bytes go (columns, encodings, indexes). Of a version-4 table all from the column summaries and
// index roots; of older ones the page directories too.
#include <map>

#include "format_file.h"

namespace quire::format {

using namespace detail;

namespace {

value stat_value(column_type type, const stats &s, bool min) {
  if (!(min ? s.has_min : s.has_max)) return value::null();
  switch (type) {
    case column_type::boolean: return value::of((min ? s.imin : s.imax) != 0);
    case column_type::integer:
    case column_type::date:
    case column_type::timestamp: return value::of(min ? s.imin : s.imax);
    case column_type::float64:
    case column_type::decimal: return value::of(min ? s.rmin : s.rmax);
    default: return value::text(min ? s.tmin : s.tmax);
  }
}

}  // namespace

result<std::vector<chunk_statistic>> file::chunk_statistics(std::string_view column) {
  auto &f = *impl_;
  auto col = f.sch.find(column);
  if (!col) return quire::error(error_code::NO_SUCH_COLUMN, "no column named '" + std::string(column) + "'");
  auto cd = f.column_directory(*col);
  if (!cd) return std::move(cd).error();
  std::vector<chunk_statistic> out;
  for (size_t i = 0; i < cd.value()->size(); ++i) {
    const auto &c = (*cd.value())[i];
    const column_type type = f.sch.columns[*col].type;
    out.push_back(
        {i, c.st.rows, c.st.nulls, stat_value(type, c.st, true), stat_value(type, c.st, false), c.data_bytes});
  }
  return out;
}

file_info file::info() const {
  const auto &f = *impl_;
  file_info i;
  i.bytes = f.size;
  i.rows = f.rows - f.deleted_rows;
  i.chunk_rows = f.chunk_rows;
  i.chunks = f.chunks;
  if (f.sorted_column >= 0) i.sorted_by = f.sch.columns[static_cast<size_t>(f.sorted_column)].name;
  i.created_by = f.created_by;
  i.schema = f.sch;
  i.version = static_cast<uint16_t>(f.version);
  i.commit = f.commit;
  i.sealed = f.sealed;
  i.partition_by = f.partition_by;
  i.partitions = f.partitions;
  i.partitions_read = f.partitions_read;
  i.segments = f.segments.size();
  i.deleted_rows = f.deleted_rows;
  i.partition_key = f.partition_key;
  i.indexes = indexes();
  return i;
}

result<storage_report> file::storage() {
  auto &f = *impl_;
  storage_report out;
  out.info = info();
  for (const auto &sg : f.segments) out.footer_bytes += sg.length - sg.footer_offset;
  for (size_t c = 0; c < f.sch.columns.size(); ++c) {
    auto cd = f.column_directory(c);
    if (!cd) return std::move(cd).error();
    storage_report::column_storage cs;
    cs.name = f.sch.columns[c].name;
    cs.type = f.sch.columns[c].type;
    std::map<std::string, uint64_t> encodings;
    for (uint64_t ch = 0; ch < cd.value()->size(); ++ch) {
      const auto &entry = (*cd.value())[ch];
      cs.data_bytes += entry.data_bytes;
      cs.directory_bytes += entry.page_directory.stored_length + entry.block_bytes;
      cs.nulls += entry.st.nulls;
      if (entry.summarized) {
        // Version 4: the column summary says it all; no page directory is read (docs/format.md 1.4).
        cs.pages += entry.pages;
        cs.encoded_bytes += entry.encoded_bytes;
        for (uint32_t k = 0; k < entry.encoding_kinds; ++k)
          encodings[encoding_name(entry.encoding(k).first)] += entry.encoding(k).second;
        continue;
      }
      auto pd = f.load_page_directory(c, ch);
      if (!pd) return std::move(pd).error();
      for (const auto &pe : pd.value()->blocks[0].pages) {  // versions 1 and 3: one level
        ++cs.pages;
        cs.encoded_bytes += pe.ref.raw_length;
        ++encodings[encoding_name(pe.encoding)];
      }
      if (pd.value()->has_dictionary) cs.encoded_bytes += pd.value()->dictionary_ref.raw_length;
    }
    for (const auto &sg : f.segments) cs.directory_bytes += sg.columns[c].directory.stored_length;
    cs.encodings.assign(encodings.begin(), encodings.end());
    out.columns.push_back(std::move(cs));
  }
  for (size_t i = 0; i < f.indexes.size(); ++i) {
    storage_report::index_storage is;
    uint64_t leaves = 0, root_bytes = 0;
    for (size_t seg = 0; seg < f.segments.size(); ++seg) {
      auto root = f.load_index_root(i, seg);
      if (!root) return std::move(root).error();
      for (const auto &l : root.value()->leaves) leaves += l.ref.stored_length;
      for (const auto &b : root.value()->blooms) is.bloom_bytes += b.ref.stored_length;
      is.leaves += root.value()->leaves.size();
      root_bytes += f.segments[seg].index_roots[i].stored_length;
    }
    is.column = f.sch.columns[f.indexes[i].column].name;
    is.kind = f.indexes[i].kind;
    is.entries = f.indexes[i].entries;
    is.bytes = leaves + is.bloom_bytes + root_bytes;
    out.indexes.push_back(std::move(is));
  }
  return out;
}

}  // namespace quire::format
