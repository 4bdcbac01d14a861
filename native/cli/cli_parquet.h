// Parquet out of the `quire` CLI: core writes the rows as its CSV into a pipe, and DuckDB's Parquet
// writer (native/parquet/, through node) reads it as it comes and makes the file; the user only
// names `--out rows.parquet`.
#pragma once

#include <sys/types.h>

#include <string>
#include <string_view>

#include "quire/format.h"
#include "quire/result.h"

namespace quire::cli {

/// True for a path ending in `.parquet` (case-insensitive).
bool is_parquet_path(std::string_view path) noexcept;
/// True for a path ending in `.arrow` (case-insensitive): an Arrow IPC file, written the same way.
bool is_arrow_path(std::string_view path) noexcept;

/// A sink whose bytes (core's CSV of rows with `schema`'s columns: a header, null an empty field)
/// become the Parquet file `out_path`: `node native/parquet/quire-parquet.mjs` (or the script
/// $QUIRE_PARQUET_HELPER names) reads them from a pipe while they are written. Nothing is named
/// `out_path` until finish() says the helper succeeded; a sink dropped before finish() (the rows
/// stopped on an error) stops the helper first, so no file of part of the rows is ever named.
class parquet_sink final : public format::byte_sink {
 public:
  parquet_sink() = default;
  ~parquet_sink() override;
  parquet_sink(const parquet_sink &) = delete;
  parquet_sink &operator=(const parquet_sink &) = delete;

  /// Starts the helper. Errors: IO_ERROR when node or the helper's packages are missing
  /// (scripts/bootstrap installs them) or it cannot be started.
  /// `arrow`: an Arrow IPC file (by apache-arrow, from DuckDB's casts) instead of Parquet.
  result<void> start(const format::schema &schema, const std::string &out_path, bool arrow = false);
  /// IO_ERROR when the helper has stopped reading (it failed: its reason is on standard error).
  result<void> write(std::span<const uint8_t> bytes) override;
  /// Ends the CSV and waits for the helper. IO_ERROR when it failed.
  result<void> finish();

 private:
  int fd_ = -1;
  pid_t pid_ = -1;
  std::string out_, temp_;
};

}  // namespace quire::cli
