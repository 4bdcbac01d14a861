// libFuzzer target: the MLLP decoder on any byte stream cut into chunks of fuzzer-chosen sizes.
// Checks that memory stays bounded and that frames never hold framing bytes.
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "quire/hl7v2.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  if (size < 2) return 0;
  const size_t max_frame = 1 + data[0] % 64;
  const size_t chunk = 1 + data[1] % 17;
  quire::hl7v2::mllp_decoder decoder(max_frame);
  uint64_t total = 0;
  for (size_t i = 2; i < size; i += chunk) {
    const size_t n = size - i < chunk ? size - i : chunk;
    (void)decoder.feed(std::span<const uint8_t>(data + i, n));
    if (decoder.buffered_bytes() > max_frame) __builtin_trap();
    while (auto frame = decoder.next_frame()) {
      if (frame->size() > max_frame) __builtin_trap();
      if (frame->find('\x0B') != std::string::npos || frame->find('\x1C') != std::string::npos) __builtin_trap();
      total += frame->size();
    }
  }
  if (decoder.bytes_fed() != size - 2) __builtin_trap();
  // Re-encoding a payload and decoding it gives it back.
  const std::string payload(reinterpret_cast<const char *>(data + 2), size - 2);
  if (payload.find('\x0B') == std::string::npos && payload.find('\x1C') == std::string::npos &&
      payload.size() <= max_frame) {
    quire::hl7v2::mllp_decoder again(max_frame);
    if (!again.feed(quire::hl7v2::mllp_encode(payload)).ok()) __builtin_trap();
    auto f = again.next_frame();
    if (!f || *f != payload) __builtin_trap();
  }
  (void)total;
  return 0;
}
