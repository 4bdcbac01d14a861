# simdjson 3.0.1, zstd 1.5.4 and expat 2.5.0, built from the Debian source packages that
# scripts/bootstrap unpacked (and checked by SHA-256) under .deps/src — the same sources for both
# targets.
set(QUIRE_SIMDJSON_DIR "${QUIRE_DEPS_DIR}/simdjson-3.0.1")
set(QUIRE_ZSTD_DIR "${QUIRE_DEPS_DIR}/zstd-1.5.4")
set(QUIRE_EXPAT_DIR "${QUIRE_DEPS_DIR}/expat-2.5.0")
foreach(dir IN ITEMS "${QUIRE_SIMDJSON_DIR}" "${QUIRE_ZSTD_DIR}" "${QUIRE_EXPAT_DIR}")
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
