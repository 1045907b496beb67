/* Report builder: groups rollups, sessions, activity (or, for the vendor
 * cost mode, usage rows) into report entries, days and months in the
 * asker's zone. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "report/build.h"
#include "timefmt.h"

/* ---- grouping: entries plus an open-addressing index on (key, harness) -- */

struct cache_slot;

struct agg {
        struct report_entry *v;
        size_t n, cap;
        uint32_t *slot; /* index + 1; 0 = empty */
        size_t nslot;
        size_t last;    /* the entry found last (consecutive rollups share it) */
        /* a cache hit read without copying (report_view_cached): the cached
         * entries lie under these, and one is copied into v, from[] its
         * place there, when a rollup adds to it; -1 for a new one */
        const struct cache_slot *base;
        int32_t *from;
};

static long base_find(const struct cache_slot *s, const char *key, const char *group, const char *party);
static const struct report_entry *report_cache_slot_entry(const struct cache_slot *s, size_t i);

static uint64_t group_hash(const char *key, const char *group, const char *party)
{
        uint64_t h = 1469598103934665603ULL;
        for (const char *s = key; *s; s++)
                h = (h ^ (unsigned char)*s) * 1099511628211ULL;
        h = (h ^ 0xff) * 1099511628211ULL;
        for (const char *s = group; *s; s++)
                h = (h ^ (unsigned char)*s) * 1099511628211ULL;
        h = (h ^ 0xfe) * 1099511628211ULL;
        for (const char *s = party; *s; s++)
                h = (h ^ (unsigned char)*s) * 1099511628211ULL;
        return h;
}

static bool same_group(const struct report_entry *e, const char *key, const char *group,
                       const char *party)
{
        return strcmp(e->key, key) == 0 && strcmp(e->group, group) == 0 && strcmp(e->party, party) == 0;
}

static void index_put(struct agg *a, size_t i)
{
        size_t m = a->nslot - 1, s = group_hash(a->v[i].key, a->v[i].group, a->v[i].party) & m;
        while (a->slot[s])
                s = (s + 1) & m;
        a->slot[s] = (uint32_t)(i + 1);
}

/* Room for one more entry (the index not grown). */
static int grow_entries(struct agg *a)
{
        if (a->n == a->cap) {
                size_t ncap = a->cap ? a->cap * 2 : 32;
                struct report_entry *nv = reallocarray(a->v, ncap, sizeof(*nv));
                if (!nv)
                        return -ENOMEM;
                a->v = nv;
                if (a->base) {
                        int32_t *nf = reallocarray(a->from, ncap, sizeof(*nf));
                        if (!nf)
                                return -ENOMEM;
                        a->from = nf;
                }
                a->cap = ncap;
        }
        return 0;
}

static int grow(struct agg *a)
{
        if (grow_entries(a) < 0)
                return -ENOMEM;
        if (2 * (a->n + 1) > a->nslot) {
                size_t nslot = a->nslot ? a->nslot * 2 : 64;
                uint32_t *ns = calloc(nslot, sizeof(*ns));
                if (!ns || a->n >= UINT32_MAX - 1) {
                        free(ns);
                        return -ENOMEM;
                }
                free(a->slot);
                a->slot = ns;
                a->nslot = nslot;
                for (size_t i = 0; i < a->n; i++)
                        index_put(a, i);
        }
        return 0;
}

/* The entry of (key, group), created empty; its harness is set to the
 * group (callers with another group fill in harness themselves). */
/* snprintf(dst, cap, "%s", src) without printf: reports copy several
 * strings per group */
static void copy_str(char *dst, size_t cap, const char *src)
{
        row_set_str(dst, cap, src, strlen(src));
}

/* snprintf(out, cap, "%s%s%s", a, sep, b), without printf (per rollup) */
static void join(char *out, size_t cap, const char *a, const char *sep, const char *b)
{
        size_t n = 0;
        for (const char *part[3] = { a, sep, b }, **p = part; p < part + 3; p++) {
                size_t k = strlen(*p);
                if (k > cap - 1 - n)
                        k = cap - 1 - n;
                memcpy(out + n, *p, k);
                n += k;
        }
        out[n] = 0;
}

static struct report_entry *agg_get(struct agg *a, const char *key, const char *group,
                                    const char *party)
{
        size_t m, s;

        if (a->last < a->n && same_group(&a->v[a->last], key, group, party))
                return &a->v[a->last];
        if (a->nslot) {
                m = a->nslot - 1;
                for (s = group_hash(key, group, party) & m; a->slot[s]; s = (s + 1) & m)
                        if (same_group(&a->v[a->slot[s] - 1], key, group, party))
                                return &a->v[a->last = a->slot[s] - 1];
        }
        if (grow(a) < 0)
                return NULL;
        struct report_entry *e = &a->v[a->n];
        if (a->base) {
                long b = base_find(a->base, key, group, party);
                a->from[a->n] = (int32_t)b;
                if (b >= 0) { /* the cached entry, as a copy of them all would have it */
                        memcpy(e, report_cache_slot_entry(a->base, (size_t)b), sizeof(*e));
                        index_put(a, a->n);
                        a->last = a->n;
                        return &a->v[a->n++];
                }
        }
        memset(e, 0, sizeof(*e));
        copy_str(e->key, sizeof(e->key), key);
        copy_str(e->group, sizeof(e->group), group);
        copy_str(e->party, sizeof(e->party), party);
        copy_str(e->harness, sizeof(e->harness), group);
        index_put(a, a->n);
        a->last = a->n;
        return &a->v[a->n++];
}

/* Room for this many more entries after a cached report's are loaded
 * (the window's new days and models), before the index is rebuilt. */
#define AGG_SPARE 64

/* Index slots for n entries and AGG_SPARE more (grow() keeps 2 (n+1) <= nslot). */
static size_t index_size(size_t n)
{
        size_t nslot = 64;
        while (nslot < 2 * (n + AGG_SPARE + 1))
                nslot *= 2;
        return nslot;
}

/* dst (empty) becomes a copy of n entries and of their index (nslot slots,
 * made by index_put over them in this order): two copies, no entry hashed
 * again, room for AGG_SPARE more. */
static int agg_load(struct agg *dst, const struct report_entry *v, size_t n, const uint32_t *slot,
                    size_t nslot)
{
        dst->v = reallocarray(NULL, n + AGG_SPARE, sizeof(*v));
        dst->slot = reallocarray(NULL, nslot, sizeof(*slot));
        if (!dst->v || !dst->slot)
                return -ENOMEM;
        if (n)
                memcpy(dst->v, v, n * sizeof(*v));
        memcpy(dst->slot, slot, nslot * sizeof(*slot));
        dst->n = n;
        dst->cap = n + AGG_SPARE;
        dst->nslot = nslot;
        dst->last = 0;
        return 0;
}

/* ---- one run ------------------------------------------------------------ */

struct run {
        const struct report_query *q;
        const struct report_source *src;
        struct ledger *l; /* the source's ledger (the cache), or NULL */
        struct report_range rg;
        /* the day/month span of the last bucket mapped: buckets inside it
         * reuse its key without switching zones again */
        int64_t span_lo, span_hi;
        char span_key[11];
        struct agg agg;
        struct agg roots; /* merge_worktrees: project -> main checkout (in .project) */
        /* a session report with a limit, from the sessions' sums (each
         * session comes once): only the newest q->limit are kept in agg.v
         * (no index), heap[0] the oldest of them; every one is counted
         * and summed */
        bool newest_only;
        uint32_t *heap;
        size_t heap_cap, seen;
        struct usage_sums all;
};


/* ymd moved by n days. */
static void add_days(const char *ymd, int n, char out[11], int *ret_wday)
{
        struct tm tm = {0};
        time_t t;
        tm.tm_year = atoi(ymd) - 1900;
        tm.tm_mon = atoi(ymd + 5) - 1;
        tm.tm_mday = atoi(ymd + 8) + n;
        tm.tm_hour = 12;
        t = timegm(&tm);
        gmtime_r(&t, &tm);
        strftime(out, 11, "%Y-%m-%d", &tm);
        if (ret_wday)
                *ret_wday = tm.tm_wday;
}

void report_iso_week(const char *monday, char out[16])
{
        struct tm tm = {0};
        time_t t;
        tm.tm_year = atoi(monday) - 1900;
        tm.tm_mon = atoi(monday + 5) - 1;
        tm.tm_mday = atoi(monday + 8);
        tm.tm_hour = 12;
        t = timegm(&tm);
        gmtime_r(&t, &tm);
        strftime(out, 16, "%G-W%V", &tm);
}

/* The calendar span (day, week, month) of ms in the asker's zone: its key
 * in c->span_key, and its bounds cached so the next buckets inside it need
 * no zone switch. */
static void bucket_key(struct run *c, int64_t ms)
{
        enum report_kind kind = c->q->kind;
        char start[11], next[11];

        if (ms >= c->span_lo && ms < c->span_hi)
                return;
        if (kind == REPORT_MONTHLY) {
                char m[8];
                timefmt_month(ms, c->q->tz, m);
                copy_str(c->span_key, sizeof(c->span_key), m);
                snprintf(start, sizeof(start), "%s-01", m);
                report_shift_day(start, 1, next);
        } else if (kind == REPORT_WEEKLY) {
                char day[11];
                int wday;
                timefmt_day(ms, c->q->tz, day);
                add_days(day, 0, start, &wday);
                add_days(day, -((wday - report_week_start(c->q) + 7) % 7), start, NULL);
                memcpy(c->span_key, start, sizeof(start));
                add_days(start, 7, next, NULL);
        } else {
                timefmt_day(ms, c->q->tz, c->span_key);
                memcpy(start, c->span_key, sizeof(start));
                report_shift_day(start, 0, next);
        }
        if (timefmt_parse_day(start, c->q->tz, &c->span_lo) < 0 ||
            timefmt_parse_day(next, c->q->tz, &c->span_hi) < 0 || ms < c->span_lo ||
            ms >= c->span_hi)
                c->span_lo = c->span_hi = 0; /* no cache; the key is still right */
}

/* The main checkout of a git worktree: its .git is a file saying
 * "gitdir: <main>/.git/worktrees/<name>". Anything else is itself. */
static void worktree_root(const char *path, char *out, size_t cap)
{
        char gitfile[ROW_PROJECT_MAX + 8], buf[ROW_PROJECT_MAX + 64];
        FILE *f;
        size_t n = 0;
        const char *w;

        snprintf(out, cap, "%s", path);
        if (path[0] != '/' || snprintf(gitfile, sizeof(gitfile), "%s/.git", path) >= (int)sizeof(gitfile))
                return;
        f = fopen(gitfile, "re");
        if (f) {
                n = fread(buf, 1, sizeof(buf) - 1, f);
                fclose(f);
        }
        buf[n] = 0;
        buf[strcspn(buf, "\r\n")] = 0;
        if (strncmp(buf, "gitdir: /", 9) != 0 || !(w = strstr(buf + 8, "/.git/worktrees/")))
                return;
        snprintf(out, cap, "%.*s", (int)(w - (buf + 8)), buf + 8);
}

static const char *project_of(struct run *c, const char *project)
{
        struct report_entry *e;

        if (!c->q->merge_worktrees || !project[0])
                return project;
        e = agg_get(&c->roots, project, "", "");
        if (!e)
                return project;
        if (!e->first_ms) { /* first time seen */
                worktree_root(project, e->project, sizeof(e->project));
                e->first_ms = 1;
        }
        return e->project;
}

/* The entry a (time, harness, provider, model, project) falls into, for
 * every report but session and tool. */
static struct report_entry *group_of(struct run *c, int64_t ms, const char *tool,
                                     const char *provider, const char *model, const char *project,
                                     const char *party)
{
        char pm[ROW_PROVIDER_MAX + ROW_MODEL_MAX + 1], group[REPORT_GROUP_MAX];
        const char *key;
        struct report_entry *e;

        bool by_model = c->q->kind == REPORT_MODEL || c->q->breakdown == REPORT_BREAKDOWN_MODEL;

        if (by_model) /* "provider/model", or "model" without a provider */
                join(pm, sizeof(pm), provider, provider[0] ? "/" : "", model);
        if (c->q->kind == REPORT_MODEL) {
                key = pm;
        } else if (c->q->kind == REPORT_PROJECT) {
                key = project_of(c, project);
        } else {
                bucket_key(c, ms);
                key = c->span_key;
        }
        if (c->q->kind == REPORT_MODEL || c->q->breakdown == REPORT_BREAKDOWN_HARNESS)
                copy_str(group, sizeof(group), tool);
        else if (c->q->breakdown == REPORT_BREAKDOWN_MODEL)
                join(group, sizeof(group), tool, "\x1f", pm);
        else
                group[0] = 0;
        e = agg_get(&c->agg, key, group, party);
        if (e && by_model) {
                copy_str(e->harness, sizeof(e->harness), tool);
                copy_str(e->provider, sizeof(e->provider), provider);
                copy_str(e->model, sizeof(e->model), model);
        }
        return e;
}

static int rollup_cb(const struct report_item *r, void *u)
{
        struct run *c = u;
        struct report_entry *e;

        if (!report_harness_ok(c->q, r->tool))
                return 0;
        e = group_of(c, r->first_ms, r->tool, r->provider, r->model, "", r->party);
        if (!e)
                return -ENOMEM;
        usage_sums_add(&e->sums, &r->sums);
        return 0;
}

/* Every report but tool from the rows themselves (projects, and cost
 * modes the rollups cannot answer). */
static int row_cb(const struct report_item *r, void *u)
{
        struct run *c = u;
        struct report_entry *e;

        if (!report_row_ok(c->q, r->tool, r->session, r->project))
                return 0;
        if (c->q->kind == REPORT_SESSION) {
                e = agg_get(&c->agg, r->session, r->tool, r->party);
                if (!e)
                        return -ENOMEM;
                if (e->sums.events == 0 || r->first_ms < e->first_ms)
                        e->first_ms = r->first_ms;
                if (e->sums.events == 0 || r->last_ms >= e->last_ms) {
                        e->last_ms = r->last_ms;
                        if (r->model[0])
                                copy_str(e->model, sizeof(e->model), r->model);
                }
                if (!e->project[0])
                        copy_str(e->project, sizeof(e->project), r->project);
                copy_str(e->session, sizeof(e->session), r->session);
        } else {
                if (r->first_ms < c->rg.since_ms || r->first_ms >= c->rg.until_ms)
                        return 0;
                e = group_of(c, r->first_ms, r->tool, r->provider, r->model, r->project, r->party);
                if (!e)
                        return -ENOMEM;
        }
        usage_sums_add(&e->sums, &r->sums);
        return 0;
}

static bool session_in_range(const struct run *c, int64_t first_ms, int64_t last_ms)
{
        return first_ms < c->rg.until_ms && last_ms >= c->rg.since_ms;
}

/* An entry of a session's sums (key: session, group and harness: tool). */
static void session_fill(struct report_entry *e, const struct session_entry *s, const char *party)
{
        memset(e, 0, sizeof(*e));
        copy_str(e->key, sizeof(e->key), s->session);
        copy_str(e->group, sizeof(e->group), s->tool);
        copy_str(e->party, sizeof(e->party), party);
        copy_str(e->harness, sizeof(e->harness), s->tool);
        copy_str(e->session, sizeof(e->session), s->session);
        copy_str(e->project, sizeof(e->project), s->project);
        copy_str(e->model, sizeof(e->model), s->model);
        e->first_ms = s->first_ms;
        e->last_ms = s->last_ms;
        e->sums = s->sums;
}

static int session_cmp(const void *a, const void *b);

/* heap[i] older than heap[j] in the report's order */
static bool heap_less(const struct run *c, size_t i, size_t j)
{
        return session_cmp(&c->agg.v[c->heap[i]], &c->agg.v[c->heap[j]]) < 0;
}

static void heap_swap(struct run *c, size_t i, size_t j)
{
        uint32_t t = c->heap[i];
        c->heap[i] = c->heap[j];
        c->heap[j] = t;
}

static void heap_up(struct run *c, size_t i)
{
        while (i > 0 && heap_less(c, i, (i - 1) / 2)) {
                heap_swap(c, i, (i - 1) / 2);
                i = (i - 1) / 2;
        }
}

static void heap_down(struct run *c, size_t i)
{
        for (;;) {
                size_t l = 2 * i + 1, r = l + 1, m = i;
                if (l < c->agg.n && heap_less(c, l, m))
                        m = l;
                if (r < c->agg.n && heap_less(c, r, m))
                        m = r;
                if (m == i)
                        return;
                heap_swap(c, i, m);
                i = m;
        }
}

/* The session among the newest q->limit so far, or not: the oldest kept
 * makes room for a newer one. Memory stays q->limit entries however many
 * sessions the ledger holds. */
static int keep_newest(struct run *c, const struct session_entry *s, const char *party)
{
        struct report_entry *oldest;
        struct report_entry cand;

        c->seen++;
        usage_sums_add(&c->all, &s->sums);
        if (c->agg.n < c->q->limit) {
                if (grow_entries(&c->agg) < 0)
                        return -ENOMEM;
                if (c->heap_cap < c->agg.cap) {
                        uint32_t *nh = reallocarray(c->heap, c->agg.cap, sizeof(*nh));
                        if (!nh)
                                return -ENOMEM;
                        c->heap = nh;
                        c->heap_cap = c->agg.cap;
                }
                session_fill(&c->agg.v[c->agg.n], s, party);
                c->heap[c->agg.n] = (uint32_t)c->agg.n;
                c->agg.n++;
                heap_up(c, c->agg.n - 1);
                return 0;
        }
        oldest = &c->agg.v[c->heap[0]];
        if (s->last_ms < oldest->last_ms)
                return 0; /* the common case: no copy at all */
        session_fill(&cand, s, party);
        if (session_cmp(&cand, oldest) <= 0)
                return 0;
        *oldest = cand;
        heap_down(c, 0);
        return 0;
}

static int session_cb(const struct session_entry *s, const char *party, void *u)
{
        struct run *c = u;

        if (!report_row_ok(c->q, s->tool, s->session, s->project) ||
            !session_in_range(c, s->first_ms, s->last_ms))
                return 0;
        if (c->newest_only)
                return keep_newest(c, s, party);
        /* each (session, harness, party) comes once: no index to find it by */
        if (grow_entries(&c->agg) < 0)
                return -ENOMEM;
        session_fill(&c->agg.v[c->agg.n++], s, party);
        return 0;
}

static int calls_cb(const struct report_calls *a, void *u)
{
        struct run *c = u;
        struct report_entry *e;

        if (!report_harness_ok(c->q, a->tool))
                return 0;
        e = agg_get(&c->agg, a->name, a->tool, a->party);
        if (!e)
                return -ENOMEM;
        e->calls += a->calls;
        e->priced_calls += a->priced_calls;
        e->share_nano += a->share_nano;
        return 0;
}

/* ---- order ---------------------------------------------------------------- */

static int key_cmp(const void *a, const void *b)
{
        const struct report_entry *x = a, *y = b;
        int c = strcmp(x->key, y->key);
        if (!c)
                c = strcmp(x->party, y->party);
        return c ? c : strcmp(x->group, y->group);
}

static int session_cmp(const void *a, const void *b)
{
        const struct report_entry *x = a, *y = b;
        int c;
        if (x->last_ms != y->last_ms)
                return x->last_ms < y->last_ms ? -1 : 1;
        c = strcmp(x->harness, y->harness);
        if (!c)
                c = strcmp(x->session, y->session);
        return c ? c : strcmp(x->party, y->party);
}

static int tool_cmp(const void *a, const void *b)
{
        const struct report_entry *x = a, *y = b;
        if (x->calls != y->calls)
                return x->calls > y->calls ? -1 : 1;
        return key_cmp(a, b);
}

/* Drops the sessions (built from rows) outside the range. */
static void keep_sessions_in_range(struct run *c)
{
        size_t k = 0;
        for (size_t i = 0; i < c->agg.n; i++)
                if (session_in_range(c, c->agg.v[i].first_ms, c->agg.v[i].last_ms))
                        memmove(&c->agg.v[k++], &c->agg.v[i], sizeof(c->agg.v[i]));
        c->agg.n = k;
}

static int by_pointer(const void *a, const void *b, void *cmp)
{
        int (*entry_cmp)(const void *, const void *) = (int (*)(const void *, const void *))cmp;
        return entry_cmp(*(const struct report_entry *const *)a, *(const struct report_entry *const *)b);
}

/* Tails of new entries after a sorted run up to this long are merged
 * into it; longer ones are sorted with the rest. */
#define SORT_TAIL_MAX 256

/* order[0..n) (pointers into rows): rows[0..p) as they are (sorted), the
 * tail rows[p..n) sorted and merged in. */
static void merge_tail(const struct report_entry **order, struct report_entry *rows, size_t p, size_t n,
                       int (*cmp)(const void *, const void *))
{
        const struct report_entry *tail[SORT_TAIL_MAX];
        size_t t = n - p, i = 0, j = 0, k = 0;

        for (size_t x = 0; x < t; x++)
                tail[x] = &rows[p + x];
        qsort_r(tail, t, sizeof(*tail), by_pointer, (void *)cmp);
        while (i < p || j < t) /* no two compare equal: each row is a group of its own */
                order[k++] = j == t || (i < p && cmp(&rows[i], tail[j]) <= 0) ? &rows[i++] : tail[j++];
}

/* rows in cmp's order. Entries are large (~1.7 KB): pointers are sorted,
 * then the entries moved into place cycle by cycle through one spare, so
 * each moves once and no second array is made. Rows that are in order
 * already (a cached report's, kept sorted: report_build_cached) cost one
 * comparison each; new ones after them are merged in, and only the rows
 * out of place move. */
static void sort_entries(struct report_entry *rows, size_t n, int (*cmp)(const void *, const void *))
{
        size_t *src, p = 1;
        const struct report_entry **order;
        struct report_entry spare;

        if (n < 2)
                return;
        while (p < n && cmp(&rows[p - 1], &rows[p]) <= 0)
                p++;
        if (p == n)
                return;
        order = reallocarray(NULL, n, sizeof(*order));
        src = reallocarray(NULL, n, sizeof(*src));
        if (!order || !src) {
                free(order);
                free(src);
                qsort(rows, n, sizeof(*rows), cmp); /* memory is short: in place */
                return;
        }
        if (n - p <= SORT_TAIL_MAX) {
                merge_tail(order, rows, p, n, cmp);
        } else {
                for (size_t i = 0; i < n; i++)
                        order[i] = &rows[i];
                qsort_r(order, n, sizeof(*order), by_pointer, (void *)cmp);
        }
        for (size_t i = 0; i < n; i++)
                src[i] = (size_t)(order[i] - rows); /* position i takes rows[src[i]] */
        free(order);
        for (size_t i = 0; i < n; i++) {
                if (src[i] == i)
                        continue;
                /* the cycle through i: each entry moves once, i's via spare */
                size_t j = i;
                memcpy(&spare, &rows[i], sizeof(spare));
                while (src[j] != i) {
                        size_t k = src[j];
                        memcpy(&rows[j], &rows[k], sizeof(rows[j]));
                        src[j] = j;
                        j = k;
                }
                memcpy(&rows[j], &spare, sizeof(spare));
                src[j] = j;
        }
        free(src);
}

void report_result_finish(const struct report_query *q, struct report_entry *rows, size_t n,
                          struct report_result *res)
{
        int (*cmp)(const void *, const void *) = q->kind == REPORT_SESSION ? session_cmp
                                                 : q->kind == REPORT_TOOL  ? tool_cmp
                                                                           : key_cmp;

        sort_entries(rows, n, cmp);
        *res = (struct report_result){.kind = q->kind, .rows = rows, .n = n, .rows_total = n};
        for (size_t i = 0; i < res->n; i++) {
                const struct report_entry *e = &res->rows[i];
                if (q->kind == REPORT_TOOL) {
                        res->calls += e->calls;
                        res->priced_calls += e->priced_calls;
                        res->share_nano += e->share_nano;
                } else {
                        usage_sums_add(&res->totals, &e->sums);
                }
        }
        /* a session limit: the newest (the last in this order), the totals
         * of all */
        if (q->kind == REPORT_SESSION && q->limit && n > q->limit) {
                memmove(rows, rows + (n - q->limit), q->limit * sizeof(*rows));
                res->n = q->limit;
        }
}

static void finish(struct run *c, struct report_result *res)
{
        report_result_finish(c->q, c->agg.v, c->agg.n, res);
        c->agg.v = NULL;
        if (c->newest_only) { /* the kept ones are summed; the report sums all */
                res->totals = c->all;
                res->rows_total = c->seen;
        }
}

/* ---- the cache of old rollups' sums -------------------------------------- */

#define CACHE_SLOTS       8
#define CACHE_ENTRIES_MAX 4096             /* all slots together: ~7 MB */
#define CACHE_WINDOW_HALF (24 * 3600000LL) /* the window: a day each side of now, ... */
#define CACHE_WINDOW_KEEP (12 * 3600000LL) /* ... moved when now is 12 hours off its middle */
#define CACHE_SIG_MAX     512

/* One query's entries after every rollup outside the window, in report
 * order, and their index (agg.slot) for that order: a hit copies both and
 * the window's rollups add to them, so the rows stay nearly sorted. */
struct cache_slot {
        char sig[CACHE_SIG_MAX]; /* "" = free */
        int64_t lo_ms, hi_ms;
        uint64_t epoch, used;
        struct report_entry *v;
        size_t n;
        uint32_t *index;
        size_t nslot;
        struct usage_sums *sums;      /* v[i].sums, side by side: the totals without touching v */
        struct report_view_text text; /* v's rows as JSON, once report/json.c wrote them */
};

static const struct report_entry *report_cache_slot_entry(const struct cache_slot *s, size_t i)
{
        return &s->v[i];
}

/* The place of (key, group, party) among s's entries, or -1. */
static long base_find(const struct cache_slot *s, const char *key, const char *group, const char *party)
{
        size_t m = s->nslot - 1;
        for (size_t k = group_hash(key, group, party) & m; s->index[k]; k = (k + 1) & m)
                if (same_group(&s->v[s->index[k] - 1], key, group, party))
                        return (long)s->index[k] - 1;
        return -1;
}

struct report_cache {
        struct cache_slot slot[CACHE_SLOTS];
        uint64_t clock;
        size_t entries;
        struct report_cache_stats stats;
};

struct report_cache *report_cache_new(void)
{
        return calloc(1, sizeof(struct report_cache));
}

static void slot_clear(struct report_cache *rc, struct cache_slot *s)
{
        rc->entries -= s->n;
        free(s->v);
        free(s->index);
        free(s->sums);
        free(s->text.text);
        free(s->text.off);
        memset(s, 0, sizeof(*s));
}

void report_cache_free(struct report_cache *rc)
{
        if (!rc)
                return;
        for (size_t i = 0; i < CACHE_SLOTS; i++)
                slot_clear(rc, &rc->slot[i]);
        free(rc);
}

void report_cache_get_stats(const struct report_cache *rc, struct report_cache_stats *ret)
{
        *ret = rc->stats;
}

/* Everything of a query that decides its entries; false if it does not fit. */
static bool signature(const struct report_query *q, char sig[CACHE_SIG_MAX])
{
        int n = snprintf(sig, CACHE_SIG_MAX, "%d|%s|%s|%s|%d|%d|%d|", (int)q->kind, q->tz ? q->tz : "",
                         q->since ? q->since : "", q->until ? q->until : "", (int)q->cost, (int)q->breakdown,
                         report_week_start(q));
        for (size_t i = 0; n > 0 && n < CACHE_SIG_MAX && i < REPORT_HARNESS_MAX && q->harness[i]; i++)
                n += snprintf(sig + n, CACHE_SIG_MAX - (size_t)n, "%s,", q->harness[i]);
        return n > 0 && n < CACHE_SIG_MAX;
}

/* Keeps a's entries (every rollup outside [lo, hi)) for sig, in sig's own
 * slot or the least recently used; not when they would take more than the
 * cache holds. */
static void cache_store(struct report_cache *rc, const char *sig, int64_t lo_ms, int64_t hi_ms,
                        uint64_t epoch, const struct agg *a)
{
        struct cache_slot *s = &rc->slot[0];
        struct report_entry *v;
        uint32_t *index;
        struct usage_sums *sums;
        size_t nslot;

        if (a->n > CACHE_ENTRIES_MAX)
                return;
        for (size_t i = 0; i < CACHE_SLOTS; i++) {
                if (strcmp(rc->slot[i].sig, sig) == 0) {
                        s = &rc->slot[i];
                        break;
                }
                if (rc->slot[i].used < s->used)
                        s = &rc->slot[i];
        }
        slot_clear(rc, s);
        while (rc->entries + a->n > CACHE_ENTRIES_MAX) { /* make room: oldest first */
                struct cache_slot *old = NULL;
                for (size_t i = 0; i < CACHE_SLOTS; i++)
                        if (rc->slot[i].sig[0] && (!old || rc->slot[i].used < old->used))
                                old = &rc->slot[i];
                if (!old)
                        return;
                slot_clear(rc, old);
        }
        v = reallocarray(NULL, a->n ? a->n : 1, sizeof(*v));
        sums = reallocarray(NULL, a->n ? a->n : 1, sizeof(*sums));
        nslot = index_size(a->n);
        index = calloc(nslot, sizeof(*index));
        if (!v || !index || !sums) {
                free(v);
                free(index);
                free(sums);
                return;
        }
        if (a->n)
                memcpy(v, a->v, a->n * sizeof(*v));
        sort_entries(v, a->n, key_cmp); /* the order of every kind cached */
        for (size_t i = 0; i < a->n; i++)
                sums[i] = v[i].sums;
        for (size_t i = 0, m = nslot - 1; i < a->n; i++) {
                size_t k = group_hash(v[i].key, v[i].group, v[i].party) & m;
                while (index[k])
                        k = (k + 1) & m;
                index[k] = (uint32_t)(i + 1);
        }
        snprintf(s->sig, sizeof(s->sig), "%s", sig);
        s->lo_ms = lo_ms;
        s->hi_ms = hi_ms;
        s->epoch = epoch;
        s->used = ++rc->clock;
        s->v = v;
        s->n = a->n;
        s->index = index;
        s->nslot = nslot;
        s->sums = sums;
        rc->entries += a->n;
}

static struct cache_slot *cache_find(struct report_cache *rc, const char *sig, int64_t lo_ms,
                                     int64_t hi_ms, uint64_t epoch)
{
        for (size_t i = 0; i < CACHE_SLOTS; i++) {
                struct cache_slot *s = &rc->slot[i];
                if (!s->sig[0] || strcmp(s->sig, sig) != 0)
                        continue;
                if (s->lo_ms == lo_ms && s->hi_ms == hi_ms && s->epoch == epoch)
                        return s;
                slot_clear(rc, s); /* stale: rollups outside the window changed */
                return NULL;
        }
        return NULL;
}

static int64_t max64(int64_t a, int64_t b)
{
        return a > b ? a : b;
}

static int64_t min64(int64_t a, int64_t b)
{
        return a < b ? a : b;
}

/* Rollups in [from, until), when that is not empty. */
static int scan(struct run *c, int64_t from_ms, int64_t until_ms)
{
        return from_ms < until_ms ? c->src->rollups(c->src->ctx, c->q, from_ms, until_ms, rollup_cb, c) : 0;
}

/* The ledger's rollup window, set to a day each side of now when it has
 * none or now is 12 hours off its middle. */
static void cache_window(struct ledger *l, int64_t *lo, int64_t *hi, uint64_t *epoch)
{
        int64_t now = timefmt_now_ms();

        ledger_rollup_window(l, lo, hi, epoch);
        if (*lo > *hi || now < *lo + CACHE_WINDOW_KEEP || now > *hi - CACHE_WINDOW_KEEP) {
                ledger_rollup_window_set(l, now - CACHE_WINDOW_HALF, now + CACHE_WINDOW_HALF);
                ledger_rollup_window(l, lo, hi, epoch);
        }
}

/* The rollup reports (daily, weekly, monthly, model) with a cache: the
 * entries of every rollup outside a window of a day each side of now come
 * from the cache when none of those changed since (ledger_rollup_window),
 * so only the window's rollups are read; the result is the same as
 * reading them all (tests/unit/common/report/test-report-cache.c). */
static int rollups_cached(struct run *c, struct report_cache *rc)
{
        char sig[CACHE_SIG_MAX];
        int64_t lo, hi, since = c->rg.since_ms, until = c->rg.until_ms;
        uint64_t epoch;
        struct cache_slot *s;
        int r;

        cache_window(c->l, &lo, &hi, &epoch);
        if (!signature(c->q, sig))
                return scan(c, since, until);
        if ((s = cache_find(rc, sig, lo, hi, epoch))) {
                s->used = ++rc->clock;
                rc->stats.hits++;
                r = agg_load(&c->agg, s->v, s->n, s->index, s->nslot);
        } else {
                rc->stats.misses++;
                r = scan(c, since, min64(lo, until));
                if (r >= 0)
                        r = scan(c, max64(hi, since), until);
                if (r >= 0)
                        cache_store(rc, sig, lo, hi, epoch, &c->agg);
        }
        if (r < 0)
                return r;
        return scan(c, max64(lo, since), min64(hi, until));
}

/* Reads its rows from the rollups, all of them, and is cached (build). */
static bool rollup_report(const struct report_query *q)
{
        bool from_rows = q->cost == REPORT_COST_VENDOR || q->kind == REPORT_PROJECT ||
                         (report_query_filtered(q) && q->kind != REPORT_SESSION);
        return !from_rows && (q->kind == REPORT_DAILY || q->kind == REPORT_WEEKLY ||
                              q->kind == REPORT_MONTHLY || q->kind == REPORT_MODEL);
}

/* The first of the n entries (sorted by key_cmp) not before e. */
static size_t lower_bound(const struct report_entry *v, size_t n, const struct report_entry *e)
{
        size_t lo = 0, hi = n;
        while (lo < hi) {
                size_t mid = lo + (hi - lo) / 2;
                if (key_cmp(&v[mid], e) < 0)
                        lo = mid + 1;
                else
                        hi = mid;
        }
        return lo;
}

/* The view of a hit: the slot's entries, but those the window's rollups
 * added to (c->agg.from), merged in order with the window's entries; the
 * totals summed in that order, as report_result_finish sums them. */
static int view_make(struct run *c, struct cache_slot *s, struct report_view *ret)
{
        struct agg *a = &c->agg;
        const struct report_entry **fresh = NULL;
        bool *skip = calloc(s->n ? s->n : 1, sizeof(*skip));
        struct report_view v = {.text = &s->text, .cached_rows = s->v, .cached_n = s->n};
        size_t skipped = 0, i = 0, k = 0;

        fresh = reallocarray(NULL, a->n ? a->n : 1, sizeof(*fresh));
        if (!skip || !fresh)
                goto oom;
        for (size_t j = 0; j < a->n; j++) {
                fresh[j] = &a->v[j];
                if (a->from[j] >= 0) {
                        skip[a->from[j]] = true;
                        skipped++;
                }
        }
        qsort_r(fresh, a->n, sizeof(*fresh), by_pointer, (void *)key_cmp);
        v.n = s->n - skipped + a->n;
        v.rows = reallocarray(NULL, v.n ? v.n : 1, sizeof(*v.rows));
        v.cached = reallocarray(NULL, v.n ? v.n : 1, sizeof(*v.cached));
        if (!v.rows || !v.cached)
                goto oom;
        for (size_t j = 0; j <= a->n; j++) {
                size_t until = j < a->n ? lower_bound(s->v, s->n, fresh[j]) : s->n;
                for (; i < until; i++)
                        if (!skip[i]) {
                                v.rows[k] = &s->v[i];
                                v.cached[k++] = (int32_t)i;
                        }
                if (j < a->n) {
                        v.rows[k] = fresh[j];
                        v.cached[k++] = -1;
                }
        }
        for (size_t j = 0; j < v.n; j++)
                usage_sums_add(&v.totals, v.cached[j] >= 0 ? &s->sums[v.cached[j]] : &v.rows[j]->sums);
        v.own = a->v;
        a->v = NULL;
        free(skip);
        free(fresh);
        *ret = v;
        return 0;
oom:
        free(skip);
        free(fresh);
        free(v.rows);
        free(v.cached);
        return -ENOMEM;
}

int report_view_cached(struct ledger *l, struct report_cache *rc, const struct report_query *q,
                       struct report_view *ret_view, const char **ret_error)
{
        struct report_source src;
        struct run c = {.q = q, .src = &src, .l = l};
        char sig[CACHE_SIG_MAX];
        int64_t lo, hi;
        uint64_t epoch;
        struct cache_slot *s;
        int r;

        if (!rc || !rollup_report(q) || q->team || q->by != REPORT_BY_NONE)
                return 0;
        report_source_ledger(l, &src);
        r = report_query_range(q, &c.rg, ret_error);
        if (r < 0)
                return r;
        cache_window(l, &lo, &hi, &epoch);
        if (!signature(q, sig) || !(s = cache_find(rc, sig, lo, hi, epoch)))
                return 0; /* report_build_cached reads them and keeps them */
        s->used = ++rc->clock;
        rc->stats.hits++;
        c.agg.base = s;
        r = scan(&c, max64(lo, c.rg.since_ms), min64(hi, c.rg.until_ms));
        if (r >= 0)
                r = view_make(&c, s, ret_view);
        if (r < 0)
                report_fail(ret_error, r, "reading the ledger: %s", strerror(-r));
        free(c.agg.v);
        free(c.agg.slot);
        free(c.agg.from);
        return r < 0 ? r : 1;
}

void report_view_free(struct report_view *v)
{
        if (!v)
                return;
        free(v->rows);
        free(v->cached);
        free(v->own);
        *v = (struct report_view){0};
}

static int build(const struct report_source *src, struct report_cache *cache,
                 const struct report_query *q, struct report_result *ret_result, const char **ret_error)
{
        struct run c = {.q = q, .src = src, .l = src->ledger};
        bool from_rows = q->cost == REPORT_COST_VENDOR || q->kind == REPORT_PROJECT ||
                         (report_query_filtered(q) && q->kind != REPORT_SESSION);
        int r;

        r = report_query_range(q, &c.rg, ret_error);
        if (r < 0)
                return r;
        if (q->kind == REPORT_BLOCKS) /* built on top: report/blocks.c */
                return report_fail(ret_error, -EINVAL, "blocks are built by report_blocks_build");
        if (q->kind == REPORT_TOOL) {
                r = src->calls(src->ctx, q, &c.rg, calls_cb, &c);
        } else if (from_rows) {
                r = src->rows(src->ctx, q, row_cb, &c);
                if (r >= 0 && q->kind == REPORT_SESSION)
                        keep_sessions_in_range(&c);
        } else if (q->kind == REPORT_SESSION) {
                c.newest_only = q->limit > 0;
                r = src->sessions(src->ctx, q, session_cb, &c);
        } else if (cache && c.l) {
                r = rollups_cached(&c, cache);
        } else {
                r = scan(&c, c.rg.since_ms, c.rg.until_ms);
        }
        if (r < 0)
                report_fail(ret_error, r, "reading the %s: %s", src->ledger ? "ledger" : "team server",
                            strerror(-r));
        else
                finish(&c, ret_result);
        free(c.agg.v);
        free(c.agg.slot);
        free(c.roots.v);
        free(c.roots.slot);
        free(c.heap);
        return r < 0 ? r : 0;
}

int report_build(struct ledger *l, const struct report_query *q, struct report_result *ret_result,
                 const char **ret_error)
{
        return report_build_cached(l, NULL, q, ret_result, ret_error);
}

int report_build_cached(struct ledger *l, struct report_cache *cache, const struct report_query *q,
                        struct report_result *ret_result, const char **ret_error)
{
        struct report_source src;
        report_source_ledger(l, &src);
        return build(&src, cache, q, ret_result, ret_error);
}

int report_build_from(const struct report_source *src, const struct report_query *q,
                      struct report_result *ret_result, const char **ret_error)
{
        return build(src, NULL, q, ret_result, ret_error);
}

void report_result_free(struct report_result *res)
{
        if (!res)
                return;
        free(res->rows);
        *res = (struct report_result){0};
}
