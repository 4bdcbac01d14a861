// Fuzz target for the NDJSON reader: the same bytes fed whole and in small chunks (sizes taken
// from the input) must give the same lines, errors and counts, and nothing may crash.
#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>
#include <vector>

#include "quire/ndjson.h"

namespace {

std::string run(std::string_view input, size_t chunk, quire::ndjson::stats &stats) {
  quire::ndjson::options opts;
  opts.max_line_bytes = 512;
  opts.continue_on_error = true;
  opts.fhir.max_depth = 64;
  opts.fhir.max_issues = 20;
  quire::ndjson::reader reader(opts);
  std::string log;
  auto visit = [&](const quire::ndjson::line_result &l) {
    log += std::to_string(l.line) + (l.error ? "E" + std::string(quire::error_name(l.error->code)) : "R") +
           std::to_string(l.issues.size()) + ";";
    return true;
  };
  for (size_t at = 0; at < input.size(); at += chunk) {
    if (!reader.feed(input.substr(at, chunk), visit)) std::abort();  // continue_on_error never fails a feed
  }
  if (!reader.finish(visit)) std::abort();
  stats = reader.counts();
  return log;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  if (size == 0) return 0;
  size_t chunk = data[0] % 17 + 1;
  std::string_view input(reinterpret_cast<const char *>(data) + 1, size - 1);
  quire::ndjson::stats whole, pieces;
  std::string a = run(input, input.size() ? input.size() : 1, whole);
  std::string b = run(input, chunk, pieces);
  if (a != b || whole.lines != pieces.lines || whole.resources != pieces.resources ||
      whole.bad_lines != pieces.bad_lines || whole.blank_lines != pieces.blank_lines ||
      whole.by_type != pieces.by_type) {
    std::abort();
  }
  return 0;
}
