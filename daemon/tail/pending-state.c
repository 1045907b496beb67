/* A table read's source states, pending until its commit (pending-state.h). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "tail/pending-state.h"

_Static_assert(SRC_STATE_KEY_MAX == SOURCE_STATE_KEY_MAX && SRC_STATE_VALUE_MAX == SOURCE_STATE_VALUE_MAX,
               "the adapters' bounds are the ledger's");

static int get(void *u, const void *key, size_t key_len, void *ret_value, size_t cap, size_t *ret_len)
{
        struct pending_states *p = u;

        if (key_len == 0 || key_len > SRC_STATE_KEY_MAX)
                return -EINVAL;
        /* the latest put of the key wins: search from the end */
        for (size_t i = p->n; i-- > 0;) {
                const struct pending_state_item *it = &p->items[i];
                if (it->key_len != key_len || memcmp(p->bytes + it->off, key, key_len) != 0)
                        continue;
                memcpy(ret_value, p->bytes + it->off + key_len, it->value_len < cap ? it->value_len : cap);
                *ret_len = it->value_len;
                return 0;
        }
        return ledger_get_source_state(p->ledger, p->path, key, key_len, ret_value, cap, ret_len);
}

static int put(void *u, const void *key, size_t key_len, const void *value, size_t value_len)
{
        struct pending_states *p = u;
        size_t need = key_len + value_len;

        if (key_len == 0 || key_len > SRC_STATE_KEY_MAX || value_len == 0 || value_len > SRC_STATE_VALUE_MAX)
                return -EINVAL;
        if (p->n == p->cap) {
                size_t cap = p->cap ? p->cap * 2 : 64;
                struct pending_state_item *v = realloc(p->items, cap * sizeof(*v));
                if (!v)
                        return -ENOMEM;
                p->items = v;
                p->cap = cap;
        }
        if (p->used + need > p->bytes_cap) {
                size_t cap = p->bytes_cap ? p->bytes_cap : 4096;
                while (cap < p->used + need)
                        cap *= 2;
                uint8_t *b = realloc(p->bytes, cap);
                if (!b)
                        return -ENOMEM;
                p->bytes = b;
                p->bytes_cap = cap;
        }
        memcpy(p->bytes + p->used, key, key_len);
        memcpy(p->bytes + p->used + key_len, value, value_len);
        p->items[p->n++] = (struct pending_state_item){ .off = p->used, .key_len = key_len, .value_len = value_len };
        p->used += need;
        return 0;
}

void pending_states_init(struct pending_states *p, struct ledger *l, const char *path)
{
        *p = (struct pending_states){ .ledger = l, .path = path };
        p->iface = (struct source_state){ .get = get, .put = put, .u = p };
}

int pending_states_view(struct pending_states *p, const struct source_state_entry **ret_entries)
{
        if (p->n > p->view_cap) {
                struct source_state_entry *v = realloc(p->view, p->n * sizeof(*v));
                if (!v)
                        return -ENOMEM;
                p->view = v;
                p->view_cap = p->n;
        }
        for (size_t i = 0; i < p->n; i++) {
                const struct pending_state_item *it = &p->items[i];
                p->view[i] = (struct source_state_entry){ .key = p->bytes + it->off, .key_len = it->key_len,
                                                          .value = p->bytes + it->off + it->key_len,
                                                          .value_len = it->value_len };
        }
        *ret_entries = p->view;
        return 0;
}

void pending_states_clear(struct pending_states *p)
{
        p->n = 0;
        p->used = 0;
}

void pending_states_free(struct pending_states *p)
{
        free(p->items);
        free(p->bytes);
        free(p->view);
        pending_states_init(p, p->ledger, p->path);
}
