/* A source state (adapter.h struct source_state) in memory for the table
 * adapters' unit tests: what the daemon keeps in the ledger, each put
 * applied at once (as a commit of the read would). */
#pragma once

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "adapter.h"

struct mem_state_item {
        size_t key_len, value_len;
        unsigned char key[SRC_STATE_KEY_MAX], value[SRC_STATE_VALUE_MAX];
};

struct mem_state {
        struct mem_state_item *v;
        size_t n, cap;
        size_t puts; /* puts since made: writes a read caused */
        struct source_state iface;
};

static inline int mem_state_get(void *u, const void *key, size_t key_len, void *ret_value, size_t cap,
                                size_t *ret_len)
{
        struct mem_state *m = u;

        for (size_t i = 0; i < m->n; i++)
                if (m->v[i].key_len == key_len && memcmp(m->v[i].key, key, key_len) == 0) {
                        memcpy(ret_value, m->v[i].value, m->v[i].value_len < cap ? m->v[i].value_len : cap);
                        *ret_len = m->v[i].value_len;
                        return 0;
                }
        return -ENOENT;
}

static inline int mem_state_put(void *u, const void *key, size_t key_len, const void *value, size_t value_len)
{
        struct mem_state *m = u;
        size_t i;

        if (key_len == 0 || key_len > SRC_STATE_KEY_MAX || value_len == 0 || value_len > SRC_STATE_VALUE_MAX)
                return -EINVAL;
        for (i = 0; i < m->n; i++)
                if (m->v[i].key_len == key_len && memcmp(m->v[i].key, key, key_len) == 0)
                        break;
        if (i == m->n) {
                if (m->n == m->cap) {
                        size_t cap = m->cap ? m->cap * 2 : 64;
                        struct mem_state_item *v = realloc(m->v, cap * sizeof(*v));
                        if (!v)
                                return -ENOMEM;
                        m->v = v;
                        m->cap = cap;
                }
                m->n++;
        }
        m->v[i].key_len = key_len;
        memcpy(m->v[i].key, key, key_len);
        m->v[i].value_len = value_len;
        memcpy(m->v[i].value, value, value_len);
        m->puts++;
        return 0;
}

static inline void mem_state_init(struct mem_state *m)
{
        *m = (struct mem_state){ 0 };
        m->iface = (struct source_state){ .get = mem_state_get, .put = mem_state_put, .u = m };
}

static inline void mem_state_free(struct mem_state *m)
{
        free(m->v);
        mem_state_init(m);
}

/* A deep copy (the state as of a moment, for a read replayed from it). */
static inline struct mem_state mem_state_copy(const struct mem_state *m)
{
        struct mem_state c;

        mem_state_init(&c);
        c.v = malloc((m->cap ? m->cap : 1) * sizeof(*c.v));
        if (!c.v)
                abort();
        memcpy(c.v, m->v, m->n * sizeof(*c.v));
        c.n = m->n;
        c.cap = m->cap ? m->cap : 1;
        return c;
}
