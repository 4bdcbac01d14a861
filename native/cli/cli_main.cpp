// `quire`: the native command-line tool. Each subcommand is a thin shell over a core call.
#include <charconv>
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
      words_.erase(words_.begin() + static_cast<std::ptrdiff_t>(i),
                   words_.begin() + static_cast<std::ptrdiff_t>(i) + 2);
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

std::optional<uint64_t> arguments::number(std::string_view name) {
  auto text = option(name);
  if (!text) return std::nullopt;
  uint64_t n = 0;
  auto [p, ec] = std::from_chars(text->data(), text->data() + text->size(), n);
  if (ec != std::errc() || p != text->data() + text->size()) {
    if (error_.empty()) error_ = std::string(name) + " takes a whole number";
    return std::nullopt;
  }
  return n;
}

native::load_mode arguments::load_mode(native::load_mode fallback) {
  auto text = option("--load");
  if (!text) return fallback;
  auto mode = native::parse_load_mode(*text);
  if (!mode && error_.empty()) error_ = "--load takes read, mmap, prewarm or ranges";
  return mode.value_or(fallback);
}

void arguments::write_options(std::initializer_list<std::string_view> flags, format::write_options &opts,
                              format::input_options &in) {
  for (std::string_view flag : flags) {
    for (const auto &text : options(flag)) {
      if (refused_) continue;
      if (auto set = format::apply_write_option(flag, text, opts, in); !set) {
        refused_ = std::move(set).error();
        refused_flag_ = flag;
      }
    }
  }
}

std::optional<std::vector<std::string>> arguments::finish(std::string_view command) {
  auto rest = positional();
  if (!error_.empty()) {
    status_ = usage_error(command, error_);
    return std::nullopt;
  }
  if (refused_) {
    status_ = fail(refused_flag_, *refused_);
    return std::nullopt;
  }
  return rest;
}

std::optional<std::vector<std::string>> arguments::finish(std::string_view command, size_t least, size_t most,
                                                          std::string_view message) {
  auto rest = finish(command);
  if (rest && (rest->size() < least || rest->size() > most)) {
    status_ = usage_error(command, message);
    return std::nullopt;
  }
  return rest;
}

table_options::table_options(arguments &args, std::initializer_list<std::string_view> flags)
    : spill_dir(args.option("--spill-dir")), quiet(args.flag("--quiet")) {
  args.write_options(flags, write, input);
}

int table_options::open_spill() {
  if (write.sorted_by.empty() && write.indexes.empty()) return EXIT_OK;
  auto s = native::spill_file::create(spill_dir.value_or(""));
  if (!s) return fail(spill_dir.value_or("--spill-dir"), s.error());
  spill_ = std::move(s).value();
  write.spill = spill_.get();
  return EXIT_OK;
}

int exit_code_for(quire::error_code code) noexcept {
  switch (code) {
    case error_code::OK: return EXIT_OK;
    case error_code::INVALID_ARGUMENT:
    case error_code::INVALID_QUERY:
    case error_code::NO_SUCH_COLUMN:
    case error_code::WRONG_KEY:
    case error_code::KEY_REQUIRED:
    case error_code::INVALID_FHIRPATH:
    case error_code::UNKNOWN_FUNCTION:
    case error_code::FHIRPATH_TYPE_ERROR:
    case error_code::INVALID_VIEW: return EXIT_USAGE;
    default: return EXIT_BAD_INPUT;
  }
}

void print_error(std::string_view file, const quire::error &e) {
  std::fprintf(stderr, "%.*s: %s\n", static_cast<int>(file.size()), file.data(), e.describe().c_str());
}

int fail(std::string_view file, const quire::error &e) {
  print_error(file, e);
  return exit_code_for(e.code);
}

int usage_error(std::string_view command, std::string_view message) {
  std::fprintf(stderr, "quire %.*s: %.*s\nTry 'quire --help'.\n", static_cast<int>(command.size()), command.data(),
               static_cast<int>(message.size()), message.data());
  return EXIT_USAGE;
}

namespace {

std::vector<command> &commands() {
  static std::vector<command> all;
  return all;
}

void print_help(FILE *out) {
  std::fputs("quire — read FHIR, HL7 v2 and JSON; store and query records in .quire files.\n\nUsage:\n", out);
  for (const auto &c : commands()) {
    std::string name(c.group);
    if (!c.name.empty()) name.append(" ").append(c.name);
    std::fprintf(out, "  quire %s %.*s\n        %.*s\n", name.c_str(), static_cast<int>(c.usage.size()), c.usage.data(),
                 static_cast<int>(c.summary.size()), c.summary.data());
  }
  std::fputs(
      "  quire --help\n        Print this help.\n\nExit codes: 0 success, 1 bad input, 2 bad usage (options, or a "
      "query, filter or\n"
      "expression that names no such column, does not parse or does not type-check).\n",
      out);
}

int run_version(arguments &args) {
  bool json = args.flag("--json");
  if (!args.finish("version", 0, 0, "takes no arguments")) return args.exit_status();
  auto v = quire::version();
  if (json) {
    std::printf(
        "{\"version\":\"%s\",\"target\":\"%s\",\"compiler\":\"%s\",\"flags\":\"%s\",\"build_type\":\"%s\",\"simd\":\"%"
        "s\"}\n",
        v.version.data(), v.target.data(), v.compiler.data(), v.flags.data(), v.build_type.data(), v.simd.data());
  } else {
    std::printf("quire %s (%s)\ncompiler: %s\nflags: %s\nbuild: %s\nsimd: %s\n", v.version.data(), v.target.data(),
                v.compiler.data(), v.flags.data(), v.build_type.data(), v.simd.data());
  }
  return EXIT_OK;
}

registration version_command{
    {"version", "", "[--json]", "Print the version, the compiler and the flags core was built with.", run_version}};

}  // namespace

registration::registration(command c) { commands().push_back(c); }

}  // namespace quire::cli

int main(int argc, char **argv) {
  using namespace quire::cli;
  std::vector<std::string> words(argv + 1, argv + argc);
  if (words.empty()) {
    print_help(stderr);
    return EXIT_USAGE;
  }
  if (words[0] == "--help" || words[0] == "-h" || words[0] == "help") {
    print_help(stdout);
    return EXIT_OK;
  }
  if (words[0] == "--version") words[0] = "version";
  bool group_known = false;
  for (const auto &c : commands()) {
    if (c.group != words[0]) continue;
    group_known = true;
    if (c.name.empty()) {
      arguments args({words.begin() + 1, words.end()});
      if (args.flag("--help")) {
        print_help(stdout);
        return EXIT_OK;
      }
      return c.run(args);
    }
    if (words.size() >= 2 && c.name == words[1]) {
      arguments args({words.begin() + 2, words.end()});
      if (args.flag("--help")) {
        print_help(stdout);
        return EXIT_OK;
      }
      return c.run(args);
    }
  }
  if (group_known)
    return usage_error(words[0], words.size() < 2 ? "needs a subcommand" : "unknown subcommand " + words[1]);
  return usage_error(words[0], "unknown command");
}
