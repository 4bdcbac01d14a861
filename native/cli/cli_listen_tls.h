// TLS for `quire listen` (docs/listen.md, "TLS"): the options, the server's configuration (an
// OpenSSL SSL_CTX: its certificate and key, and with a CA the client certificates it requires) and
// a connection's transport, plain or TLS, over a non-blocking socket. OpenSSL stays in
// cli_listen_tls.cpp; the event loop (cli_listen.cpp) sees only what a call needs next from the
// socket. Native CLI only: core has no sockets.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>

#include "cli.h"

struct ssl_st;
struct ssl_ctx_st;

namespace quire::cli::listen_tls {

/// `--tls-cert FILE --tls-key FILE [--tls-ca FILE] [--tls-handshake-timeout-ms N]`.
struct tls_options {
  /// Takes the options (before args.finish()).
  explicit tls_options(arguments &args);
  std::optional<std::string> cert, key, ca;
  uint64_t handshake_timeout_ms = 10000;
  bool timeout_given = false;
  bool enabled() const { return cert.has_value(); }
  /// The usage errors (a cert without its key or the reverse, a CA or a timeout without both, a
  /// zero timeout): EXIT_OK, or usage_error()'s code.
  int check() const;
};

/// The server's TLS configuration: TLS 1.2 at least, OpenSSL's default ciphers, buffers released
/// while a connection is idle; with a CA, a client must present a certificate it signed.
class context {
 public:
  /// Reads the certificate chain, the key (unencrypted PEM; it must match the certificate) and
  /// the CA. A file that cannot be read or used is printed as `FILE: error` (fail()) and nullptr
  /// returned, with `status` the exit code.
  static std::unique_ptr<context> load(const tls_options &o, int &status);
  ~context();
  context(const context &) = delete;
  context &operator=(const context &) = delete;
  bool verifies_clients() const { return verifies_clients_; }
  ssl_ctx_st *get() const { return ctx_; }

 private:
  context() = default;
  ssl_ctx_st *ctx_ = nullptr;
  bool verifies_clients_ = false;
};

/// What a transport call came to: `done` (the handshake finished, or bytes moved), `want_read` /
/// `want_write` (call again once the socket is readable / writable), `closed` (the peer ended its
/// side), `failed` (reason() says why; the connection is unusable).
enum class status { done, want_read, want_write, closed, failed };

struct io_result {
  size_t bytes = 0;
  status st = status::done;
};

/// One connection's bytes over its non-blocking socket: plain read()/send(), or TLS. Does not own
/// the descriptor (the caller closes it); frees the TLS state.
class transport {
 public:
  transport() = default;
  static transport plain(int fd);
  /// A TLS server connection on `fd`, handshake not started; nullopt when OpenSSL cannot make one.
  static std::optional<transport> tls(int fd, const context &c);
  transport(transport &&other) noexcept;
  transport &operator=(transport &&other) noexcept;
  transport(const transport &) = delete;
  transport &operator=(const transport &) = delete;
  ~transport();

  bool is_tls() const { return ssl_ != nullptr; }
  /// TLS and the handshake not finished: nothing may be read or written yet.
  bool handshaking() const { return ssl_ != nullptr && !established_; }
  /// One step of the handshake, as far as the socket allows without waiting.
  status handshake();
  /// Up to `n` bytes of what the peer sent: bytes > 0 with `done`, or nothing and why.
  io_result read(uint8_t *out, size_t n);
  /// Writes up to `n` bytes: bytes > 0 with `done`, or nothing and why.
  io_result write(const uint8_t *data, size_t n);
  /// TLS data already taken from the socket and not yet returned by read(): read() has bytes or a
  /// record to give without the socket becoming readable again.
  bool buffered() const;
  /// The last read() stopped because TLS needs to write first (EPOLLOUT), or the last write()
  /// because it needs to read first (EPOLLIN).
  bool read_wants_write() const { return read_wants_write_; }
  bool write_wants_read() const { return write_wants_read_; }
  /// The direction the unfinished handshake waits for.
  bool handshake_wants_write() const { return handshake_wants_write_; }
  /// Why the last call failed (OpenSSL's reason or the certificate's verify error); "" for a plain
  /// socket's error.
  const std::string &reason() const { return reason_; }
  /// After the handshake: the protocol ("TLSv1.3") and, with a verified client certificate, its
  /// subject (RFC 2253: "CN=...,O=..."), else "".
  std::string protocol() const;
  std::string peer_subject() const;
  /// Sends TLS's close_notify when the connection is sound (once, without waiting).
  void shutdown();

 private:
  void fail_with(int ssl_error, int err, const char *during);
  int fd_ = -1;
  ssl_st *ssl_ = nullptr;
  bool established_ = false, broken_ = false;
  bool read_wants_write_ = false, write_wants_read_ = false, handshake_wants_write_ = false;
  std::string reason_;
};

}  // namespace quire::cli::listen_tls
