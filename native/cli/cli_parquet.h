// Parquet out of the `quire` CLI: core writes the rows as its CSV, and DuckDB's Parquet writer
// (native/parquet/, through Node) makes the file; the user only names `--out rows.parquet`.
#pragma once

#include <string>
#include <string_view>

#include "quire/format.h"
#include "quire/result.h"

namespace quire::cli {

/// True for a path ending in `.parquet` (case-insensitive).
bool is_parquet_path(std::string_view path) noexcept;

/// Makes `out_path` from the CSV at `csv_path` (core's CSV: a header, null an empty field) whose
/// columns have `schema`'s types, through `node native/parquet/quire-parquet.mjs` (or the script
/// $QUIRE_PARQUET_HELPER names). Errors: IO_ERROR when node or the helper's packages are missing
/// (scripts/bootstrap installs them) or the helper fails (its reason on standard error).
/// `decimal_width` "P,S" gives every decimal column DECIMAL(P,S) (the files of a dataset must agree;
/// a value that needs more fails); "" sizes each column to its values.
result<void> csv_to_parquet(const std::string &csv_path, const format::schema &schema, const std::string &out_path,
                            const std::string &decimal_width = "");

/// The decimal width of a dataset's Parquet parts: 20 integer and 18 fraction digits.
inline constexpr const char *DATASET_DECIMAL_WIDTH = "38,18";

}  // namespace quire::cli
