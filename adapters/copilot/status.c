/* The Copilot CLI figures of `status` (adapter.status_extra): premium
 * requests (Copilot's per-request multiplier, summed from the usage records
 * as each event log's parse state keeps them: not dollars, so never in the
 * cost column), the legacy files found but not metered, and, as a
 * cross-check, what each home's session-store.db mirrors of the usage
 * records (read only here, never a source of rows: it has no response id,
 * so its rows could not be told from the event log's). A database is read
 * again only when its fingerprint changed since the last status. */
#include <errno.h>
#include <json-c/json.h>
#include <limits.h>
#include <sqlite3.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "adapt-sqlite.h"
#include "copilot/copilot.h"
#include "copilot/record.h"
#include "ledger/ledger.h"
#include "row.h"

#define HOMES_MAX 8

struct store_fig {
        bool read;      /* the database answered */
        uint64_t calls, input, output, cache_read, cache_write;
};

struct home {
        char path[PATH_MAX];
        struct store_fig fig;
};

/* The daemon keeps this between calls (one allocation, freed with free()). */
struct store_cache {
        size_t n;
        struct {
                uint64_t path_hash, fingerprint;
                struct store_fig fig;
        } v[HOMES_MAX];
};

/* <home>/session-state/<id>/events.jsonl -> <home>; false for other paths. */
static bool home_of(const char *path, char *buf, size_t cap)
{
        const char *p = NULL;

        for (const char *q = path; (q = strstr(q, "/session-state/")); q++)
                p = q;
        if (!p || (size_t)(p - path) >= cap)
                return false;
        memcpy(buf, path, (size_t)(p - path));
        buf[p - path] = 0;
        return true;
}

#define Q_SUMS                                                                                          \
        "SELECT count(*), total(max(coalesce(input_tokens, 0) - coalesce(cache_read_tokens, 0) - "       \
        "coalesce(cache_write_tokens, 0), 0)), total(coalesce(output_tokens, 0)), "                      \
        "total(coalesce(cache_read_tokens, 0)), total(coalesce(cache_write_tokens, 0)) "                 \
        "FROM assistant_usage_events"

static uint64_t col_u64(sqlite3_stmt *q, int i)
{
        double d = sqlite3_column_double(q, i);
        return d > 0 && d < 1.8e19 ? (uint64_t)d : 0;
}

static int read_store(const char *db_path, struct store_fig *ret)
{
        struct adapt_db d;
        sqlite3_stmt *q = NULL;
        int rc, r = adapt_db_open(db_path, &d);

        if (r < 0)
                return r;
        rc = sqlite3_prepare_v2(d.db, Q_SUMS, -1, &q, NULL);
        if (rc == SQLITE_OK && (rc = sqlite3_step(q)) == SQLITE_ROW) {
                *ret = (struct store_fig){
                        .read = true,
                        .calls = (uint64_t)(sqlite3_column_int64(q, 0) > 0 ? sqlite3_column_int64(q, 0) : 0),
                        .input = col_u64(q, 1),
                        .output = col_u64(q, 2),
                        .cache_read = col_u64(q, 3),
                        .cache_write = col_u64(q, 4),
                };
                r = 0;
        } else {
                r = adapt_sql_errno(d.db, rc);
        }
        sqlite3_finalize(q);
        adapt_db_close(&d);
        return r;
}

/* The database's figures, from the cache while its fingerprint holds. */
static void store_figures(struct home *h, void **io_cache)
{
        struct store_cache *c = *io_cache;
        char db[PATH_MAX];
        struct stat st;
        uint64_t ph, fp;
        size_t i;

        if (snprintf(db, sizeof(db), "%s/session-store.db", h->path) >= (int)sizeof(db) || stat(db, &st) < 0)
                return;
        ph = hash64(db, strlen(db));
        fp = adapt_db_fingerprint(db, NULL);
        if (!c && (c = *io_cache = calloc(1, sizeof(*c))) == NULL)
                return;
        for (i = 0; i < c->n && c->v[i].path_hash != ph; i++)
                ;
        if (i < c->n && c->v[i].fingerprint == fp) {
                h->fig = c->v[i].fig;
                return;
        }
        if (read_store(db, &h->fig) < 0)
                h->fig.read = false;
        if (i == c->n && c->n < HOMES_MAX)
                c->n++;
        if (i < c->n) {
                c->v[i].path_hash = ph;
                c->v[i].fingerprint = fp;
                c->v[i].fig = h->fig;
        }
}

static void add_u64(json_object *o, const char *k, uint64_t v)
{
        json_object_object_add(o, k, json_object_new_int64(v > INT64_MAX ? INT64_MAX : (int64_t)v));
}

static void note(json_object *notes, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void note(json_object *notes, const char *fmt, ...)
{
        char buf[PATH_MAX + 256];
        va_list ap;

        va_start(ap, fmt);
        vsnprintf(buf, sizeof(buf), fmt, ap);
        va_end(ap);
        json_object_array_add(notes, json_object_new_string(buf));
}

struct json_object *copilot_status(const struct adapter_status_ctx *ctx)
{
        struct home homes[HOMES_MAX];
        struct adapter_source_view v;
        uint64_t records = 0, premium = 0, legacy = 0, billed = 0;
        size_t n_homes = 0;
        json_object *res = json_object_new_object(), *stores, *notes;

        if (!res)
                return NULL;
        while (ctx->next(ctx->it, &v)) {
                struct parse_state ps;
                struct copilot_premium cp;
                char h[PATH_MAX];
                size_t i;

                if (copilot_is_legacy(v.path)) {
                        legacy++;
                        continue;
                }
                if (v.kind != CLASS_LINES)
                        continue;
                if (v.cp && v.cp->state_len && parse_state_decode(v.cp->state, v.cp->state_len, &ps) == 0 &&
                    copilot_premium(&ps, &cp) == 0) {
                        records += cp.records;
                        premium += cp.premium_milli;
                        billed += cp.github_billed;
                }
                if (!home_of(v.path, h, sizeof(h)))
                        continue;
                for (i = 0; i < n_homes && strcmp(homes[i].path, h) != 0; i++)
                        ;
                if (i == n_homes && n_homes < HOMES_MAX) {
                        memset(&homes[n_homes], 0, sizeof(homes[0]));
                        snprintf(homes[n_homes++].path, sizeof(homes[0].path), "%s", h);
                }
        }
        stores = json_object_new_array();
        notes = json_object_new_array();
        json_object_object_add(res, "usage_records", json_object_new_int64((int64_t)records));
        json_object_object_add(res, "premium_requests", json_object_new_double((double)premium / 1000.0));
        json_object_object_add(res, "github_billed_records", json_object_new_int64((int64_t)billed));
        json_object_object_add(res, "legacy_files_unmetered", json_object_new_int64((int64_t)legacy));
        note(notes, "premium requests %.3f over %llu usage records read (Copilot's request multiplier, not dollars; summed per event log, so a record a fork copied counts again here)",
             (double)premium / 1000.0, (unsigned long long)records);
        if (billed)
                note(notes, "%llu of them billed by GitHub (not your own key): their dollars are an API-equivalent "
                            "estimate at list prices, GitHub bills premium requests",
                     (unsigned long long)billed);
        for (size_t i = 0; i < n_homes; i++) {
                json_object *s;

                store_figures(&homes[i], ctx->cache);
                if (!homes[i].fig.read)
                        continue;
                s = json_object_new_object();
                json_object_object_add(s, "path", json_object_new_string(homes[i].path));
                add_u64(s, "calls", homes[i].fig.calls);
                add_u64(s, "input_tokens", homes[i].fig.input);
                add_u64(s, "output_tokens", homes[i].fig.output);
                add_u64(s, "cache_read_tokens", homes[i].fig.cache_read);
                add_u64(s, "cache_write_tokens", homes[i].fig.cache_write);
                json_object_array_add(stores, s);
                note(notes, "%s/session-store.db mirrors %llu calls, input %llu, output %llu, cache read %llu, "
                            "cache write %llu (a cross-check, not counted)",
                     homes[i].path, (unsigned long long)homes[i].fig.calls, (unsigned long long)homes[i].fig.input,
                     (unsigned long long)homes[i].fig.output, (unsigned long long)homes[i].fig.cache_read,
                     (unsigned long long)homes[i].fig.cache_write);
        }
        if (legacy)
                note(notes, "%llu legacy history-session-state file%s found, not metered (no public source says "
                            "what their usage fields mean)",
                     (unsigned long long)legacy, legacy == 1 ? "" : "s");
        json_object_object_add(res, "session_stores", stores);
        json_object_object_add(res, "notes", notes);
        return res;
}
