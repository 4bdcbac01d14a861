// The platform layer: memory byte sources on both targets; native file sources (read, mmap,
// prewarm) proven by /proc/self/maps; the memory probe.
#include <catch2/catch.hpp>
#include <cstdio>
#include <fstream>
#include <string>

#include "quire/json.h"
#include "quire/platform.h"
#include "test_support.h"

#ifndef __EMSCRIPTEN__
#include <unistd.h>

#include "quire/file_source.h"
#endif

using namespace quire;

TEST_CASE("platform: memory sources read ranges and refuse reads past the end") {
  std::vector<uint8_t> bytes{1, 2, 3, 4, 5};
  auto src = borrow_bytes(bytes);
  CHECK(src->size() == 5);
  CHECK(src->kind() == "memory");
  CHECK_FALSE(src->mapped());
  std::vector<uint8_t> out(2);
  REQUIRE(src->read_at(3, out));
  CHECK(out == std::vector<uint8_t>{4, 5});
  CHECK(src->read_at(4, out).code() == error_code::OUT_OF_RANGE);
  CHECK(src->read_at(6, std::span<uint8_t>()).code() == error_code::OUT_OF_RANGE);
}

// Under AddressSanitizer, malloc is ASan's and mallinfo2 (glibc's) does not see it: the probe's
// resident figure must show the block instead.
#if defined(__SANITIZE_ADDRESS__)
#define QUIRE_TEST_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define QUIRE_TEST_ASAN 1
#endif
#endif

TEST_CASE("platform: the memory probe sees the heap grow") {
  const auto &probe = default_memory_probe();
  auto before = probe.read();
  std::vector<char> block(32 << 20, 1);
  auto during = probe.read();
#ifdef QUIRE_TEST_ASAN
  CHECK(during.resident_bytes >= before.resident_bytes + (16u << 20));
#else
  CHECK(during.heap_bytes >= before.heap_bytes + (32u << 20));
#endif
  CHECK(block[12345] == 1);
}

#ifndef __EMSCRIPTEN__
namespace {

std::string temp_file(const std::string &name, const std::string &content) {
  auto path = std::filesystem::temp_directory_path() / ("quire_test_" + std::to_string(::getpid()) + "_" + name);
  std::ofstream(path, std::ios::binary) << content;
  return path.string();
}

bool in_proc_maps(const std::string &path) {
  return quire_test::read_text("/proc/self/maps").find(path) != std::string::npos;
}

}  // namespace

TEST_CASE("platform: mmap really maps, and gives the same bytes as read") {
  std::string content;
  for (int i = 0; i < 100000; ++i) content += std::to_string(i) + ",";
  auto path = temp_file("mapped.txt", content);
  auto canonical = std::filesystem::canonical(path).string();

  auto mapped = native::open_file(path, {native::load_mode::mmap});
  REQUIRE(mapped);
  CHECK(mapped.value()->mapped());
  CHECK(mapped.value()->kind() == "mmap");
  CHECK(mapped.value()->fallback_reason().empty());
  CHECK(in_proc_maps(canonical));

  auto read = native::open_file(path, {native::load_mode::read});
  REQUIRE(read);
  CHECK_FALSE(read.value()->mapped());
  CHECK(read.value()->kind() == "read");
  auto a = mapped.value()->contiguous();
  auto b = read.value()->contiguous();
  REQUIRE(a.size() == content.size());
  REQUIRE(b.size() == content.size());
  CHECK(std::equal(a.begin(), a.end(), b.begin()));
  std::vector<uint8_t> range(10);
  REQUIRE(mapped.value()->read_at(1000, range));
  CHECK(std::string(range.begin(), range.end()) == content.substr(1000, 10));

  mapped = native::open_file(path, {native::load_mode::read});  // releases the mapping
  CHECK_FALSE(in_proc_maps(canonical));
  std::filesystem::remove(path);
}

TEST_CASE("platform: prewarm maps at once and warms in the background") {
  std::string content(8 << 20, 'x');
  auto path = temp_file("prewarm.bin", content);
  auto src = native::open_file(path, {native::load_mode::prewarm});
  REQUIRE(src);
  CHECK(src.value()->mapped());
  CHECK(src.value()->kind() == "prewarm");
  for (int i = 0; i < 5000 && !native::prewarm_done(*src.value()); ++i) usleep(1000);
  CHECK(native::prewarm_done(*src.value()));
  auto m = default_memory_probe().read();
  CHECK(m.file_backed_bytes >= (8u << 20));  // the warmed pages count as file-backed, not anonymous
  CHECK(m.resident_bytes >= m.file_backed_bytes);
  src = native::open_file(path);  // the destructor stops and joins the warmer
  std::filesystem::remove(path);
}

TEST_CASE("platform: a failed mapping falls back to reading, with the reason") {
  auto path = temp_file("fallback.json", "[1,2,3]");
  native::open_options opts{native::load_mode::mmap, true};
  auto src = native::open_file(path, opts);
  REQUIRE(src);
  CHECK_FALSE(src.value()->mapped());
  CHECK(src.value()->kind() == "read");
  CHECK(src.value()->fallback_reason() == "mmap failed: simulated failure");
  CHECK(json::check(*src.value())->numbers == 3);

  auto empty = temp_file("empty.json", "");
  auto e = native::open_file(empty, {native::load_mode::mmap});
  REQUIRE(e);
  CHECK_FALSE(e.value()->mapped());
  CHECK(e.value()->fallback_reason() == "an empty file cannot be mapped");
  CHECK(json::check(*e.value()).code() == error_code::EMPTY_INPUT);
  std::filesystem::remove(path);
  std::filesystem::remove(empty);
}

TEST_CASE("platform: missing files and directories are typed errors") {
  CHECK(native::open_file("/nonexistent/quire.json").code() == error_code::FILE_NOT_FOUND);
  CHECK(native::open_file(std::filesystem::temp_directory_path().string()).code() == error_code::NOT_A_FILE);
  CHECK(native::open_file("/etc/hostname/x", {native::load_mode::mmap}).code() == error_code::FILE_NOT_FOUND);
}

TEST_CASE("platform: a mapped file ending mid-page is parsed in place, one ending on a page edge is copied") {
  auto path = temp_file("page.json", "[1.0]");
  auto src = native::open_file(path, {native::load_mode::mmap});
  REQUIRE(src);
  CHECK(src.value()->tail_padding() == native::page_size() - 5);
  auto doc = json::parse(*src.value());
  REQUIRE(doc);
  CHECK(doc->input().data() == reinterpret_cast<const char *>(src.value()->contiguous().data()));

  std::string edge = "[" + std::string(native::page_size() - 3, ' ') + "1]";
  auto edge_path = temp_file("edge.json", edge);
  auto edge_src = native::open_file(edge_path, {native::load_mode::mmap});
  REQUIRE(edge_src);
  CHECK(edge_src.value()->tail_padding() == 0);
  auto edge_doc = json::parse(*edge_src.value());
  REQUIRE(edge_doc);
  CHECK(edge_doc->input().data() != reinterpret_cast<const char *>(edge_src.value()->contiguous().data()));
  std::filesystem::remove(path);
  std::filesystem::remove(edge_path);
}
#endif
