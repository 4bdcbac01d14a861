// Byte sources over memory: borrowed (no copy) and owned (moved in). Both targets use them; the
// native file sources live in native/platform, the wasm one in wasm/.
#include <cstring>

#include "quire/platform.h"

namespace quire {
namespace {

result<void> copy_range(std::span<const uint8_t> bytes, uint64_t offset, std::span<uint8_t> out) {
  if (offset > bytes.size() || out.size() > bytes.size() - offset) {
    return {error_code::OUT_OF_RANGE,
            "read of " + std::to_string(out.size()) + " bytes past the end of a " + std::to_string(bytes.size()) +
                "-byte source",
            offset};
  }
  if (!out.empty()) std::memcpy(out.data(), bytes.data() + offset, out.size());
  return {};
}

class borrowed_source final : public byte_source {
 public:
  borrowed_source(std::span<const uint8_t> bytes, size_t padding) : bytes_(bytes), padding_(padding) {}
  uint64_t size() const noexcept override { return bytes_.size(); }
  std::span<const uint8_t> contiguous() const noexcept override { return bytes_; }
  size_t tail_padding() const noexcept override { return padding_; }
  result<void> read_at(uint64_t offset, std::span<uint8_t> out) const override {
    return copy_range(bytes_, offset, out);
  }
  std::string_view kind() const noexcept override { return "memory"; }

 private:
  std::span<const uint8_t> bytes_;
  size_t padding_;
};

class owned_source final : public byte_source {
 public:
  explicit owned_source(std::vector<uint8_t> bytes) : bytes_(std::move(bytes)) {}
  uint64_t size() const noexcept override { return bytes_.size(); }
  std::span<const uint8_t> contiguous() const noexcept override { return bytes_; }
  result<void> read_at(uint64_t offset, std::span<uint8_t> out) const override {
    return copy_range(bytes_, offset, out);
  }
  std::string_view kind() const noexcept override { return "memory"; }

 private:
  std::vector<uint8_t> bytes_;
};

}  // namespace

std::unique_ptr<byte_source> borrow_bytes(std::span<const uint8_t> bytes, size_t tail_padding) {
  return std::make_unique<borrowed_source>(bytes, tail_padding);
}

std::unique_ptr<byte_source> own_bytes(std::vector<uint8_t> bytes) {
  return std::make_unique<owned_source>(std::move(bytes));
}

}  // namespace quire
