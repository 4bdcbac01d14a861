#include "quire/version.h"

#include "../json/json_internal.h"

namespace quire {

build_info version() noexcept {
  return build_info{QUIRE_VERSION, QUIRE_TARGET, QUIRE_COMPILER, QUIRE_FLAGS, QUIRE_BUILD_TYPE, json::simd_kernel()};
}

}  // namespace quire
