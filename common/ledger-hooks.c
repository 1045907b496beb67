/* The ledger's test hooks: a positive number from the environment in place
 * of a built-in size (ledger-internal.h names them). */
#include <errno.h>
#include <stdlib.h>

#include "ledger-internal.h"

size_t ledger_test_hook(const char *name, size_t dflt)
{
        const char *s = getenv(name);
        char *end;
        unsigned long v;

        if (!s || !*s)
                return dflt;
        errno = 0;
        v = strtoul(s, &end, 10);
        return errno || *end || !v ? dflt : (size_t)v;
}
