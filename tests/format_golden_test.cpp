// Native and wasm write the same bytes and answer the same: a small file's size and checksum, and
// the answers of a set of queries, are checked in (tests/data/format/golden.txt). Set
// QUIRE_UPDATE_GOLDEN=1 to rewrite the file after a deliberate format change.
#include <catch2/catch.hpp>
#include <cstdlib>
#include <fstream>
#include <string>

#include "format_sample_data.h"  // bench/shapes: the sample customers
#include "quire/format.h"
#include "test_support.h"

using namespace quire;
using namespace quire::format;

namespace {

using quire_test::crc32c;

/// The answers of the golden queries from `bytes`, after a first line of its size and checksum.
std::string answers_of(const std::vector<uint8_t> &bytes) {
  std::string report =
      "bytes " + std::to_string(bytes.size()) + " crc32c " + std::to_string(crc32c(bytes.data(), bytes.size())) + "\n";
  auto f = file::open(borrow_bytes(bytes));
  REQUIRE(f);
  const char *wheres[] = {"id = 1234",
                          "country = 'NA' and age > 80",
                          "name contains 'Okafor' and balance < 20000",
                          "email startsWith 'ana.' or city in ('Lagos', 'Lima')",
                          "not (age between 20 and 90)",
                          "created_at >= '2023-06-01T00:00:00Z' and country != 'US'"};
  for (const char *w : wheres) {
    query q;
    q.where = parse_expression(w).value();
    q.limit = 5;
    auto rows = f->query(q);
    REQUIRE(rows);
    query all;
    all.where = q.where;
    auto count = f->count(all);
    REQUIRE(count);
    auto agg = f->aggregate("balance", all);
    REQUIRE(agg);
    report += std::string("where ") + w + "\ncount " + std::to_string(*count) + " aggregate " + to_json(*agg) + "\n" +
              rows->json;
  }
  query newest;
  newest.order_by = "created_at";
  newest.descending = true;
  newest.limit = 3;
  newest.columns = {"id", "created_at", "balance"};
  report += "newest\n" + f->query(newest).value().json;
  report += "storage " + to_json(f->storage().value()) + "\n";
  return report;
}

std::string golden_report(std::vector<uint8_t> &file_bytes) {
  auto customers = generate_customers(2000, 42);
  write_options o;
  o.chunk_rows = 512;
  o.sorted_by = "country";
  o.indexes = {
      {"id", index_kind::hash}, {"email", index_kind::sorted}, {"name", index_kind::text}, {"age", index_kind::sorted}};
  vector_sink sink;
  auto n = write_ndjson(customers_ndjson(customers), o, sink);
  REQUIRE(n);
  file_bytes = sink.bytes;
  return answers_of(sink.bytes);
}

}  // namespace

TEST_CASE("format golden: the same bytes and answers on every target", "[format][golden]") {
  auto path = quire_test::data_dir() / "format" / "golden.txt";
  auto sample = quire_test::data_dir() / "format" / "golden.quire";
  std::vector<uint8_t> bytes;
  std::string report = golden_report(bytes);
  if (const char *update = std::getenv("QUIRE_UPDATE_GOLDEN"); update && *update == '1') {
    std::ofstream(path, std::ios::binary) << report;
    std::ofstream(sample, std::ios::binary)
        .write(reinterpret_cast<const char *>(bytes.data()), static_cast<std::streamsize>(bytes.size()));
  }
  std::string expected = quire_test::read_text(path);
  REQUIRE_FALSE(expected.empty());
  CHECK(report == expected);
  // The checked-in file (read by the npm package's tests) is what this writer makes.
  CHECK(quire_test::read_bytes(sample) == bytes);
}

TEST_CASE("format golden: the version-3 file of before version 4 answers as it did", "[format][golden][v1]") {
  // tests/data/format/v3: golden.quire and golden.txt as the writer of 64ab8ad made them (version 3:
  // column directories and 64-byte page text bounds). Read now, every answer and the storage report
  // (from its page directories) are the same bytes.
  const auto dir = quire_test::data_dir() / "format" / "v3";
  const auto bytes = quire_test::read_bytes(dir / "golden.quire");
  REQUIRE(bytes.size() > 8);
  CHECK(bytes[6] == 3);
  CHECK(answers_of(bytes) == quire_test::read_text(dir / "golden.txt"));
  auto f = file::open(borrow_bytes(bytes));
  REQUIRE(f);
  CHECK(f->verify());
}

TEST_CASE("format golden: version 4's storage report from column summaries is version 3's from page directories",
          "[format][golden][v1]") {
  // The same rows written now (version 4) and by the writer of 64ab8ad (version 3, checked in): per
  // column the same pages, encodings, encoded and data bytes and nulls, though this one reads no
  // page directory for them.
  std::vector<uint8_t> bytes;
  golden_report(bytes);
  auto now = file::open(borrow_bytes(bytes));
  REQUIRE(now);
  CHECK(now->info().version == 4);
  const auto old_bytes = quire_test::read_bytes(quire_test::data_dir() / "format" / "v3" / "golden.quire");
  auto old = file::open(borrow_bytes(old_bytes));
  REQUIRE(old);
  const auto before = old->counters();
  auto a = now->storage();
  auto b = old->storage();
  REQUIRE(a);
  REQUIRE(b);
  REQUIRE(a->columns.size() == b->columns.size());
  for (size_t c = 0; c < a->columns.size(); ++c) {
    INFO(a->columns[c].name);
    CHECK(a->columns[c].pages == b->columns[c].pages);
    CHECK(a->columns[c].encodings == b->columns[c].encodings);
    CHECK(a->columns[c].encoded_bytes == b->columns[c].encoded_bytes);
    // A dictionary of at most 32 KiB is stored raw since 64ab8ad's writer (docs/format.md §2): such
    // a column's stored bytes are the old ones plus what zstd saved on its dictionaries.
    bool dictionary = false;
    for (const auto &[name, pages] : a->columns[c].encodings) dictionary |= name.rfind("DICT+", 0) == 0;
    if (dictionary) CHECK(a->columns[c].data_bytes >= b->columns[c].data_bytes);
    else CHECK(a->columns[c].data_bytes == b->columns[c].data_bytes);
    CHECK(a->columns[c].nulls == b->columns[c].nulls);
    CHECK(a->columns[c].pages > 0);
  }
  // Directories read: version 4 the column summaries alone (one a column), version 3 also every
  // chunk's page directory of every column.
  const uint64_t columns = a->columns.size();
  CHECK(now->counters().directory_pages == columns);
  CHECK(old->counters().directory_pages - before.directory_pages == columns * (1 + old->info().chunks));
}

TEST_CASE("format golden: every compression level writes the same bytes on every target", "[format][golden][levels]") {
  // At the default page size levels 1-19 reach every zstd compressor (fast, dfast, greedy, lazy,
  // lazy2, btlazy2, btopt, btultra, btultra2): the wasm build compiles those above the default
  // level for size (cmake/deps.cmake), which must not change a byte. Each line is checked in
  // (tests/data/format/golden-levels.txt, written by the native build with QUIRE_UPDATE_GOLDEN=1).
  // And with 256 KiB pages at the levels of zstd's row-hash match finder (5-12), which zstd 1.5.4
  // left to itself turns on from a window of 2^15 with SSE2 and from 2^18 without (wasm): the
  // writer makes the choice explicitly, by the SSE2 rule (format_page_codec.cpp, compress_page).
  auto path = quire_test::data_dir() / "format" / "golden-levels.txt";
  const std::string ndjson = customers_ndjson(generate_customers(2000, 42));
  std::string report;
  auto write_at = [&](int level, uint32_t page_bytes, const std::string &label) {
    write_options o;
    o.chunk_rows = 2000;
    o.compression_level = level;
    if (page_bytes) o.page_bytes = page_bytes;
    vector_sink sink;
    REQUIRE(write_ndjson(ndjson, o, sink));
    report += label + std::to_string(level) + " bytes " + std::to_string(sink.bytes.size()) + " crc32c " +
              std::to_string(crc32c(sink.bytes.data(), sink.bytes.size())) + "\n";
  };
  for (int level = 1; level <= 19; ++level) write_at(level, 0, "level ");
  for (int level = 5; level <= 12; ++level) write_at(level, 256 * 1024, "256 KiB pages, level ");
  if (const char *update = std::getenv("QUIRE_UPDATE_GOLDEN"); update && *update == '1')
    std::ofstream(path, std::ios::binary) << report;
  std::string expected = quire_test::read_text(path);
  REQUIRE_FALSE(expected.empty());
  CHECK(report == expected);
}
