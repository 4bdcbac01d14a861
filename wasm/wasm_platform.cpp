// The wasm platform layer: the memory probe reads the wasm heap (dlmalloc's mallinfo and the size
// of linear memory). Bytes from JavaScript arrive as memory byte sources (core's borrow_bytes):
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

}  // namespace quire
