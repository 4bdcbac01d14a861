// quire/store.h — .quire version 2: a file that grows by commits (append, update, delete,
// compaction, key rotation), optionally sealed with one data key per partition (docs/format.md,
// "Version 2"). Reading goes through quire::format::file as for every .quire file; these are the
// operations that write one.
//
//   format::store_options o;
//   o.partition_by = "clinic";
//   o.owner_key = owner_key_bytes;           // 32 bytes: sealed; empty: plain
//   o.keys = &my_partition_keys;             // a key per clinic, found or made
//   o.random = platform_random;
//   auto made = format::create_store(table, o, target);   // table: a plain .quire file's rows
//   auto more = format::append_store(target, new_rows, o);
//
// Core does no I/O and makes no random numbers: the caller hands over an append_target (a file
// natively, memory or a Node file in JS) and a random source.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "quire/crypto.h"
#include "quire/format.h"

namespace quire::format {

/// The format version a store writes (the segments inside it keep version 1's layout).
inline constexpr uint16_t STORE_VERSION = 2;

/// A file a store reads anywhere and writes only at its end.
class append_target : public byte_source {
 public:
  /// Appends after the last byte. IO_ERROR when it cannot.
  virtual result<void> append(std::span<const uint8_t> bytes) = 0;
  /// Makes everything appended so far durable (fsync natively); a commit syncs twice, before and
  /// after its tail, so a tail on disk always points at whole bytes.
  virtual result<void> sync() = 0;
  /// Cuts the file to `size` bytes: the bytes of a commit a crash left unfinished.
  virtual result<void> truncate(uint64_t size) = 0;
};

/// An append_target in memory (tests, and the npm package's in-memory files). `sync` does nothing;
/// `fail_after` (tests) makes append fail once that many more bytes would be written, writing
/// the part that fits first, as a crash mid-write leaves a file.
class memory_target final : public append_target {
 public:
  std::vector<uint8_t> bytes;
  uint64_t fail_after = UINT64_MAX;
  memory_target() = default;
  explicit memory_target(std::vector<uint8_t> b) : bytes(std::move(b)) {}
  uint64_t size() const noexcept override { return bytes.size(); }
  std::span<const uint8_t> contiguous() const noexcept override { return bytes; }
  result<void> read_at(uint64_t offset, std::span<uint8_t> out) const override;
  std::string_view kind() const noexcept override { return "memory"; }
  result<void> append(std::span<const uint8_t> b) override;
  result<void> sync() override { return {}; }
  result<void> truncate(uint64_t size) override;
};

/// Random bytes from the platform (getrandom natively, crypto.getRandomValues in JS).
using random_source = std::function<result<void>(std::span<uint8_t>)>;

/// The keys of a sealed file's partitions, by partition value (`null` for the null value).
class partition_keys {
 public:
  virtual ~partition_keys() = default;
  /// The key of a partition, or nullopt when there is none yet (the store then makes one).
  virtual result<std::optional<crypto::key>> find(std::string_view value, bool null) = 0;
  /// Keeps a key the store made (natively: DIR/VALUE.key, written before the commit is).
  virtual result<void> keep(std::string_view value, bool null, const crypto::key &key) = 0;
};

struct store_options {
  write_options write;       ///< how each segment is written: chunk rows, pages, sort, indexes
  std::string partition_by;  ///< a column: one segment per partition value and commit; "" none
  /// The owner's key (32 bytes) or passphrase: the file is sealed when either is given. The owner
  /// reads every partition and is the only one who writes.
  std::string owner_key, owner_passphrase;
  crypto::kdf_cost cost = crypto::DEFAULT_KDF_COST;  ///< Argon2id's work for a passphrase
  partition_keys *keys = nullptr;                    ///< sealed and partitioned: each partition's key
  random_source random;                              ///< file id, data keys, salts, nonces
  size_t max_partitions = 100000;                    ///< more distinct values is INVALID_ARGUMENT
};

/// What a commit wrote.
struct store_result {
  uint64_t commit = 0;
  uint64_t rows = 0;  ///< rows added (append, create, update) or deleted (delete)
  uint64_t segments_written = 0;
  uint64_t bytes_before = 0, bytes_after = 0;
};

/// Creates a version-2 file in `target` (empty) holding the rows of `table`, partitioned and
/// sealed as `options` says. Errors: INVALID_ARGUMENT (a target that is not empty, an owner key
/// that is not 32 bytes, partition_by naming no column, no random source for a sealed file).
result<store_result> create_store(file &table, const store_options &options, append_target &target);
/// Appends the rows of `rows` (the file's schema: same names and types) as one commit. The
/// owner's key is needed for a sealed file (KEY_REQUIRED without, WRONG_KEY for another key).
/// A file a crash left with an unfinished commit is first cut back to its last whole one.
result<store_result> append_store(append_target &target, file &rows, const store_options &options);
/// Deletes the rows `where` selects (deletion vectors: no row is rewritten).
result<store_result> delete_rows(append_target &target, const filter &where, const store_options &options);
/// Sets column `column` to the value `value_text` (read as the column's type; "null" is null) in
/// the rows `where` selects: a delete and an append of the changed rows, in one commit.
result<store_result> update_rows(append_target &target, const filter &where, std::string_view column,
                                 std::string_view value_text, const store_options &options);
/// Writes the live rows of `source` into `fresh` (empty) as one segment per partition, sorted
/// and indexed as the file asks, without deleted rows or garbage. The file keeps its id, data keys
/// and wraps (every partition's key still opens it); each segment gets a new salt.
result<store_result> compact_store(append_target &source, append_target &fresh, const store_options &options);
/// Re-wraps every data key under the new owner key or passphrase (nothing else is rewritten);
/// `options` holds the old one.
result<store_result> rotate_owner_key(append_target &target, const store_options &options, std::string_view new_key,
                                      std::string_view new_passphrase);

/// Gives partition `value` the key `new_key`: its data key re-wrapped under it (one commit; no
/// page is rewritten), so the old key opens nothing. `options.keys` must hold the present key
/// (the caller then keeps the new one in its place). Errors: INVALID_ARGUMENT (not a sealed,
/// partitioned file; no present key), WRONG_KEY (the present key opens no partition).
result<store_result> rotate_partition_key(append_target &target, const store_options &options, std::string_view value,
                                          bool null, const crypto::key &new_key);

/// Re-seals the pages of `source` under new data keys into `fresh` (empty), which the caller then
/// renames over the old file (as for compaction): every page of every live segment of the
/// partitions re-sealed is opened under its old data key and sealed under a new random one with a
/// new salt, never decompressed or decoded (the segments' directories and footers are rewritten,
/// their page_refs carrying the new bytes' CRCs and places); deletion vectors and partition
/// directories are sealed again under the new keys, and the new data keys wrapped under each
/// partition's key (from `options.keys`) and the owner's. The file id stays, so every partition's
/// key still opens its partition; a holder of an old data key opens nothing. `only` (a partition
/// value, `only_null` for the null value) re-seals that partition alone and copies the others'
/// segments byte for byte. Old commits and the bytes they left are not copied. Errors:
/// INVALID_ARGUMENT (a plain file, no random source, a partitioned file with no keys folder or one
/// missing a partition's key, `only` naming no partition), WRONG_KEY (a folder key of another
/// file), KEY_REQUIRED (not the owner's key), CORRUPT_BLOCK (a page that does not authenticate).
result<store_result> reseal_store(append_target &source, append_target &fresh, const store_options &options,
                                  const std::optional<std::string> &only = std::nullopt, bool only_null = false);

/// Where a version-2 file's bytes go (storage_of_store). As the owner (or anyone, for a plain
/// file) sees it, the parts add up to the file:
///   bytes = 32 (header) + columns' data and directory bytes + indexes' bytes + segment_frame_bytes
///         + deletion_bytes + directory_bytes + map_bytes + meta_bytes + footer_bytes + 48 (tail)
///         + garbage_bytes
/// A partition's key sees its own partition's segments only; the rest counts as garbage.
struct store_report {
  uint64_t bytes = 0, commits = 0, live_bytes = 0, garbage_bytes = 0;
  uint64_t partitions = 0, segments = 0, rows = 0, deleted_rows = 0;
  uint64_t map_bytes = 0, directory_bytes = 0, footer_bytes = 0;
  uint64_t meta_bytes = 0;      ///< the meta page (schema, partition column, write options)
  uint64_t deletion_bytes = 0;  ///< live deletion vectors
  /// Each live segment's 8-byte header, its footer and its 24-byte tail (version 1's frame).
  uint64_t segment_frame_bytes = 0;
  /// Bytes by column (data pages and dictionaries; page and column directories) and by index
  /// (roots, leaves and Bloom filters), summed over the live segments.
  struct column_bytes {
    std::string name;
    uint64_t data_bytes = 0, directory_bytes = 0;
  };
  struct index_bytes {
    std::string column;
    index_kind kind = index_kind::sorted;
    uint64_t bytes = 0;
  };
  std::vector<column_bytes> columns;
  std::vector<index_bytes> indexes;
  struct partition_storage {
    std::string value;
    bool null = false;
    uint64_t rows = 0, deleted_rows = 0, segments = 0, bytes = 0;
  };
  std::vector<partition_storage> by_partition;  ///< the owner's view; a partition key sees its own
  /// Segments a query of one partition touches: on average, and for the partition with the most
  /// (a query of every partition touches `segments`). And whether compacting would help.
  double segments_per_partition = 0;
  uint64_t max_segments_per_partition = 0;
  bool compaction_pays = false;
};
/// The storage report of a version-2 file, as the key in `options` sees it.
result<store_report> storage_of_store(const byte_source &source, const open_options &options = {});
std::string to_json(const store_report &r);

}  // namespace quire::format
