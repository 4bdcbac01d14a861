// Datasets on files (cli_dataset.h): `view run --out DIR --partition-by COL`, `quire dataset
// merge DIR`, and the reading `quire query DIR` does.
#include "cli_dataset.h"

#include <dirent.h>
#include <sys/stat.h>

#include <algorithm>
#include <cerrno>
#include <vector>

#include "quire/file_source.h"

namespace quire::cli {

bool is_directory(const std::string &path) {
  struct stat st {};
  return ::stat(path.c_str(), &st) == 0 && S_ISDIR(st.st_mode);
}

namespace {

result<void> make_dir(const std::string &path) {
  if (::mkdir(path.c_str(), 0777) == 0 || (errno == EEXIST && is_directory(path))) return {};
  return quire::error(error_code::IO_ERROR, "cannot create the folder " + path);
}

result<std::string> read_small_file(const std::string &path, size_t limit) {
  auto src = native::open_file(path, {.mode = native::load_mode::read});
  if (!src) return src.error();
  if ((*src)->size() > limit) {
    return quire::error(error_code::DOCUMENT_TOO_LARGE, path + " is larger than " + std::to_string(limit) + " bytes");
  }
  std::string text(static_cast<size_t>((*src)->size()), '\0');
  auto r = (*src)->read_at(0, std::span<uint8_t>(reinterpret_cast<uint8_t *>(text.data()), text.size()));
  if (!r) return r.error();
  return text;
}

result<void> write_text(const std::string &path, const std::string &text, bool replace) {
  temp_file_sink out(path);
  if (!out.opened()) return out.open_error();
  auto w = out.write(std::span<const uint8_t>(reinterpret_cast<const uint8_t *>(text.data()), text.size()));
  if (!w) return w;
  return out.commit(replace);
}

}  // namespace

result<format::byte_sink *> dataset_parts::open(std::string_view segment) {
  if (auto ok = make_dir(dir_); !ok) return ok.error();
  const std::string folder = dir_ + "/" + std::string(segment);
  if (auto ok = make_dir(folder); !ok) return ok.error();
  auto sink = std::make_unique<temp_file_sink>(dir_ + "/" + dataset::part_path(segment, name_));
  if (!sink->opened()) return sink->open_error();
  format::byte_sink *s = sink.get();
  sinks_.emplace(std::string(segment), std::move(sink));
  return s;
}

result<dataset::manifest> dataset_parts::commit(const view::table_writer &w, const format::schema &schema,
                                                const std::string &partition_by) {
  dataset::manifest m;
  m.schema = schema;
  m.partition_by = partition_by;
  for (const auto &p : w.partitions()) {
    auto it = sinks_.find(p.segment);
    if (it == sinks_.end()) return quire::error(error_code::INVALID_ARGUMENT, "no part for " + p.segment);
    if (auto ok = it->second->commit(false); !ok) return ok.error();
  }
  for (const auto &p : w.partitions()) {
    const std::string rel = dataset::part_path(p.segment, name_);
    auto src = native::open_file(dir_ + "/" + rel, {.mode = native::load_mode::ranges});
    if (!src) return src.error();
    auto f = format::file::open(std::move(src).value());
    if (!f) return f.error();
    auto e = dataset::describe_file(*f, rel, p.value);
    if (!e) return e.error();
    m.files.push_back(std::move(e).value());
  }
  if (auto ok = make_dir(dir_); !ok) return ok.error();
  const std::string folder = dir_ + "/" + std::string(dataset::FRAGMENT_FOLDER);
  if (auto ok = make_dir(folder); !ok) return ok.error();
  if (auto ok = write_text(folder + "/" + name_ + ".json", dataset::to_json(m), false); !ok) return ok.error();
  return m;
}

result<dataset::manifest> read_manifest(const std::string &dir) {
  auto text = read_small_file(dir + "/" + std::string(dataset::MANIFEST_FILE), dataset::MAX_MANIFEST_BYTES);
  if (!text) return text.error();
  return dataset::parse_manifest(*text);
}

result<dataset::manifest> merge_dataset(const std::string &dir) {
  const std::string folder = dir + "/" + std::string(dataset::FRAGMENT_FOLDER);
  std::vector<std::string> names;
  DIR *d = ::opendir(folder.c_str());
  if (!d) return quire::error(error_code::FILE_NOT_FOUND, "no fragments: " + folder + " cannot be read");
  while (dirent *e = ::readdir(d)) {
    std::string n = e->d_name;
    if (n.size() > 5 && n.compare(n.size() - 5, 5, ".json") == 0 && n.front() != '.') names.push_back(n);
  }
  ::closedir(d);
  std::sort(names.begin(), names.end());
  std::vector<dataset::manifest> fragments;
  for (const auto &n : names) {
    auto text = read_small_file(folder + "/" + n, dataset::MAX_MANIFEST_BYTES);
    if (!text) return text.error();
    auto m = dataset::parse_manifest(*text);
    if (!m) {
      quire::error e = m.error();
      e.message = n + ": " + e.message;
      return e;
    }
    fragments.push_back(std::move(m).value());
  }
  auto merged = dataset::merge(std::move(fragments));
  if (!merged) return merged.error();
  for (const auto &f : merged->files) {
    struct stat st {};
    const std::string path = dir + "/" + f.path;
    if (::stat(path.c_str(), &st) != 0 || static_cast<uint64_t>(st.st_size) != f.bytes) {
      return quire::error(error_code::CORRUPT_FILE,
                          "a fragment lists " + f.path + " (" + std::to_string(f.bytes) + " bytes), which " +
                              (::stat(path.c_str(), &st) != 0 ? std::string("is not there")
                                                              : "holds " + std::to_string(st.st_size) + " bytes"));
    }
  }
  if (auto ok = write_text(dir + "/" + std::string(dataset::MANIFEST_FILE), dataset::to_json(*merged), true); !ok)
    return ok.error();
  return merged;
}

dataset::reader open_dataset(const std::string &dir, dataset::manifest m) {
  return dataset::reader(std::move(m), [dir](std::string_view path) {
    return native::open_file(dir + "/" + std::string(path), {.mode = native::load_mode::ranges});
  });
}

namespace {

int run_merge(arguments &args) {
  bool quiet = args.flag("--quiet");
  auto dirs = args.finish("dataset merge", 1, 1, "needs one DIR");
  if (!dirs) return args.exit_status();
  const std::string &dir = (*dirs)[0];
  auto m = merge_dataset(dir);
  if (!m) return fail(dir, m.error());
  if (!quiet) {
    std::fprintf(stderr, "%s/%s: %zu files, %llu rows\n", dir.c_str(), std::string(dataset::MANIFEST_FILE).c_str(),
                 m->files.size(), static_cast<unsigned long long>(m->rows()));
  }
  return EXIT_OK;
}

registration dataset_merge{
    {"dataset", "merge", "DIR [--quiet]",
     "Join the fragments the writers of a dataset left in DIR/_quire_parts into DIR/_quire_dataset.json, after "
     "checking that every file they list is there with its size.",
     run_merge}};

}  // namespace
}  // namespace quire::cli
