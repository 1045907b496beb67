/* XXH3 for bulk bytes at the speed the CPU allows: the consumed-bytes chain
 * and whole-document hashes run over every byte a scan reads, and the
 * generic build of xxHash uses SSE2 only (13 GB/s here; AVX2 57 GB/s). The
 * AVX2 variant is picked at run time when the CPU has it; both give the
 * same hashes (stored in checkpoints). */
#pragma once

#include <stddef.h>
#include <stdint.h>

/* XXH3_64bits_withSeed(p, n, seed) */
uint64_t xxh3_bulk(const void *p, size_t n, uint64_t seed);
