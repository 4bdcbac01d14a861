// `quire ndjson stats` and `quire split`.
#include <cstdio>
#include <string>

#include "cli.h"
#include "quire/file_source.h"
#include "quire/ndjson.h"

namespace quire::cli {
namespace {

int run_stats(arguments &args) {
  bool as_json = args.flag("--json");
  bool keep_going = args.flag("--continue");
  bool show_issues = args.flag("--issues");
  auto positional = args.finish("ndjson stats", 1, SIZE_MAX, "needs at least one FILE");
  if (!positional) return args.exit_status();
  const std::vector<std::string> &files = *positional;
  ndjson::options opts;
  opts.continue_on_error = keep_going;
  int status = EXIT_OK;
  for (const auto &file : files) {
    auto source = native::open_file(file, {.mode = native::load_mode::mmap});
    if (!source) {
      status = worse_exit(status, fail(file, source.error()));
      continue;
    }
    auto visit = [&](const ndjson::line_result &l) {
      if (l.error && keep_going) print_error(file, *l.error);
      if (show_issues) {
        for (const auto &i : l.issues) {
          std::printf("%s:%u:%u: %s [%.*s] %s: %s\n", file.c_str(), i.line, i.column,
                      std::string(fhir::severity_name(i.severity)).c_str(), static_cast<int>(i.code.size()),
                      i.code.data(), i.expression.c_str(), i.details.c_str());
        }
      }
      return true;
    };
    auto r = ndjson::read_all(*source.value(), visit, opts);
    if (!r) {
      status = worse_exit(status, fail(file, r.error()));
      continue;
    }
    const auto &s = r.value();
    // A bad line (--continue) or an invalid resource makes the file bad input, whatever else read well.
    if (s.bad_lines || s.invalid_resources) status = worse_exit(status, EXIT_BAD_INPUT);
    if (as_json) {
      const std::string line = ndjson::stats_json(s, ndjson::key_case::snake, file);
      std::printf("%s\n", line.c_str());
    } else {
      std::printf(
          "%s: %llu resources in %llu lines (%llu blank, %llu bad), %llu with errors, %llu issues, longest line %llu "
          "bytes\n",
          file.c_str(), static_cast<unsigned long long>(s.resources), static_cast<unsigned long long>(s.lines),
          static_cast<unsigned long long>(s.blank_lines), static_cast<unsigned long long>(s.bad_lines),
          static_cast<unsigned long long>(s.invalid_resources), static_cast<unsigned long long>(s.issues),
          static_cast<unsigned long long>(s.longest_line));
      for (const auto &[type, count] : s.by_type)
        std::printf("  %s %llu\n", type.c_str(), static_cast<unsigned long long>(count));
    }
  }
  return status;
}

// Balanced ranges of one file at line starts, one JSON object a line: what N tasks hand to
// `quire view run --range START:END` (core's split_lines; a file is read only near each cut).
int run_split(arguments &args) {
  auto parts = args.number("--parts");
  auto positional = args.finish("split", 1, 1, "needs one INPUT file");
  if (!positional) return args.exit_status();
  if (!parts) return usage_error("split", "needs --parts N");
  const std::string &file = (*positional)[0];
  auto source = native::open_file(file, {.mode = native::load_mode::ranges});
  if (!source) return fail(file, source.error());
  auto ranges = ndjson::split_lines(*source.value(), *parts);
  if (!ranges) return fail("--parts", ranges.error());
  std::string out;
  for (size_t i = 0; i < ranges->size(); ++i) {
    out += ndjson::byte_range_json((*ranges)[i], i);
    out += '\n';
  }
  std::fwrite(out.data(), 1, out.size(), stdout);
  return EXIT_OK;
}

registration split{{"split", "", "INPUT --parts N",
                    "Print N byte ranges of INPUT that meet at line starts, each about size / N bytes, one JSON "
                    "object a line ({\"part\",\"start\",\"end\",\"bytes\"}): give each to quire view run --range "
                    "START:END and every line runs once.",
                    run_split}};

registration ndjson_stats{{"ndjson", "stats", "FILE... [--json] [--continue] [--issues]",
                           "Stream FHIR NDJSON (Bulk Data); count resources by type, validating each (exit 1 on a bad "
                           "line or an invalid resource).",
                           run_stats}};

}  // namespace
}  // namespace quire::cli
