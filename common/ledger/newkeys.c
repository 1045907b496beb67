/* The index's backlog of content keys and the ledger's Bloom filter of
 * every content key (ledger/newkeys.h): plain memory, and the keys' one
 * write into the index. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "binio.h"
#include "ledger/newkeys.h"

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

static int index_cmp(const void *a, const void *b, void *u)
{
        const struct newkey *v = u;
        return key_cmp(&v[*(const uint32_t *)a], &v[*(const uint32_t *)b]);
}

/* o[lo..hi) of v's indexes, put in key order by insertion (a few of them) */
static void insertion_sort(uint32_t *o, size_t lo, size_t hi, const struct newkey *v)
{
        for (size_t i = lo + 1; i < hi; i++) {
                uint32_t x = o[i];
                size_t j = i;
                while (j > lo && key_cmp(&v[o[j - 1]], &v[x]) > 0) {
                        o[j] = o[j - 1];
                        j--;
                }
                o[j] = x;
        }
}

/* The keys are hashes: counted into buckets by their top bits (about two
 * keys a bucket), each bucket then put in order by insertion; a bucket that
 * is not small (keys that are not hashes) by qsort_r. Indexes move, the
 * 24-byte entries and their hash slots do not (qsort of v and rebuilding
 * the slots was 4% of a dense scan's samples, all on the ledger's writer). */
int newkeys_sort(struct newkeys *nk)
{
        unsigned bits = 4;
        size_t nb;

        while (bits < 16 && ((size_t)1 << bits) < nk->n / 2)
                bits++;
        nb = ((size_t)1 << bits) + 1;
        if (nk->order_cap < nk->n) {
                uint32_t *o = reallocarray(nk->order, nk->n, sizeof(*o));
                if (!o)
                        return -ENOMEM;
                nk->order = o;
                nk->order_cap = nk->n;
        }
        if (nk->nbuckets < nb) {
                uint32_t *c = reallocarray(nk->buckets, nb, sizeof(*c));
                if (!c)
                        return -ENOMEM;
                nk->buckets = c;
                nk->nbuckets = nb;
        }
        uint32_t *start = nk->buckets;
        memset(start, 0, nb * sizeof(*start));
        for (size_t i = 0; i < nk->n; i++)
                start[(be64_get(nk->v[i].key.b) >> (64 - bits)) + 1]++;
        for (size_t b = 1; b < nb; b++)
                start[b] += start[b - 1];
        /* start[b] is now where bucket b begins; filling moves it to its end,
         * which is where bucket b + 1 begins */
        for (size_t i = 0; i < nk->n; i++)
                nk->order[start[be64_get(nk->v[i].key.b) >> (64 - bits)]++] = (uint32_t)i;
        for (size_t b = 0, lo = 0; b + 1 < nb; lo = start[b], b++) {
                size_t hi = start[b];
                if (hi - lo > 16)
                        qsort_r(nk->order + lo, hi - lo, sizeof(*nk->order), index_cmp, nk->v);
                else
                        insertion_sort(nk->order, lo, hi, nk->v);
        }
        return 0;
}

int newkeys_write_range(const struct newkeys *nk, bool sorted, size_t from, size_t to, MDB_txn *txn,
                       MDB_dbi dbi, size_t *io_conflicts)
{
        uint8_t ib[8];
        MDB_cursor *c;
        int rc = mdb_cursor_open(txn, dbi, &c);

        if (rc)
                return rc;
        for (size_t i = from; i < to && i < nk->n && rc == 0; i++) {
                const struct newkey *e = &nk->v[sorted ? nk->order[i] : i];
                MDB_val k = {.mv_size = ROW_KEY_SIZE, .mv_data = (void *)e->key.b},
                        v = {.mv_size = sizeof(ib), .mv_data = ib};
                be64_put(ib, e->id);
                rc = mdb_cursor_put(c, &k, &v, MDB_NOOVERWRITE);
                if (rc == MDB_KEYEXIST) { /* v is the stored value now */
                        rc = 0;
                        if (v.mv_size != sizeof(ib) || be64_get(v.mv_data) != e->id)
                                (*io_conflicts)++;
                }
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
        free(nk->order);
        free(nk->buckets);
        free(nk->slot);
        free(nk->bits);
        *nk = (struct newkeys){0};
}
