// quire/dataset.h — partitioned datasets: many .quire files under one folder, Hive-style
// (`DIR/COL=VALUE/part-NAME.quire`), described by one manifest (`DIR/_quire_dataset.json`) that a
// query reads first to skip the files that cannot match.
//
// Several writers add to one dataset without coordinating beyond unique part names: each writes
// its part files, then its own fragment manifest (`DIR/_quire_parts/NAME.json`) last, so a writer
// that dies leaves no fragment and none of its files is counted. merge() then joins the fragments
// into the dataset's manifest. Paths are the platform's business (the CLI's, the npm package's):
// core makes the names, the manifest's text and the plan, and reads files through a callback.
//
//   auto m = dataset::parse_manifest(text);
//   dataset::reader r(*m, [&](std::string_view path) { return open_file(dir + "/" + std::string(path)); });
//   auto rows = r.query(q, format::row_text::ndjson);
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "quire/format.h"
#include "quire/platform.h"
#include "quire/result.h"

namespace quire::dataset {

/// The manifest's name, in the dataset's folder.
inline constexpr std::string_view MANIFEST_FILE = "_quire_dataset.json";
/// The folder of the writers' fragment manifests, in the dataset's folder.
inline constexpr std::string_view FRAGMENT_FOLDER = "_quire_parts";
/// The folder name a null partition value gets (Hive's, which Spark, Trino and DuckDB read as null).
inline constexpr std::string_view NULL_PARTITION = "__HIVE_DEFAULT_PARTITION__";
/// Longest path segment `COL=VALUE` once escaped (a file system's name limit).
inline constexpr size_t MAX_SEGMENT_BYTES = 255;
/// Longest part name; a part name is [A-Za-z0-9_-] and dots, not starting with a dot.
inline constexpr size_t MAX_PART_NAME_BYTES = 64;
/// Partitions one writer may hold open at once (each holds a chunk of rows in memory).
inline constexpr size_t DEFAULT_MAX_PARTITIONS = 1024;
/// Largest manifest read.
inline constexpr size_t MAX_MANIFEST_BYTES = size_t{64} << 20;
/// The manifest's version (`quireDataset`).
inline constexpr uint32_t MANIFEST_VERSION = 1;

/// The folder of one partition: `COL=VALUE`, the value escaped as Hive escapes path names (`%XX`,
/// upper-case hex, for control bytes and " # % ' * / : = ? \ { [ ] ^ and DEL), a null value as
/// NULL_PARTITION (and a text equal to it escaped, so the two stay apart). So `..`, `/` or NUL in
/// a value never leave the folder. Errors: INVALID_ARGUMENT (an empty column name, or a segment
/// longer than MAX_SEGMENT_BYTES once escaped).
result<std::string> partition_segment(std::string_view column, const std::optional<std::string_view> &value);
/// A part name's check: INVALID_ARGUMENT unless it is 1..MAX_PART_NAME_BYTES of [A-Za-z0-9._-]
/// not starting with a dot.
result<void> check_part_name(std::string_view name);
/// `SEGMENT/part-NAME.quire` (or `part-NAME.quire` with no segment): a part file's path in the dataset.
std::string part_path(std::string_view segment, std::string_view part_name);

/// What a file's column holds, from its chunk statistics, in the column's stored domain: integers,
/// dates (days since 1970-01-01), timestamps (microseconds) and booleans (0, 1) as integers;
/// float and decimal columns as doubles (decimals at their nearest); text as text (a long text
/// keeps a cut minimum and no maximum).
struct column_summary {
  uint64_t nulls = 0;
  format::value min, max;  ///< null when unknown (or when every value is null)
};

/// One file of the dataset.
struct file_entry {
  std::string path;                      ///< relative to the dataset's folder, `/`-separated
  std::optional<std::string> partition;  ///< the partition column's value as text; nullopt for null
  uint64_t rows = 0;
  uint64_t bytes = 0;
  std::vector<column_summary> columns;  ///< one per schema column
};

/// The byte range of an input one writer ran (`view run --range`), kept so that the merge can
/// check that the writers of one input covered it exactly once.
struct input_range {
  std::string input;         ///< the input's file name (its last path segment: tasks may mount it apart)
  uint64_t input_bytes = 0;  ///< its size
  uint64_t start = 0, end = 0;
  std::string part;  ///< the writer's part name
};

struct manifest {
  format::schema schema;
  std::string partition_by;  ///< the partition column; "" for an unpartitioned dataset
  std::vector<file_entry> files;
  std::vector<input_range> ranges;  ///< the writers' ranges (none for writers of whole inputs)
  uint64_t rows() const noexcept;
};

/// A file's entry from its open .quire file (its statistics only: nothing else is read).
/// Errors: those of file::chunk_statistics.
result<file_entry> describe_file(format::file &f, std::string path, std::optional<std::string> partition);

/// The manifest's JSON text (docs/format.md, "Datasets", lists its members).
std::string to_json(const manifest &m);
/// Reads a manifest. Errors: INVALID_JSON and the JSON layer's codes, DOCUMENT_TOO_LARGE beyond
/// MAX_MANIFEST_BYTES, CORRUPT_FILE naming the member that is missing, of the wrong type or
/// inconsistent (a path that leaves the folder, a column count unlike the schema's, an unknown
/// type, a version newer than MANIFEST_VERSION).
result<manifest> parse_manifest(std::string_view text);
/// Joins fragments into one manifest, files ordered by path. Errors: INVALID_ARGUMENT when their
/// schemas or partition columns differ, two list one path (two writers chose one part name), or
/// the ranges of one input (one name and size) do not cover it exactly once: two that overlap
/// (their lines would be counted twice) or bytes in none (a writer missing), each named.
result<manifest> merge(std::vector<manifest> fragments);

/// Which files a filter may match, by their statistics (the partition column's among them).
struct plan {
  std::vector<size_t> files;           ///< indexes into manifest::files, in order
  uint64_t skipped_by_partition = 0;   ///< files the filter's terms on the partition column rule out
  uint64_t skipped_by_statistics = 0;  ///< files ruled out only with other columns' statistics
};
/// Errors: those of compiling the filter against the schema (NO_SUCH_COLUMN, INVALID_QUERY...).
result<plan> prune(const manifest &m, const std::optional<format::filter> &where);

/// Opens one of the dataset's files by its manifest path.
using open_source = std::function<result<std::unique_ptr<byte_source>>(std::string_view path)>;

/// Queries a dataset: each file the plan keeps is opened (through `open`), queried and closed in
/// manifest order. A file whose size or row count is not the manifest's is CORRUPT_FILE.
class reader {
 public:
  reader(manifest m, open_source open);

  const manifest &description() const noexcept { return m_; }
  /// The rows query(q) gives over the files in manifest order (offset and limit across them).
  /// order_by across files is INVALID_QUERY (query one file, or sort the result).
  result<format::row_set> query(const format::query &q, format::row_text form = format::row_text::ndjson);
  /// The rows query(q) would give.
  result<uint64_t> count(const format::query &q = {});
  /// The plan as JSON: {"files", "skippedByPartition", "skippedByStatistics", "scanned": [paths]}.
  result<std::string> explain(const format::query &q);

 private:
  result<format::file> open_file(size_t index);
  manifest m_;
  open_source open_;
};

}  // namespace quire::dataset
