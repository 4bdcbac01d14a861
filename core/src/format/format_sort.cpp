// The writer's bounded sort: entries are kept in one arena until the budget is reached, then that
// run is sorted, serialised and stream-compressed (zstd level 1, a 128 KiB window) into a spill
// store — the writer's (write_options::spill; natively a temporary file) or, with none, blocks in
// memory, since core does no I/O. finish() merges the runs through a heap, reading each back in
// 64 KiB pieces; more than MAX_MERGE_RUNS runs are first merged in groups into longer runs, so
// the merge holds a fixed amount per run whatever the input's size.
#include <algorithm>
#include <cstring>

#include "format_internal.h"

namespace quire::format::detail {

namespace {

/// Runs merged at once; beyond, groups of this many are merged into one longer run first.
constexpr size_t MAX_MERGE_RUNS = 16;
/// Bytes read back from the store at a time, per run; also the batch of entries compressed at once.
constexpr size_t IO_BYTES = 65536;
/// zstd window of a run (2^17 bytes): it bounds what decompressing one run holds.
constexpr int RUN_WINDOW_LOG = 17;

struct entry_ref {
  uint64_t at;  // offset of the key in the arena
  uint32_t key_length;
  uint32_t payload_length;
  // The key's first 16 bytes, big-endian, zero-padded: they order nearly every pair alone (index
  // keys are a value or a hash or a trigram, then the row number: 11 to 17 bytes).
  uint64_t prefix_high, prefix_low;
};

uint64_t key_prefix(std::string_view key, size_t from) {
  uint64_t p = 0;
  for (size_t i = from; i < from + 8; ++i) p = (p << 8) | (i < key.size() ? static_cast<unsigned char>(key[i]) : 0u);
  return p;
}

/// Where a run's compressed bytes are in the store.
struct run {
  uint64_t offset = 0;
  uint64_t length = 0;
};

quire::error corrupt_run() {
  return quire::error(error_code::CORRUPT_BLOCK, "a sort run of the writer could not be read back");
}

/// The store of a writer that has none: one block per append. Merged runs' blocks are released.
class memory_store final : public spill_store {
 public:
  result<uint64_t> append(std::span<const uint8_t> bytes) override {
    uint64_t at = end_;
    blocks_.push_back({at, bytes.size(), std::string(reinterpret_cast<const char *>(bytes.data()), bytes.size())});
    end_ += bytes.size();
    return at;
  }
  result<void> read(uint64_t offset, std::span<uint8_t> out) override {
    auto it = std::upper_bound(blocks_.begin(), blocks_.end(), offset,
                               [](uint64_t o, const block &b) { return o < b.start; });
    if (it == blocks_.begin()) return corrupt_run();
    --it;
    size_t done = 0;
    while (done < out.size()) {
      if (it == blocks_.end()) return corrupt_run();
      uint64_t in_block = offset + done - it->start;
      if (in_block >= it->length || it->bytes.size() != it->length) return corrupt_run();
      size_t n = static_cast<size_t>(std::min<uint64_t>(out.size() - done, it->length - in_block));
      std::memcpy(out.data() + done, it->bytes.data() + in_block, n);
      done += n;
      ++it;
    }
    return {};
  }
  void release(const run &r) {
    for (auto &b : blocks_) {
      if (b.start >= r.offset && b.start + b.length <= r.offset + r.length) std::string().swap(b.bytes);
    }
  }

 private:
  struct block {
    uint64_t start;
    uint64_t length;
    std::string bytes;
  };
  std::vector<block> blocks_;
  uint64_t end_ = 0;
};

/// Writes one run: entries serialised as (varint key length, varint payload length, key, payload)
/// and compressed as one zstd frame into the store, IO_BYTES of entries at a time.
class run_writer {
 public:
  run_writer(spill_store &store, ZSTD_CCtx *cctx) : store_(store), cctx_(cctx), out_(ZSTD_CStreamOutSize()) {
    ZSTD_CCtx_reset(cctx_, ZSTD_reset_session_and_parameters);
    ZSTD_CCtx_setParameter(cctx_, ZSTD_c_compressionLevel, 1);
    ZSTD_CCtx_setParameter(cctx_, ZSTD_c_windowLog, RUN_WINDOW_LOG);
  }

  result<void> add(std::string_view key, std::string_view payload) {
    put_varint(raw_, key.size());
    put_varint(raw_, payload.size());
    raw_.append(key);
    raw_.append(payload);
    if (raw_.size() < IO_BYTES) return {};
    return compress(ZSTD_e_continue);
  }

  result<run> end() {
    auto r = compress(ZSTD_e_end);
    if (!r) return std::move(r).error();
    return run_;
  }

 private:
  result<void> compress(ZSTD_EndDirective mode) {
    ZSTD_inBuffer in{raw_.data(), raw_.size(), 0};
    while (true) {
      ZSTD_outBuffer o{out_.data(), out_.size(), 0};
      size_t left = ZSTD_compressStream2(cctx_, &o, &in, mode);
      if (ZSTD_isError(left))
        return quire::error(error_code::OUT_OF_MEMORY,
                            std::string("a sort run could not be compressed: ") + ZSTD_getErrorName(left));
      if (o.pos) {
        auto at = store_.append({out_.data(), o.pos});
        if (!at) return std::move(at).error();
        if (run_.length == 0) run_.offset = *at;
        else if (*at != run_.offset + run_.length)
          return quire::error(error_code::IO_ERROR, "the spill store did not append in order");
        run_.length += o.pos;
      }
      if (mode == ZSTD_e_continue ? in.pos == in.size : left == 0) break;
    }
    raw_.clear();
    return {};
  }

  spill_store &store_;
  ZSTD_CCtx *cctx_;
  std::vector<uint8_t> out_;
  std::string raw_;
  run run_;
};

/// Reads the entries of one run back through a bounded window.
class run_reader {
 public:
  run_reader(spill_store &store, run r)
      : store_(store), run_(r), stream_(ZSTD_createDStream()), input_(IO_BYTES), output_(IO_BYTES) {
    if (stream_) ZSTD_initDStream(stream_);
  }
  ~run_reader() { ZSTD_freeDStream(stream_); }
  run_reader(const run_reader &) = delete;
  run_reader &operator=(const run_reader &) = delete;

  /// Reads the next entry into key/payload (views into the window, valid until the next call).
  /// False at the end.
  result<bool> next(std::string_view &key, std::string_view &payload) {
    if (!stream_) return quire::error(error_code::OUT_OF_MEMORY, "cannot create a zstd stream");
    // Drop what earlier entries used, keeping the window small.
    if (consumed_ > IO_BYTES) {
      window_.erase(0, consumed_);
      consumed_ = 0;
    }
    auto any = ensure(consumed_ + 1);
    if (!any) return std::move(any).error();
    if (!*any) {
      if (window_.size() != consumed_) return corrupt_run();
      return false;
    }
    size_t at = consumed_;
    auto key_len = varint(at);
    if (!key_len) return std::move(key_len).error();
    auto payload_len = varint(at);
    if (!payload_len) return std::move(payload_len).error();
    if (*key_len > UINT32_MAX || *payload_len > UINT32_MAX || *key_len + *payload_len > SIZE_MAX - at)
      return corrupt_run();
    auto whole = ensure(at + static_cast<size_t>(*key_len + *payload_len));
    if (!whole) return std::move(whole).error();
    if (!*whole) return corrupt_run();
    key = std::string_view(window_).substr(at, static_cast<size_t>(*key_len));
    payload = std::string_view(window_).substr(at + static_cast<size_t>(*key_len), static_cast<size_t>(*payload_len));
    consumed_ = at + static_cast<size_t>(*key_len + *payload_len);
    return true;
  }

 private:
  result<uint64_t> varint(size_t &at) {
    uint64_t v = 0;
    for (int shift = 0; shift < 64; shift += 7) {
      auto more = ensure(at + 1);
      if (!more) return std::move(more).error();
      if (!*more) return corrupt_run();
      uint8_t b = static_cast<uint8_t>(window_[at++]);
      v |= static_cast<uint64_t>(b & 0x7F) << shift;
      if (!(b & 0x80)) return v;
    }
    return corrupt_run();
  }

  /// Decompresses until the window holds `size` bytes: true; false when the run ends first.
  result<bool> ensure(size_t size) {
    while (window_.size() < size) {
      if (in_.pos >= in_.size) {
        if (read_ >= run_.length) return false;
        size_t n = static_cast<size_t>(std::min<uint64_t>(IO_BYTES, run_.length - read_));
        auto r = store_.read(run_.offset + read_, {input_.data(), n});
        if (!r) return std::move(r).error();
        read_ += n;
        in_ = ZSTD_inBuffer{input_.data(), n, 0};
      }
      ZSTD_outBuffer out{output_.data(), output_.size(), 0};
      size_t r = ZSTD_decompressStream(stream_, &out, &in_);
      if (ZSTD_isError(r)) return corrupt_run();
      window_.append(reinterpret_cast<const char *>(output_.data()), out.pos);
      if (out.pos == 0 && in_.pos >= in_.size && read_ >= run_.length) {
        // All input consumed and nothing more comes out: the end, or a truncated frame.
        if (r != 0) return corrupt_run();
        return false;
      }
    }
    return true;
  }

  spill_store &store_;
  run run_;
  uint64_t read_ = 0;  // compressed bytes read from the store
  ZSTD_DStream *stream_;
  std::vector<uint8_t> input_, output_;
  ZSTD_inBuffer in_{nullptr, 0, 0};
  std::string window_;
  size_t consumed_ = 0;
};

/// Merges runs in key order; equal keys come in run order, so a merge is as stable as the runs.
class merger {
 public:
  result<void> open(spill_store &store, std::span<const run> runs) {
    for (const auto &r : runs) readers_.push_back(std::make_unique<run_reader>(store, r));
    for (size_t i = 0; i < readers_.size(); ++i) {
      std::string_view k, p;
      auto more = readers_[i]->next(k, p);
      if (!more) return std::move(more).error();
      if (*more) heads_.push_back({std::string(k), std::string(p), i});
    }
    std::make_heap(heads_.begin(), heads_.end(), greater);
    return {};
  }

  /// The next entry (views valid until the next call); false at the end.
  result<bool> next(std::string_view &key, std::string_view &payload) {
    if (heads_.empty()) return false;
    std::pop_heap(heads_.begin(), heads_.end(), greater);
    current_ = std::move(heads_.back());
    heads_.pop_back();
    std::string_view k, p;
    auto more = readers_[current_.run]->next(k, p);
    if (!more) return std::move(more).error();
    if (*more) {
      heads_.push_back({std::string(k), std::string(p), current_.run});
      std::push_heap(heads_.begin(), heads_.end(), greater);
    }
    key = current_.key;
    payload = current_.payload;
    return true;
  }

 private:
  struct head {
    std::string key, payload;
    size_t run;
  };
  static bool greater(const head &a, const head &b) { return a.key != b.key ? a.key > b.key : a.run > b.run; }

  std::vector<std::unique_ptr<run_reader>> readers_;
  std::vector<head> heads_;  // a heap ordered by (key, run)
  head current_;
};

}  // namespace

struct run_sorter::state {
  size_t budget = 0;
  spill_store *store = nullptr;          // the writer's, or `memory`
  std::unique_ptr<memory_store> memory;  // when the writer has no store
  ZSTD_CCtx *cctx = nullptr;
  std::string arena;
  std::vector<entry_ref> entries;
  std::vector<run> runs;
  size_t spilled = 0;
  // The first failure of a spill: add() cannot return it, so finish() does, and entries added
  // after it are dropped rather than held.
  std::optional<quire::error> failure;
  // Iteration: in memory (no run spilled) or by merging.
  size_t cursor = 0;
  std::unique_ptr<merger> merge;

  ~state() { ZSTD_freeCCtx(cctx); }

  std::string_view key_of(const entry_ref &e) const { return std::string_view(arena).substr(e.at, e.key_length); }

  // Keys in byte order, equal keys in the order added. Comparing the prefixes first spares the
  // arena lookups and memcmp for nearly every pair; equal prefixes of keys of at most 16 bytes mean
  // keys equal up to their lengths. Entries added in order (an index on a column the rows are
  // sorted by) are only checked.
  void sort_entries() {
    auto less = [&](const entry_ref &a, const entry_ref &b) {
      if (a.prefix_high != b.prefix_high) return a.prefix_high < b.prefix_high;
      if (a.prefix_low != b.prefix_low) return a.prefix_low < b.prefix_low;
      if (a.key_length <= 16 && b.key_length <= 16) return a.key_length < b.key_length;
      return key_of(a) < key_of(b);
    };
    if (!std::is_sorted(entries.begin(), entries.end(), less)) std::stable_sort(entries.begin(), entries.end(), less);
  }

  result<ZSTD_CCtx *> context() {
    if (!cctx) cctx = ZSTD_createCCtx();
    if (!cctx) return quire::error(error_code::OUT_OF_MEMORY, "cannot create a zstd context");
    return cctx;
  }

  result<run> write_sorted() {
    auto c = context();
    if (!c) return std::move(c).error();
    run_writer w(*store, *c);
    for (const auto &e : entries) {
      auto r = w.add(key_of(e), std::string_view(arena).substr(e.at + e.key_length, e.payload_length));
      if (!r) return std::move(r).error();
    }
    return w.end();
  }

  void spill() {
    sort_entries();
    if (!failure) {
      auto r = write_sorted();
      if (r) runs.push_back(*r);
      else failure = std::move(r).error();
    }
    ++spilled;
    arena.clear();
    arena.shrink_to_fit();
    entries.clear();
    entries.shrink_to_fit();
  }

  /// Merges groups of MAX_MERGE_RUNS consecutive runs into one until at most that many are left.
  /// Groups are consecutive, so equal keys keep the order they were added in.
  result<void> reduce_runs() {
    while (runs.size() > MAX_MERGE_RUNS) {
      std::vector<run> merged;
      for (size_t i = 0; i < runs.size(); i += MAX_MERGE_RUNS) {
        std::span<const run> group(runs.data() + i, std::min(MAX_MERGE_RUNS, runs.size() - i));
        if (group.size() == 1) {
          merged.push_back(group[0]);
          continue;
        }
        auto c = context();
        if (!c) return std::move(c).error();
        merger m;
        auto opened = m.open(*store, group);
        if (!opened) return opened;
        run_writer w(*store, *c);
        std::string_view k, p;
        while (true) {
          auto more = m.next(k, p);
          if (!more) return std::move(more).error();
          if (!*more) break;
          auto a = w.add(k, p);
          if (!a) return a;
        }
        auto r = w.end();
        if (!r) return std::move(r).error();
        merged.push_back(*r);
        if (memory) {
          for (const auto &g : group) memory->release(g);
        }
      }
      runs = std::move(merged);
    }
    return {};
  }
};

run_sorter::run_sorter(size_t memory_bytes, spill_store *spill) : s_(std::make_unique<state>()) {
  s_->budget = std::max<size_t>(memory_bytes, size_t{1} << 20);
  if (spill) {
    s_->store = spill;
  } else {
    s_->memory = std::make_unique<memory_store>();
    s_->store = s_->memory.get();
  }
}

run_sorter::~run_sorter() = default;

size_t run_sorter::spilled_runs() const noexcept { return s_->spilled; }

void run_sorter::add(std::string_view key, std::string_view payload) {
  ++count_;
  if (s_->failure) return;
  s_->entries.push_back({s_->arena.size(), static_cast<uint32_t>(key.size()), static_cast<uint32_t>(payload.size()),
                         key_prefix(key, 0), key_prefix(key, 8)});
  s_->arena.append(key);
  s_->arena.append(payload);
  if (s_->arena.size() + s_->entries.size() * sizeof(entry_ref) > s_->budget) s_->spill();
}

result<void> run_sorter::finish() {
  auto &s = *s_;
  if (s.failure) return *s.failure;
  if (s.runs.empty()) {
    s.sort_entries();
    return {};
  }
  if (!s.entries.empty()) s.spill();
  if (s.failure) return *s.failure;
  auto reduced = s.reduce_runs();
  if (!reduced) return reduced;
  s.merge = std::make_unique<merger>();
  return s.merge->open(*s.store, s.runs);
}

result<bool> run_sorter::next(std::string_view &key, std::string_view &payload) {
  auto &s = *s_;
  if (!s.merge) {
    if (s.cursor >= s.entries.size()) return false;
    const auto &e = s.entries[s.cursor++];
    key = s.key_of(e);
    payload = std::string_view(s.arena).substr(e.at + e.key_length, e.payload_length);
    return true;
  }
  return s.merge->next(key, payload);
}

// --- posting lists of a text index -------------------------------------------------------------------

namespace {

/// Bytes a list costs beyond its deltas (the struct, the string's header and its slack).
constexpr size_t LIST_OVERHEAD = 64;

uint32_t slot_of(uint32_t gram, size_t mask) { return static_cast<uint32_t>((gram * 2654435761u) & mask); }

}  // namespace

posting_lists::posting_lists(size_t memory_bytes) : budget_(memory_bytes), slot_(1024, 0) {}

posting_lists::list &posting_lists::list_of(uint32_t gram) {
  size_t mask = slot_.size() - 1;
  uint32_t s = slot_of(gram, mask);
  while (slot_[s] && lists_[slot_[s] - 1].gram != gram) s = (s + 1) & mask;
  if (slot_[s]) return lists_[slot_[s] - 1];
  lists_.push_back({gram, 0, {}, 0});
  slot_[s] = static_cast<uint32_t>(lists_.size());
  used_ += LIST_OVERHEAD + 2 * sizeof(uint32_t);
  if (lists_.size() * 2 > slot_.size()) {
    // Keep the table at most half full: rebuild at twice the size.
    std::vector<uint32_t> bigger(slot_.size() * 2, 0);
    mask = bigger.size() - 1;
    for (uint32_t i = 0; i < lists_.size(); ++i) {
      uint32_t t = slot_of(lists_[i].gram, mask);
      while (bigger[t]) t = (t + 1) & mask;
      bigger[t] = i + 1;
    }
    used_ += (bigger.size() - slot_.size()) * sizeof(uint32_t);
    slot_ = std::move(bigger);
  }
  return lists_.back();
}

bool posting_lists::add(uint32_t gram, uint64_t row) {
  list &l = list_of(gram);
  const size_t before = l.bytes.capacity();
  put_varint(l.bytes, row - l.last);
  l.last = row;
  ++l.count;
  used_ += l.bytes.capacity() - before;
  ++entries_;
  return used_ <= budget_;
}

bool posting_lists::add_rows(uint32_t gram, std::span<const uint64_t> rows) {
  list &l = list_of(gram);
  const size_t before = l.bytes.capacity();
  // The deltas through a buffer on the stack, appended a few hundred bytes at a time.
  char buffer[256];
  size_t used = 0;
  for (uint64_t row : rows) {
    if (used > sizeof buffer - 10) {
      l.bytes.append(buffer, used);
      used = 0;
    }
    used += encode_varint(buffer + used, row - l.last);
    l.last = row;
  }
  l.bytes.append(buffer, used);
  l.count += rows.size();
  used_ += l.bytes.capacity() - before;
  entries_ += rows.size();
  return used_ <= budget_;
}

std::vector<uint32_t> posting_lists::sorted_grams() const {
  std::vector<uint32_t> order(lists_.size());
  for (uint32_t i = 0; i < order.size(); ++i) order[i] = i;
  std::sort(order.begin(), order.end(), [&](uint32_t a, uint32_t b) { return lists_[a].gram < lists_[b].gram; });
  return order;
}

void posting_lists::clear() {
  std::vector<list>().swap(lists_);
  slot_.assign(1024, 0);
  used_ = 0;
  entries_ = 0;
}

}  // namespace quire::format::detail
