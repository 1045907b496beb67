/* bytescan (bytescan.h): portable vector code, and the same code built for
 * AVX2 in a function of its own, chosen once by the CPU. */
#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#include "json/bytescan.h"

typedef signed char bytes16 __attribute__((vector_size(16)));

static const char *tail(const char *p, const char *end, char a, char b1, char b2)
{
        for (; end - p > 1; p++)
                if (p[0] == a && (p[1] == b1 || p[1] == b2))
                        return p;
        return NULL;
}

static const char *pair16(const char *p, const char *end, char a, char b1, char b2)
{
        for (; end - p > 16; p += 16) {
                bytes16 x, y, m;
                uint64_t w[2];

                memcpy(&x, p, 16);
                memcpy(&y, p + 1, 16);
                m = (x == a) & ((y == b1) | (y == b2));
                memcpy(w, &m, 16);
                if (w[0] | w[1])
                        break;
        }
        return tail(p, end, a, b1, b2);
}

#if defined(__x86_64__)
#include <immintrin.h>

/* Three of the needle's bytes, away from its ends (JSON needles start and
 * end with a quote, which text is full of) and apart, compared at 32
 * positions at once; the whole needle only where all three match. */
__attribute__((target("avx2"))) static const char *find32(const char *p, size_t n, const char *needle,
                                                          size_t m)
{
        size_t i1 = m >= 4 ? 1 : 0, i2 = m >= 4 ? m - 2 : m - 1, i3 = (i1 + i2) / 2, k = 0;
        const __m256i f = _mm256_set1_epi8(needle[i1]), l = _mm256_set1_epi8(needle[i2]),
                      c = _mm256_set1_epi8(needle[i3]);

        for (; k + i2 + 32 <= n && k + m <= n; k += 32) {
                __m256i a = _mm256_loadu_si256((const __m256i *)(p + k + i1));
                __m256i b = _mm256_loadu_si256((const __m256i *)(p + k + i2));
                __m256i x = _mm256_loadu_si256((const __m256i *)(p + k + i3));
                unsigned bits = (unsigned)_mm256_movemask_epi8(_mm256_and_si256(
                        _mm256_and_si256(_mm256_cmpeq_epi8(a, f), _mm256_cmpeq_epi8(b, l)), _mm256_cmpeq_epi8(x, c)));
                while (bits) {
                        size_t j = k + (size_t)__builtin_ctz(bits);
                        if (j + m <= n && memcmp(p + j, needle, m) == 0)
                                return p + j;
                        bits &= bits - 1;
                }
        }
        return k < n ? memmem(p + k, n - k, needle, m) : NULL;
}

/* The candidates among 32 positions: a at p[i], b1 or b2 at p[i + 1]. */
__attribute__((target("avx2"))) static inline __m256i pair_mask(const char *p, __m256i va, __m256i v1,
                                                                __m256i v2)
{
        __m256i x = _mm256_loadu_si256((const __m256i *)p);
        __m256i y = _mm256_loadu_si256((const __m256i *)(p + 1));
        return _mm256_and_si256(_mm256_cmpeq_epi8(x, va),
                                _mm256_or_si256(_mm256_cmpeq_epi8(y, v1), _mm256_cmpeq_epi8(y, v2)));
}

/* 128 positions a step, one branch for all four blocks (most text has no
 * candidate in them); the block with one is found after. */
__attribute__((target("avx2"))) static const char *pair32(const char *p, const char *end, char a,
                                                          char b1, char b2)
{
        const __m256i va = _mm256_set1_epi8(a), v1 = _mm256_set1_epi8(b1), v2 = _mm256_set1_epi8(b2);

        for (; end - p > 128; p += 128) {
                __m256i m0 = pair_mask(p, va, v1, v2), m1 = pair_mask(p + 32, va, v1, v2);
                __m256i m2 = pair_mask(p + 64, va, v1, v2), m3 = pair_mask(p + 96, va, v1, v2);
                __m256i any = _mm256_or_si256(_mm256_or_si256(m0, m1), _mm256_or_si256(m2, m3));
                if (!_mm256_testz_si256(any, any))
                        break;
        }
        for (; end - p > 32; p += 32) {
                unsigned bits = (unsigned)_mm256_movemask_epi8(pair_mask(p, va, v1, v2));
                if (bits)
                        return p + __builtin_ctz(bits);
        }
        return tail(p, end, a, b1, b2);
}
#endif

static bool have_avx2(void)
{
#if defined(__x86_64__)
        static int avx2 = -1; /* the same answer from every thread */
        int has = __atomic_load_n(&avx2, __ATOMIC_RELAXED);
        if (has < 0) {
                __builtin_cpu_init();
                has = __builtin_cpu_supports("avx2") ? 1 : 0;
                __atomic_store_n(&avx2, has, __ATOMIC_RELAXED);
        }
        return has;
#else
        return false;
#endif
}

const char *bytescan_pair(const char *p, const char *end, char a, char b1, char b2)
{
#if defined(__x86_64__)
        if (have_avx2())
                return pair32(p, end, a, b1, b2);
#endif
        return pair16(p, end, a, b1, b2);
}

const char *bytescan_find(const char *p, size_t n, const char *needle, size_t m)
{
        if (m == 0 || m > n)
                return m == 0 ? p : NULL;
#if defined(__x86_64__)
        if (have_avx2())
                return find32(p, n, needle, m);
#endif
        return memmem(p, n, needle, m);
}
