// `quire json check`.
#include <charconv>
#include <chrono>
#include <string>

#include "cli.h"
#include "quire/file_source.h"
#include "quire/json.h"

namespace quire::cli {
namespace {

bool parse_size(const std::optional<std::string> &text, uint64_t &out) {
  if (!text) return true;
  auto [p, ec] = std::from_chars(text->data(), text->data() + text->size(), out);
  return ec == std::errc() && p == text->data() + text->size();
}

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
  auto load = args.option("--load");
  json::limits lim;
  uint64_t depth = lim.max_depth, bytes = lim.max_document_bytes;
  if (!parse_size(args.option("--max-depth"), depth) || !parse_size(args.option("--max-bytes"), bytes)) {
    return usage_error("json check", "--max-depth and --max-bytes take a whole number");
  }
  lim.max_depth = static_cast<size_t>(depth);
  lim.max_document_bytes = bytes;
  native::open_options opts;
  if (load) {
    auto mode = native::parse_load_mode(*load);
    if (!mode) return usage_error("json check", "--load takes read, mmap or prewarm");
    opts.mode = *mode;
  }
  auto files = args.positional();
  if (!args.error().empty()) return usage_error("json check", args.error());
  if (files.empty()) return usage_error("json check", "needs at least one FILE");

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
