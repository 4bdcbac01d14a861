// The wasm platform layer: the memory probe reads the wasm heap (dlmalloc's mallinfo and the size
// of linear memory); tasks run one after the other on the calling thread (the module is built
// without threads: Emscripten's pthreads need SharedArrayBuffer, which a page has only when it is
// cross-origin isolated). Bytes from JavaScript arrive as memory byte sources (core's borrow_bytes):
// the wrapper copies them into the heap once, with padding.
#include <emscripten/heap.h>
#include <malloc.h>

#include "quire/platform.h"

namespace quire {
namespace {

class heap_probe final : public memory_probe {
 public:
  memory_reading read() const override {
    memory_reading m;
    struct mallinfo mi = ::mallinfo();
    // Emscripten's <malloc.h> declares the fields int while dlmalloc fills them from its 32-bit
    // size_t: past 2 GiB in use the int is negative, so it is read back as the unsigned it was.
    m.heap_bytes = static_cast<uint32_t>(mi.uordblks);
    m.heap_capacity_bytes = emscripten_get_heap_size();
    m.resident_bytes = m.heap_capacity_bytes;
    m.anonymous_bytes = m.heap_capacity_bytes;
    m.peak_resident_bytes = m.heap_capacity_bytes;
    return m;
  }
};

}  // namespace

const memory_probe &default_memory_probe() {
  static const heap_probe probe;
  return probe;
}

namespace {
class calling_thread final : public task_runner {
 public:
  unsigned concurrency() const noexcept override { return 1; }
  void run(size_t count, const std::function<void(size_t)> &work) const override {
    for (size_t i = 0; i < count; ++i) work(i);
  }
};
}  // namespace

const task_runner &default_task_runner() {
  static const calling_thread runner;
  return runner;
}

}  // namespace quire
