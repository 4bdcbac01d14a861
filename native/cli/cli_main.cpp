// `quire`: the native command-line tool. Each subcommand is a thin shell over a core call.
#include <cstring>
#include <string>
#include <vector>

#include "cli.h"
#include "quire/version.h"

namespace quire::cli {

bool arguments::flag(std::string_view name) {
  for (auto it = words_.begin(); it != words_.end(); ++it) {
    if (*it == name) {
      words_.erase(it);
      return true;
    }
  }
  return false;
}

std::optional<std::string> arguments::option(std::string_view name) {
  auto all = options(name);
  if (all.empty()) return std::nullopt;
  return all.back();
}

std::vector<std::string> arguments::options(std::string_view name) {
  std::vector<std::string> found;
  for (size_t i = 0; i < words_.size();) {
    const std::string &w = words_[i];
    if (w == name) {
      if (i + 1 >= words_.size()) {
        error_ = std::string(name) + " needs a value";
        words_.erase(words_.begin() + static_cast<std::ptrdiff_t>(i));
        continue;
      }
      found.push_back(words_[i + 1]);
      words_.erase(words_.begin() + static_cast<std::ptrdiff_t>(i), words_.begin() + static_cast<std::ptrdiff_t>(i) + 2);
    } else if (w.size() > name.size() && w.compare(0, name.size(), name) == 0 && w[name.size()] == '=') {
      found.push_back(w.substr(name.size() + 1));
      words_.erase(words_.begin() + static_cast<std::ptrdiff_t>(i));
    } else {
      ++i;
    }
  }
  return found;
}

std::vector<std::string> arguments::positional() {
  std::vector<std::string> out;
  bool only_positional = false;
  for (const auto &w : words_) {
    if (!only_positional && w == "--") {
      only_positional = true;
    } else if (!only_positional && w.size() > 1 && w[0] == '-') {
      if (error_.empty()) error_ = "unknown option " + w;
    } else {
      out.push_back(w);
    }
  }
  return out;
}

void print_error(std::string_view file, const quire::error &e) {
  std::fprintf(stderr, "%.*s: %s\n", static_cast<int>(file.size()), file.data(), e.describe().c_str());
}

int usage_error(std::string_view command, std::string_view message) {
  std::fprintf(stderr, "quire %.*s: %.*s\nTry 'quire --help'.\n", static_cast<int>(command.size()), command.data(),
               static_cast<int>(message.size()), message.data());
  return EXIT_USAGE;
}

namespace {

const char *HELP = R"(quire — read FHIR, HL7 v2 and JSON; store and query records in .quire files.

Usage:
  quire json check FILE... [--load read|mmap|prewarm] [--max-depth N] [--max-bytes N] [--json] [--quiet]
        Validate JSON documents; print counts of values by kind (or one JSON line per file).
  quire bench [--quick] [--filter TEXT] [--out FILE]   (see bench/README.md)
        Run the benchmark cases natively and write a reading.
  quire version [--json]
        Print the version, the compiler and the flags core was built with.
  quire --help
        Print this help.

Exit codes: 0 success, 1 bad input (a file failed), 2 bad usage.
)";

int run_version(arguments &args) {
  bool json = args.flag("--json");
  auto rest = args.positional();
  if (!args.error().empty() || !rest.empty()) return usage_error("version", args.error().empty() ? "takes no arguments" : args.error());
  auto v = quire::version();
  if (json) {
    std::printf("{\"version\":\"%s\",\"target\":\"%s\",\"compiler\":\"%s\",\"flags\":\"%s\",\"build_type\":\"%s\",\"simd\":\"%s\"}\n",
                v.version.data(), v.target.data(), v.compiler.data(), v.flags.data(), v.build_type.data(), v.simd.data());
  } else {
    std::printf("quire %s (%s)\ncompiler: %s\nflags: %s\nbuild: %s\nsimd: %s\n", v.version.data(), v.target.data(),
                v.compiler.data(), v.flags.data(), v.build_type.data(), v.simd.data());
  }
  return EXIT_OK;
}

}  // namespace
}  // namespace quire::cli

int main(int argc, char **argv) {
  using namespace quire::cli;
  std::vector<std::string> words(argv + 1, argv + argc);
  if (words.empty()) {
    std::fputs(HELP, stderr);
    return EXIT_USAGE;
  }
  std::string command = words[0];
  if (command == "--help" || command == "-h" || command == "help") {
    std::fputs(HELP, stdout);
    return EXIT_OK;
  }
  if (command == "version" || command == "--version") {
    arguments args({words.begin() + 1, words.end()});
    return run_version(args);
  }
  if (command == "bench") {
    arguments args({words.begin() + 1, words.end()});
    return run_bench(args);
  }
  if (command == "json") {
    if (words.size() < 2) return usage_error("json", "needs a subcommand: check");
    arguments args({words.begin() + 2, words.end()});
    return run_json(words[1], args);
  }
  return usage_error(command, "unknown command");
}
