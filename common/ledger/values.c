/* The activity db's value (a tool call: the row that paid for it, its
 * time, its number, harness and name), written by a commit and read back
 * by reports and the team outbox: one codec below both. */
#include <errno.h>
#include <string.h>

#include "binio.h"
#include "ledger/internal.h"

int ledger_activity_encode(const struct activity_entry *e, uint8_t *buf, size_t cap, size_t *ret_len)
{
        struct bw w = {.p = buf, .cap = cap};

        bw_u8(&w, VALUE_VERSION);
        bw_bytes(&w, e->usage_key.b, ROW_KEY_SIZE);
        bw_u64(&w, (uint64_t)e->time_ms);
        bw_u32(&w, e->index);
        bw_str(&w, e->tool, sizeof(e->tool));
        bw_str(&w, e->name, sizeof(e->name));
        if (w.overflow)
                return -ENOBUFS;
        *ret_len = w.len;
        return 0;
}

int ledger_activity_decode(const MDB_val *v, struct activity_entry *e)
{
        struct br r = {.p = v->mv_data, .len = v->mv_size};
        const uint8_t *key;

        memset(e, 0, sizeof(*e));
        if (br_u8(&r) != VALUE_VERSION)
                return -EBADMSG;
        key = br_take(&r, ROW_KEY_SIZE);
        if (key)
                memcpy(e->usage_key.b, key, ROW_KEY_SIZE);
        e->time_ms = (int64_t)br_u64(&r);
        e->index = br_u32(&r);
        br_str(&r, e->tool, sizeof(e->tool));
        br_str(&r, e->name, sizeof(e->name));
        return r.bad || r.pos != r.len ? -EBADMSG : 0;
}
