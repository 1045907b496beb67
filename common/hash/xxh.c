/* xxh3_bulk (xxh.h): the generic XXH3, or the AVX2 one (xxh-avx2.c, built
 * with -mavx2 on x86-64) when the CPU has AVX2. */
#define XXH_INLINE_ALL
#include <xxhash.h>

#include "hash/xxh.h"

#if defined(__x86_64__)
uint64_t xxh3_bulk_avx2(const void *p, size_t n, uint64_t seed);
#endif

static uint64_t xxh3_generic(const void *p, size_t n, uint64_t seed)
{
        return XXH3_64bits_withSeed(p, n, seed);
}

static uint64_t (*pick(void))(const void *, size_t, uint64_t)
{
#if defined(__x86_64__)
        __builtin_cpu_init();
        if (__builtin_cpu_supports("avx2"))
                return xxh3_bulk_avx2;
#endif
        return xxh3_generic;
}

uint64_t xxh3_bulk(const void *p, size_t n, uint64_t seed)
{
        /* chosen once; a racing first call from two threads picks the same */
        static uint64_t (*fn)(const void *, size_t, uint64_t);
        uint64_t (*f)(const void *, size_t, uint64_t) = __atomic_load_n(&fn, __ATOMIC_RELAXED);

        if (!f) {
                f = pick();
                __atomic_store_n(&fn, f, __ATOMIC_RELAXED);
        }
        return f(p, n, seed);
}
