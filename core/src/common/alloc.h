// Growing a buffer whose size follows the input without letting a failed allocation end the
// process. Core is compiled with -fno-exceptions: when `operator new` fails inside
// std::vector/std::string growth there is nothing to catch, so libc++ (wasm) aborts the whole
// module and libstdc++'s std::bad_alloc (native) reaches std::terminate. A buffer sized from the
// input (a document's tape, an input copy, a page to decompress) is where that happens first, and
// the caller should see OUT_OF_MEMORY and be able to make the next call.
//
// reserve_or_oom(c, n) asks the allocator first with a non-throwing request of the same size
// (std::malloc), frees it, and only then lets the container allocate. That is sound because:
// - wasm (Emscripten's dlmalloc, single-threaded, MORECORE_CANNOT_TRIM): a successful probe has
//   grown linear memory far enough, wasm memory never shrinks and dlmalloc never gives memory back,
//   so the freed chunk (merged into the top chunk or a free bin) satisfies the container's request
//   of the same size at once. A failed probe is malloc returning 0 (ALLOW_MEMORY_GROWTH turns
//   Emscripten's ABORTING_MALLOC off): memory.grow was refused, the 4 GB maximum is reached, or
//   the request is 2 GiB or more (dlmalloc never asks sbrk for HALF_MAX_SIZE_T or more at once).
// - native (glibc): a request this large is served by mmap and given back by munmap; the same
//   request made right after succeeds unless something else took the address space or commit
//   charge in between.
// Limits: another thread allocating between the probe and the reserve can still make the
// container's allocation fail (wasm builds are single-threaded; native core calls are not
// concurrent on one buffer, but a process may run other threads). Natively, Linux's default
// overcommit lets malloc succeed for memory it cannot back, and the OOM killer acts when pages are
// touched: the probe catches absurd sizes, `ulimit -v` and overcommit_memory=2 refusals, not
// physical exhaustion. Small requests (below PROBE_THRESHOLD) are not probed: they stay cheap on
// hot paths, and a heap that cannot give a few KiB is out of memory whatever this does.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdlib>
#include <limits>
#include <string>
#include <string_view>

#include "quire/error.h"
#include "quire/result.h"

namespace quire::detail {

/// Requests smaller than this are not probed before growth (see above).
inline constexpr size_t PROBE_THRESHOLD = size_t{64} * 1024;

/// Bytes added to the probe. std::string rounds its capacity up (libc++ to 16 bytes, plus the
/// terminator) and allocators add a chunk header, so the probe must ask for more than the container
/// will; and the call goes on to make small allocations with operator new, unprobed, which abort
/// when they fail: a probe that succeeds leaves this much free for them. (The npm wrapper keeps
/// the same headroom after each input copy, js/src/module.ts.)
inline constexpr size_t PROBE_SLACK = size_t{16} * 1024 * 1024;

/// The OUT_OF_MEMORY error for `bytes` bytes of `what`.
inline quire::error out_of_memory(uint64_t bytes, std::string_view what) {
  return quire::error(error_code::OUT_OF_MEMORY,
                      "cannot allocate " + std::to_string(bytes) + " bytes for " + std::string(what));
}

/// std::malloc, called through a volatile pointer: compilers may delete a malloc whose result is
/// only freed and assume it succeeded (clang does at -O3, on both targets), which would make the
/// probe below always say yes.
inline void *(*volatile probe_malloc)(size_t) = std::malloc;

/// Whether `bytes` bytes can be allocated now: one malloc that is freed at once.
inline bool can_allocate(size_t bytes) noexcept {
  if (bytes > std::numeric_limits<size_t>::max() - PROBE_SLACK) return false;
  void *p = probe_malloc(bytes + PROBE_SLACK);
  if (!p) return false;
  std::free(p);
  return true;
}

/// Makes `c` (a std::vector or std::string) hold at least `n` elements without reallocating, or
/// returns OUT_OF_MEMORY (naming `what`) and leaves `c` unchanged. The element count is the
/// caller's: an `n` computed from the input is checked here against max_size(), so a count that
/// would overflow is an error, not a length_error that -fno-exceptions turns into an abort.
template <typename Container>
result<void> reserve_or_oom(Container &c, uint64_t n, std::string_view what) {
  if (n <= c.capacity()) return {};
  using value_type = typename Container::value_type;
  constexpr uint64_t element = sizeof(value_type);
  if (n > c.max_size() || n > std::numeric_limits<size_t>::max() / element) {
    const uint64_t wanted =
        n > std::numeric_limits<uint64_t>::max() / element ? std::numeric_limits<uint64_t>::max() : n * element;
    return out_of_memory(wanted, what);
  }
  const size_t bytes = static_cast<size_t>(n) * sizeof(value_type);
  if (bytes >= PROBE_THRESHOLD && !can_allocate(bytes)) return out_of_memory(bytes, what);
  c.reserve(static_cast<size_t>(n));
  return {};
}

/// Makes room for `n` elements in a buffer that keeps growing (a line gathered from chunks):
/// doubles the capacity like the container would, and when the doubled size cannot be had, asks
/// for exactly `n` before giving up with OUT_OF_MEMORY.
template <typename Container>
result<void> grow_or_oom(Container &c, uint64_t n, std::string_view what) {
  if (n <= c.capacity()) return {};
  const uint64_t doubled = std::max<uint64_t>(n, uint64_t{c.capacity()} * 2);
  if (doubled > n && reserve_or_oom(c, doubled, what)) return {};
  return reserve_or_oom(c, n, what);
}

/// reserve_or_oom(c, n) and then c.resize(n) (which then cannot reallocate).
template <typename Container>
result<void> resize_or_oom(Container &c, uint64_t n, std::string_view what) {
  auto r = reserve_or_oom(c, n, what);
  if (!r) return r;
  c.resize(static_cast<size_t>(n));
  return {};
}

}  // namespace quire::detail
