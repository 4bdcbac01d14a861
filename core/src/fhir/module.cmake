# The fhir module's definition tables are generated at build time from the R4 StructureDefinitions
# copied into definitions/ (see definitions/SOURCES.md) by a Node.js script that needs no npm
# packages. Included by core/CMakeLists.txt.
#
# Under emcmake the find root path hides the host's /usr/bin: look there explicitly.
find_program(QUIRE_NODE node PATHS /usr/bin /usr/local/bin NO_CMAKE_FIND_ROOT_PATH REQUIRED)

set(QUIRE_FHIR_DIR "${CMAKE_CURRENT_LIST_DIR}")
set(QUIRE_FHIR_GENERATED "${CMAKE_CURRENT_BINARY_DIR}/fhir_definitions_generated.cpp")
file(GLOB QUIRE_FHIR_DEFINITION_FILES CONFIGURE_DEPENDS
  "${QUIRE_FHIR_DIR}/definitions/*.json" "${QUIRE_FHIR_DIR}/definitions/*.json.gz"
  "${QUIRE_FHIR_DIR}/definitions/resources/*.json.gz")

add_custom_command(
  OUTPUT "${QUIRE_FHIR_GENERATED}"
  COMMAND "${QUIRE_NODE}" "${QUIRE_FHIR_DIR}/gen/fhir_gen_definitions.mjs" "${QUIRE_FHIR_DIR}/definitions" "${QUIRE_FHIR_GENERATED}"
  DEPENDS "${QUIRE_FHIR_DIR}/gen/fhir_gen_definitions.mjs" "${QUIRE_FHIR_DIR}/fhir_tables.h" ${QUIRE_FHIR_DEFINITION_FILES}
  COMMENT "Generating the FHIR R4 definition tables"
  VERBATIM)
target_sources(quire_core PRIVATE "${QUIRE_FHIR_GENERATED}")
# The text blob (names, codes, the invariants' human texts and expressions) is one string literal
# of about 85 KB: beyond the 65,536 bytes -Wpedantic asks of clang (GCC and clang accept it).
set_source_files_properties("${QUIRE_FHIR_GENERATED}" PROPERTIES COMPILE_OPTIONS "-Wno-overlength-strings")
target_include_directories(quire_core PRIVATE "${QUIRE_FHIR_DIR}")
