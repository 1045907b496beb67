/* What the Claude Code tests share: a projects/ tree walked with the
 * adapter's own classification, every transcript's lines through
 * parse_line, and the rows committed to a real ledger (monotone upsert). */
#pragma once

#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "adapter.h"
#include "claude/acct.h"
#include "ledger/ledger.h"
#include "registry.h"
#include "row.h"
#include "testutil.h"

struct cw_totals {
        uint64_t files, malformed, not_source, unmetered_runs, unmetered_tokens;
        uint64_t rows, message_rows, compaction_rows, sidechain_rows;
        uint64_t input, output, cache_read, cache_write, reasoning, total;
        /* the 1-hour part is not in the ledger's row encoding yet: the
         * maximum per key over the rows emitted */
        struct { struct row_key key; uint64_t v; } cw1h[256];
        size_t n_cw1h;
        bool restart_every_line; /* encode/decode the parse state between lines */
};

static inline uint64_t cw_1h_sum(const struct cw_totals *t)
{
        uint64_t s = 0;
        for (size_t i = 0; i < t->n_cw1h; i++)
                s += t->cw1h[i].v;
        return s;
}

static inline void cw_note_1h(struct cw_totals *t, const struct usage_row *r)
{
        for (size_t i = 0; i < t->n_cw1h; i++)
                if (memcmp(&t->cw1h[i].key, &r->key, sizeof(r->key)) == 0) {
                        if (r->cache_write_1h > t->cw1h[i].v)
                                t->cw1h[i].v = r->cache_write_1h;
                        return;
                }
        if (t->n_cw1h < sizeof(t->cw1h) / sizeof(t->cw1h[0])) {
                t->cw1h[t->n_cw1h].key = r->key;
                t->cw1h[t->n_cw1h++].v = r->cache_write_1h;
        }
}

/* One file, as the tail reads it (complete lines), its rows committed. */
static inline int cw_ingest_file(struct ledger *l, struct cw_totals *t, const char *path)
{
        struct source_ctx ctx = { .adapter = &adapter_claude, .path = path,
                                  .source_hash = hash64(path, strlen(path)) };
        struct parse_state ps = { 0 };
        struct row_batch b = { 0 };
        size_t len, pos = 0, n;
        const char *line, *s;
        char *data = slurp(path, &len);
        bool nl;
        int r = 0;

        if (!data)
                return -errno;
        t->files++;
        while (next_line(data, len, &pos, &line, &n, &nl)) {
                if (!nl)
                        break;
                n = lines_trim(line, n, &s);
                if (n == 0)
                        continue;
                if (t->restart_every_line) {
                        uint8_t buf[PS_ENCODED_MAX];
                        size_t k;
                        if (parse_state_encode(&ps, buf, sizeof(buf), &k) < 0 ||
                            parse_state_decode(buf, k, &ps) < 0)
                                return -EBADMSG;
                }
                r = adapter_claude.parse_line(&ctx, &ps, s, n, &b);
                if (r < 0)
                        break;
                if (r == PARSE_MALFORMED)
                        t->malformed++;
                if (r == PARSE_NOT_SOURCE) {
                        t->not_source++;
                        break;
                }
        }
        if (r >= 0) {
                uint64_t runs, toks;
                cl_acct_unmetered(&ps, &runs, &toks);
                t->unmetered_runs += runs;
                t->unmetered_tokens += toks;
                for (size_t i = 0; i < b.n; i++)
                        cw_note_1h(t, &b.rows[i]);
                if (b.n) {
                        struct commit_batch cb = { .rows = b.rows, .n_rows = b.n };
                        r = ledger_commit(l, &cb, NULL);
                }
        }
        row_batch_free(&b);
        free(data);
        return r < 0 ? r : 0;
}

/* Every transcript under dir (relpath rel, depth levels below projects/). */
static inline int cw_walk(struct ledger *l, struct cw_totals *t, const char *dir, const char *rel,
                          int depth)
{
        struct dirent **d;
        int n = scandir(dir, &d, NULL, alphasort), r = 0;

        if (n < 0)
                return -errno;
        for (int i = 0; i < n; i++) {
                char path[PATH_MAX], relpath[PATH_MAX];
                struct stat st;
                const char *name = d[i]->d_name;

                if (r == 0 && name[0] != '.' && (size_t)snprintf(path, sizeof(path), "%s/%s", dir, name) < sizeof(path) &&
                    (size_t)snprintf(relpath, sizeof(relpath), "%s%s%s", rel, *rel ? "/" : "", name) < sizeof(relpath) &&
                    stat(path, &st) == 0) {
                        bool is_dir = S_ISDIR(st.st_mode);
                        enum classify_result c = adapter_claude.classify(relpath, name, depth + 1, is_dir);
                        if (is_dir && c == CLASS_DESCEND)
                                r = cw_walk(l, t, path, relpath, depth + 1);
                        else if (!is_dir && c == CLASS_LINES)
                                r = cw_ingest_file(l, t, path);
                }
                free(d[i]);
        }
        free(d);
        return r;
}

static inline int cw_row_cb(const struct usage_row *r, void *u)
{
        struct cw_totals *t = u;

        t->rows++;
        t->message_rows += r->kind == ROW_KIND_MESSAGE;
        t->compaction_rows += r->kind == ROW_KIND_COMPACTION;
        t->sidechain_rows += !!(r->flags & ROW_F_SIDECHAIN);
        t->input += r->input;
        t->output += r->output;
        t->cache_read += r->cache_read;
        t->cache_write += r->cache_write;
        t->reasoning += r->reasoning;
        t->total += r->total;
        return 0;
}

/* A fresh ledger in a temporary directory with every transcript under
 * projects committed, then its rows summed into t. */
static inline int cw_ingest_projects(const char *projects, struct cw_totals *t, struct ledger **ret_l)
{
        struct ledger *l;
        int r = ledger_open(tap_tmpdir(), 0, &l);

        if (r < 0)
                return r;
        r = cw_walk(l, t, projects, "", 0);
        if (r == 0)
                r = ledger_foreach_row(l, cw_row_cb, t);
        if (r < 0) {
                ledger_close(l);
                return r;
        }
        *ret_l = l;
        return 0;
}
