// The JSON walk compiled for simdjson's haswell kernel (AVX2, BMI, PCLMUL, LZCNT). Built natively
// on x86-64 only, with those flags for this file alone (core/src/json/module.cmake), and chosen at
// run time by json_parse.cpp when the CPU has them. On-Demand in simdjson 3.0.1 only exists for
// the kernel a file is compiled for, so this is how native quire gets SIMD speed while one binary
// still runs on any x86-64.
//
// Caveat: inline functions this file shares with the rest of core (std::vector, simdjson's
// generic helpers) are also emitted here with AVX2 enabled; the linker keeps the first copy it
// sees, and the baseline files come first in the link, so the shared copies are baseline code.
#if QUIRE_HAVE_HASWELL_KERNEL
#define QUIRE_KERNEL_FN(name) haswell_##name
#include "json_walk.h"
#endif
