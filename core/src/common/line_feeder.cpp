// ndjson::line_feeder: the line cutter of every NDJSON reader in core (quire/ndjson.h).
#include <algorithm>

#include "alloc.h"
#include "line_end.h"
#include "quire/format.h"
#include "quire/ndjson.h"

namespace quire {

// format's NDJSON input reads lines as the other readers do: one default limit.
static_assert(format::DEFAULT_MAX_LINE_BYTES == ndjson::DEFAULT_MAX_LINE_BYTES);

namespace {

/// The one LINE_TOO_LONG of core's NDJSON readers: line `number` starting at stream offset `offset`.
quire::error line_too_long(uint64_t number, uint64_t offset, uint64_t max_line_bytes) {
  std::string m = "line ";
  m += std::to_string(number);
  m += " is longer than max_line_bytes (";
  m += std::to_string(max_line_bytes);
  m += " bytes)";
  quire::error e(error_code::LINE_TOO_LONG, std::move(m), offset);
  e.line = static_cast<uint32_t>(std::min<uint64_t>(number, UINT32_MAX));
  e.column = 1;
  return e;
}

}  // namespace

namespace ndjson {

bool line::blank() const noexcept {
  return std::all_of(text.begin(), text.end(), [](char c) { return c == ' ' || c == '\t' || c == '\r'; });
}

void line_feeder::restart(uint64_t offset, uint64_t number) {
  piece_ = {};
  pos_ = 0;
  piece_offset_ = next_offset_ = offset;
  number_ = number;
  last_ = discarding_ = release_ = false;
  pending_.clear();
  pending_.shrink_to_fit();
}

void line_feeder::feed(std::string_view piece, bool last) noexcept {
  piece_ = piece;
  pos_ = 0;
  piece_offset_ = next_offset_;
  next_offset_ += piece.size();
  last_ = last;
}

line line_feeder::make_line(std::string_view text, uint64_t offset) noexcept {
  line l;
  l.offset = offset;
  l.number = number_++;
  l.bytes = text.size();
  if (!text.empty() && text.back() == '\r') text.remove_suffix(1);
  l.text = text;
  return l;
}

result<std::optional<line>> line_feeder::next() {
  if (release_) {
    pending_.clear();
    release_ = false;
  }
  while (pos_ < piece_.size()) {
    const size_t nl = detail::find_line_end(piece_, pos_);
    const bool ends = nl != std::string_view::npos;
    const size_t end = ends ? nl : piece_.size();
    const std::string_view seg = piece_.substr(pos_, end - pos_);
    const uint64_t seg_offset = piece_offset_ + pos_;
    pos_ = ends ? end + 1 : piece_.size();
    if (discarding_) {
      if (ends) discarding_ = false;  // the too-long line ends here
      continue;
    }
    const uint64_t start = pending_.empty() ? seg_offset : pending_offset_;
    const uint64_t length = pending_.size() + seg.size();
    if (length > max_) {
      discarding_ = !ends && !last_;
      pending_.clear();
      pending_.shrink_to_fit();
      return line_too_long(number_++, start, max_);
    }
    if (pending_.empty() && (ends || last_)) return std::optional<line>(make_line(seg, seg_offset));
    // A line split across pieces grows up to max_line_bytes: a heap that cannot hold it is
    // OUT_OF_MEMORY rather than an abort.
    if (auto g = detail::grow_or_oom(pending_, length, "a line split across pieces"); !g) {
      quire::error e = std::move(g).error();
      e.offset = start;
      return e;
    }
    if (pending_.empty()) pending_offset_ = seg_offset;
    pending_.append(seg);
    if (!ends && !last_) return std::optional<line>();
    release_ = true;
    return std::optional<line>(make_line(pending_, pending_offset_));
  }
  if (last_ && !pending_.empty()) {
    // The stream ended inside a held line (fed with `last` after it).
    release_ = true;
    return std::optional<line>(make_line(pending_, pending_offset_));
  }
  if (last_) discarding_ = false;
  return std::optional<line>();
}

}  // namespace ndjson
}  // namespace quire
