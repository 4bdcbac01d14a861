// `quire keygen`, `append`, `update`, `delete`, `compact` and `keys rotate`: growing and sealed
// .quire files (quire/store.h) from the command line. Each change holds the file's lock
// (native::append_file) while it writes one commit.
#include "cli_store.h"

#include <sys/stat.h>

#include <cstdio>
#include <cstdlib>

#include "quire/detect.h"
#include "quire/store_file.h"

namespace quire::cli {

key_options::key_options(arguments &args)
    : key_file(args.option("--key")), passphrase_file(args.option("--passphrase-file")) {}

int key_options::load(format::open_options &o) const {
  if (key_file) {
    auto k = native::read_key_file(*key_file);
    if (!k) return fail(*key_file, k.error());
    o.key = std::move(k).value();
  }
  if (passphrase_file) {
    auto p = native::read_passphrase_file(*passphrase_file);
    if (!p) return fail(*passphrase_file, p.error());
    o.passphrase = std::move(p).value();
  }
  return EXIT_OK;
}

int key_options::load(format::store_options &o) const {
  format::open_options oo;
  if (int r = load(oo); r != EXIT_OK) return r;
  o.owner_key = std::move(oo.key);
  o.owner_passphrase = std::move(oo.passphrase);
  return EXIT_OK;
}

store_flags::store_flags(arguments &args)
    : store(args.flag("--store")),
      partition_by(args.option("--partition-by")),
      owner_key(args.option("--owner-key")),
      passphrase_file(args.option("--passphrase-file")),
      keys_dir(args.option("--keys-dir")) {}

namespace {

format::random_source platform_random() {
  return [](std::span<uint8_t> out) { return native::system_random(out); };
}

/// Renames `from` over `to`, or removes `from` and fails.
int rename_into_place(const std::string &from, const std::string &to) {
  if (std::rename(from.c_str(), to.c_str()) != 0) {
    std::remove(from.c_str());
    return fail(to, quire::error(error_code::IO_ERROR, "cannot rename the new file into place"));
  }
  return EXIT_OK;
}

void print_commit(const std::string &path, const char *what, const format::store_result &r, bool quiet) {
  if (quiet) return;
  std::printf("%s: commit %llu, %llu rows %s, %llu segments written, %llu -> %llu bytes\n", path.c_str(),
              static_cast<unsigned long long>(r.commit), static_cast<unsigned long long>(r.rows), what,
              static_cast<unsigned long long>(r.segments_written), static_cast<unsigned long long>(r.bytes_before),
              static_cast<unsigned long long>(r.bytes_after));
}

/// Opens `path` to change it: locked, with the owner's key from the options.
result<std::unique_ptr<native::append_file>> open_for_change(const std::string &path) {
  return native::append_file::open(path, false);
}

}  // namespace

int write_store(format::file &table, const format::write_options &write, const store_flags &flags,
                const std::string &output, bool quiet) {
  format::store_options o;
  o.write = write;
  o.write.spill = nullptr;
  if (flags.partition_by) o.partition_by = *flags.partition_by;
  if (flags.owner_key) {
    auto k = native::read_key_file(*flags.owner_key);
    if (!k) return fail(*flags.owner_key, k.error());
    o.owner_key = std::move(k).value();
  }
  if (flags.passphrase_file) {
    auto p = native::read_passphrase_file(*flags.passphrase_file);
    if (!p) return fail(*flags.passphrase_file, p.error());
    o.owner_passphrase = std::move(p).value();
  }
  const bool sealed = !o.owner_key.empty() || !o.owner_passphrase.empty();
  if (flags.keys_dir && !sealed)
    return usage_error("convert", "--keys-dir holds partition keys: it needs --owner-key or --passphrase-file");
  if (sealed && o.partition_by.empty() && flags.keys_dir)
    return usage_error("convert", "--keys-dir needs --partition-by (a key per partition)");
  if (sealed && !o.partition_by.empty() && !flags.keys_dir)
    return usage_error("convert", "a sealed, partitioned file needs --keys-dir DIR for the partitions' keys");
  std::optional<native::key_folder> keys;
  if (flags.keys_dir) {
    keys.emplace(*flags.keys_dir);
    o.keys = &*keys;
  }
  o.random = platform_random();
  const std::string temp = output + ".tmp-" + std::to_string(::getpid());
  std::remove(temp.c_str());
  auto target = native::append_file::open(temp, true);
  if (!target) return fail(temp, target.error());
  auto made = format::create_store(table, o, *target.value());
  target.value().reset();
  if (!made) {
    std::remove(temp.c_str());
    return fail(output, made.error());
  }
  if (int r = rename_into_place(temp, output); r != EXIT_OK) return r;
  if (!quiet) {
    std::printf("%s: %llu rows, %llu bytes, version 2%s%s\n", output.c_str(),
                static_cast<unsigned long long>(made->rows), static_cast<unsigned long long>(made->bytes_after),
                sealed ? ", sealed" : "", o.partition_by.empty() ? "" : (", partitioned by " + o.partition_by).c_str());
  }
  return EXIT_OK;
}

namespace {

int run_keygen(arguments &args) {
  auto files = args.finish("keygen", 1, 1, "needs OUT.key");
  if (!files) return args.exit_status();
  std::array<uint8_t, crypto::KEY_BYTES> k{};
  if (auto r = native::system_random(k); !r) return fail((*files)[0], r.error());
  auto w = native::write_new_key_file((*files)[0], k);
  if (!w) return fail((*files)[0], w.error());
  return EXIT_OK;
}

/// Reads CSV or NDJSON into a version-1 table in memory with the schema `schema`.
result<std::optional<format::file>> read_rows(const std::string &path, const std::optional<std::string> &from,
                                              const format::schema &schema, format::vector_sink &sink) {
  auto in = native::open_file(path, {.mode = native::load_mode::read});
  if (!in) return std::move(in).error();
  auto bytes = in.value()->contiguous();
  std::string_view text(reinterpret_cast<const char *>(bytes.data()), bytes.size());
  std::string kind = from.value_or("");
  format::input_options input;
  if (kind.empty()) {
    auto d = detect_input(text.substr(0, DETECT_BYTES), text.size() <= DETECT_BYTES, path);
    kind = d.kind == input_kind::csv ? "csv" : "ndjson";
    if (d.kind == input_kind::csv) input.csv.delimiter = d.delimiter;
  }
  input.schema = schema;
  format::write_options wo;
  auto n = kind == "csv" ? format::write_csv(text, wo, sink, input) : format::write_ndjson(text, wo, sink, input);
  if (!n) return std::move(n).error();
  auto f = format::file::open(quire::borrow_bytes(sink.bytes));
  if (!f) return std::move(f).error();
  return std::optional<format::file>(std::move(f).value());
}

int run_append(arguments &args) {
  auto from = args.option("--from");
  key_options keys(args);
  auto keys_dir = args.option("--keys-dir");
  bool quiet = args.flag("--quiet");
  auto files = args.finish("append", 2, 2, "needs FILE.quire and INPUT");
  if (!files) return args.exit_status();
  if (from && *from != "csv" && *from != "ndjson") return usage_error("append", "--from takes csv or ndjson");
  const std::string &path = (*files)[0], &input = (*files)[1];
  format::store_options o;
  if (int r = keys.load(o); r != EXIT_OK) return r;
  std::optional<native::key_folder> folder;
  if (keys_dir) {
    folder.emplace(*keys_dir);
    o.keys = &*folder;
  }
  o.random = platform_random();
  auto target = open_for_change(path);
  if (!target) return fail(path, target.error());
  // The file's own schema reads the input, so its values are typed as the file's are.
  format::open_options oo;
  oo.key = o.owner_key;
  oo.passphrase = o.owner_passphrase;
  auto current = format::file::open(*target.value(), oo);
  if (!current) return fail(path, current.error());
  if (current->info().version != format::STORE_VERSION) {
    return fail(path, quire::error(error_code::INVALID_ARGUMENT,
                                   "a version-1 file cannot grow: write it with `quire convert ... --store` first"));
  }
  format::vector_sink sink;
  auto rows = read_rows(input, from, current->schema(), sink);
  if (!rows) return fail(input, rows.error());
  auto r = format::append_store(*target.value(), **rows, o);
  if (!r) return fail(path, r.error());
  print_commit(path, "appended", *r, quiet);
  return EXIT_OK;
}

int run_delete(arguments &args) {
  auto where = args.option("--where");
  key_options keys(args);
  bool quiet = args.flag("--quiet");
  auto files = args.finish("delete", 1, 1, "needs FILE.quire");
  if (!files) return args.exit_status();
  if (!where) return usage_error("delete", "needs --where EXPR (the rows to delete)");
  const std::string &path = (*files)[0];
  auto flt = format::parse_expression(*where);
  if (!flt) return fail("--where", flt.error());
  format::store_options o;
  if (int r = keys.load(o); r != EXIT_OK) return r;
  o.random = platform_random();
  auto target = open_for_change(path);
  if (!target) return fail(path, target.error());
  auto r = format::delete_rows(*target.value(), *flt, o);
  if (!r) return fail(path, r.error());
  print_commit(path, "deleted", *r, quiet);
  return EXIT_OK;
}

/// Rewrites the store at `path` by `rewrite(source, fresh)` (compact_store, reseal_store) into a
/// file beside it (PATH.WHAT-PID), then renames that over it. The old file stays locked (no append
/// can slip in) until the new one has replaced it. Prints "PATH: DONE, N rows in M segments, ...".
template <class Rewrite>
int rewrite_into_place(const std::string &path, const char *what, const char *done, bool quiet, Rewrite rewrite) {
  auto source = open_for_change(path);
  if (!source) return fail(path, source.error());
  const std::string temp = path + "." + what + "-" + std::to_string(::getpid());
  std::remove(temp.c_str());
  auto fresh = native::append_file::open(temp, true);
  if (!fresh) return fail(temp, fresh.error());
  auto r = rewrite(*source.value(), *fresh.value());
  fresh.value().reset();
  if (!r) {
    std::remove(temp.c_str());
    return fail(path, r.error());
  }
  const uint64_t before = source.value()->size();
  if (int e = rename_into_place(temp, path); e != EXIT_OK) return e;
  if (!quiet) {
    std::printf("%s: %s, %llu rows in %llu segments, %llu -> %llu bytes\n", path.c_str(), done,
                static_cast<unsigned long long>(r->rows), static_cast<unsigned long long>(r->segments_written),
                static_cast<unsigned long long>(before), static_cast<unsigned long long>(r->bytes_after));
  }
  return EXIT_OK;
}

int run_update(arguments &args) {
  auto where = args.option("--where");
  auto set = args.option("--set");
  key_options keys(args);
  auto keys_dir = args.option("--keys-dir");
  bool quiet = args.flag("--quiet");
  auto files = args.finish("update", 1, 1, "needs FILE.quire");
  if (!files) return args.exit_status();
  if (!where || !set || set->find('=') == std::string::npos)
    return usage_error("update", "needs --where EXPR and --set COLUMN=VALUE");
  const std::string &path = (*files)[0];
  auto flt = format::parse_expression(*where);
  if (!flt) return fail("--where", flt.error());
  format::store_options o;
  if (int r = keys.load(o); r != EXIT_OK) return r;
  std::optional<native::key_folder> folder;
  if (keys_dir) {
    folder.emplace(*keys_dir);
    o.keys = &*folder;
  }
  o.random = platform_random();
  auto target = open_for_change(path);
  if (!target) return fail(path, target.error());
  const size_t eq = set->find('=');
  auto r = format::update_rows(*target.value(), *flt, set->substr(0, eq), set->substr(eq + 1), o);
  if (!r) return fail(path, r.error());
  print_commit(path, "updated", *r, quiet);
  return EXIT_OK;
}

int run_compact(arguments &args) {
  key_options keys(args);
  bool quiet = args.flag("--quiet");
  auto files = args.finish("compact", 1, 1, "needs FILE.quire");
  if (!files) return args.exit_status();
  const std::string &path = (*files)[0];
  format::store_options o;
  if (int r = keys.load(o); r != EXIT_OK) return r;
  o.random = platform_random();
  return rewrite_into_place(path, "compact", "compacted", quiet,
                            [&](auto &source, auto &fresh) { return format::compact_store(source, fresh, o); });
}

/// `keys rotate FILE --key OWNER --partition VALUE --keys-dir DIR`: a new random key for one
/// partition, kept as DIR/VALUE.key once the commit is made (written beside it first as .new).
int rotate_partition(const std::string &path, const key_options &keys, const std::string &value, const std::string &dir,
                     bool quiet) {
  format::store_options o;
  if (int r = keys.load(o); r != EXIT_OK) return r;
  o.random = platform_random();
  native::key_folder folder(dir);
  o.keys = &folder;
  auto key_path = folder.path_of(value, false);
  if (!key_path) return fail(dir, key_path.error());
  std::array<uint8_t, crypto::KEY_BYTES> raw{};
  if (auto r = native::system_random(raw); !r) return fail(path, r.error());
  auto fresh = crypto::key_from_bytes(raw);
  if (!fresh) return fail(path, fresh.error());
  const std::string staged = *key_path + ".new";
  std::remove(staged.c_str());
  if (auto w = native::write_new_key_file(staged, raw); !w) return fail(staged, w.error());
  auto target = open_for_change(path);
  if (!target) return fail(path, target.error());
  auto r = format::rotate_partition_key(*target.value(), o, value, false, *fresh);
  if (!r) {
    std::remove(staged.c_str());
    return fail(path, r.error());
  }
  if (std::rename(staged.c_str(), key_path->c_str()) != 0) {
    return fail(*key_path, quire::error(error_code::IO_ERROR,
                                        "the new key is in " + staged + ": move it over the old one by hand"));
  }
  print_commit(path, "re-keyed", *r, quiet);
  return EXIT_OK;
}

/// `keys rotate FILE --key OWNER --reseal [--partition VALUE] [--keys-dir DIR]`: every page (or
/// one partition's) sealed again under new data keys, into a file beside the old one that is then
/// renamed over it, as compaction does. The partitions' keys (DIR) stay as they are.
int reseal(const std::string &path, const key_options &keys, const std::optional<std::string> &partition,
           const std::optional<std::string> &dir, bool quiet) {
  format::store_options o;
  if (int r = keys.load(o); r != EXIT_OK) return r;
  o.random = platform_random();
  std::optional<native::key_folder> folder;
  if (dir) {
    folder.emplace(*dir);
    o.keys = &*folder;
  }
  return rewrite_into_place(path, "reseal", "re-sealed under new data keys", quiet, [&](auto &source, auto &fresh) {
    return format::reseal_store(source, fresh, o, partition, false);
  });
}

int run_rotate(arguments &args) {
  key_options keys(args);
  const bool resealing = args.flag("--reseal");
  auto new_key = args.option("--new-key");
  auto new_phrase = args.option("--new-passphrase-file");
  auto partition = args.option("--partition");
  auto keys_dir = args.option("--keys-dir");
  bool quiet = args.flag("--quiet");
  auto files = args.finish("keys rotate", 1, 1, "needs FILE.quire");
  if (!files) return args.exit_status();
  if (resealing) {
    if (new_key || new_phrase)
      return usage_error("keys rotate", "--reseal keeps the owner's key: rotate it with --new-key in its own run");
    return reseal((*files)[0], keys, partition, keys_dir, quiet);
  }
  if (partition) {
    if (!keys_dir || new_key || new_phrase)
      return usage_error("keys rotate", "--partition VALUE takes --keys-dir DIR (the new key is made there)");
    return rotate_partition((*files)[0], keys, *partition, *keys_dir, quiet);
  }
  if (!new_key == !new_phrase) return usage_error("keys rotate", "needs --new-key FILE or --new-passphrase-file FILE");
  const std::string &path = (*files)[0];
  format::store_options o;
  if (int r = keys.load(o); r != EXIT_OK) return r;
  o.random = platform_random();
  std::string k, p;
  if (new_key) {
    auto b = native::read_key_file(*new_key);
    if (!b) return fail(*new_key, b.error());
    k = std::move(b).value();
  } else {
    auto b = native::read_passphrase_file(*new_phrase);
    if (!b) return fail(*new_phrase, b.error());
    p = std::move(b).value();
  }
  auto target = open_for_change(path);
  if (!target) return fail(path, target.error());
  auto r = format::rotate_owner_key(*target.value(), o, k, p);
  if (!r) return fail(path, r.error());
  print_commit(path, "re-keyed", *r, quiet);
  return EXIT_OK;
}

registration store_keygen{{"keygen", "", "OUT.key",
                           "Write a new random 256-bit key file (mode 0600; an existing file is refused).",
                           run_keygen}};
registration store_append{
    {"append", "",
     "FILE.quire INPUT [--from csv|ndjson] [--key FILE | --passphrase-file FILE] [--keys-dir DIR] [--quiet]",
     "Append CSV or NDJSON rows (read with the file's schema) to a version-2 .quire file as one commit; a sealed file "
     "needs the owner's key, a new partition's key is made in DIR.",
     run_append}};
registration store_update{{"update", "",
                           "FILE.quire --where EXPR --set COL=VALUE [--key FILE | --passphrase-file FILE]",
                           "Set a column in the rows EXPR selects: their old versions deleted, the new appended, one "
                           "commit.",
                           run_update}};
registration store_delete{{"delete", "", "FILE.quire --where EXPR [--key FILE | --passphrase-file FILE]",
                           "Delete the rows EXPR selects (deletion vectors: nothing is rewritten).", run_delete}};
registration store_compact{{"compact", "", "FILE.quire [--key FILE | --passphrase-file FILE]",
                            "Rewrite a version-2 file as one segment per partition, without deleted rows or garbage "
                            "(written beside it, then renamed over it).",
                            run_compact}};
registration store_rotate{
    {"keys", "rotate",
     "FILE.quire (--key OLD | --passphrase-file OLD) (--new-key NEW | --new-passphrase-file NEW | --partition VALUE "
     "--keys-dir DIR | --reseal [--partition VALUE] [--keys-dir DIR])",
     "Re-wrap every data key under a new owner key or passphrase, or give one partition a new key (no page is "
     "rewritten); --reseal seals every page (or one partition's) again under new data keys, without decompressing "
     "it, into a file renamed over the old one (a partitioned file needs its keys folder).",
     run_rotate}};

}  // namespace
}  // namespace quire::cli
