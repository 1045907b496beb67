/* Gemini CLI's older session-*.json documents, read with the streaming
 * scanner: the top-level object by hand (so its messages array can be
 * entered past the messages already parsed), each message through the
 * record scanner both generations share. */
#include <errno.h>
#include <string.h>
#include <xxhash.h>

#include "gemini/doc.h"
#include "gemini/msg.h"

struct doc_scan {
        const char *doc;
        const struct source_ctx *ctx;
        struct parse_state *ps;
        struct gm_state *st;
        struct row_batch *out;
        struct gm_msg_f m;
        /* ends (offsets just after '}') of the last two messages and how
         * many messages the array holds up to each; 0: none */
        size_t last_end, prev_end;
        uint32_t last_n, prev_n;
        size_t arr_start;
        bool resumed;
        /* the hash of the messages from arr_start up to hashed_to, streamed
         * (the same value as hash64 of those bytes), so checking the known
         * region and hashing the next one read its bytes once */
        XXH3_state_t *h;
        size_t hashed_to;
        int err; /* a negative errno */
};

static void element_done(struct doc_scan *d, size_t end)
{
        d->prev_end = d->last_end;
        d->prev_n = d->last_n;
        d->last_end = end;
        d->last_n++;
}

/* The messages array, s at '['. The first array of a document may resume
 * after the region the state holds when those bytes are the same. */
static bool scan_messages(struct jscan *s, struct doc_scan *d, bool first)
{
        const struct gm_state *st = d->st;
        bool resume = false;

        s->p++;
        d->arr_start = (size_t)(s->p - d->doc);
        if (first && (st->flags & GM_REGION) && st->region_len > 0 &&
            st->region_len <= (size_t)(s->end - s->p)) {
                if (!d->h && !(d->h = XXH3_createState())) {
                        d->err = -ENOMEM;
                        return false;
                }
                (void)XXH3_64bits_reset(d->h);
                (void)XXH3_64bits_update(d->h, s->p, st->region_len);
                resume = XXH3_64bits_digest(d->h) == st->region_hash;
        }
        if (resume) {
                d->hashed_to = d->arr_start + st->region_len;
                s->p += st->region_len;
                d->last_end = (size_t)(s->p - d->doc);
                d->last_n = st->region_msgs;
                d->resumed = true;
                jscan_ws(s);
                if (jscan_at(s, ']')) {
                        s->p++;
                        return true;
                }
                if (!jscan_at(s, ','))
                        return false;
                s->p++;
        } else {
                jscan_ws(s);
                if (jscan_at(s, ']')) {
                        s->p++;
                        return true;
                }
        }
        for (;;) {
                jscan_ws(s);
                if (jscan_at(s, '{')) {
                        if (!gm_scan_record(s, &d->m, 2))
                                return false;
                        int r = gm_emit(d->ctx, d->ps, d->st, &d->m, d->out);
                        if (r < 0) {
                                d->err = r;
                                return false;
                        }
                } else if (!jscan_skip(s, 1)) {
                        return false;
                }
                element_done(d, (size_t)(s->p - d->doc));
                jscan_ws(s);
                if (jscan_at(s, ']')) {
                        s->p++;
                        return true;
                }
                if (!jscan_at(s, ','))
                        return false;
                s->p++;
        }
}

/* The top-level object; false when it is not whole valid JSON. */
static bool scan_document(struct jscan *s, struct doc_scan *d, struct jscan_span *sid, struct jscan_span *hash,
                          struct jscan_span *kind, int *ret_arrays)
{
        struct jscan_span key;
        int arrays = 0;

        s->p++; /* '{' */
        jscan_ws(s);
        if (jscan_at(s, '}')) {
                s->p++;
                goto end;
        }
        for (;;) {
                jscan_ws(s);
                if (!jscan_at(s, '"') || !jscan_string(s, &key))
                        return false;
                jscan_ws(s);
                if (!jscan_at(s, ':'))
                        return false;
                s->p++;
                jscan_ws(s);
                bool good;
                if (JSCAN_KEY_IS(&key, "messages") && jscan_at(s, '[')) {
                        good = scan_messages(s, d, arrays == 0);
                        arrays++;
                } else if (JSCAN_KEY_IS(&key, "sessionId")) {
                        good = jscan_read_str(s, sid, 0);
                } else if (JSCAN_KEY_IS(&key, "projectHash")) {
                        good = jscan_read_str(s, hash, 0);
                } else if (JSCAN_KEY_IS(&key, "kind")) {
                        good = jscan_read_str(s, kind, 0);
                } else {
                        good = jscan_skip(s, 0); /* startTime, lastUpdated, summary, directories */
                }
                if (!good)
                        return false;
                jscan_ws(s);
                if (jscan_at(s, '}')) {
                        s->p++;
                        break;
                }
                if (!jscan_at(s, ','))
                        return false;
                s->p++;
        }
end:
        jscan_ws(s);
        *ret_arrays = arrays;
        return s->p == s->end;
}

int gemini_parse_document(const struct source_ctx *ctx, struct parse_state *ps_io, const char *doc,
                          size_t len, size_t *io_known, struct row_batch *out)
{
        struct parse_state ps = *ps_io;
        struct gm_state st;
        struct jscan s = { doc, doc + len };
        struct jscan_span sid = { 0 }, hash = { 0 }, kind = { 0 };
        size_t n0 = out->n;
        int arrays = 0;
        struct doc_scan d;

        memset(&d, 0, sizeof(d));
        gm_state_load(&ps, &st);
        ps.flags &= ~PS_NOT_SOURCE; /* each version is judged anew */
        d.doc = doc;
        d.ctx = ctx;
        d.ps = &ps;
        d.st = &st;
        d.out = out;
        jscan_ws(&s);
        if (s.p == s.end)
                return PARSE_INCOMPLETE; /* truncated for the next write */
        if (*s.p != '{')
                return PARSE_NOT_SOURCE;
        if (!scan_document(&s, &d, &sid, &hash, &kind, &arrays)) {
                out->n = n0;
                XXH3_freeState(d.h);
                /* torn (the writer truncates, then writes): read again
                 * shortly; the daemon calls it malformed once it stays so */
                return d.err < 0 ? d.err : PARSE_INCOMPLETE;
        }
        if (!sid.p || sid.n == 0) {
                out->n = n0;
                XXH3_freeState(d.h);
                return arrays ? PARSE_MALFORMED : PARSE_NOT_SOURCE;
        }
        ps.flags |= PS_HEADER_SEEN;
        gm_identify(ctx, &ps, &st, &sid, &hash, &kind);
        /* the members may come in any order: the rows get the file's
         * session, project and sub-agent mark now that all are known */
        for (size_t i = n0; i < out->n; i++) {
                struct usage_row *r = &out->rows[i];
                ROW_SET(r->session, ps.session);
                ROW_SET(r->project, ps.project);
                if (st.flags & GM_SUBAGENT)
                        r->flags |= ROW_F_SIDECHAIN;
        }
        /* remember the messages before the last one: a rewrite that keeps
         * them is not read through them again */
        if (d.prev_end > d.arr_start && arrays == 1) {
                st.flags |= GM_REGION;
                st.region_start = d.arr_start;
                st.region_len = d.prev_end - d.arr_start;
                if (d.resumed && d.prev_end >= d.hashed_to) {
                        (void)XXH3_64bits_update(d.h, doc + d.hashed_to, d.prev_end - d.hashed_to);
                        st.region_hash = XXH3_64bits_digest(d.h);
                } else {
                        st.region_hash = hash64(doc + d.arr_start, st.region_len);
                }
                st.region_msgs = d.prev_n;
        } else {
                st.flags &= (uint8_t)~GM_REGION;
        }
        /* no prefix of the file is worth the daemon's keeping: lastUpdated,
         * near the top, differs in every version (the region above is
         * what lets a rewrite skip the messages) */
        *io_known = 0;
        XXH3_freeState(d.h);
        gm_state_save(&st, &ps);
        *ps_io = ps;
        return PARSE_OK;
}
