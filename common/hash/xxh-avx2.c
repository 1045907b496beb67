/* The AVX2 build of XXH3 for xxh3_bulk (xxh.c picks it at run time); the
 * Makefile compiles this file with -mavx2 on x86-64, and only there does it
 * hold anything. */
#include <stddef.h>
#include <stdint.h>

#if defined(__x86_64__) && defined(__AVX2__)
#define XXH_INLINE_ALL
#include <xxhash.h>

uint64_t xxh3_bulk_avx2(const void *p, size_t n, uint64_t seed);

uint64_t xxh3_bulk_avx2(const void *p, size_t n, uint64_t seed)
{
        return XXH3_64bits_withSeed(p, n, seed);
}
#elif defined(__x86_64__)
#error "common/hash/xxh-avx2.c must be built with -mavx2 on x86-64 (Makefile)"
#endif
