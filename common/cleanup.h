/* The cleanup attribute and the helpers it runs, defined once for the tree:
 * a variable declared _cleanup_free_ (or _close_, _fclose_, or with
 * _cleanup_(fn)) is released when it goes out of scope. */
#pragma once

#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#define _cleanup_(f) __attribute__((cleanup(f)))

static inline void freep(void *p)
{
        free(*(void **)p);
}

static inline void closep(int *fd)
{
        if (*fd >= 0)
                close(*fd);
        *fd = -1;
}

static inline void fclosep(FILE **f)
{
        if (*f)
                fclose(*f);
        *f = NULL;
}

#define _cleanup_free_ _cleanup_(freep)
#define _cleanup_close_ _cleanup_(closep)
#define _cleanup_fclose_ _cleanup_(fclosep)
