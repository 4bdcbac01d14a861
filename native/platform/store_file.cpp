// The native side of growing, sealed .quire files: an appendable, locked, fsynced file; getrandom;
// key files; a folder of partition keys.
#include "quire/store_file.h"

#include <fcntl.h>
#include <sys/file.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "quire/dataset.h"

namespace quire::native {

namespace {

quire::error os_error(const std::string &what, int err) {
  return quire::error(err == ENOENT ? error_code::FILE_NOT_FOUND : error_code::IO_ERROR,
                      what + ": " + std::strerror(err));
}

result<std::string> read_small_file(const std::string &path, size_t limit) {
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return os_error("cannot open " + path, errno);
  std::string out;
  char buf[4096];
  while (true) {
    ssize_t n = ::read(fd, buf, sizeof buf);
    if (n < 0) {
      if (errno == EINTR) continue;
      int err = errno;
      ::close(fd);
      return os_error("cannot read " + path, err);
    }
    if (n == 0) break;
    out.append(buf, static_cast<size_t>(n));
    if (out.size() > limit) {
      ::close(fd);
      return quire::error(error_code::INVALID_ARGUMENT, path + " is larger than " + std::to_string(limit) + " bytes");
    }
  }
  ::close(fd);
  return out;
}

}  // namespace

result<std::unique_ptr<append_file>> append_file::open(const std::string &path, bool create) {
  int flags = O_RDWR | O_CLOEXEC | (create ? O_CREAT | O_EXCL : 0);
  int fd = ::open(path.c_str(), flags, 0644);
  if (fd < 0) return os_error("cannot open " + path + " for writing", errno);
  if (::flock(fd, LOCK_EX | LOCK_NB) != 0) {
    int err = errno;
    ::close(fd);
    if (err == EWOULDBLOCK)
      return quire::error(error_code::IO_ERROR, path + " is being written by another process (it holds the lock)");
    return os_error("cannot lock " + path, err);
  }
  struct stat st {};
  if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
    int err = errno;
    ::close(fd);
    return quire::error(error_code::NOT_A_FILE, path + " is not a regular file" + (err ? std::string() : ""));
  }
  return std::unique_ptr<append_file>(new append_file(fd, path, static_cast<uint64_t>(st.st_size)));
}

append_file::~append_file() { ::close(fd_); }

result<void> append_file::read_at(uint64_t offset, std::span<uint8_t> out) const {
  if (offset > size_ || out.size() > size_ - offset)
    return quire::error(error_code::OUT_OF_RANGE, "a read past the end of " + path_, offset);
  size_t done = 0;
  while (done < out.size()) {
    ssize_t n = ::pread(fd_, out.data() + done, out.size() - done, static_cast<off_t>(offset + done));
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return os_error("cannot read " + path_, n < 0 ? errno : EIO);
    done += static_cast<size_t>(n);
  }
  return {};
}

result<void> append_file::append(std::span<const uint8_t> bytes) {
  size_t done = 0;
  while (done < bytes.size()) {
    ssize_t n = ::pwrite(fd_, bytes.data() + done, bytes.size() - done, static_cast<off_t>(size_ + done));
    if (n < 0) {
      if (errno == EINTR) continue;
      size_ += done;
      return os_error("cannot write " + path_, errno);
    }
    done += static_cast<size_t>(n);
  }
  size_ += bytes.size();
  return {};
}

result<void> append_file::sync() {
  if (::fsync(fd_) != 0) return os_error("cannot make " + path_ + " durable (fsync)", errno);
  return {};
}

result<void> append_file::truncate(uint64_t size) {
  if (::ftruncate(fd_, static_cast<off_t>(size)) != 0) return os_error("cannot cut " + path_, errno);
  size_ = size;
  return sync();
}

result<void> system_random(std::span<uint8_t> out) {
  size_t done = 0;
  while (done < out.size()) {
    ssize_t n = ::getrandom(out.data() + done, out.size() - done, 0);
    if (n < 0) {
      if (errno == EINTR) continue;
      return os_error("getrandom", errno);
    }
    done += static_cast<size_t>(n);
  }
  return {};
}

result<std::string> read_key_file(const std::string &path) {
  auto bytes = read_small_file(path, 4096);
  if (!bytes) return bytes;
  if (bytes->size() != crypto::KEY_BYTES) {
    return quire::error(error_code::INVALID_ARGUMENT, "a key file holds " + std::to_string(crypto::KEY_BYTES) +
                                                          " bytes; " + path + " holds " +
                                                          std::to_string(bytes->size()));
  }
  return bytes;
}

result<std::string> read_passphrase_file(const std::string &path) {
  auto text = read_small_file(path, 64 << 10);
  if (!text) return text;
  if (!text->empty() && text->back() == '\n') text->pop_back();
  if (!text->empty() && text->back() == '\r') text->pop_back();
  if (text->empty()) return quire::error(error_code::INVALID_ARGUMENT, path + " holds no passphrase (it is empty)");
  return text;
}

result<void> write_new_key_file(const std::string &path, std::span<const uint8_t> key) {
  int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
  if (fd < 0) return os_error("cannot create " + path, errno);
  size_t done = 0;
  while (done < key.size()) {
    ssize_t n = ::write(fd, key.data() + done, key.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      int err = n < 0 ? errno : EIO;
      ::close(fd);
      ::unlink(path.c_str());
      return os_error("cannot write " + path, err);
    }
    done += static_cast<size_t>(n);
  }
  if (::fsync(fd) != 0) {
    int err = errno;
    ::close(fd);
    return os_error("cannot make " + path + " durable", err);
  }
  ::close(fd);
  return {};
}

result<std::string> key_folder::path_of(std::string_view value, bool null) const {
  // The Hive segment's value part: the same escaping a dataset's folders have.
  auto segment = dataset::partition_segment("k", null ? std::optional<std::string_view>() : value);
  if (!segment) return std::move(segment).error();
  return dir_ + "/" + segment->substr(2) + ".key";
}

result<std::optional<crypto::key>> key_folder::find(std::string_view value, bool null) {
  auto path = path_of(value, null);
  if (!path) return std::move(path).error();
  auto bytes = read_key_file(*path);
  if (!bytes) {
    if (bytes.error().code == error_code::FILE_NOT_FOUND) return std::optional<crypto::key>();
    return std::move(bytes).error();
  }
  auto k = crypto::key_from_bytes({reinterpret_cast<const uint8_t *>(bytes->data()), bytes->size()});
  if (!k) return std::move(k).error();
  return std::optional<crypto::key>(*k);
}

result<void> key_folder::keep(std::string_view value, bool null, const crypto::key &key) {
  auto path = path_of(value, null);
  if (!path) return std::move(path).error();
  ::mkdir(dir_.c_str(), 0700);
  return write_new_key_file(*path, key.bytes());
}

}  // namespace quire::native
