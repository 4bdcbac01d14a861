// quire/spill_file.h — a temporary file for the .quire writer's sort runs (format::spill_store),
// so that sorting and indexes of a table larger than memory keep only their budget in memory.
// Part of the native platform layer (not available in wasm).
//
//   auto spill = quire::native::spill_file::create();          // in $TMPDIR, else /tmp
//   quire::format::write_options o;
//   o.spill = spill.value().get();                              // must outlive the writer
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <string>

#include "quire/format.h"

namespace quire::native {

/// An append-only temporary file. It is created with mkstemp and unlinked at once: it has no name
/// while it is used, and nothing is left behind when the process ends, even by a crash. Closed
/// (and its space freed) when destroyed. Not safe to use from two threads at once.
class spill_file final : public format::spill_store {
 public:
  /// Creates the file in `folder`; when empty, in $TMPDIR, else /tmp. Errors: IO_ERROR naming the
  /// folder and the reason (no such folder, no permission...).
  static result<std::unique_ptr<spill_file>> create(const std::string &folder = "");
  ~spill_file() override;
  spill_file(const spill_file &) = delete;
  spill_file &operator=(const spill_file &) = delete;

  /// Writes bytes at the end. IO_ERROR when the system refuses (a full disk...); after a failed
  /// append the file is unusable and every later append fails too.
  result<uint64_t> append(std::span<const uint8_t> bytes) override;
  /// Reads [offset, offset + out.size()). IO_ERROR when the system refuses or the range was
  /// never written.
  result<void> read(uint64_t offset, std::span<uint8_t> out) override;

  /// Bytes appended so far.
  uint64_t size() const noexcept { return size_; }
  /// The folder the file was created in.
  const std::string &folder() const noexcept { return folder_; }

 private:
  spill_file(int fd, std::string folder) : fd_(fd), folder_(std::move(folder)) {}
  int fd_;
  std::string folder_;
  uint64_t size_ = 0;
  bool failed_ = false;
};

}  // namespace quire::native
