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

#include <array>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "quire/crypto.h"
#include "quire/hl7v2.h"
#include "quire/store.h"

namespace quire::listen {

/// Default of options::max_frame_bytes (1 MiB): a frame past it is dropped and answered AR.
inline constexpr size_t DEFAULT_MAX_FRAME_BYTES = size_t{1} << 20;
/// Default of options::max_group_rows: messages one commit holds at most.
inline constexpr size_t DEFAULT_MAX_GROUP_ROWS = 1000;
/// Default of options::max_group_bytes (16 MiB): message bytes one commit holds at most.
inline constexpr size_t DEFAULT_MAX_GROUP_BYTES = size_t{16} << 20;
/// Default of options::duplicate_window: the keys of the last million stored messages (at most
/// ~48 MB: a 16-byte fingerprint in a table and in a ring each).
inline constexpr size_t DEFAULT_DUPLICATE_WINDOW = 1'000'000;

/// A column of a message view: a path into each message (hl7v2::parse_path's grammar) and the
/// type its value is stored as. A value that is absent, empty or does not read as the type is null.
struct view_column {
  std::string name;
  std::string path_text;  ///< as written: "PID-5[1].1"
  hl7v2::path path;
  format::column_type type = format::column_type::string;
};

/// A mapping of each stored message to one row of a second table (`quire listen --view`,
/// docs/listen.md "Views"): `control_id` and `receive_time` (the link to the store's row), then
/// the view's columns.
struct message_view {
  std::string name;
  std::vector<view_column> columns;
  /// control_id (string), receive_time (timestamp), then the columns.
  format::schema schema() const;
};

/// Reads a view written as JSON: {"name": "adt", "column": [{"name": "mrn", "path": "PID-3[1].1"},
/// {"name": "born", "path": "PID-7", "type": "date"}, ...]}. Types: string (the default: the text
/// unescaped), integer, decimal, date, timestamp (from HL7 DT/DTM), boolean (Y/N). Errors:
/// INVALID_ARGUMENT with the JSON path of what is wrong (an unknown key or type, a bad HL7 path, a
/// name that is not a letter then letters, digits or _, a name used twice or taken by the link
/// columns, no column), and the JSON parser's.
result<message_view> parse_view(std::string_view json_text);

/// Where a view's table goes when not said: beside the store, "adt.quire" and the view "patients"
/// give "adt.patients.quire" (a store not named .quire gets ".patients.quire" appended).
std::string default_view_path(std::string_view store_path, const message_view &view);

/// An IPv4 or IPv6 address range (CIDR: "10.0.0.0/8", "192.168.1.7", "fd00::/8", "::1"), as
/// `--allow` takes it. IPv4 addresses are kept as IPv4-mapped IPv6 (::ffff:a.b.c.d/96+bits), so an
/// IPv4 range also matches a peer Node reports as "::ffff:10.1.2.3".
struct address_range {
  std::array<uint8_t, 16> network{};
  unsigned prefix_bits = 128;
};

/// Reads a range. INVALID_ARGUMENT naming what is wrong (not an address, a prefix past 32 for IPv4
/// or 128 for IPv6, host bits set past the prefix are cleared, not refused).
result<address_range> parse_address_range(std::string_view text);
/// An address as text ("127.0.0.1", "::ffff:127.0.0.1", "fe80::1"; a zone "%eth0" is ignored) in
/// any of the ranges. False for text that is not an address.
bool address_allowed(std::span<const address_range> ranges, std::string_view address);

struct options {
  size_t max_frame_bytes = DEFAULT_MAX_FRAME_BYTES;  ///< one MLLP frame (and so one message)
  size_t max_group_rows = DEFAULT_MAX_GROUP_ROWS;    ///< group_full() at this many messages
  size_t max_group_bytes = DEFAULT_MAX_GROUP_BYTES;  ///< group_full() at this many message bytes
  /// How many stored messages' keys the duplicate check remembers (the most recent; a resend of
  /// an older message is stored again). At open, the keys of the store's last rows are read back.
  size_t duplicate_window = DEFAULT_DUPLICATE_WINDOW;
  /// How the store is written: owner_key (sealed when given) and random (needed to create it).
  /// partition_by must stay empty (the listener's table is not partitioned).
  format::store_options store;
  /// With a view, each commit also appends the view's rows of its messages to the view's target
  /// (after the store's, before any ACK), written with `store`'s options.
  std::optional<message_view> view;
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
  uint64_t rows_at_open = 0;         ///< rows the store held when it was opened
  uint64_t view_rows_caught_up = 0;  ///< view rows derived at open from stored messages the view lacked
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
  ///
  /// With options.view, `view_target` holds the view's table (required): created when empty; when
  /// it lags the store (a crash between the two appends of a commit, or a view added to a store
  /// that has rows) the missing rows are derived from the stored messages first. INVALID_ARGUMENT
  /// when its columns are not the view's or its last row is not among the store's.
  static result<std::unique_ptr<listener>> open(format::append_target &target, const options &o,
                                                format::append_target *view_target = nullptr);
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

  // The fingerprints of the last `window` stored keys: an open-addressed table (linear probing,
  // deletion by backward shift) and a ring giving the order to forget them in.
  class duplicate_set {
   public:
    using print = std::array<uint8_t, crypto::FINGERPRINT_BYTES>;
    explicit duplicate_set(size_t window) : window_(window) {}
    bool contains(const print &p) const noexcept;
    void insert(const print &p);  // the oldest is forgotten past the window
    size_t size() const noexcept { return size_; }

   private:
    size_t slot_of(const print &p) const noexcept;
    void erase(const print &p) noexcept;
    void grow();
    size_t window_, size_ = 0, ring_head_ = 0;
    std::vector<print> table_, ring_;
  };

  listener(format::append_target &target, const options &o, format::append_target *view_target)
      : target_(target), view_target_(view_target), options_(o), stored_keys_(o.duplicate_window) {}
  void admit(uint64_t connection, connection_state &c);
  void take(uint64_t connection, waiting_frame &&f);
  result<void> open_view(format::file &store);

  format::append_target &target_;
  format::append_target *view_target_;
  options options_;
  std::unordered_map<uint64_t, connection_state> connections_;
  duplicate_set stored_keys_;
  std::unordered_set<std::string> group_keys_;
  std::vector<entry> group_;
  size_t group_rows_ = 0, group_bytes_ = 0, waiting_frames_ = 0;
  quire::listen::counters counters_;
};

/// `receive_time_us` as an HL7 DTM to the second ("20261203064115"), for an ACK's MSH-7.
std::string dtm_of(int64_t receive_time_us);

}  // namespace quire::listen
