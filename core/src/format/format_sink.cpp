// The in-memory sink. Its growth is checked: a file written into a full wasm heap is an
// OUT_OF_MEMORY error the caller can report, not an abort of the whole module (-fno-exceptions).
#include "../common/alloc.h"
#include "quire/format.h"

namespace quire::format {

result<void> vector_sink::write(std::span<const uint8_t> b) {
  if (auto room = quire::detail::grow_or_oom(bytes, uint64_t{bytes.size()} + b.size(), "the written file"); !room)
    return room;
  bytes.insert(bytes.end(), b.begin(), b.end());
  return {};
}

}  // namespace quire::format
