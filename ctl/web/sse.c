/* One event stream (sse.h): libmicrohttpd calls the reader in the
 * connection's own thread, which may block there until the hub changes. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "web/hub.h"
#include "web/mhd.h"
#include "web/sse.h"

#define PING_MS 15000

struct web_sse {
        struct web_hub *hub;
        uint64_t seq;
        char *buf;
        size_t len, off;
};

struct web_sse *web_sse_new(struct web_hub *hub)
{
        struct web_sse *s = calloc(1, sizeof(*s));
        if (s)
                s->hub = hub;
        return s;
}

/* The next message into s->buf: 0, or END_OF_STREAM / ERROR. */
static ssize_t next_message(struct web_sse *s)
{
        char *state = NULL;
        int r = web_hub_wait(s->hub, &s->seq, PING_MS, &state);
        int n;

        free(s->buf);
        s->buf = NULL;
        s->len = s->off = 0;
        if (r == -ECANCELED)
                return MHD_CONTENT_READER_END_OF_STREAM;
        if (r < 0)
                return MHD_CONTENT_READER_END_WITH_ERROR;
        if (r == 0)
                n = asprintf(&s->buf, ": ping\n\n");
        else /* JSON text is one line: the data needs no splitting */
                n = asprintf(&s->buf, "event: state\nid: %llu\ndata: %s\n\n", (unsigned long long)s->seq, state);
        free(state);
        if (n < 0) {
                s->buf = NULL;
                return MHD_CONTENT_READER_END_WITH_ERROR;
        }
        s->len = (size_t)n;
        return 0;
}

ssize_t web_sse_read(void *cls, uint64_t pos, char *buf, size_t max)
{
        struct web_sse *s = cls;
        size_t n;

        (void)pos;
        if (s->off == s->len) {
                ssize_t r = next_message(s);
                if (r != 0)
                        return r;
        }
        n = s->len - s->off < max ? s->len - s->off : max;
        memcpy(buf, s->buf + s->off, n);
        s->off += n;
        return (ssize_t)n;
}

void web_sse_free(void *cls)
{
        struct web_sse *s = cls;
        if (s) {
                free(s->buf);
                free(s);
        }
}
