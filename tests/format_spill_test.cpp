// The writer's sort runs through a spill store (write_options::spill): the same bytes as keeping
// them in memory, a store that fails fails the write with its error, and natively the temporary
// spill file (quire::native::spill_file) leaves no name behind.
#include <catch2/catch.hpp>
#include <cstring>
#include <filesystem>
#include <string>

#include "format_sample_data.h"  // bench/shapes: the sample customers
#include "quire/format.h"
#include "test_support.h"

#ifndef __EMSCRIPTEN__
#include <unistd.h>

#include "quire/spill_file.h"
#endif

using namespace quire;
using namespace quire::format;

namespace {

/// A store in memory that counts what goes through it, and can be told to fail.
class counting_store final : public spill_store {
 public:
  std::string bytes;
  uint64_t appends = 0, reads = 0;
  bool fail_append = false, fail_read = false;

  result<uint64_t> append(std::span<const uint8_t> b) override {
    if (fail_append) return quire::error(error_code::IO_ERROR, "no space left (test)");
    ++appends;
    uint64_t at = bytes.size();
    bytes.append(reinterpret_cast<const char *>(b.data()), b.size());
    return at;
  }
  result<void> read(uint64_t offset, std::span<uint8_t> out) override {
    if (fail_read) return quire::error(error_code::IO_ERROR, "cannot read (test)");
    if (offset > bytes.size() || out.size() > bytes.size() - offset)
      return quire::error(error_code::IO_ERROR, "read past the end (test)");
    ++reads;
    std::memcpy(out.data(), bytes.data() + offset, out.size());
    return {};
  }
};

/// Rows wide enough that a 1 MiB sort budget makes about 20 runs of the sorted_by sorter (more
/// than are merged at once, so runs are first merged in groups).
std::vector<customer> wide_customers() {
  auto customers = generate_customers(24000, 21);
  for (auto &c : customers) c.city += std::string(800, static_cast<char>('a' + c.id % 26));
  return customers;
}

result<std::vector<uint8_t>> write_customers(const std::vector<customer> &customers, write_options o) {
  vector_sink sink;
  auto w = writer::create(customer_schema(), o, sink);
  if (!w) return std::move(w).error();
  std::vector<cell> cells;
  for (const auto &c : customers) {
    customer_cells(c, cells);
    auto r = w.value()->append_row(cells);
    if (!r) return std::move(r).error();
  }
  auto f = w.value()->finish();
  if (!f) return std::move(f).error();
  return std::move(sink.bytes);
}

write_options sorted_options(size_t budget) {
  write_options o;
  o.sorted_by = "country";
  o.indexes = {{"email", index_kind::sorted}, {"id", index_kind::hash}, {"name", index_kind::text}};
  o.chunk_rows = 4096;
  o.sort_memory_bytes = budget;
  return o;
}

}  // namespace

TEST_CASE("format spill: runs through a store give the bytes of an in-memory sort", "[format][spill]") {
  auto customers = wide_customers();
  auto reference = write_customers(customers, sorted_options(size_t{1} << 30));  // one run: no merge
  REQUIRE(reference);
  auto in_memory = write_customers(customers, sorted_options(1));  // at least 1 MiB: runs in memory
  REQUIRE(in_memory);
  CHECK(*in_memory == *reference);
  counting_store store;
  auto o = sorted_options(1);
  o.spill = &store;
  auto spilled = write_customers(customers, o);
  REQUIRE(spilled);
  CHECK(*spilled == *reference);
  CHECK(store.appends > 20);
  CHECK(store.reads > 20);
  // The text writer passes the store on as well.
  counting_store again;
  o.spill = &again;
  vector_sink sink;
  auto tw = text_writer::create(text_format::ndjson, o, sink);
  REQUIRE(tw);
  REQUIRE(tw.value()->feed(customers_ndjson(customers)));
  REQUIRE(tw.value()->finish());
  CHECK(sink.bytes == *reference);
  CHECK(again.appends > 20);
}

TEST_CASE("format spill: a store that fails fails the write with its error", "[format][spill]") {
  auto customers = wide_customers();
  for (bool on_read : {false, true}) {
    INFO((on_read ? "reads fail" : "appends fail"));
    counting_store store;
    (on_read ? store.fail_read : store.fail_append) = true;
    auto o = sorted_options(1);
    o.spill = &store;
    auto r = write_customers(customers, o);
    REQUIRE_FALSE(r);
    CHECK(r.code() == error_code::IO_ERROR);
    vector_sink sink;
    auto n = write_ndjson(customers_ndjson(customers), o, sink);
    CHECK(n.code() == error_code::IO_ERROR);
  }
}

#ifndef __EMSCRIPTEN__
TEST_CASE("format spill: the native spill file has no name, reads back what was appended, and fails typed",
          "[format][spill]") {
  auto dir = std::filesystem::temp_directory_path() / ("quire-spill-test-" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  {
    auto f = native::spill_file::create(dir.string());
    REQUIRE(f);
    CHECK(std::filesystem::is_empty(dir));  // unlinked at once
    std::string a(100000, 'a'), b = "bcd";
    auto at_a = f.value()->append({reinterpret_cast<const uint8_t *>(a.data()), a.size()});
    auto at_b = f.value()->append({reinterpret_cast<const uint8_t *>(b.data()), b.size()});
    REQUIRE(at_a);
    REQUIRE(at_b);
    CHECK(*at_a == 0);
    CHECK(*at_b == 100000);
    std::string back(4, '\0');
    REQUIRE(f.value()->read(99999, {reinterpret_cast<uint8_t *>(back.data()), back.size()}));
    CHECK(back == "abcd");
    CHECK(f.value()->read(100000, {reinterpret_cast<uint8_t *>(back.data()), back.size()}).code() ==
          error_code::IO_ERROR);
    // A sorted write through it.
    auto customers = wide_customers();
    auto o = sorted_options(1);
    o.spill = f.value().get();
    auto spilled = write_customers(customers, o);
    REQUIRE(spilled);
    CHECK(*spilled == write_customers(customers, sorted_options(size_t{1} << 30)).value());
    CHECK(f.value()->size() > 100003);
    CHECK(std::filesystem::is_empty(dir));
  }
  CHECK(std::filesystem::is_empty(dir));
  std::filesystem::remove(dir);
  auto missing = native::spill_file::create((dir / "no-such-folder").string());
  CHECK(missing.code() == error_code::IO_ERROR);
  CHECK(missing.error().message.find("no-such-folder") != std::string::npos);
}
#endif
