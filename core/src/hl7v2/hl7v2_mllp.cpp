// hl7v2_mllp.cpp — MLLP framing (HL7 v2 transport, VT ... FS CR), encoding and a streaming decoder.

#include <algorithm>

#include "hl7v2_internal.h"

namespace quire::hl7v2 {

std::string mllp_encode(std::string_view message) {
  std::string out;
  out.reserve(message.size() + 3);
  out += static_cast<char>(MLLP_START);
  out.append(message);
  out += static_cast<char>(MLLP_END);
  out += static_cast<char>(MLLP_CR);
  return out;
}

void mllp_decoder::reset() noexcept {
  state_ = state::OUTSIDE;
  partial_.clear();
  partial_.shrink_to_fit();
  frames_.clear();
  position_ = frame_start_ = skipped_ = dropped_ = without_cr_ = 0;
}

std::optional<std::string> mllp_decoder::next_frame() {
  if (frames_.empty()) return std::nullopt;
  std::string f = std::move(frames_.front());
  frames_.pop_front();
  return f;
}

result<void> mllp_decoder::feed(std::span<const uint8_t> chunk) {
  result<void> status;
  const uint8_t *p = chunk.data();
  const uint8_t *const end = p + chunk.size();
  const uint64_t chunk_start = position_;
  auto pos_of = [&](const uint8_t *q) { return chunk_start + static_cast<uint64_t>(q - chunk.data()); };
  auto start_frame = [&](const uint8_t *vt) {
    partial_.clear();
    frame_start_ = pos_of(vt);
    state_ = state::IN_FRAME;
  };

  while (p < end) {
    switch (state_) {
      case state::OUTSIDE:
      case state::DISCARDING: {
        // Everything up to the next VT is garbage (or the rest of a dropped frame).
        const uint8_t *vt = std::find(p, end, MLLP_START);
        skipped_ += static_cast<uint64_t>(vt - p);
        p = vt;
        if (p < end) start_frame(p++);
        break;
      }
      case state::IN_FRAME: {
        const uint8_t *stop = std::find_if(p, end, [](uint8_t b) { return b == MLLP_END || b == MLLP_START; });
        const size_t take = static_cast<size_t>(stop - p);
        if (take > max_frame_bytes_ - std::min(max_frame_bytes_, partial_.size())) {
          // Too large: drop what was buffered and skip to the next VT.
          const uint64_t consumed = static_cast<uint64_t>(partial_.size()) + 1 + take;
          skipped_ += consumed;
          ++dropped_;
          if (status.ok())
            status = result<void>(error_code::FRAME_TOO_LARGE,
                                  "MLLP frame larger than max_frame_bytes (" + std::to_string(max_frame_bytes_) + ")",
                                  frame_start_);
          partial_.clear();
          partial_.shrink_to_fit();
          state_ = state::DISCARDING;
          p = stop;
          if (p < end && *p == MLLP_END) ++p, ++skipped_;
          break;
        }
        partial_.append(reinterpret_cast<const char *>(p), take);
        p = stop;
        if (p == end) break;
        if (*p == MLLP_START) {
          // A new frame before this one ended: the sender restarted; keep the newer frame.
          skipped_ += static_cast<uint64_t>(partial_.size()) + 1;
          start_frame(p++);
        } else {
          ++p;
          state_ = state::AFTER_END;
        }
        break;
      }
      case state::AFTER_END:
        frames_.push_back(std::move(partial_));
        partial_ = std::string();
        state_ = state::OUTSIDE;
        if (*p == MLLP_CR) {
          ++p;
        } else {
          ++without_cr_;  // tolerated: some senders omit the CR after FS
        }
        break;
    }
  }
  position_ += chunk.size();
  return status;
}

}  // namespace quire::hl7v2
