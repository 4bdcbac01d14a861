// The native memory probe: /proc/self/status for the resident set and its file-backed part (so
// mapped inputs are not mistaken for used memory), mallinfo2 for the heap.
#include <malloc.h>

#include <cstdio>
#include <cstring>

#include "quire/platform.h"

namespace quire {
namespace {

class process_probe final : public memory_probe {
 public:
  memory_reading read() const override {
    memory_reading m;
    if (FILE *f = std::fopen("/proc/self/status", "r")) {
      char line[256];
      while (std::fgets(line, sizeof line, f)) {
        unsigned long long kb = 0;
        if (std::sscanf(line, "VmRSS: %llu kB", &kb) == 1) m.resident_bytes = kb * 1024;
        else if (std::sscanf(line, "RssFile: %llu kB", &kb) == 1) m.file_backed_bytes = kb * 1024;
        else if (std::sscanf(line, "RssAnon: %llu kB", &kb) == 1) m.anonymous_bytes = kb * 1024;
        else if (std::sscanf(line, "VmHWM: %llu kB", &kb) == 1) m.peak_resident_bytes = kb * 1024;
      }
      std::fclose(f);
    }
#if defined(__GLIBC__) && (__GLIBC__ > 2 || (__GLIBC__ == 2 && __GLIBC_MINOR__ >= 33))
    struct mallinfo2 mi = ::mallinfo2();
    m.heap_bytes = mi.uordblks + mi.hblkhd;
#endif
    return m;
  }
};

}  // namespace

const memory_probe &default_memory_probe() {
  static const process_probe probe;
  return probe;
}

}  // namespace quire
