// Write options by name: the one parser behind the npm package's object and the CLI's flags.
#include <catch2/catch.hpp>

#include <string>

#include "quire/format.h"

using namespace quire;
using namespace quire::format;

TEST_CASE("format apply_write_option: the npm key and the CLI flag set the same field", "[format][options]") {
  write_options a, b;
  input_options ia, ib;
  REQUIRE(apply_write_option("chunkRows", "1000", a, ia).ok());
  REQUIRE(apply_write_option("--chunk-rows", "1e3", b, ib).ok());
  CHECK(a.chunk_rows == 1000);
  CHECK(b.chunk_rows == 1000);
  REQUIRE(apply_write_option("--level", "9", a, ia).ok());
  CHECK(a.compression_level == 9);
  REQUIRE(apply_write_option("--page-bytes", "4096", a, ia).ok());
  CHECK(a.page_bytes == 4096);
  REQUIRE(apply_write_option("--sort", "name", a, ia).ok());
  CHECK(a.sorted_by == "name");
  REQUIRE(apply_write_option("--index", "a:b:hash", a, ia).ok());
  REQUIRE(a.indexes.size() == 1);
  CHECK(a.indexes[0].column == "a:b");
  CHECK(a.indexes[0].kind == index_kind::hash);
  REQUIRE(apply_write_option("inferRows", "0", a, ia).ok());
  CHECK(ia.infer_rows == 1);
}

TEST_CASE("format apply_write_option: out of range is the writer's INVALID_ARGUMENT, never clamped",
          "[format][options]") {
  auto refused = [](std::string_view name, std::string_view text) {
    write_options o;
    input_options in;
    auto r = apply_write_option(name, text, o, in);
    REQUIRE_FALSE(r.ok());
    CHECK(r.code() == error_code::INVALID_ARGUMENT);
    return r.error().message;
  };
  CHECK(refused("--chunk-rows", "0") == "chunk_rows must be 1..16777216");
  CHECK(refused("--chunk-rows", "16777217") == "chunk_rows must be 1..16777216");
  CHECK(refused("--level", "99") == "compression_level must be 1..19");
  CHECK(refused("compressionLevel", "0") == "compression_level must be 1..19");
  CHECK(refused("--page-bytes", "100") == "page_bytes must be 512..16 MiB");
  CHECK(refused("--chunk-rows", "4294967296") == "--chunk-rows takes a whole number up to 4294967295");
  CHECK(refused("--level", "-1") == "--level takes a whole number up to 4294967295");
  CHECK(refused("--level", "2.5") == "--level takes a whole number up to 4294967295");
  CHECK(refused("--level", "many") == "--level takes a whole number up to 4294967295");
  CHECK(refused("--index", "name") == "--index takes COLUMN:sorted, COLUMN:hash or COLUMN:text");
  CHECK(refused("--index", "name:btree") == "--index takes COLUMN:sorted, COLUMN:hash or COLUMN:text");
  CHECK(refused("--bogus", "1") == "unknown write option '--bogus'");
}

TEST_CASE("format apply_write_option: the writer refuses what the option refuses, in the same words",
          "[format][options]") {
  // The npm package's object leaves the range to writer::create: the same message either way.
  write_options o;
  input_options in;
  REQUIRE(parse_write_options_json("{\"chunkRows\":0}", o, in).ok());
  schema s;
  s.columns.push_back({"id", column_type::integer});
  vector_sink sink;
  auto w = writer::create(s, o, sink);
  REQUIRE_FALSE(w.ok());
  CHECK(w.code() == error_code::INVALID_ARGUMENT);
  CHECK(w.error().message == "chunk_rows must be 1..16777216");

  write_options cli;
  auto flag = apply_write_option("--chunk-rows", "0", cli, in);
  REQUIRE_FALSE(flag.ok());
  CHECK(flag.error().describe() == w.error().describe());
}

TEST_CASE("format parse_write_options_json: members keep their offsets and their words", "[format][options]") {
  write_options o;
  input_options in;
  auto r = parse_write_options_json("{\"chunkRows\":\"5\"}", o, in);
  REQUIRE_FALSE(r.ok());
  CHECK(r.error().message == "chunkRows takes a whole number up to 4294967295");
  CHECK(r.error().offset == 13);
  auto flag = parse_write_options_json("{\"--chunk-rows\":5}", o, in);
  REQUIRE_FALSE(flag.ok());
  CHECK(flag.error().message == "unknown write option '--chunk-rows'");
  REQUIRE(parse_write_options_json("{\"chunkRows\":100.0,\"sortedBy\":\"id\",\"compressionLevel\":null}", o, in).ok());
  CHECK(o.chunk_rows == 100);
  CHECK(o.sorted_by == "id");
  CHECK(o.compression_level == DEFAULT_COMPRESSION_LEVEL);
}
