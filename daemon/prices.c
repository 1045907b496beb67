/* Prices in the daemon: loading the table and the user's override (and
 * saying what was wrong with it), repricing the ledger when the table in
 * effect changed, and the status and reprice answers. */
#include <errno.h>
#include <inttypes.h>
#include <json-c/json.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ledger/ledger.h"
#include "log.h"
#include "paths.h"
#include "prices.h"

#define META_KEY "price_table"
#define add(o, k, v) json_object_object_add((o), (k), (v))

struct prices {
        struct price_table *table;
        char last_error[512];    /* the override error last logged */
        struct reprice_result last;
        bool repriced;
};

static int override_path(char *buf, size_t cap)
{
        char cfg[PATH_MAX], dir[PATH_MAX];
        int r = paths_config_home(cfg, sizeof(cfg));
        if (r < 0)
                return r;
        r = paths_join(dir, sizeof(dir), cfg, "agentmeterd");
        return r < 0 ? r : paths_join(buf, cap, dir, PRICES_FILE);
}

static int load(struct prices *p, struct price_table **ret)
{
        char path[PATH_MAX];
        struct price_table *t;
        bool have_path = override_path(path, sizeof(path)) == 0;
        int r = price_table_load(have_path ? path : NULL, &t);

        if (r == -EBADMSG)
                return log_errno(LOG_ERR, r, "the built-in price table does not parse (a bug); "
                                             "computed costs are off");
        if (r < 0)
                return log_errno(LOG_ERR, r, "cannot load the price table");
        if (t->override_error[0]) {
                if (strcmp(t->override_error, p->last_error) != 0)
                        log_full(LOG_WARNING, NULL, t->override_path, 0,
                                 "price override ignored, %s; using the built-in table %s",
                                 t->override_error, t->checked);
        } else if (t->override_loaded) {
                log_full(LOG_INFO, NULL, t->override_path, 0,
                         "price override applied: %u entries over the built-in table %s",
                         t->override_entries, t->checked);
        }
        snprintf(p->last_error, sizeof(p->last_error), "%s", t->override_error);
        *ret = t;
        return 0;
}

int prices_new(struct prices **ret)
{
        struct prices *p = calloc(1, sizeof(*p));
        int r;

        if (!p)
                return -ENOMEM;
        r = load(p, &p->table);
        if (r < 0) {
                free(p);
                return r;
        }
        *ret = p;
        return 0;
}

struct prices *prices_free(struct prices *p)
{
        if (p) {
                price_table_free(p->table);
                free(p);
        }
        return NULL;
}

const struct price_table *prices_table(const struct prices *p)
{
        return p ? p->table : NULL;
}

int prices_reload(struct prices *p)
{
        struct price_table *t;
        int r = load(p, &t);
        bool changed;

        if (r < 0)
                return r;
        changed = t->fingerprint != p->table->fingerprint;
        /* swap the contents: the table's address, which ingest holds, stays */
        struct price_table tmp = *p->table;
        *p->table = *t;
        *t = tmp;
        price_table_free(t);
        return changed ? 1 : 0;
}

static int reprice_row(void *u, struct usage_row *row)
{
        return pricing_apply_row(u, row);
}

static void fingerprint_text(const struct price_table *t, char *buf, size_t cap)
{
        snprintf(buf, cap, "%016" PRIx64 " %s%s", t->fingerprint, t->label,
                 t->override_loaded ? "+override" : "");
}

int prices_reprice(struct prices *p, struct ledger *l, struct reprice_result *ret_result)
{
        struct reprice_result res = {0};
        char fp[128];
        int r;

        r = ledger_reprice(l, reprice_row, p->table, PRICES_REPRICE_ROWS_PER_TXN, &res);
        if (r < 0)
                return log_errno(LOG_WARNING, r, "repricing stopped (rows done so far keep their new "
                                                 "price; the next reprice finishes)");
        fingerprint_text(p->table, fp, sizeof(fp));
        r = ledger_meta_set(l, META_KEY, fp);
        if (r < 0)
                log_errno(LOG_WARNING, r, "cannot record which price table priced the ledger");
        log_full(res.rows_changed ? LOG_INFO : LOG_DEBUG, NULL, NULL, 0,
                 "repriced with %s%s: %" PRIu64 " of %" PRIu64 " rows changed, cost %+.6f USD, "
                 "%" PRIu64 " transactions",
                 p->table->label, p->table->override_loaded ? " and the override" : "",
                 res.rows_changed, res.rows_seen, (double)res.cost_delta_nano / 1e9, res.txns);
        p->last = res;
        p->repriced = true;
        if (ret_result)
                *ret_result = res;
        return 0;
}

int prices_reprice_if_changed(struct prices *p, struct ledger *l)
{
        char have[128], want[128];

        fingerprint_text(p->table, want, sizeof(want));
        if (ledger_meta_get(l, META_KEY, have, sizeof(have)) == 0 && strcmp(have, want) == 0)
                return 0;
        return prices_reprice(p, l, NULL);
}

/* ---- status -------------------------------------------------------------- */

struct unpriced {
        struct unpriced_model {
                char tool[ROW_TOOL_MAX], provider[ROW_PROVIDER_MAX], model[ROW_MODEL_MAX];
                uint64_t rows;
        } *v;
        size_t n, cap;
        uint64_t total;
        int err;
};

static int unpriced_cb(const struct rollup_entry *e, void *u)
{
        struct unpriced *up = u;
        uint64_t n = e->sums.events - e->sums.priced_events;
        size_t i;

        if (n == 0)
                return 0;
        up->total += n;
        for (i = 0; i < up->n; i++)
                if (strcmp(up->v[i].tool, e->tool) == 0 && strcmp(up->v[i].provider, e->provider) == 0 &&
                    strcmp(up->v[i].model, e->model) == 0)
                        break;
        if (i == up->n) {
                if (up->n == up->cap) {
                        size_t nc = up->cap ? up->cap * 2 : 16;
                        void *nv = realloc(up->v, nc * sizeof(*up->v));
                        if (!nv)
                                return up->err = -ENOMEM;
                        up->v = nv;
                        up->cap = nc;
                }
                memcpy(up->v[i].tool, e->tool, sizeof(e->tool));
                memcpy(up->v[i].provider, e->provider, sizeof(e->provider));
                memcpy(up->v[i].model, e->model, sizeof(e->model));
                up->v[i].rows = 0;
                up->n++;
        }
        up->v[i].rows += n;
        return 0;
}

static int by_rows_desc(const void *a, const void *b)
{
        const struct unpriced_model *x = a, *y = b;
        return x->rows < y->rows ? 1 : x->rows > y->rows ? -1 : strcmp(x->model, y->model);
}

static json_object *str_or_null(const char *s)
{
        return s && *s ? json_object_new_string(s) : NULL;
}

json_object *prices_status_json(const struct prices *p, struct ledger *l)
{
        const struct price_table *t = prices_table(p);
        json_object *o = json_object_new_object(), *ov = json_object_new_object();
        json_object *arr = json_object_new_array();
        struct unpriced up = {0};

        add(o, "table", t ? json_object_new_string(t->checked) : NULL);
        add(o, "price_source", t ? json_object_new_string(t->label) : NULL);
        add(o, "models", json_object_new_int64(t ? (int64_t)t->n_entries : 0));
        add(ov, "path", t ? str_or_null(t->override_path) : NULL);
        add(ov, "loaded", json_object_new_boolean(t && t->override_loaded));
        add(ov, "entries", json_object_new_int64(t ? t->override_entries : 0));
        add(ov, "error", t ? str_or_null(t->override_error) : NULL);
        add(o, "override", ov);
        if (ledger_foreach_rollup(l, INT64_MIN, INT64_MAX, unpriced_cb, &up) == 0 && up.err == 0) {
                if (up.n)
                        qsort(up.v, up.n, sizeof(*up.v), by_rows_desc);
                for (size_t i = 0; i < up.n; i++) {
                        json_object *m = json_object_new_object();
                        add(m, "harness", json_object_new_string(up.v[i].tool));
                        add(m, "provider", json_object_new_string(up.v[i].provider));
                        add(m, "model", json_object_new_string(up.v[i].model));
                        add(m, "rows", json_object_new_int64((int64_t)up.v[i].rows));
                        json_object_array_add(arr, m);
                }
        }
        free(up.v);
        add(o, "unpriced_rows", json_object_new_int64((int64_t)up.total));
        add(o, "unpriced_by_model", arr);
        if (p && p->repriced) {
                json_object *lr = json_object_new_object();
                add(lr, "rows_seen", json_object_new_int64((int64_t)p->last.rows_seen));
                add(lr, "rows_changed", json_object_new_int64((int64_t)p->last.rows_changed));
                add(lr, "cost_delta_nano", json_object_new_int64(p->last.cost_delta_nano));
                add(o, "last_reprice", lr);
        } else {
                add(o, "last_reprice", NULL);
        }
        return o;
}

int prices_reprice_command(struct prices *p, struct ledger *l, struct json_object **ret_result,
                           const char **ret_code, const char **ret_error)
{
        struct reprice_result res;
        json_object *o;
        int r;

        if (!p) {
                *ret_code = "internal";
                *ret_error = "no price table loaded (see the journal)";
                return -ENOENT;
        }
        (void)prices_reload(p); /* an edited override counts now */
        r = prices_reprice(p, l, &res);
        if (r < 0) {
                *ret_code = "internal";
                *ret_error = "repricing failed (see the journal)";
                return r;
        }
        o = json_object_new_object();
        add(o, "table", json_object_new_string(p->table->checked));
        add(o, "override_loaded", json_object_new_boolean(p->table->override_loaded));
        add(o, "override_error", str_or_null(p->table->override_error));
        add(o, "rows_seen", json_object_new_int64((int64_t)res.rows_seen));
        add(o, "rows_changed", json_object_new_int64((int64_t)res.rows_changed));
        add(o, "cost_delta_nano", json_object_new_int64(res.cost_delta_nano));
        *ret_result = o;
        return 0;
}
