// The one LINE_TOO_LONG of core's NDJSON readers, for the place that checks a line's length
// without a line_feeder (format's streamed input, which cuts NDJSON and CSV units in one scan).
#pragma once

#include <cstdint>

#include "quire/error.h"

namespace quire::detail {

/// LINE_TOO_LONG for line `number` starting at stream offset `offset`:
/// `line N is longer than max_line_bytes (M bytes)`, with line, column 1 and the offset set.
quire::error line_too_long(uint64_t number, uint64_t offset, uint64_t max_line_bytes);

}  // namespace quire::detail
