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

/// Part files under DIR: `DIR/SEGMENT/part-NAME.quire`, each written to a temporary name and
/// named only by commit(), never over a file that exists.
class dataset_parts final : public view::part_sinks {
 public:
  dataset_parts(std::string dir, std::string part_name) : dir_(std::move(dir)), name_(std::move(part_name)) {}
  result<format::byte_sink *> open(std::string_view segment) override;
  /// Names every part (INVALID_ARGUMENT when one exists already), then describes each (from its
  /// statistics) and writes the writer's fragment `DIR/_quire_parts/NAME.json` last.
  result<dataset::manifest> commit(const view::table_writer &w, const format::schema &schema,
                                   const std::string &partition_by);

 private:
  std::string dir_, name_;
  std::map<std::string, std::unique_ptr<temp_file_sink>, std::less<>> sinks_;
};

/// Reads every fragment under DIR/_quire_parts, merges them, checks each file is there with the
/// size its fragment says (CORRUPT_FILE if not) and writes DIR/_quire_dataset.json.
result<dataset::manifest> merge_dataset(const std::string &dir);

/// Reads DIR/_quire_dataset.json.
result<dataset::manifest> read_manifest(const std::string &dir);

/// A reader of the dataset in DIR, its files opened a range at a time.
dataset::reader open_dataset(const std::string &dir, dataset::manifest m);

/// True when `path` names a directory.
bool is_directory(const std::string &path);

}  // namespace quire::cli
