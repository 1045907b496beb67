/* Test hooks from the environment (testhook.h). */
#include <errno.h>
#include <stdlib.h>

#include "testhook.h"

unsigned long long test_hook_number(const char *name, unsigned long long min, unsigned long long max,
                                    unsigned long long dflt)
{
        const char *s = getenv(name);
        char *end;
        unsigned long long v;

        /* strtoull alone would take " 7", "+7" and "-3" (wrapped to a huge number) */
        if (!s || *s < '0' || *s > '9')
                return dflt;
        errno = 0;
        v = strtoull(s, &end, 10);
        return errno || *end || v < min || v > max ? dflt : v;
}
