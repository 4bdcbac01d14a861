# The FHIR R4 definition tables are generated at build time from the R4 StructureDefinitions
# copied into definitions/ (see definitions/SOURCES.md) by a Node.js script that needs no npm
# packages. Included by core/CMakeLists.txt.
#
# Under emcmake the find root path hides the host's /usr/bin: look there explicitly.
find_program(QUIRE_NODE node PATHS /usr/bin /usr/local/bin NO_CMAKE_FIND_ROOT_PATH REQUIRED)

set(QUIRE_R4_DIR "${CMAKE_CURRENT_LIST_DIR}")
set(QUIRE_R4_GENERATED "${CMAKE_CURRENT_BINARY_DIR}/r4_definitions_generated.cpp")
file(GLOB QUIRE_R4_DEFINITION_FILES CONFIGURE_DEPENDS
  "${QUIRE_R4_DIR}/definitions/*.json" "${QUIRE_R4_DIR}/definitions/*.json.gz"
  "${QUIRE_R4_DIR}/definitions/resources/*.json.gz")

add_custom_command(
  OUTPUT "${QUIRE_R4_GENERATED}"
  COMMAND "${QUIRE_NODE}" "${QUIRE_R4_DIR}/gen/r4_gen_definitions.mjs" "${QUIRE_R4_DIR}/definitions" "${QUIRE_R4_GENERATED}"
  DEPENDS "${QUIRE_R4_DIR}/gen/r4_gen_definitions.mjs" "${QUIRE_R4_DIR}/r4_tables.h" ${QUIRE_R4_DEFINITION_FILES}
  COMMENT "Generating the FHIR R4 definition tables"
  VERBATIM)
target_sources(quire_core PRIVATE "${QUIRE_R4_GENERATED}")
# The generated file lives in the build tree: it alone finds r4_tables.h through an include folder
# (the module's own sources include it by its path, as every module does).
# The text blob (names, codes, the invariants' human texts and expressions) is one string literal
# of about 85 KB: beyond the 65,536 bytes -Wpedantic asks of clang (GCC and clang accept it).
set_source_files_properties("${QUIRE_R4_GENERATED}" PROPERTIES
  INCLUDE_DIRECTORIES "${QUIRE_R4_DIR}"
  COMPILE_OPTIONS "-Wno-overlength-strings")
