// Sample data for the benchmarks, the tests and the demo: synthetic customer records from a seeded
// generator (bench/shapes/format_sample_data.cpp). Not part of core: nothing shipped links it.
// In quire::format beside the row API it feeds (format::cell, format::schema).
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "quire/format.h"

namespace quire::format {

inline constexpr uint64_t DEFAULT_SAMPLE_SEED = 20240601;

/// One synthetic customer record.
struct customer {
  int64_t id = 0;          ///< 1, 2, 3... in order
  std::string name;        ///< "Ana Okafor"
  std::string email;       ///< "ana.okafor17@example.org"
  std::string country;     ///< ISO 3166 alpha-2 ("NA" is Namibia), skewed towards a few
  std::string city;        ///< a city of that country
  int64_t age = 0;         ///< 18..95
  double balance = 0;      ///< 0..100000 with cents (a double)
  int64_t created_at = 0;  ///< microseconds since 1970 (2015..2024), increasing with id
};

/// `count` customers from a seeded generator: the same seed gives the same records on every
/// target and every run (no global state, no std:: distributions).
std::vector<customer> generate_customers(size_t count, uint64_t seed = DEFAULT_SAMPLE_SEED);
/// The customers' schema: id integer, name, email, country, city string, age integer, balance
/// float, created_at timestamp.
format::schema customer_schema();
/// The customers as NDJSON (created_at as ISO 8601 text), one object a line.
std::string customers_ndjson(const std::vector<customer> &customers);
/// The customers as CSV with a header row.
std::string customers_csv(const std::vector<customer> &customers);
/// Appends the cells of one customer in customer_schema() order (text borrows from `c`).
void customer_cells(const customer &c, std::vector<cell> &out);
}  // namespace quire::format
