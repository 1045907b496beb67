/* The OpenCode and Kilo figures of `status` (adapter.status_extra): per
 * database, the message rows read, the assistant rows still waiting for
 * their final tokens, and the watermarks (the highest message rowid read,
 * and how far the event change feed was read), all from the database's
 * own checkpoint: no database is opened for status; and why the last read
 * of a database failed (corrupt, locked, a schema we do not know). */
#include <errno.h>
#include <json-c/json.h>
#include <stdio.h>
#include <string.h>

#include "adapt-sqlite.h"
#include "ledger/ledger.h"
#include "opencode/opencode.h"

struct json_object *ocode_status(const struct adapter_status_ctx *ctx)
{
        json_object *arr = json_object_new_array(), *res = json_object_new_object();
        struct adapter_source_view v;

        while (arr && ctx->next(ctx->it, &v)) {
                struct ocode_db_figures f;
                struct parse_state ps;
                char path[4096];
                json_object *d;

                bool read = v.cp && v.cp->state_len && parse_state_decode(v.cp->state, v.cp->state_len, &ps) == 0 &&
                            ocode_db_figures(&ps, v.cp->offset, &f) == 0;
                bool failing = v.last_error && v.last_error != -ENOENT;

                if (v.kind != CLASS_TABLE || (read && f.not_ours) || (!read && !failing))
                        continue;
                if (!read)
                        f = (struct ocode_db_figures){ 0 }; /* never read whole: only its error */
                /* a path is user text: nothing a terminal acts on */
                snprintf(path, sizeof(path), "%s", v.path);
                for (char *c = path; *c; c++)
                        if ((unsigned char)*c < 0x20 || *c == 0x7f)
                                *c = '?';
                d = json_object_new_object();
                json_object_object_add(d, "path", json_object_new_string(path));
                json_object_object_add(d, "rows_read", json_object_new_int64((int64_t)f.rows_read));
                json_object_object_add(d, "waiting", json_object_new_int64(f.waiting));
                json_object_object_add(d, "waiting_more", json_object_new_boolean(f.waiting_more));
                json_object_object_add(d, "watermark", json_object_new_int64((int64_t)f.watermark));
                json_object_object_add(d, "event_watermark", json_object_new_int64((int64_t)f.event_mark));
                json_object_object_add(d, "error",
                                       failing ? json_object_new_string(adapt_db_strerror(v.last_error)) : NULL);
                json_object_array_add(arr, d);
        }
        json_object_object_add(res, "databases", arr);
        return res;
}
