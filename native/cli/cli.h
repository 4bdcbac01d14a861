// The `quire` command-line tool: shared pieces of its subcommands.
//
// Each cli_<module>.cpp registers its commands with a static `registration`, so adding a module's
// commands never touches cli_main.cpp:
//   static quire::cli::registration json_check{"json", "check", "FILE... [--json]", "Validate JSON documents",
//   run_check};
#pragma once

#include <unistd.h>

#include <cerrno>

#include <cstdio>
#include <initializer_list>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "quire/error.h"
#include "quire/file_source.h"
#include "quire/format.h"
#include "quire/spill_file.h"

namespace quire::cli {

/// Exit codes: 0 success, 1 bad input (a file that fails), 2 bad usage (including a mistake in a
/// query, filter or expression the user typed). exit_code_for() decides which an error is.
constexpr int EXIT_OK = 0;
constexpr int EXIT_BAD_INPUT = 1;
constexpr int EXIT_USAGE = 2;

/// The exit code of a command that failed with `code`: EXIT_USAGE for what the user typed wrong
/// (INVALID_ARGUMENT, INVALID_QUERY, NO_SUCH_COLUMN, WRONG_KEY (a key given on the command line that
/// its column cannot hold, or a decryption key that opens nothing), KEY_REQUIRED, INVALID_FHIRPATH, UNKNOWN_FUNCTION,
/// FHIRPATH_TYPE_ERROR, INVALID_VIEW), EXIT_BAD_INPUT for every other code, EXIT_OK for OK. The one
/// place that decides, so a bad expression and an unknown column exit alike in every command.
int exit_code_for(quire::error_code code) noexcept;

/// Of two exit codes, the one to report: a usage mistake outranks bad input, which outranks success
/// (for commands that go on to the next file after one fails).
constexpr int worse_exit(int a, int b) noexcept { return a > b ? a : b; }

/// Command-line words after the command's name, with simple option parsing.
class arguments {
 public:
  explicit arguments(std::vector<std::string> words) : words_(std::move(words)) {}
  /// Takes `--name` (a flag); true when present.
  bool flag(std::string_view name);
  /// Takes `--name VALUE` or `--name=VALUE`; nullopt when absent. Sets an error when VALUE is missing.
  std::optional<std::string> option(std::string_view name);
  /// All `--name VALUE` occurrences, in order.
  std::vector<std::string> options(std::string_view name);
  /// What is left once options are taken; an unknown `--option` left over is a usage error.
  std::vector<std::string> positional();
  const std::string &error() const { return error_; }

  /// Takes `--name N`: a whole number; nullopt when absent. Text that is not one is a usage error.
  std::optional<uint64_t> number(std::string_view name);
  /// Takes `--load MODE` (read, mmap, prewarm, ranges; `fallback` when absent). A mode not in the
  /// list is a usage error.
  native::load_mode load_mode(native::load_mode fallback);
  /// Takes every `flags` flag (write options: format::apply_write_option's names), in order, and each
  /// occurrence of it, through core's format::apply_write_option: the npm package's options and
  /// these flags are read by one parser, and a value out of range is core's INVALID_ARGUMENT.
  void write_options(std::initializer_list<std::string_view> flags, format::write_options &options,
                     format::input_options &input);

  /// Ends option parsing, the one loop every command ends with: the positional words; or, after
  /// a mistake in what was taken (an unknown or incomplete option, a bad number, a write option
  /// core refused), nullopt, with the mistake printed and exit_status() its exit code (EXIT_USAGE).
  std::optional<std::vector<std::string>> finish(std::string_view command);
  /// finish(), with the number of positional words checked: from `least` to `most`, else the
  /// usage error `message` (e.g. "needs exactly one FILE").
  std::optional<std::vector<std::string>> finish(std::string_view command, size_t least, size_t most,
                                                 std::string_view message);
  int exit_status() const { return status_; }

 private:
  std::vector<std::string> words_;
  std::string error_;
  std::optional<quire::error> refused_;  // the first write option core refused (with its flag)
  std::string refused_flag_;
  int status_ = EXIT_OK;
};

/// What a command that writes a table (convert, view run) takes besides its files: the write
/// options `flags` (arguments::write_options), --spill-dir and --quiet.
struct table_options {
  table_options(arguments &args, std::initializer_list<std::string_view> flags);

  format::write_options write;
  format::input_options input;
  std::optional<std::string> spill_dir;
  bool quiet = false;

  /// When `write` asks for a sort or an index: creates the unnamed temporary file (in spill_dir)
  /// that sort runs beyond the sort budget go to, instead of memory. Returns EXIT_OK, or fail()'s
  /// exit code when it cannot be created.
  int open_spill();

 private:
  std::unique_ptr<native::spill_file> spill_;
};

/// One command: `quire GROUP NAME ...` (or `quire GROUP ...` when name is empty).
struct command {
  std::string_view group;
  std::string_view name;
  std::string_view usage;    ///< the arguments, e.g. "FILE... [--json]"
  std::string_view summary;  ///< one line for --help
  int (*run)(arguments &);
};

/// Registers a command at static-initialisation time.
struct registration {
  explicit registration(command c);
};

/// Prints `FILE: ` and the error's one line (quire::error::describe()) to stderr.
void print_error(std::string_view file, const quire::error &e);

/// Prints the error as print_error() does and returns exit_code_for(e.code), so a command ends
/// with `return fail(file, r.error());`.
int fail(std::string_view file, const quire::error &e);

/// Prints a usage error and returns EXIT_USAGE.
int usage_error(std::string_view command, std::string_view message);

/// A view's JSON text from a file (`-`: standard input), read up to view::limits'
/// DEFAULT_MAX_VIEW_BYTES + 1 bytes (a longer one is then refused by the view's parser).
result<std::string> read_view_text(const std::string &path);

/// Writes to OUTPUT.tmp-<pid>, renamed to OUTPUT only when everything was written: a crash or an
/// error never leaves a half file under the real name.
class temp_file_sink final : public format::byte_sink {
 public:
  explicit temp_file_sink(std::string final_path)
      : final_(std::move(final_path)),
        temp_(final_ + ".tmp-" + std::to_string(::getpid())),
        f_(std::fopen(temp_.c_str(), "wb")) {}
  ~temp_file_sink() override {
    if (f_) std::fclose(f_);
    if (!committed_) std::remove(temp_.c_str());
  }
  temp_file_sink(const temp_file_sink &) = delete;
  temp_file_sink &operator=(const temp_file_sink &) = delete;
  bool opened() const { return f_ != nullptr; }
  const std::string &temp_path() const { return temp_; }
  /// Why opened() is false.
  quire::error open_error() const {
    std::string m = "cannot create ";
    m += temp_;
    return quire::error(error_code::IO_ERROR, std::move(m));
  }
  result<void> write(std::span<const uint8_t> bytes) override {
    if (bytes.empty()) return {};
    if (std::fwrite(bytes.data(), 1, bytes.size(), f_) != bytes.size())
      return quire::error(error_code::IO_ERROR, "cannot write " + temp_);
    return {};
  }
  /// Closes the file and gives it its name. `replace` false: a file already under that name is
  /// kept and the commit is INVALID_ARGUMENT (a hard link cannot take a name that exists, as a
  /// rename would), so two writers choosing one name never lose the first one's file.
  result<void> commit(bool replace = true) {
    int closed = std::fclose(f_);
    f_ = nullptr;
    if (closed != 0) return quire::error(error_code::IO_ERROR, "cannot finish writing " + temp_);
    if (!replace) {
      if (::link(temp_.c_str(), final_.c_str()) != 0) {
        if (errno == EEXIST)
          return quire::error(error_code::INVALID_ARGUMENT, final_ + " exists already (another writer's part?)");
        return quire::error(error_code::IO_ERROR, "cannot name " + temp_ + " " + final_);
      }
      std::remove(temp_.c_str());
    } else if (std::rename(temp_.c_str(), final_.c_str()) != 0) {
      return quire::error(error_code::IO_ERROR, "cannot rename " + temp_ + " to " + final_);
    }
    committed_ = true;
    return {};
  }

 private:
  std::string final_, temp_;
  FILE *f_;
  bool committed_ = false;
};

}  // namespace quire::cli
