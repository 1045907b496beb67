/* Document sources through tail_source, against a real LMDB ledger and real
 * files, with two small adapters of this test's own: a message list
 * ({"session":..,"messages":[{"id":..,"in":..},..]}) that skips the messages
 * of the known prefix, and a cumulative snapshot ({"session":..,"total":..})
 * that turns successive snapshots into deltas. A version read once is not
 * read again; a rewrite that appended parses only what is new; a document
 * caught half-written settles and counts nothing, and once its writer is
 * long gone it is counted malformed once; a replacement by rename is the
 * next version, not a reset; a document over the size limit is counted, not
 * read; a snapshot's deltas sum to its last total, also across a restart. */
#include <errno.h>
#include <stdio.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "binio.h"
#include "json/jscan.h"
#include "ledger/ledger.h"
#include "tail/tail.h"
#include "tap.h"
#include "testutil.h"

static struct ledger *L;
static int parsed; /* messages the list adapter looked at (this test's counter) */

/* ---- the message-list adapter ----------------------------------------------- */

struct list_scan {
        struct jscan_span session;
        const struct source_ctx *ctx;
        struct row_batch *out;
        const char *doc;
        size_t skip_to;     /* elements ending at or before this are known */
        size_t last_end;    /* the end of the last complete element */
        bool failed;
};

static bool list_msg_member(struct jscan *s, const struct jscan_span *key, void *u, int depth)
{
        struct jscan_num *in = u;
        if (JSCAN_KEY_IS(key, "in"))
                return jscan_read_num(s, in, depth);
        return jscan_skip(s, depth);
}

static bool list_msg(struct jscan *s, void *u, int depth)
{
        struct list_scan *ls = u;
        const char *start = s->p;
        struct jscan_num in = { 0 };
        struct jscan_span id = { 0 };

        if ((size_t)(start - ls->doc) < ls->skip_to) {
                /* inside the known prefix: passed over unread */
                if (!jscan_skip(s, depth))
                        return false;
                ls->last_end = (size_t)(s->p - ls->doc);
                return true;
        }
        /* the id is the first member by this format's own rule */
        struct jscan probe = *s;
        if (!jscan_at(&probe, '{'))
                return jscan_skip(s, depth);
        probe.p++;
        jscan_ws(&probe);
        if (jscan_at(&probe, '"')) {
                struct jscan_span k;
                jscan_string(&probe, &k);
                jscan_ws(&probe);
                if (JSCAN_KEY_IS(&k, "id") && jscan_at(&probe, ':')) {
                        probe.p++;
                        jscan_ws(&probe);
                        jscan_read_str(&probe, &id, depth + 1);
                }
        }
        if (!jscan_object(s, list_msg_member, &in, depth + 1))
                return false;
        parsed++;
        ls->last_end = (size_t)(s->p - ls->doc);
        if (!id.p || !in.present)
                return true;
        struct usage_row *r;
        struct keyhash h;
        if (row_batch_push(ls->out, &r) < 0)
                return false;
        memset(r, 0, sizeof(*r));
        keyhash_begin(&h, "test-doc");
        keyhash_bytes(&h, ls->session.p, ls->session.n);
        keyhash_bytes(&h, id.p, id.n);
        keyhash_end(&h, &r->key);
        r->flags = ROW_F_TOKENS_KNOWN | ROW_F_UPSERT;
        r->kind = ROW_KIND_MESSAGE;
        r->time_ms = 1796000000000LL;
        r->input = (uint64_t)in.i;
        r->total = r->input;
        ROW_SET(r->tool, "testdoc");
        jscan_span_set(r->session, sizeof(r->session), &ls->session);
        ROW_SET(r->model, "m");
        return true;
}

static bool list_top(struct jscan *s, const struct jscan_span *key, void *u, int depth)
{
        struct list_scan *ls = u;
        if (JSCAN_KEY_IS(key, "session"))
                return jscan_read_str(s, &ls->session, depth);
        if (JSCAN_KEY_IS(key, "messages") && jscan_at(s, '['))
                return jscan_array(s, list_msg, ls, depth + 1);
        return jscan_skip(s, depth);
}

static int list_parse(const struct source_ctx *ctx, struct parse_state *ps, const char *doc, size_t len,
                      size_t *io_known, struct row_batch *out)
{
        struct list_scan ls = { .ctx = ctx, .out = out, .doc = doc, .skip_to = *io_known };
        struct jscan s = { doc, doc + len };
        size_t n0 = out->n;

        (void)ps;
        jscan_ws(&s);
        if (!jscan_at(&s, '{') || !jscan_object(&s, list_top, &ls, 0)) {
                out->n = n0;
                return PARSE_INCOMPLETE; /* torn, or half-written */
        }
        *io_known = ls.last_end;
        return PARSE_OK;
}

static enum classify_result doc_classify(const char *rel, const char *name, int depth, bool is_dir)
{
        (void)rel;
        (void)name;
        (void)depth;
        return is_dir ? CLASS_DESCEND : CLASS_DOCUMENT;
}

static const struct adapter list_adapter = {
        .id = "testdoc", .classify = doc_classify, .parse_document = list_parse,
};

/* ---- the snapshot adapter ----------------------------------------------------- */

struct snap_fields {
        struct jscan_span session;
        struct jscan_num total;
};

static bool snap_member(struct jscan *s, const struct jscan_span *key, void *u, int depth)
{
        struct snap_fields *f = u;
        if (JSCAN_KEY_IS(key, "session"))
                return jscan_read_str(s, &f->session, depth);
        if (JSCAN_KEY_IS(key, "total"))
                return jscan_read_num(s, &f->total, depth);
        return jscan_skip(s, depth);
}

/* priv: u64 the last total seen */
static int snap_parse(const struct source_ctx *ctx, struct parse_state *ps, const char *doc, size_t len,
                      size_t *io_known, struct row_batch *out)
{
        struct jscan s = { doc, doc + len };
        struct snap_fields f = { 0 };
        uint64_t last = 0, now;

        (void)ctx;
        if (!jscan_at(&s, '{') || !jscan_object(&s, snap_member, &f, 0))
                return PARSE_INCOMPLETE;
        if (!f.total.present || !f.total.is_int || f.total.i < 0)
                return PARSE_MALFORMED;
        now = (uint64_t)f.total.i;
        if (ps->priv_len == 8) {
                struct br r = { ps->priv, 8, 0, false };
                last = br_u64(&r);
        }
        if (now > last) {
                struct usage_row *r;
                struct keyhash h;
                if (row_batch_push(out, &r) < 0)
                        return -ENOMEM;
                memset(r, 0, sizeof(*r));
                keyhash_begin(&h, "test-snap");
                keyhash_bytes(&h, f.session.p, f.session.n);
                keyhash_u64(&h, now);
                keyhash_end(&h, &r->key);
                r->flags = ROW_F_TOKENS_KNOWN;
                r->kind = ROW_KIND_MESSAGE;
                r->time_ms = 1796000000000LL;
                r->input = r->total = now - last;
                ROW_SET(r->tool, "testsnap");
                jscan_span_set(r->session, sizeof(r->session), &f.session);
                ROW_SET(r->model, "m");
        }
        struct bw w = { ps->priv, 0, sizeof(ps->priv), false };
        bw_u64(&w, now);
        ps->priv_len = (uint32_t)w.len;
        *io_known = 0;
        return PARSE_OK;
}

static const struct adapter snap_adapter = {
        .id = "testsnap", .classify = doc_classify, .parse_document = snap_parse,
};

/* ---- driving tail --------------------------------------------------------------- */

static int run(const struct adapter *a, const char *path, size_t max_doc, struct tail_outcome *out)
{
        struct tail_ctx t = { .ledger = L, .limits = TAIL_LIMITS_DEFAULT };
        struct source_ctx ctx = { .adapter = a, .path = path };
        struct tail_outcome o;

        if (max_doc)
                t.limits.max_document = max_doc;
        stat(path, &ctx.st);
        ctx.source_hash = hash64(path, strlen(path));
        return tail_source(&t, &ctx, CLASS_DOCUMENT, out ? out : &o);
}

static uint64_t rows(void)
{
        struct ledger_stats st;
        ledger_get_stats(L, &st);
        return st.rows;
}

static int add_session(const struct session_entry *e, void *u)
{
        usage_sums_add(u, &e->sums);
        return 0;
}

static uint64_t input_sum(void)
{
        struct usage_sums s = { 0 };
        ledger_foreach_session(L, add_session, &s);
        return s.input;
}

/* The message list with messages [0, n), message i holding in = 10 * (i + 1). */
static void write_list(const char *path, int n, bool pretty)
{
        char buf[8192];
        size_t len = (size_t)snprintf(buf, sizeof(buf), "{%s  \"session\": \"s1\",%s  \"messages\": [",
                                      pretty ? "\n" : "", pretty ? "\n" : "");
        for (int i = 0; i < n; i++)
                len += (size_t)snprintf(buf + len, sizeof(buf) - len, "%s%s    {\"id\": \"m%d\", \"in\": %d}",
                                        i ? "," : "", pretty ? "\n" : "", i, 10 * (i + 1));
        len += (size_t)snprintf(buf + len, sizeof(buf) - len, "%s  ],%s  \"kind\": \"main\"%s}\n",
                                pretty ? "\n" : "", pretty ? "\n" : "", pretty ? "\n" : "");
        write_bytes(path, buf, len);
}

static uint64_t list_sum(int n)
{
        return 10ull * (uint64_t)n * (uint64_t)(n + 1) / 2;
}

static void test_list(const char *dir)
{
        char p[PATH_MAX], tmp[PATH_MAX];
        struct tail_outcome out;
        struct checkpoint cp;

        pj(p, dir, "session.json");
        write_list(p, 2, true);
        parsed = 0;
        is_int(run(&list_adapter, p, 0, &out), TAIL_DONE, "a document: read");
        is_int((int)rows(), 2, "  one row per message");
        is_int((int)parsed, 2, "  both messages parsed");
        ok(input_sum() == list_sum(2), "  their tokens");

        parsed = 0;
        is_int(run(&list_adapter, p, 0, &out), TAIL_DONE, "unchanged: nothing to do");
        is_int(parsed, 0, "  not parsed again");
        is_int((int)out.counts.bytes_read, (int)out.size, "  and not read again (bytes read: one version)");

        age_file(p, time(NULL)); /* touched: a new mtime, the same bytes */
        parsed = 0;
        is_int(run(&list_adapter, p, 0, NULL), TAIL_DONE, "touched: read");
        is_int(parsed, 0, "  the same bytes: not parsed");

        /* rewritten in place with one more message: the known prefix holds
         * the first two, so only the new one is parsed */
        write_list(p, 3, true);
        parsed = 0;
        is_int(run(&list_adapter, p, 0, &out), TAIL_DONE, "rewritten in place, one message more");
        is_int((int)rows(), 3, "  one row more");
        is_int(parsed, 1, "  only the new message parsed (the prefix was known)");
        ok(out.reset == 0, "  not a reset");

        /* torn: the writer truncated and has written half of the next version */
        ledger_get_checkpoint(L, p, &cp);
        uint64_t known_before = cp.offset;
        {
                char full[PATH_MAX];
                size_t n = 0;
                pj(full, dir, "next.json");
                write_list(full, 4, true);
                char *text = slurp(full, &n);
                write_bytes(p, text, n / 2);
                is_int(run(&list_adapter, p, 0, &out), TAIL_SETTLING, "torn write: settling");
                is_int((int)rows(), 3, "  nothing counted from half a document");
                ledger_get_checkpoint(L, p, &cp);
                ok(cp.offset == known_before && cp.malformed == 0, "  checkpoint untouched");
                write_bytes(p, text, n); /* the writer finishes */
                is_int(run(&list_adapter, p, 0, NULL), TAIL_DONE, "the rest written: read");
                is_int((int)rows(), 4, "  the new message counted once");
                ok(input_sum() == list_sum(4), "  with its tokens");
                /* half a document its writer left long ago: broken */
                write_bytes(p, text, n / 3);
                age_file(p, time(NULL));
                is_int(run(&list_adapter, p, 0, NULL), TAIL_DONE, "torn and old: given up on");
                ledger_get_checkpoint(L, p, &cp);
                is_int((int)cp.malformed, 1, "  counted malformed once");
                is_int(run(&list_adapter, p, 0, NULL), TAIL_DONE, "  looked at again, unchanged");
                ledger_get_checkpoint(L, p, &cp);
                is_int((int)cp.malformed, 1, "  not counted again");
                free(text);
        }

        /* replaced by rename (a new inode): the next version, not a reset */
        pj(tmp, dir, "session.json.tmp");
        write_list(tmp, 5, true);
        rename(tmp, p);
        parsed = 0;
        is_int(run(&list_adapter, p, 0, &out), TAIL_DONE, "replaced by rename");
        ok(out.reset == 0, "  not reported as a reset");
        is_int((int)rows(), 5, "  the new message counted, the others once");
        ok(input_sum() == list_sum(5), "  exact tokens");

        /* an earlier message changed: no prefix known, every message read
         * again, the same keys (upsert raises m0's tokens) */
        {
                char buf[4096];
                size_t len = (size_t)snprintf(buf, sizeof(buf), "{\"session\":\"s1\",\"messages\":[{\"id\":\"m0\",\"in\":15}");
                for (int i = 1; i < 5; i++)
                        len += (size_t)snprintf(buf + len, sizeof(buf) - len, ",{\"id\":\"m%d\",\"in\":%d}", i,
                                                10 * (i + 1));
                len += (size_t)snprintf(buf + len, sizeof(buf) - len, "]}");
                write_bytes(p, buf, len);
                parsed = 0;
                is_int(run(&list_adapter, p, 0, NULL), TAIL_DONE, "an earlier message changed");
                is_int(parsed, 5, "  all parsed again (no known prefix)");
                is_int((int)rows(), 5, "  no new rows");
                ok(input_sum() == list_sum(5) + 5, "  m0's tokens raised to its new value");
        }

        /* too big to hold */
        pj(tmp, dir, "big.json");
        write_list(tmp, 40, false);
        parsed = 0;
        is_int(run(&list_adapter, tmp, 64, NULL), TAIL_DONE, "over the document limit");
        ledger_get_checkpoint(L, tmp, &cp);
        ok(parsed == 0 && cp.oversized == 1, "  counted oversized, not parsed");
        is_int(run(&list_adapter, tmp, 64, NULL), TAIL_DONE, "  again, unchanged");
        ledger_get_checkpoint(L, tmp, &cp);
        is_int((int)cp.oversized, 1, "  counted once per version");
}

static void test_snapshot(const char *dir)
{
        char p[PATH_MAX], tmp[PATH_MAX];
        uint64_t before = rows();

        pj(p, dir, "snap.settings.json");
        pj(tmp, dir, "snap.settings.json.tmp");
        int totals[] = { 100, 250, 250, 400 };
        for (size_t i = 0; i < sizeof(totals) / sizeof(totals[0]); i++) {
                char b[128];
                snprintf(b, sizeof(b), "{\"session\":\"snap1\",\"total\":%d}", totals[i]);
                write_file(tmp, b);
                rename(tmp, p);
                ok(run(&snap_adapter, p, 0, NULL) == TAIL_DONE, "snapshot %d replaced by rename", totals[i]);
        }
        struct session_entry se = { 0 };
        int gr = ledger_get_session(L, "testsnap", "snap1", &se);
        ok(gr == 0 && se.sums.input == 400, "the deltas sum to the last snapshot (400)");
        if (gr != 0 || se.sums.input != 400)
                printf("# got %d, input %llu\n", gr, (unsigned long long)se.sums.input);
        is_int((int)(rows() - before), 3, "  three steps (an unchanged snapshot adds none)");
        /* the last total lives in the checkpoint: a new reader (a restart)
         * reading the same snapshot adds nothing */
        age_file(p, time(NULL));
        is_int(run(&snap_adapter, p, 0, NULL), TAIL_DONE, "read again after a restart");
        ok(ledger_get_session(L, "testsnap", "snap1", &se) == 0 && se.sums.input == 400, "  still 400");
}

int main(void)
{
        char *dir = tap_tmpdir(), ldir[PATH_MAX];

        pj(ldir, dir, "ledger");
        mkdir_p(ldir);
        if (ledger_open(ldir, 0, &L) < 0)
                return 99;
        test_list(dir);
        test_snapshot(dir);
        L = ledger_close(L);
        return tap_done();
}
