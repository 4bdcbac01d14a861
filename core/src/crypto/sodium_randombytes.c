/* libsodium's random source, replaced for quire (built into quire_sodium in place of
 * randombytes/randombytes.c; cmake/deps.cmake). Core makes no random numbers: every key, nonce and
 * salt is its caller's (quire/crypto.h). libsodium's own file would, in wasm, reach for JavaScript's
 * crypto at sodium_init() whatever implementation is set (and throw in an ES module, where it
 * looks for `require`). The only bytes libsodium asks for here are sodium_malloc's canary, filled
 * while quire_sodium_starting(1) holds; any other request is a bug and aborts, so a key can never
 * come out of here silently predictable. */
#include <stdlib.h>
#include <string.h>

#include "sodium/randombytes.h"

static int starting;

void quire_sodium_starting(int on) { starting = on; }

static void no_random(void) { abort(); }

size_t randombytes_seedbytes(void) { return randombytes_SEEDBYTES; }

void randombytes_buf(void *const buf, const size_t size) {
  if (!starting) no_random();
  memset(buf, 0, size); /* sodium_malloc's canary, which quire does not use */
}

void randombytes_buf_deterministic(void *const buf, const size_t size,
                                   const unsigned char seed[randombytes_SEEDBYTES]) {
  (void)buf;
  (void)size;
  (void)seed;
  no_random();
}

uint32_t randombytes_random(void) {
  no_random();
  return 0;
}

uint32_t randombytes_uniform(const uint32_t upper_bound) {
  (void)upper_bound;
  no_random();
  return 0;
}

void randombytes_stir(void) {}

int randombytes_close(void) { return 0; }

int randombytes_set_implementation(randombytes_implementation *impl) {
  (void)impl;
  return -1;
}

const char *randombytes_implementation_name(void) { return "none: quire's keys, nonces and salts are its caller's"; }

void randombytes(unsigned char *const buf, const unsigned long long buf_len) {
  (void)buf;
  (void)buf_len;
  no_random();
}
