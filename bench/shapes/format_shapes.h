// Synthetic tables for the .quire format cases, seeded and built in code: the same bytes on every
// target. The customers come from quire::format::generate_customers (format_sample_data.h, shared
// with the tests); the wide table is computed cell by cell from (row, column), so it needs no
// memory to generate.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "format_sample_data.h"
#include "quire/format.h"

namespace quire::bench::shapes {

/// How the customers are indexed in the "-indexed" shapes: id hash, name text, created_at sorted.
std::vector<format::index_def> customer_indexes();

/// Writes customers as a .quire file (rows in id order), with `indexes`.
std::string format_customers_file(const std::vector<format::customer> &customers,
                                  const std::vector<format::index_def> &indexes);

/// The wide table: "id" (1..rows) then WIDE_COLUMNS - 1 columns "c001".. cycling through six kinds:
/// small integer (0..99), float with cents (0..10000), string (one of 16 words), integer (0..999999),
/// boolean, timestamp (increasing with the row).
inline constexpr size_t WIDE_COLUMNS = 300;
format::schema wide_schema();
/// Appends the cells of row `row` (0-based) to `out` (cleared first). Text cells point into static words.
void wide_cells(uint64_t row, std::vector<format::cell> &out);
/// Writes `rows` rows of the wide table to `sink`, in id order. Returns the bytes written.
result<uint64_t> write_wide(uint64_t rows, format::byte_sink &sink);
/// The wide table as a .quire file.
std::string format_wide_file(uint64_t rows);

}  // namespace quire::bench::shapes
