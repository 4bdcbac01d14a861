// The writer's temporary spill file: mkstemp, then unlink at once, then pwrite/pread by offset.
#include "quire/spill_file.h"

#include <sys/types.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <vector>

namespace quire::native {

namespace {

quire::error os_error(const std::string &what, int err) {
  return quire::error(error_code::IO_ERROR, what + ": " + std::strerror(err));
}

}  // namespace

result<std::unique_ptr<spill_file>> spill_file::create(const std::string &folder) {
  std::string dir = folder;
  if (dir.empty()) {
    const char *env = std::getenv("TMPDIR");
    dir = env && *env ? env : "/tmp";
  }
  std::string pattern = dir + (dir.back() == '/' ? "" : "/") + "quire-spill-XXXXXX";
  std::vector<char> name(pattern.begin(), pattern.end());
  name.push_back('\0');
  int fd = ::mkstemp(name.data());
  if (fd < 0) return os_error("cannot create a spill file in " + dir, errno);
  // Unlinked at once: the file lives only as long as the descriptor, so a crash leaves nothing.
  if (::unlink(name.data()) != 0) {
    int err = errno;
    ::close(fd);
    return os_error("cannot unlink the spill file " + std::string(name.data()), err);
  }
  return std::unique_ptr<spill_file>(new spill_file(fd, dir));
}

spill_file::~spill_file() { ::close(fd_); }

result<uint64_t> spill_file::append(std::span<const uint8_t> bytes) {
  if (failed_) return quire::error(error_code::IO_ERROR, "the spill file in " + folder_ + " failed earlier");
  const uint64_t at = size_;
  size_t done = 0;
  while (done < bytes.size()) {
    ssize_t n = ::pwrite(fd_, bytes.data() + done, bytes.size() - done, static_cast<off_t>(at + done));
    if (n < 0) {
      if (errno == EINTR) continue;
      failed_ = true;
      return os_error("cannot write the spill file in " + folder_, errno);
    }
    done += static_cast<size_t>(n);
  }
  size_ += bytes.size();
  return at;
}

result<void> spill_file::read(uint64_t offset, std::span<uint8_t> out) {
  if (offset > size_ || out.size() > size_ - offset) {
    return quire::error(error_code::IO_ERROR, "a read past the end of the spill file in " + folder_, offset);
  }
  size_t done = 0;
  while (done < out.size()) {
    ssize_t n = ::pread(fd_, out.data() + done, out.size() - done, static_cast<off_t>(offset + done));
    if (n < 0) {
      if (errno == EINTR) continue;
      return os_error("cannot read the spill file in " + folder_, errno);
    }
    if (n == 0)
      return quire::error(error_code::IO_ERROR, "the spill file in " + folder_ + " is shorter than what was written",
                          offset + done);
    done += static_cast<size_t>(n);
  }
  return {};
}

}  // namespace quire::native
