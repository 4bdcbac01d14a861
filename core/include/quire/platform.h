// quire/platform.h — what differs by target enters core through these three interfaces.
//
// A byte_source gives core its input: a size, and ranges of bytes. Natively it is a file read
// whole, memory-mapped or mapped-and-prewarmed (native/include/quire/file_source.h); in wasm it is
// bytes handed over from JavaScript. A memory_probe tells how much memory the process (native) or
// the wasm heap uses. A task_runner runs pieces of work at the same time: natively on threads, in
// wasm one after the other on the calling thread. Core never calls the operating system or
// JavaScript directly.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "quire/result.h"

namespace quire {

/// Bytes to read from. Implementations must be safe to read from one thread at a time.
class byte_source {
 public:
  virtual ~byte_source() = default;

  /// Size in bytes.
  virtual uint64_t size() const noexcept = 0;

  /// All the bytes when the source holds them in addressable memory (read whole, mapped, or
  /// handed over), else an empty span. The span stays valid as long as the source lives.
  virtual std::span<const uint8_t> contiguous() const noexcept { return {}; }

  /// Readable bytes that follow contiguous() in memory (parsers such as simdjson read a few bytes
  /// past the end); 0 when unknown.
  virtual size_t tail_padding() const noexcept { return 0; }

  /// Copies [offset, offset + out.size()) into out. OUT_OF_RANGE past the end, IO_ERROR when the
  /// operating system refuses.
  virtual result<void> read_at(uint64_t offset, std::span<uint8_t> out) const = 0;

  /// True only when contiguous() really is a memory mapping of a file.
  virtual bool mapped() const noexcept { return false; }

  /// How the bytes were loaded: "memory", "read", "mmap", "prewarm".
  virtual std::string_view kind() const noexcept = 0;

  /// Why a mapping was asked for but the bytes were read instead; empty when it was not.
  virtual std::string_view fallback_reason() const noexcept { return {}; }
};

/// A source over bytes the caller keeps alive (no copy). Valid while `bytes` is.
std::unique_ptr<byte_source> borrow_bytes(std::span<const uint8_t> bytes, size_t tail_padding = 0);

/// A source that owns its bytes (moved in, no copy).
std::unique_ptr<byte_source> own_bytes(std::vector<uint8_t> bytes);

/// Memory in use, as one target can see it. Fields a target cannot see are 0.
struct memory_reading {
  uint64_t resident_bytes = 0;       ///< resident set of the process (native: VmRSS)
  uint64_t file_backed_bytes = 0;    ///< the part of resident_bytes backed by files (RssFile): mapped inputs
  uint64_t anonymous_bytes = 0;      ///< resident memory not backed by files (RssAnon): what was really used
  uint64_t peak_resident_bytes = 0;  ///< high-water mark of the resident set (VmHWM)
  uint64_t heap_bytes = 0;           ///< bytes allocated by malloc and not freed (wasm: mallinfo)
  uint64_t heap_capacity_bytes = 0;  ///< wasm: the size of linear memory; native: 0
};

/// Reads the memory of the running process or wasm instance.
class memory_probe {
 public:
  virtual ~memory_probe() = default;
  virtual memory_reading read() const = 0;
};

/// The probe of the target this binary was built for (native: /proc/self/status; wasm: the heap).
const memory_probe &default_memory_probe();

/// Runs several tasks at the same time where the target can. Core splits work into tasks that
/// share nothing mutable and puts their results together in order, so what it returns does not
/// depend on how many ran at once or in which order they ran.
class task_runner {
 public:
  virtual ~task_runner() = default;
  /// How many tasks can run at the same time (at least 1; 1 means one after the other).
  virtual unsigned concurrency() const noexcept = 0;
  /// Calls work(i) once for every i in [0, count) and returns when every call has returned. work
  /// must be safe to call from several threads at once. A runner that cannot start a thread runs
  /// that task on the calling thread instead: slower, never lost.
  virtual void run(size_t count, const std::function<void(size_t)> &work) const = 0;
};

/// The task runner of the target this binary was built for (native: a thread per task beyond the
/// first, concurrency() the hardware's threads; wasm: the calling thread alone, concurrency() 1).
const task_runner &default_task_runner();

}  // namespace quire
