// Fuzz target for the MLLP listener's engine (quire/listen.h): any bytes on up to three
// connections, cut into reads of fuzzer-chosen sizes, with commits between them, and a commit that
// may fail part-way. Whatever arrives: every frame gets exactly one ACK from a commit that
// succeeded (none from one that failed), the store holds exactly the AA messages that were not
// duplicates, opens at its last whole commit, and a listener opened again on it finds the same rows.
// With data[4] odd, a view (a column of each type) writes a second table: after a commit that
// failed it may lag the store; a listener opened again catches it up to a row a stored message.
#include <cstdint>
#include <cstdlib>
#include <span>

#include "quire/listen.h"
#include "quire/store.h"

namespace {

// The first bytes steer the run; the rest are the connections' bytes.
struct steering {
  size_t max_frame, read_size, commit_every, connections;
  uint64_t fail_at;
};

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  using namespace quire;
  if (size < 5) return 0;
  const steering s{64 + size_t{data[0]} * 16, 1 + size_t{data[1]} % 64, 1 + size_t{data[2]} % 8,
                   1 + size_t{data[3]} % 3, data[4] < 32 ? 1000 + uint64_t{data[4]} * 97 : UINT64_MAX};
  const bool with_view = data[4] & 1;
  data += 5;
  size -= 5;
  format::memory_target target, view_target;
  listen::options o;
  o.max_frame_bytes = s.max_frame;
  o.max_group_rows = 4;
  if (with_view) {
    auto v = listen::parse_view(R"({"name": "v", "column": [{"name": "s", "path": "PID-5.1"},
        {"name": "i", "path": "PID-1", "type": "integer"}, {"name": "d", "path": "OBX-5", "type": "decimal"},
        {"name": "dt", "path": "PID-7", "type": "date"}, {"name": "ts", "path": "MSH-7", "type": "timestamp"},
        {"name": "b", "path": "PID-30", "type": "boolean"}, {"name": "r", "path": "OBX[2]-5[2].1.1"}]})");
    if (!v) std::abort();
    o.view = std::move(v).value();
  }
  auto l = listen::listener::open(target, o, &view_target);
  if (!l) std::abort();                          // an empty memory target always opens
  uint64_t acked_rows = 0, reads = 0, acks = 0;  // acked_rows: rows stored by commits that succeeded
  bool failed = false;
  target.fail_after = s.fail_at;
  view_target.fail_after = s.fail_at;  // the view's append may fail after the store's succeeded
  for (size_t at = 0; at < size; at += s.read_size) {
    const size_t n = size - at < s.read_size ? size - at : s.read_size;
    (*l)->feed(reads % s.connections, std::span<const uint8_t>(data + at, n), 1700000000000000 + int64_t(reads));
    if (++reads % s.commit_every == 0 || (*l)->group_full()) {
      auto r = (*l)->commit();
      if (!r) {
        failed = true;  // the CLI exits here; the senders resend to the next one
        break;
      }
      for (const auto &a : *r) {
        if (a.bytes.empty() || a.bytes.front() != '\x0B') std::abort();
        ++acks;
      }
    }
    if ((*l)->total_queued_bytes() > 3 * (s.max_frame + 2) + o.max_group_rows * (s.max_frame + 2)) std::abort();
  }
  // Everything complete is committed: groups until no frame waits.
  while (!failed && ((*l)->group_size() || (*l)->frames_waiting())) {
    auto r = (*l)->commit();
    if (!r) failed = true;
    else acks += r->size();
  }
  const auto c = (*l)->counters();
  acked_rows = c.stored;
  // One ACK a frame: AA stored or duplicate, AE, AR.
  if (!failed && acks != c.stored + c.duplicates + c.errors + c.rejected) std::abort();
  // The store opens at its last whole commit and holds exactly what the successful commits stored.
  target.fail_after = UINT64_MAX;
  auto f = format::file::open(borrow_bytes(target.bytes));
  if (!f) std::abort();
  if (f->row_count() != acked_rows) std::abort();
  // A listener opened again continues it and finds the same rows.
  view_target.fail_after = UINT64_MAX;
  auto again = listen::listener::open(target, o, &view_target);
  if (!again || (*again)->counters().rows_at_open != acked_rows) std::abort();
  if (o.view) {
    auto vf = format::file::open(borrow_bytes(view_target.bytes));
    if (!vf || vf->row_count() != acked_rows) std::abort();
  }
  return 0;
}
