/* COPY text lines for the team push (team-ledger/copy.h). Column order is the
 * staging tables' in team-ledger/schema.c. */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "team-ledger/copy.h"

void team_buf_reset(struct team_buf *b)
{
        b->len = 0;
        b->oom = false;
}

void team_buf_free(struct team_buf *b)
{
        free(b->p);
        *b = (struct team_buf){0};
}

static bool reserve(struct team_buf *b, size_t n)
{
        if (b->oom)
                return false;
        if (b->len + n + 1 > b->cap) {
                size_t ncap = b->cap ? b->cap : 4096;
                while (ncap < b->len + n + 1)
                        ncap *= 2;
                char *np = realloc(b->p, ncap);
                if (!np) {
                        b->oom = true;
                        return false;
                }
                b->p = np;
                b->cap = ncap;
        }
        return true;
}

static void put(struct team_buf *b, const char *s, size_t n)
{
        if (!reserve(b, n))
                return;
        memcpy(b->p + b->len, s, n);
        b->len += n;
        b->p[b->len] = 0;
}

static void putc_(struct team_buf *b, char c)
{
        put(b, &c, 1);
}

/* Length of the valid UTF-8 sequence at s (n bytes left), 0 if invalid. */
static size_t utf8_len(const unsigned char *s, size_t n)
{
        unsigned c = s[0];
        size_t k;
        unsigned min;

        if (c < 0x80)
                return 1;
        if (c >= 0xc2 && c <= 0xdf)
                k = 2, min = 0x80;
        else if (c >= 0xe0 && c <= 0xef)
                k = 3, min = 0x800;
        else if (c >= 0xf0 && c <= 0xf4)
                k = 4, min = 0x10000;
        else
                return 0;
        if (n < k)
                return 0;
        unsigned v = c & (0x7f >> k);
        for (size_t i = 1; i < k; i++) {
                if ((s[i] & 0xc0) != 0x80)
                        return 0;
                v = (v << 6) | (s[i] & 0x3f);
        }
        if (v < min || v > 0x10ffff || (v >= 0xd800 && v <= 0xdfff))
                return 0;
        return k;
}

static void text(struct team_buf *b, const char *s)
{
        const unsigned char *p = (const unsigned char *)s;
        size_t n = strlen(s);

        for (size_t i = 0; i < n;) {
                size_t k = utf8_len(p + i, n - i);
                char esc[5];
                if (k == 0) {
                        put(b, "\xef\xbf\xbd", 3);
                        i++;
                        continue;
                }
                if (k > 1) {
                        put(b, s + i, k);
                        i += k;
                        continue;
                }
                switch (p[i]) {
                case '\\': put(b, "\\\\", 2); break;
                case '\t': put(b, "\\t", 2); break;
                case '\n': put(b, "\\n", 2); break;
                case '\r': put(b, "\\r", 2); break;
                default:
                        if (p[i] < 0x20 || p[i] == 0x7f) {
                                snprintf(esc, sizeof(esc), "\\%03o", p[i]);
                                put(b, esc, 4);
                        } else {
                                putc_(b, (char)p[i]);
                        }
                }
                i++;
        }
}

static void num(struct team_buf *b, int64_t v)
{
        char t[24];
        int n = snprintf(t, sizeof(t), "%" PRId64, v);
        put(b, t, (size_t)n);
}

static void sep(struct team_buf *b)
{
        putc_(b, '\t');
}

static void flag(struct team_buf *b, bool v)
{
        putc_(b, v ? 't' : 'f');
}

void team_uuid(const struct row_key *k, char ret[37])
{
        static const char hex[] = "0123456789abcdef";
        size_t j = 0;

        for (size_t i = 0; i < ROW_KEY_SIZE; i++) {
                if (i == 4 || i == 6 || i == 8 || i == 10)
                        ret[j++] = '-';
                ret[j++] = hex[k->b[i] >> 4];
                ret[j++] = hex[k->b[i] & 15];
        }
        ret[j] = 0;
}

static void uuid(struct team_buf *b, const struct row_key *k)
{
        char u[37];
        team_uuid(k, u);
        put(b, u, 36);
}

int team_copy_row(struct team_buf *b, const struct usage_row *r, bool repriced)
{
        const char *const strs[] = { r->tool, r->session, r->project, r->provider,
                                     r->model, r->model_alias, r->tier };
        const uint64_t toks[] = { r->input, r->output, r->cache_read, r->cache_write,
                                  r->cache_write_1h, r->reasoning, r->total };

        uuid(b, &r->key);
        sep(b), flag(b, repriced);
        for (size_t i = 0; i < sizeof(strs) / sizeof(strs[0]); i++)
                sep(b), text(b, strs[i]);
        sep(b), num(b, r->kind);
        sep(b), num(b, r->time_ms);
        sep(b), flag(b, r->flags & ROW_F_TIME_APPROX);
        sep(b), flag(b, r->flags & ROW_F_SIDECHAIN);
        sep(b), flag(b, r->flags & ROW_F_TOKENS_KNOWN);
        for (size_t i = 0; i < sizeof(toks) / sizeof(toks[0]); i++)
                sep(b), num(b, (int64_t)toks[i]); /* row-bounds.h: far below 2^63 */
        sep(b), num(b, r->cost_source != COST_NONE ? r->cost_nano : 0);
        sep(b), num(b, r->cost_source);
        sep(b), text(b, r->price_source);
        sep(b), num(b, r->n_calls);
        putc_(b, '\n');
        return b->oom ? -ENOMEM : 0;
}

int team_copy_call(struct team_buf *b, const struct row_key *call_key, const struct activity_entry *c)
{
        uuid(b, call_key);
        sep(b), uuid(b, &c->usage_key);
        sep(b), text(b, c->tool);
        sep(b), text(b, c->name);
        sep(b), num(b, c->index);
        sep(b), num(b, c->time_ms);
        putc_(b, '\n');
        return b->oom ? -ENOMEM : 0;
}
