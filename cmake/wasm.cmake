# Every WebAssembly flag, written once. Compile flags apply to core (through flags.cmake; its
# dependencies are compiled without them, as flags.cmake says why); link flags to the module the npm package loads. See
# docs/architecture.md (section 4, "Emscripten 3.1.6's quirks") for why each quirk is handled as it is.
set(QUIRE_WASM_COMPILE_FLAGS -msimd128)
string(JOIN " " QUIRE_FLAGS_TEXT -std=c++20 ${QUIRE_CORE_OPT_FLAGS} ${QUIRE_WASM_COMPILE_FLAGS})

# Shared by the shipped module and the benchmark module (bench/: quire-bench.mjs/.wasm), which
# differ only in their factory's name.
set(QUIRE_WASM_COMMON_LINK_FLAGS
  --bind
  -O3
  -sALLOW_MEMORY_GROWTH=1
  # Above 2GB this sets Emscripten's CAN_ADDRESS_2GB, and 3.1.6 then rewrites its own glue's heap
  # accesses to unsigned addresses (the `unsignPointers` pass: HEAPU32[p >>> 2], subarray(p >>> 0)).
  # Checked in 3.1.6's quire.mjs: Embind's std::string, UTF8ToString, readLatin1String and
  # integer conversions (unsigned long arguments `>>> 0`, returns `<< 0 >>> 0`) are unsigned; the
  # few signed shifts left (memory_view decoding, type lists) read the C++ stack or static data,
  # which lie below 2^31. What the pass cannot see, the values wasm exports return (i32, signed in
  # JS), the wrapper reads with `>>> 0` (js/src/module.ts). Growth on turns ABORTING_MALLOC off,
  # so malloc returns 0 when memory cannot grow; dlmalloc never asks for 2 GiB or more at once.
  -sMAXIMUM_MEMORY=4GB
  -sMODULARIZE=1
  -sEXPORT_ES6=1
  # Node loads the same ES module through the wrapper, which passes wasmBinary: Emscripten 3.1.6's
  # own Node loader calls fetch() on a file path and uses __dirname (docs/architecture.md, section 4).
  -sENVIRONMENT=web,worker
  -sFILESYSTEM=0
  -sEXPORTED_FUNCTIONS=_malloc,_free
  -sEXPORTED_RUNTIME_METHODS=HEAPU8
  -sINCOMING_MODULE_JS_API=wasmBinary,instantiateWasm,locateFile,print,printErr
)
# The npm module only: no eval in its glue, so a page can load it under a Content-Security-Policy
# without 'unsafe-eval' (Embind then calls each binding through a generic invoker instead of one
# built with new Function; the cost per call is measured in wasm/README.md). The bench module keeps
# the common flags so its readings stay comparable with the earlier ones.
set(QUIRE_WASM_MODULE_LINK_FLAGS ${QUIRE_WASM_COMMON_LINK_FLAGS} -sDYNAMIC_EXECUTION=0 -sEXPORT_NAME=createQuireModule)
set(QUIRE_WASM_BENCH_LINK_FLAGS ${QUIRE_WASM_COMMON_LINK_FLAGS} -sEXPORT_NAME=createQuireBenchModule)

# The Catch2 suite compiled to wasm runs under Node with the real file system (NODERAWFS) so it
# reads the corpus like the native suite does.
set(QUIRE_WASM_TEST_LINK_FLAGS
  -O2
  -fexceptions
  -sALLOW_MEMORY_GROWTH=1
  -sMAXIMUM_MEMORY=4GB
  -sNODERAWFS=1
  -sEXIT_RUNTIME=1
  -sENVIRONMENT=node
)
