// Benchmark cases of NDJSON streaming: a Bulk Data export fed to quire::ndjson::reader in 64 KiB
// chunks (as it would arrive from a file or the network), every line read and validated, resources
// counted by type.
#include <string>

#include "../shapes/fhir_shapes.h"
#include "quire/bench.h"
#include "quire/ndjson.h"

namespace quire::bench {
namespace {

constexpr size_t CHUNK_BYTES = 64 * 1024;

result<uint64_t> stream_op(std::string_view input) {
  ndjson::reader reader;
  uint64_t d = 0;
  auto visit = [&d](const ndjson::line_result &l) {
    // Each line's own findings, so that a resource going wrong on one target shows.
    d = mix(d, l.issues.size());
    return true;
  };
  for (size_t at = 0; at < input.size(); at += CHUNK_BYTES) {
    if (auto s = reader.feed(input.substr(at, CHUNK_BYTES), visit); !s) return s.error();
  }
  if (auto s = reader.finish(visit); !s) return s.error();
  const auto &c = reader.counts();
  d = mix(d, c.bytes);
  d = mix(d, c.lines);
  d = mix(d, c.resources);
  d = mix(d, c.bad_lines);
  d = mix(d, c.invalid_resources);
  d = mix(d, c.issues);
  d = mix(d, c.longest_line);
  for (const auto &[type, count] : c.by_type) {
    d = digest(type, d);
    d = mix(d, count);
  }
  return d;
}

registration export_10k{
    {"ndjson.stream", "bulk-export-10000", [] { return shapes::fhir_bulk_ndjson(10000); }, stream_op, 10000}};
registration export_100k{
    {"ndjson.stream", "bulk-export-100000", [] { return shapes::fhir_bulk_ndjson(100000); }, stream_op, 100000}};

}  // namespace
}  // namespace quire::bench
