/* The latest rate-limit snapshot per root, in the meta db under
 * "limits/<root path>" as limits.h text: written in the same transaction as
 * the rows of the lines that carried it, never replaced by an older one. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ledger/internal.h"
#include "ratelimits.h"

#define LIMITS_PREFIX "limits/"
#define LIMITS_KEY_MAX 480 /* below LMDB's 511-byte key limit */
#define LIMITS_TEXT_MAX 1024
#define LIMITS_END 0x7fffffff /* the scan passed the last "limits/" key */

static size_t limits_key(const char *scope, char key[LIMITS_KEY_MAX + 1])
{
        int n = snprintf(key, LIMITS_KEY_MAX + 1, LIMITS_PREFIX "%s", scope);

        if (n < 0 || n > LIMITS_KEY_MAX)
                n = snprintf(key, LIMITS_KEY_MAX + 1, LIMITS_PREFIX "#%016llx",
                             (unsigned long long)hash64(scope, strlen(scope)));
        return (size_t)n;
}

int ledger_limits_put(struct ledger *l, MDB_txn *txn, const char *scope,
                      const struct rate_limits *rl)
{
        char key[LIMITS_KEY_MAX + 1], text[LIMITS_TEXT_MAX], old[LIMITS_TEXT_MAX];
        MDB_val k = { .mv_size = limits_key(scope, key), .mv_data = key }, v;
        struct rate_limits prev;
        int rc, r;

        rc = mdb_get(txn, l->dbi[DB_META], &k, &v);
        if (rc == 0 && v.mv_size < sizeof(old)) {
                memcpy(old, v.mv_data, v.mv_size);
                old[v.mv_size] = 0;
                if (limits_parse(old, &prev) == 0 && prev.observed_ms > rl->observed_ms)
                        return 0; /* a re-read of older lines */
        } else if (rc != 0 && rc != MDB_NOTFOUND) {
                return ledger_fail(l, rc);
        }
        r = limits_format(rl, text, sizeof(text));
        if (r < 0)
                return r;
        v.mv_size = strlen(text);
        v.mv_data = text;
        return ledger_fail(l, mdb_put(txn, l->dbi[DB_META], &k, &v, 0));
}

struct limits_scan {
        int (*cb)(const char *scope, const struct rate_limits *rl, void *u);
        void *u;
};

static int limits_entry_fn(const MDB_val *k, const MDB_val *v, void *ctx)
{
        struct limits_scan *s = ctx;
        const size_t plen = strlen(LIMITS_PREFIX);
        char scope[LIMITS_KEY_MAX + 1], text[LIMITS_TEXT_MAX];
        struct rate_limits rl;

        if (k->mv_size < plen || memcmp(k->mv_data, LIMITS_PREFIX, plen) != 0)
                return LIMITS_END; /* past the prefix */
        if (k->mv_size - plen > LIMITS_KEY_MAX || v->mv_size >= sizeof(text))
                return 0;
        memcpy(scope, (const char *)k->mv_data + plen, k->mv_size - plen);
        scope[k->mv_size - plen] = 0;
        memcpy(text, v->mv_data, v->mv_size);
        text[v->mv_size] = 0;
        if (limits_parse(text, &rl) < 0)
                return 0;
        return s->cb(scope, &rl, s->u);
}

int ledger_foreach_limits(struct ledger *l,
                          int (*cb)(const char *scope, const struct rate_limits *rl, void *u),
                          void *u)
{
        struct limits_scan s = { cb, u };
        MDB_val start = { .mv_size = strlen(LIMITS_PREFIX), .mv_data = (void *)LIMITS_PREFIX };
        int r = ledger_scan(l, DB_META, &start, limits_entry_fn, &s);

        return r == LIMITS_END ? 0 : r;
}
