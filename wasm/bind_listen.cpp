// Embind bindings of the MLLP listener's engine (quire/listen.h) for hl7.listen in Node
// (js/src/listen.ts): the wrapper moves bytes between node:net sockets and the engine, reads the
// clock and decides when a group is committed; the store lives in a Node file the wrapper hands
// over as hooks (size, read, append, sync, truncate), random bytes come from
// crypto.getRandomValues. Core frames, parses, stores and builds the ACKs.
#include <emscripten/bind.h>
#include <emscripten/val.h>

#include <memory>
#include <optional>
#include <vector>

#include "bind_support.h"
#include "bind_targets.h"
#include "quire/listen.h"
#include "quire/store.h"

namespace {

namespace fmt = quire::format;
namespace lst = quire::listen;
using emscripten::val;
using quire::wasm::error_record;

using quire::wasm::js_target;

/// The engine's bounds and the owner's key as the wrapper sends them (0: the engine's default).
struct listen_settings {
  double max_frame_bytes = 0;
  double max_group_rows = 0;
  double max_group_bytes = 0;
  std::string owner_key;  // 32 bytes, or empty: a plain store
  double duplicate_window = 0;
  std::string view;  // a view's JSON text (listen::parse_view), or empty: none
};

struct ack_record {
  double connection = 0;
  std::string bytes;  // VT, the ACK, FS, CR (Embind hands a std::string to JS as text: see ackBytes)
  std::string code;
  std::string control_id;
};

struct counters_record {
  double frames = 0, stored = 0, duplicates = 0, errors = 0, rejected = 0, commits = 0, failed_commits = 0,
         rows_at_open = 0, view_rows_caught_up = 0;
};

/// A listener over a JavaScript file. The wrapper keeps one at a time per file.
class listen_handle {
 public:
  listen_handle(val target, val hooks, val view_target) : target_(std::move(target)), hooks_(std::move(hooks)) {
    if (!view_target.isNull() && !view_target.isUndefined()) view_target_.emplace(std::move(view_target));
  }

  /// Opens (or creates) the store: the error record, code "" on success.
  error_record open(const listen_settings &s) {
    lst::options o;
    if (s.max_frame_bytes > 0) o.max_frame_bytes = static_cast<size_t>(s.max_frame_bytes);
    if (s.max_group_rows > 0) o.max_group_rows = static_cast<size_t>(s.max_group_rows);
    if (s.max_group_bytes > 0) o.max_group_bytes = static_cast<size_t>(s.max_group_bytes);
    if (s.duplicate_window > 0) o.duplicate_window = static_cast<size_t>(s.duplicate_window);
    o.store.owner_key = s.owner_key;
    o.store.random = quire::wasm::random_from(hooks_);
    if (!s.view.empty()) {
      auto v = lst::parse_view(s.view);
      if (!v) return quire::wasm::to_record(v.error());
      o.view = std::move(v).value();
    }
    auto l = lst::listener::open(target_, o, view_target_ ? &*view_target_ : nullptr);
    if (!l) return quire::wasm::to_record(l.error());
    engine_ = std::move(l).value();
    return {};
  }

  /// Adds an `allow` range (listen::parse_address_range): the error record, code "" on success.
  error_record allow(const std::string &range) {
    auto r = lst::parse_address_range(range);
    if (!r) return quire::wasm::to_record(r.error());
    allow_.push_back(*r);
    return {};
  }
  /// Whether a peer (node:net's remoteAddress) may send: true when no range was added.
  bool allows(const std::string &address) const { return allow_.empty() || lst::address_allowed(allow_, address); }

  /// `length` bytes at `pointer` (the wrapper frees them) read from `connection`.
  void feed(double connection, uintptr_t pointer, size_t length, double receive_time_us) {
    if (!engine_) return;
    engine_->feed(static_cast<uint64_t>(connection), quire::wasm::heap_bytes(pointer, length),
                  static_cast<int64_t>(receive_time_us));
  }
  void forget(double connection) {
    if (engine_) engine_->close(static_cast<uint64_t>(connection));
  }

  /// Commits the group: its ACKs, or the error (no ACK of the group is ever sent then).
  val commit() {
    val out = val::object();
    if (!engine_) {
      out.set("error", val(quire::wasm::to_record(quire::error(quire::error_code::INVALID_ARGUMENT, "closed"))));
      return out;
    }
    auto r = engine_->commit();
    if (!r) {
      out.set("error", val(quire::wasm::to_record(r.error())));
      return out;
    }
    val acks = val::array();
    for (auto &a : r.value()) {
      val one = val::object();
      one.set("connection", static_cast<double>(a.connection));
      one.set("bytes",
              val(emscripten::typed_memory_view(a.bytes.size(), reinterpret_cast<const uint8_t *>(a.bytes.data())))
                  .call<val>("slice"));
      one.set("code", std::string(quire::hl7v2::ack_code_name(a.code)));
      one.set("controlId", a.control_id);
      acks.call<void>("push", one);
    }
    out.set("error", val(error_record{}));
    out.set("acks", acks);
    return out;
  }

  double queued_bytes(double connection) const {
    return engine_ ? static_cast<double>(engine_->queued_bytes(static_cast<uint64_t>(connection))) : 0;
  }
  double total_queued_bytes() const { return engine_ ? static_cast<double>(engine_->total_queued_bytes()) : 0; }
  double group_size() const { return engine_ ? static_cast<double>(engine_->group_size()) : 0; }
  bool group_full() const { return engine_ && engine_->group_full(); }
  bool frames_waiting() const { return engine_ && engine_->frames_waiting(); }
  counters_record counters() const {
    counters_record c;
    if (!engine_) return c;
    const auto &k = engine_->counters();
    c.frames = static_cast<double>(k.frames);
    c.stored = static_cast<double>(k.stored);
    c.duplicates = static_cast<double>(k.duplicates);
    c.errors = static_cast<double>(k.errors);
    c.rejected = static_cast<double>(k.rejected);
    c.commits = static_cast<double>(k.commits);
    c.failed_commits = static_cast<double>(k.failed_commits);
    c.rows_at_open = static_cast<double>(k.rows_at_open);
    c.view_rows_caught_up = static_cast<double>(k.view_rows_caught_up);
    return c;
  }
  /// Drops the engine (the wrapper committed first); the file is the wrapper's to close.
  void close() { engine_.reset(); }

 private:
  js_target target_;
  val hooks_;
  std::optional<js_target> view_target_;
  std::vector<lst::address_range> allow_;
  std::unique_ptr<lst::listener> engine_;
};

listen_handle *listen_through(val target, val hooks, val view_target) {
  return new listen_handle(std::move(target), std::move(hooks), std::move(view_target));
}

/// Where a view's table goes beside `store` (listen::default_view_path): {error, path}.
val listen_view_path(const std::string &store, const std::string &view_json) {
  val out = val::object();
  auto v = lst::parse_view(view_json);
  out.set("error", val(v ? error_record{} : quire::wasm::to_record(v.error())));
  if (v) out.set("path", lst::default_view_path(store, *v));
  return out;
}

}  // namespace

QUIRE_BINDINGS(listen) {
  using namespace emscripten;
  value_object<listen_settings>("ListenSettings")
      .field("maxFrameBytes", &listen_settings::max_frame_bytes)
      .field("maxGroupRows", &listen_settings::max_group_rows)
      .field("maxGroupBytes", &listen_settings::max_group_bytes)
      .field("ownerKey", &listen_settings::owner_key)
      .field("duplicateWindow", &listen_settings::duplicate_window)
      .field("view", &listen_settings::view);
  value_object<counters_record>("ListenCounters")
      .field("frames", &counters_record::frames)
      .field("stored", &counters_record::stored)
      .field("duplicates", &counters_record::duplicates)
      .field("errors", &counters_record::errors)
      .field("rejected", &counters_record::rejected)
      .field("commits", &counters_record::commits)
      .field("failedCommits", &counters_record::failed_commits)
      .field("rowsAtOpen", &counters_record::rows_at_open)
      .field("viewRowsCaughtUp", &counters_record::view_rows_caught_up);
  class_<listen_handle>("ListenHandle")
      .function("open", &listen_handle::open)
      .function("allow", &listen_handle::allow)
      .function("allows", &listen_handle::allows)
      .function("feed", &listen_handle::feed, allow_raw_pointers())
      .function("forget", &listen_handle::forget)
      .function("commit", &listen_handle::commit)
      .function("queuedBytes", &listen_handle::queued_bytes)
      .function("totalQueuedBytes", &listen_handle::total_queued_bytes)
      .function("groupSize", &listen_handle::group_size)
      .function("groupFull", &listen_handle::group_full)
      .function("framesWaiting", &listen_handle::frames_waiting)
      .function("counters", &listen_handle::counters)
      .function("close", &listen_handle::close);
  function("listenThrough", &listen_through, allow_raw_pointers());
  function("listenViewPath", &listen_view_path);
}
