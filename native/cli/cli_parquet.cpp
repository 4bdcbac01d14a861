// Parquet through DuckDB's writer (cli_parquet.h): the helper's path and arguments, the pipe its
// CSV goes through, its exit.
#include "cli_parquet.h"

#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <vector>

#include "quire/json.h"

extern char **environ;

namespace quire::cli {

#ifndef QUIRE_PARQUET_HELPER
#define QUIRE_PARQUET_HELPER ""
#endif

namespace {

bool ends_with_nocase(std::string_view path, std::string_view ext) noexcept {
  if (path.size() <= ext.size()) return false;
  for (size_t i = 0; i < ext.size(); ++i) {
    char c = path[path.size() - ext.size() + i];
    if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
    if (c != ext[i]) return false;
  }
  return true;
}

bool exists(const std::string &path) {
  struct stat st {};
  return ::stat(path.c_str(), &st) == 0;
}

}  // namespace

bool is_parquet_path(std::string_view path) noexcept { return ends_with_nocase(path, ".parquet"); }
bool is_arrow_path(std::string_view path) noexcept { return ends_with_nocase(path, ".arrow"); }

parquet_sink::~parquet_sink() {
  // Not finished: the rows stopped on an error. The helper is stopped before it sees the end of
  // its input, so it never names a file of part of the rows.
  if (pid_ > 0) ::kill(pid_, SIGKILL);
  if (fd_ >= 0) ::close(fd_);
  if (pid_ > 0) {
    int status = 0;
    ::waitpid(pid_, &status, 0);
    // What it had begun to write under the temporary name goes too.
    if (!temp_.empty()) std::remove(temp_.c_str());
  }
}

result<void> parquet_sink::start(const format::schema &schema, const std::string &out_path, bool arrow) {
  const char *env = std::getenv("QUIRE_PARQUET_HELPER");
  const std::string helper = env && *env ? env : QUIRE_PARQUET_HELPER;
  const std::string folder = helper.substr(0, helper.rfind('/') + 1);
  if (helper.empty() || !exists(helper) || !exists(folder + "node_modules/@duckdb/node-api")) {
    return quire::error(error_code::IO_ERROR, "Parquet is written by DuckDB through node: " +
                                                  (helper.empty() ? std::string("no helper script is known") : helper) +
                                                  " or its npm packages are missing (scripts/bootstrap installs them; "
                                                  "QUIRE_PARQUET_HELPER names another script)");
  }
  std::string types, names = "[";
  for (const auto &c : schema.columns) {
    if (!types.empty()) {
      types += ',';
      names += ',';
    }
    types += format::type_name(c.type);
    json::append_quoted(names, c.name);
  }
  names += ']';
  std::vector<std::string> words = {"node", helper, "--names", names, "--types", types, "--out", out_path};
  if (arrow) {
    words.push_back("--to");
    words.push_back("arrow");
  }
  temp_ = out_path + ".tmp-" + std::to_string(::getpid());
  words.push_back("--temp");
  words.push_back(temp_);
  std::vector<char *> argv;
  for (auto &w : words) argv.push_back(w.data());
  argv.push_back(nullptr);
  int pipe_fds[2];
  if (::pipe2(pipe_fds, O_CLOEXEC) != 0) return quire::error(error_code::IO_ERROR, "cannot make a pipe");
  // A helper that stops reading must be an error here, not a signal that ends quire.
  ::signal(SIGPIPE, SIG_IGN);
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_adddup2(&actions, pipe_fds[0], STDIN_FILENO);
  posix_spawn_file_actions_addopen(&actions, STDOUT_FILENO, "/dev/null", O_WRONLY, 0);
  const int spawned = posix_spawnp(&pid_, "node", &actions, nullptr, argv.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  ::close(pipe_fds[0]);
  if (spawned != 0) {
    ::close(pipe_fds[1]);
    pid_ = -1;
    return quire::error(error_code::IO_ERROR, "cannot run node, which writes Parquet through DuckDB");
  }
  fd_ = pipe_fds[1];
  out_ = out_path;
  return {};
}

result<void> parquet_sink::write(std::span<const uint8_t> bytes) {
  while (!bytes.empty()) {
    const ssize_t n = ::write(fd_, bytes.data(), bytes.size());
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      return quire::error(error_code::IO_ERROR, "the Parquet writer (DuckDB through node) stopped reading " + out_ +
                                                    "'s rows: its reason is above");
    }
    bytes = bytes.subspan(static_cast<size_t>(n));
  }
  return {};
}

result<void> parquet_sink::finish() {
  ::close(fd_);
  fd_ = -1;
  int status = 0;
  while (::waitpid(pid_, &status, 0) < 0) {
    if (errno != EINTR) return quire::error(error_code::IO_ERROR, "lost the Parquet writer (node)");
  }
  pid_ = -1;
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
    return quire::error(error_code::IO_ERROR,
                        "the Parquet writer (DuckDB through node) failed on " + out_ + ": its reason is above");
  }
  return {};
}

}  // namespace quire::cli
