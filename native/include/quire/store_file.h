// quire/store_file.h — the native side of a growing, sealed .quire file (quire/store.h): a file
// appended to with pwrite and made durable with fsync, held under an exclusive lock while a commit
// is written; the operating system's random bytes; key files and a folder of partition keys.
#pragma once

#include <memory>
#include <string>

#include "quire/store.h"

namespace quire::native {

/// A file opened for appending commits. Holds an exclusive advisory lock (flock) from open to
/// close, so two writers never interleave; readers do not lock (they read whole commits only).
class append_file final : public format::append_target {
 public:
  /// Opens (creating when `create`, refusing one that exists) `path` read-write and locks it.
  /// Errors: FILE_NOT_FOUND, IO_ERROR (also when another writer holds the lock).
  static result<std::unique_ptr<append_file>> open(const std::string &path, bool create);
  ~append_file() override;
  append_file(const append_file &) = delete;
  append_file &operator=(const append_file &) = delete;

  uint64_t size() const noexcept override { return size_; }
  result<void> read_at(uint64_t offset, std::span<uint8_t> out) const override;
  std::string_view kind() const noexcept override { return "ranges"; }
  result<void> append(std::span<const uint8_t> bytes) override;
  result<void> sync() override;
  result<void> truncate(uint64_t size) override;

 private:
  append_file(int fd, std::string path, uint64_t size) : fd_(fd), path_(std::move(path)), size_(size) {}
  int fd_;
  std::string path_;
  uint64_t size_;
};

/// Fills `out` from getrandom(2). IO_ERROR when the system has none to give.
result<void> system_random(std::span<uint8_t> out);

/// A key file's bytes: exactly 32. INVALID_ARGUMENT for another size (saying the size, never the
/// bytes), FILE_NOT_FOUND, IO_ERROR.
result<std::string> read_key_file(const std::string &path);
/// A passphrase file's text without its final line end. INVALID_ARGUMENT when it is empty.
result<std::string> read_passphrase_file(const std::string &path);
/// Writes 32 random bytes to `path` (mode 0600), refusing a file that exists. IO_ERROR.
result<void> write_new_key_file(const std::string &path, std::span<const uint8_t> key);

/// Partition keys as files DIR/VALUE.key (the value escaped as a Hive path segment is, null as
/// __HIVE_DEFAULT_PARTITION__): found when present, written (0600, then fsync) when made.
class key_folder final : public format::partition_keys {
 public:
  explicit key_folder(std::string dir) : dir_(std::move(dir)) {}
  result<std::optional<crypto::key>> find(std::string_view value, bool null) override;
  result<void> keep(std::string_view value, bool null, const crypto::key &key) override;
  /// The file a partition's key is in.
  result<std::string> path_of(std::string_view value, bool null) const;

 private:
  std::string dir_;
};

}  // namespace quire::native
