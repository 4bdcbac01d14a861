// quire::crypto on both targets: the XChaCha20-Poly1305 test vector of draft-irtf-cfrg-xchacha
// (A.3.1), a sealed text that refuses every change (a byte, the associated data, the nonce, the
// key, a cut), Argon2id's determinism and bounds, keyed BLAKE2b's dependence on its key.
#include <catch2/catch.hpp>

#include <string>
#include <vector>

#include "quire/crypto.h"

using namespace quire;

namespace {

std::vector<uint8_t> hex(std::string_view h) {
  std::vector<uint8_t> out;
  auto nib = [](char c) { return c <= '9' ? c - '0' : c - 'a' + 10; };
  for (size_t i = 0; i + 1 < h.size(); i += 2) out.push_back(static_cast<uint8_t>(nib(h[i]) << 4 | nib(h[i + 1])));
  return out;
}

std::span<const uint8_t> bytes_of(std::string_view s) {
  return {reinterpret_cast<const uint8_t *>(s.data()), s.size()};
}

crypto::key test_key() {
  auto k = crypto::key_from_bytes(hex("808182838485868788898a8b8c8d8e8f909192939495969798999a9b9c9d9e9f"));
  REQUIRE(k);
  return *k;
}

crypto::nonce test_nonce() {
  crypto::nonce n{};
  auto b = hex("404142434445464748494a4b4c4d4e4f5051525354555657");
  std::copy(b.begin(), b.end(), n.begin());
  return n;
}

const std::string_view PLAIN =
    "Ladies and Gentlemen of the class of '99: If I could offer you only one tip for the future, sunscreen would be "
    "it.";

}  // namespace

TEST_CASE("crypto: XChaCha20-Poly1305 seals the draft's test vector to its bytes", "[crypto]") {
  CHECK(crypto::cipher_name() == "xchacha20poly1305-ietf");
  const auto ad = hex("50515253c0c1c2c3c4c5c6c7");
  std::vector<uint8_t> sealed(PLAIN.size() + crypto::TAG_BYTES);
  REQUIRE(crypto::seal(sealed, bytes_of(PLAIN), ad, test_nonce(), test_key()));
  const auto want =
      hex("bd6d179d3e83d43b9576579493c0e939572a1700252bfaccbed2902c21396cbb731c7f1b0b4aa6440bf3a82f4eda7e39ae64c6708c54"
          "c216cb"
          "96b72e1213b4522f8c9ba40db5d945b11b69b982c1bb9e3f3fac2bc369488f76b2383565d3fff921f9664c97637da9768812f615c68b"
          "13b52e"
          "c0875924c1c7987947deafd8780acf49");
  CHECK(sealed == want);
  std::vector<uint8_t> back(PLAIN.size());
  REQUIRE(crypto::open(back, sealed, ad, test_nonce(), test_key()));
  CHECK(std::string(back.begin(), back.end()) == PLAIN);
}

TEST_CASE("crypto: a sealed text opens only as it was sealed", "[crypto]") {
  const auto ad = hex("0102030405");
  std::vector<uint8_t> sealed(PLAIN.size() + crypto::TAG_BYTES), out(PLAIN.size());
  REQUIRE(crypto::seal(sealed, bytes_of(PLAIN), ad, test_nonce(), test_key()));
  auto code = [&](std::span<const uint8_t> s, std::span<const uint8_t> a, const crypto::nonce &n,
                  const crypto::key &k) {
    std::vector<uint8_t> o(s.size() >= crypto::TAG_BYTES ? s.size() - crypto::TAG_BYTES : 0, 0xAA);
    auto r = crypto::open(o, s, a, n, k);
    if (!r) {
      // Nothing that could be taken for the plaintext is left.
      for (uint8_t b : o) REQUIRE(b == 0);
      return r.error().code;
    }
    return error_code::OK;
  };
  CHECK(code(sealed, ad, test_nonce(), test_key()) == error_code::OK);
  for (size_t i = 0; i < sealed.size(); i += 7) {
    auto bad = sealed;
    bad[i] ^= 0x01;
    CHECK(code(bad, ad, test_nonce(), test_key()) == error_code::CORRUPT_BLOCK);
  }
  auto other_ad = ad;
  other_ad[4] = 6;
  CHECK(code(sealed, other_ad, test_nonce(), test_key()) == error_code::CORRUPT_BLOCK);
  CHECK(code(sealed, {}, test_nonce(), test_key()) == error_code::CORRUPT_BLOCK);
  auto other_nonce = test_nonce();
  other_nonce[23] ^= 0x80;
  CHECK(code(sealed, ad, other_nonce, test_key()) == error_code::CORRUPT_BLOCK);
  auto other_key = test_key();
  other_key.bytes()[0] ^= 0x01;
  CHECK(code(sealed, ad, test_nonce(), other_key) == error_code::CORRUPT_BLOCK);
  CHECK(code(std::span(sealed).first(sealed.size() - 1), ad, test_nonce(), test_key()) == error_code::CORRUPT_BLOCK);
  CHECK(code(std::span(sealed).first(crypto::TAG_BYTES - 1), ad, test_nonce(), test_key()) ==
        error_code::INVALID_ARGUMENT);
  // Sizes that do not fit are the caller's mistake.
  std::vector<uint8_t> small(3);
  CHECK(crypto::seal(small, bytes_of(PLAIN), ad, test_nonce(), test_key()).error().code ==
        error_code::INVALID_ARGUMENT);
  CHECK(crypto::open(small, sealed, ad, test_nonce(), test_key()).error().code == error_code::INVALID_ARGUMENT);
  // An empty plaintext still has its tag.
  std::vector<uint8_t> tag_only(crypto::TAG_BYTES);
  REQUIRE(crypto::seal(tag_only, {}, ad, test_nonce(), test_key()));
  std::vector<uint8_t> none;
  CHECK(crypto::open(none, tag_only, ad, test_nonce(), test_key()));
}

TEST_CASE("crypto: keys from bytes and from passphrases", "[crypto]") {
  CHECK(crypto::key_from_bytes(hex("0011")).error().code == error_code::INVALID_ARGUMENT);
  CHECK(crypto::key_from_bytes(std::vector<uint8_t>(33)).error().code == error_code::INVALID_ARGUMENT);
  std::array<uint8_t, crypto::SALT_BYTES> salt{}, salt2{};
  salt2[0] = 1;
  const crypto::kdf_cost cheap{.passes = 1, .memory_bytes = uint64_t{1} << 20};
  auto a = crypto::key_from_passphrase("correct horse battery staple", salt, cheap);
  auto b = crypto::key_from_passphrase("correct horse battery staple", salt, cheap);
  auto c = crypto::key_from_passphrase("correct horse battery staple", salt2, cheap);
  auto d = crypto::key_from_passphrase("correct horse battery stapler", salt, cheap);
  auto e = crypto::key_from_passphrase("correct horse battery staple", salt, {.passes = 2, .memory_bytes = 1 << 20});
  REQUIRE((a && b && c && d && e));
  auto same = [](const crypto::key &x, const crypto::key &y) {
    return std::equal(x.bytes().begin(), x.bytes().end(), y.bytes().begin());
  };
  CHECK(same(*a, *b));
  CHECK_FALSE(same(*a, *c));
  CHECK_FALSE(same(*a, *d));
  CHECK_FALSE(same(*a, *e));
  CHECK(crypto::key_from_passphrase("", salt, cheap).error().code == error_code::INVALID_ARGUMENT);
  CHECK(crypto::key_from_passphrase("x", salt, {.passes = 0, .memory_bytes = 1 << 20}).error().code ==
        error_code::INVALID_ARGUMENT);
  CHECK(crypto::key_from_passphrase("x", salt, {.passes = 1, .memory_bytes = 4096}).error().code ==
        error_code::INVALID_ARGUMENT);
  CHECK(crypto::key_from_passphrase("x", salt, {.passes = 1, .memory_bytes = uint64_t{2} << 30}).error().code ==
        error_code::INVALID_ARGUMENT);
}

TEST_CASE("crypto: a keyed hash depends on its key and its bytes", "[crypto]") {
  auto k1 = test_key(), k2 = test_key();
  k2.bytes()[31] ^= 0x01;
  const auto h1 = crypto::keyed_hash(k1, bytes_of("clinic-7"));
  CHECK(h1 == crypto::keyed_hash(k1, bytes_of("clinic-7")));
  CHECK(h1 != crypto::keyed_hash(k2, bytes_of("clinic-7")));
  CHECK(h1 != crypto::keyed_hash(k1, bytes_of("clinic-8")));
  CHECK(h1 != std::array<uint8_t, crypto::HASH_BYTES>{});
}
