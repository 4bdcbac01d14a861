// quire/listen.h — the target-neutral engine of `quire listen`: HL7 v2 messages arriving over
// MLLP on any number of connections, stored as rows of a growing .quire file (quire/store.h) and
// acknowledged only once their commit is durable (docs/listen.md).
//
//   quire::listen::options o;                       // bounds, the store's key and random source
//   auto l = quire::listen::listener::open(target, o);   // creates or continues the store
//   l.value()->feed(connection, bytes, receive_time_us);  // per read from a socket
//   if (l.value()->group_full() || deadline) {
//     auto acks = l.value()->commit();              // one append_store, then the ACKs
//     for (auto &a : acks.value()) send(a.connection, a.bytes);
//   }
//
// Core does no I/O and reads no clock: the caller moves bytes between sockets and the engine,
// passes each read's receive time, decides when a group is committed (its time bound), and hands
// over the append_target the store lives in (a file natively, memory in tests).
//
// Lifetime: the engine borrows `target` (it must outlive the listener); everything it returns is
// owned.
#pragma once

#include <cstddef>
#include <cstdint>
#include <deque>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "quire/hl7v2.h"
#include "quire/store.h"

namespace quire::listen {

/// Default of options::max_frame_bytes (1 MiB): a frame past it is dropped and answered AR.
inline constexpr size_t DEFAULT_MAX_FRAME_BYTES = size_t{1} << 20;
/// Default of options::max_group_rows: messages one commit holds at most.
inline constexpr size_t DEFAULT_MAX_GROUP_ROWS = 1000;
/// Default of options::max_group_bytes (16 MiB): message bytes one commit holds at most.
inline constexpr size_t DEFAULT_MAX_GROUP_BYTES = size_t{16} << 20;

struct options {
  size_t max_frame_bytes = DEFAULT_MAX_FRAME_BYTES;  ///< one MLLP frame (and so one message)
  size_t max_group_rows = DEFAULT_MAX_GROUP_ROWS;    ///< group_full() at this many messages
  size_t max_group_bytes = DEFAULT_MAX_GROUP_BYTES;  ///< group_full() at this many message bytes
  /// How the store is written: owner_key (sealed when given) and random (needed to create it).
  /// partition_by must stay empty (the listener's table is not partitioned).
  format::store_options store;
};

/// The listener's table: one row a message (docs/listen.md, "Rows").
///   control_id, type, sending_application, sending_facility, receiving_application,
///   receiving_facility, message_time (strings: MSH-10, MSH-9, MSH-3..6, MSH-7 as written),
///   receive_time (timestamp: given by the caller), patient_id (string, PID-3's first
///   repetition's component 1, null when none), ack_code (string), message (string: the frame).
format::schema row_schema();

/// An ACK to send: MLLP-framed bytes for one connection.
struct ack {
  uint64_t connection = 0;
  std::string bytes;  ///< VT, the ACK message, FS, CR
  hl7v2::ack_code code = hl7v2::ack_code::AA;
  std::string control_id;  ///< MSA-2: the message's MSH-10 ("" for a frame that did not parse)
};

/// What the listener has done since it was opened.
struct counters {
  uint64_t frames = 0;      ///< frames taken from the connections
  uint64_t stored = 0;      ///< rows written by commits that succeeded
  uint64_t duplicates = 0;  ///< messages acknowledged again without being stored
  uint64_t errors = 0;      ///< AE sent (parsed, not accepted)
  uint64_t rejected = 0;    ///< AR sent (not parsed, or a frame over the bound)
  uint64_t commits = 0;     ///< commits that succeeded
  uint64_t failed_commits = 0;
  uint64_t rows_at_open = 0;  ///< rows the store held when it was opened
};

/// The engine. Not safe to use from two threads at once.
class listener {
 public:
  /// Opens the store in `target`: an empty target is created (a first commit of no rows, with
  /// row_schema() and options.store's key); a store already there is continued (an unfinished
  /// commit a crash left is cut back by the next commit), and the (sending application, sending
  /// facility, control id) of every row it holds is read back for the duplicate check. Errors:
  /// INVALID_ARGUMENT (bounds of 0, partition_by given, a store whose columns are not
  /// row_schema()'s), and those of create_store and file::open (KEY_REQUIRED, WRONG_KEY, ...).
  static result<std::unique_ptr<listener>> open(format::append_target &target, const options &o);
  ~listener();
  listener(const listener &) = delete;
  listener &operator=(const listener &) = delete;

  /// Takes bytes read from `connection` (any id the caller chooses) at `receive_time_us`
  /// (microseconds since 1970-01-01T00:00:00Z). Complete frames join the group while it has room;
  /// the rest wait on the connection (queued_bytes) until commit() makes room. Never fails: bad
  /// frames become AR, frames over the bound are dropped and answered AR.
  void feed(uint64_t connection, std::span<const uint8_t> bytes, int64_t receive_time_us);
  /// Forgets a connection's partial frame and waiting frames (its messages already in the group
  /// are still committed; their ACKs are still returned, for the caller to drop).
  void close(uint64_t connection);

  /// Bytes a connection holds: its partial frame plus frames waiting for room in a group. The
  /// caller stops reading the connection while this is over its bound.
  size_t queued_bytes(uint64_t connection) const;
  /// Bytes all connections hold (queued_bytes summed) plus the group's message bytes.
  size_t total_queued_bytes() const noexcept;
  /// Messages (and ACKs) in the group.
  size_t group_size() const noexcept { return group_.size(); }
  /// Rows in the group that a commit will store.
  size_t group_rows() const noexcept { return group_rows_; }
  /// True when the group is at max_group_rows or max_group_bytes: commit now.
  bool group_full() const noexcept;
  /// True while some connection has complete frames waiting for room.
  bool frames_waiting() const noexcept { return waiting_frames_ > 0; }

  /// Appends the group's rows as one commit (append_store: one commit, one sync pair) and returns
  /// every ACK of the group, in the order the messages came (per connection, the order of its
  /// frames); then lets waiting frames into the next group (each keeps the time it arrived). A group with no row to
  /// store commits nothing. On failure the error is returned, no ACK of the group is ever sent (nothing is acknowledged
  /// that may not be stored; the senders resend), the group is dropped, and the store stays at its last whole commit.
  result<std::vector<ack>> commit();

  const quire::listen::counters &counters() const noexcept { return counters_; }

 private:
  struct waiting_frame {
    std::string bytes;
    int64_t receive_time_us;
    bool oversize;
  };
  struct connection_state {
    explicit connection_state(size_t max_frame) : decoder(max_frame) {}
    hl7v2::mllp_decoder decoder;
    std::deque<waiting_frame> waiting;
    size_t waiting_bytes = 0;
  };
  struct entry {
    uint64_t connection;
    hl7v2::ack_code code;
    std::string frame;  // the message bytes (kept for stored rows only)
    std::string control_id;
    std::string ack_bytes;
    std::string key;  // duplicate key, for stored rows
    int64_t receive_time_us;
    bool store;
  };

  listener(format::append_target &target, const options &o) : target_(target), options_(o) {}
  void admit(uint64_t connection, connection_state &c);
  void take(uint64_t connection, waiting_frame &&f);

  format::append_target &target_;
  options options_;
  std::unordered_map<uint64_t, connection_state> connections_;
  std::unordered_set<std::string> stored_keys_;
  std::unordered_set<std::string> group_keys_;
  std::vector<entry> group_;
  size_t group_rows_ = 0, group_bytes_ = 0, waiting_frames_ = 0;
  quire::listen::counters counters_;
};

/// `receive_time_us` as an HL7 DTM to the second ("20261203064115"), for an ACK's MSH-7.
std::string dtm_of(int64_t receive_time_us);

}  // namespace quire::listen
