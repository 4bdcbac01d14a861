// quire/crypto.h — the authenticated encryption, key derivation and keyed hashing that sealed
// .quire files are built on (docs/format-v2.md §2.2), the same on every target: libsodium's
// XChaCha20-Poly1305 (IETF), Argon2id and keyed BLAKE2b, built from Debian's source package.
//
// Core makes no random numbers: every key, nonce and salt is the caller's (the platform layer's
// random source natively and in the browser). Keys are wiped when they go.
//
//   auto k = crypto::key_from_bytes(raw32);
//   std::vector<uint8_t> sealed(plain.size() + crypto::TAG_BYTES);
//   crypto::seal(sealed, plain, identity, nonce, *k);
//   crypto::open(plain_again, sealed, identity, nonce, *k);   // CORRUPT_BLOCK if anything differs
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <span>
#include <string_view>

#include "quire/result.h"

namespace quire::crypto {

inline constexpr size_t KEY_BYTES = 32;
inline constexpr size_t TAG_BYTES = 16;
inline constexpr size_t NONCE_BYTES = 24;
inline constexpr size_t SALT_BYTES = 16;
inline constexpr size_t HASH_BYTES = 32;

/// The cipher's name, as readings and reports print it: "xchacha20poly1305-ietf".
std::string_view cipher_name() noexcept;

/// A 256-bit key, wiped when destroyed. Copyable (each copy is wiped too).
class key {
 public:
  key() = default;
  key(const key &) = default;
  key &operator=(const key &) = default;
  ~key();
  std::span<const uint8_t, KEY_BYTES> bytes() const noexcept { return bytes_; }
  std::span<uint8_t, KEY_BYTES> bytes() noexcept { return bytes_; }

 private:
  std::array<uint8_t, KEY_BYTES> bytes_{};
};

using nonce = std::array<uint8_t, NONCE_BYTES>;

/// A raw key (a key file's bytes). INVALID_ARGUMENT unless exactly KEY_BYTES long.
result<key> key_from_bytes(std::span<const uint8_t> raw);

/// Seals `plain` into `out` (`plain.size() + TAG_BYTES` bytes: ciphertext, then the tag), binding
/// `associated` (authenticated, not stored). INVALID_ARGUMENT when `out` has another size. A
/// nonce must never be used twice under one key.
result<void> seal(std::span<uint8_t> out, std::span<const uint8_t> plain, std::span<const uint8_t> associated,
                  const nonce &n, const key &k);

/// Opens what seal() made into `out` (`sealed.size() - TAG_BYTES` bytes). CORRUPT_BLOCK when it
/// does not authenticate — a changed byte, other associated data, another nonce or key — with
/// nothing written to `out` that could be taken for the plaintext (it is zeroed); INVALID_ARGUMENT
/// for sizes that do not fit.
result<void> open(std::span<uint8_t> out, std::span<const uint8_t> sealed, std::span<const uint8_t> associated,
                  const nonce &n, const key &k);

/// Argon2id's work factor: passes over memory and the memory used.
struct kdf_cost {
  uint64_t passes = 3;                         ///< 1..64
  uint64_t memory_bytes = uint64_t{64} << 20;  ///< 8 KiB..1 GiB
  bool operator==(const kdf_cost &) const = default;
};
/// The cost quire writes by default: 3 passes over 64 MiB (about 0.3 s on this machine, both targets).
inline constexpr kdf_cost DEFAULT_KDF_COST{};

/// A key from a passphrase by Argon2id (version 1.3). INVALID_ARGUMENT for a cost out of range
/// or an empty passphrase; OUT_OF_MEMORY when its memory cannot be had.
result<key> key_from_passphrase(std::string_view passphrase, std::span<const uint8_t, SALT_BYTES> salt,
                                const kdf_cost &cost = DEFAULT_KDF_COST);

/// BLAKE2b of `data` keyed with `k`, 32 bytes: a tag only a key's holder computes (the partition
/// map's keys, docs/format-v2.md).
std::array<uint8_t, HASH_BYTES> keyed_hash(const key &k, std::span<const uint8_t> data);

inline constexpr size_t FINGERPRINT_BYTES = 16;
/// BLAKE2b of `data`, unkeyed, 16 bytes: a fingerprint no one can make collide on purpose (the
/// listener's duplicate check keeps these instead of the keys, docs/listen.md).
std::array<uint8_t, FINGERPRINT_BYTES> fingerprint(std::span<const uint8_t> data);

}  // namespace quire::crypto
