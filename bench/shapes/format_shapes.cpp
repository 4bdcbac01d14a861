#include "format_shapes.h"

namespace quire::bench::shapes {
namespace {

// A stateless hash of (row, column): splitmix64's finaliser. The wide table has 30 million cells;
// computing each from its coordinates keeps the generator out of memory and out of the timings'
// way (a few nanoseconds a cell against tens for writing it).
uint64_t cell_hash(uint64_t row, uint64_t column) {
  uint64_t z = row * 0x9e3779b97f4a7c15ull + column * 0xd1b54a32d192ed03ull + 0x5eed;
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}

constexpr const char *WORDS[16] = {"alpha", "bravo",   "charlie", "delta", "echo", "foxtrot",  "golf",  "hotel",
                                   "india", "juliett", "kilo",    "lima",  "mike", "november", "oscar", "papa"};

// 2020-01-01T00:00:00Z in microseconds since 1970.
constexpr int64_t WIDE_EPOCH_US = 1577836800LL * 1000000LL;

std::string to_string(const format::vector_sink &sink) { return {sink.bytes.begin(), sink.bytes.end()}; }

}  // namespace

std::vector<format::index_def> customer_indexes() {
  return {
      {"id", format::index_kind::hash}, {"name", format::index_kind::text}, {"created_at", format::index_kind::sorted}};
}

std::string format_customers_file(const std::vector<format::customer> &customers,
                                  const std::vector<format::index_def> &indexes) {
  format::write_options options;
  options.indexes = indexes;
  format::vector_sink sink;
  auto w = format::writer::create(format::customer_schema(), options, sink);
  if (!w) return {};
  std::vector<format::cell> cells;
  for (const auto &c : customers) {
    format::customer_cells(c, cells);
    if (!w.value()->append_row(cells)) return {};
  }
  if (!w.value()->finish()) return {};
  return to_string(sink);
}

format::schema wide_schema() {
  static const format::column_type KINDS[6] = {format::column_type::integer, format::column_type::float64,
                                               format::column_type::string,  format::column_type::integer,
                                               format::column_type::boolean, format::column_type::timestamp};
  format::schema s;
  s.columns.push_back({"id", format::column_type::integer});
  for (size_t c = 1; c < WIDE_COLUMNS; ++c) {
    char name[8] = {'c', static_cast<char>('0' + c / 100), static_cast<char>('0' + c / 10 % 10),
                    static_cast<char>('0' + c % 10), 0};
    s.columns.push_back({name, KINDS[c % 6]});
  }
  return s;
}

void wide_cells(uint64_t row, std::vector<format::cell> &out) {
  out.clear();
  out.push_back(format::cell::of(static_cast<int64_t>(row + 1)));
  for (uint64_t c = 1; c < WIDE_COLUMNS; ++c) {
    const uint64_t h = cell_hash(row, c);
    switch (c % 6) {
      case 0: out.push_back(format::cell::of(static_cast<int64_t>(h % 100))); break;
      case 1: out.push_back(format::cell::of(static_cast<double>(h % 1000000) / 100.0)); break;
      case 2: out.push_back(format::cell::text(WORDS[h % 16])); break;
      case 3: out.push_back(format::cell::of(static_cast<int64_t>(h % 1000000))); break;
      case 4: out.push_back(format::cell::of((h & 1) != 0)); break;
      default:
        out.push_back(format::cell::of(static_cast<int64_t>(WIDE_EPOCH_US + static_cast<int64_t>(row) * 60000000LL +
                                                            static_cast<int64_t>(h % 60) * 1000000LL)));
        break;
    }
  }
}

result<uint64_t> write_wide(uint64_t rows, format::byte_sink &sink) {
  auto w = format::writer::create(wide_schema(), {}, sink);
  if (!w) return std::move(w).error();
  std::vector<format::cell> cells;
  cells.reserve(WIDE_COLUMNS);
  for (uint64_t r = 0; r < rows; ++r) {
    wide_cells(r, cells);
    if (auto a = w.value()->append_row(cells); !a) return std::move(a).error();
  }
  return w.value()->finish();
}

std::string format_wide_file(uint64_t rows) {
  format::vector_sink sink;
  if (!write_wide(rows, sink)) return {};
  return to_string(sink);
}

}  // namespace quire::bench::shapes
