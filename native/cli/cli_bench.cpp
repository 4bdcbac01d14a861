// `quire bench` — filled in by the benchmark harness.
#include "cli.h"

namespace quire::cli {

int run_bench(arguments &) { return usage_error("bench", "the benchmark harness is not built yet"); }

}  // namespace quire::cli
