// Growing and sealed .quire files from the command line (cli_store.cpp): the key options every
// command that opens a file takes, and writing a version-2 file from a table.
#pragma once

#include <optional>
#include <string>

#include "cli.h"
#include "quire/store.h"

namespace quire::cli {

/// `--key FILE` and `--passphrase-file FILE`: how a sealed file is opened.
struct key_options {
  explicit key_options(arguments &args);
  std::optional<std::string> key_file, passphrase_file;
  /// Reads the key or passphrase into `o`. Returns EXIT_OK, or fail()'s exit code.
  int load(format::open_options &o) const;
  /// The same into a store's owner key or passphrase.
  int load(format::store_options &o) const;
};

/// What `convert` takes to write a version-2 file: --store, --partition-by, --owner-key,
/// --passphrase-file, --keys-dir. `wanted()` when any was given.
struct store_flags {
  explicit store_flags(arguments &args);
  bool store = false;
  std::optional<std::string> partition_by, owner_key, passphrase_file, keys_dir;
  bool wanted() const { return store || partition_by || owner_key || passphrase_file || keys_dir; }
};

/// Writes `table` (a version-1 table in memory) as the version-2 file `output` (a temporary name,
/// then renamed). Returns an exit code.
int write_store(format::file &table, const format::write_options &write, const store_flags &flags,
                const std::string &output, bool quiet);

}  // namespace quire::cli
