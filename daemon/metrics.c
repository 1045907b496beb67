/* Prometheus series from the report builder (model, tool and session
 * reports) and the ingest engine's per-harness counters; high-water marks
 * in the ledger meta; the textfile written through a temporary file and
 * rename() in the same directory. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "expo.h"
#include "ingest/ingest.h"
#include "log.h"
#include "metrics.h"
#include "pricing/pricing.h"
#include "registry.h"
#include "report/build.h"
#include "report/cache-view.h"
#include "timefmt.h"

#define TICK_USEC 1000000ULL  /* at most one write a second */
#define HEALTH_TICKS 15       /* without commits, re-check health this often */
#define BACKLOG_TICKS 10      /* while a backlog is read, write at most this often */
#define RETRY_TICKS_MAX 60    /* a failing write is retried after 1, 2, 4 ... 60 ticks */
#define HWM_META "metrics_hwm"
#define SLOW_SERIES_MS 5000   /* the tool and session series (a walk of every call and
                               * session) are built again at most this often */
#define NANO 1000000000ULL

struct series_mark {
        char *series;
        int64_t value;
};

struct metrics {
        struct ingest *in;
        struct ledger *ledger;
        struct report_cache *report_cache; /* may be NULL */
        sd_event_source *timer;
        char *path;
        char user[256];
        int64_t start_ms;
        uint64_t commits_seen;
        unsigned ticks;         /* since the last render */
        char *last_written;
        int last_error;
        unsigned retry_ticks;   /* while last_error: ticks until the next attempt */
        struct series_mark *marks; /* sorted by series */
        size_t n_marks, cap_marks;
        struct series_mark *fresh; /* series seen for the first time, merged in once */
        size_t n_fresh, cap_fresh;
        bool marks_dirty;
        /* the tool and session reports, kept between renders: built again when
         * rows or calls came and SLOW_SERIES_MS have passed (each walks the
         * whole history: per append, a render cost in proportion to it) */
        struct report_result tool_res;     /* a row per harness and tool: few */
        int64_t last_ms[REGISTRY_COUNT];   /* of the session report: each harness's last event */
        bool have_slow;
        int64_t slow_at_ms;
        uint64_t slow_rows, slow_calls;
};

/* ---- high-water marks ------------------------------------------------------ */

static struct series_mark *mark_find(struct metrics *m, const char *series, size_t *ret_pos)
{
        size_t lo = 0, hi = m->n_marks;
        while (lo < hi) {
                size_t mid = (lo + hi) / 2;
                int c = strcmp(m->marks[mid].series, series);
                if (c == 0)
                        return &m->marks[mid];
                if (c < 0)
                        lo = mid + 1;
                else
                        hi = mid;
        }
        *ret_pos = lo;
        return NULL;
}

static int mark_set(struct metrics *m, const char *series, int64_t value)
{
        size_t pos;
        struct series_mark *k = mark_find(m, series, &pos);

        if (k) {
                k->value = value;
                return 0;
        }
        if (m->n_marks == m->cap_marks) {
                size_t ncap = m->cap_marks ? m->cap_marks * 2 : 64;
                struct series_mark *nv = realloc(m->marks, ncap * sizeof(*nv));
                if (!nv)
                        return -ENOMEM;
                m->marks = nv;
                m->cap_marks = ncap;
        }
        char *s = strdup(series);
        if (!s)
                return -ENOMEM;
        memmove(&m->marks[pos + 1], &m->marks[pos], (m->n_marks - pos) * sizeof(*m->marks));
        m->marks[pos] = (struct series_mark){.series = s, .value = value};
        m->n_marks++;
        return 0;
}

/* Every marked series is exported at least at its mark, also one the
 * ledger no longer has (an upsert moved its rows to another series). */
static int raise_to_marks(struct metrics *m, struct expo *e)
{
        for (size_t i = 0; i < m->n_marks; i++) {
                int r = expo_max_series(e, m->marks[i].series, m->marks[i].value);
                if (r < 0 && r != -ENOENT && r != -EINVAL)
                        return r; /* a family or line we no longer know: dropped */
        }
        return 0;
}

/* A new maximum becomes the mark. A series without a mark yet is put
 * aside and merged in by merge_fresh: inserting each into the sorted array
 * cost a move of the rest every time (31,775 models: 11 s of memmove per
 * render). */
static int note_mark(const char *series, int64_t *value, void *u)
{
        struct metrics *m = u;
        size_t pos;
        struct series_mark *k = mark_find(m, series, &pos);

        if (k && k->value >= *value)
                return 0;
        m->marks_dirty = true;
        if (k) {
                k->value = *value;
                return 0;
        }
        if (m->n_fresh == m->cap_fresh) {
                size_t ncap = m->cap_fresh ? m->cap_fresh * 2 : 64;
                struct series_mark *nv = realloc(m->fresh, ncap * sizeof(*nv));
                if (!nv)
                        return -ENOMEM;
                m->fresh = nv;
                m->cap_fresh = ncap;
        }
        char *dup = strdup(series);
        if (!dup)
                return -ENOMEM;
        m->fresh[m->n_fresh++] = (struct series_mark){.series = dup, .value = *value};
        return 0;
}

static int mark_cmp(const void *a, const void *b)
{
        return strcmp(((const struct series_mark *)a)->series, ((const struct series_mark *)b)->series);
}

/* The fresh marks (each series once: the exposition has no duplicates)
 * sorted and merged into the marks in one pass. */
static int merge_fresh(struct metrics *m)
{
        size_t n = m->n_marks + m->n_fresh, i = 0, j = 0, o = 0;
        struct series_mark *v;

        if (!m->n_fresh)
                return 0;
        v = malloc(n * sizeof(*v));
        if (!v) {
                for (size_t k = 0; k < m->n_fresh; k++)
                        free(m->fresh[k].series);
                m->n_fresh = 0;
                return -ENOMEM;
        }
        qsort(m->fresh, m->n_fresh, sizeof(*m->fresh), mark_cmp);
        while (i < m->n_marks || j < m->n_fresh)
                v[o++] = j == m->n_fresh || (i < m->n_marks && mark_cmp(&m->marks[i], &m->fresh[j]) < 0)
                                 ? m->marks[i++]
                                 : m->fresh[j++];
        free(m->marks);
        m->marks = v;
        m->n_marks = m->cap_marks = n;
        m->n_fresh = 0;
        return 0;
}

/* Meta value: one "series value\n" per line; the value follows the last
 * blank (label values are escaped, so a line holds no raw newline). */
static void marks_load(struct metrics *m)
{
        size_t cap = 1 << 16;
        char *buf = NULL;
        int r;

        for (;;) {
                free(buf);
                buf = malloc(cap);
                if (!buf)
                        return;
                r = ledger_meta_get(m->ledger, HWM_META, buf, cap);
                if (r != -ENOBUFS || cap >= (1u << 28))
                        break;
                cap *= 4;
        }
        for (char *line = buf, *next; r == 0 && line && *line; line = next) {
                next = strchr(line, '\n');
                if (next)
                        *next++ = 0;
                char *sp = strrchr(line, ' '), *end;
                if (!sp)
                        continue;
                *sp = 0;
                long long v = strtoll(sp + 1, &end, 10);
                if (*end || v < 0 || mark_set(m, line, v) < 0)
                        continue;
        }
        free(buf);
}

static int marks_save(struct metrics *m)
{
        char *buf = NULL;
        size_t len = 0;
        FILE *f = open_memstream(&buf, &len);
        int r;

        if (!f)
                return -ENOMEM;
        for (size_t i = 0; i < m->n_marks; i++)
                fprintf(f, "%s %lld\n", m->marks[i].series, (long long)m->marks[i].value);
        if (fclose(f) != 0) {
                free(buf);
                return -ENOMEM;
        }
        r = ledger_meta_set(m->ledger, HWM_META, buf);
        free(buf);
        if (r >= 0)
                m->marks_dirty = false;
        return r;
}

/* ---- series ---------------------------------------------------------------- */

static const struct {
        const char *name;
        enum expo_type type;
        uint64_t scale;
        const char *help;
} families[] = {
        { "agentmeter_tokens_total", EXPO_COUNTER, 1,
          "Tokens billed, by type: input (uncached), output, cache_read, cache_write_5m, "
          "cache_write_1h; disjoint, so their sum is every billable token." },
        { "agentmeter_reasoning_tokens_total", EXPO_COUNTER, 1,
          "Reasoning tokens (a part of output, not to be added to it)." },
        { "agentmeter_cost_usd_total", EXPO_COUNTER, NANO,
          "Cost in US dollars, by source: vendor (written by the harness) or computed "
          "(agentmeterd's price table). Never decreases: held at its high-water mark." },
        { "agentmeter_unpriced_events_total", EXPO_COUNTER, 1,
          "Events without a known price (unpriced is not free)." },
        { "agentmeter_events_total", EXPO_COUNTER, 1,
          "Billed model calls (or turns, for harnesses that record no usage)." },
        { "agentmeter_tool_calls_total", EXPO_COUNTER, 1, "Tool calls, by harness and tool." },
        { "agentmeter_last_event_timestamp_seconds", EXPO_GAUGE, 1000,
          "Time of the latest event of each harness, Unix seconds." },
        { "agentmeter_build_info", EXPO_GAUGE, 1, "agentmeterd's version; always 1." },
        { "agentmeter_price_table_info", EXPO_GAUGE, 1,
          "The price table computed costs come from; always 1." },
        { "agentmeter_sources", EXPO_GAUGE, 1, "Files and databases the daemon reads." },
        { "agentmeter_source_errors", EXPO_GAUGE, 1,
          "Sources whose last read failed (retried with backoff)." },
        { "agentmeter_malformed_lines_total", EXPO_COUNTER, 1,
          "Lines skipped because they are not valid records." },
        { "agentmeter_ingest_lag_bytes", EXPO_GAUGE, 1,
          "Bytes of known sources not read yet (0 when caught up)." },
        { "agentmeter_daemon_start_time_seconds", EXPO_GAUGE, 1000,
          "When this agentmeterd started, Unix seconds." },
};

static int declare(struct expo *e)
{
        for (size_t i = 0; i < sizeof(families) / sizeof(families[0]); i++) {
                int r = expo_family(e, families[i].name, families[i].type, families[i].help,
                                    families[i].scale);
                if (r < 0)
                        return r;
        }
        return 0;
}

static int report(struct metrics *m, enum report_kind kind, enum report_cost cost,
                  struct report_result *ret)
{
        struct report_query q = {.kind = kind, .tz = "UTC", .cost = cost, .calls_only = true};
        return report_build_cached(m->ledger, m->report_cache, &q, ret, NULL);
}

/* Vendor cost of model entry e, from the vendor-only report when a model
 * mixes vendor and computed costs (its sums do not split them). */
static int64_t vendor_cost(const struct report_entry *e, const struct report_result *vendor)
{
        if (e->sums.computed_events == 0)
                return e->sums.cost_nano;
        if (e->sums.computed_events == e->sums.priced_events || !vendor)
                return 0;
        for (size_t i = 0; i < vendor->n; i++)
                if (strcmp(vendor->rows[i].key, e->key) == 0 &&
                    strcmp(vendor->rows[i].harness, e->harness) == 0)
                        return vendor->rows[i].sums.cost_nano;
        return 0;
}

static int model_series(struct metrics *m, struct expo *e)
{
        struct report_result res = {0}, vendor = {0};
        bool mixed = false;
        int r = report(m, REPORT_MODEL, REPORT_COST_AUTO, &res);

        for (size_t i = 0; r >= 0 && i < res.n; i++)
                mixed |= res.rows[i].sums.computed_events > 0 &&
                         res.rows[i].sums.computed_events < res.rows[i].sums.priced_events;
        if (r >= 0 && mixed)
                r = report(m, REPORT_MODEL, REPORT_COST_VENDOR, &vendor);
        for (size_t i = 0; r >= 0 && i < res.n; i++) {
                const struct report_entry *x = &res.rows[i];
                const struct usage_sums *s = &x->sums;
                const char *base[] = {"user", m->user, "harness", x->harness, "provider",
                                      x->provider, "model", x->model, NULL, NULL, NULL};
                const uint64_t cw_1h = s->cache_write_1h <= s->cache_write ? s->cache_write_1h : s->cache_write;
                const struct { const char *type; uint64_t v; } tok[] = {
                        { "input", s->input }, { "output", s->output },
                        { "cache_read", s->cache_read },
                        { "cache_write_5m", s->cache_write - cw_1h },
                        { "cache_write_1h", cw_1h },
                };

                r = expo_add(e, "agentmeter_events_total", base, (int64_t)s->events);
                if (r >= 0)
                        r = expo_add(e, "agentmeter_unpriced_events_total", base,
                                     (int64_t)(s->events - s->priced_events));
                if (r >= 0 && s->token_events > 0) /* unknown tokens are not 0 tokens */
                        r = expo_add(e, "agentmeter_reasoning_tokens_total", base,
                                     (int64_t)s->reasoning);
                base[8] = "type";
                for (size_t t = 0; r >= 0 && s->token_events > 0 && t < 5; t++) {
                        base[9] = tok[t].type;
                        r = expo_add(e, "agentmeter_tokens_total", base, (int64_t)tok[t].v);
                }
                int64_t v = vendor_cost(x, mixed ? &vendor : NULL);
                base[8] = "cost_source";
                if (r >= 0 && s->priced_events > s->computed_events) {
                        base[9] = "vendor";
                        r = expo_add(e, "agentmeter_cost_usd_total", base, v);
                }
                if (r >= 0 && s->computed_events > 0) {
                        base[9] = "computed";
                        r = expo_add(e, "agentmeter_cost_usd_total", base, s->cost_nano - v);
                }
        }
        report_result_free(&res);
        report_result_free(&vendor);
        return r;
}

/* A session's last event into its harness's latest (a walk of the session
 * sums: a session report of every session made a full entry for each, a
 * tenth of a scan's writer time at the end of `--once` over 609 files). */
static int note_last_event(const struct session_entry *e, void *u)
{
        struct metrics *m = u;
        int a = registry_index(registry_find(e->tool));

        if (a >= 0 && e->last_ms > m->last_ms[a])
                m->last_ms[a] = e->last_ms;
        return 0;
}

/* The tool and session reports as of now, or as of at most SLOW_SERIES_MS
 * ago when rows came since (their counters lag that much at most). */
static int slow_reports(struct metrics *m)
{
        const struct tail_counters *c = ingest_counters(m->in);
        uint64_t rows = c->rows_added + c->rows_merged, calls = c->calls_added;
        int64_t now = timefmt_mono_ms();
        int r;

        if (m->have_slow && ((rows == m->slow_rows && calls == m->slow_calls) ||
                             now - m->slow_at_ms < SLOW_SERIES_MS))
                return 0;
        report_result_free(&m->tool_res);
        m->have_slow = false;
        r = report(m, REPORT_TOOL, REPORT_COST_AUTO, &m->tool_res);
        if (r >= 0) {
                memset(m->last_ms, 0, sizeof(m->last_ms));
                r = ledger_foreach_session(m->ledger, note_last_event, m);
        }
        if (r < 0) {
                report_result_free(&m->tool_res);
                return r;
        }
        m->have_slow = true;
        m->slow_at_ms = now;
        m->slow_rows = rows;
        m->slow_calls = calls;
        return 0;
}

static int tool_and_session_series(struct metrics *m, struct expo *e)
{
        int r = slow_reports(m);

        for (size_t i = 0; r >= 0 && i < m->tool_res.n; i++) {
                const struct report_entry *t = &m->tool_res.rows[i];
                const char *l[] = {"user", m->user, "harness", t->harness, "tool", t->key, NULL};
                r = expo_add(e, "agentmeter_tool_calls_total", l, (int64_t)t->calls);
        }
        for (size_t a = 0; r >= 0 && registry_adapters[a]; a++) {
                const char *l[] = {"user", m->user, "harness", registry_adapters[a]->id, NULL};
                if (m->last_ms[a])
                        r = expo_max(e, "agentmeter_last_event_timestamp_seconds", l, m->last_ms[a]);
        }
        return r;
}

static int health_series(struct metrics *m, struct expo *e)
{
        const char *u[] = {"user", m->user, NULL, NULL, NULL};
        uint64_t done, known;
        int r;

        u[2] = "version", u[3] = AM_VERSION;
        r = expo_add(e, "agentmeter_build_info", u, 1);
        const struct price_table *pt = ingest_prices(m->in);
        u[2] = "table", u[3] = pt ? pt->label : "none";
        if (r >= 0)
                r = expo_add(e, "agentmeter_price_table_info", u, 1);
        u[2] = NULL;
        ingest_progress(m->in, &done, &known);
        if (r >= 0)
                r = expo_add(e, "agentmeter_ingest_lag_bytes", u,
                             (int64_t)(known > done ? known - done : 0));
        if (r >= 0)
                r = expo_add(e, "agentmeter_daemon_start_time_seconds", u, m->start_ms);
        u[2] = "harness";
        for (size_t i = 0; r >= 0 && registry_adapters[i]; i++) {
                struct adapter_stats st;
                ingest_adapter_stats(m->in, registry_adapters[i], &st);
                u[3] = registry_adapters[i]->id;
                r = expo_add(e, "agentmeter_sources", u, (int64_t)st.files);
                if (r >= 0)
                        r = expo_add(e, "agentmeter_source_errors", u, (int64_t)st.errors);
                if (r >= 0)
                        r = expo_add(e, "agentmeter_malformed_lines_total", u,
                                     (int64_t)st.malformed);
        }
        return r;
}

int metrics_text(struct metrics *m, char **ret_text)
{
        struct expo *e = NULL;
        int r = expo_new(&e);

        if (r >= 0)
                r = declare(e);
        if (r >= 0)
                r = model_series(m, e);
        if (r >= 0)
                r = tool_and_session_series(m, e);
        if (r >= 0)
                r = health_series(m, e);
        if (r >= 0)
                r = raise_to_marks(m, e);
        if (r >= 0)
                r = expo_foreach_counter(e, note_mark, m);
        if (m->n_fresh) {
                int k = merge_fresh(m);
                if (r >= 0)
                        r = k;
        }
        if (r >= 0 && m->marks_dirty) {
                int k = marks_save(m);
                if (k < 0)
                        log_errno(LOG_WARNING, k, "cannot record the metrics' high-water marks");
        }
        if (r >= 0)
                r = expo_render(e, ret_text, NULL);
        expo_free(e);
        return r;
}

/* ---- the textfile ---------------------------------------------------------- */

/* A temporary name of our own next to path: hidden and not *.prom, so
 * node_exporter never reads a half-written file; random, so nobody can
 * plant a FIFO, a link or a file under it in advance (a shared textfile
 * directory: `install --metrics-dir`). */
static int tmp_name(const char *path, char *buf, size_t cap)
{
        const char *slash = strrchr(path, '/');
        uint64_t rnd;
        int n;

        if (getrandom(&rnd, sizeof(rnd), GRND_NONBLOCK) != (ssize_t)sizeof(rnd)) {
                struct timespec ts;
                clock_gettime(CLOCK_MONOTONIC, &ts);
                rnd = ((uint64_t)ts.tv_nsec << 20) ^ (uint64_t)ts.tv_sec ^ (uint64_t)getpid() << 40;
        }
        if (slash)
                n = snprintf(buf, cap, "%.*s/.%s.%016llx.tmp", (int)(slash - path), path, slash + 1,
                             (unsigned long long)rnd);
        else
                n = snprintf(buf, cap, ".%s.%016llx.tmp", path, (unsigned long long)rnd);
        return n < 0 || (size_t)n >= cap ? -ENAMETOOLONG : 0;
}

/* Creates a new regular file of ours: O_EXCL never opens (so never blocks
 * on, follows or truncates) anything that is there already; a name taken
 * is tried again under another. */
static int create_tmp(const char *path, char *tmp, size_t cap, int *ret_fd)
{
        for (int attempt = 0; attempt < 16; attempt++) {
                int r = tmp_name(path, tmp, cap);
                if (r < 0)
                        return r;
                int fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_NONBLOCK |
                                           O_NOCTTY | O_CLOEXEC, 0644);
                if (fd >= 0) {
                        *ret_fd = fd;
                        return 0;
                }
                if (errno != EEXIST)
                        return -errno;
        }
        return -EEXIST;
}

/* Temporary files of ours left by a daemon killed while writing: regular
 * files we own named .<name>.<16 hex>.tmp next to path. */
static void remove_stale_tmps(const char *path)
{
        const char *slash = strrchr(path, '/'), *base = slash ? slash + 1 : path;
        char dir[PATH_MAX];
        size_t blen = strlen(base);
        struct dirent *e;
        DIR *d;
        int dfd;

        if (slash)
                snprintf(dir, sizeof(dir), "%.*s", (int)(slash - path) ? (int)(slash - path) : 1, path);
        else
                snprintf(dir, sizeof(dir), ".");
        dfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC | O_NONBLOCK);
        if (dfd < 0 || !(d = fdopendir(dfd))) {
                if (dfd >= 0)
                        close(dfd);
                return;
        }
        while ((e = readdir(d))) {
                const char *n = e->d_name;
                struct stat st;
                size_t len = strlen(n);
                bool hex = len == 1 + blen + 1 + 16 + 4;
                for (size_t i = 0; hex && i < 16; i++)
                        hex = strchr("0123456789abcdef", n[blen + 2 + i]) && n[blen + 2 + i];
                if (!hex || n[0] != '.' || strncmp(n + 1, base, blen) != 0 || n[blen + 1] != '.' ||
                    strcmp(n + len - 4, ".tmp") != 0)
                        continue;
                if (fstatat(dfd, n, &st, AT_SYMLINK_NOFOLLOW) == 0 && S_ISREG(st.st_mode) &&
                    st.st_uid == geteuid())
                        (void)unlinkat(dfd, n, 0);
        }
        closedir(d);
}

static int write_file(const char *path, const char *text)
{
        char tmp[PATH_MAX];
        size_t len = strlen(text);
        int fd = -1, r;

        r = create_tmp(path, tmp, sizeof(tmp), &fd);
        if (r < 0)
                return r;
        for (size_t off = 0; off < len && r == 0;) {
                ssize_t w = write(fd, text + off, len - off);
                if (w < 0 && errno != EINTR)
                        r = errno == EAGAIN ? -EIO : -errno; /* a regular file never says EAGAIN */
                else if (w == 0)
                        r = -EIO;
                else if (w > 0)
                        off += (size_t)w;
        }
        /* readable by node_exporter's user despite the unit's UMask=0077 */
        if (r == 0 && fchmod(fd, 0644) < 0)
                r = -errno;
        if (close(fd) < 0 && r == 0)
                r = -errno;
        if (r == 0 && rename(tmp, path) < 0)
                r = -errno;
        if (r < 0)
                unlink(tmp); /* our own file: created by us above */
        return r;
}

int metrics_write(struct metrics *m)
{
        char *text = NULL;
        int r;

        if (!m->path)
                return 0;
        m->commits_seen = ingest_counters(m->in)->commits;
        m->ticks = 0;
        r = metrics_text(m, &text);
        if (r >= 0 && m->last_written && strcmp(text, m->last_written) == 0) {
                free(text);
                return 0; /* nothing changed */
        }
        if (r >= 0)
                r = write_file(m->path, text);
        if (r < 0) {
                if (r != m->last_error)
                        log_errno(LOG_WARNING, r, "cannot write the metrics file %s (retried)", m->path);
                m->last_error = r;
                /* rendering costs a report build: a write that keeps failing
                 * (a full disk, a directory taken away) backs off */
                m->retry_ticks = m->retry_ticks ? m->retry_ticks * 2 : 1;
                if (m->retry_ticks > RETRY_TICKS_MAX)
                        m->retry_ticks = RETRY_TICKS_MAX;
                free(text);
                return r;
        }
        if (m->last_error)
                log_info("metrics file %s written again", m->path);
        m->last_error = 0;
        m->retry_ticks = 0;
        free(m->last_written);
        m->last_written = text;
        return 0;
}

static int on_tick(sd_event_source *s, uint64_t usec, void *u)
{
        struct metrics *m = u;

        bool changed = ingest_counters(m->in)->commits != m->commits_seen;

        m->ticks++;
        /* an initial scan or a burst commits all the time: rendering every
         * second would compete with it for the ledger */
        if (changed && ingest_pending(m->in) && m->ticks < BACKLOG_TICKS)
                changed = false;
        if (m->last_error ? m->ticks >= m->retry_ticks : changed || m->ticks >= HEALTH_TICKS)
                (void)metrics_write(m);
        sd_event_source_set_time(s, usec + TICK_USEC);
        sd_event_source_set_enabled(s, SD_EVENT_ON);
        return 0;
}

static void default_user(char *buf, size_t cap)
{
        struct passwd *pw = getpwuid(geteuid());
        char host[256] = "localhost";

        (void)gethostname(host, sizeof(host) - 1);
        host[sizeof(host) - 1] = 0;
        if (pw && pw->pw_name)
                snprintf(buf, cap, "%.64s@%.180s", pw->pw_name, host);
        else
                snprintf(buf, cap, "%u@%.180s", (unsigned)geteuid(), host);
}

int metrics_new(sd_event *ev, struct ingest *in, const struct metrics_config *cfg,
                struct metrics **ret)
{
        struct metrics *m = calloc(1, sizeof(*m));
        int r;

        if (!m)
                return -ENOMEM;
        m->in = in;
        m->ledger = ingest_ledger(in);
        m->report_cache = cfg->report_cache;
        m->start_ms = cfg->start_ms;
        if (cfg->user && *cfg->user)
                snprintf(m->user, sizeof(m->user), "%s", cfg->user);
        else
                default_user(m->user, sizeof(m->user));
        if (cfg->path && *cfg->path && !(m->path = strdup(cfg->path))) {
                free(m);
                return -ENOMEM;
        }
        marks_load(m);
        if (m->path)
                remove_stale_tmps(m->path);
        if (ev && m->path) {
                r = sd_event_add_time_relative(ev, &m->timer, CLOCK_MONOTONIC, TICK_USEC, 100000,
                                               on_tick, m);
                if (r < 0) {
                        metrics_free(m);
                        return r;
                }
        }
        *ret = m;
        return 0;
}

struct metrics *metrics_free(struct metrics *m)
{
        if (!m)
                return NULL;
        sd_event_source_disable_unref(m->timer);
        report_result_free(&m->tool_res);
        for (size_t i = 0; i < m->n_marks; i++)
                free(m->marks[i].series);
        free(m->marks);
        free(m->fresh);
        free(m->path);
        free(m->last_written);
        free(m);
        return NULL;
}

