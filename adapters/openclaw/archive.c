/* OpenClaw's archived transcripts: the line formats of a deleted session's
 * archive (its event_json lines) and of a cold-storage window (restore
 * records), read from .zst files as line sources (openclaw_archive_line) and
 * from blobs inside the database (openclaw_archive_read_mem), both through
 * the one zstd decoder (zstream.h). A cold record is scanned, never built
 * into a tree: a line of millions of small values costs its own bytes. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "json/jscan.h"
#include "lines.h"
#include "openclaw/openclaw.h"
#include "zstream.h"

#define CHUNK (128u << 10)

/* ---- a cold-storage restore record --------------------------------------- */

/* What cold_member finds of {"kind": ..., "row": {"event_json": ...}}. */
struct cold_fields {
        struct jscan_span kind;
        const char *ev_p, *ev_end; /* the event_json value's bytes */
        bool ev_string;            /* ... a JSON string (else an object) */
        bool ev_other;             /* event_json of another type */
};

static bool row_member(struct jscan *s, const struct jscan_span *key, void *u, int depth)
{
        struct cold_fields *f = u;
        const char *start;

        if (!JSCAN_KEY_IS(key, "event_json"))
                return jscan_skip(s, depth);
        start = s->p;
        if (jscan_at(s, '"') || jscan_at(s, '{')) {
                f->ev_string = *s->p == '"';
                if (!jscan_skip(s, depth))
                        return false;
                f->ev_p = start;
                f->ev_end = s->p;
                f->ev_other = false;
                return true;
        }
        f->ev_other = true;
        return jscan_skip(s, depth);
}

static bool cold_member(struct jscan *s, const struct jscan_span *key, void *u, int depth)
{
        struct cold_fields *f = u;

        if (JSCAN_KEY_IS(key, "kind"))
                return jscan_read_str(s, &f->kind, depth);
        if (JSCAN_KEY_IS(key, "row") && jscan_at(s, '{'))
                return jscan_object(s, row_member, f, depth + 1);
        return jscan_skip(s, depth);
}

/* Only kind "event" carries a transcript event, as a JSON string in
 * row.event_json (an object there is taken too). *io_buf holds the decoded
 * string between calls. */
static int cold_record(const struct source_ctx *ctx, struct parse_state *ps, const char *line,
                       size_t len, char **io_buf, size_t *io_cap, struct row_batch *out)
{
        struct jscan s = { line, line + len };
        struct cold_fields f = { 0 };
        struct jscan_span sp;
        size_t n;

        jscan_ws(&s);
        if (!jscan_at(&s, '{') || !jscan_object(&s, cold_member, &f, 0))
                return PARSE_MALFORMED;
        jscan_ws(&s);
        if (s.p != s.end)
                return PARSE_MALFORMED;
        if (!jscan_span_eq(&f.kind, "event"))
                return PARSE_OK; /* header, identity, active, index, fts: no usage */
        if (!f.ev_p || f.ev_other)
                return PARSE_MALFORMED;
        if (!f.ev_string)
                return pi_parse_line(&openclaw_flavor, ctx, ps, f.ev_p, (size_t)(f.ev_end - f.ev_p), out);
        /* the string's decoded bytes are never longer than its raw ones */
        sp = (struct jscan_span){ f.ev_p + 1, (size_t)(f.ev_end - f.ev_p) - 2 };
        if (sp.n + 1 > *io_cap) {
                char *nb = realloc(*io_buf, sp.n + 1);
                if (!nb)
                        return -ENOMEM;
                *io_buf = nb;
                *io_cap = sp.n + 1;
        }
        n = jscan_span_decode(&sp, *io_buf, *io_cap);
        (*io_buf)[n] = 0;
        return pi_parse_line(&openclaw_flavor, ctx, ps, *io_buf, n, out);
}

/* The format of one archive line; buf/cap: a scratch buffer kept by the
 * caller (free it). */
static int archive_line(const struct source_ctx *ctx, struct parse_state *ps,
                        enum oc_archive_format format, const char *line, size_t len, char **io_buf,
                        size_t *io_cap, struct row_batch *out)
{
        if (format == OC_ARCHIVE_COLD)
                return cold_record(ctx, ps, line, len, io_buf, io_cap, out);
        return pi_parse_line(&openclaw_flavor, ctx, ps, line, len, out);
}

int openclaw_archive_line(const struct source_ctx *ctx, struct parse_state *ps,
                          enum oc_archive_format format, const char *line, size_t len,
                          struct row_batch *out)
{
        char *buf = NULL;
        size_t cap = 0;
        int r = archive_line(ctx, ps, format, line, len, &buf, &cap, out);

        free(buf);
        return r;
}

/* ---- a whole archive in memory (a database blob) -------------------------- */

struct unpack {
        struct oc_archive_read *a;
        char *line;
        size_t len, cap;
        bool oversized;   /* dropping the rest of an over-long line */
        uint64_t pos;     /* decoded bytes seen */
        size_t n0;        /* out->n when the read began */
        bool stop;        /* max_rows reached at a line boundary */
        char *scratch;    /* a cold record's decoded event */
        size_t scratch_cap;
};

static int end_line(struct unpack *u)
{
        struct oc_archive_read *a = u->a;
        int r = PARSE_OK;

        if (u->oversized) {
                a->malformed++;
                u->oversized = false;
        } else if (u->len > 0) {
                r = archive_line(a->ctx, a->ps, a->format, u->line, u->len, &u->scratch,
                                 &u->scratch_cap, a->out);
                if (r < 0)
                        return r;
                if (r == PARSE_MALFORMED)
                        a->malformed++;
        }
        u->len = 0;
        a->consumed = u->pos;
        if (a->max_rows && a->out->n - u->n0 >= a->max_rows)
                u->stop = true;
        return 0;
}

/* A line longer than the daemon's own line limit is skipped and counted,
 * as in a line source. */
static int append(struct unpack *u, const char *p, size_t k)
{
        if (u->oversized || k == 0)
                return 0;
        if (u->len + k > LINES_MAX_DEFAULT) {
                u->oversized = true;
                u->len = 0;
                return 0;
        }
        if (u->len + k > u->cap) {
                size_t ncap = u->cap ? u->cap : 4096;
                char *nb;
                while (ncap < u->len + k)
                        ncap *= 2;
                if (!(nb = realloc(u->line, ncap)))
                        return -ENOMEM;
                u->line = nb;
                u->cap = ncap;
        }
        memcpy(u->line + u->len, p, k);
        u->len += k;
        return 0;
}

/* Decoded bytes: lines before a->skip were read in an earlier call. */
static int decoded(struct unpack *u, const char *p, size_t n)
{
        struct oc_archive_read *a = u->a;
        int r;

        if (a->digest_out)
                sha256_update(a->digest_out, p, n);
        while (n > 0 && !u->stop) {
                const char *nl;
                size_t k;

                if (u->pos < a->skip) {
                        k = a->skip - u->pos < n ? (size_t)(a->skip - u->pos) : n;
                        u->pos += k;
                        p += k;
                        n -= k;
                        if (u->pos == a->skip)
                                a->consumed = u->pos;
                        continue;
                }
                nl = memchr(p, '\n', n);
                k = nl ? (size_t)(nl - p) : n;
                r = append(u, p, k);
                if (r < 0)
                        return r;
                u->pos += k;
                p += k;
                n -= k;
                if (nl) {
                        u->pos++;
                        p++;
                        n--;
                        r = end_line(u);
                        if (r < 0)
                                return r;
                }
        }
        return 0;
}

/* The blob decoded chunk by chunk (never whole in memory). */
static int compressed(struct unpack *u, const void *data, size_t n)
{
        struct zstream *z = NULL;
        char *chunk = malloc(CHUNK);
        uint64_t off = 0;
        int r;

        if (!chunk)
                return -ENOMEM;
        r = n == 0 ? -EBADMSG : zstream_new_mem(data, n, &z); /* not even one frame */
        while (r == 0 && !u->stop) {
                size_t k;
                r = zstream_pread(z, chunk, CHUNK, off, &k);
                if (r < 0 || k == 0)
                        break;
                off += k;
                r = decoded(u, chunk, k);
        }
        zstream_free(z);
        free(chunk);
        return r;
}

int openclaw_archive_read_mem(struct oc_archive_read *a, bool zstd, const void *data, size_t n)
{
        struct unpack u = { .a = a, .n0 = a->out->n };
        int r;

        a->consumed = 0;
        a->malformed = 0;
        a->more = false;
        if (a->digest_in)
                sha256_update(a->digest_in, data, n);
        r = zstd ? compressed(&u, data, n) : decoded(&u, data, n);
        /* the last line needs no newline */
        if (r == 0 && !u.stop && (u.len > 0 || u.oversized))
                r = end_line(&u);
        if (r == 0 && !u.stop)
                a->consumed = u.pos;
        free(u.line);
        free(u.scratch);
        if (r < 0) {
                a->out->n = u.n0; /* nothing from a source that does not decode */
                return r;
        }
        a->more = u.stop;
        return a->more ? 1 : 0;
}
