// Datasets on files (cli_dataset.h): `view run --out DIR --partition-by COL`, `quire dataset
// merge DIR`, and the reading `quire query DIR` does.
#include "cli_dataset.h"

#include <dirent.h>
#include <sys/stat.h>

#include <algorithm>
#include <cerrno>
#include <vector>

#include "cli_parquet.h"
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

std::string dataset_parts::staging() const { return dir_ + "/" + std::string(dataset::FRAGMENT_FOLDER) + "/" + name_; }

result<void> dataset_parts::claim() {
  if (auto ok = make_dir(dir_); !ok) return ok.error();
  if (auto ok = make_dir(dir_ + "/" + std::string(dataset::FRAGMENT_FOLDER)); !ok) return ok.error();
  const std::string fragment = staging() + ".json";
  const quire::error taken(error_code::INVALID_ARGUMENT,
                           "part name " + name_ + " is taken: " + staging() + " exists already (another writer's?)");
  if (::mkdir(staging().c_str(), 0777) != 0) {
    if (errno == EEXIST) return taken;
    return quire::error(error_code::IO_ERROR, "cannot create the folder " + staging());
  }
  struct stat st {};
  if (::stat(fragment.c_str(), &st) == 0) return taken;
  return {};
}

result<format::byte_sink *> dataset_parts::open(std::string_view segment) {
  if (auto ok = make_dir(staging() + "/" + std::string(segment)); !ok) return ok.error();
  auto sink = std::make_unique<temp_file_sink>(staging() + "/" + dataset::part_path(segment, name_));
  if (!sink->opened()) return sink->open_error();
  format::byte_sink *s = sink.get();
  sinks_.emplace(std::string(segment), std::move(sink));
  return s;
}

namespace {

constexpr uint64_t PARQUET_BATCH_ROWS = 262144;

// The part's rows as core's CSV, a batch of rows at a time, into DuckDB's Parquet writer.
result<void> part_to_parquet(format::file &f, const std::string &quire_path) {
  const std::string stem = quire_path.substr(0, quire_path.size() - std::string_view(".quire").size());
  parquet_sink out;
  if (auto ok = out.start(f.schema(), stem + ".parquet"); !ok) return ok;
  for (uint64_t at = 0; at == 0 || at < f.row_count(); at += PARQUET_BATCH_ROWS) {
    format::query q;
    q.offset = at;
    q.limit = PARQUET_BATCH_ROWS;
    auto rows = f.query(q, format::row_text::csv);
    if (!rows) return rows.error();
    std::string_view text = rows->json;
    if (at) text = text.substr(std::min(text.size(), text.find('\n') + 1));  // the header once
    auto w = out.write(std::span<const uint8_t>(reinterpret_cast<const uint8_t *>(text.data()), text.size()));
    if (!w) return w;
  }
  return out.finish();
}

}  // namespace

result<dataset::manifest> dataset_parts::commit(const view::table_writer &w, const format::schema &schema,
                                                const std::string &partition_by, bool parquet,
                                                std::vector<dataset::input_range> ranges) {
  dataset::manifest m;
  m.schema = schema;
  m.partition_by = partition_by;
  m.ranges = std::move(ranges);
  for (auto &r : m.ranges) r.part = name_;
  for (const auto &p : w.partitions()) {
    auto it = sinks_.find(p.segment);
    if (it == sinks_.end()) return quire::error(error_code::INVALID_ARGUMENT, "no part for " + p.segment);
    if (auto ok = it->second->commit(); !ok) return ok.error();
  }
  for (const auto &p : w.partitions()) {
    const std::string rel = dataset::part_path(p.segment, name_);
    auto src = native::open_file(staging() + "/" + rel, {.mode = native::load_mode::ranges});
    if (!src) return src.error();
    auto f = format::file::open(std::move(src).value());
    if (!f) return f.error();
    auto e = dataset::describe_file(*f, rel, p.value);
    if (!e) return e.error();
    if (parquet) {
      if (auto ok = part_to_parquet(*f, staging() + "/" + rel); !ok) return ok.error();
    }
    m.files.push_back(std::move(e).value());
  }
  if (auto ok = write_text(staging() + ".json", dataset::to_json(m), false); !ok) return ok.error();
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
  // Each writer's staged files into place: a hard link to the final name (which fails if the
  // name is taken), then the staged name removed. A file already in place was moved by an earlier
  // merge. Parquet twins move with their parts.
  for (size_t k = 0; k < names.size(); ++k) {
    const std::string staged = folder + "/" + names[k].substr(0, names[k].size() - 5);
    for (const auto &f : fragments[k].files) {
      const std::string stem = f.path.substr(0, f.path.size() - std::string_view(".quire").size());
      for (const std::string &rel : {f.path, stem + ".parquet"}) {
        const std::string from = staged + "/" + rel, to = dir + "/" + rel;
        struct stat st {};
        if (::stat(from.c_str(), &st) != 0) continue;
        if (auto ok = make_dir(to.substr(0, to.rfind('/'))); !ok) return ok.error();
        if (::link(from.c_str(), to.c_str()) != 0) {
          if (errno == EEXIST)
            return quire::error(error_code::INVALID_ARGUMENT, to + " exists already: two writers chose one part name?");
          return quire::error(error_code::IO_ERROR, "cannot move " + from + " to " + to);
        }
        std::remove(from.c_str());
      }
    }
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
