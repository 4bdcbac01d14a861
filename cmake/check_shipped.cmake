# Checks that a shipped artifact (the `quire` CLI, quire.wasm) carries no benchmark code: none of
# the strings below, which only the benchmark cases, their generators and the harness contain
# (case shapes, the sample generator's names, the reading's field names, the bench bindings), may
# appear among its printable strings (symbol names natively, data and names in wasm).
#   cmake -DARTIFACT=path/to/quire -P cmake/check_shipped.cmake
# A string every build of core carries (an error code's name) must be found, so that a search that
# reads nothing cannot pass.
if(NOT DEFINED ARTIFACT OR NOT EXISTS "${ARTIFACT}")
  message(FATAL_ERROR "check_shipped: ARTIFACT '${ARTIFACT}' does not exist")
endif()
set(forbidden
  "customers-200k"         # format cases' shape
  "records-1mib"           # json cases' shape
  "transaction-bundle"     # fhir cases' shape
  "generate_customers"     # the sample customers' generator
  "customers_ndjson"
  "calls_per_sample"       # a field only the reading writer writes
  "alloc_hooks_present"    # the allocator hooks
  "compare_readings"       # the comparison
  "benchRun"               # the wasm bench bindings
  "benchInput")
string(JOIN "|" pattern ${forbidden})
file(STRINGS "${ARTIFACT}" hits REGEX "${pattern}")
file(STRINGS "${ARTIFACT}" control REGEX "INVALID_JSON")
if(NOT control)
  message(FATAL_ERROR "check_shipped: ${ARTIFACT} has no string INVALID_JSON: the search read nothing, or this is not a build of quire")
endif()
if(hits)
  set(found)
  foreach(word IN LISTS forbidden)
    foreach(hit IN LISTS hits)
      string(FIND "${hit}" "${word}" at)
      if(NOT at EQUAL -1)
        list(APPEND found "${word}")
        break()
      endif()
    endforeach()
  endforeach()
  list(REMOVE_DUPLICATES found)
  message(FATAL_ERROR "check_shipped: ${ARTIFACT} carries benchmark code: ${found}")
endif()
message(STATUS "check_shipped: ${ARTIFACT} has none of: ${forbidden}")
