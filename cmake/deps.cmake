# simdjson 3.0.1, zstd 1.5.4 and libsodium 1.0.18, built from the Debian source packages that scripts/bootstrap
# unpacked (and checked by SHA-256) under .deps/src — the same sources for both targets.
set(QUIRE_SIMDJSON_DIR "${QUIRE_DEPS_DIR}/simdjson-3.0.1")
set(QUIRE_ZSTD_DIR "${QUIRE_DEPS_DIR}/zstd-1.5.4")
set(QUIRE_SODIUM_DIR "${QUIRE_DEPS_DIR}/libsodium-1.0.18")
foreach(dir IN ITEMS "${QUIRE_SIMDJSON_DIR}" "${QUIRE_ZSTD_DIR}" "${QUIRE_SODIUM_DIR}")
  if(NOT EXISTS "${dir}/.quire-verified")
    message(FATAL_ERROR "${dir} is missing: run scripts/bootstrap first")
  endif()
endforeach()

add_library(quire_simdjson STATIC "${QUIRE_SIMDJSON_DIR}/singleheader/simdjson.cpp")
target_include_directories(quire_simdjson SYSTEM PUBLIC "${QUIRE_SIMDJSON_DIR}/singleheader")
# Core does not throw; simdjson's error codes are mapped to quire's.
target_compile_definitions(quire_simdjson PUBLIC SIMDJSON_EXCEPTIONS=0)
quire_apply_dep_flags(quire_simdjson)

file(GLOB QUIRE_ZSTD_SOURCES
  "${QUIRE_ZSTD_DIR}/lib/common/*.c"
  "${QUIRE_ZSTD_DIR}/lib/compress/*.c"
  "${QUIRE_ZSTD_DIR}/lib/decompress/*.c")
add_library(quire_zstd STATIC ${QUIRE_ZSTD_SOURCES})
target_include_directories(quire_zstd SYSTEM PUBLIC "${QUIRE_ZSTD_DIR}/lib")
# No assembly: the x86-64 Huffman decoder cannot go to wasm, and one code path on both targets
# keeps the readings comparable.
target_compile_definitions(quire_zstd PRIVATE ZSTD_DISABLE_ASM=1 ZSTD_MULTITHREAD=0 XXH_NAMESPACE=ZSTD_)
quire_apply_dep_flags(quire_zstd)

# libsodium: Debian's orig tarball is a git snapshot without `configure`, so its sources are built
# as a list with the defines configure would find. Natively the SSE2/SSSE3/AVX2 and AES-NI code is
# compiled in (each file selects its instructions with target attributes) and chosen at run time
# from the CPU; wasm gets the portable code. version.h is made from its template here.
set(QUIRE_SODIUM_SRC "${QUIRE_SODIUM_DIR}/src/libsodium")
file(GLOB_RECURSE QUIRE_SODIUM_SOURCES "${QUIRE_SODIUM_SRC}/*.c")
set(QUIRE_SODIUM_GENERATED "${CMAKE_BINARY_DIR}/sodium-include")
function(quire_sodium_version_h)
  set(VERSION 1.0.18)
  set(SODIUM_LIBRARY_VERSION_MAJOR 10)
  set(SODIUM_LIBRARY_VERSION_MINOR 3)
  set(SODIUM_LIBRARY_MINIMAL_DEF "")
  configure_file("${QUIRE_SODIUM_SRC}/include/sodium/version.h.in" "${QUIRE_SODIUM_GENERATED}/sodium/version.h" @ONLY)
endfunction()
# The public headers, copied beside the version.h made from its template (it includes export.h
# from its own folder).
file(COPY "${QUIRE_SODIUM_SRC}/include/" DESTINATION "${QUIRE_SODIUM_GENERATED}" PATTERN "*.in" EXCLUDE)
quire_sodium_version_h()
add_library(quire_sodium STATIC ${QUIRE_SODIUM_SOURCES})
target_include_directories(quire_sodium SYSTEM PUBLIC "${QUIRE_SODIUM_GENERATED}")
target_include_directories(quire_sodium PRIVATE "${QUIRE_SODIUM_GENERATED}/sodium")
target_compile_definitions(quire_sodium PRIVATE CONFIGURED=1 NATIVE_LITTLE_ENDIAN=1 HAVE_TI_MODE=1 HAVE_POSIX_MEMALIGN=1)
if(NOT EMSCRIPTEN)
  target_compile_definitions(quire_sodium PRIVATE HAVE_EMMINTRIN_H=1 HAVE_TMMINTRIN_H=1 HAVE_SMMINTRIN_H=1
    HAVE_AVX2INTRIN_H=1 HAVE_WMMINTRIN_H=1 HAVE_CPUID=1 HAVE_INLINE_ASM=1 HAVE_PTHREAD=1 HAVE_MMAP=1 HAVE_MLOCK=1)
endif()
quire_apply_dep_flags(quire_sodium)
