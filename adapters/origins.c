/* Session origins for reports (origins.h): the sessions a report lists,
 * looked up by (harness, session) for each checkpoint under an origin root. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "origins.h"

struct walk {
        const struct root *root;
        struct report_entry **index; /* the rows by (harness, session) */
        size_t n;
};

static int entry_cmp(const char *harness_a, const char *session_a, const struct report_entry *b)
{
        int c = strcmp(harness_a, b->harness);
        return c ? c : strcmp(session_a, b->session);
}

static int index_cmp(const void *a, const void *b)
{
        const struct report_entry *x = *(const struct report_entry *const *)a;
        return entry_cmp(x->harness, x->session, *(const struct report_entry *const *)b);
}

/* Adds label to origin unless it is there already or does not fit. */
static void origin_add(char *origin, size_t cap, const char *label)
{
        size_t len = strlen(origin), n = strlen(label);

        for (const char *p = origin; *p;) {
                size_t k = strcspn(p, ",");
                if (k == n && strncmp(p, label, n) == 0)
                        return;
                p += k;
                p += strspn(p, ", ");
        }
        if (len + (len ? 2 : 0) + n + 1 > cap)
                return;
        if (len) {
                memcpy(origin + len, ", ", 2);
                len += 2;
        }
        memcpy(origin + len, label, n + 1);
}

static int on_checkpoint(const char *path, const struct checkpoint *cp, void *u)
{
        struct walk *w = u;
        struct parse_state ps;
        size_t lo = 0, hi = w->n;

        (void)path;
        if (strcmp(cp->tool, w->root->adapter->id) != 0 ||
            parse_state_decode(cp->state, cp->state_len, &ps) < 0 || !ps.session[0])
                return 0;
        while (lo < hi) {
                size_t mid = lo + (hi - lo) / 2;
                int c = entry_cmp(cp->tool, ps.session, w->index[mid]);
                if (c == 0) {
                        origin_add(w->index[mid]->origin, sizeof(w->index[mid]->origin), w->root->label);
                        return 0;
                }
                if (c < 0)
                        hi = mid;
                else
                        lo = mid + 1;
        }
        return 0;
}

int origins_annotate(struct ledger *l, const struct root_list *roots, struct report_result *res)
{
        struct walk w = { 0 };
        int r = 0;

        if (res->kind != REPORT_SESSION || res->n == 0)
                return 0;
        w.index = calloc(res->n, sizeof(*w.index));
        if (!w.index)
                return -ENOMEM;
        for (size_t i = 0; i < res->n; i++)
                w.index[w.n++] = &res->rows[i];
        qsort(w.index, w.n, sizeof(*w.index), index_cmp);
        for (size_t i = 0; r == 0 && i < roots->n; i++) {
                if (!(roots->v[i].flags & ROOT_F_ORIGIN) || !roots->v[i].adapter || !roots->v[i].label[0])
                        continue;
                w.root = &roots->v[i];
                r = ledger_foreach_checkpoint_under(l, roots->v[i].path, on_checkpoint, &w);
        }
        free(w.index);
        return r;
}

int origins_annotate_cb(void *u, struct report_result *res)
{
        const struct origins_ctx *c = u;

        return origins_annotate(c->ledger, c->roots, res);
}
