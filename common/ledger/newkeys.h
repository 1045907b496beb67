/* Private to the ledger (ledger/store.c, ledger/backlog.c): the content keys
 * of rows not yet in db rowkeys (the index's backlog), kept in memory until
 * they go in together, and a Bloom filter of every content key the ledger
 * holds.
 *
 * A scan inserts rows under content keys that are hashes: looking each one
 * up in db rowkeys and inserting it there as it comes walks a random leaf of
 * that B-tree per row (a cache miss per level, a page copied per leaf per
 * group commit); it was a third of the writer's time in a dense scan. With
 * these, a key the filter has never seen is new without a lookup, and the
 * keys go into rowkeys together in key order, each leaf visited once while
 * it is hot. */
#pragma once

#include <lmdb.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "row.h"

struct newkey {
        struct row_key key;
        uint64_t id;
};

struct newkeys {
        /* the backlog's keys, in insertion order */
        struct newkey *v;
        size_t n, cap;
        uint32_t *order;   /* newkeys_sort: v's indexes in key order (n of them) */
        size_t order_cap;
        uint32_t *buckets; /* its counts, kept between sorts */
        size_t nbuckets;
        uint32_t *slot; /* open addressing over v: index + 1, 0 = empty */
        size_t nslot;   /* a power of two, at least twice n */
        /* the Bloom filter: every key in rowkeys and in v when complete */
        uint64_t *bits;
        size_t nbits;    /* a power of two */
        size_t n_keys;   /* keys added since it was (re)built */
        size_t cap_keys; /* keys it was sized for: beyond, it is built again */
        bool complete;
};

/* The largest filter (4 MB): a ledger of more keys than this looks each one
 * up again, as it did without the filter. */
#define NEWKEYS_FILTER_MAX_KEYS (2u << 20)

/* false: key is certainly in neither rowkeys nor the backlog (only when
 * the filter is complete; otherwise always true). */
bool newkeys_maybe_known(const struct newkeys *nk, const struct row_key *key);
/* The backlog's key key: true and its row id. */
bool newkeys_find(const struct newkeys *nk, const struct row_key *key, uint64_t *ret_id);
/* key (not among them) under id: 0, or -ENOMEM (then nothing was kept). */
int newkeys_add(struct newkeys *nk, const struct row_key *key, uint64_t id);
/* The new keys' order by key (memcmp order, rowkeys' order): 0 and
 * order[0..n) index v, or -ENOMEM. v itself does not move. */
int newkeys_sort(struct newkeys *nk);
/* Keys from..to of the key order (newkeys_sort; sorted false: of v as they
 * came) into dbi, key -> 8-byte big-endian row id, none overwriting. A key
 * there under the same row id counts as written (a write cut short before
 * it wrote it); one under another id stays as it is, counted in
 * *io_conflicts. 0 or LMDB's error. */
int newkeys_write_range(const struct newkeys *nk, bool sorted, size_t from, size_t to, MDB_txn *txn,
                        MDB_dbi dbi, size_t *io_conflicts);
/* Forgets the keys (written into rowkeys, or their txn aborted: the filter
 * keeps them, which only makes it answer "maybe" more often). */
void newkeys_clear(struct newkeys *nk);
/* An empty filter sized for keys keys (-ENOMEM: none, not complete);
 * complete once the caller added every key the ledger holds. */
int newkeys_filter_reset(struct newkeys *nk, size_t keys);
void newkeys_filter_add(struct newkeys *nk, const struct row_key *key);
/* Whether n_keys outgrew the filter (built again, larger, before its next use). */
bool newkeys_filter_full(const struct newkeys *nk);
void newkeys_free(struct newkeys *nk);
