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

        if (!s || !*s)
                return dflt;
        errno = 0;
        v = strtoull(s, &end, 10);
        return errno || *end || v < min || v > max ? dflt : v;
}
