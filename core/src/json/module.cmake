# The haswell kernel of the JSON walk: native x86-64 only, its flags on json_parse_haswell.cpp alone.
set(QUIRE_JSON_HASWELL "${CMAKE_CURRENT_LIST_DIR}/json_parse_haswell.cpp")
if(NOT EMSCRIPTEN AND CMAKE_SYSTEM_PROCESSOR MATCHES "x86_64|AMD64|amd64")
  set_source_files_properties("${QUIRE_JSON_HASWELL}" PROPERTIES COMPILE_OPTIONS "-mavx2;-mbmi;-mpclmul;-mlzcnt")
  target_compile_definitions(quire_core PRIVATE QUIRE_HAVE_HASWELL_KERNEL=1)
  # The baseline objects come first in the link (see the caveat in json_parse_haswell.cpp).
  get_target_property(quire_core_sources quire_core SOURCES)
  list(REMOVE_ITEM quire_core_sources "${QUIRE_JSON_HASWELL}")
  list(APPEND quire_core_sources "${QUIRE_JSON_HASWELL}")
  set_property(TARGET quire_core PROPERTY SOURCES ${quire_core_sources})
else()
  target_compile_definitions(quire_core PRIVATE QUIRE_HAVE_HASWELL_KERNEL=0)
endif()
