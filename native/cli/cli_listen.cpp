// `quire listen`: HL7 v2 over MLLP into a .quire store (docs/listen.md). One thread, one epoll
// loop, non-blocking sockets, one writer: core's quire::listen::listener does framing, parsing,
// rows, the commit and the ACKs; this file only moves bytes, reads the clock and says when a
// group is due. A connection's bytes go through a listen_tls::transport: plain, or TLS
// (cli_listen_tls.h) with its handshake driven by the same loop.
#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <signal.h>
#include <sys/epoll.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <string>
#include <unordered_map>
#include <vector>

#include "cli.h"
#include "cli_listen_tls.h"
#include "quire/listen.h"
#include "quire/store_file.h"

namespace quire::cli {
namespace {

int64_t wall_us() {
  timespec ts;
  ::clock_gettime(CLOCK_REALTIME, &ts);
  return static_cast<int64_t>(ts.tv_sec) * 1000000 + ts.tv_nsec / 1000;
}

int64_t mono_ms() {
  timespec ts;
  ::clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<int64_t>(ts.tv_sec) * 1000 + ts.tv_nsec / 1000000;
}

void log_line(const std::string &line) {
  std::string l = "listen: " + line + "\n";
  std::fputs(l.c_str(), stderr);
}

// A peer's or the listening socket's address without its port ("10.1.2.3", "::1").
std::string ip_of(const sockaddr_storage &a) {
  char buf[INET6_ADDRSTRLEN] = {0};
  if (a.ss_family == AF_INET6)
    ::inet_ntop(AF_INET6, &reinterpret_cast<const sockaddr_in6 &>(a).sin6_addr, buf, sizeof buf);
  else ::inet_ntop(AF_INET, &reinterpret_cast<const sockaddr_in &>(a).sin_addr, buf, sizeof buf);
  return buf;
}

// With its port: "10.1.2.3:2575", "[::1]:2575".
std::string address_of(const sockaddr_storage &a) {
  const bool v6 = a.ss_family == AF_INET6;
  const uint16_t port =
      v6 ? reinterpret_cast<const sockaddr_in6 &>(a).sin6_port : reinterpret_cast<const sockaddr_in &>(a).sin_port;
  std::string out = v6 ? "[" : "";
  out.append(ip_of(a)).append(v6 ? "]:" : ":").append(std::to_string(ntohs(port)));
  return out;
}

struct connection {
  int fd = -1;
  listen_tls::transport t;  // plain, or TLS over fd
  std::string peer;
  std::string out;  // ACK bytes not yet written
  size_t out_done = 0;
  int64_t last_ms = 0, opened_ms = 0;
  bool reading = true;   // EPOLLIN on
  bool writing = false;  // EPOLLOUT on
  bool eof = false;      // the peer closed its side: close once its ACKs are out
};

struct settings {
  std::string store, bind = "127.0.0.1";
  std::vector<listen::address_range> allow;
  uint64_t port = 0, group_ms = 5, max_connections = 1024, idle_timeout_ms = 60000;
  uint64_t max_queued_bytes = uint64_t{4} << 20, max_total_queued_bytes = uint64_t{256} << 20;
  listen::options engine;
  const listen_tls::context *tls = nullptr;  // null: plain TCP
  uint64_t tls_handshake_timeout_ms = 0;
};

class server {
 public:
  server(settings s, listen::listener &l) : s_(std::move(s)), l_(l) {}
  int run(int listen_fd, int signal_fd);

 private:
  void accept_all();
  void on_readable(uint64_t id, connection &c);
  bool on_handshake(uint64_t id, connection &c);
  void flush(uint64_t id, connection &c);
  void update_events(uint64_t id, connection &c);
  void drop(uint64_t id, const char *why);
  bool may_read(uint64_t id, const connection &c) const;
  int commit();
  void sweep_idle(int64_t now);

  settings s_;
  listen::listener &l_;
  int epoll_fd_ = -1, listen_fd_ = -1, spare_fd_ = ::open("/dev/null", O_RDONLY | O_CLOEXEC);
  std::unordered_map<uint64_t, connection> conns_;
  uint64_t next_id_ = 16;  // ids 0..15 are the listening socket and the signal fd in epoll data
  int64_t group_started_ms_ = -1;
};

bool server::may_read(uint64_t id, const connection &c) const {
  const size_t mine = l_.queued_bytes(id) + (c.out.size() - c.out_done);
  return !c.eof && mine < s_.max_queued_bytes && l_.total_queued_bytes() < s_.max_total_queued_bytes &&
         !l_.frames_waiting();
}

void server::update_events(uint64_t id, connection &c) {
  const bool shaking = c.t.handshaking();
  const bool want_read = shaking ? !c.t.handshake_wants_write() : may_read(id, c) || c.t.write_wants_read();
  const bool want_write = shaking ? c.t.handshake_wants_write() : c.out_done < c.out.size() || c.t.read_wants_write();
  if (want_read == c.reading && want_write == c.writing) return;
  epoll_event ev{};
  ev.events = (want_read ? EPOLLIN : 0u) | (want_write ? EPOLLOUT : 0u);
  ev.data.u64 = id;
  ::epoll_ctl(epoll_fd_, EPOLL_CTL_MOD, c.fd, &ev);
  c.reading = want_read;
  c.writing = want_write;
}

void server::drop(uint64_t id, const char *why) {
  auto it = conns_.find(id);
  if (it == conns_.end()) return;
  if (why) log_line("closed " + it->second.peer + ": " + why);
  it->second.t.shutdown();
  ::epoll_ctl(epoll_fd_, EPOLL_CTL_DEL, it->second.fd, nullptr);
  ::close(it->second.fd);
  l_.close(id);
  conns_.erase(it);
}

void server::accept_all() {
  for (;;) {
    sockaddr_storage peer{};
    socklen_t len = sizeof peer;
    const int fd = ::accept4(listen_fd_, reinterpret_cast<sockaddr *>(&peer), &len, SOCK_NONBLOCK | SOCK_CLOEXEC);
    if (fd < 0) {
      if (errno == EINTR) continue;
      if ((errno == EMFILE || errno == ENFILE) && spare_fd_ >= 0) {
        // Out of descriptors: the pending peer would keep the listening socket readable and the
        // loop spinning. A descriptor kept in reserve lets it be accepted and closed.
        ::close(spare_fd_);
        const int extra = ::accept(listen_fd_, nullptr, nullptr);
        if (extra >= 0) ::close(extra);
        spare_fd_ = ::open("/dev/null", O_RDONLY | O_CLOEXEC);
        if (extra < 0) return;  // nobody was waiting: accept4 fails on descriptors first
        log_line("refused a peer: out of file descriptors (raise ulimit -n or lower --max-connections)");
        continue;
      }
      return;
    }
    const std::string who = address_of(peer);
    if (!s_.allow.empty()) {
      if (!listen::address_allowed(s_.allow, ip_of(peer))) {
        log_line("refused " + who + ": not in --allow");
        ::close(fd);
        continue;
      }
    }
    if (conns_.size() >= s_.max_connections) {
      log_line("refused " + who + ": --max-connections " + std::to_string(s_.max_connections) + " reached");
      ::close(fd);
      continue;
    }
    const int one = 1;
    ::setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    const uint64_t id = next_id_++;
    connection c;
    c.fd = fd;
    if (s_.tls) {
      auto t = listen_tls::transport::tls(fd, *s_.tls);
      if (!t) {
        log_line("refused " + who + ": OpenSSL could not start a TLS connection");
        ::close(fd);
        continue;
      }
      c.t = std::move(*t);
    } else {
      c.t = listen_tls::transport::plain(fd);
    }
    c.peer = who;
    c.last_ms = c.opened_ms = mono_ms();
    epoll_event ev{};
    ev.events = EPOLLIN;
    ev.data.u64 = id;
    if (::epoll_ctl(epoll_fd_, EPOLL_CTL_ADD, fd, &ev) != 0) {
      ::close(fd);
      continue;
    }
    conns_.emplace(id, std::move(c));
  }
}

void server::on_readable(uint64_t id, connection &c) {
  static thread_local std::vector<uint8_t> buffer(64 * 1024);
  // Read while the connection's and the listener's bounds allow: the kernel's socket buffer holds
  // the rest, and TCP's window tells the sender to wait.
  while (may_read(id, c)) {
    const listen_tls::io_result r = c.t.read(buffer.data(), buffer.size());
    if (r.bytes > 0) {
      c.last_ms = mono_ms();
      const bool was_empty = l_.group_size() == 0;
      l_.feed(id, std::span<const uint8_t>(buffer.data(), r.bytes), wall_us());
      if (was_empty && l_.group_size() > 0) group_started_ms_ = c.last_ms;
      continue;
    }
    if (r.st == listen_tls::status::closed) c.eof = true;
    if (r.st == listen_tls::status::failed) {
      if (!c.t.reason().empty()) log_line("closed " + c.peer + ": " + c.t.reason());
      c.eof = true;
      c.out.clear();
      c.out_done = 0;
    }
    break;
  }
}

// One step of a TLS handshake. Nothing is read for the engine before it is done; a peer that
// fails it (no client certificate, one from another CA, not TLS at all) is logged and closed.
// False when the connection was dropped.
bool server::on_handshake(uint64_t id, connection &c) {
  const listen_tls::status st = c.t.handshake();
  if (st == listen_tls::status::failed) {
    log_line("refused " + c.peer + ": " + c.t.reason());
    drop(id, nullptr);
    return false;
  }
  if (st == listen_tls::status::done) {
    c.last_ms = mono_ms();
    if (s_.tls->verifies_clients())
      log_line("accepted " + c.peer + ": " + c.t.protocol() + ", client certificate " + c.t.peer_subject());
  }
  return true;
}

void server::flush(uint64_t id, connection &c) {
  while (c.out_done < c.out.size()) {
    const listen_tls::io_result r =
        c.t.write(reinterpret_cast<const uint8_t *>(c.out.data()) + c.out_done, c.out.size() - c.out_done);
    if (r.bytes > 0) {
      c.out_done += r.bytes;
      continue;
    }
    if (r.st == listen_tls::status::want_write || r.st == listen_tls::status::want_read) break;
    if (!c.t.reason().empty()) log_line("closed " + c.peer + ": " + c.t.reason());
    c.out.clear();  // the peer is gone: nothing more to tell it
    c.out_done = 0;
    c.eof = true;
    break;
  }
  if (c.out_done == c.out.size()) {
    c.out.clear();
    c.out_done = 0;
  }
  (void)id;
}

int server::commit() {
  while (l_.group_size() > 0) {
    auto acks = l_.commit();
    group_started_ms_ = l_.group_size() > 0 ? mono_ms() : -1;
    if (!acks) {
      // The store refused a commit (disk full, I/O error): nothing of the group is acknowledged.
      // Exiting is the one answer that keeps the promise for every connection at once; a restart
      // continues the file at its last whole commit and the senders resend.
      print_error(s_.store, acks.error());
      log_line("a commit failed: no ACK sent for its group; exiting");
      return EXIT_BAD_INPUT;
    }
    for (auto &a : *acks) {
      auto it = conns_.find(a.connection);
      if (it == conns_.end()) continue;  // closed meanwhile: stored, and a resend is acknowledged again
      it->second.out += a.bytes;
    }
    if (!l_.group_full()) break;
  }
  for (auto it = conns_.begin(); it != conns_.end();) {
    const uint64_t id = it->first;
    connection &c = it->second;
    ++it;
    flush(id, c);
    // TLS records read from the socket before a bound stopped the reading: the socket may never
    // become readable again for them.
    if (!c.eof && c.t.buffered() && may_read(id, c)) on_readable(id, c);
    if (c.eof && c.out.empty()) {
      drop(id, nullptr);
      continue;
    }
    update_events(id, c);
  }
  return EXIT_OK;
}

void server::sweep_idle(int64_t now) {
  std::vector<uint64_t> idle, slow;
  for (auto &[id, c] : conns_) {
    if (c.t.handshaking() && now - c.opened_ms >= static_cast<int64_t>(s_.tls_handshake_timeout_ms)) slow.push_back(id);
    else if (now - c.last_ms >= static_cast<int64_t>(s_.idle_timeout_ms)) idle.push_back(id);
  }
  for (uint64_t id : idle) drop(id, "idle timeout");
  for (uint64_t id : slow) {
    log_line("refused " + conns_.at(id).peer + ": no TLS handshake within --tls-handshake-timeout-ms " +
             std::to_string(s_.tls_handshake_timeout_ms));
    drop(id, nullptr);
  }
}

int server::run(int listen_fd, int signal_fd) {
  listen_fd_ = listen_fd;
  epoll_fd_ = ::epoll_create1(EPOLL_CLOEXEC);
  if (epoll_fd_ < 0) return fail("listen", quire::error(error_code::IO_ERROR, "epoll_create1 failed"));
  epoll_event ev{};
  ev.events = EPOLLIN;
  ev.data.u64 = 0;
  ::epoll_ctl(epoll_fd_, EPOLL_CTL_ADD, listen_fd, &ev);
  ev.data.u64 = 1;
  ::epoll_ctl(epoll_fd_, EPOLL_CTL_ADD, signal_fd, &ev);
  std::vector<epoll_event> events(256);
  int64_t last_sweep = mono_ms();
  const uint64_t shortest = s_.tls ? std::min(s_.idle_timeout_ms, s_.tls_handshake_timeout_ms) : s_.idle_timeout_ms;
  const int64_t sweep_every = std::max<int64_t>(10, std::min<int64_t>(1000, shortest / 4));
  bool stopping = false;
  while (!stopping) {
    int64_t now = mono_ms();
    int timeout = static_cast<int>(std::max<int64_t>(0, last_sweep + sweep_every - now));
    if (group_started_ms_ >= 0)
      timeout = static_cast<int>(std::min<int64_t>(
          timeout, std::max<int64_t>(0, group_started_ms_ + static_cast<int64_t>(s_.group_ms) - now)));
    const int n = ::epoll_wait(epoll_fd_, events.data(), static_cast<int>(events.size()), timeout);
    if (n < 0 && errno != EINTR) return fail("listen", quire::error(error_code::IO_ERROR, "epoll_wait failed"));
    for (int i = 0; i < n; ++i) {
      const uint64_t id = events[static_cast<size_t>(i)].data.u64;
      if (id == 0) {
        accept_all();
        continue;
      }
      if (id == 1) {
        signalfd_siginfo si;
        while (::read(signal_fd, &si, sizeof si) == static_cast<ssize_t>(sizeof si)) stopping = true;
        continue;
      }
      auto it = conns_.find(id);
      if (it == conns_.end()) continue;
      connection &c = it->second;
      const uint32_t e = events[static_cast<size_t>(i)].events;
      if (c.t.handshaking()) {
        if (!on_handshake(id, c)) continue;
        if (c.t.handshaking()) {
          update_events(id, c);
          continue;
        }
      }
      if ((e & (EPOLLIN | EPOLLHUP | EPOLLERR)) || ((e & EPOLLOUT) && c.t.read_wants_write()) || c.t.buffered())
        on_readable(id, c);
      if (e & (EPOLLHUP | EPOLLERR)) {  // both ways closed: no ACK can reach the peer now
        drop(id, nullptr);
        continue;
      }
      if ((e & EPOLLOUT) || ((e & EPOLLIN) && c.t.write_wants_read())) flush(id, c);
      if (c.eof && c.out.empty() && l_.group_size() == 0) {
        drop(id, nullptr);
        continue;
      }
      update_events(id, c);
    }
    now = mono_ms();
    if (l_.group_full() || (group_started_ms_ >= 0 && now >= group_started_ms_ + static_cast<int64_t>(s_.group_ms)))
      if (int r = commit(); r != EXIT_OK) return r;
    if (now >= last_sweep + sweep_every) {
      sweep_idle(now);
      last_sweep = now;
    }
  }
  log_line("stopping: committing the last group");
  ::close(listen_fd_);
  if (int r = commit(); r != EXIT_OK) return r;
  // Give the ACKs a moment to leave, then go.
  const int64_t until = mono_ms() + 1000;
  for (;;) {
    bool pending = false;
    for (auto &[id, c] : conns_) {
      flush(id, c);
      pending = pending || !c.out.empty();
    }
    if (!pending || mono_ms() >= until) break;
    ::usleep(5000);
  }
  for (auto &[id, c] : conns_) ::close(c.fd);
  log_line("stopped: " + std::to_string(l_.counters().stored) + " rows stored, " +
           std::to_string(l_.counters().commits) + " commits");
  return EXIT_OK;
}

// Creates the store beside its name and renames it into place, so a crash while creating never
// leaves a file that is not a store under the real name.
// With a view, the file made is the view's table (the store stands in memory meanwhile).
int create_store_file(const std::string &path, const listen::options &o, bool view_table = false) {
  const std::string temp = path + ".tmp-" + std::to_string(::getpid());
  std::remove(temp.c_str());
  {
    auto t = native::append_file::open(temp, true);
    if (!t) return fail(temp, t.error());
    format::memory_target none;
    listen::options without_view = o;
    if (!view_table) without_view.view.reset();
    auto l = view_table ? listen::listener::open(none, o, t.value().get())
                        : listen::listener::open(*t.value(), without_view);
    if (!l) {
      std::remove(temp.c_str());
      return fail(path, l.error());
    }
  }
  if (std::rename(temp.c_str(), path.c_str()) != 0) {
    std::remove(temp.c_str());
    return fail(path, quire::error(error_code::IO_ERROR, "cannot rename the new store into place"));
  }
  const size_t slash = path.rfind('/');
  const std::string dir = slash == std::string::npos ? "." : (slash == 0 ? "/" : path.substr(0, slash));
  const int dfd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (dfd >= 0) {
    ::fsync(dfd);
    ::close(dfd);
  }
  log_line("created " + path);
  return EXIT_OK;
}

int run_listen(arguments &args) {
  settings s;
  auto port = args.number("--port");
  auto store = args.option("--store");
  auto bind = args.option("--bind");
  auto allow = args.options("--allow");
  auto key = args.option("--key");
  auto group_ms = args.number("--group-ms");
  auto group_max = args.number("--group-max");
  auto group_bytes = args.number("--group-bytes");
  auto max_frame = args.number("--max-frame-bytes");
  auto max_conns = args.number("--max-connections");
  auto max_queued = args.number("--max-queued-bytes");
  auto max_total = args.number("--max-total-queued-bytes");
  auto idle = args.number("--idle-timeout-ms");
  auto view_file = args.option("--view");
  auto view_store = args.option("--view-store");
  auto duplicate_window = args.number("--duplicate-window");
  listen_tls::tls_options tls(args);  // --tls-cert, --tls-key, --tls-ca, --tls-handshake-timeout-ms
  auto rest = args.finish("listen", 0, 0, "takes no positional words");
  if (!rest) return args.exit_status();
  if (!port || !store) return usage_error("listen", "needs --port N and --store FILE.quire");
  if (*port > 65535) return usage_error("listen", "--port is 0..65535");
  s.port = *port;
  s.store = *store;
  if (bind) s.bind = *bind;
  for (const auto &a : allow) {
    auto range = listen::parse_address_range(a);
    if (!range) return usage_error("listen", "--allow takes a CIDR such as 10.0.0.0/8: " + range.error().message);
    s.allow.push_back(*range);
  }
  if (group_ms) s.group_ms = *group_ms;
  if (group_max) s.engine.max_group_rows = *group_max;
  if (group_bytes) s.engine.max_group_bytes = *group_bytes;
  if (max_frame) s.engine.max_frame_bytes = *max_frame;
  if (max_conns) s.max_connections = *max_conns;
  if (max_queued) s.max_queued_bytes = *max_queued;
  if (max_total) s.max_total_queued_bytes = *max_total;
  if (idle) s.idle_timeout_ms = *idle;
  if (duplicate_window) s.engine.duplicate_window = *duplicate_window;
  if (s.group_ms > 60000) return usage_error("listen", "--group-ms is 0..60000");
  if (view_store && !view_file) return usage_error("listen", "--view-store needs --view VIEW.json");
  std::string view_path;
  if (view_file) {
    auto text = read_view_text(*view_file);
    if (!text) return fail(*view_file, text.error());
    auto v = listen::parse_view(*text);
    if (!v) return fail(*view_file, v.error());
    s.engine.view = std::move(v).value();
    view_path = view_store ? *view_store : listen::default_view_path(s.store, *s.engine.view);
    if (view_path == s.store) return usage_error("listen", "--view-store must be another file than --store");
  }
  if (s.max_queued_bytes == 0 || s.max_total_queued_bytes == 0 || s.max_connections == 0 || s.idle_timeout_ms == 0)
    return usage_error("listen",
                       "--max-connections, --max-queued-bytes, --max-total-queued-bytes and "
                       "--idle-timeout-ms must be above 0");
  if (int r = tls.check(); r != EXIT_OK) return r;
  std::unique_ptr<listen_tls::context> tls_context;  // read before the store is touched or a port taken
  if (tls.enabled()) {
    int status = EXIT_OK;
    if (!(tls_context = listen_tls::context::load(tls, status))) return status;
    s.tls = tls_context.get();
    s.tls_handshake_timeout_ms = tls.handshake_timeout_ms;
  }
  if (key) {
    auto k = native::read_key_file(*key);
    if (!k) return fail(*key, k.error());
    s.engine.store.owner_key = std::move(k).value();
  }
  s.engine.store.random = [](std::span<uint8_t> out) { return native::system_random(out); };

  struct stat st;
  if (::stat(s.store.c_str(), &st) != 0) {
    if (int r = create_store_file(s.store, s.engine); r != EXIT_OK) return r;
  }
  auto target = native::append_file::open(s.store, false);
  if (!target) return fail(s.store, target.error());
  std::unique_ptr<native::append_file> view_target;
  if (s.engine.view) {
    if (::stat(view_path.c_str(), &st) != 0) {
      if (int r = create_store_file(view_path, s.engine, true); r != EXIT_OK) return r;
    }
    auto vt = native::append_file::open(view_path, false);
    if (!vt) return fail(view_path, vt.error());
    view_target = std::move(vt).value();
  }
  auto l = listen::listener::open(*target.value(), s.engine, view_target.get());
  if (!l) return fail(s.store, l.error());
  if (view_target)
    log_line(view_path + ": the view '" + s.engine.view->name + "', " +
             std::to_string(l.value()->counters().view_rows_caught_up) + " rows caught up from the store");

  sigset_t mask;
  sigemptyset(&mask);
  sigaddset(&mask, SIGTERM);
  sigaddset(&mask, SIGINT);
  ::sigprocmask(SIG_BLOCK, &mask, nullptr);
  ::signal(SIGPIPE, SIG_IGN);
  const int signal_fd = ::signalfd(-1, &mask, SFD_NONBLOCK | SFD_CLOEXEC);
  if (signal_fd < 0) return fail("listen", quire::error(error_code::IO_ERROR, "signalfd failed"));

  // IPv4, or IPv6 when the address has a colon ("::" also takes IPv4 peers, as ::ffff:a.b.c.d).
  sockaddr_storage addr{};
  socklen_t addr_len;
  const bool v6 = s.bind.find(':') != std::string::npos;
  if (v6) {
    auto &a6 = reinterpret_cast<sockaddr_in6 &>(addr);
    a6.sin6_family = AF_INET6;
    a6.sin6_port = htons(static_cast<uint16_t>(s.port));
    if (::inet_pton(AF_INET6, s.bind.c_str(), &a6.sin6_addr) != 1)
      return usage_error("listen", "--bind takes an IPv4 or IPv6 address, not " + s.bind);
    addr_len = sizeof a6;
  } else {
    auto &a4 = reinterpret_cast<sockaddr_in &>(addr);
    a4.sin_family = AF_INET;
    a4.sin_port = htons(static_cast<uint16_t>(s.port));
    if (::inet_pton(AF_INET, s.bind.c_str(), &a4.sin_addr) != 1)
      return usage_error("listen", "--bind takes an IPv4 or IPv6 address, not " + s.bind);
    addr_len = sizeof a4;
  }
  const int fd = ::socket(v6 ? AF_INET6 : AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
  if (fd < 0) return fail("listen", quire::error(error_code::IO_ERROR, "socket failed"));
  const int one = 1, zero = 0;
  ::setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
  if (v6) ::setsockopt(fd, IPPROTO_IPV6, IPV6_V6ONLY, &zero, sizeof zero);
  if (::bind(fd, reinterpret_cast<sockaddr *>(&addr), addr_len) != 0 || ::listen(fd, 1024) != 0)
    return fail(s.bind + ":" + std::to_string(s.port),
                quire::error(error_code::IO_ERROR, std::string("cannot listen: ") + std::strerror(errno)));
  socklen_t len = sizeof addr;
  ::getsockname(fd, reinterpret_cast<sockaddr *>(&addr), &len);  // the port chosen for --port 0
  std::printf("listening on %s\n", address_of(addr).c_str());
  std::fflush(stdout);
  log_line(s.store + ": " + std::to_string(l.value()->counters().rows_at_open) + " rows at start, group " +
           std::to_string(s.group_ms) + " ms / " + std::to_string(s.engine.max_group_rows) + " messages");
  if (s.tls)
    log_line("TLS with " + *tls.cert +
             (s.tls->verifies_clients() ? ", client certificates required (CA " + *tls.ca + ")" : ""));
  server srv(std::move(s), *l.value());
  return srv.run(fd, signal_fd);
}

registration listen_command{
    {"listen", "",
     "--port N --store FILE.quire [--bind ADDR] [--allow CIDR]... [--key FILE] [--group-ms N] [--group-max N] "
     "[--group-bytes N] [--max-frame-bytes N] [--max-connections N] [--max-queued-bytes N] "
     "[--max-total-queued-bytes N] [--idle-timeout-ms N] [--duplicate-window N] [--view VIEW.json "
     "[--view-store FILE]] [--tls-cert FILE --tls-key FILE [--tls-ca FILE] [--tls-handshake-timeout-ms N]]",
     "Take HL7 v2 messages over MLLP, store each as a row of FILE.quire and acknowledge it only once its commit is "
     "durable (docs/listen.md).",
     run_listen}};

}  // namespace
}  // namespace quire::cli
