// quire/format.h — the .quire file format, version 1: write tables of records into an indexed,
// column-compressed file, open it from any byte source reading only its footer, and query it.
//
//   quire::format::vector_sink out;
//   auto w = quire::format::writer::create(schema, options, out);      // or write_ndjson / write_csv
//   w.value()->append_row(cells); ...; w.value()->finish();
//
//   auto f = quire::format::file::open(quire::borrow_bytes(out.bytes));  // reads the footer only
//   auto rows = f->query({.where = quire::format::parse_expression("age > 80").value()});
//
// docs/format.md describes the byte layout precisely enough for a second implementation, the
// encodings, the indexes, the expression grammar and every limit.
//
// IMPORTANT: lifetime. A file keeps the byte source it was opened from (owned, or borrowed when
// opened with a reference: the source must then outlive the file). Everything a file returns is
// an owned copy (strings, vectors): nothing points into the file or its cache. A file is not safe
// to use from two threads at once (its page cache and counters change on every read). There is no
// global state: files and writers are independent objects, usable in a loop.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "quire/csv.h"
#include "quire/json.h"
#include "quire/platform.h"
#include "quire/result.h"

namespace quire::format {

/// The newest table version this build writes and reads: 3 when a file holds an index with
/// compact leaves, else 1 (docs/format.md 1.7; version 2 is the growing store, quire/store.h).
inline constexpr uint16_t FORMAT_VERSION = 3;

// --- limits and defaults ------------------------------------------------------------------------

/// Rows per chunk (write_options::chunk_rows). Chunks are the unit of statistics and skipping.
inline constexpr uint32_t DEFAULT_CHUNK_ROWS = 65536;
/// Largest chunk_rows a writer accepts and a reader believes (2^24).
inline constexpr uint32_t MAX_CHUNK_ROWS = uint32_t{1} << 24;
/// Most values (rows x columns) in one chunk: the writer buffers a chunk whole, so for wide tables
/// it lowers chunk_rows to the largest power of two (at least 1,024) that keeps a chunk under this.
inline constexpr uint64_t MAX_CHUNK_CELLS = uint64_t{1} << 22;
/// Target size of one data page before compression (write_options::page_bytes).
inline constexpr uint32_t DEFAULT_PAGE_BYTES = 8192;
/// zstd level of write_options::compression_level.
inline constexpr int DEFAULT_COMPRESSION_LEVEL = 3;
/// Memory the writer may hold for sorting (sorted_by and the indexes) before it compresses a
/// sorted run and starts the next (write_options::sort_memory_bytes).
inline constexpr size_t DEFAULT_SORT_MEMORY_BYTES = size_t{64} << 20;
/// Largest footer a reader reads (open_options::max_footer_bytes). CORRUPT_FILE beyond.
inline constexpr uint32_t DEFAULT_MAX_FOOTER_BYTES = uint32_t{64} << 20;
/// Largest page, once decompressed, a reader accepts (open_options::max_page_bytes). A page that
/// declares more, or decompresses to more, is CORRUPT_BLOCK: a decompression bomb costs nothing.
inline constexpr uint32_t DEFAULT_MAX_PAGE_BYTES = uint32_t{64} << 20;
/// Decoded pages a file keeps in its cache (open_options::cache_pages).
inline constexpr size_t DEFAULT_CACHE_PAGES = 64;
/// Most columns in a schema.
inline constexpr size_t MAX_COLUMNS = 4096;
/// Deepest nesting of a filter expression (parse_expression, parse_filter_json).
inline constexpr size_t DEFAULT_MAX_EXPRESSION_DEPTH = 64;
/// Longest NDJSON line write_ndjson reads (input_options::max_line_bytes; in the streamed path it
/// also bounds a CSV record). LINE_TOO_LONG beyond. The same as ndjson::DEFAULT_MAX_LINE_BYTES:
/// every NDJSON reader in core refuses the same lines.
inline constexpr size_t DEFAULT_MAX_LINE_BYTES = size_t{16} << 20;
/// Rows a text_writer reads to infer a schema before it writes (input_options::infer_rows).
inline constexpr size_t DEFAULT_INFER_ROWS = 10000;
/// Bytes of input a text_writer holds at most while it infers (input_options::infer_bytes).
inline constexpr size_t DEFAULT_INFER_BYTES = size_t{64} << 20;

// --- schema -------------------------------------------------------------------------------------

/// The type of a column. Every column accepts nulls.
enum class column_type : uint8_t {
  integer = 1,    ///< signed 64-bit integer
  float64 = 2,    ///< IEEE double
  decimal = 3,    ///< a decimal number kept as its exact text (`0.700`, 30 digits); compared as a double
  string = 4,     ///< UTF-8 text
  boolean = 5,    ///< true or false
  date = 6,       ///< a calendar date, `YYYY-MM-DD`; stored as days since 1970-01-01
  timestamp = 7,  ///< an instant, ISO 8601; stored as microseconds since 1970-01-01T00:00:00Z
  json = 8,       ///< a nested JSON value (object or array) kept as compact text
};

/// "integer", "float", "decimal", "string", "boolean", "date", "timestamp", "json".
std::string_view type_name(column_type type) noexcept;
/// The type named by `name` (as type_name() spells it), or nullopt.
std::optional<column_type> parse_type_name(std::string_view name) noexcept;

struct column_def {
  std::string name;
  column_type type = column_type::string;
};

struct schema {
  std::vector<column_def> columns;
  /// The position of the column named `name`, or nullopt.
  std::optional<size_t> find(std::string_view name) const noexcept;
};

/// The kinds of index a column may have (several per column).
enum class index_kind : uint8_t {
  sorted = 1,  ///< keys in order: =, in, <, <=, >, >=, between
  hash = 2,    ///< hashes of keys in order, plus a Bloom filter per chunk: = and in
  text = 3,    ///< trigrams of the text: contains and startsWith (patterns of 3 bytes or more)
};
/// "sorted", "hash", "text".
std::string_view index_kind_name(index_kind kind) noexcept;
std::optional<index_kind> parse_index_kind(std::string_view name) noexcept;

struct index_def {
  std::string column;
  index_kind kind = index_kind::sorted;
};

// --- writing ------------------------------------------------------------------------------------

/// One value handed to the writer. Text is borrowed for the duration of append_row() only.
/// What each column type accepts: integer ← integer (and a real with no fraction); float ←
/// integer, real; decimal ← text (a JSON number's text), integer, real; string ← text; boolean ←
/// boolean; date ← text `YYYY-MM-DD`, integer (days); timestamp ← ISO 8601 text, integer
/// (microseconds); json ← text (validated as JSON). Anything else is SCHEMA_MISMATCH.
struct cell {
  enum class kind : uint8_t { null_value, integer, real, boolean, text };
  kind k = kind::null_value;
  int64_t i = 0;
  double d = 0;
  bool b = false;
  std::string_view s;

  static cell null() { return {}; }
  static cell of(int64_t v) {
    cell c;
    c.k = kind::integer;
    c.i = v;
    return c;
  }
  static cell of(double v) {
    cell c;
    c.k = kind::real;
    c.d = v;
    return c;
  }
  static cell of(bool v) {
    cell c;
    c.k = kind::boolean;
    c.b = v;
    return c;
  }
  static cell text(std::string_view v) {
    cell c;
    c.k = kind::text;
    c.s = v;
    return c;
  }
};

/// Whether a writer takes `c` in a column of `type` (append_row fails on a row with a cell it
/// does not: text that is not a number for a decimal, not YYYY-MM-DD for a date, ...).
bool accepts(column_type type, const cell &c);

/// Where a writer keeps its sort runs once they pass sort_memory_bytes (write_options::spill).
/// Core does no I/O: natively quire::native::spill_file (native/include/quire/spill_file.h) is a
/// temporary file; with no store the runs stay in memory, compressed. A store is append-only and
/// serves one writer at a time (all of that writer's sorters share it); it must outlive the writer.
class spill_store {
 public:
  virtual ~spill_store() = default;
  /// Appends bytes after everything appended before; returns the offset where they begin.
  /// IO_ERROR when they cannot be kept (the writer then fails with that error).
  virtual result<uint64_t> append(std::span<const uint8_t> bytes) = 0;
  /// Copies [offset, offset + out.size()) of what was appended into out. IO_ERROR when it cannot.
  virtual result<void> read(uint64_t offset, std::span<uint8_t> out) = 0;
};

/// Seals what a writer stores: each page (kind 0) and the footer (kind 1) once compressed, given
/// its offset from the start of the table's bytes. A sealed .quire file (quire/store.h) sets one
/// for each segment it writes; a plain table has none.
class page_sealer {
 public:
  virtual ~page_sealer() = default;
  /// Replaces `stored` by its sealed form (TAG_BYTES longer).
  virtual result<void> seal(std::string &stored, uint64_t offset, uint8_t kind) const = 0;
};

struct write_options {
  uint32_t chunk_rows = DEFAULT_CHUNK_ROWS;           ///< rows per chunk, 1..MAX_CHUNK_ROWS
  uint32_t page_bytes = DEFAULT_PAGE_BYTES;           ///< target page size before compression, 512..16 MiB
  int compression_level = DEFAULT_COMPRESSION_LEVEL;  ///< zstd level 1..19
  std::string sorted_by;           ///< a column to sort the rows by (stable; nulls last); "" keeps input order
  std::vector<index_def> indexes;  ///< indexes to build
  size_t sort_memory_bytes = DEFAULT_SORT_MEMORY_BYTES;  ///< see DEFAULT_SORT_MEMORY_BYTES; at least 1 MiB is used
  spill_store *spill = nullptr;                          ///< where sort runs go (borrowed); null: memory, compressed
  std::shared_ptr<const page_sealer> sealer;             ///< seals pages and footer (quire/store.h); null: plain
};

/// Where a writer's bytes go, in order. Implementations return IO_ERROR when they cannot write.
class byte_sink {
 public:
  virtual ~byte_sink() = default;
  virtual result<void> write(std::span<const uint8_t> bytes) = 0;
};

/// A sink that appends to a vector in memory.
class vector_sink final : public byte_sink {
 public:
  std::vector<uint8_t> bytes;
  /// Appends; OUT_OF_MEMORY (bytes unchanged) when the vector cannot grow (a wasm heap that is full).
  result<void> write(std::span<const uint8_t> b) override;
};

/// Writes a table: rows go in one at a time; each full chunk is encoded, compressed and written
/// at once, so memory holds one chunk (plus the sort runs of sorted_by and the indexes, bounded
/// by sort_memory_bytes and then kept compressed). Nothing is valid until finish() returns.
class writer {
 public:
  /// Errors: INVALID_ARGUMENT (no columns, more than MAX_COLUMNS, an empty or repeated column
  /// name, options out of range, an index kind the column's type cannot have: text needs
  /// string, json or decimal...), NO_SUCH_COLUMN (sorted_by or an index names no column).
  static result<std::unique_ptr<writer>> create(const format::schema &schema, const write_options &options,
                                                byte_sink &sink);
  ~writer();
  writer(const writer &) = delete;
  writer &operator=(const writer &) = delete;

  /// Appends one row (one cell per column, in schema order). Errors: INVALID_ARGUMENT (wrong
  /// number of cells), SCHEMA_MISMATCH (a value the column cannot hold; path = column name,
  /// message names the row), IO_ERROR from the sink. After an error the writer is unusable.
  result<void> append_row(std::span<const cell> row);
  /// Writes what is left, the indexes and the footer. Returns the number of bytes written.
  result<uint64_t> finish();
  uint64_t rows() const noexcept;

 private:
  struct impl;
  explicit writer(std::unique_ptr<impl> p);
  std::unique_ptr<impl> impl_;
};

/// True when an index `def` would answer nothing the file's order does not: a sorted or hash index
/// on the `sorted_by` column (`=`, `in` and ranges on that column find their chunks and pages by
/// min/max statistics, in fewer reads than through an index). Writers leave such an index out
/// (a text index on it is written); the CLI says so.
bool answered_by_order(const write_options &options, const index_def &def) noexcept;

/// How write_ndjson and write_csv read their input.
struct input_options {
  std::optional<format::schema> schema;  ///< given: values are checked against it; absent: inferred
  csv::options csv;                      ///< CSV dialect and limits
  json::limits json;                     ///< limits of each NDJSON line
  size_t max_line_bytes = DEFAULT_MAX_LINE_BYTES;
  /// text_writer without a schema: rows read to infer it before any is written (at least 1).
  size_t infer_rows = DEFAULT_INFER_ROWS;
  /// text_writer without a schema: inference also stops at the first row ending past this many
  /// bytes of input (it always reads one row), so the rows it holds meanwhile stay bounded.
  size_t infer_bytes = DEFAULT_INFER_BYTES;
};

/// Infers a schema from NDJSON (one JSON object per line; blank lines skipped). Columns appear in
/// the order their keys are first seen. Types: integers → integer; numbers with a fraction or
/// exponent → float, or decimal when the text would not survive a double (`0.700`, more than 15
/// significant digits, an integer beyond 64 bits); true/false → boolean; `YYYY-MM-DD` strings →
/// date; ISO 8601 date-time strings → timestamp; other strings → string; objects and arrays →
/// json; null → (any). Mixing: integer+float → float; integer|float+decimal → decimal;
/// date+timestamp → timestamp; date|timestamp+string → string; any other mix is SCHEMA_MISMATCH
/// (line and column name). A column with only nulls is string. Errors of the JSON layer keep
/// their code with the line; a line that is not an object is WRONG_TYPE.
result<format::schema> infer_ndjson_schema(std::string_view ndjson, const input_options &options = {});
/// Infers a schema from CSV with a header row. An empty field is null. Each field is tried as
/// integer, float/decimal (as in NDJSON), boolean (`true`/`false`), date, timestamp, else string;
/// in CSV every mix that is not listed above becomes string (all CSV fields are text).
/// Errors: INVALID_CSV (ragged rows, bad quotes: line and column), EMPTY_INPUT (no header).
result<format::schema> infer_csv_schema(std::string_view csv_text, const input_options &options = {});

/// Writes NDJSON as a table (schema given or inferred, which reads the input twice). Keys not in a
/// given schema are SCHEMA_MISMATCH. Returns the number of rows.
result<uint64_t> write_ndjson(std::string_view ndjson, const write_options &options, byte_sink &sink,
                              const input_options &input = {});
/// Writes CSV (header row first) as a table. Returns the number of rows.
result<uint64_t> write_csv(std::string_view csv_text, const write_options &options, byte_sink &sink,
                           const input_options &input = {});

// --- columns in bulk (format_columns.cpp) ----------------------------------------------------------

/// What row r of a column_input holds: each kind is the JSON value an NDJSON line would hold for
/// the key, so write_columns reads it exactly as write_ndjson reads that value.
enum class value_kind : uint8_t {
  absent = 0,         ///< no key (a row object without it): null, and no SCHEMA_MISMATCH for an unknown column
  null_value = 1,     ///< null
  boolean_false = 2,  ///< false
  boolean_true = 3,   ///< true
  integer = 4,        ///< ints[r], a JSON number written in its digits
  real = 5,  ///< reals[r], a JSON number written as append_double writes it (as JavaScript prints it); not finite: null
  number_text = 6,  ///< a JSON number's text (text[offsets[r], offsets[r+1])): a BigInt's digits, `12.50`
  text = 7,         ///< a string's UTF-8 (text[offsets[r], offsets[r+1]))
  json_text = 8,    ///< a JSON object or array's text (text[offsets[r], offsets[r+1]))
};

/// One column of a table handed over whole, borrowed for the call: a kind per row, and the spans
/// those kinds read (an unused span may be empty). Text of every text-like kind lies in one buffer.
struct column_input {
  std::string_view name;
  std::span<const uint8_t> kinds;          ///< one value_kind per row
  std::span<const int64_t> ints;           ///< one per row when a kind is integer
  std::span<const double> reals;           ///< one per row when a kind is real
  std::string_view text;                   ///< the text values one after another
  std::span<const uint32_t> text_offsets;  ///< rows + 1 when a kind is text-like: row r is [offsets[r], offsets[r+1])
};

/// The schema infer_ndjson_schema gives for NDJSON whose line r holds each column's row r (keys
/// in the columns' order; absent kinds have no key): the same types, the same mixing rules, the
/// same SCHEMA_MISMATCH (line = the row, 1-based; path = the column; the first row that fails).
/// Errors: INVALID_ARGUMENT (a span shorter than its kinds need, offsets out of order or past the
/// text, an unknown kind, a repeated or empty name, more than MAX_COLUMNS), EMPTY_INPUT (no column).
result<format::schema> infer_columns_schema(std::span<const column_input> columns, uint64_t rows);
/// Writes `rows` rows given as columns: the same file write_ndjson writes from the NDJSON those
/// columns stand for (infer_columns_schema), byte for byte, schema given (input.schema) or
/// inferred. A column not in a given schema is SCHEMA_MISMATCH at its first row that has it; a
/// schema column with no values is null throughout. Errors: those of infer_columns_schema and of
/// writer::create / append_row (SCHEMA_MISMATCH with line = the row, path = the column).
result<uint64_t> write_columns(std::span<const column_input> columns, uint64_t rows, const write_options &options,
                               byte_sink &sink, const input_options &input = {});

/// The text formats a text_writer reads.
enum class text_format : uint8_t {
  ndjson = 1,  ///< one JSON object a line, as write_ndjson
  csv = 2,     ///< a header row, then records, as write_csv
};

/// Writes NDJSON or CSV as a table from input that arrives in pieces of any size (split anywhere:
/// inside a UTF-8 sequence, a CSV quoted field, a CRLF). Memory holds one incomplete line or record
/// (at most max_line_bytes; in CSV a record may span lines inside quotes) plus the writer's chunk —
/// and, while a schema is inferred, the rows read so far (infer_rows, infer_bytes). Offsets and
/// line numbers in errors count from the start of the whole input.
///
/// Schema: input_options::schema when given; else inferred from the first infer_rows rows (or the
/// rows within infer_bytes), which are held, then written. A later value the inferred schema cannot
/// hold (a string in an integer column, a key not seen in those rows) is SCHEMA_MISMATCH with its
/// line and column; a given schema avoids that. The same input and schema give the same bytes as
/// write_ndjson / write_csv, however the input is cut into pieces.
class text_writer {
 public:
  /// Errors: INVALID_ARGUMENT (an unknown format); for NDJSON with a given schema, those of
  /// writer::create. Otherwise writer::create's errors come from the feed() or finish() that ends
  /// inference (or, for CSV, reads the header). `sink` must outlive the text_writer.
  static result<std::unique_ptr<text_writer>> create(text_format format, const write_options &options, byte_sink &sink,
                                                     const input_options &input = {});
  ~text_writer();
  text_writer(const text_writer &) = delete;
  text_writer &operator=(const text_writer &) = delete;

  /// Reads a piece of the input (copied as needed: it need not outlive the call). Errors: those
  /// of write_ndjson / write_csv, LINE_TOO_LONG (a line or record longer than max_line_bytes),
  /// IO_ERROR from the sink. After an error the text_writer is unusable (INVALID_ARGUMENT).
  result<void> feed(std::string_view piece);
  /// Reads what is left (a last line without a line end), writes the file's end. Returns the
  /// number of rows. EMPTY_INPUT as write_ndjson / write_csv (no object with a key, no header).
  result<uint64_t> finish();
  /// Rows written so far (rows held for inference are not counted until they are written).
  uint64_t rows() const noexcept;

 private:
  friend class schema_inferrer;
  struct impl;
  explicit text_writer(std::unique_ptr<impl> p);
  std::unique_ptr<impl> impl_;
};

/// Infers the schema of NDJSON or CSV arriving in pieces of any size, from every row, exactly as
/// infer_ndjson_schema / infer_csv_schema do over the whole text, holding one incomplete line or
/// record at a time. With a seekable input (a file), inferring first and then writing with a
/// text_writer given that schema gives write_ndjson's / write_csv's bytes in bounded memory.
class schema_inferrer {
 public:
  /// Errors: INVALID_ARGUMENT (an unknown format).
  static result<std::unique_ptr<schema_inferrer>> create(text_format format, const input_options &input = {});
  ~schema_inferrer();
  schema_inferrer(const schema_inferrer &) = delete;
  schema_inferrer &operator=(const schema_inferrer &) = delete;
  /// Reads a piece. Errors: those of infer_ndjson_schema / infer_csv_schema, LINE_TOO_LONG. After
  /// an error the inferrer is unusable (INVALID_ARGUMENT).
  result<void> feed(std::string_view piece);
  /// The schema. EMPTY_INPUT as infer_ndjson_schema / infer_csv_schema.
  result<format::schema> finish();

 private:
  explicit schema_inferrer(std::unique_ptr<text_writer> reader);
  std::unique_ptr<text_writer> reader_;
};

// --- values and filters -------------------------------------------------------------------------

/// A value in a filter or a lookup (owned).
struct value {
  enum class kind : uint8_t { null_value, integer, real, boolean, text };
  kind k = kind::null_value;
  int64_t i = 0;
  double d = 0;
  bool b = false;
  std::string s;

  static value null() { return {}; }
  static value of(int64_t v) {
    value x;
    x.k = kind::integer;
    x.i = v;
    return x;
  }
  static value of(double v) {
    value x;
    x.k = kind::real;
    x.d = v;
    return x;
  }
  static value of(bool v) {
    value x;
    x.k = kind::boolean;
    x.b = v;
    return x;
  }
  static value text(std::string v) {
    value x;
    x.k = kind::text;
    x.s = std::move(v);
    return x;
  }
};

/// A filter: a comparison of a column with values, or and/or/not of filters. Comparisons are
/// false on null (also `!=`); `not` negates the result (two-valued: `not age > 80` keeps rows
/// whose age is null). Dates and timestamps compare with ISO 8601 text.
struct filter {
  enum class op : uint8_t {
    eq,
    ne,
    lt,
    le,
    gt,
    ge,       ///< column OP values[0]
    in,       ///< column in values
    between,  ///< values[0] <= column <= values[1]
    is_null,
    is_not_null,
    contains,
    starts_with,  ///< text columns; values[0] is the text (case-sensitive, bytes)
    and_,
    or_,
    not_,  ///< children
  };
  op o = op::and_;
  std::string column;
  std::vector<value> values;
  std::vector<filter> children;
};

/// Parses the expression syntax of `quire query --where` (grammar in docs/format.md):
///   country = 'NA' and age > 80          name contains 'Okafor'       not (a is null or b != 2)
///   age between 18 and 65                id in (1, 2, 3)              email startsWith 'ana.'
/// Errors: INVALID_QUERY with the byte offset; MAX_DEPTH_EXCEEDED past max_depth.
result<filter> parse_expression(std::string_view text, size_t max_depth = DEFAULT_MAX_EXPRESSION_DEPTH);

/// Parses a filter written as JSON (the npm package's object form):
///   {"country": "NA", "age": {">": 80}}   {"or": [{...}, {...}]}   {"not": {...}}   {"name": {"contains": "Ok"}}
/// Operators: = != < <= > >= in between contains startsWith isNull. A bare value means `=`; null
/// means `is null`. Several keys mean `and`. Errors: INVALID_QUERY, MAX_DEPTH_EXCEEDED.
result<filter> parse_filter_json(std::string_view json_text, size_t max_depth = DEFAULT_MAX_EXPRESSION_DEPTH);

/// What to read.
struct query {
  std::optional<filter> where;       ///< absent: every row
  std::vector<std::string> columns;  ///< projection; empty: every column, in schema order
  std::string order_by;              ///< "" keeps file order; else a column (cheap when it is the sorted_by column)
  bool descending = false;           ///< newest N: order_by a timestamp, descending, with a limit
  uint64_t offset = 0;
  uint64_t limit = UINT64_MAX;
};

/// The query of every row a filter matches (every row when absent), for count, aggregate, columns.
inline query rows_where(std::optional<filter> where) {
  query q;
  q.where = std::move(where);
  return q;
}

/// Parses a query written as JSON: {"where": EXPR-string or filter object, "columns": [...],
/// "orderBy": "col", "descending": true, "offset": N, "limit": N}. Errors: INVALID_QUERY.
result<query> parse_query_json(std::string_view json_text);

// --- reading ------------------------------------------------------------------------------------

struct open_options {
  uint32_t max_footer_bytes = DEFAULT_MAX_FOOTER_BYTES;
  uint32_t max_page_bytes = DEFAULT_MAX_PAGE_BYTES;
  size_t cache_pages = DEFAULT_CACHE_PAGES;
  /// Fuzzing only: false skips the CRC checks so that damaged bytes reach the decoders (a hostile
  /// file can carry valid checksums, so the decoders must stand on their own).
  bool verify_checksums = true;
  /// A sealed (version-2) file's key: a key file's 32 bytes, the owner's or one partition's (which
  /// reads that partition only), or the owner's passphrase. Plain files ignore both.
  std::string key;
  std::string passphrase;
};

/// What a file has read from its source (since it was opened, or during one analyzed explain).
struct read_counters {
  uint64_t bytes = 0;            ///< bytes fetched from the source (or touched in place)
  uint64_t reads = 0;            ///< fetches (one per page, directory or footer)
  uint64_t data_pages = 0;       ///< data and dictionary pages decoded
  uint64_t value_pages = 0;      ///< data and dictionary pages read for one row's value, not decoded whole
  uint64_t index_pages = 0;      ///< index roots, leaves and Bloom filters read
  uint64_t directory_pages = 0;  ///< column statistics and page directories read
  uint64_t cache_hits = 0;       ///< pages found decoded in the cache
  uint64_t blocks = 0;           ///< distinct column chunks (blocks) whose pages were decoded
  uint64_t chunks = 0;           ///< distinct chunks any of whose pages were decoded
  uint64_t columns = 0;          ///< distinct columns any of whose pages or statistics were read
};

/// Most digits (integer digits plus fraction digits) of an exact decimal result: a decimal
/// aggregate whose values need more is NUMERIC_OVERFLOW, so a value like `1e-999999` costs nothing.
inline constexpr unsigned MAX_EXACT_DECIMAL_DIGITS = 1000;
/// Fraction digits of a decimal average at least (it has max(scale of the values, this)).
inline constexpr unsigned DECIMAL_AVG_MIN_SCALE = 6;

/// count and sum/min/max/avg of one column over the rows a query selects.
///
/// Exactness: integer and boolean sums are exact (128-bit: no file the format allows overflows
/// them). Decimal sums are exact decimals at the largest scale among the values (`12.50` + `3.1`
/// = `15.60`), and the average is the exact quotient rounded half away from zero to
/// max(that scale, DECIMAL_AVG_MIN_SCALE) places (SQL Server's rule for decimal AVG); min and max
/// compare decimals exactly and keep the value's own text. Floats are IEEE doubles, summed with
/// Neumaier's compensation (the same digits on every target); a float result that is not finite
/// (an overflowing sum, NaN in a hostile file) is reported as `finite = false` and prints as null.
/// With no values (count 0) sum, avg, min and max are null, as in SQL.
struct aggregate_result {
  std::string column;
  column_type type = column_type::string;
  uint64_t rows = 0;   ///< rows selected
  uint64_t count = 0;  ///< non-null values of the column among them
  /// Integer, boolean and decimal columns: the exact sum as decimal text ("1250075.00", "-3");
  /// empty when count is 0 or the column has no sum (string, json, date, timestamp).
  std::string exact_sum;
  /// Decimal columns: the exact average as decimal text; empty otherwise.
  std::string exact_avg;
  double sum = 0;  ///< float columns: the sum (integer, boolean, decimal: the nearest double of exact_sum)
  double avg = 0;  ///< float, integer and boolean columns: sum / count (decimal: nearest double of exact_avg)
  /// The least and greatest values: integer (integer, date as days, timestamp as µs), boolean,
  /// real (float), text (string, json, decimal: its exact text). null when count is 0.
  value min, max;
  bool finite = true;  ///< false when a float sum, avg, min or max is infinite or NaN
};

/// A whole column (or its values in the matching rows) in bulk.
/// A whole column (or its values in the matching rows) in bulk.
struct column_array {
  std::string name;
  column_type type = column_type::string;
  std::vector<uint8_t> valid;          ///< 1 per row with a value, 0 per null
  std::vector<int64_t> ints;           ///< integer, date (days), timestamp (µs), boolean (0/1); 0 at nulls
  std::vector<double> reals;           ///< float64; decimal (parsed); 0 at nulls
  std::string text;                    ///< string, json, decimal: the values one after another (UTF-8)
  std::vector<uint32_t> text_offsets;  ///< size rows+1: value r is text[offsets[r], offsets[r+1])
};

/// Result rows, as JSON objects (keys in projection order; null values kept as null).
/// The text query() writes rows in.
enum class row_text : uint8_t {
  ndjson,      ///< one JSON object a line, each ending in \n
  json_array,  ///< one JSON array of objects
  /// CSV (RFC 4180, as the view's CSV output writes it): a header row of the column names, then a
  /// record a row, each ending in \n; a null is an empty field and "" a quoted empty one; strings
  /// are their text, numbers and booleans as in JSON, dates and timestamps ISO text, json columns
  /// their JSON text (quoted as a field that holds commas and quotes).
  csv,
  /// What a grid shows: a JSON array of the row's cells a line, each ending in \n; a cell is the
  /// JSON string of its text as CSV has it (strings their text, numbers core's digits, booleans
  /// `true`/`false`, dates and timestamps ISO text, json columns their JSON text), null as null.
  cells,
};

/// "ndjson", "array", "csv", "cells": the names of the row texts (the npm package's `form`).
std::string_view row_text_name(row_text form) noexcept;
/// The row text of a name row_text_name gives; INVALID_ARGUMENT for any other text.
result<row_text> row_text_named(std::string_view name);

struct row_set {
  /// The rows' text: NDJSON (one object a line, each ending in \n), a JSON array, CSV or cells (row_text).
  std::string json;
  uint64_t count = 0;  ///< rows in it
};

/// What the file is: from its footer alone.
struct file_info {
  uint16_t version = FORMAT_VERSION;
  uint64_t bytes = 0;  ///< size of the source
  uint64_t rows = 0;   ///< rows it holds (deleted rows not counted)
  /// Version 2 (quire/store.h): the commit opened, whether pages are sealed, the column rows are
  /// partitioned by, the partitions the key reads (all for the owner and for plain files), the
  /// file's partitions, segments read, rows deleted, and whether a partition's key opened it.
  uint64_t commit = 0;
  bool sealed = false;
  std::string partition_by;
  uint64_t partitions_read = 0, partitions = 0, segments = 0, deleted_rows = 0;
  bool partition_key = false;
  uint32_t chunk_rows = 0;
  uint64_t chunks = 0;
  std::string sorted_by;   ///< "" when the rows are in input order
  std::string created_by;  ///< the writer's name and version
  format::schema schema;
  std::vector<index_def> indexes;
};

/// The plan of a query, and with `analyzed` what running it read (file::explain).
struct explain_report {
  struct index_use {
    std::string column;
    std::string kind;         ///< "sorted", "hash", "text"
    std::string use;          ///< how: "equal", "range", "in", "contains", "startsWith"...
    uint64_t candidates = 0;  ///< rows the index proposed
  };
  struct order_plan {
    std::string column;
    bool descending = false;
    bool by_sorted_column = false;  ///< the file's sorted_by column: no sort needed
  };
  struct chunk_plan {
    uint64_t total = 0;
    uint64_t skipped_by_statistics = 0;
    uint64_t skipped_by_bloom = 0;
    uint64_t skipped_by_index = 0;
    uint64_t scanned = 0;
  };
  std::optional<std::string> where;         ///< the filter as expression text
  std::optional<index_use> index;           ///< the index the filter used, if any
  std::vector<std::string> filter_columns;  ///< columns the filter reads
  std::vector<std::string> columns;         ///< columns the rows return
  std::optional<order_plan> order;
  uint64_t offset = 0;
  std::optional<uint64_t> limit;
  chunk_plan chunks;
  bool analyzed = false;
  // Filled only when analyzed:
  uint64_t rows_matched = 0;
  uint64_t rows_returned = 0;
  bool stopped_early = false;  ///< the limit was reached before every chunk was visited
  read_counters read;          ///< what the run read, from a cold cache
};

/// Bytes by column and by index (file::storage).
struct storage_report {
  struct column_storage {
    std::string name;
    column_type type = column_type::string;
    uint64_t data_bytes = 0;       ///< stored pages (after compression)
    uint64_t encoded_bytes = 0;    ///< the same pages encoded, before compression
    uint64_t directory_bytes = 0;  ///< statistics and page directories
    uint64_t nulls = 0;
    uint64_t pages = 0;
    std::vector<std::pair<std::string, uint64_t>> encodings;  ///< pages by encoding name, by name
  };
  struct index_storage {
    std::string column;
    index_kind kind = index_kind::sorted;
    uint64_t entries = 0;
    uint64_t leaves = 0;
    uint64_t bytes = 0;  ///< root, leaves and Bloom filters
    uint64_t bloom_bytes = 0;
  };
  file_info info;
  uint64_t footer_bytes = 0;
  std::vector<column_storage> columns;
  std::vector<index_storage> indexes;
};

/// Statistics of one column in one chunk (file::chunk_statistics).
struct chunk_statistic {
  uint64_t chunk = 0;
  uint64_t rows = 0;
  uint64_t nulls = 0;
  value min, max;      ///< as in aggregate_result; null when unknown (long text keeps no max)
  uint64_t bytes = 0;  ///< stored bytes of the column's pages in the chunk
};

// One JSON writer per result, in camelCase keys (docs/format.md lists every field). The npm
// package, the CLI and the tests print exactly these texts; doubles print through
// quire/number_text.h; decimal values (exact_sum, exact_avg, decimal min/max) are JSON strings.
std::string to_json(const read_counters &c);
std::string to_json(const aggregate_result &a);
std::string to_json(const file_info &i);
std::string to_json(const explain_report &e);
std::string to_json(const storage_report &s);
/// `type`: the column's type (dates and timestamps print as ISO text).
std::string to_json(const std::vector<chunk_statistic> &s, column_type type);
/// The storage report as the table `quire inspect` prints for people; `loaded_by` names the
/// byte source ("mmap", "read"...), `name` the file.
std::string to_text(const storage_report &s, std::string_view name, std::string_view loaded_by);

/// Reads write options from JSON (the npm package's object form): {"chunkRows", "pageBytes",
/// "compressionLevel", "sortMemoryBytes", "sortedBy", "indexes": [{"column", "kind"}],
/// "schema": [{"name", "type"}], "inferRows"}; null members are skipped. Errors:
/// INVALID_ARGUMENT naming the member (an unknown one, a wrong type, a number out of range).
result<void> parse_write_options_json(std::string_view json_text, write_options &options, input_options &input);
/// One write option, by name, set from its text: the one parser of write options, shared by the
/// npm package's object (parse_write_options_json reads each scalar member through it, leaving the
/// range check to writer::create) and the CLI's flags. `name` is the npm key or the CLI flag:
/// chunkRows / --chunk-rows, pageBytes / --page-bytes, compressionLevel / --level,
/// sortMemoryBytes / --sort-memory-bytes, inferRows / --infer-rows (whole numbers, as digits or a
/// JSON number: `1e3`), sortedBy / --sort (a column), index / --index (`COLUMN:sorted|hash|text`,
/// appended to options.indexes). Numbers are then checked as writer::create checks them
/// (check_write_options): out of range is refused here, before any input is read, in the writer's
/// words; nothing is clamped. Errors: INVALID_ARGUMENT naming the option (an unknown name, not a
/// whole number up to 4294967295, an index without its kind) or the range ("chunk_rows must be...").
result<void> apply_write_option(std::string_view name, std::string_view text, write_options &options,
                                input_options &input);
/// The ranges writer::create accepts: chunk_rows 1..MAX_CHUNK_ROWS, page_bytes 512..16 MiB,
/// compression_level 1..19. INVALID_ARGUMENT naming the first field out of range.
result<void> check_write_options(const write_options &options);
/// A lookup key written as JSON: a string, a number (an integer when it has no fraction and fits
/// int64) or a boolean. Errors: WRONG_KEY (null, an object or an array), INVALID_JSON.
result<value> parse_key_json(std::string_view json_text);
/// A lookup key written as text (`quire query --find COL=TEXT`), read as the column's type; text
/// that type does not read (`abc` for an integer) stays text, and find() then answers WRONG_KEY.
/// Errors: NO_SUCH_COLUMN.
result<value> parse_key_text(const format::schema &schema, std::string_view column, std::string_view text);

/// An open .quire file. Movable, not copyable.
class file {
 public:
  /// Opens a file: reads its fixed-size tail and its footer, nothing else. Errors:
  /// NOT_A_QUIRE_FILE (wrong magic, or too short to hold header and tail), UNSUPPORTED_VERSION,
  /// CORRUPT_BLOCK (the footer's checksum fails; path "footer"), CORRUPT_FILE (a footer pointing
  /// past the end, absurd counts or sizes: all bounded before any allocation), IO_ERROR and
  /// OUT_OF_RANGE from the source.
  static result<file> open(std::unique_ptr<byte_source> source, const open_options &options = {});
  /// As above, borrowing the source: it must outlive the file.
  static result<file> open(const byte_source &source, const open_options &options = {});

  file(file &&) noexcept;
  file &operator=(file &&) noexcept;
  ~file();

  const format::schema &schema() const noexcept;
  uint64_t row_count() const noexcept;
  uint32_t chunk_rows() const noexcept;
  uint64_t chunk_count() const noexcept;
  /// The column the rows are sorted by; "" when none.
  std::string_view sorted_by() const noexcept;
  const std::vector<index_def> &indexes() const noexcept;
  /// Size of the source in bytes.
  uint64_t size() const noexcept;

  /// The first row (in file order) whose `column` equals `key`, as a JSON object of the asked
  /// columns (all when empty), or in `form` (cells: one array; without a line end); nullopt when
  /// there is none. Uses a hash or sorted index of the
  /// column when there is one, else chunk statistics and a scan. Errors: NO_SUCH_COLUMN,
  /// WRONG_KEY (a key that cannot be compared with the column), CORRUPT_BLOCK, CORRUPT_FILE,
  /// IO_ERROR.
  result<std::optional<std::string>> find(std::string_view column, const value &key,
                                          const std::vector<std::string> &columns = {},
                                          row_text form = row_text::ndjson);

  /// Rows a query selects. `as_array`: one JSON array instead of NDJSON. Errors: NO_SUCH_COLUMN
  /// (an unknown column anywhere in the query), INVALID_QUERY (a value that cannot be compared
  /// with its column, contains on a non-text column...), and the read errors of find().
  result<row_set> query(const format::query &q, bool as_array = false);
  /// Rows a query selects, in the text `form` names (row_text: NDJSON, a JSON array, CSV, cells). Errors
  /// as query() above.
  result<row_set> query(const format::query &q, row_text form);
  /// The number of rows query(q) returns (where, then offset and limit); no rows are built.
  result<uint64_t> count(const format::query &q = {});
  /// count and sum/min/max/avg of a column over the rows query(q) returns; only that column and
  /// the filter's columns are read (min/max with no filter come from statistics alone).
  /// Errors: those of query(), NUMERIC_OVERFLOW (a decimal needing more than
  /// MAX_EXACT_DECIMAL_DIGITS digits).
  result<aggregate_result> aggregate(std::string_view column, const format::query &q = {});
  /// The columns q.columns (all when empty) of the rows query(q) returns, in its order, as arrays.
  result<std::vector<column_array>> columns(const format::query &q = {});
  /// The plan of a query; with `analyze` the query runs and the report adds what it read
  /// (read_counters) and the rows it matched.
  result<explain_report> explain(const format::query &q, bool analyze);
  /// Schema, chunks, indexes and bytes by column and by index (reads every column's statistics
  /// and every index root).
  result<storage_report> storage();
  /// Statistics of one column in each chunk. Errors: NO_SUCH_COLUMN.
  result<std::vector<chunk_statistic>> chunk_statistics(std::string_view column);
  /// What the file is, from its footer (no read).
  file_info info() const;

  /// Reads every page of the file (directories, dictionaries, data, index roots, leaves, Bloom
  /// filters) and checks its checksum and structure: CORRUPT_BLOCK or CORRUPT_FILE naming the
  /// first bad page. Returns the number of pages checked.
  result<uint64_t> verify();

  /// What the file has read since it was opened.
  read_counters counters() const noexcept;

  struct impl;
  /// Core's own use: the store (quire/store.h) reads a table's rows through it.
  impl &internals() noexcept { return *impl_; }

 private:
  explicit file(std::unique_ptr<impl> p);
  std::unique_ptr<impl> impl_;
};

}  // namespace quire::format
