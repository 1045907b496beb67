/* OpenClaw's archived transcripts (deleted-session archives and cold-storage
 * windows, as database blobs or .zst files): decoded as a stream, split into
 * lines, each line (or a cold record's event) fed to the shared pi parser. */
#include <errno.h>
#include <json-c/json.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <zstd.h>

#include "openclaw.h"

#define LINE_CAP  (64u << 20) /* longer lines are skipped and counted (OpenClaw caps events at 4 MiB) */
#define CHUNK     (128u << 10)

struct unpack {
        struct oc_archive_read *a;
        ZSTD_DCtx *z;
        size_t last_hint; /* ZSTD_decompressStream's last return: 0 = frame complete */
        bool fed;         /* any compressed input at all */
        char *line;
        size_t len, cap;
        bool oversized;   /* dropping the rest of an over-long line */
        uint64_t pos;     /* decoded bytes seen */
        size_t n0;        /* out->n when the read began */
        bool stop;        /* max_rows reached at a line boundary */
        json_tokener *tok;
        uint8_t *out;     /* CHUNK bytes of decoded output */
};

/* A cold-storage restore record: only kind "event" carries a transcript
 * event, as a JSON string in row.event_json (an object there is taken too). */
static int cold_record(struct unpack *u, const char *line, size_t len)
{
        struct oc_archive_read *a = u->a;
        json_object *rec, *kind, *row, *ev;
        int r = PARSE_OK;

        if (!u->tok && !(u->tok = json_tokener_new_ex(64)))
                return -ENOMEM;
        json_tokener_reset(u->tok);
        rec = json_tokener_parse_ex(u->tok, line, (int)len);
        if (!rec || json_tokener_get_parse_end(u->tok) != len ||
            !json_object_is_type(rec, json_type_object)) {
                json_object_put(rec);
                return PARSE_MALFORMED;
        }
        if (!json_object_object_get_ex(rec, "kind", &kind) || !json_object_is_type(kind, json_type_string) ||
            strcmp(json_object_get_string(kind), "event") != 0) {
                json_object_put(rec); /* header, identity, active, index, fts: no usage */
                return PARSE_OK;
        }
        if (!json_object_object_get_ex(rec, "row", &row) || !json_object_object_get_ex(row, "event_json", &ev))
                r = PARSE_MALFORMED;
        else if (json_object_is_type(ev, json_type_string))
                r = pi_parse_line(&openclaw_flavor, a->ctx, a->ps, json_object_get_string(ev),
                                  (size_t)json_object_get_string_len(ev), a->out);
        else if (json_object_is_type(ev, json_type_object))
                r = pi_parse_entry(&openclaw_flavor, a->ctx, a->ps, ev, a->out);
        else
                r = PARSE_MALFORMED;
        json_object_put(rec);
        return r;
}

static int end_line(struct unpack *u)
{
        struct oc_archive_read *a = u->a;
        int r = PARSE_OK;

        if (u->oversized) {
                a->malformed++;
                u->oversized = false;
        } else if (u->len > 0) {
                if (a->format == OC_ARCHIVE_COLD)
                        r = cold_record(u, u->line, u->len);
                else
                        r = pi_parse_line(&openclaw_flavor, a->ctx, a->ps, u->line, u->len, a->out);
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

static int append(struct unpack *u, const uint8_t *p, size_t k)
{
        if (u->oversized || k == 0)
                return 0;
        if (u->len + k > LINE_CAP) {
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
static int decoded(struct unpack *u, const uint8_t *p, size_t n)
{
        struct oc_archive_read *a = u->a;
        int r;

        if (a->digest_out)
                sha256_update(a->digest_out, p, n);
        while (n > 0 && !u->stop) {
                const uint8_t *nl;
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

/* Compressed bytes (possibly several frames, skippable frames included). */
static int compressed(struct unpack *u, const void *p, size_t n)
{
        ZSTD_inBuffer in = { p, n, 0 };
        int r;

        if (u->a->digest_in)
                sha256_update(u->a->digest_in, p, n);
        if (n)
                u->fed = true;
        while (!u->stop) {
                ZSTD_outBuffer o = { u->out, CHUNK, 0 };
                size_t k = ZSTD_decompressStream(u->z, &o, &in);
                if (ZSTD_isError(k))
                        return -EBADMSG;
                u->last_hint = k;
                r = decoded(u, u->out, o.pos);
                if (r < 0)
                        return r;
                if (in.pos == in.size && o.pos < o.size)
                        break;
        }
        return 0;
}

static int unpack_begin(struct unpack *u, struct oc_archive_read *a, bool zstd)
{
        memset(u, 0, sizeof(*u));
        u->a = a;
        u->n0 = a->out->n;
        a->consumed = 0;
        a->malformed = 0;
        a->more = false;
        if (zstd && (!(u->z = ZSTD_createDCtx()) || !(u->out = malloc(CHUNK))))
                return -ENOMEM;
        return 0;
}

/* The end of the input: a truncated or absent frame is an error; the last
 * line needs no newline. */
static int unpack_end(struct unpack *u, bool zstd, int r)
{
        struct oc_archive_read *a = u->a;

        if (r == 0 && !u->stop && zstd && (!u->fed || u->last_hint != 0))
                r = -EBADMSG;
        if (r == 0 && !u->stop && (u->len > 0 || u->oversized))
                r = end_line(u);
        if (r == 0 && !u->stop)
                a->consumed = u->pos;
        ZSTD_freeDCtx(u->z);
        free(u->out);
        free(u->line);
        if (u->tok)
                json_tokener_free(u->tok);
        if (r < 0) {
                a->out->n = u->n0; /* nothing from a source that does not decode */
                return r;
        }
        a->more = u->stop;
        return a->more ? 1 : 0;
}

int openclaw_archive_read_mem(struct oc_archive_read *a, bool zstd, const void *data, size_t n)
{
        struct unpack u;
        int r = unpack_begin(&u, a, zstd);

        if (r == 0) {
                if (zstd) {
                        r = compressed(&u, data, n);
                } else {
                        if (a->digest_in)
                                sha256_update(a->digest_in, data, n);
                        r = decoded(&u, data, n);
                }
        }
        return unpack_end(&u, zstd, r);
}

int openclaw_archive_read_fd(struct oc_archive_read *a, int fd)
{
        struct unpack u;
        uint8_t *buf = malloc(CHUNK);
        int r = buf ? unpack_begin(&u, a, true) : -ENOMEM;

        if (!buf)
                return r;
        while (r == 0 && !u.stop) {
                ssize_t k = read(fd, buf, CHUNK);
                if (k < 0 && errno == EINTR)
                        continue;
                if (k < 0) {
                        r = -errno;
                        break;
                }
                if (k == 0)
                        break;
                r = compressed(&u, buf, (size_t)k);
        }
        free(buf);
        return unpack_end(&u, true, r);
}
