// quire/file_source.h — native byte sources over files: read whole, memory-mapped, or mapped and
// prewarmed in the background. Part of the native platform layer (not available in wasm).
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include "quire/platform.h"

namespace quire::native {

/// How a file's bytes reach memory.
enum class load_mode {
  read,     ///< read whole into an owned buffer
  mmap,     ///< a read-only private mapping; pages come in as they are touched
  prewarm,  ///< mapped, then read through once by a background thread so its pages are resident;
            ///< opening does not wait for it
  ranges,   ///< nothing held: each read_at is a pread of that range (streaming a large input
            ///< through a bounded buffer, or a .quire file read a page at a time)
};

/// "read", "mmap", "prewarm", "ranges".
std::string_view load_mode_name(load_mode mode) noexcept;
/// The mode named by `name`, or nullopt.
std::optional<load_mode> parse_load_mode(std::string_view name) noexcept;

struct open_options {
  load_mode mode = load_mode::read;
  /// Testing only: behave as if mmap() failed, to exercise the fallback to reading.
  bool simulate_mmap_failure = false;
};

/// Opens a file as a byte source. When mapping is asked for but fails (or the file is empty, or is
/// not mappable), the bytes are read instead: mapped() is then false and fallback_reason() says
/// why. Errors: FILE_NOT_FOUND, NOT_A_FILE (a directory...), IO_ERROR.
result<std::unique_ptr<byte_source>> open_file(const std::string &path, const open_options &options = {});

/// The page size of this machine.
size_t page_size() noexcept;

/// Whether a prewarming source has finished reading through its pages (true for other sources).
bool prewarm_done(const byte_source &source) noexcept;

}  // namespace quire::native
