# simdjson 3.0.1 and zstd 1.5.4, built from the Debian source packages that scripts/bootstrap
# unpacked (and checked by SHA-256) under .deps/src — the same sources for both targets.
set(QUIRE_SIMDJSON_DIR "${QUIRE_DEPS_DIR}/simdjson-3.0.1")
set(QUIRE_ZSTD_DIR "${QUIRE_DEPS_DIR}/zstd-1.5.4")
foreach(dir IN ITEMS "${QUIRE_SIMDJSON_DIR}" "${QUIRE_ZSTD_DIR}")
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
