// `quire hl7 parse` and `quire hl7 ack`.
#include <cstdio>
#include <string>

#include "cli.h"
#include "quire/file_source.h"
#include "quire/hl7v2.h"

namespace quire::cli {
namespace {

// A file's messages: parse_batch reads one message and files of several alike.
result<hl7v2::batch> read_messages(const std::unique_ptr<byte_source> &source, bool strict) {
  const auto bytes = source->contiguous();
  hl7v2::parse_options o;
  o.strict = strict;
  return hl7v2::parse_batch(std::string_view(reinterpret_cast<const char *>(bytes.data()), bytes.size()), o);
}

std::string printable(std::string_view raw) { return raw.empty() ? std::string("-") : std::string(raw); }

int run_parse(arguments &args) {
  const bool as_json = args.flag("--json");
  const bool strict = args.flag("--strict");
  auto positional = args.finish("hl7 parse", 1, SIZE_MAX, "needs at least one FILE");
  if (!positional) return args.exit_status();
  const std::vector<std::string> &files = *positional;

  int status = EXIT_OK;
  for (const auto &file : files) {
    auto source = native::open_file(file);
    if (!source) {
      status = worse_exit(status, fail(file, source.error()));
      continue;
    }
    auto b = read_messages(*source, strict);
    if (!b) {
      status = worse_exit(status, fail(file, b.error()));
      continue;
    }
    const size_t n = b->messages.size();
    for (size_t i = 0; i < n; ++i) {
      const hl7v2::message &m = b->messages[i];
      if (as_json) {
        const std::string json = m.to_json();
        std::fwrite(json.data(), 1, json.size(), stdout);
        std::fputc('\n', stdout);
        continue;
      }
      std::string type = printable(m.type());
      if (!m.trigger().empty()) {
        type += '^';
        type += m.trigger();
      }
      const std::string where = n > 1 ? file + "#" + std::to_string(i + 1) : file;
      std::printf("%s: %s, control id %s, version %s, %zu segments", where.c_str(), type.c_str(),
                  printable(m.control_id()).c_str(), printable(m.version()).c_str(), m.segment_count());
      if (m.skipped_lines()) std::printf(", %zu lines skipped", m.skipped_lines());
      std::printf("\n");
    }
    if (!as_json && (!b->envelope.empty() || b->skipped_bytes))
      std::printf("%s: %zu messages, %zu envelope segments, %llu bytes skipped\n", file.c_str(), n, b->envelope.size(),
                  static_cast<unsigned long long>(b->skipped_bytes));
  }
  return status;
}

int run_ack(arguments &args) {
  const bool raw = args.flag("--raw");
  const bool strict = args.flag("--strict");
  const auto code_name = args.option("--code");
  const auto text = args.option("--text");
  const auto timestamp = args.option("--timestamp");
  auto positional = args.finish("hl7 ack", 1, 1, "needs exactly one FILE");
  if (!positional) return args.exit_status();
  const std::vector<std::string> &files = *positional;
  const auto code = hl7v2::parse_ack_code(code_name.value_or("AA"));
  if (!code) return fail("--code", code.error());

  auto source = native::open_file(files[0]);
  if (!source) return fail(files[0], source.error());
  auto b = read_messages(*source, strict);
  if (!b) return fail(files[0], b.error());
  hl7v2::ack_options o;
  o.text = text.value_or("");
  o.timestamp = timestamp.value_or("");
  for (const hl7v2::message &m : b->messages) {
    auto ack = hl7v2::build_ack(m, *code, o);
    if (!ack) return fail(files[0], ack.error());
    std::string out = std::move(ack).value();
    // On the wire segments end with CR; a terminal shows them better one per line.
    if (!raw)
      for (char &c : out)
        if (c == '\r') c = '\n';
    std::fwrite(out.data(), 1, out.size(), stdout);
  }
  return EXIT_OK;
}

registration hl7_parse{{"hl7", "parse", "FILE... [--json] [--strict]",
                        "Read HL7 v2 messages (files of several too): a summary per message, or --json the stable JSON "
                        "shape, one per line.",
                        run_parse}};
registration hl7_ack{
    {"hl7", "ack", "FILE [--code AA|AE|AR|CA|CE|CR] [--text T] [--timestamp TS] [--raw] [--strict]",
     "Print the ACK of each message in FILE (one segment per line; --raw: CR terminators, as on the wire).", run_ack}};

}  // namespace
}  // namespace quire::cli
