// Embind bindings of the store (quire/store.h): a version-2 file held in wasm memory (core's
// memory_target) or in JavaScript (a Node file through node:fs), changed by core's commits. Core
// makes no random numbers and keeps no keys: both come from JavaScript hooks (js/src/store.ts),
// crypto.getRandomValues and the caller's partition keys.
#include <emscripten/bind.h>
#include <emscripten/val.h>

#include <cstdlib>
#include <memory>

#include "bind_sources.h"
#include "bind_support.h"
#include "bind_targets.h"
#include "quire/format.h"
#include "quire/store.h"

namespace {

namespace fmt = quire::format;
using emscripten::val;
using quire::wasm::error_record;

using quire::wasm::heap_address;
using quire::wasm::js_target;
using quire::wasm::random_from;

/// Partition keys from the wrapper: hooks.findKey(value, isNull) -> Uint8Array, null (none yet),
/// or a string (the caller's callback failed: its message); hooks.keepKey(value, isNull, pointer)
/// -> "" or a message, copying the 32 bytes at `pointer` before it returns.
class js_partition_keys final : public fmt::partition_keys {
 public:
  explicit js_partition_keys(val hooks) : hooks_(std::move(hooks)) {}
  quire::result<std::optional<quire::crypto::key>> find(std::string_view value, bool null) override {
    val found = hooks_.call<val>("findKey", std::string(value), null);
    if (found.isNull() || found.isUndefined()) return std::optional<quire::crypto::key>();
    if (found.isString()) return quire::error(quire::error_code::INVALID_ARGUMENT, found.as<std::string>());
    auto bytes = found.as<std::string>();
    auto k = quire::crypto::key_from_bytes({reinterpret_cast<const uint8_t *>(bytes.data()), bytes.size()});
    if (!k) {
      return quire::error(quire::error_code::INVALID_ARGUMENT, "the key of partition '" + std::string(value) +
                                                                   "' holds " + std::to_string(bytes.size()) +
                                                                   " bytes; a key is 32");
    }
    return std::optional<quire::crypto::key>(*k);
  }
  quire::result<void> keep(std::string_view value, bool null, const quire::crypto::key &key) override {
    auto message = hooks_.call<std::string>("keepKey", std::string(value), null, heap_address(key.bytes().data()));
    if (message.empty()) return {};
    return quire::error(quire::error_code::INVALID_ARGUMENT, message);
  }

 private:
  val hooks_;
};

/// The store options as the wrapper sends them (store.ts storeSettings): the write options as
/// format.write's JSON, keys as bytes (Embind copies a Uint8Array into a std::string as it is).
struct store_settings {
  std::string write_options;
  std::string partition_by;
  std::string owner_key;
  std::string owner_passphrase;
  double kdf_passes = 0;        // 0: core's default cost
  double kdf_memory_bytes = 0;  // 0: core's default cost
};

struct commit_record {
  error_record error;
  double commit = 0, rows = 0, segments_written = 0, bytes_before = 0, bytes_after = 0;
};

struct text_record {
  error_record error;
  std::string text;
};

commit_record failed(const quire::error &e) {
  commit_record r;
  r.error = quire::wasm::to_record(e);
  return r;
}

commit_record committed(const quire::result<fmt::store_result> &r) {
  if (!r) return failed(r.error());
  commit_record out;
  out.commit = static_cast<double>(r->commit);
  out.rows = static_cast<double>(r->rows);
  out.segments_written = static_cast<double>(r->segments_written);
  out.bytes_before = static_cast<double>(r->bytes_before);
  out.bytes_after = static_cast<double>(r->bytes_after);
  return out;
}

/// Options and the partition keys they point at, alive for one call.
struct call_options {
  fmt::store_options options;
  std::unique_ptr<js_partition_keys> keys;
};

quire::result<call_options> options_from(const store_settings &s, val hooks) {
  call_options c;
  auto &o = c.options;
  fmt::input_options unused;
  if (!s.write_options.empty()) {
    if (auto r = fmt::parse_write_options_json(s.write_options, o.write, unused); !r) return std::move(r).error();
  }
  o.partition_by = s.partition_by;
  o.owner_key = s.owner_key;
  o.owner_passphrase = s.owner_passphrase;
  if (s.kdf_passes > 0) o.cost.passes = static_cast<uint64_t>(s.kdf_passes);
  if (s.kdf_memory_bytes > 0) o.cost.memory_bytes = static_cast<uint64_t>(s.kdf_memory_bytes);
  c.keys = std::make_unique<js_partition_keys>(hooks);
  o.keys = c.keys.get();
  o.random = random_from(hooks);
  return c;
}

quire::result<fmt::filter> filter_from(const std::string &where_json) {
  // The wrapper sends {"where": ...}: the one query parser reads both forms of a filter.
  auto q = fmt::parse_query_json(where_json);
  if (!q) return std::move(q).error();
  if (!q->where) return quire::error(quire::error_code::INVALID_QUERY, "a change needs a filter (where)");
  return std::move(*q->where);
}

/// A version-2 file being changed: in wasm memory, or in a JavaScript target.
class store_file {
 public:
  store_file() : memory_(new fmt::memory_target()), target_(memory_) {}
  explicit store_file(val target)
      : owned_js_(std::make_unique<js_target>(std::move(target))), target_(owned_js_.get()) {}
  ~store_file() { delete memory_; }
  store_file(const store_file &) = delete;
  store_file &operator=(const store_file &) = delete;

  /// Copies `length` bytes at `pointer` (the caller frees them) as the memory file's bytes.
  void load(uintptr_t pointer, size_t length) {
    if (!memory_) return;
    const auto *p = reinterpret_cast<const uint8_t *>(pointer);
    memory_->bytes.assign(p, p + length);
  }

  /// The memory file's bytes (0 and 0 for a JavaScript target); valid until the next change.
  double pointer() const { return memory_ ? heap_address(memory_->bytes.data()) : 0; }
  double size() const { return static_cast<double>(target_->size()); }

  /// Creates the store from the version-1 table at `pointer` (format.write's bytes).
  commit_record create(uintptr_t pointer, size_t length, const store_settings &s, val hooks) {
    auto c = options_from(s, hooks);
    if (!c) return failed(c.error());
    auto table = fmt::file::open(quire::borrow_bytes({reinterpret_cast<const uint8_t *>(pointer), length}));
    if (!table) return failed(table.error());
    return committed(fmt::create_store(*table, c->options, *target_));
  }

  /// Appends the rows of the version-1 table at `pointer` (written with this file's schema).
  commit_record append(uintptr_t pointer, size_t length, const store_settings &s, val hooks) {
    auto c = options_from(s, hooks);
    if (!c) return failed(c.error());
    auto rows = fmt::file::open(quire::borrow_bytes({reinterpret_cast<const uint8_t *>(pointer), length}));
    if (!rows) return failed(rows.error());
    return committed(fmt::append_store(*target_, *rows, c->options));
  }

  commit_record remove(const std::string &where_json, const store_settings &s, val hooks) {
    auto c = options_from(s, hooks);
    if (!c) return failed(c.error());
    auto where = filter_from(where_json);
    if (!where) return failed(where.error());
    return committed(fmt::delete_rows(*target_, *where, c->options));
  }

  commit_record update(const std::string &where_json, const std::string &column, const std::string &value_text,
                       const store_settings &s, val hooks) {
    auto c = options_from(s, hooks);
    if (!c) return failed(c.error());
    auto where = filter_from(where_json);
    if (!where) return failed(where.error());
    return committed(fmt::update_rows(*target_, *where, column, value_text, c->options));
  }

  /// Writes the live rows into `fresh` (empty); the wrapper then puts `fresh` in this one's place.
  commit_record compact_into(store_file &fresh, const store_settings &s, val hooks) {
    auto c = options_from(s, hooks);
    if (!c) return failed(c.error());
    return committed(fmt::compact_store(*target_, *fresh.target_, c->options));
  }

  /// Re-seals the pages into `fresh` (empty) under new data keys: every partition, or (`one`) the
  /// partition `value` (`is_null`: the null value); the wrapper then puts `fresh` in this one's place.
  commit_record reseal_into(store_file &fresh, const store_settings &s, val hooks, bool one, const std::string &value,
                            bool is_null) {
    auto c = options_from(s, hooks);
    if (!c) return failed(c.error());
    std::optional<std::string> only;
    if (one) only = value;
    return committed(fmt::reseal_store(*target_, *fresh.target_, c->options, only, is_null));
  }

  /// `new_key` (32 bytes) or `new_passphrase`: the owner's from now on; `s` holds the old one.
  commit_record rotate(const store_settings &s, val hooks, const std::string &new_key,
                       const std::string &new_passphrase) {
    auto c = options_from(s, hooks);
    if (!c) return failed(c.error());
    return committed(fmt::rotate_owner_key(*target_, c->options, new_key, new_passphrase));
  }

  /// The storage report (store_report) as the key in `s` sees it.
  text_record storage(const store_settings &s) const {
    text_record out;
    auto r = fmt::storage_of_store(*target_, open_with(s));
    if (!r) out.error = quire::wasm::to_record(r.error());
    else out.text = fmt::to_json(*r);
    return out;
  }

  /// The file's info as to_json(file_info) writes it (its schema is what append writes rows with).
  text_record info(const store_settings &s) const {
    text_record out;
    auto f = fmt::file::open(*target_, open_with(s));
    if (!f) out.error = quire::wasm::to_record(f.error());
    else out.text = fmt::to_json(f->info());
    return out;
  }

 private:
  static fmt::open_options open_with(const store_settings &s) {
    fmt::open_options o;
    o.key = s.owner_key;
    o.passphrase = s.owner_passphrase;
    return o;
  }

  fmt::memory_target *memory_ = nullptr;
  std::unique_ptr<js_target> owned_js_;
  fmt::append_target *target_;
};

/// The storage report of a version-2 file as `key` or `passphrase` sees it (a partition's key:
/// its own partition), from bytes the wrapper placed in the heap (it frees them) or a range reader
/// (bind_sources.h). For format.storeStorage: what `quire inspect --storage` prints.
text_record storage_of(const quire::byte_source &source, const std::string &key, const std::string &passphrase) {
  fmt::open_options o;
  o.key = key;
  o.passphrase = passphrase;
  text_record out;
  auto r = fmt::storage_of_store(source, o);
  if (!r) out.error = quire::wasm::to_record(r.error());
  else out.text = fmt::to_json(*r);
  return out;
}

text_record storage_of_bytes(uintptr_t pointer, size_t length, std::string key, std::string passphrase) {
  auto source = quire::borrow_bytes({reinterpret_cast<const uint8_t *>(pointer), length});
  return storage_of(*source, key, passphrase);
}

text_record storage_of_reader(double size, val reader, std::string key, std::string passphrase) {
  quire::wasm::js_range_source source(size, std::move(reader));
  return storage_of(source, key, passphrase);
}

store_file *store_in_memory() { return new store_file(); }
store_file *store_through(val target) { return new store_file(std::move(target)); }

}  // namespace

QUIRE_BINDINGS(store) {
  using namespace emscripten;
  value_object<store_settings>("StoreSettings")
      .field("writeOptions", &store_settings::write_options)
      .field("partitionBy", &store_settings::partition_by)
      .field("ownerKey", &store_settings::owner_key)
      .field("ownerPassphrase", &store_settings::owner_passphrase)
      .field("kdfPasses", &store_settings::kdf_passes)
      .field("kdfMemoryBytes", &store_settings::kdf_memory_bytes);
  value_object<commit_record>("StoreCommitRecord")
      .field("error", &commit_record::error)
      .field("commit", &commit_record::commit)
      .field("rows", &commit_record::rows)
      .field("segmentsWritten", &commit_record::segments_written)
      .field("bytesBefore", &commit_record::bytes_before)
      .field("bytesAfter", &commit_record::bytes_after);
  value_object<text_record>("StoreTextRecord").field("error", &text_record::error).field("text", &text_record::text);
  class_<store_file>("StoreFile")
      .function("load", &store_file::load, allow_raw_pointers())
      .function("pointer", &store_file::pointer)
      .function("size", &store_file::size)
      .function("create", &store_file::create, allow_raw_pointers())
      .function("append", &store_file::append, allow_raw_pointers())
      .function("remove", &store_file::remove)
      .function("update", &store_file::update)
      .function("compactInto", &store_file::compact_into)
      .function("resealInto", &store_file::reseal_into)
      .function("rotate", &store_file::rotate)
      .function("storage", &store_file::storage)
      .function("info", &store_file::info);
  function("storeInMemory", &store_in_memory, allow_raw_pointers());
  function("storeStorageOfBytes", &storage_of_bytes, allow_raw_pointers());
  function("storeStorageOfReader", &storage_of_reader);
  function("storeThrough", &store_through, allow_raw_pointers());
}
