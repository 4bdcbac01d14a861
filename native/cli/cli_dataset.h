// The `quire` CLI's partitioned datasets (quire/dataset.h) on files: the part sinks of
// `view run --partition-by`, the fragment each writer leaves, the merge into the manifest, and
// `quire query DIR`.
#pragma once

#include <map>
#include <memory>
#include <string>

#include "cli.h"
#include "quire/dataset.h"
#include "quire/view.h"

namespace quire::cli {

/// A writer's part files, staged as Hadoop's file committer stages them: under
/// `DIR/_quire_parts/NAME/SEGMENT/part-NAME.quire` (a folder every engine skips, its name starting
/// with `_`), then the fragment `DIR/_quire_parts/NAME.json`; merge_dataset() moves them to
/// `DIR/SEGMENT/`. So a writer killed at any moment leaves nothing an engine reading DIR counts.
class dataset_parts final : public view::part_sinks {
 public:
  dataset_parts(std::string dir, std::string part_name) : dir_(std::move(dir)), name_(std::move(part_name)) {}
  /// Takes the part name: creates DIR/_quire_parts/NAME. INVALID_ARGUMENT when another writer has it.
  result<void> claim();
  result<format::byte_sink *> open(std::string_view segment) override;
  /// Names every staged part, describes each (from its statistics), with `parquet` writes a
  /// Parquet file beside each (part-NAME.parquet, through cli_parquet.h), and writes the writer's
  /// fragment last.
  /// `ranges`: the input range the writer ran, if it ran one (the merge checks they tile the input).
  result<dataset::manifest> commit(const view::table_writer &w, const format::schema &schema,
                                   const std::string &partition_by, bool parquet,
                                   std::vector<dataset::input_range> ranges = {});

 private:
  std::string staging() const;
  std::string dir_, name_;
  std::map<std::string, std::unique_ptr<temp_file_sink>, std::less<>> sinks_;
};

/// Reads every fragment under DIR/_quire_parts, moves each writer's staged parts (and their Parquet
/// twins) into place (a name taken there already is INVALID_ARGUMENT), merges the fragments,
/// checks each file is there with the size its fragment says (CORRUPT_FILE if not) and writes
/// DIR/_quire_dataset.json. Running it again changes nothing.
result<dataset::manifest> merge_dataset(const std::string &dir);

/// Reads DIR/_quire_dataset.json.
result<dataset::manifest> read_manifest(const std::string &dir);

/// A reader of the dataset in DIR, its files opened a range at a time.
dataset::reader open_dataset(const std::string &dir, dataset::manifest m);

/// True when `path` names a directory.
bool is_directory(const std::string &path);

}  // namespace quire::cli
