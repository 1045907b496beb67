/* A write txn's new content keys and the ledger's Bloom filter of every
 * content key (ledger-newkeys.h): plain memory, and the keys' one write
 * into the index. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "binio.h"
#include "ledger-newkeys.h"

#define FILTER_PROBES 7        /* with 10 bits a key: about 1% "maybe" for a new key */
#define FILTER_BITS_PER_KEY 10
#define FILTER_MIN_BITS (1u << 16)

static uint64_t load64(const uint8_t *p)
{
        uint64_t v;
        memcpy(&v, p, sizeof(v));
        return v;
}

/* splitmix64's finalizer: the keys are hashes already, but a test's or a
 * damaged ledger's need not be */
static uint64_t mix(uint64_t x)
{
        x ^= x >> 30;
        x *= 0xbf58476d1ce4e5b9ULL;
        x ^= x >> 27;
        x *= 0x94d049bb133111ebULL;
        return x ^ (x >> 31);
}

static void probes(const struct row_key *key, uint64_t *ret_h1, uint64_t *ret_h2)
{
        *ret_h1 = mix(load64(key->b));
        *ret_h2 = mix(load64(key->b + 8)) | 1; /* odd: the probes differ */
}

bool newkeys_maybe_known(const struct newkeys *nk, const struct row_key *key)
{
        uint64_t h1, h2, m = nk->nbits - 1;

        if (!nk->complete)
                return true;
        probes(key, &h1, &h2);
        for (int i = 0; i < FILTER_PROBES; i++, h1 += h2)
                if (!(nk->bits[(h1 & m) >> 6] & (1ULL << (h1 & 63))))
                        return false;
        return true;
}

void newkeys_filter_add(struct newkeys *nk, const struct row_key *key)
{
        uint64_t h1, h2, m = nk->nbits - 1;

        if (!nk->bits)
                return;
        probes(key, &h1, &h2);
        for (int i = 0; i < FILTER_PROBES; i++, h1 += h2)
                nk->bits[(h1 & m) >> 6] |= 1ULL << (h1 & 63);
        nk->n_keys++;
}

int newkeys_filter_reset(struct newkeys *nk, size_t keys)
{
        size_t nbits = FILTER_MIN_BITS;

        free(nk->bits);
        nk->bits = NULL;
        nk->nbits = nk->n_keys = nk->cap_keys = 0;
        nk->complete = false;
        if (keys > NEWKEYS_FILTER_MAX_KEYS)
                return -E2BIG;
        while (nbits / FILTER_BITS_PER_KEY < keys)
                nbits *= 2;
        nk->bits = calloc(nbits / 64, sizeof(uint64_t));
        if (!nk->bits)
                return -ENOMEM;
        nk->nbits = nbits;
        nk->cap_keys = nbits / FILTER_BITS_PER_KEY;
        return 0;
}

bool newkeys_filter_full(const struct newkeys *nk)
{
        return nk->n_keys > nk->cap_keys;
}

static size_t slot_of(const struct newkeys *nk, const struct row_key *key)
{
        return (size_t)mix(load64(key->b) ^ load64(key->b + 8)) & (nk->nslot - 1);
}

bool newkeys_find(const struct newkeys *nk, const struct row_key *key, uint64_t *ret_id)
{
        if (!nk->n)
                return false;
        for (size_t s = slot_of(nk, key); nk->slot[s]; s = (s + 1) & (nk->nslot - 1)) {
                const struct newkey *e = &nk->v[nk->slot[s] - 1];
                if (memcmp(e->key.b, key->b, ROW_KEY_SIZE) == 0) {
                        *ret_id = e->id;
                        return true;
                }
        }
        return false;
}

static void slot_put(struct newkeys *nk, size_t index)
{
        size_t s = slot_of(nk, &nk->v[index].key);

        while (nk->slot[s])
                s = (s + 1) & (nk->nslot - 1);
        nk->slot[s] = (uint32_t)(index + 1);
}

int newkeys_add(struct newkeys *nk, const struct row_key *key, uint64_t id)
{
        if (nk->n == nk->cap) {
                size_t cap = nk->cap ? nk->cap * 2 : 1024;
                struct newkey *v = cap < UINT32_MAX ? reallocarray(nk->v, cap, sizeof(*v)) : NULL;
                if (!v)
                        return -ENOMEM;
                nk->v = v;
                nk->cap = cap;
        }
        if (2 * (nk->n + 1) > nk->nslot) {
                size_t nslot = nk->nslot ? nk->nslot * 2 : 2048;
                uint32_t *slot = calloc(nslot, sizeof(*slot));
                if (!slot)
                        return -ENOMEM;
                free(nk->slot);
                nk->slot = slot;
                nk->nslot = nslot;
                for (size_t i = 0; i < nk->n; i++)
                        slot_put(nk, i);
        }
        nk->v[nk->n] = (struct newkey){.key = *key, .id = id};
        slot_put(nk, nk->n++);
        return 0;
}

/* memcmp order: the first 8 bytes as a big-endian number decide nearly
 * always (the keys are hashes) */
static int key_cmp(const void *a, const void *b)
{
        const uint8_t *x = ((const struct newkey *)a)->key.b, *y = ((const struct newkey *)b)->key.b;
        uint64_t hx = be64_get(x), hy = be64_get(y);

        if (hx != hy)
                return hx < hy ? -1 : 1;
        return memcmp(x + 8, y + 8, ROW_KEY_SIZE - 8);
}

/* Empties the slots of v's entries (not the whole table: after a scan's
 * group it is large, and most commits hold one key). */
static void slots_clear(struct newkeys *nk)
{
        for (size_t i = 0; i < nk->n; i++) {
                size_t s = slot_of(nk, &nk->v[i].key);
                while (nk->slot[s] != i + 1)
                        s = (s + 1) & (nk->nslot - 1);
                nk->slot[s] = 0;
        }
        /* an entry's chain may have passed a slot emptied before it: none
         * is looked up again before the table is empty */
}

void newkeys_sort(struct newkeys *nk)
{
        if (nk->n < 2)
                return;
        slots_clear(nk);
        qsort(nk->v, nk->n, sizeof(*nk->v), key_cmp);
        for (size_t i = 0; i < nk->n; i++)
                slot_put(nk, i);
}

int newkeys_write(struct newkeys *nk, MDB_txn *txn, MDB_dbi dbi)
{
        uint8_t ib[8];
        MDB_cursor *c;
        int rc;

        newkeys_sort(nk);
        rc = mdb_cursor_open(txn, dbi, &c);
        if (rc)
                return rc;
        for (size_t i = 0; i < nk->n && rc == 0; i++) {
                MDB_val k = {.mv_size = ROW_KEY_SIZE, .mv_data = nk->v[i].key.b},
                        v = {.mv_size = sizeof(ib), .mv_data = ib};
                be64_put(ib, nk->v[i].id);
                rc = mdb_cursor_put(c, &k, &v, MDB_NOOVERWRITE);
        }
        mdb_cursor_close(c);
        return rc;
}

void newkeys_clear(struct newkeys *nk)
{
        slots_clear(nk);
        nk->n = 0;
}

void newkeys_free(struct newkeys *nk)
{
        free(nk->v);
        free(nk->slot);
        free(nk->bits);
        *nk = (struct newkeys){0};
}
