// quire/view.h — SQL on FHIR v2 ViewDefinitions: compiled once, run over resources into rows.
//
// A ViewDefinition (JSON text) is checked and compiled once: every FHIRPath in it (column paths,
// forEach, forEachOrNull, repeat, where) is compiled by quire::fhirpath, constants become
// FHIRPath values. Running the view over one resource gives its rows; each row holds one cell per
// column, in the view's column order (a select's columns, then its nested selects', then its
// unionAll's).
//
//   auto v = quire::view::compile(view_json);
//   if (!v) return v.error();                    // INVALID_VIEW (path select[1].column[0].name)
//   quire::view::runner run(*v);                 // reusable scratch; one per thread
//   std::vector<quire::view::row> rows;
//   auto ok = run.run(doc.root(), rows);         // appends the resource's rows
//   std::string text;
//   for (const auto &r : rows) { quire::view::append_row_json(text, *v, r); text += '\n'; }
//
// Errors: INVALID_VIEW (the view breaks a rule of the specification: no resource, a bad or
// repeated column name, unionAll branches whose columns differ, a constant without one value...),
// INVALID_FHIRPATH / UNKNOWN_FUNCTION (an expression in the view), each with `path` set to the
// place in the view (`select[0].forEach`) and the message naming it; while running,
// FHIRPATH_TYPE_ERROR (a `where` that is not boolean, a column that is not a collection getting
// several values), DOCUMENT_TOO_LARGE (more rows than limits.max_rows_per_resource) and
// MAX_DEPTH_EXCEEDED (a repeat deeper than limits.max_repeat_depth).
//
// Output: a table_writer streams a view's rows into NDJSON, CSV, an indexed .quire table or typed
// columns in Arrow's layout (create_batches: what the npm package makes Arrow IPC and Parquet of), from
// resources, Bundles or NDJSON text fed in pieces of any size:
//
//   quire::format::vector_sink out;
//   auto w = quire::view::table_writer::create(*v, quire::view::output_kind::quire, options, out);
//   while (more) if (auto ok = w.value()->feed_ndjson(next_piece()); !ok) return ok.error();
//   auto rows = w.value()->finish();             // rows written; out.bytes is the .quire file
//
// Column types (table_schema; the same checks run for every output kind, so a view and its input
// succeed or fail alike whatever is written). The schema is fixed from the view alone, before any
// row is seen, so each rule must hold for every value FHIR allows:
//   boolean                                        -> boolean
//   integer, positiveInt, unsignedInt, integer64    -> integer (integer64 also from its JSON string form)
//   decimal                                        -> decimal (exact text: `0.700` stays `0.700`)
//   a complex type (first letter upper case: HumanName, Coding, Reference...), or collection: true
//                                                  -> json (compact JSON text; a collection is an array)
//   everything else, undeclared included (string, code, id, uri, date, dateTime, instant, time...)
//                                                  -> string
// date, dateTime and instant stay strings: FHIR allows partial dates (`2012`, `2012-03`), dateTimes
// without a time zone, and instants with any number of fraction digits and their own offset; the
// .quire date/timestamp types would drop or refuse some of them, and a string loses nothing (ISO
// text of one precision and zone sorts in time order). A string column takes a string value as
// its text and a number or boolean as its JSON text (`12`, `true`); an object or array there is a
// SCHEMA_MISMATCH (declare a complex type or collection: true to keep it as json). A value a
// column cannot hold (a decimal or string in an integer column, a string in a boolean one...) is
// SCHEMA_MISMATCH with `path` = the column name, the message naming the value and the resource
// (its number in the input, resourceType/id, and the Bundle entry), `line` = its NDJSON line.
// Never a silent null: null goes in only where the view gives no value.
//
// Output bytes: NDJSON is append_row_json() per row, each ending in \n. CSV is RFC 4180 with LF
// line ends: a header row of the column names, then one record per row; null is an empty field,
// an empty string is `""`; a field is quoted (quotes doubled) only when it holds `,` `"` CR or LF or
// is the empty string; strings are their text, numbers and booleans their JSON text, arrays and
// objects their compact JSON text. .quire is format::writer's file with table_schema() and the
// write_options given (indexes, chunk_rows, sort memory, spill).
//
// Memory: a table_writer holds one incomplete NDJSON line (at most run_options::max_line_bytes),
// the rows of one resource, and the output being built: up to OUTPUT_FLUSH_BYTES of text for
// NDJSON/CSV, one chunk plus the writer's sort memory for .quire. It never holds the input. On
// threads (run_options) it also holds the rows of one round of lines (about 4 MiB of NDJSON) and
// a runner and a document per thread.
//
// Threads: runner::run_ndjson and table_writer::feed_ndjson spread long NDJSON over a task runner
// (quire/platform.h) when run_options names one; rows, bytes, counts and errors are the same as on
// one thread (the lines are cut into runs, each run by its own runner, and put back in order; a
// writer's tasks also check the cells and write NDJSON or CSV text).
//
//   quire::view::runner run(*v, {.tasks = &quire::default_task_runner()});  // natively: all cores
//
// IMPORTANT: lifetimes. A compiled view owns everything it needs (its own parsed copy of the
// view). Rows own their cells' text: they stay valid after the resource's document is gone. A
// table_writer borrows its view and sink: both must outlive it.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "quire/dataset.h"
#include "quire/fhirpath.h"
#include "quire/format.h"
#include "quire/json.h"
#include "quire/ndjson.h"
#include "quire/platform.h"
#include "quire/result.h"

namespace quire::view {

/// A column name as views write them: a letter, then letters, digits or _.
bool valid_column_name(std::string_view name);

/// Bounds that make hostile views and data cost a bounded amount.
struct limits {
  static constexpr size_t DEFAULT_MAX_ROWS_PER_RESOURCE = 1'000'000;
  static constexpr size_t DEFAULT_MAX_REPEAT_DEPTH = 64;
  static constexpr size_t DEFAULT_MAX_SELECT_DEPTH = 64;
  static constexpr size_t DEFAULT_MAX_VIEW_BYTES = 4 * 1024 * 1024;

  size_t max_rows_per_resource = DEFAULT_MAX_ROWS_PER_RESOURCE;  ///< DOCUMENT_TOO_LARGE beyond (run)
  size_t max_repeat_depth = DEFAULT_MAX_REPEAT_DEPTH;  ///< MAX_DEPTH_EXCEEDED beyond (run): levels a repeat descends
  size_t max_select_depth = DEFAULT_MAX_SELECT_DEPTH;  ///< MAX_DEPTH_EXCEEDED beyond (compile): nested selects
  size_t max_view_bytes = DEFAULT_MAX_VIEW_BYTES;      ///< DOCUMENT_TOO_LARGE beyond (compile)
  fhirpath::limits fhirpath;                           ///< for every expression in the view
};

/// One column of the view's output.
struct column_info {
  std::string name;
  std::string type;         ///< the declared FHIR type (`id`, `string`, `integer`...); "" when not declared
  bool collection = false;  ///< the cell is a JSON array of every value
};

/// The kind of a cell's value.
enum class cell_kind : uint8_t { null_value, boolean, integer, decimal, string, array, object };

/// One value of a row, typed: the runner makes it once from the FHIRPath result, and each writer
/// prints it once (append_cell_json for NDJSON and JSON, CSV, .quire, the same bytes on every
/// target). What holds the value, by kind:
///   null_value     nothing (the view gave no value)
///   boolean        `boolean`
///   integer        `integer`: a JSON number without fraction or exponent that fits 64 bits
///   decimal        `text`, the number's exact text (`0.700`, `1e3`; also an integer past 64 bits, `-0`)
///   string         `text`, its characters (UTF-8, not escaped): strings, dates and times as their
///                  ISO text, a computed quantity as its FHIRPath text (`1 'cm'`)
///   array, object  `text`, compact JSON (`["a","b"]`, `{"system":..}`)
struct cell {
  cell_kind kind = cell_kind::null_value;
  bool boolean = false;
  int64_t integer = 0;
  std::string text;
};

/// Appends a cell as JSON: `null`, `true`, `12`, `0.700`, `"pt1"` (json::append_quoted),
/// `["a","b"]`.
void append_cell_json(std::string &out, const cell &c);
/// Appends a cell's text as CSV and a string column print it: a string's characters, a number's
/// digits, `true`/`false`, JSON text; nothing for null.
void append_cell_text(std::string &out, const cell &c);

/// One row: a cell per column, in the view's column order.
struct row {
  std::vector<cell> cells;
};

/// A compiled ViewDefinition. Move-only.
class compiled_view {
 public:
  compiled_view();
  ~compiled_view();
  compiled_view(compiled_view &&) noexcept;
  compiled_view &operator=(compiled_view &&) noexcept;
  compiled_view(const compiled_view &) = delete;
  compiled_view &operator=(const compiled_view &) = delete;

  /// The view's `resource` (`Patient`).
  std::string_view resource() const noexcept;
  /// The view's `name`, "" when absent.
  std::string_view name() const noexcept;
  /// The output columns, in order.
  const std::vector<column_info> &columns() const noexcept;
  const view::limits &limits() const noexcept;

  struct program;
  const program &compiled() const noexcept { return *program_; }

 private:
  friend result<compiled_view> compile(std::string_view, const view::limits &);
  std::unique_ptr<program> program_;
};

/// Parses, checks and compiles a ViewDefinition (JSON text). Errors carry the place in the view
/// in error::path (`select[1].column[0].name`, `constant[0]`, `where[0].path`).
result<compiled_view> compile(std::string_view view_json, const limits &lim = {});

/// How NDJSON text is spread over threads (runner::run_ndjson, table_writer::feed_ndjson). The
/// rows, their order and every error are the same whatever the number of threads: each thread
/// runs a run of whole lines with its own runner, and the results are put together in line order
/// (an error is the one of the first line that fails, as one thread gives it).
struct run_options {
  static constexpr size_t DEFAULT_MIN_PARALLEL_BYTES = size_t{256} << 10;
  static constexpr unsigned MAX_THREADS = 256;

  /// Where the threads come from: nullptr (the default) runs everything on the calling thread;
  /// `&quire::default_task_runner()` (quire/platform.h) is the target's (natively a thread per
  /// task; in WebAssembly the calling thread). A caller that runs views on threads of its own
  /// leaves it null.
  const task_runner *tasks = nullptr;
  /// Tasks to cut a text into: 0 (the default) tasks->concurrency() (natively the hardware's
  /// threads), at most MAX_THREADS. A task runner whose concurrency() is 1 gets one task.
  unsigned threads = 0;
  /// NDJSON text shorter than this runs on the calling thread alone: starting threads would cost
  /// more than such a text's lines.
  size_t min_parallel_bytes = DEFAULT_MIN_PARALLEL_BYTES;
  /// The longest NDJSON line run_ndjson, run_text and table_writer::feed_ndjson read: LINE_TOO_LONG
  /// beyond (ndjson::line_feeder's rule and text, as every NDJSON reader in core).
  uint64_t max_line_bytes = ndjson::DEFAULT_MAX_LINE_BYTES;
  /// The time now(), today() and timeOfDay() give in the view's expressions (fhirpath::environment).
  std::optional<fhirpath::clock_reading> now = std::nullopt;
};

/// How many tasks `options` cut NDJSON text of `bytes` into (1: the calling thread alone).
unsigned parallel_parts(const run_options &options, size_t bytes) noexcept;

/// Runs a compiled view; holds a FHIRPath evaluator and scratch. Not thread-safe: one per thread
/// (run_ndjson spreads a long text over threads itself, run_options). The view must outlive the
/// runner.
class runner {
 public:
  explicit runner(const compiled_view &v, const run_options &options = {});
  ~runner();
  runner(runner &&) noexcept;
  runner &operator=(runner &&) noexcept;
  runner(const runner &) = delete;
  runner &operator=(const runner &) = delete;

  /// Appends the rows of one resource to `out`: a Bundle, unless the view is over Bundle itself,
  /// gives the rows of its entries' resources (Bundle.entry[i].resource, in entry order; an error
  /// there has `path` `Bundle.entry[i].resource`...), as every entry point of a view does
  /// (docs/views.md, "Bundles"). A resource whose resourceType is not the view's `resource` gives
  /// no rows (and no error); so does one the view's `where` rejects.
  result<void> run(const json::value &resource, std::vector<row> &out);
  /// The rows of exactly this resource, a Bundle too (no walk into its entries).
  result<void> run_resource(const json::value &resource, std::vector<row> &out);
  /// Every entry.resource of a Bundle (rows in entry order), whatever the view's resource.
  result<void> run_bundle(const json::value &bundle, std::vector<row> &out);
  /// Every line of NDJSON text (blank lines skipped), on several threads when the text is long
  /// (run_options). A line that is not JSON is an error whose `line` is its line number; one
  /// longer than run_options::max_line_bytes is LINE_TOO_LONG.
  result<void> run_ndjson(std::string_view text, std::vector<row> &out);
  /// JSON text whose shape is not known in advance (the npm package's `view.run`): one resource
  /// or Bundle, a JSON array of them, or NDJSON (text holding more than one JSON value), each
  /// resource run as run() does. Errors: the parse error of a text that is
  /// none of those (EMPTY_INPUT, INVALID_JSON...), else run()'s.
  result<void> run_text(std::string_view text, std::vector<row> &out);

  struct state;

 private:
  std::unique_ptr<state> state_;
};

/// Runs a view over NDJSON that arrives in pieces of any size (a line may span pieces): rows of
/// every line a piece completes. Memory: one incomplete line (at most max_line_bytes) carried
/// over. Errors: run_ndjson()'s, with `line` the line number and `offset` the byte offset in the
/// whole stream; LINE_TOO_LONG for a line longer than max_line_bytes. After an error the feeder
/// is stopped: later calls return the same error. The view must outlive the feeder.
class ndjson_feeder {
 public:
  static constexpr uint64_t DEFAULT_MAX_LINE_BYTES = ndjson::DEFAULT_MAX_LINE_BYTES;

  explicit ndjson_feeder(const compiled_view &v, uint64_t max_line_bytes = DEFAULT_MAX_LINE_BYTES,
                         const run_options &run = {});
  ~ndjson_feeder();
  ndjson_feeder(ndjson_feeder &&) noexcept;
  ndjson_feeder &operator=(ndjson_feeder &&) noexcept;
  ndjson_feeder(const ndjson_feeder &) = delete;
  ndjson_feeder &operator=(const ndjson_feeder &) = delete;

  /// Appends the rows of every line this piece completes.
  result<void> feed(std::string_view piece, std::vector<row> &out);
  /// Ends the stream: the rows of a last line that has no line end.
  result<void> finish(std::vector<row> &out);

  struct state;

 private:
  std::unique_ptr<state> state_;
};

/// The columns as a JSON array: `[{"name":"id","type":"id","collection":false},...]` (type ""
/// when not declared).
std::string columns_to_json(const compiled_view &v);

/// Appends one row as a JSON object, keys in column order: `{"id":"pt1","family":null}`.
void append_row_json(std::string &out, const compiled_view &v, const row &r);
/// All rows as a JSON array of such objects.
std::string rows_to_json(const compiled_view &v, const std::vector<row> &rows);

// --- output: NDJSON, CSV, .quire ------------------------------------------------------------------

/// What a table_writer writes.
enum class output_kind : uint8_t { ndjson, csv, quire };

/// "ndjson", "csv", "quire".
std::string_view output_kind_name(output_kind kind) noexcept;
/// The kind a file name asks for by its extension: `.ndjson` or `.jsonl` -> ndjson, `.csv` -> csv,
/// `.quire` -> quire (case-insensitive); nullopt for anything else.
std::optional<output_kind> output_kind_for_path(std::string_view path) noexcept;

/// The .quire schema of a view: one column per view column, in order, typed by the rules in this
/// header's comment. Errors: INVALID_ARGUMENT (more than format::MAX_COLUMNS columns).
result<format::schema> table_schema(const compiled_view &v);

/// Where a partitioned table_writer's part files go: the platform opens one sink per partition
/// (natively a file under `DIR/SEGMENT/`), the writer writes the part's .quire bytes into it.
class part_sinks {
 public:
  virtual ~part_sinks() = default;
  /// The sink of the part of partition folder `segment` (dataset::partition_segment's text),
  /// asked once per partition, when its first row comes; it must live until finish() returns.
  virtual result<format::byte_sink *> open(std::string_view segment) = 0;
};

/// One partition a partitioned table_writer wrote.
struct partition_info {
  std::string segment;               ///< its folder, `COL=VALUE` escaped
  std::optional<std::string> value;  ///< the partition column's value as text (nullopt: null)
  uint64_t rows = 0;
};

// --- output: typed columns in Arrow's layout (Parquet and Arrow IPC from the npm package) -------

/// Decimal columns as Parquet and Arrow hold them, in every file alike (a dataset's parts agree):
/// DECIMAL(38,18), at most 20 integer and 18 fraction digits. A decimal whose text needs more, or
/// has an exponent, does not fit exactly and is never rounded: SCHEMA_MISMATCH (decimal128_misfit).
inline constexpr uint32_t DECIMAL128_PRECISION = 38;
inline constexpr uint32_t DECIMAL128_SCALE = 18;

/// Why a decimal's text (JSON number text) does not fit DECIMAL(38,18) exactly, or "" when it
/// does: the reason a table_writer's SCHEMA_MISMATCH gives for it, the same for the CLI's Parquet
/// and Arrow and the npm package's. On "" `unscaled` is the value x 10^18, as 16 bytes of a
/// little-endian two's complement integer (Arrow's Decimal128 value).
std::string_view decimal128_misfit(std::string_view text, std::array<uint8_t, 16> &unscaled) noexcept;

/// One column of a column_batch, in Arrow's layout, so that an Arrow library wraps the buffers as
/// they are. By table_schema()'s type:
///   boolean       values: a bit per row (LSB first), 0 at nulls
///   integer       values: int64 per row, little-endian, 0 at nulls
///   decimal       values: 16 bytes per row, the value x 10^18 (decimal128_misfit), 0 at nulls
///   string, json  values: the UTF-8 text of the rows one after another; offsets: rows + 1 byte
///                 offsets into it (row r is [offsets[r], offsets[r + 1]); a null is empty)
/// `validity` is Arrow's validity bitmap: bit r (LSB first) set when row r has a value.
struct column_buffer {
  format::column_type type = format::column_type::string;
  uint64_t nulls = 0;
  std::vector<uint8_t> validity;
  std::vector<uint8_t> values;
  std::vector<int32_t> offsets;
};

/// Some rows of a view's output as columns, one column_buffer per view column, in order.
struct column_batch {
  uint64_t rows = 0;
  std::vector<column_buffer> columns;
};

/// Where a batch writer's batches go, each once, in row order.
class batch_sink {
 public:
  virtual ~batch_sink() = default;
  /// Takes a batch; the writer reuses its buffers after the call (move them out to keep them).
  virtual result<void> write(column_batch &batch) = 0;
};

/// How a batch writer cuts its rows into batches (an Arrow record batch, a Parquet row group).
struct batch_options {
  /// DuckDB's row group size (and the CLI's --row-group-rows default).
  static constexpr size_t DEFAULT_BATCH_ROWS = 122'880;
  /// Arrow's text offsets are 32-bit: a batch is cut before its text could pass them.
  static constexpr size_t DEFAULT_BATCH_BYTES = size_t{64} << 20;

  size_t batch_rows = DEFAULT_BATCH_ROWS;    ///< rows of a batch (the last may have fewer); 0: the default
  size_t batch_bytes = DEFAULT_BATCH_BYTES;  ///< a batch ends once its buffers hold this much; 0: the default
};

/// Streams a view's rows into NDJSON, CSV or .quire bytes. Not thread-safe. The view and the sink
/// must outlive it. After an error it is unusable: every later call returns that error again.
class table_writer {
 public:
  /// Longest NDJSON line feed_ndjson() holds by default (run_options::max_line_bytes).
  static constexpr size_t MAX_LINE_BYTES = ndjson::DEFAULT_MAX_LINE_BYTES;
  /// NDJSON and CSV text is handed to the sink in pieces of about this size.
  static constexpr size_t OUTPUT_FLUSH_BYTES = size_t{1} << 20;

  /// `options` is used for .quire (indexes, sorted_by, chunk_rows...); NDJSON and CSV cannot hold
  /// indexes or an order, so options with indexes or sorted_by are INVALID_ARGUMENT for them.
  /// Errors: INVALID_ARGUMENT, NO_SUCH_COLUMN (an index on a column the view does not have) and the
  /// other errors of format::writer::create (an index kind the column's type cannot have).
  /// `run` says how feed_ndjson() spreads the lines of a piece over threads.
  static result<std::unique_ptr<table_writer>> create(const compiled_view &v, output_kind kind,
                                                      const format::write_options &options, format::byte_sink &sink,
                                                      const run_options &run = {});
  /// A .quire writer per value of `column` (one of the view's; not a json one): each row goes to
  /// its partition's part, every part holding every column (the partition column too, so a part
  /// read alone is whole). Parts are opened as their first rows come, in that order.
  /// Errors: as create(), NO_SUCH_COLUMN, INVALID_ARGUMENT (a json column); while writing,
  /// INVALID_ARGUMENT past `max_partitions` partitions or for a value whose folder name would be
  /// too long (dataset::partition_segment), and the sinks' errors.
  static result<std::unique_ptr<table_writer>> create_partitioned(
      const compiled_view &v, std::string_view column, const format::write_options &options, part_sinks &sinks,
      const run_options &run = {}, size_t max_partitions = dataset::DEFAULT_MAX_PARTITIONS);
  /// A writer of typed columns (column_buffer's layout): the rows go to `sink` in batches of
  /// `batches.batch_rows` (fewer at the end, or when a batch's buffers reach batch_bytes), with
  /// every check create() makes, and decimals held as DECIMAL(38,18) (require_decimal128()).
  /// Errors: as create().
  static result<std::unique_ptr<table_writer>> create_batches(const compiled_view &v, batch_sink &sink,
                                                              const batch_options &batches = {},
                                                              const run_options &run = {});
  ~table_writer();
  table_writer(const table_writer &) = delete;
  table_writer &operator=(const table_writer &) = delete;

  /// Writes the rows of one resource, or of every entry.resource of a Bundle (unless the view's
  /// resource is Bundle itself). Errors: those of runner::run, SCHEMA_MISMATCH (see above), the
  /// sink's and the .quire writer's.
  result<void> add_resource(const json::value &resource_or_bundle);
  /// Reads NDJSON (one resource or Bundle a line; blank lines and \r\n line ends allowed) in
  /// pieces of any size, split anywhere; each complete line is run and written at once, then
  /// dropped. Errors carry the line number (`line`) and the stream offset: a line that is not JSON
  /// keeps the JSON layer's code, LINE_TOO_LONG beyond run_options::max_line_bytes, and
  /// add_resource's errors.
  result<void> feed_ndjson(std::string_view piece);
  /// Ends one NDJSON stream: runs its last line if it has no line end; line numbers and offsets
  /// of the next feed_ndjson() count from 1 and 0 again (several input files into one table).
  result<void> end_ndjson();
  /// Ends the NDJSON stream as end_ndjson() does, writes what is held and the file's end (the
  /// .quire footer). Returns the number of rows written. Calling anything after it is INVALID_ARGUMENT.
  result<uint64_t> finish();

  /// Decimals from now on must fit DECIMAL(38,18) exactly (decimal128_misfit): one that does not
  /// is SCHEMA_MISMATCH, as for a batch writer. For CSV that becomes Parquet or Arrow (the CLI),
  /// so that the error is core's, the same as the npm package's.
  void require_decimal128() noexcept;

  /// Resources run so far: each Bundle entry's resource counts, the Bundle itself does not; those
  /// of other types and those the view's `where` rejects count too.
  uint64_t resources() const noexcept;
  /// Rows written so far.
  uint64_t rows() const noexcept;
  /// The partitions written so far, in the order they were opened (empty unless partitioned).
  const std::vector<partition_info> &partitions() const noexcept;

  struct impl;

 private:
  explicit table_writer(std::unique_ptr<impl> p);
  std::unique_ptr<impl> impl_;
};

}  // namespace quire::view
