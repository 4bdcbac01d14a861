// `quire json check`.
#include <chrono>
#include <string>

#include "cli.h"
#include "quire/file_source.h"
#include "quire/json.h"

namespace quire::cli {
namespace {

std::string json_line(const std::string &file, const result<json::stats> &r, double seconds) {
  std::string out = "{\"file\":";
  json::append_quoted(out, file);
  if (r) {
    const auto &s = r.value();
    out += ",\"ok\":true,\"bytes\":" + std::to_string(s.bytes) + ",\"values\":" + std::to_string(s.values()) +
           ",\"objects\":" + std::to_string(s.objects) + ",\"arrays\":" + std::to_string(s.arrays) +
           ",\"strings\":" + std::to_string(s.strings) + ",\"numbers\":" + std::to_string(s.numbers) +
           ",\"booleans\":" + std::to_string(s.booleans) + ",\"nulls\":" + std::to_string(s.nulls) +
           ",\"keys\":" + std::to_string(s.keys) + ",\"max_depth\":" + std::to_string(s.max_depth);
  } else {
    const auto &e = r.error();
    out += ",\"ok\":false,\"code\":\"" + std::string(error_name(e.code)) + "\",\"offset\":";
    out += e.offset == quire::error::NO_OFFSET ? "null" : std::to_string(e.offset);
    out += ",\"line\":" + std::to_string(e.line) + ",\"column\":" + std::to_string(e.column) + ",\"message\":";
    json::append_quoted(out, e.message);
  }
  out += ",\"seconds\":" + std::to_string(seconds) + "}";
  return out;
}

int run_check(arguments &args) {
  bool as_json = args.flag("--json");
  bool quiet = args.flag("--quiet");
  native::open_options opts{.mode = args.load_mode(native::load_mode::read)};
  json::limits lim;
  lim.max_depth = static_cast<size_t>(args.number("--max-depth").value_or(lim.max_depth));
  lim.max_document_bytes = args.number("--max-bytes").value_or(lim.max_document_bytes);
  auto positional = args.finish("json check", 1, SIZE_MAX, "needs at least one FILE");
  if (!positional) return args.exit_status();
  const std::vector<std::string> &files = *positional;

  int failed = 0, status = EXIT_OK;
  for (const auto &file : files) {
    auto started = std::chrono::steady_clock::now();
    auto source = native::open_file(file, opts);
    result<json::stats> r = source ? json::check(*source.value(), lim) : result<json::stats>(source.error());
    double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
    if (!r) ++failed;
    if (as_json) {
      std::printf("%s\n", json_line(file, r, seconds).c_str());
      if (!r) status = worse_exit(status, exit_code_for(r.code()));
    } else if (!r) {
      status = worse_exit(status, fail(file, r.error()));
    } else if (!quiet) {
      const auto &s = r.value();
      double mbps = seconds > 0 ? static_cast<double>(s.bytes) / seconds / 1e6 : 0;
      std::printf(
          "%s: ok, %llu bytes, %llu values (%llu objects, %llu arrays, %llu strings, %llu numbers, %llu booleans, %llu "
          "nulls), depth %llu, %.1f MB/s\n",
          file.c_str(), static_cast<unsigned long long>(s.bytes), static_cast<unsigned long long>(s.values()),
          static_cast<unsigned long long>(s.objects), static_cast<unsigned long long>(s.arrays),
          static_cast<unsigned long long>(s.strings), static_cast<unsigned long long>(s.numbers),
          static_cast<unsigned long long>(s.booleans), static_cast<unsigned long long>(s.nulls),
          static_cast<unsigned long long>(s.max_depth), mbps);
    }
  }
  if (!as_json && files.size() > 1 && !quiet) {
    std::printf("%zu checked, %zu ok, %d failed\n", files.size(), files.size() - static_cast<size_t>(failed), failed);
  }
  return status;
}

registration json_check{
    {"json", "check", "FILE... [--load read|mmap|prewarm] [--max-depth N] [--max-bytes N] [--json] [--quiet]",
     "Validate JSON documents; print counts of values by kind (--json: one JSON line per file).", run_check}};

}  // namespace

}  // namespace quire::cli
