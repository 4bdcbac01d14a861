// The native byte sources: read, mmap, prewarm.
#include "quire/file_source.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstring>
#include <thread>
#include <vector>

namespace quire::native {
namespace {

// simdjson reads up to 64 bytes past the end; read buffers carry that much zeroed padding.
constexpr size_t READ_PADDING = 64;

quire::error os_error(error_code code, const std::string &what, const std::string &path, int err) {
  return quire::error(code, what + " " + path + ": " + std::strerror(err));
}

result<void> read_range(int fd, uint64_t offset, std::span<uint8_t> out, const std::string &path) {
  size_t done = 0;
  while (done < out.size()) {
    ssize_t n = ::pread(fd, out.data() + done, out.size() - done, static_cast<off_t>(offset + done));
    if (n < 0) {
      if (errno == EINTR) continue;
      return os_error(error_code::IO_ERROR, "cannot read", path, errno);
    }
    if (n == 0) return quire::error(error_code::IO_ERROR, "file " + path + " shrank while being read", offset + done);
    done += static_cast<size_t>(n);
  }
  return {};
}

result<void> check_range(uint64_t size, uint64_t offset, size_t length) {
  if (offset > size || length > size - offset) {
    return quire::error(
        error_code::OUT_OF_RANGE,
        "read of " + std::to_string(length) + " bytes past the end of a " + std::to_string(size) + "-byte file",
        offset);
  }
  return {};
}

class read_source final : public byte_source {
 public:
  read_source(std::unique_ptr<uint8_t[]> bytes, uint64_t size, std::string reason)
      : bytes_(std::move(bytes)), size_(size), reason_(std::move(reason)) {}
  uint64_t size() const noexcept override { return size_; }
  std::span<const uint8_t> contiguous() const noexcept override { return {bytes_.get(), static_cast<size_t>(size_)}; }
  size_t tail_padding() const noexcept override { return READ_PADDING; }
  result<void> read_at(uint64_t offset, std::span<uint8_t> out) const override {
    auto r = check_range(size_, offset, out.size());
    if (!r) return r;
    if (!out.empty()) std::memcpy(out.data(), bytes_.get() + offset, out.size());
    return {};
  }
  std::string_view kind() const noexcept override { return "read"; }
  std::string_view fallback_reason() const noexcept override { return reason_; }

 private:
  std::unique_ptr<uint8_t[]> bytes_;
  uint64_t size_;
  std::string reason_;
};

/// Keeps the descriptor open and reads each range when asked (pread: no shared file position).
class range_source final : public byte_source {
 public:
  range_source(int fd, uint64_t size, std::string path) : fd_(fd), size_(size), path_(std::move(path)) {}
  ~range_source() override { ::close(fd_); }
  range_source(const range_source &) = delete;
  range_source &operator=(const range_source &) = delete;
  uint64_t size() const noexcept override { return size_; }
  result<void> read_at(uint64_t offset, std::span<uint8_t> out) const override {
    auto r = check_range(size_, offset, out.size());
    if (!r) return r;
    return read_range(fd_, offset, out, path_);
  }
  std::string_view kind() const noexcept override { return "ranges"; }

 private:
  int fd_;
  uint64_t size_;
  std::string path_;
};

class mapped_source final : public byte_source {
 public:
  mapped_source(void *base, uint64_t size, bool prewarm) : base_(static_cast<const uint8_t *>(base)), size_(size) {
    if (prewarm) {
      ::madvise(base, size, MADV_WILLNEED);
      // Touch one byte a page so the whole file is resident; the opener does not wait for it.
      warmer_ = std::thread([this] {
        size_t step = page_size();
        volatile uint8_t sink = 0;
        for (uint64_t i = 0; i < size_ && !stop_.load(std::memory_order_relaxed); i += step) sink = sink ^ base_[i];
        (void)sink;
        done_.store(true, std::memory_order_release);
      });
    } else {
      done_.store(true);
    }
  }
  ~mapped_source() override {
    stop_.store(true);
    if (warmer_.joinable()) warmer_.join();
    ::munmap(const_cast<uint8_t *>(base_), size_);
  }
  uint64_t size() const noexcept override { return size_; }
  std::span<const uint8_t> contiguous() const noexcept override { return {base_, static_cast<size_t>(size_)}; }
  // The rest of the last page is readable (zero-filled) when the file does not end on a page edge.
  size_t tail_padding() const noexcept override {
    size_t page = page_size();
    size_t used = static_cast<size_t>(size_ % page);
    return used == 0 ? 0 : page - used;
  }
  result<void> read_at(uint64_t offset, std::span<uint8_t> out) const override {
    auto r = check_range(size_, offset, out.size());
    if (!r) return r;
    if (!out.empty()) std::memcpy(out.data(), base_ + offset, out.size());
    return {};
  }
  bool mapped() const noexcept override { return true; }
  std::string_view kind() const noexcept override { return warmer_.joinable() ? "prewarm" : "mmap"; }
  bool warmed() const noexcept { return done_.load(std::memory_order_acquire); }

 private:
  const uint8_t *base_;
  uint64_t size_;
  std::thread warmer_;
  std::atomic<bool> stop_{false};
  std::atomic<bool> done_{false};
};

struct fd_guard {
  int fd;
  ~fd_guard() {
    if (fd >= 0) ::close(fd);
  }
};

result<std::unique_ptr<byte_source>> read_whole(int fd, uint64_t size, const std::string &path, std::string reason) {
  std::unique_ptr<uint8_t[]> bytes(new (std::nothrow) uint8_t[static_cast<size_t>(size) + READ_PADDING]);
  if (!bytes)
    return quire::error(error_code::OUT_OF_MEMORY, "cannot allocate " + std::to_string(size) + " bytes for " + path);
  auto r = read_range(fd, 0, std::span<uint8_t>(bytes.get(), static_cast<size_t>(size)), path);
  if (!r) return std::move(r).error();
  std::memset(bytes.get() + size, 0, READ_PADDING);
  return std::unique_ptr<byte_source>(std::make_unique<read_source>(std::move(bytes), size, std::move(reason)));
}

}  // namespace

std::string_view load_mode_name(load_mode mode) noexcept {
  switch (mode) {
    case load_mode::read: return "read";
    case load_mode::mmap: return "mmap";
    case load_mode::prewarm: return "prewarm";
    case load_mode::ranges: return "ranges";
  }
  return "read";
}

std::optional<load_mode> parse_load_mode(std::string_view name) noexcept {
  if (name == "read") return load_mode::read;
  if (name == "mmap") return load_mode::mmap;
  if (name == "prewarm") return load_mode::prewarm;
  if (name == "ranges") return load_mode::ranges;
  return std::nullopt;
}

size_t page_size() noexcept {
  static const size_t size = static_cast<size_t>(::sysconf(_SC_PAGESIZE));
  return size;
}

bool prewarm_done(const byte_source &source) noexcept {
  if (auto *m = dynamic_cast<const mapped_source *>(&source)) return m->warmed();
  return true;
}

result<std::unique_ptr<byte_source>> open_file(const std::string &path, const open_options &options) {
  fd_guard guard{::open(path.c_str(), O_RDONLY | O_CLOEXEC)};
  if (guard.fd < 0) {
    int err = errno;
    if (err == ENOENT || err == ENOTDIR) return os_error(error_code::FILE_NOT_FOUND, "cannot open", path, err);
    return os_error(error_code::IO_ERROR, "cannot open", path, err);
  }
  struct stat st {};
  if (::fstat(guard.fd, &st) != 0) return os_error(error_code::IO_ERROR, "cannot stat", path, errno);
  if (!S_ISREG(st.st_mode)) {
    return quire::error(error_code::NOT_A_FILE,
                        path + " is " + (S_ISDIR(st.st_mode) ? "a directory" : "not a regular file"));
  }
  uint64_t size = static_cast<uint64_t>(st.st_size);
  if (options.mode == load_mode::read) return read_whole(guard.fd, size, path, {});
  if (options.mode == load_mode::ranges) {
    int fd = guard.fd;
    guard.fd = -1;  // the source closes it
    return std::unique_ptr<byte_source>(std::make_unique<range_source>(fd, size, path));
  }

  std::string reason;
  if (options.simulate_mmap_failure) {
    reason = "mmap failed: simulated failure";
  } else if (size == 0) {
    reason = "an empty file cannot be mapped";
  } else if (size > SIZE_MAX) {
    reason = "file larger than the address space";
  } else {
    void *base = ::mmap(nullptr, static_cast<size_t>(size), PROT_READ, MAP_PRIVATE, guard.fd, 0);
    if (base != MAP_FAILED) {
      return std::unique_ptr<byte_source>(
          std::make_unique<mapped_source>(base, size, options.mode == load_mode::prewarm));
    }
    reason = std::string("mmap failed: ") + std::strerror(errno);
  }
  return read_whole(guard.fd, size, path, std::move(reason));
}

}  // namespace quire::native
