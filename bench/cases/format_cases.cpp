// Benchmark cases of the .quire format (issue 6, item 7), and its scaling gates.
//
// customers-200k: 200,000 customer records (quire::format::generate_customers), 8 fields, in id
// order, no index; customers-200k-indexed: the same with three indexes (id hash, name text,
// created_at sorted). The read cases take the .quire file's bytes as their input (so input_bytes is
// the file's size) and open the file inside every call: each call starts cold, with an empty page
// cache, and pays for reading the footer, the pages it needs and decoding them.
// customers-200k-decimal: the same customers with balance typed decimal (format.sum and
// format.write only): the exact decimal sum over pages of mixed fraction digits.
// wide-100k: 100,000 rows x 300 columns (bench/shapes/format_shapes.h); wide-1m (1,000,000 rows)
// runs only with --large.
// The write cases build the file from rows in memory (the C++ row API: format::cell per value), or
// from NDJSON / CSV text; their checksum is a digest of the bytes written, so native and wasm prove
// they write the same file.
#include <cstring>
#include <map>
#include <memory>
#include <string>

#include "../shapes/format_shapes.h"
#include "quire/bench.h"
#include "quire/format.h"

namespace quire::bench {
namespace {

constexpr size_t CUSTOMERS = 200000;
constexpr int64_t FIND_ID = 123456;
constexpr const char *FILTER = "country = 'NA' and age > 80";
constexpr const char *TEXT_SEARCH = "name contains 'Okafor'";
constexpr int64_t WIDE_FIND_ID = 76543;
constexpr const char *WIDE_FILTER = "c001 > 9000 and c002 = 'delta'";
constexpr const char *WIDE_SUMS[3] = {"c001", "c003", "c009"};
constexpr uint64_t WIDE_PAGE_ROWS = 10000;

// The customers, generated once per process (the write cases and every input share them).
const std::vector<format::customer> &customers() {
  static const std::vector<format::customer> all = format::generate_customers(CUSTOMERS);
  return all;
}

// Inputs are built once per shape: several cases share a file, and building the 200,000-row file
// costs a second in wasm. The most recent one of each kind is kept.
const std::string &cached(const std::string &key, std::string (*build)()) {
  static std::map<std::string, std::string> inputs;
  auto it = inputs.find(key);
  if (it == inputs.end()) it = inputs.emplace(key, build()).first;
  return it->second;
}

std::string customers_plain() {
  return cached("plain", [] { return shapes::format_customers_file(customers(), {}); });
}
std::string customers_indexed() {
  return cached("indexed", [] { return shapes::format_customers_file(customers(), shapes::customer_indexes()); });
}
// The customers with balance typed decimal, written from its doubles (as npm format.write writes a
// JavaScript number into a decimal column: 1234.5, 1234.56, 99998): pages of mixed fraction digits.
format::schema decimal_customer_schema() {
  format::schema s = format::customer_schema();
  for (auto &c : s.columns)
    if (c.name == "balance") c.type = format::column_type::decimal;
  return s;
}
// The sample customers written from C++ cells, as the write cases time it.
result<void> write_customers(const format::schema &schema, format::write_options options, format::vector_sink &sink) {
  auto w = format::writer::create(schema, std::move(options), sink);
  if (!w) return std::move(w).error();
  std::vector<format::cell> cells;
  for (const auto &c : customers()) {
    format::customer_cells(c, cells);
    if (auto a = w.value()->append_row(cells); !a) return std::move(a).error();
  }
  if (auto n = w.value()->finish(); !n) return std::move(n).error();
  return {};
}
std::string customers_decimal() {
  return cached("decimal", [] {
    format::vector_sink sink;
    if (!write_customers(decimal_customer_schema(), {}, sink)) return std::string();
    return std::string(reinterpret_cast<const char *>(sink.bytes.data()), sink.bytes.size());
  });
}
std::string customers_ndjson() { return format::customers_ndjson(customers()); }
std::string customers_csv() { return format::customers_csv(customers()); }
std::string wide_100k() {
  return cached("wide-100k", [] { return shapes::format_wide_file(100000); });
}
std::string wide_1m() { return shapes::format_wide_file(1000000); }

result<format::file> open_input(std::string_view input) {
  return format::file::open(borrow_bytes({reinterpret_cast<const uint8_t *>(input.data()), input.size()}));
}

result<format::filter> parse(const char *expression) { return format::parse_expression(expression); }

uint64_t fold_rows(const format::row_set &rows) { return mix(digest_words(rows.json), rows.count); }

format::query where_query(format::filter where) {
  format::query q;
  q.where = std::move(where);
  return q;
}

format::query page_query(uint64_t offset, uint64_t limit) {
  format::query q;
  q.offset = offset;
  q.limit = limit;
  return q;
}

result<uint64_t> query_op(std::string_view input, const format::query &q) {
  auto f = open_input(input);
  if (!f) return std::move(f).error();
  auto rows = f->query(q);
  if (!rows) return std::move(rows).error();
  return fold_rows(*rows);
}

// --- customers ---------------------------------------------------------------------------------

result<uint64_t> open_op(std::string_view input) {
  auto f = open_input(input);
  if (!f) return std::move(f).error();
  uint64_t d = mix(f->row_count(), f->chunk_count());
  return mix(d, f->schema().columns.size());
}

result<uint64_t> find_op(std::string_view input) {
  auto f = open_input(input);
  if (!f) return std::move(f).error();
  auto row = f->find("id", format::value::of(FIND_ID));
  if (!row) return std::move(row).error();
  return row->has_value() ? digest(**row) : 0;
}

result<uint64_t> filter_count_op(std::string_view input) {
  auto f = open_input(input);
  if (!f) return std::move(f).error();
  auto where = parse(FILTER);
  if (!where) return std::move(where).error();
  auto n = f->count(where_query(std::move(where).value()));
  if (!n) return std::move(n).error();
  return mix(0, *n);
}

result<uint64_t> filter_op(std::string_view input) {
  auto where = parse(FILTER);
  if (!where) return std::move(where).error();
  return query_op(input, where_query(std::move(where).value()));
}

result<uint64_t> text_search_op(std::string_view input) {
  auto where = parse(TEXT_SEARCH);
  if (!where) return std::move(where).error();
  return query_op(input, where_query(std::move(where).value()));
}

result<uint64_t> read_all_op(std::string_view input) { return query_op(input, format::query{}); }

result<uint64_t> deep_page_op(std::string_view input) { return query_op(input, page_query(150000, 10)); }

result<uint64_t> newest_op(std::string_view input) {
  format::query q = page_query(0, 50);
  q.order_by = "created_at";
  q.descending = true;
  return query_op(input, q);
}

uint64_t fold_aggregate(uint64_t d, const format::aggregate_result &a) {
  d = mix(d, a.rows);
  d = mix(d, a.count);
  return digest(format::to_json(a), d);
}

result<uint64_t> sum_op(std::string_view input) {
  auto f = open_input(input);
  if (!f) return std::move(f).error();
  auto a = f->aggregate("balance");
  if (!a) return std::move(a).error();
  return fold_aggregate(0, *a);
}

result<uint64_t> column_op(std::string_view input) {
  auto f = open_input(input);
  if (!f) return std::move(f).error();
  format::query q;
  q.columns = {"balance"};
  auto cols = f->columns(q);
  if (!cols) return std::move(cols).error();
  const auto &reals = cols->front().reals;
  return digest_words({reinterpret_cast<const char *>(reals.data()), reals.size() * sizeof(double)});
}

uint64_t fold_bytes(const format::vector_sink &sink) {
  return mix(digest_words({reinterpret_cast<const char *>(sink.bytes.data()), sink.bytes.size()}), sink.bytes.size());
}

result<uint64_t> write_rows(const std::vector<format::index_def> &indexes) {
  format::write_options options;
  options.indexes = indexes;
  format::vector_sink sink;
  if (auto r = write_customers(format::customer_schema(), std::move(options), sink); !r) return std::move(r).error();
  return fold_bytes(sink);
}

result<uint64_t> write_op(std::string_view) { return write_rows({}); }
result<uint64_t> write_decimal_op(std::string_view) {
  format::vector_sink sink;
  if (auto r = write_customers(decimal_customer_schema(), {}, sink); !r) return std::move(r).error();
  return fold_bytes(sink);
}
result<uint64_t> write_indexed_op(std::string_view) { return write_rows(shapes::customer_indexes()); }

format::input_options given_schema() {
  format::input_options in;
  in.schema = format::customer_schema();
  return in;
}

result<uint64_t> write_ndjson_op(std::string_view input) {
  format::vector_sink sink;
  auto n = format::write_ndjson(input, {}, sink, given_schema());
  if (!n) return std::move(n).error();
  return fold_bytes(sink);
}

result<uint64_t> write_csv_op(std::string_view input) {
  format::vector_sink sink;
  auto n = format::write_csv(input, {}, sink, given_schema());
  if (!n) return std::move(n).error();
  return fold_bytes(sink);
}

// --- the wide table ----------------------------------------------------------------------------

result<uint64_t> wide_find_op(std::string_view input) {
  auto f = open_input(input);
  if (!f) return std::move(f).error();
  auto row = f->find("id", format::value::of(WIDE_FIND_ID));
  if (!row) return std::move(row).error();
  return row->has_value() ? digest(**row) : 0;
}

result<uint64_t> wide_sum_op(std::string_view input) {
  auto f = open_input(input);
  if (!f) return std::move(f).error();
  uint64_t d = 0;
  for (const char *column : WIDE_SUMS) {
    auto a = f->aggregate(column);
    if (!a) return std::move(a).error();
    d = fold_aggregate(d, *a);
  }
  return d;
}

result<uint64_t> wide_filter_op(std::string_view input) {
  auto f = open_input(input);
  if (!f) return std::move(f).error();
  auto where = parse(WIDE_FILTER);
  if (!where) return std::move(where).error();
  auto n = f->count(where_query(std::move(where).value()));
  if (!n) return std::move(n).error();
  return mix(0, *n);
}

// Every row, a page of 10,000 at a time (as a viewer or an export would read it: the whole table
// as JSON text at once would be 400 MB).
result<uint64_t> wide_read_all_op(std::string_view input) {
  auto f = open_input(input);
  if (!f) return std::move(f).error();
  uint64_t d = 0;
  for (uint64_t offset = 0; offset < f->row_count(); offset += WIDE_PAGE_ROWS) {
    auto rows = f->query(page_query(offset, WIDE_PAGE_ROWS));
    if (!rows) return std::move(rows).error();
    d = mix(d, fold_rows(*rows));
  }
  return d;
}

// The wide write's input is the row count as text ("100000"): the rows are computed as they are
// appended (format_shapes.h), which costs a few nanoseconds a cell against tens to write it. Its
// input is six bytes, so it reports the file it wrote as its generated_bytes (the memory budget's
// base): the size of the last call's file.
uint64_t wide_written_bytes = 0;

result<uint64_t> wide_write_op(std::string_view input) {
  uint64_t rows = 0;
  for (char c : input) rows = rows * 10 + static_cast<uint64_t>(c - '0');
  format::vector_sink sink;
  auto n = shapes::write_wide(rows, sink);
  if (!n) return std::move(n).error();
  wide_written_bytes = sink.bytes.size();
  return fold_bytes(sink);
}

struct op_def {
  const char *name;
  result<uint64_t> (*run)(std::string_view);
};

const op_def READ_OPS[] = {
    {"format.open", open_op},
    {"format.find", find_op},
    {"format.filter-count", filter_count_op},
    {"format.filter", filter_op},
    {"format.text-search", text_search_op},
    {"format.read-all", read_all_op},
    {"format.sum", sum_op},
    {"format.column", column_op},
    {"format.deep-page", deep_page_op},
    {"format.newest-50", newest_op},
};

const op_def WIDE_OPS[] = {
    {"format.open", open_op},
    {"format.find", wide_find_op},
    {"format.sum-3", wide_sum_op},
    {"format.filter-count", wide_filter_op},
    {"format.read-all", wide_read_all_op},
};

struct register_all {
  register_all() {
    registration{{"format.write", "customers-200k", customers_ndjson, write_op, CUSTOMERS}};
    registration{{"format.write", "customers-200k-indexed", customers_ndjson, write_indexed_op, CUSTOMERS}};
    registration{{"format.write-ndjson", "customers-200k", customers_ndjson, write_ndjson_op, CUSTOMERS}};
    registration{{"format.write-csv", "customers-200k", customers_csv, write_csv_op, CUSTOMERS}};
    for (const auto &op : READ_OPS) registration{{op.name, "customers-200k", customers_plain, op.run, CUSTOMERS}};
    for (const auto &op : READ_OPS)
      registration{{op.name, "customers-200k-indexed", customers_indexed, op.run, CUSTOMERS}};
    // balance as a decimal of mixed fraction digits: its exact sum, and the write.
    registration{{"format.sum", "customers-200k-decimal", customers_decimal, sum_op, CUSTOMERS}};
    registration{{"format.write", "customers-200k-decimal", customers_ndjson, write_decimal_op, CUSTOMERS}};
    case_def wide_write{"format.write", "wide-100k", [] { return std::string("100000"); }, wide_write_op, 100000};
    wide_write.generated_bytes = [] { return wide_written_bytes; };
    registration{std::move(wide_write)};
    for (const auto &op : WIDE_OPS) registration{{op.name, "wide-100k", wide_100k, op.run, 100000}};
    case_def big_write{"format.write", "wide-1m", [] { return std::string("1000000"); }, wide_write_op, 1000000};
    big_write.large = true;
    big_write.generated_bytes = [] { return wide_written_bytes; };
    registration{std::move(big_write)};
    for (const auto &op : WIDE_OPS) {
      case_def c{op.name, "wide-1m", wide_1m, op.run, 1000000};
      c.large = true;
      registration{std::move(c)};
    }
  }
} registered;

// --- scaling gates: write, find and filter on the row count --------------------------------------

// Bases: 25,000 customers as NDJSON (4.3 MB) to write; 50,000 as a .quire file (0.8 MB) to query.
std::string gate_ndjson(uint64_t scale) { return format::customers_ndjson(format::generate_customers(25000 * scale)); }
std::string gate_file(uint64_t scale) {
  return shapes::format_customers_file(format::generate_customers(50000 * scale), {});
}

result<uint64_t> gate_find(std::string_view input) {
  auto f = open_input(input);
  if (!f) return std::move(f).error();
  // The middle row: statistics lead to one chunk, the page directory to one page per column.
  auto row = f->find("id", format::value::of(static_cast<int64_t>(f->row_count() / 2)));
  if (!row) return std::move(row).error();
  return row->has_value() ? digest(**row) : 0;
}

// Twins. A lookup's twin is a scan (linear: more than 2.5x at four times the rows): email has no
// index and statistics cannot skip a chunk for it.
result<uint64_t> gate_scan(std::string_view input) {
  auto f = open_input(input);
  if (!f) return std::move(f).error();
  auto where = parse("email = 'nobody@example.org'");
  if (!where) return std::move(where).error();
  auto n = f->count(where_query(std::move(where).value()));
  if (!n) return std::move(n).error();
  return mix(0, *n);
}

// Linear work's twin is quadratic: every 4,096-byte prefix of the file digested, n²/8192 bytes.
// (A row fetched by offset at every k-th row is not quadratic: whole chunks within an offset are
// skipped by their count.)
result<uint64_t> gate_file_prefixes_quadratic(std::string_view input) {
  uint64_t d = 0;
  for (size_t at = 4096; at <= input.size(); at += 4096) d = digest_words(input.substr(0, at), d);
  return d;
}

// For the write gate (its input is NDJSON): every 1,000th line's prefix digested, n²/2000 bytes.
result<uint64_t> gate_prefixes_quadratic(std::string_view input) {
  uint64_t d = 0;
  size_t lines = 0;
  for (size_t at = input.find('\n'); at != std::string_view::npos; at = input.find('\n', at + 1)) {
    if (++lines % 1000 == 0) d = digest_words(input.substr(0, at), d);
  }
  return d;
}

gate_registration write_gate{{"format.write/rows", gate_ndjson, write_ndjson_op, gate_prefixes_quadratic}};
gate_registration find_gate{{"format.find/rows", gate_file, gate_find, gate_scan, 0, 2.5}};
gate_registration filter_gate{{"format.filter/rows", gate_file, filter_count_op, gate_file_prefixes_quadratic}};

}  // namespace
}  // namespace quire::bench
