// Writes a reading (schema quire-reading/1): the runner's description of the run plus the cases.
#include <cmath>
#include <cstdio>

#include "quire/bench.h"
#include "quire/json.h"

namespace quire::bench {
namespace {

void number(std::string &out, double v) {
  if (!std::isfinite(v)) {
    out += "0";
    return;
  }
  char buf[40];
  if (v == std::floor(v) && std::fabs(v) < 9e15) std::snprintf(buf, sizeof buf, "%.0f", v);
  else std::snprintf(buf, sizeof buf, "%.6g", v);
  out += buf;
}

void field(std::string &out, const char *name, double v, bool comma = true) {
  out += '"';
  out += name;
  out += "\":";
  number(out, v);
  if (comma) out += ',';
}

}  // namespace

std::string reading_json(std::string_view meta_json, const std::vector<case_reading> &cases) {
  std::string out(meta_json);
  while (!out.empty() && out.back() != '}') out.pop_back();
  if (!out.empty()) out.pop_back();
  bool empty_meta = out.find(':') == std::string::npos;
  out += empty_meta ? "\"cases\":[" : ",\"cases\":[";
  for (size_t i = 0; i < cases.size(); ++i) {
    const auto &c = cases[i];
    if (i) out += ',';
    out += "\n{\"name\":";
    json::append_quoted(out, c.name);
    out += ",\"op\":";
    json::append_quoted(out, c.op);
    out += ",\"shape\":";
    json::append_quoted(out, c.shape);
    out += ',';
    field(out, "input_bytes", static_cast<double>(c.input_bytes));
    if (c.generated_bytes) field(out, "generated_bytes", static_cast<double>(c.generated_bytes));
    field(out, "items", static_cast<double>(c.items));
    field(out, "calls", static_cast<double>(c.calls));
    field(out, "calls_per_sample", static_cast<double>(c.calls_per_sample));
    out += "\"time_ns\":{";
    field(out, "median", c.time_ns.median);
    field(out, "p50", c.time_ns.p50);
    field(out, "p95", c.time_ns.p95);
    field(out, "p99", c.time_ns.p99);
    field(out, "min", c.time_ns.min);
    field(out, "max", c.time_ns.max, false);
    out += "},\"throughput\":{";
    field(out, "ops_per_s", c.ops_per_s);
    field(out, "bytes_per_s", c.bytes_per_s, false);
    out += "},";
    if (c.alloc_counted) {
      out += "\"alloc\":{";
      field(out, "calls_per_op", c.alloc_calls_per_op);
      field(out, "bytes_per_op", c.alloc_bytes_per_op);
      field(out, "peak_bytes", static_cast<double>(c.alloc_peak_bytes), false);
      out += "},\"heap_flat\":{";
      field(out, "calls", static_cast<double>(c.heap_flat_calls));
      field(out, "bytes_per_call", c.heap_flat_bytes_per_call, false);
      out += "},";
    }
    out += "\"opaque_payload\":";
    out += c.opaque_payload ? "true" : "false";
    if (!c.peer.empty()) {
      out += ",\"peer\":";
      json::append_quoted(out, c.peer);
      out += ",\"mirrors\":";
      json::append_quoted(out, c.mirrors);
    }
    out += ",\"checksum\":";
    json::append_quoted(out, c.checksum);
    if (!c.error.empty()) {
      out += ",\"error\":";
      json::append_quoted(out, c.error);
    }
    out += '}';
  }
  out += "\n]}\n";
  return out;
}

}  // namespace quire::bench
