// The one JSON writer of each fixed-shape result of the format (aggregate, counters, file info,
// explain, storage, chunk statistics), the storage table `quire inspect` prints, and the names of
// the row texts. Keys are
// camelCase; the npm package parses exactly these texts, the CLI prints them.
#include <cstdio>
#include <initializer_list>

#include "format_internal.h"
#include "quire/json.h"

namespace quire::format {

using namespace detail;

namespace {

void key(std::string &o, std::string_view k, bool first = false) {
  if (!first) o.push_back(',');
  o.push_back('"');
  o.append(k);
  o += "\":";
}

void number(std::string &o, uint64_t v) { o += std::to_string(v); }

void quoted(std::string &o, std::string_view s) { json::append_quoted(o, s); }

void boolean(std::string &o, bool b) { o += b ? "true" : "false"; }

using counts = std::initializer_list<std::pair<std::string_view, uint64_t>>;

/// Members `"name":count`, each after a comma but the first when `first`.
void numbers(std::string &o, counts members, bool first = false) {
  for (const auto &[k, v] : members) {
    key(o, k, first);
    number(o, v);
    first = false;
  }
}

/// A value of a column of `type` as JSON: dates and timestamps as ISO text, decimals as strings
/// (their exact text), json as the JSON value itself, floats through the one number printer.
void typed_value(std::string &o, column_type type, const value &v) {
  switch (v.k) {
    case value::kind::null_value: o += "null"; return;
    case value::kind::boolean: boolean(o, v.b); return;
    case value::kind::real: append_double(o, v.d); return;
    case value::kind::integer:
      if (type == column_type::date) {
        o.push_back('"');
        append_date(o, v.i);
        o.push_back('"');
      } else if (type == column_type::timestamp) {
        o.push_back('"');
        append_timestamp(o, v.i);
        o.push_back('"');
      } else {
        o += std::to_string(v.i);
      }
      return;
    case value::kind::text:
      if (type == column_type::json) o += v.s;
      else quoted(o, v.s);
      return;
  }
}

void schema_json(std::string &o, const format::schema &s) {
  o.push_back('[');
  for (size_t i = 0; i < s.columns.size(); ++i) {
    if (i) o.push_back(',');
    o += "{\"name\":";
    quoted(o, s.columns[i].name);
    o += ",\"type\":\"";
    o += type_name(s.columns[i].type);
    o += "\"}";
  }
  o.push_back(']');
}

void info_members(std::string &o, const file_info &i, bool with_schema) {
  numbers(
      o,
      {{"version", i.version}, {"bytes", i.bytes}, {"rows", i.rows}, {"chunkRows", i.chunk_rows}, {"chunks", i.chunks}},
      true);
  key(o, "sortedBy");
  if (i.sorted_by.empty()) o += "null";
  else quoted(o, i.sorted_by);
  key(o, "createdBy");
  quoted(o, i.created_by);
  if (with_schema) {
    key(o, "columns");
    schema_json(o, i.schema);
  }
}

/// Version 2's members of file_info (quire/store.h): the same bytes in to_json(file_info) (npm's
/// info()) and in a version-2 file's storage report (`quire inspect --json`).
void store_members(std::string &o, const file_info &i) {
  key(o, "commit");
  number(o, i.commit);
  key(o, "sealed");
  boolean(o, i.sealed);
  key(o, "partitionBy");
  if (i.partition_by.empty()) o += "null";
  else quoted(o, i.partition_by);
  numbers(o, {{"partitions", i.partitions},
              {"partitionsRead", i.partitions_read},
              {"segments", i.segments},
              {"deletedRows", i.deleted_rows}});
  key(o, "partitionKey");
  boolean(o, i.partition_key);
}

}  // namespace

std::string_view row_text_name(row_text form) noexcept {
  switch (form) {
    case row_text::ndjson: return "ndjson";
    case row_text::json_array: return "array";
    case row_text::csv: return "csv";
    case row_text::cells: return "cells";
  }
  return "ndjson";
}

result<row_text> row_text_named(std::string_view name) {
  for (row_text form : {row_text::ndjson, row_text::json_array, row_text::csv, row_text::cells})
    if (row_text_name(form) == name) return form;
  std::string message = "no row text named '";
  message.append(name);
  message += "' (ndjson, array, csv or cells)";
  return quire::error(error_code::INVALID_ARGUMENT, std::move(message));
}

std::string to_json(const read_counters &c) {
  std::string o = "{";
  numbers(o,
          {{"bytes", c.bytes},
           {"reads", c.reads},
           {"dataPages", c.data_pages},
           {"valuePages", c.value_pages},
           {"indexPages", c.index_pages},
           {"directoryPages", c.directory_pages},
           {"cacheHits", c.cache_hits},
           {"blocks", c.blocks},
           {"chunks", c.chunks},
           {"columns", c.columns}},
          true);
  o.push_back('}');
  return o;
}

std::string to_json(const aggregate_result &a) {
  std::string o = "{";
  key(o, "column", true);
  quoted(o, a.column);
  key(o, "type");
  quoted(o, type_name(a.type));
  numbers(o, {{"rows", a.rows}, {"count", a.count}});
  const bool empty = a.count == 0;
  key(o, "sum");
  if (empty) o += "null";
  else if (a.type == column_type::decimal) quoted(o, a.exact_sum);
  else if (a.type == column_type::integer || a.type == column_type::boolean) o += a.exact_sum;
  else if (a.type == column_type::float64) append_double(o, a.sum);
  else o += "null";
  key(o, "min");
  typed_value(o, a.type, a.min);
  key(o, "max");
  typed_value(o, a.type, a.max);
  key(o, "avg");
  if (empty) o += "null";
  else if (a.type == column_type::decimal) quoted(o, a.exact_avg);
  else if (a.type == column_type::integer || a.type == column_type::boolean || a.type == column_type::float64)
    append_double(o, a.avg);
  else o += "null";
  key(o, "finite");
  boolean(o, a.finite);
  o.push_back('}');
  return o;
}

std::string to_json(const file_info &i) {
  std::string o = "{";
  info_members(o, i, true);
  key(o, "indexes");
  o.push_back('[');
  for (size_t k = 0; k < i.indexes.size(); ++k) {
    if (k) o.push_back(',');
    o += "{\"column\":";
    quoted(o, i.indexes[k].column);
    o += ",\"kind\":\"";
    o += index_kind_name(i.indexes[k].kind);
    o += "\"}";
  }
  o.push_back(']');
  // Version 2's members, on every file: a version-1 file is commit 0, not sealed.
  store_members(o, i);
  o.push_back('}');
  return o;
}

std::string to_json(const explain_report &e) {
  std::string o = "{";
  key(o, "where", true);
  if (e.where) quoted(o, *e.where);
  else o += "null";
  key(o, "index");
  if (e.index) {
    o += "{\"column\":";
    quoted(o, e.index->column);
    key(o, "kind");
    quoted(o, e.index->kind);
    key(o, "use");
    quoted(o, e.index->use);
    key(o, "candidates");
    number(o, e.index->candidates);
    o.push_back('}');
  } else {
    o += "null";
  }
  auto names = [&](const std::vector<std::string> &v) {
    o.push_back('[');
    for (size_t i = 0; i < v.size(); ++i) {
      if (i) o.push_back(',');
      quoted(o, v[i]);
    }
    o.push_back(']');
  };
  key(o, "filterColumns");
  names(e.filter_columns);
  key(o, "columns");
  names(e.columns);
  key(o, "order");
  if (e.order) {
    o += "{\"column\":";
    quoted(o, e.order->column);
    key(o, "descending");
    boolean(o, e.order->descending);
    key(o, "bySortedColumn");
    boolean(o, e.order->by_sorted_column);
    o.push_back('}');
  } else {
    o += "null";
  }
  key(o, "offset");
  number(o, e.offset);
  key(o, "limit");
  if (e.limit) number(o, *e.limit);
  else o += "null";
  key(o, "chunks");
  o.push_back('{');
  numbers(o,
          {{"total", e.chunks.total},
           {"skippedByStatistics", e.chunks.skipped_by_statistics},
           {"skippedByBloom", e.chunks.skipped_by_bloom},
           {"skippedByIndex", e.chunks.skipped_by_index},
           {"scanned", e.chunks.scanned}},
          true);
  o.push_back('}');
  key(o, "analyzed");
  boolean(o, e.analyzed);
  if (e.analyzed) {
    numbers(o, {{"rowsMatched", e.rows_matched}, {"rowsReturned", e.rows_returned}});
    key(o, "stoppedEarly");
    boolean(o, e.stopped_early);
    key(o, "read");
    o += to_json(e.read);
  }
  o.push_back('}');
  return o;
}

std::string to_json(const storage_report &s) {
  std::string o = "{";
  info_members(o, s.info, false);
  key(o, "footerBytes");
  number(o, s.footer_bytes);
  key(o, "columns");
  o.push_back('[');
  for (size_t i = 0; i < s.columns.size(); ++i) {
    const auto &c = s.columns[i];
    if (i) o.push_back(',');
    o += "{\"name\":";
    quoted(o, c.name);
    key(o, "type");
    quoted(o, type_name(c.type));
    numbers(o, {{"dataBytes", c.data_bytes},
                {"encodedBytes", c.encoded_bytes},
                {"directoryBytes", c.directory_bytes},
                {"nulls", c.nulls},
                {"pages", c.pages}});
    key(o, "encodings");
    o.push_back('{');
    for (size_t k = 0; k < c.encodings.size(); ++k) {
      if (k) o.push_back(',');
      quoted(o, c.encodings[k].first);
      o.push_back(':');
      number(o, c.encodings[k].second);
    }
    o += "}}";
  }
  o.push_back(']');
  key(o, "indexes");
  o.push_back('[');
  for (size_t i = 0; i < s.indexes.size(); ++i) {
    const auto &x = s.indexes[i];
    if (i) o.push_back(',');
    o += "{\"column\":";
    quoted(o, x.column);
    key(o, "kind");
    quoted(o, index_kind_name(x.kind));
    numbers(o, {{"entries", x.entries}, {"leaves", x.leaves}, {"bytes", x.bytes}, {"bloomBytes", x.bloom_bytes}});
    o.push_back('}');
  }
  o.push_back(']');
  if (s.info.version == 2) store_members(o, s.info);  // a table's report (versions 1, 3) stays as it was
  o.push_back('}');
  return o;
}

std::string to_json(const std::vector<chunk_statistic> &stats, column_type type) {
  std::string o = "[";
  for (size_t i = 0; i < stats.size(); ++i) {
    const auto &c = stats[i];
    if (i) o.push_back(',');
    o.push_back('{');
    numbers(o, {{"chunk", c.chunk}, {"rows", c.rows}, {"nulls", c.nulls}}, true);
    // Statistics keep decimals as their nearest doubles (typed_value prints the real).
    key(o, "min");
    typed_value(o, type, c.min);
    key(o, "max");
    typed_value(o, type, c.max);
    key(o, "bytes");
    number(o, c.bytes);
    o.push_back('}');
  }
  o.push_back(']');
  return o;
}

std::string to_text(const storage_report &s, std::string_view name, std::string_view loaded_by) {
  std::string o;
  char line[512];
  std::snprintf(
      line, sizeof line,
      "%.*s: .quire version %u, %llu bytes (loaded by %.*s), %llu rows in %llu chunks of %u, footer %llu bytes\n",
      static_cast<int>(name.size()), name.data(), s.info.version, static_cast<unsigned long long>(s.info.bytes),
      static_cast<int>(loaded_by.size()), loaded_by.data(), static_cast<unsigned long long>(s.info.rows),
      static_cast<unsigned long long>(s.info.chunks), s.info.chunk_rows,
      static_cast<unsigned long long>(s.footer_bytes));
  o += line;
  o += "sorted by: ";
  o += s.info.sorted_by.empty() ? std::string_view("(input order)") : std::string_view(s.info.sorted_by);
  o += "\ncolumns:\n";
  for (const auto &c : s.columns) {
    std::string enc = "{";
    for (size_t k = 0; k < c.encodings.size(); ++k) {
      if (k) enc.push_back(',');
      quoted(enc, c.encodings[k].first);
      enc.push_back(':');
      enc += std::to_string(c.encodings[k].second);
    }
    enc += "}";
    std::snprintf(
        line, sizeof line,
        "  %-20s %-10s data %10llu bytes (encoded %10llu), directories %7llu, pages %5llu, nulls %llu, encodings ",
        c.name.c_str(), std::string(type_name(c.type)).c_str(), static_cast<unsigned long long>(c.data_bytes),
        static_cast<unsigned long long>(c.encoded_bytes), static_cast<unsigned long long>(c.directory_bytes),
        static_cast<unsigned long long>(c.pages), static_cast<unsigned long long>(c.nulls));
    o += line;
    o += enc;
    o.push_back('\n');
  }
  o += s.indexes.empty() ? "indexes: none\n" : "indexes:\n";
  for (const auto &x : s.indexes) {
    std::snprintf(line, sizeof line,
                  "  %-20s %-7s %10llu bytes, %llu entries in %llu leaves (Bloom filters %llu bytes)\n",
                  x.column.c_str(), std::string(index_kind_name(x.kind)).c_str(),
                  static_cast<unsigned long long>(x.bytes), static_cast<unsigned long long>(x.entries),
                  static_cast<unsigned long long>(x.leaves), static_cast<unsigned long long>(x.bloom_bytes));
    o += line;
  }
  return o;
}

}  // namespace quire::format
