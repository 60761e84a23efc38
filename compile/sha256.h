/* compile/sha256.h: SHA-256 (FIPS 180-4) for cache keys and cache-entry integrity. Internal. */
#ifndef BG_COMPILE_SHA256_H
#define BG_COMPILE_SHA256_H

#include <stddef.h>
#include <stdint.h>

typedef struct bg_sha256 {
  uint32_t h[8];
  uint64_t len;        /* bytes hashed so far */
  uint8_t buf[64];
  size_t nbuf;
} bg_sha256_ctx;

void bg_sha256_init(bg_sha256_ctx *s);
void bg_sha256_update(bg_sha256_ctx *s, const void *data, size_t n);
void bg_sha256_final(bg_sha256_ctx *s, uint8_t out[32]);
/* One-shot digest. */
void bg_sha256(const void *data, size_t n, uint8_t out[32]);
/* Lower-case hex of a digest: 64 characters plus NUL. */
void bg_sha256_hex(const uint8_t d[32], char out[65]);

#endif
