/* SHA-256 (FIPS 180-4), for checking the digests harnesses store beside
 * archived transcripts (OpenClaw's archive_sha256). No crypto library needed. */
#pragma once

#include <stddef.h>
#include <stdint.h>

#define SHA256_SIZE 32

struct sha256 {
        uint32_t h[8];
        uint64_t bytes;
        uint8_t block[64];
        size_t fill;
};

void sha256_init(struct sha256 *s);
void sha256_update(struct sha256 *s, const void *p, size_t n);
void sha256_final(struct sha256 *s, uint8_t ret_digest[SHA256_SIZE]);

/* Lower-case hex of a digest into a 65-byte buffer. */
void sha256_hex(const uint8_t digest[SHA256_SIZE], char ret_hex[2 * SHA256_SIZE + 1]);
