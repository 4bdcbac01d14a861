// Replays a fuzz target's saved corpus (every file of a folder) as an ordinary test: each input
// must run without a crash, a sanitizer report, a hang or a broken invariant (the targets abort
// or trap on a wrong answer). Names each input before running it, so that the log of a failed
// replay ends with the input that failed (ctest shows the log only then). Prints "N passed, 0 failed".
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <vector>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int main(int argc, char **argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: %s CORPUS_FOLDER\n", argv[0]);
    return 2;
  }
  std::error_code ec;
  size_t count = 0;
  for (const auto &entry : std::filesystem::directory_iterator(argv[1], ec)) {
    if (!entry.is_regular_file()) continue;
    std::fprintf(stderr, "replay: %s\n", entry.path().string().c_str());
    std::ifstream in(entry.path(), std::ios::binary);
    std::vector<uint8_t> bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    LLVMFuzzerTestOneInput(bytes.data(), bytes.size());
    ++count;
  }
  if (ec) {
    std::fprintf(stderr, "cannot read %s: %s\n", argv[1], ec.message().c_str());
    return 1;
  }
  std::printf("%s: %zu passed, 0 failed\n", argv[1], count);
  return count ? 0 : 1;
}
