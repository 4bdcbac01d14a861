// The writer's bounded sort: entries are kept in one arena until the budget is reached, then that
// run is sorted, serialised, zstd-compressed and kept; finish() merges all runs through a small
// heap with streaming decompression, so only the budget and the compressed runs are resident.
// Core does no I/O, so runs stay in memory (compressed) rather than in a temporary file.
#include <algorithm>

#include "format_internal.h"

namespace quire::format::detail {

namespace {

struct entry_ref {
  uint64_t at;  // offset of the key in the arena
  uint32_t key_length;
  uint32_t payload_length;
};

/// Reads the entries of one compressed run back, through a bounded window.
class run_reader {
 public:
  explicit run_reader(const std::string *compressed) : compressed_(compressed), stream_(ZSTD_createDStream()) {
    ZSTD_initDStream(stream_);
  }
  ~run_reader() { ZSTD_freeDStream(stream_); }
  run_reader(const run_reader &) = delete;
  run_reader &operator=(const run_reader &) = delete;

  /// Reads the next entry into key/payload (views into the window). False at the end.
  result<bool> next(std::string_view &key, std::string_view &payload) {
    // Drop what the previous entry used, keeping the window small.
    if (consumed_ > 65536) {
      window_.erase(0, consumed_);
      consumed_ = 0;
    }
    uint64_t key_len, payload_len;
    size_t header = 0;
    if (!read_varint(consumed_, key_len, header)) return done_error();
    if (!ensure(consumed_ + header)) return done_error();
    size_t h2 = 0;
    if (!read_varint(consumed_ + header, payload_len, h2)) return done_error();
    size_t start = consumed_ + header + h2;
    if (!ensure(start + key_len + payload_len)) return done_error();
    key = std::string_view(window_).substr(start, key_len);
    payload = std::string_view(window_).substr(start + key_len, payload_len);
    consumed_ = start + key_len + payload_len;
    return true;
  }

 private:
  result<bool> done_error() {
    if (error_) return quire::error(error_code::CORRUPT_BLOCK, "a sort run of the writer could not be decompressed");
    return false;
  }
  bool read_varint(size_t at, uint64_t &v, size_t &len) {
    v = 0;
    for (int shift = 0, i = 0; shift < 64; shift += 7, ++i) {
      if (!ensure(at + i + 1)) return false;
      uint8_t b = static_cast<uint8_t>(window_[at + i]);
      v |= static_cast<uint64_t>(b & 0x7F) << shift;
      if (!(b & 0x80)) {
        len = static_cast<size_t>(i + 1);
        return true;
      }
    }
    error_ = true;
    return false;
  }
  bool ensure(size_t size) {
    while (window_.size() < size) {
      if (in_.pos >= in_.size && finished_) return false;
      char buf[65536];
      ZSTD_outBuffer out{buf, sizeof buf, 0};
      in_.src = compressed_->data();
      in_.size = compressed_->size();
      size_t r = ZSTD_decompressStream(stream_, &out, &in_);
      if (ZSTD_isError(r)) {
        error_ = true;
        return false;
      }
      if (r == 0 && in_.pos >= in_.size) finished_ = true;
      window_.append(buf, out.pos);
      if (out.pos == 0 && in_.pos >= in_.size) {
        // No progress with all input consumed: the end, or a truncated frame.
        if (!finished_) error_ = true;
        return false;
      }
    }
    return true;
  }

  const std::string *compressed_;
  ZSTD_DStream *stream_;
  ZSTD_inBuffer in_{nullptr, 0, 0};
  std::string window_;
  size_t consumed_ = 0;
  bool finished_ = false;
  bool error_ = false;
};

}  // namespace

struct run_sorter::state {
  size_t budget;
  std::string arena;
  std::vector<entry_ref> entries;
  std::vector<std::string> runs;  // compressed
  bool finished = false;
  // In-memory iteration (no runs spilled).
  size_t cursor = 0;
  // Merge iteration.
  std::vector<std::unique_ptr<run_reader>> readers;
  struct head {
    std::string key, payload;
    size_t run;
  };
  std::vector<head> heads;  // a heap ordered by (key, run)
  head current;

  std::string_view key_of(const entry_ref &e) const { return std::string_view(arena).substr(e.at, e.key_length); }

  void sort_entries() {
    std::stable_sort(entries.begin(), entries.end(), [&](const entry_ref &a, const entry_ref &b) { return key_of(a) < key_of(b); });
  }

  void spill() {
    sort_entries();
    std::string raw;
    raw.reserve(arena.size() + entries.size() * 4);
    for (const auto &e : entries) {
      put_varint(raw, e.key_length);
      put_varint(raw, e.payload_length);
      raw.append(arena, e.at, size_t{e.key_length} + e.payload_length);
    }
    std::string compressed(ZSTD_compressBound(raw.size()), '\0');
    size_t n = ZSTD_compress(compressed.data(), compressed.size(), raw.data(), raw.size(), 1);
    compressed.resize(ZSTD_isError(n) ? 0 : n);
    runs.push_back(std::move(compressed));
    arena.clear();
    arena.shrink_to_fit();
    entries.clear();
    entries.shrink_to_fit();
  }
};

run_sorter::run_sorter(size_t memory_bytes) : s_(std::make_unique<state>()) {
  s_->budget = std::max<size_t>(memory_bytes, size_t{1} << 20);
}

run_sorter::~run_sorter() = default;

size_t run_sorter::spilled_runs() const noexcept { return s_->runs.size(); }

void run_sorter::add(std::string_view key, std::string_view payload) {
  s_->entries.push_back({s_->arena.size(), static_cast<uint32_t>(key.size()), static_cast<uint32_t>(payload.size())});
  s_->arena.append(key);
  s_->arena.append(payload);
  ++count_;
  if (s_->arena.size() + s_->entries.size() * sizeof(entry_ref) > s_->budget) s_->spill();
}

result<void> run_sorter::finish() {
  auto &s = *s_;
  s.finished = true;
  if (s.runs.empty()) {
    s.sort_entries();
    return {};
  }
  if (!s.entries.empty()) s.spill();
  for (size_t i = 0; i < s.runs.size(); ++i) {
    if (s.runs[i].empty()) return quire::error(error_code::OUT_OF_MEMORY, "a sort run could not be compressed");
    s.readers.push_back(std::make_unique<run_reader>(&s.runs[i]));
  }
  for (size_t i = 0; i < s.readers.size(); ++i) {
    std::string_view k, p;
    auto more = s.readers[i]->next(k, p);
    if (!more) return std::move(more).error();
    if (*more) s.heads.push_back({std::string(k), std::string(p), i});
  }
  auto greater = [](const state::head &a, const state::head &b) { return a.key != b.key ? a.key > b.key : a.run > b.run; };
  std::make_heap(s.heads.begin(), s.heads.end(), greater);
  return {};
}

result<bool> run_sorter::next(std::string_view &key, std::string_view &payload) {
  auto &s = *s_;
  if (s.readers.empty()) {
    if (s.cursor >= s.entries.size()) return false;
    const auto &e = s.entries[s.cursor++];
    key = s.key_of(e);
    payload = std::string_view(s.arena).substr(e.at + e.key_length, e.payload_length);
    return true;
  }
  auto greater = [](const state::head &a, const state::head &b) { return a.key != b.key ? a.key > b.key : a.run > b.run; };
  if (s.heads.empty()) return false;
  std::pop_heap(s.heads.begin(), s.heads.end(), greater);
  s.current = std::move(s.heads.back());
  s.heads.pop_back();
  std::string_view k, p;
  auto more = s.readers[s.current.run]->next(k, p);
  if (!more) return std::move(more).error();
  if (*more) {
    s.heads.push_back({std::string(k), std::string(p), s.current.run});
    std::push_heap(s.heads.begin(), s.heads.end(), greater);
  }
  key = s.current.key;
  payload = s.current.payload;
  return true;
}

}  // namespace quire::format::detail
