// quire/crypto.h over libsodium. libsodium's random source is quire's own, which has none
// (sodium_randombytes.c): sodium_init() fills sodium_malloc's canary, which quire does not use,
// while quire_sodium_starting(1) holds, and every key, nonce and salt quire uses comes from its
// caller. So no target needs a random source at start (in wasm, JavaScript's).
#include "quire/crypto.h"

#include <sodium.h>

#include <cstring>
#include <string>

extern "C" void quire_sodium_starting(int on);

namespace quire::crypto {

namespace {

bool started() {
  static const bool ok = [] {
    quire_sodium_starting(1);
    const bool ok = sodium_init() >= 0;
    quire_sodium_starting(0);
    return ok;
  }();
  return ok;
}

error not_started() { return error(error_code::OUT_OF_MEMORY, "libsodium could not start"); }

}  // namespace

std::string_view cipher_name() noexcept { return "xchacha20poly1305-ietf"; }

key::~key() { sodium_memzero(bytes_.data(), bytes_.size()); }

result<key> key_from_bytes(std::span<const uint8_t> raw) {
  if (raw.size() != KEY_BYTES) {
    return error(error_code::INVALID_ARGUMENT,
                 "a key is " + std::to_string(KEY_BYTES) + " bytes; this one is " + std::to_string(raw.size()));
  }
  key k;
  std::memcpy(k.bytes().data(), raw.data(), KEY_BYTES);
  return k;
}

result<void> seal(std::span<uint8_t> out, std::span<const uint8_t> plain, std::span<const uint8_t> associated,
                  const nonce &n, const key &k) {
  if (!started()) return not_started();
  if (out.size() != plain.size() + TAG_BYTES) {
    return error(error_code::INVALID_ARGUMENT, "a sealed text is its plaintext and a " + std::to_string(TAG_BYTES) +
                                                   "-byte tag: " + std::to_string(plain.size() + TAG_BYTES) +
                                                   " bytes, not " + std::to_string(out.size()));
  }
  unsigned long long written = 0;
  crypto_aead_xchacha20poly1305_ietf_encrypt(out.data(), &written, plain.data(), plain.size(), associated.data(),
                                             associated.size(), nullptr, n.data(), k.bytes().data());
  return {};
}

result<void> open(std::span<uint8_t> out, std::span<const uint8_t> sealed, std::span<const uint8_t> associated,
                  const nonce &n, const key &k) {
  if (!started()) return not_started();
  if (sealed.size() < TAG_BYTES || out.size() != sealed.size() - TAG_BYTES) {
    return error(error_code::INVALID_ARGUMENT,
                 "a sealed text of " + std::to_string(sealed.size()) + " bytes opens into " +
                     (sealed.size() < TAG_BYTES
                          ? std::string("nothing: it is shorter than its tag")
                          : std::to_string(sealed.size() - TAG_BYTES) + " bytes, not " + std::to_string(out.size())));
  }
  unsigned long long written = 0;
  if (crypto_aead_xchacha20poly1305_ietf_decrypt(out.data(), &written, nullptr, sealed.data(), sealed.size(),
                                                 associated.data(), associated.size(), n.data(),
                                                 k.bytes().data()) != 0) {
    sodium_memzero(out.data(), out.size());
    return error(
        error_code::CORRUPT_BLOCK,
        "a sealed page does not authenticate: its bytes, its place or the key are not the ones it was sealed with");
  }
  return {};
}

result<key> key_from_passphrase(std::string_view passphrase, std::span<const uint8_t, SALT_BYTES> salt,
                                const kdf_cost &cost) {
  if (!started()) return not_started();
  if (passphrase.empty()) return error(error_code::INVALID_ARGUMENT, "an empty passphrase");
  if (cost.passes < 1 || cost.passes > 64) {
    return error(error_code::INVALID_ARGUMENT, "Argon2id passes must be 1..64, not " + std::to_string(cost.passes));
  }
  if (cost.memory_bytes < (uint64_t{8} << 10) || cost.memory_bytes > (uint64_t{1} << 30)) {
    return error(error_code::INVALID_ARGUMENT,
                 "Argon2id memory must be 8 KiB..1 GiB, not " + std::to_string(cost.memory_bytes) + " bytes");
  }
  static_assert(SALT_BYTES == crypto_pwhash_SALTBYTES);
  key k;
  if (crypto_pwhash(k.bytes().data(), KEY_BYTES, passphrase.data(), passphrase.size(), salt.data(), cost.passes,
                    static_cast<size_t>(cost.memory_bytes), crypto_pwhash_ALG_ARGON2ID13) != 0) {
    return error(error_code::OUT_OF_MEMORY,
                 "Argon2id could not have its " + std::to_string(cost.memory_bytes >> 20) + " MiB of memory");
  }
  return k;
}

std::array<uint8_t, HASH_BYTES> keyed_hash(const key &k, std::span<const uint8_t> data) {
  std::array<uint8_t, HASH_BYTES> out{};
  if (!started()) return out;
  crypto_generichash(out.data(), out.size(), data.data(), data.size(), k.bytes().data(), KEY_BYTES);
  return out;
}

std::array<uint8_t, FINGERPRINT_BYTES> fingerprint(std::span<const uint8_t> data) {
  std::array<uint8_t, FINGERPRINT_BYTES> out{};
  if (!started()) return out;
  crypto_generichash(out.data(), out.size(), data.data(), data.size(), nullptr, 0);
  return out;
}

}  // namespace quire::crypto
