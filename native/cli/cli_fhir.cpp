// `quire fhir validate` and `quire fhir format`.
#include <cstdio>
#include <string>

#include "cli.h"
#include "quire/fhir.h"
#include "quire/file_source.h"

namespace quire::cli {
namespace {

int run_validate(arguments &args) {
  bool as_json = args.flag("--json");
  bool quiet = args.flag("--quiet");
  fhir::options opts;
  opts.input_syntax = fhir::syntax::detect;  // JSON or XML, by the first byte
  opts.max_issues = static_cast<size_t>(args.number("--max-issues").value_or(opts.max_issues));
  opts.max_depth = static_cast<size_t>(args.number("--max-depth").value_or(opts.max_depth));
  auto positional = args.finish("fhir validate", 1, SIZE_MAX, "needs at least one FILE");
  if (!positional) return args.exit_status();
  const std::vector<std::string> &files = *positional;

  size_t failed = 0, total_errors = 0, total_warnings = 0;
  int status = EXIT_OK;
  for (const auto &file : files) {
    auto source = native::open_file(file);
    if (!source) {
      status = worse_exit(status, fail(file, source.error()));
      ++failed;
      continue;
    }
    auto o = fhir::validate(*source.value(), opts);
    total_errors += o.errors;
    total_warnings += o.warnings;
    if (o.errors) {
      ++failed;
      status = worse_exit(status, EXIT_BAD_INPUT);
    }
    if (as_json) {
      std::string line = "{\"file\":";
      json::append_quoted(line, file);
      line += ",\"errors\":" + std::to_string(o.errors) + ",\"warnings\":" + std::to_string(o.warnings) +
              ",\"issues\":" + fhir::issues_to_json(o.issues) + "}";
      std::printf("%s\n", line.c_str());
      continue;
    }
    for (const auto &i : o.issues) {
      // FILE:LINE:COLUMN: severity [code] expression: details — the shape compilers use, so editors jump to it.
      std::printf("%s:%u:%u: %s [%.*s] %s: %s\n", file.c_str(), i.line, i.column,
                  std::string(fhir::severity_name(i.severity)).c_str(), static_cast<int>(i.code.size()), i.code.data(),
                  i.expression.c_str(), i.details.c_str());
    }
    if (!quiet && o.issues.empty()) std::printf("%s: ok\n", file.c_str());
  }
  if (!as_json && !quiet && files.size() > 1) {
    std::printf("%zu files, %zu with errors; %zu errors, %zu warnings\n", files.size(), failed, total_errors,
                total_warnings);
  }
  return status;
}

int run_format(arguments &args) {
  bool compact = args.flag("--compact");
  bool strict = args.flag("--strict");
  auto output = args.option("--output");
  auto to = args.option("--to");
  if (to && *to != "json" && *to != "xml") { return usage_error("fhir format", "--to takes json or xml, not " + *to); }
  auto positional = args.finish("fhir format", 1, 1, "needs exactly one FILE");
  if (!positional) return args.exit_status();
  const std::vector<std::string> &files = *positional;
  auto source = native::open_file(files[0]);
  if (!source) return fail(files[0], source.error());
  fhir::options opts;
  opts.strict = strict;
  opts.input_syntax = fhir::syntax::detect;  // JSON or XML, by the first byte
  auto r = fhir::read(*source.value(), opts);
  if (!r) return fail(files[0], r.error());
  std::string text;
  if (to && *to == "xml") {
    auto xml = fhir::write_xml(r.value(), {.pretty = !compact});
    if (!xml) return fail(files[0], xml.error());
    text = std::move(xml).value();
    if (compact) text += '\n';
  } else {
    text = fhir::write(r.value(), {.pretty = !compact});
    text += '\n';
  }
  if (!output) {
    std::fwrite(text.data(), 1, text.size(), stdout);
    return EXIT_OK;
  }
  temp_file_sink sink(*output);
  if (!sink.opened()) return fail(*output, sink.open_error());
  auto written = sink.write(std::span<const uint8_t>(reinterpret_cast<const uint8_t *>(text.data()), text.size()));
  if (written) written = sink.commit();
  if (!written) return fail(*output, written.error());
  return EXIT_OK;
}

registration fhir_validate{
    {"fhir", "validate", "FILE... [--json] [--quiet] [--max-issues N] [--max-depth N]",
     "Validate FHIR R4 resources (JSON or XML, by the first byte) against the base definitions; print every issue "
     "(exit 1 when any error).",
     run_validate}};
registration fhir_format{{"fhir", "format", "FILE [--to json|xml] [--compact] [--strict] [--output FILE]",
                          "Write a FHIR R4 resource (JSON or XML) as canonical JSON, or as XML with --to xml "
                          "(pretty unless --compact).",
                          run_format}};

}  // namespace
}  // namespace quire::cli
