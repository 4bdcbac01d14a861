// The one main of the Catch2 suite (native and wasm). Prints Catch2's tally.
#define CATCH_CONFIG_RUNNER
#ifdef __EMSCRIPTEN__
#define CATCH_CONFIG_NO_POSIX_SIGNALS
#endif
#include <catch2/catch.hpp>

int main(int argc, char *argv[]) {
  int failed = Catch::Session().run(argc, argv);
  return failed > 0 ? 1 : 0;
}
