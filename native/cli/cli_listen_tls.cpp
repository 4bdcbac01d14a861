// TLS for `quire listen` through Debian's OpenSSL 3 (cli_listen_tls.h; docs/listen.md, "TLS").
#include "cli_listen_tls.h"

#include <openssl/bio.h>
#include <openssl/err.h>
#include <openssl/pem.h>
#include <openssl/ssl.h>
#include <openssl/x509.h>
#include <openssl/x509_vfy.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <climits>
#include <cstring>
#include <utility>

namespace quire::cli::listen_tls {
namespace {

constexpr char COMMAND[] = "listen";
constexpr long MAX_CERT_LIST_BYTES = 32 * 1024;

// The reason of the first error OpenSSL queued ("no start line", "peer did not return a
// certificate"), and the queue emptied, so the next call's SSL_get_error() reads only its own.
std::string openssl_reason() {
  const unsigned long e = ERR_get_error();
  ERR_clear_error();
  if (e == 0) return "no reason given by OpenSSL";
  const char *r = ERR_reason_error_string(e);
  return r ? std::string(r) : "OpenSSL error " + std::to_string(e);
}

// A key file with a passphrase is refused rather than asked for on the terminal: the listener
// runs unattended.
int no_passphrase(char *, int, int, void *) { return -1; }

// A regular file that can be opened for reading; else printed (fail()) and false.
bool readable(const std::string &path, int &status) {
  struct stat st;
  if (::stat(path.c_str(), &st) != 0) {
    const int err = errno;
    status = fail(path, quire::error(err == ENOENT ? error_code::FILE_NOT_FOUND : error_code::IO_ERROR,
                                     std::string("cannot read: ") + std::strerror(err)));
    return false;
  }
  if (!S_ISREG(st.st_mode)) {
    status = fail(path, quire::error(error_code::NOT_A_FILE, "not a regular file"));
    return false;
  }
  if (::access(path.c_str(), R_OK) != 0) {
    const int err = errno;
    status = fail(path, quire::error(error_code::IO_ERROR, std::string("cannot read: ") + std::strerror(err)));
    return false;
  }
  return true;
}

int refuse(const std::string &path, const std::string &what) {
  return fail(path, quire::error(error_code::INVALID_ARGUMENT, what));
}

}  // namespace

tls_options::tls_options(arguments &args)
    : cert(args.option("--tls-cert")), key(args.option("--tls-key")), ca(args.option("--tls-ca")) {
  if (auto t = args.number("--tls-handshake-timeout-ms")) {
    handshake_timeout_ms = *t;
    timeout_given = true;
  }
}

int tls_options::check() const {
  if (cert.has_value() != key.has_value()) return usage_error(COMMAND, "--tls-cert and --tls-key go together");
  if (ca && !cert) return usage_error(COMMAND, "--tls-ca needs --tls-cert and --tls-key");
  if (timeout_given && !cert) return usage_error(COMMAND, "--tls-handshake-timeout-ms needs --tls-cert and --tls-key");
  if (handshake_timeout_ms == 0 || handshake_timeout_ms > 3600000)
    return usage_error(COMMAND, "--tls-handshake-timeout-ms is 1..3600000");
  return EXIT_OK;
}

std::unique_ptr<context> context::load(const tls_options &o, int &status) {
  status = EXIT_OK;
  if (!readable(*o.cert, status) || !readable(*o.key, status) || (o.ca && !readable(*o.ca, status))) return nullptr;
  std::unique_ptr<context> c(new context());
  ERR_clear_error();
  c->ctx_ = SSL_CTX_new(TLS_server_method());
  if (!c->ctx_) {
    status = fail(COMMAND, quire::error(error_code::OUT_OF_MEMORY, "OpenSSL: " + openssl_reason()));
    return nullptr;
  }
  SSL_CTX *ctx = c->ctx_;
  SSL_CTX_set_min_proto_version(ctx, TLS1_2_VERSION);
  // No renegotiation (a client could make the server redo its handshake's work at will); a peer
  // that closes without close_notify reads as a close, as a plain socket's end does.
  SSL_CTX_set_options(ctx, SSL_OP_NO_RENEGOTIATION | SSL_OP_IGNORE_UNEXPECTED_EOF);
  // Small idle connections (the read and write buffers freed between records), and writes that
  // may stop part way and be resumed from a moved buffer (the ACK string grows as commits land).
  SSL_CTX_set_mode(ctx, SSL_MODE_RELEASE_BUFFERS | SSL_MODE_ENABLE_PARTIAL_WRITE | SSL_MODE_ACCEPT_MOVING_WRITE_BUFFER);
  // No server-side session cache (it would grow with the peers); TLS session tickets still let
  // a client resume. The context id lets a resumed session keep its verified client.
  SSL_CTX_set_session_cache_mode(ctx, SSL_SESS_CACHE_OFF);
  // A client's certificate chain is held whole while it is checked: 32 kB (OpenSSL's default is
  // 100 kB) bounds what each handshaking connection may make the listener hold.
  SSL_CTX_set_max_cert_list(ctx, MAX_CERT_LIST_BYTES);
  static const unsigned char id_context[] = "quire listen";
  SSL_CTX_set_session_id_context(ctx, id_context, sizeof id_context - 1);
  SSL_CTX_set_default_passwd_cb(ctx, no_passphrase);

  if (SSL_CTX_use_certificate_chain_file(ctx, o.cert->c_str()) != 1) {
    status = refuse(*o.cert, "not a PEM certificate (chain) OpenSSL can use: " + openssl_reason());
    return nullptr;
  }
  EVP_PKEY *pkey = nullptr;
  if (BIO *b = BIO_new_file(o.key->c_str(), "r")) {
    pkey = PEM_read_bio_PrivateKey(b, nullptr, no_passphrase, nullptr);
    BIO_free(b);
  }
  if (!pkey) {
    status = refuse(*o.key, "not an unencrypted PEM private key: " + openssl_reason());
    return nullptr;
  }
  const bool key_taken = SSL_CTX_use_PrivateKey(ctx, pkey) == 1 && SSL_CTX_check_private_key(ctx) == 1;
  EVP_PKEY_free(pkey);
  if (!key_taken) {
    ERR_clear_error();
    status = refuse(*o.key, "the key does not match the certificate " + *o.cert);
    return nullptr;
  }
  if (o.ca) {
    if (SSL_CTX_load_verify_locations(ctx, o.ca->c_str(), nullptr) != 1) {
      status = refuse(*o.ca, "no PEM CA certificate OpenSSL can use: " + openssl_reason());
      return nullptr;
    }
    // The CA's name goes in the certificate request, so a client holding several picks this one.
    if (STACK_OF(X509_NAME) *names = SSL_load_client_CA_file(o.ca->c_str())) SSL_CTX_set_client_CA_list(ctx, names);
    SSL_CTX_set_verify(ctx, SSL_VERIFY_PEER | SSL_VERIFY_FAIL_IF_NO_PEER_CERT, nullptr);
    c->verifies_clients_ = true;
  }
  ERR_clear_error();
  return c;
}

context::~context() { SSL_CTX_free(ctx_); }

transport transport::plain(int fd) {
  transport t;
  t.fd_ = fd;
  return t;
}

std::optional<transport> transport::tls(int fd, const context &c) {
  ERR_clear_error();
  SSL *ssl = SSL_new(c.get());
  if (!ssl || SSL_set_fd(ssl, fd) != 1) {
    SSL_free(ssl);
    ERR_clear_error();
    return std::nullopt;
  }
  SSL_set_accept_state(ssl);
  transport t;
  t.fd_ = fd;
  t.ssl_ = ssl;
  return t;
}

transport::transport(transport &&other) noexcept { *this = std::move(other); }

transport &transport::operator=(transport &&other) noexcept {
  if (this != &other) {
    SSL_free(ssl_);
    fd_ = std::exchange(other.fd_, -1);
    ssl_ = std::exchange(other.ssl_, nullptr);
    established_ = other.established_;
    broken_ = other.broken_;
    read_wants_write_ = other.read_wants_write_;
    write_wants_read_ = other.write_wants_read_;
    handshake_wants_write_ = other.handshake_wants_write_;
    reason_ = std::move(other.reason_);
  }
  return *this;
}

transport::~transport() { SSL_free(ssl_); }

void transport::fail_with(int ssl_error, int err, const char *during) {
  broken_ = true;
  const long verify = SSL_get_verify_result(ssl_);
  if (verify != X509_V_OK) {
    reason_ = std::string("client certificate refused: ") + X509_verify_cert_error_string(verify);
    ERR_clear_error();
  } else if (ssl_error == SSL_ERROR_SYSCALL && ERR_peek_error() == 0) {
    reason_ = err != 0 ? std::string(std::strerror(err)) : std::string("the peer closed the connection");
  } else if (ssl_error == SSL_ERROR_ZERO_RETURN) {
    reason_ = "the peer closed the connection";
  } else {
    reason_ = openssl_reason();
  }
  reason_ = std::string(during) + ": " + reason_;
}

status transport::handshake() {
  if (!ssl_ || established_) return status::done;
  if (broken_) return status::failed;
  ERR_clear_error();
  errno = 0;
  const int r = SSL_do_handshake(ssl_);
  const int err = errno;
  if (r == 1) {
    established_ = true;
    handshake_wants_write_ = false;
    return status::done;
  }
  const int e = SSL_get_error(ssl_, r);
  if (e == SSL_ERROR_WANT_READ || e == SSL_ERROR_WANT_WRITE) {
    handshake_wants_write_ = e == SSL_ERROR_WANT_WRITE;
    return handshake_wants_write_ ? status::want_write : status::want_read;
  }
  fail_with(e, err, "TLS handshake failed");
  return status::failed;
}

io_result transport::read(uint8_t *out, size_t n) {
  if (!ssl_) {
    for (;;) {
      const ssize_t r = ::read(fd_, out, n);
      if (r > 0) return {static_cast<size_t>(r), status::done};
      if (r == 0) return {0, status::closed};
      if (errno == EINTR) continue;
      if (errno == EAGAIN || errno == EWOULDBLOCK) return {0, status::want_read};
      return {0, status::failed};
    }
  }
  read_wants_write_ = false;
  if (broken_ || !established_) return {0, status::failed};
  ERR_clear_error();
  errno = 0;
  const int r = SSL_read(ssl_, out, static_cast<int>(n > INT_MAX ? INT_MAX : n));
  const int err = errno;
  if (r > 0) return {static_cast<size_t>(r), status::done};
  const int e = SSL_get_error(ssl_, r);
  switch (e) {
    case SSL_ERROR_WANT_READ: return {0, status::want_read};
    case SSL_ERROR_WANT_WRITE: read_wants_write_ = true; return {0, status::want_write};
    case SSL_ERROR_ZERO_RETURN: return {0, status::closed};
    case SSL_ERROR_SYSCALL:  // reset or gone, as a plain socket's error: not logged
      broken_ = true;
      ERR_clear_error();
      return {0, status::failed};
    default: fail_with(e, err, "TLS read failed"); return {0, status::failed};
  }
}

io_result transport::write(const uint8_t *data, size_t n) {
  if (!ssl_) {
    for (;;) {
      const ssize_t r = ::send(fd_, data, n, MSG_NOSIGNAL);
      if (r > 0) return {static_cast<size_t>(r), status::done};
      if (r < 0 && errno == EINTR) continue;
      if (r < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) return {0, status::want_write};
      return {0, status::failed};
    }
  }
  write_wants_read_ = false;
  if (broken_ || !established_) return {0, status::failed};
  ERR_clear_error();
  errno = 0;
  const int r = SSL_write(ssl_, data, static_cast<int>(n > INT_MAX ? INT_MAX : n));
  const int err = errno;
  if (r > 0) return {static_cast<size_t>(r), status::done};
  const int e = SSL_get_error(ssl_, r);
  switch (e) {
    case SSL_ERROR_WANT_WRITE: return {0, status::want_write};
    case SSL_ERROR_WANT_READ: write_wants_read_ = true; return {0, status::want_read};
    case SSL_ERROR_SYSCALL:  // reset or gone, as a plain socket's error: not logged
      broken_ = true;
      ERR_clear_error();
      return {0, status::failed};
    default: fail_with(e, err, "TLS write failed"); return {0, status::failed};
  }
}

bool transport::buffered() const { return ssl_ && established_ && !broken_ && SSL_has_pending(ssl_) == 1; }

std::string transport::protocol() const { return ssl_ ? SSL_get_version(ssl_) : ""; }

std::string transport::peer_subject() const {
  if (!ssl_ || !established_ || SSL_get_verify_result(ssl_) != X509_V_OK) return "";
  X509 *cert = SSL_get0_peer_certificate(ssl_);
  if (!cert) return "";
  BIO *b = BIO_new(BIO_s_mem());
  if (!b) return "";
  std::string out;
  if (X509_NAME_print_ex(b, X509_get_subject_name(cert), 0, XN_FLAG_RFC2253) >= 0) {
    char *p = nullptr;
    const long len = BIO_get_mem_data(b, &p);
    if (p && len > 0) out.assign(p, static_cast<size_t>(len));
  }
  BIO_free(b);
  ERR_clear_error();
  return out;
}

void transport::shutdown() {
  if (!ssl_ || !established_ || broken_) return;
  ERR_clear_error();
  SSL_shutdown(ssl_);
  ERR_clear_error();
  broken_ = true;
}

}  // namespace quire::cli::listen_tls
