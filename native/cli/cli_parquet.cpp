// Parquet through DuckDB's writer (cli_parquet.h): the helper's path, its arguments, its exit.
#include "cli_parquet.h"

#include <fcntl.h>
#include <spawn.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <vector>

extern char **environ;

namespace quire::cli {

#ifndef QUIRE_PARQUET_HELPER
#define QUIRE_PARQUET_HELPER ""
#endif

bool is_parquet_path(std::string_view path) noexcept {
  constexpr std::string_view ext = ".parquet";
  if (path.size() <= ext.size()) return false;
  for (size_t i = 0; i < ext.size(); ++i) {
    char c = path[path.size() - ext.size() + i];
    if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
    if (c != ext[i]) return false;
  }
  return true;
}

namespace {

bool exists(const std::string &path) {
  struct stat st {};
  return ::stat(path.c_str(), &st) == 0;
}

}  // namespace

result<void> csv_to_parquet(const std::string &csv_path, const format::schema &schema, const std::string &out_path,
                            const std::string &decimal_width) {
  const char *env = std::getenv("QUIRE_PARQUET_HELPER");
  const std::string helper = env && *env ? env : QUIRE_PARQUET_HELPER;
  const std::string folder = helper.substr(0, helper.rfind('/') + 1);
  if (helper.empty() || !exists(helper) || !exists(folder + "node_modules/@duckdb/node-api")) {
    return quire::error(error_code::IO_ERROR, "Parquet is written by DuckDB through node: " +
                                                  (helper.empty() ? std::string("no helper script is known") : helper) +
                                                  " or its npm packages are missing (scripts/bootstrap installs them; "
                                                  "QUIRE_PARQUET_HELPER names another script)");
  }
  std::string types;
  for (const auto &c : schema.columns) {
    if (!types.empty()) types += ',';
    types += format::type_name(c.type);
  }
  std::vector<std::string> words = {"node", helper, "--csv", csv_path, "--types", types, "--out", out_path};
  if (!decimal_width.empty()) {
    words.push_back("--decimal");
    words.push_back(decimal_width);
  }
  std::vector<char *> argv;
  for (auto &w : words) argv.push_back(w.data());
  argv.push_back(nullptr);
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, STDOUT_FILENO, "/dev/null", O_WRONLY, 0);
  pid_t pid = 0;
  const int spawned = posix_spawnp(&pid, "node", &actions, nullptr, argv.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  if (spawned != 0) return quire::error(error_code::IO_ERROR, "cannot run node, which writes Parquet through DuckDB");
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0) {
    if (errno != EINTR) return quire::error(error_code::IO_ERROR, "lost the Parquet writer (node)");
  }
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
    return quire::error(error_code::IO_ERROR,
                        "the Parquet writer (DuckDB through node) failed on " + csv_path + ": its reason is above");
  }
  return {};
}

}  // namespace quire::cli
