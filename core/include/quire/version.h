// quire/version.h — what this build is: version, compiler, flags, target and SIMD kernel.
#pragma once

#include <string_view>

namespace quire {

struct build_info {
  std::string_view version;     ///< "0.1.0"
  std::string_view target;      ///< "native" or "wasm"
  std::string_view compiler;    ///< "GNU 12.2.0", "Clang 14.0.0 (Emscripten)"...
  std::string_view flags;       ///< the exact flags core was compiled with
  std::string_view build_type;  ///< CMake's build type
  std::string_view simd;        ///< simdjson's active kernel: "haswell", "westmere", "fallback"...
};

/// This build. The strings are static: valid for the life of the program.
build_info version() noexcept;

}  // namespace quire
