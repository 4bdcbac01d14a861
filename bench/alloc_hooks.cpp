// Allocator hooks: the benchmark's allocation counts come from here, the same way on both
// targets. malloc and friends are replaced (glibc documents this as "Replacing malloc"; in
// Emscripten the libc versions are weak aliases of dlmalloc) and forward to the libc allocator,
// counting usable sizes (malloc_usable_size), so operator new, simdjson and zstd are all counted.
// Linked into the `quire` CLI and the wasm module only — never into the sanitizer builds.
#include <malloc.h>

#include <cerrno>
#include <cstddef>
#include <cstdint>
#include <cstring>

#include "quire/bench.h"

#ifdef __EMSCRIPTEN__
extern "C" {
void *emscripten_builtin_malloc(size_t);
void emscripten_builtin_free(void *);
void *emscripten_builtin_memalign(size_t, size_t);
void *__libc_realloc(void *, size_t);
}
#define QUIRE_RAW_MALLOC emscripten_builtin_malloc
#define QUIRE_RAW_FREE emscripten_builtin_free
#define QUIRE_RAW_MEMALIGN emscripten_builtin_memalign
#else
extern "C" {
void *__libc_malloc(size_t);
void __libc_free(void *);
void *__libc_realloc(void *, size_t);
void *__libc_memalign(size_t, size_t);
}
#define QUIRE_RAW_MALLOC __libc_malloc
#define QUIRE_RAW_FREE __libc_free
#define QUIRE_RAW_MEMALIGN __libc_memalign
#endif

namespace {

size_t usable(void *p) { return p ? ::malloc_usable_size(p) : 0; }

void *counted(void *p) {
  if (p) quire::bench::detail::count_alloc(usable(p));
  return p;
}

struct announce {
  announce() { quire::bench::detail::alloc_hooks_present(); }
} announce_hooks;

}  // namespace

extern "C" {

void *malloc(size_t size) { return counted(QUIRE_RAW_MALLOC(size)); }

void free(void *p) {
  if (!p) return;
  quire::bench::detail::count_free(usable(p));
  QUIRE_RAW_FREE(p);
}

void *calloc(size_t n, size_t size) {
  if (size && n > SIZE_MAX / size) return nullptr;
  void *p = QUIRE_RAW_MALLOC(n * size);
  if (p) std::memset(p, 0, n * size);
  return counted(p);
}

void *realloc(void *p, size_t size) {
  size_t old = usable(p);
  void *q = __libc_realloc(p, size);
  if (q || size == 0) {
    if (p) quire::bench::detail::count_free(old);
    if (q) quire::bench::detail::count_alloc(usable(q));
  }
  return q;
}

void *memalign(size_t alignment, size_t size) { return counted(QUIRE_RAW_MEMALIGN(alignment, size)); }

void *aligned_alloc(size_t alignment, size_t size) { return counted(QUIRE_RAW_MEMALIGN(alignment, size)); }

int posix_memalign(void **out, size_t alignment, size_t size) {
  if (alignment < sizeof(void *) || (alignment & (alignment - 1))) return EINVAL;
  void *p = QUIRE_RAW_MEMALIGN(alignment, size);
  if (!p) return ENOMEM;
  *out = counted(p);
  return 0;
}

void *valloc(size_t size) { return counted(QUIRE_RAW_MEMALIGN(4096, size)); }

}  // extern "C"
