/* A minimal TAP producer for the C unit tests (run through prove). */
#pragma once

#undef NDEBUG
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int tap_n, tap_failed;

static inline void tap_ok(int cond, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static inline void tap_ok(int cond, const char *fmt, ...)
{
        va_list ap;
        tap_n++;
        if (!cond)
                tap_failed++;
        printf("%s %d - ", cond ? "ok" : "not ok", tap_n);
        va_start(ap, fmt);
        vprintf(fmt, ap);
        va_end(ap);
        printf("\n");
        fflush(stdout);
}

#define ok(cond, ...) tap_ok(!!(cond), __VA_ARGS__)
#define is_int(a, b, name)                                                                 \
        do {                                                                               \
                long long _a = (long long)(a), _b = (long long)(b);                        \
                tap_ok(_a == _b, "%s", name);                                              \
                if (_a != _b)                                                              \
                        printf("#   got %lld, expected %lld (%s:%d)\n", _a, _b, __FILE__, __LINE__); \
        } while (0)
#define is_str(a, b, name)                                                                 \
        do {                                                                               \
                const char *_a = (a), *_b = (b);                                           \
                int _eq = _a && _b && strcmp(_a, _b) == 0;                                 \
                tap_ok(_eq, "%s", name);                                                   \
                if (!_eq)                                                                  \
                        printf("#   got '%s', expected '%s' (%s:%d)\n", _a ? _a : "(null)", \
                               _b ? _b : "(null)", __FILE__, __LINE__);                    \
        } while (0)

static inline int tap_done(void)
{
        printf("1..%d\n", tap_n);
        return tap_failed ? 1 : 0;
}

/* A fresh temporary directory for a test (removed by the caller if wanted). */
static inline char *tap_tmpdir(void)
{
        static char buf[256];
        const char *base = getenv("TMPDIR");
        snprintf(buf, sizeof(buf), "%s/amtest.XXXXXX", base && *base ? base : "/tmp");
        if (!mkdtemp(buf)) {
                perror("mkdtemp");
                exit(99);
        }
        return buf;
}
