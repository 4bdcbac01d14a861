# Flags core is compiled with — the same on both targets wherever the toolchain allows. They are
# recorded in the build (quire::version().flags) and in every benchmark reading.
set(QUIRE_CORE_OPT_FLAGS -O3 -fno-exceptions)
set(QUIRE_WARNING_FLAGS -Wall -Wextra -Wpedantic)
if(QUIRE_WERROR)
  list(APPEND QUIRE_WARNING_FLAGS -Werror)
endif()
set(QUIRE_SANITIZER_FLAGS)
if(QUIRE_SANITIZE AND NOT EMSCRIPTEN)
  set(QUIRE_SANITIZER_FLAGS -fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=undefined)
endif()

# quire_apply_core_flags(target): optimisation, warnings and sanitizers of core code.
function(quire_apply_core_flags target)
  target_compile_options(${target} PRIVATE ${QUIRE_CORE_OPT_FLAGS} ${QUIRE_WARNING_FLAGS} ${QUIRE_SANITIZER_FLAGS}
                                           ${QUIRE_WASM_COMPILE_FLAGS})
  target_link_options(${target} PUBLIC ${QUIRE_SANITIZER_FLAGS})
endfunction()

# Third-party code gets the same optimisation but not our warnings, and in wasm not -msimd128:
# measured, it made zstd's code 39 KiB larger (422 -> 461 KiB, 11 KiB gzipped) with no consistent
# difference in speed (docs/performance.md, "What quire.wasm is made of"). Core's SIMD128 code
# is its own (cmake/wasm.cmake sets QUIRE_WASM_COMPILE_FLAGS, which quire_apply_core_flags reads).
function(quire_apply_dep_flags target)
  target_compile_options(${target} PRIVATE ${QUIRE_CORE_OPT_FLAGS} ${QUIRE_SANITIZER_FLAGS} -w)
endfunction()

string(JOIN " " QUIRE_FLAGS_TEXT -std=c++20 ${QUIRE_CORE_OPT_FLAGS} ${QUIRE_WASM_COMPILE_FLAGS} ${QUIRE_SANITIZER_FLAGS})
