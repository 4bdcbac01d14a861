// The NDJSON reader: a line_feeder (common/line_feeder.cpp) fed chunks of any size, each complete
// line read by fhir::read. A line too long is reported once and, with continue_on_error, reading
// goes on with the next line; memory stays bounded whatever the input.
#include <algorithm>
#include <cstring>
#include <vector>

#include "quire/ndjson.h"

namespace quire::ndjson {

reader::reader(const options &opts) : opts_(opts), lines_(opts.max_line_bytes) {}

bool reader::process(const line &l, const line_callback &visit) {
  stats_.lines = l.number;
  stats_.longest_line = std::max<uint64_t>(stats_.longest_line, l.bytes);
  if (l.blank()) {
    ++stats_.blank_lines;
    return true;
  }
  const uint64_t offset = l.offset;
  std::string_view line = l.text;
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

result<void> reader::line_too_long(quire::error e, const line_callback &visit) {
  stats_.lines = lines_.next_number() - 1;
  ++stats_.bad_lines;
  line_result out;
  out.line = stats_.lines;
  out.offset = e.offset;
  out.error = &e;
  bool go_on = visit(out);
  if (!opts_.continue_on_error) {
    stopped_ = true;
    stop_error_ = e;
    return e;
  }
  if (!go_on) stopped_ = true;
  return {};
}

result<void> reader::read_lines(const line_callback &visit) {
  while (!stopped_) {
    auto l = lines_.next();
    if (!l) {
      quire::error e = std::move(l).error();
      if (e.code == error_code::LINE_TOO_LONG) {
        if (auto r = line_too_long(std::move(e), visit); !r) return r;
        continue;
      }
      stopped_ = true;
      stop_error_ = e;
      return e;
    }
    if (!*l) break;
    if (!process(**l, visit)) break;
  }
  if (stopped_ && stop_error_.code != error_code::OK) return stop_error_;
  return {};
}

result<void> reader::feed(std::string_view chunk, const line_callback &visit) {
  if (stopped_) {
    if (stop_error_.code != error_code::OK) return stop_error_;
    return {};
  }
  stats_.bytes += chunk.size();
  lines_.feed(chunk);
  return read_lines(visit);
}

result<void> reader::finish(const line_callback &visit) {
  if (stopped_) {
    if (stop_error_.code != error_code::OK) return stop_error_;
    return {};
  }
  lines_.feed({}, true);
  return read_lines(visit);
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
