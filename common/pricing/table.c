/* Parsing price tables: the built-in data/prices.conf and the user's
 * override in the same format, merged so a partial override entry keeps
 * the built-in figures it does not name. Errors name the line. Linear in
 * the lines: a model's entries (of one size tier) are found through a hash
 * index, and an override line without dates (it changes every entry of its
 * model and tier known so far) is folded into that record's
 * last-value-per-figure record and applied once at the end. */
#include <errno.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "pricing/pricing.h"

#define MAX_TOKENS_PER_LINE 32
#define PICO_MAX 1000000000000LL /* $1M per 1M tokens: more is a typo */

/* What the undated override lines of one model said: per figure the value
 * of the last line that set it and that line's sequence number. An entry
 * created at sequence s takes every figure whose last setter came after s
 * (the last line that sets a figure is the one that decides it). */
struct undated {
        struct price_card base, lng;
        char vendor[PRICE_VENDOR_MAX];
        uint64_t long_above;
        char source[PRICE_SOURCE_MAX];
        uint32_t seq_card[2][PC_COUNT], seq_vendor, seq_long_above, seq_source;
        uint32_t seq_any; /* the last undated line of the model: it marks entries overridden */
};

/* One model's entries of one size tier (prompt_above: a Qwen tier is its
 * own record, so a duplicate, an override and its inherited figures are
 * the tier's). */
struct model_ix {
        size_t first, last;   /* its entries in table order, chained by parser.next */
        struct undated *und;  /* NULL: no undated override line yet */
};

struct parser {
        struct price_table *t;
        bool is_override;
        char *err;
        size_t errcap;
        /* the index, for this parse only */
        size_t n0;            /* entries in t before this parse */
        struct model_ix *models;
        size_t n_models, cap_models;
        uint32_t *slots;      /* open addressing: model index + 1, 0 empty */
        size_t n_slots;       /* a power of two, at least twice n_models */
        size_t *next;         /* per entry: the next entry of its model, SIZE_MAX at the end */
        uint32_t *seq;        /* per entry: the undated lines counted when it was made */
        size_t cap_per_entry;
        uint32_t n_undated;
};

#define NO_ENTRY SIZE_MAX

static int fail(struct parser *p, const char *fmt, ...)
{
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(p->err, p->errcap, fmt, ap);
        va_end(ap);
        return -EINVAL;
}

/* "12.5" -> 12500000 with scale_digits 6. Plain decimals only. */
static int parse_decimal(const char *s, int scale_digits, int64_t max, int64_t *ret)
{
        int64_t whole = 0, frac = 0;
        int fd = 0;
        const char *c = s;

        if (!*c)
                return -EINVAL;
        for (; *c >= '0' && *c <= '9'; c++) {
                whole = whole * 10 + (*c - '0');
                if (whole > max)
                        return -ERANGE;
        }
        if (c == s && *c != '.')
                return -EINVAL;
        if (*c == '.') {
                c++;
                if (!(*c >= '0' && *c <= '9'))
                        return -EINVAL;
                for (; *c >= '0' && *c <= '9'; c++) {
                        if (++fd > scale_digits)
                                return -ERANGE; /* finer than we keep: not silently rounded */
                        frac = frac * 10 + (*c - '0');
                }
        }
        if (*c)
                return -EINVAL;
        for (int i = fd; i < scale_digits; i++)
                frac *= 10;
        for (int i = 0; i < scale_digits; i++)
                whole *= 10;
        if (whole + frac > max)
                return -ERANGE;
        *ret = whole + frac;
        return 0;
}

static int parse_date(const char *s, int64_t *ret_ms)
{
        struct tm tm = {0};
        int y, m, d, n = 0;

        if (strlen(s) != 10 || sscanf(s, "%4d-%2d-%2d%n", &y, &m, &d, &n) != 3 || n != 10 ||
            m < 1 || m > 12 || d < 1 || d > 31 || y < 1970 || y > 9999)
                return -EINVAL;
        tm.tm_year = y - 1900;
        tm.tm_mon = m - 1;
        tm.tm_mday = d;
        time_t t = timegm(&tm);
        if (tm.tm_mday != d) /* 2026-02-31 */
                return -EINVAL;
        *ret_ms = (int64_t)t * 1000;
        return 0;
}

static int parse_price(struct parser *p, const char *key, const char *v, int64_t *ret)
{
        if (strcmp(v, "-") == 0) {
                *ret = PRICE_NONE;
                return 0;
        }
        if (parse_decimal(v, 6, PICO_MAX, ret) < 0)
                return fail(p, "%s=%s is not a price in USD per 1M tokens (up to 6 decimals)", key, v);
        return 0;
}

/* price card keys -> (card, class) */
static const struct {
        const char *key;
        bool lng;
        enum price_class c;
} card_keys[] = {
        {"in", false, PC_INPUT}, {"out", false, PC_OUTPUT}, {"cache_read", false, PC_CACHE_READ},
        {"cw5m", false, PC_CW5M}, {"cw1h", false, PC_CW1H}, {"long_in", true, PC_INPUT},
        {"long_out", true, PC_OUTPUT}, {"long_cache_read", true, PC_CACHE_READ},
        {"long_cw5m", true, PC_CW5M}, {"long_cw1h", true, PC_CW1H},
};
#define N_CARD_KEYS (sizeof(card_keys) / sizeof(card_keys[0]))

/* What one price line says: every field optional, "set" marks given ones. */
struct price_line {
        struct price_entry e;
        bool set_card[2][PC_COUNT], set_vendor, set_long_above, set_source;
        bool has_from, has_until;
};

static void card_none(struct price_card *c)
{
        for (int i = 0; i < PC_COUNT; i++)
                c->pico[i] = PRICE_NONE;
}

static int read_price_line(struct parser *p, char **tok, size_t n, struct price_line *pl)
{
        char region[ROW_TIER_MAX];

        memset(pl, 0, sizeof(*pl));
        card_none(&pl->e.base);
        card_none(&pl->e.lng);
        pl->e.from_ms = INT64_MIN;
        pl->e.until_ms = INT64_MAX;
        if (n < 2)
                return fail(p, "price needs a model id");
        if (price_normalise_id(tok[1], pl->e.model, sizeof(pl->e.model), region, sizeof(region)) < 0)
                return fail(p, "bad model id '%s'", tok[1]);
        for (size_t i = 2; i < n; i++) {
                char *eq = strchr(tok[i], '='), *k = tok[i], *v;
                size_t j;
                int64_t x;

                if (!eq)
                        return fail(p, "'%s' is not key=value", tok[i]);
                *eq = 0;
                v = eq + 1;
                for (j = 0; j < N_CARD_KEYS; j++)
                        if (strcmp(k, card_keys[j].key) == 0)
                                break;
                if (j < N_CARD_KEYS) {
                        if (parse_price(p, k, v, &x) < 0)
                                return -EINVAL;
                        (card_keys[j].lng ? &pl->e.lng : &pl->e.base)->pico[card_keys[j].c] = x;
                        pl->set_card[card_keys[j].lng][card_keys[j].c] = true;
                } else if (strcmp(k, "vendor") == 0) {
                        if (!*v || strlen(v) >= PRICE_VENDOR_MAX)
                                return fail(p, "bad vendor '%s'", v);
                        snprintf(pl->e.vendor, sizeof(pl->e.vendor), "%s", v);
                        pl->set_vendor = true;
                } else if (strcmp(k, "long_above") == 0) {
                        if (parse_decimal(v, 0, 100000000000LL, &x) < 0)
                                return fail(p, "long_above=%s is not a token count", v);
                        pl->e.long_above = (uint64_t)x;
                        pl->set_long_above = true;
                } else if (strcmp(k, "prompt_above") == 0) {
                        if (parse_decimal(v, 0, 100000000000LL, &x) < 0 || x == 0)
                                return fail(p, "prompt_above=%s is not a token count", v);
                        pl->e.prompt_above = (uint64_t)x;
                } else if (strcmp(k, "from") == 0 || strcmp(k, "until") == 0) {
                        bool from = k[0] == 'f';
                        if (parse_date(v, from ? &pl->e.from_ms : &pl->e.until_ms) < 0)
                                return fail(p, "%s=%s is not a date (YYYY-MM-DD)", k, v);
                        *(from ? &pl->has_from : &pl->has_until) = true;
                } else if (strcmp(k, "source") == 0) {
                        snprintf(pl->e.source, sizeof(pl->e.source), "%s", v);
                        pl->set_source = true;
                } else {
                        return fail(p, "unknown key '%s' (see agentmeterd(8), PRICES)", k);
                }
        }
        if (pl->e.from_ms >= pl->e.until_ms)
                return fail(p, "from= is not before until=");
        return 0;
}

static int grow(void **v, size_t *cap, size_t n, size_t size)
{
        if (n < *cap)
                return 0;
        size_t nc = *cap ? *cap * 2 : 32;
        void *nv = realloc(*v, nc * size);
        if (!nv)
                return -ENOMEM;
        *v = nv;
        *cap = nc;
        return 0;
}

static void apply_line(struct price_entry *e, const struct price_line *pl)
{
        for (int c = 0; c < 2; c++)
                for (int i = 0; i < PC_COUNT; i++)
                        if (pl->set_card[c][i])
                                (c ? &e->lng : &e->base)->pico[i] = (c ? &pl->e.lng : &pl->e.base)->pico[i];
        if (pl->set_vendor)
                memcpy(e->vendor, pl->e.vendor, sizeof(e->vendor));
        if (pl->set_long_above)
                e->long_above = pl->e.long_above;
        if (pl->set_source)
                memcpy(e->source, pl->e.source, sizeof(e->source));
}

static bool card_complete(const struct price_entry *e)
{
        return e->base.pico[PC_INPUT] != PRICE_NONE && e->base.pico[PC_OUTPUT] != PRICE_NONE &&
               (!e->long_above || (e->lng.pico[PC_INPUT] != PRICE_NONE &&
                                   e->lng.pico[PC_OUTPUT] != PRICE_NONE));
}

static size_t slot_of(const struct parser *p, const char *model, uint64_t above)
{
        return (size_t)(hash64(model, strlen(model)) ^ (above * 0x9E3779B97F4A7C15ull)) & (p->n_slots - 1);
}

/* The index record of model's size tier above, or NULL. */
static struct model_ix *model_find(const struct parser *p, const char *model, uint64_t above)
{
        if (!p->n_slots)
                return NULL;
        for (size_t i = slot_of(p, model, above);; i = (i + 1) & (p->n_slots - 1)) {
                uint32_t k = p->slots[i];
                if (!k)
                        return NULL;
                const struct price_entry *e = &p->t->entries[p->models[k - 1].first];
                if (e->prompt_above == above && strcmp(e->model, model) == 0)
                        return &p->models[k - 1];
        }
}

static int slots_grow(struct parser *p)
{
        size_t n = p->n_slots ? p->n_slots * 2 : 256;
        uint32_t *v = calloc(n, sizeof(*v));

        if (!v)
                return -ENOMEM;
        free(p->slots);
        p->slots = v;
        p->n_slots = n;
        for (size_t m = 0; m < p->n_models; m++) {
                const struct price_entry *e = &p->t->entries[p->models[m].first];
                size_t i = slot_of(p, e->model, e->prompt_above);
                while (p->slots[i])
                        i = (i + 1) & (n - 1);
                p->slots[i] = (uint32_t)(m + 1);
        }
        return 0;
}

/* Chains entry i (already in t) into its model's record. */
static int index_entry(struct parser *p, size_t i)
{
        struct model_ix *m = model_find(p, p->t->entries[i].model, p->t->entries[i].prompt_above);

        if (i >= p->cap_per_entry) {
                size_t nc = p->cap_per_entry ? p->cap_per_entry * 2 : 256;
                while (nc <= i)
                        nc *= 2;
                size_t *nn = realloc(p->next, nc * sizeof(*nn));
                if (!nn)
                        return -ENOMEM;
                p->next = nn;
                uint32_t *ns = realloc(p->seq, nc * sizeof(*ns));
                if (!ns)
                        return -ENOMEM;
                p->seq = ns;
                p->cap_per_entry = nc;
        }
        p->next[i] = NO_ENTRY;
        p->seq[i] = p->n_undated;
        if (m) {
                p->next[m->last] = i;
                m->last = i;
                return 0;
        }
        if ((p->n_models + 1) * 2 > p->n_slots && slots_grow(p) < 0)
                return -ENOMEM;
        if (p->n_models >= UINT32_MAX - 1 ||
            grow((void **)&p->models, &p->cap_models, p->n_models, sizeof(*p->models)) < 0)
                return -ENOMEM;
        p->models[p->n_models] = (struct model_ix){.first = i, .last = i};
        size_t s = slot_of(p, p->t->entries[i].model, p->t->entries[i].prompt_above);
        while (p->slots[s])
                s = (s + 1) & (p->n_slots - 1);
        p->slots[s] = (uint32_t)++p->n_models;
        return 0;
}

static void index_free(struct parser *p)
{
        for (size_t m = 0; m < p->n_models; m++)
                free(p->models[m].und);
        free(p->models);
        free(p->slots);
        free(p->next);
        free(p->seq);
}

static int add_entry(struct parser *p, const struct price_entry *e)
{
        struct price_table *t = p->t;
        if (grow((void **)&t->entries, &t->cap_entries, t->n_entries, sizeof(*e)) < 0)
                return -ENOMEM;
        t->entries[t->n_entries++] = *e;
        return index_entry(p, t->n_entries - 1);
}

/* An undated override line for a model with entries: remembered, applied
 * to the entries it reaches by apply_undated at the end. */
static int note_undated(struct parser *p, struct model_ix *m, const struct price_line *pl)
{
        struct undated *u = m->und;

        if (!u && !(u = m->und = calloc(1, sizeof(*u))))
                return -ENOMEM;
        uint32_t seq = ++p->n_undated;
        for (int c = 0; c < 2; c++)
                for (int i = 0; i < PC_COUNT; i++)
                        if (pl->set_card[c][i]) {
                                (c ? &u->lng : &u->base)->pico[i] = (c ? &pl->e.lng : &pl->e.base)->pico[i];
                                u->seq_card[c][i] = seq;
                        }
        if (pl->set_vendor) {
                memcpy(u->vendor, pl->e.vendor, sizeof(u->vendor));
                u->seq_vendor = seq;
        }
        if (pl->set_long_above) {
                u->long_above = pl->e.long_above;
                u->seq_long_above = seq;
        }
        if (pl->set_source) {
                memcpy(u->source, pl->e.source, sizeof(u->source));
                u->seq_source = seq;
        }
        u->seq_any = seq;
        return 0;
}

/* Every entry gets the figures of the undated lines of its model that came
 * after it was made, as if each line had been applied in its turn. */
static void apply_undated(struct parser *p)
{
        for (size_t k = 0; k < p->n_models; k++) {
                const struct undated *u = p->models[k].und;
                if (!u)
                        continue;
                for (size_t i = p->models[k].first; i != NO_ENTRY; i = p->next[i]) {
                        struct price_entry *e = &p->t->entries[i];
                        uint32_t s = p->seq[i];
                        if (u->seq_any <= s)
                                continue;
                        for (int c = 0; c < 2; c++)
                                for (int j = 0; j < PC_COUNT; j++)
                                        if (u->seq_card[c][j] > s)
                                                (c ? &e->lng : &e->base)->pico[j] =
                                                        (c ? &u->lng : &u->base)->pico[j];
                        if (u->seq_vendor > s)
                                memcpy(e->vendor, u->vendor, sizeof(e->vendor));
                        if (u->seq_long_above > s)
                                e->long_above = u->long_above;
                        if (u->seq_source > s)
                                memcpy(e->source, u->source, sizeof(e->source));
                        e->overridden = true;
                }
        }
}

static int do_price(struct parser *p, char **tok, size_t n, unsigned line)
{
        struct price_table *t = p->t;
        struct price_line pl;
        struct model_ix *m;
        int r = read_price_line(p, tok, n, &pl);

        if (r < 0)
                return r;
        pl.e.line = line;
        m = model_find(p, pl.e.model, pl.e.prompt_above);
        if (!p->is_override) {
                for (size_t i = m ? m->first : NO_ENTRY; i != NO_ENTRY; i = p->next[i])
                        if (t->entries[i].from_ms < pl.e.until_ms && pl.e.from_ms < t->entries[i].until_ms)
                                return fail(p, "%s is already priced for these dates (line %u)",
                                            pl.e.model, t->entries[i].line);
                if (!pl.set_vendor || !pl.set_source)
                        return fail(p, "a built-in entry needs vendor= and source=");
                if (!card_complete(&pl.e))
                        return fail(p, "%s needs in= and out= (and long_in=/long_out= with long_above=)",
                                    pl.e.model);
                return add_entry(p, &pl.e);
        }
        /* override: without dates, change every entry of the model's size
         * tier (prompt_above=, none: the base entry) known so far in place;
         * with dates, a new entry for that span, starting from the figures
         * in effect at its start (it wins over the built-in ones there) */
        if (!pl.has_from && !pl.has_until && m)
                return note_undated(p, m, &pl);
        struct price_entry e = {0};
        card_none(&e.base);
        card_none(&e.lng);
        /* the base: an entry from before this parse that no override line has
         * changed yet (entries made here are overridden; an undated line
         * changes every entry of its model) */
        for (size_t i = m && !m->und ? m->first : NO_ENTRY; i != NO_ENTRY && i < p->n0; i = p->next[i]) {
                const struct price_entry *b = &t->entries[i];
                if (!b->overridden && b->from_ms <= pl.e.from_ms && pl.e.from_ms < b->until_ms)
                        e = *b;
        }
        memcpy(e.model, pl.e.model, sizeof(e.model));
        e.prompt_above = pl.e.prompt_above;
        e.from_ms = pl.e.from_ms;
        e.until_ms = pl.e.until_ms;
        e.line = line;
        apply_line(&e, &pl);
        if (!pl.set_source)
                snprintf(e.source, sizeof(e.source), "override line %u", line);
        e.overridden = true;
        if (!card_complete(&e))
                return fail(p, "%s is not in the built-in table: it needs in= and out=", e.model);
        return add_entry(p, &e);
}

static int do_mult(struct parser *p, char **tok, size_t n, unsigned line)
{
        struct price_table *t = p->t;
        struct price_mult m = {.from_ms = INT64_MIN, .until_ms = INT64_MAX};
        int64_t x;

        (void)line;
        if (n < 5)
                return fail(p, "mult needs VENDOR MODEL|* TIER FACTOR");
        if (strlen(tok[1]) >= sizeof(m.vendor) || strlen(tok[2]) >= sizeof(m.model) ||
            !tok[3][0] || strlen(tok[3]) >= sizeof(m.tier) || strchr(tok[3], '+'))
                return fail(p, "mult: vendor, model or tier too long (or a '+' in the tier)");
        snprintf(m.vendor, sizeof(m.vendor), "%s", tok[1]);
        snprintf(m.tier, sizeof(m.tier), "%s", tok[3]);
        if (strcmp(tok[2], "*") == 0)
                snprintf(m.model, sizeof(m.model), "*");
        else if (price_normalise_id(tok[2], m.model, sizeof(m.model), (char[ROW_TIER_MAX]){0},
                                    ROW_TIER_MAX) < 0)
                return fail(p, "bad model id '%s'", tok[2]);
        if (parse_decimal(tok[4], 3, 1000000, &x) < 0)
                return fail(p, "factor '%s' is not a number (up to 3 decimals, at most 1000)", tok[4]);
        m.permille = (uint32_t)x;
        for (size_t i = 5; i < n; i++) {
                char *eq = strchr(tok[i], '='), *v;
                if (!eq)
                        return fail(p, "'%s' is not key=value", tok[i]);
                *eq = 0;
                v = eq + 1;
                if (strcmp(tok[i], "from") == 0 || strcmp(tok[i], "until") == 0) {
                        bool from = tok[i][0] == 'f';
                        if (parse_date(v, from ? &m.from_ms : &m.until_ms) < 0)
                                return fail(p, "%s=%s is not a date (YYYY-MM-DD)", tok[i], v);
                } else if (strcmp(tok[i], "max_prompt") == 0) {
                        if (parse_decimal(v, 0, 100000000000LL, &x) < 0 || x == 0)
                                return fail(p, "max_prompt=%s is not a token count", v);
                        m.max_prompt = (uint64_t)x;
                } else if (strcmp(tok[i], "source") == 0) {
                        snprintf(m.source, sizeof(m.source), "%s", v);
                } else {
                        return fail(p, "unknown key '%s' (see agentmeterd(8), PRICES)", tok[i]);
                }
        }
        if (m.from_ms >= m.until_ms)
                return fail(p, "from= is not before until=");
        if (!p->is_override && !m.source[0])
                return fail(p, "a built-in multiplier needs source=");
        m.overridden = p->is_override;
        if (grow((void **)&t->mults, &t->cap_mults, t->n_mults, sizeof(m)) < 0)
                return -ENOMEM;
        t->mults[t->n_mults++] = m;
        return 0;
}

static int parse_line(struct parser *p, char *s, unsigned line)
{
        char *tok[MAX_TOKENS_PER_LINE];
        size_t n = 0;

        for (char *save = NULL, *w = strtok_r(s, " \t\r", &save); w; w = strtok_r(NULL, " \t\r", &save)) {
                if (w[0] == '#')
                        break;
                if (n == MAX_TOKENS_PER_LINE)
                        return fail(p, "too many fields");
                tok[n++] = w;
        }
        if (n == 0)
                return 0;
        if (strcmp(tok[0], "price") == 0)
                return do_price(p, tok, n, line);
        if (strcmp(tok[0], "mult") == 0)
                return do_mult(p, tok, n, line);
        if (strcmp(tok[0], "checked") == 0) {
                int64_t ms;
                if (p->is_override)
                        return fail(p, "'checked' belongs to the built-in table only");
                if (n != 2 || parse_date(tok[1], &ms) < 0)
                        return fail(p, "checked needs one date (YYYY-MM-DD)");
                snprintf(p->t->checked, sizeof(p->t->checked), "%s", tok[1]);
                snprintf(p->t->label, sizeof(p->t->label), "table-%s", tok[1]);
                return 0;
        }
        return fail(p, "unknown entry '%.40s' (expected price, mult or checked)", tok[0]);
}

int price_table_parse(struct price_table *t, const char *text, size_t len, bool is_override,
                      unsigned *ret_line, char *ret_err, size_t errcap)
{
        struct parser p = {.t = t, .is_override = is_override, .err = ret_err, .errcap = errcap,
                           .n0 = t->n_entries};
        unsigned line = 0;
        size_t pos = 0;
        int r = 0;

        if (errcap)
                ret_err[0] = 0;
        for (size_t i = 0; i < t->n_entries && r == 0; i++)
                r = index_entry(&p, i);
        while (r == 0 && pos < len) {
                const char *nl = memchr(text + pos, '\n', len - pos);
                size_t n = nl ? (size_t)(nl - (text + pos)) : len - pos;
                char buf[2048];

                line++;
                if (n >= sizeof(buf) || memchr(text + pos, 0, n))
                        r = fail(&p, "line too long or not text");
                else {
                        memcpy(buf, text + pos, n);
                        buf[n] = 0;
                        r = parse_line(&p, buf, line);
                }
                if (r < 0)
                        *ret_line = line;
                pos += n + (nl ? 1 : 0);
        }
        if (r == 0)
                apply_undated(&p);
        index_free(&p);
        if (r == 0 && !is_override && !t->checked[0]) {
                *ret_line = line;
                return fail(&p, "the built-in table has no 'checked' date");
        }
        return r;
}
