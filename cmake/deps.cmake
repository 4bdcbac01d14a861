# simdjson 3.0.1, zstd 1.5.4, expat 2.5.0 and libsodium 1.0.18, built from the Debian source
# packages that scripts/bootstrap unpacked (and checked by SHA-256) under .deps/src — the same
# sources for both targets.
set(QUIRE_SIMDJSON_DIR "${QUIRE_DEPS_DIR}/simdjson-3.0.1")
set(QUIRE_ZSTD_DIR "${QUIRE_DEPS_DIR}/zstd-1.5.4")
set(QUIRE_EXPAT_DIR "${QUIRE_DEPS_DIR}/expat-2.5.0")
set(QUIRE_SODIUM_DIR "${QUIRE_DEPS_DIR}/libsodium-1.0.18")
foreach(dir IN ITEMS "${QUIRE_SIMDJSON_DIR}" "${QUIRE_ZSTD_DIR}" "${QUIRE_EXPAT_DIR}" "${QUIRE_SODIUM_DIR}")
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
# keeps the readings comparable. Single-threaded: ZSTD_MULTITHREAD is left undefined (zstd tests it
# with #ifdef, so defining it as 0 compiled its multithreaded compressor in; quire never asks for
# workers).
target_compile_definitions(quire_zstd PRIVATE ZSTD_DISABLE_ASM=1 XXH_NAMESPACE=ZSTD_)
quire_apply_dep_flags(quire_zstd)
# In wasm, zstd's compressors that only levels above the default reach (greedy to btultra2: zstd_lazy.c,
# zstd_opt.c) and the parts quire never turns on (long-distance matching, superblocks) are compiled
# for size: the default level 3 (dfast at a page's size), the sort runs' level 1 and every
# decompressor keep -O3. zstd_lazy.c also drops its forced inlining (ZSTD_NO_INLINE): its dozens of
# copies of one match finder, one per hash log, match length and dictionary mode, become one
# (166 -> 11 KiB of code in quire.wasm). The output does not change (levels 1-19 write the same bytes); what a level from
# 4 up costs in time is measured in docs/performance.md ("Session 19"). Natively all stay -O3.
if(EMSCRIPTEN)
  set_source_files_properties("${QUIRE_ZSTD_DIR}/lib/compress/zstd_lazy.c" PROPERTIES COMPILE_OPTIONS "-Os;-DZSTD_NO_INLINE")
  foreach(name IN ITEMS zstd_opt.c zstd_ldm.c zstd_compress_superblock.c)
    set_source_files_properties("${QUIRE_ZSTD_DIR}/lib/compress/${name}" PROPERTIES COMPILE_OPTIONS "-Os")
  endforeach()
endif()

# expat: the parser alone (xmlparse, xmltok, xmlrole), UTF-8, namespaces on, and no XML_DTD: no
# parameter entities and no entity accounting to rely on, because the fhir reader refuses a DOCTYPE
# (and so every entity declaration) from expat's handlers before any is read. Its configuration
# header is written here rather than by its own CMakeLists (which would also build xmlwf, the tests
# and a shared library). XML_POOR_ENTROPY only silences expat's search for an entropy source: the
# reader sets every parser's hash salt itself (fhir_xml_read.cpp).
set(QUIRE_EXPAT_CONFIG_DIR "${CMAKE_BINARY_DIR}/expat-config")
file(WRITE "${QUIRE_EXPAT_CONFIG_DIR}/expat_config.h.new" [=[
/* Written by cmake/deps.cmake for quire: the configuration expat 2.5.0 is built with. */
#ifndef EXPAT_CONFIG_H
#define EXPAT_CONFIG_H 1
#define BYTEORDER 1234
#define HAVE_STDINT_H 1
#define HAVE_STDLIB_H 1
#define HAVE_STRING_H 1
#define HAVE_INTTYPES_H 1
#define HAVE_UNISTD_H 1
#define HAVE_SYS_TYPES_H 1
#define HAVE_SYS_STAT_H 1
#define HAVE_FCNTL_H 1
#define STDC_HEADERS 1
#define XML_NS 1
#define XML_POOR_ENTROPY 1
#define PACKAGE "expat"
#endif
]=])
configure_file("${QUIRE_EXPAT_CONFIG_DIR}/expat_config.h.new" "${QUIRE_EXPAT_CONFIG_DIR}/expat_config.h" COPYONLY)
add_library(quire_expat STATIC
  "${QUIRE_EXPAT_DIR}/expat/lib/xmlparse.c"
  "${QUIRE_EXPAT_DIR}/expat/lib/xmltok.c"
  "${QUIRE_EXPAT_DIR}/expat/lib/xmlrole.c")
target_include_directories(quire_expat SYSTEM PUBLIC "${QUIRE_EXPAT_DIR}/expat/lib")
target_include_directories(quire_expat PRIVATE "${QUIRE_EXPAT_CONFIG_DIR}")
# A static library: no import/export decorations.
target_compile_definitions(quire_expat PUBLIC XML_STATIC=1)
quire_apply_dep_flags(quire_expat)

# libsodium: Debian's orig tarball is a git snapshot without `configure`, so its sources are built
# as a list with the defines configure would find. Natively the SSE2/SSSE3/AVX2 and AES-NI code is
# compiled in (each file selects its instructions with target attributes) and chosen at run time
# from the CPU; wasm gets the portable code. version.h is made from its template here.
set(QUIRE_SODIUM_SRC "${QUIRE_SODIUM_DIR}/src/libsodium")
file(GLOB_RECURSE QUIRE_SODIUM_SOURCES "${QUIRE_SODIUM_SRC}/*.c")
# Its random source is replaced by quire's, which has none (core/src/crypto/sodium_randombytes.c).
list(FILTER QUIRE_SODIUM_SOURCES EXCLUDE REGEX "/randombytes/")
list(APPEND QUIRE_SODIUM_SOURCES "${PROJECT_SOURCE_DIR}/core/src/crypto/sodium_randombytes.c")
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
    HAVE_AVX2INTRIN_H=1 HAVE_WMMINTRIN_H=1 HAVE_CPUID=1 HAVE_INLINE_ASM=1 HAVE_PTHREAD=1 HAVE_MMAP=1 HAVE_MLOCK=1
    # Without these two the CPU check never sees AVX (it reads XCR0 with _xgetbv), so AVX2 is never
    # seen either and ChaCha20 runs its SSSE3 code on a machine that has AVX2.
    HAVE_AVXINTRIN_H=1 HAVE__XGETBV=1)
  # Each SIMD file gets the instructions its own name says, as libsodium's Makefile.am gives them
  # (gcc would take its target pragmas; clang needs the flags); the CPU check picks them at run time.
  foreach(source IN LISTS QUIRE_SODIUM_SOURCES)
    get_filename_component(name "${source}" NAME)
    if(name STREQUAL "runtime.c")
      # (configure would take the inline-asm XGETBV, HAVE_AVX_ASM, which also turns on the
      # sandy2x curve25519 assembly quire neither uses nor builds; runtime.c does not include the
      # header _xgetbv is in, hence -include.)
      set_source_files_properties("${source}" PROPERTIES COMPILE_OPTIONS "-mxsave;-include;immintrin.h")
    elseif(name MATCHES "aesni")
      set_source_files_properties("${source}" PROPERTIES COMPILE_OPTIONS "-mavx;-maes;-mpclmul")
    elseif(name MATCHES "avx2")
      set_source_files_properties("${source}" PROPERTIES COMPILE_OPTIONS "-mavx;-mavx2")
    elseif(name MATCHES "sse41")
      set_source_files_properties("${source}" PROPERTIES COMPILE_OPTIONS "-mssse3;-msse4.1")
    elseif(name MATCHES "ssse3")
      set_source_files_properties("${source}" PROPERTIES COMPILE_OPTIONS "-mssse3")
    elseif(name MATCHES "sse2|xmm6")
      set_source_files_properties("${source}" PROPERTIES COMPILE_OPTIONS "-msse2")
    endif()
  endforeach()
endif()
quire_apply_dep_flags(quire_sodium)
