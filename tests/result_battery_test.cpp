// The result battery: every call of tests/data/battery/battery.tsv (queries, counts, aggregates,
// explains, storage reports, chunk statistics, finds, and calls that fail) runs through core, and
// the digest of its text, made exactly as `quire` prints it, must equal tests/data/battery/digests.tsv.
// The same table is checked by the CLI (tests/cli_battery.mjs) and the npm package
// (js/test/battery.test.mjs), so one table holds native, wasm, the CLI and the package to the same
// bytes. The customers and decimals files are rebuilt here and must equal the checked-in ones.
// QUIRE_UPDATE_BATTERY=1 rewrites the table and both files after a deliberate change.
#include <catch2/catch.hpp>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <map>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

#include "format_sample_data.h"  // bench/shapes: the sample customers
#include "quire/format.h"
#include "test_support.h"

using namespace quire;
using namespace quire::format;

namespace {

/// One line of battery.tsv ("-" is an empty field).
struct battery_call {
  std::string id, file, op, where, columns, order;
  bool descending = false;
  uint64_t offset = 0;
  std::optional<uint64_t> limit;
  std::string column, key;
};

std::vector<std::string> split(const std::string &s, char sep) {
  std::vector<std::string> out;
  size_t start = 0;
  while (true) {
    size_t at = s.find(sep, start);
    out.push_back(s.substr(start, at == std::string::npos ? std::string::npos : at - start));
    if (at == std::string::npos) return out;
    start = at + 1;
  }
}

std::string field(const std::string &s) { return s == "-" ? std::string() : s; }

std::vector<battery_call> read_battery() {
  std::istringstream in(quire_test::read_text(quire_test::data_dir() / "battery" / "battery.tsv"));
  std::vector<battery_call> calls;
  std::string line;
  bool header = true;
  while (std::getline(in, line)) {
    if (line.empty() || line[0] == '#') continue;
    if (header) {
      header = false;
      continue;
    }
    auto f = split(line, '\t');
    REQUIRE(f.size() == 11);
    battery_call c;
    c.id = f[0];
    c.file = f[1];
    c.op = f[2];
    c.where = field(f[3]);
    c.columns = field(f[4]);
    c.order = field(f[5]);
    c.descending = f[6] == "1";
    c.offset = std::stoull(f[7]);
    if (f[8] != "-") c.limit = std::stoull(f[8]);
    c.column = field(f[9]);
    c.key = field(f[10]);
    calls.push_back(std::move(c));
  }
  return calls;
}

uint64_t fnv1a64(std::string_view s) {
  uint64_t h = 0xcbf29ce484222325ull;
  for (unsigned char ch : s) {
    h ^= ch;
    h *= 0x100000001b3ull;
  }
  return h;
}

std::string hex16(uint64_t v) {
  char buf[17];
  std::snprintf(buf, sizeof buf, "%016llx", static_cast<unsigned long long>(v));
  return buf;
}

/// The customers file of the battery: the sample customers (the only use of the generator here),
/// in input order, with one index of each kind.
std::vector<uint8_t> customers_file_bytes() {
  write_options o;
  o.chunk_rows = 256;
  o.indexes = {{"id", index_kind::hash}, {"name", index_kind::text}, {"created_at", index_kind::sorted}};
  vector_sink sink;
  auto w = writer::create(customer_schema(), o, sink);
  REQUIRE(w);
  std::vector<cell> cells;
  for (const auto &c : generate_customers(2000)) {
    cells.clear();
    customer_cells(c, cells);
    REQUIRE(w.value()->append_row(cells));
  }
  REQUIRE(w.value()->finish());
  return sink.bytes;
}

/// The decimals file: decimals.ndjson with its schema given (so `12.50` stays a decimal and the
/// near-int64 values stay integers), small chunks so that chunk statistics say something.
std::vector<uint8_t> decimals_file_bytes() {
  input_options in;
  in.schema = format::schema{{{"id", column_type::integer},
                              {"amount", column_type::decimal},
                              {"big", column_type::float64},
                              {"huge", column_type::integer},
                              {"day", column_type::date},
                              {"at", column_type::timestamp},
                              {"flag", column_type::boolean},
                              {"label", column_type::string}}};
  write_options o;
  o.chunk_rows = 4;
  o.indexes = {{"id", index_kind::hash}, {"amount", index_kind::sorted}};
  vector_sink sink;
  auto n = write_ndjson(quire_test::read_text(quire_test::data_dir() / "battery" / "decimals.ndjson"), o, sink, in);
  REQUIRE(n);
  return sink.bytes;
}

/// A call's text as the CLI prints it, and "ok" or the error's name.
struct outcome {
  std::string text;
  std::string status = "ok";
};

outcome failed(const quire::error &e) { return {e.describe() + "\n", std::string(error_name(e.code))}; }

outcome run_call(const std::vector<uint8_t> &bytes, const battery_call &c) {
  // A fresh file for every call, as the CLI and the package open one: nothing cached carries over.
  auto f = file::open(borrow_bytes(bytes));
  REQUIRE(f);
  query q;
  if (!c.where.empty()) {
    auto w = parse_expression(c.where);
    if (!w) return failed(w.error());
    q.where = std::move(w).value();
  }
  if (!c.columns.empty()) q.columns = split(c.columns, ',');
  q.order_by = c.order;
  q.descending = c.descending;
  q.offset = c.offset;
  if (c.limit) q.limit = *c.limit;
  if (c.op == "rows") {
    auto r = f->query(q);
    if (!r) return failed(r.error());
    return {r->json};
  }
  if (c.op == "count") {
    auto n = f->count(q);
    if (!n) return failed(n.error());
    return {std::to_string(*n) + "\n"};
  }
  if (c.op == "sum") {
    auto a = f->aggregate(c.column, q);
    if (!a) return failed(a.error());
    return {to_json(*a) + "\n"};
  }
  if (c.op == "explain" || c.op == "explain-analyze") {
    auto e = f->explain(q, c.op == "explain-analyze");
    if (!e) return failed(e.error());
    return {to_json(*e) + "\n"};
  }
  if (c.op == "storage") {
    auto s = f->storage();
    if (!s) return failed(s.error());
    return {to_json(*s) + "\n"};
  }
  if (c.op == "find") {
    auto key = parse_key_text(f->schema(), c.column, c.key);
    if (!key) return failed(key.error());
    auto row = f->find(c.column, *key, q.columns);
    if (!row) return failed(row.error());
    return {row->has_value() ? **row + "\n" : std::string()};
  }
  if (c.op == "chunks") {
    auto s = f->chunk_statistics(c.column);
    if (!s) return failed(s.error());
    return {to_json(*s, f->schema().columns[*f->schema().find(c.column)].type) + "\n"};
  }
  FAIL("battery line " << c.id << ": unknown op " << c.op);
  return {};
}

}  // namespace

TEST_CASE("result battery: core's texts digest to the checked-in table", "[format][battery]") {
  const auto dir = quire_test::data_dir() / "battery";
  const char *update_env = std::getenv("QUIRE_UPDATE_BATTERY");
  const bool update = update_env && *update_env == '1';

  std::map<std::string, std::vector<uint8_t>> files;
  files["format/golden.quire"] = quire_test::read_bytes(quire_test::data_dir() / "format" / "golden.quire");
  REQUIRE_FALSE(files["format/golden.quire"].empty());
  const std::pair<const char *, std::vector<uint8_t>> built[] = {{"customers-2000.quire", customers_file_bytes()},
                                                                 {"decimals.quire", decimals_file_bytes()}};
  for (const auto &[name, bytes] : built) {
    if (update)
      std::ofstream(dir / name, std::ios::binary)
          .write(reinterpret_cast<const char *>(bytes.data()), static_cast<std::streamsize>(bytes.size()));
    // The writer is stable: this target rebuilds the checked-in file byte for byte.
    INFO("tests/data/battery/" << name);
    CHECK(quire_test::read_bytes(dir / name) == bytes);
    files[std::string("battery/") + name] = bytes;
  }

  const auto calls = read_battery();
  REQUIRE(calls.size() >= 60);
  std::string table =
      "# id\tFNV-1a 64 of the result text\tbytes\tok or the error code (written by tests/result_battery_test.cpp with "
      "QUIRE_UPDATE_BATTERY=1)\n";
  std::map<std::string, std::string> mine;
  for (const auto &c : calls) {
    INFO("battery line " << c.id);
    REQUIRE(files.count(c.file) == 1);
    REQUIRE(mine.count(c.id) == 0);
    auto o = run_call(files[c.file], c);
    std::string row = hex16(fnv1a64(o.text)) + "\t" + std::to_string(o.text.size()) + "\t" + o.status;
    mine[c.id] = row;
    table += c.id + "\t" + row + "\n";
  }
  if (update) std::ofstream(dir / "digests.tsv", std::ios::binary) << table;

  std::map<std::string, std::string> expected;
  std::istringstream in(quire_test::read_text(dir / "digests.tsv"));
  std::string line;
  while (std::getline(in, line)) {
    if (line.empty() || line[0] == '#') continue;
    auto tab = line.find('\t');
    REQUIRE(tab != std::string::npos);
    expected[line.substr(0, tab)] = line.substr(tab + 1);
  }
  size_t agree = 0;
  for (const auto &[id, row] : mine) {
    INFO("battery line " << id << " (digest, bytes, outcome)");
    CHECK(expected[id] == row);
    agree += expected[id] == row;
  }
  CHECK(expected.size() == mine.size());
  std::printf("result battery: %zu calls, %zu agree with tests/data/battery/digests.tsv\n", mine.size(), agree);
}
