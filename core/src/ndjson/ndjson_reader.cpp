// The NDJSON reader: a line splitter fed chunks of any size, each complete line read by
// fhir::read. Lines inside one chunk are read where they lie; only a line split across chunks is
// gathered in `pending_`, and never beyond max_line_bytes: a longer line is reported once and its
// remaining bytes are skipped as they arrive, so memory stays bounded whatever the input.
#include <algorithm>
#include <cstring>
#include <vector>

#include "../common/alloc.h"
#include "../common/line_end.h"
#include "quire/ndjson.h"

namespace quire::ndjson {
namespace {

bool is_blank(std::string_view s) {
  return std::all_of(s.begin(), s.end(), [](char c) { return c == ' ' || c == '\t' || c == '\r' || c == '\n'; });
}

}  // namespace

reader::reader(const options &opts) : opts_(opts) {}

bool reader::process(std::string_view line, uint64_t offset, const line_callback &visit) {
  ++stats_.lines;
  stats_.longest_line = std::max<uint64_t>(stats_.longest_line, line.size());
  if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
  if (is_blank(line)) {
    ++stats_.blank_lines;
    return true;
  }
  line_result out;
  out.line = stats_.lines;
  out.offset = offset;
  out.text = line;
  auto r = fhir::read(line, opts_.fhir);
  if (!r) {
    ++stats_.bad_lines;
    quire::error e = std::move(r).error();
    // The error was located inside the line: make it a place in the stream.
    if (e.offset != quire::error::NO_OFFSET) e.offset += offset;
    e.line = static_cast<uint32_t>(std::min<uint64_t>(stats_.lines, UINT32_MAX));
    if (e.column == 0) e.column = 1;
    out.error = &e;
    bool go_on = visit(out);
    if (!opts_.continue_on_error) {
      stopped_ = true;
      stop_error_ = e;
      return false;
    }
    if (!go_on) stopped_ = true;
    return go_on;
  }
  ++stats_.resources;
  const auto &o = r->outcome();
  stats_.issues += o.issues.size();
  if (o.errors) ++stats_.invalid_resources;
  auto type = r->resource_type();
  auto it = stats_.by_type.find(type);
  if (it == stats_.by_type.end()) it = stats_.by_type.emplace(std::string(type), 0).first;
  ++it->second;
  std::vector<fhir::issue> issues;
  if (!o.issues.empty()) {
    issues = o.issues;
    for (auto &i : issues) {
      i.offset += offset;
      i.line = static_cast<uint32_t>(std::min<uint64_t>(stats_.lines, UINT32_MAX));
    }
  }
  out.resource = &r.value();
  out.issues = issues;
  if (!visit(out)) {
    stopped_ = true;
    return false;
  }
  return true;
}

result<void> reader::line_too_long(uint64_t offset, const line_callback &visit) {
  ++stats_.lines;
  ++stats_.bad_lines;
  quire::error e(error_code::LINE_TOO_LONG,
                 "a line longer than max_line_bytes (" + std::to_string(opts_.max_line_bytes) + ")", offset);
  e.line = static_cast<uint32_t>(std::min<uint64_t>(stats_.lines, UINT32_MAX));
  e.column = 1;
  line_result out;
  out.line = stats_.lines;
  out.offset = offset;
  out.error = &e;
  bool go_on = visit(out);
  discarding_ = true;
  pending_.clear();
  pending_.shrink_to_fit();
  if (!opts_.continue_on_error) {
    stopped_ = true;
    stop_error_ = e;
    return e;
  }
  if (!go_on) stopped_ = true;
  return {};
}

result<void> reader::feed(std::string_view chunk, const line_callback &visit) {
  if (stopped_) {
    if (stop_error_.code != error_code::OK) return stop_error_;
    return {};
  }
  stats_.bytes += chunk.size();
  const uint64_t chunk_start = position_;
  position_ += chunk.size();
  size_t pos = 0;
  while (pos < chunk.size() && !stopped_) {
    const size_t line_end = detail::find_line_end(chunk, pos);
    const bool nl = line_end != std::string_view::npos;
    size_t end = nl ? line_end : chunk.size();
    std::string_view piece = chunk.substr(pos, end - pos);
    uint64_t piece_offset = chunk_start + pos;
    pos = nl ? end + 1 : chunk.size();
    if (discarding_) {
      if (nl) discarding_ = false;  // the too-long line ends here
      continue;
    }
    uint64_t line_length = pending_.size() + piece.size();
    if (line_length > opts_.max_line_bytes) {
      uint64_t start = pending_.empty() ? piece_offset : pending_offset_;
      auto r = line_too_long(start, visit);
      if (nl) discarding_ = false;
      if (!r) return r;
      continue;
    }
    if (!nl || !pending_.empty()) {
      // A line split across chunks grows up to max_line_bytes: a heap that cannot hold it stops
      // the stream with OUT_OF_MEMORY rather than aborting.
      if (auto g = quire::detail::grow_or_oom(pending_, line_length, "a line split across chunks"); !g) {
        quire::error e = std::move(g).error();
        e.offset = pending_.empty() ? piece_offset : pending_offset_;
        stopped_ = true;
        stop_error_ = e;
        return e;
      }
    }
    if (!nl) {
      if (pending_.empty()) pending_offset_ = piece_offset;
      pending_.append(piece);
      break;
    }
    bool go_on;
    if (pending_.empty()) {
      go_on = process(piece, piece_offset, visit);
    } else {
      pending_.append(piece);
      std::string line = std::move(pending_);
      pending_.clear();
      go_on = process(line, pending_offset_, visit);
    }
    if (!go_on) break;
  }
  if (stopped_ && stop_error_.code != error_code::OK) return stop_error_;
  return {};
}

result<void> reader::finish(const line_callback &visit) {
  if (stopped_) {
    if (stop_error_.code != error_code::OK) return stop_error_;
    return {};
  }
  if (discarding_) {
    discarding_ = false;
    return {};
  }
  if (!pending_.empty()) {
    std::string line = std::move(pending_);
    pending_.clear();
    process(line, pending_offset_, visit);
  }
  if (stopped_ && stop_error_.code != error_code::OK) return stop_error_;
  return {};
}

result<ndjson::stats> read_all(const byte_source &source, const line_callback &visit, const options &opts) {
  reader r(opts);
  auto bytes = source.contiguous();
  if (!bytes.empty() || source.size() == 0) {
    auto s = r.feed(std::string_view(reinterpret_cast<const char *>(bytes.data()), bytes.size()), visit);
    if (!s) return std::move(s).error();
  } else {
    constexpr size_t CHUNK = size_t{1} << 20;
    std::vector<uint8_t> buffer(CHUNK);
    for (uint64_t at = 0; at < source.size() && !r.stopped();) {
      size_t n = static_cast<size_t>(std::min<uint64_t>(CHUNK, source.size() - at));
      auto read = source.read_at(at, std::span<uint8_t>(buffer.data(), n));
      if (!read) return std::move(read).error();
      auto s = r.feed(std::string_view(reinterpret_cast<const char *>(buffer.data()), n), visit);
      if (!s) return std::move(s).error();
      at += n;
    }
  }
  auto f = r.finish(visit);
  if (!f) return std::move(f).error();
  return r.counts();
}

}  // namespace quire::ndjson
