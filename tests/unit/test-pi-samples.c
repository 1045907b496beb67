/* The pi parser against real files written by pi itself ($AM_SAMPLES,
 * default ../shared/samples; skipped when absent): the deduplicated totals
 * of samples/PROVENANCE.md, glued lines, and agreement with the Python
 * oracle tests/lib/pi_oracle.py when python3 is there. */
#include <dirent.h>
#include <errno.h>
#include <json-c/json.h>
#include <limits.h>
#include <stdint.h>
#include <sys/stat.h>
#include <unistd.h>

#include "adapter.h"
#include "lines.h"
#include "pi_lines.h"
#include "registry.h"
#include "row.h"
#include "tap.h"
#include "timefmt.h"

struct totals {
        uint64_t rows, input, output, cache_read, cache_write, reasoning, total, calls, files;
        int64_t cost_nano;
        struct row_key *keys;
        size_t nkeys, capkeys;
        bool dedup;
};

static void add_rows(struct totals *t, const struct row_batch *b)
{
        for (size_t i = 0; i < b->n; i++) {
                const struct usage_row *r = &b->rows[i];
                bool dup = false;
                for (size_t k = 0; t->dedup && k < t->nkeys && !dup; k++)
                        dup = memcmp(&t->keys[k], &r->key, sizeof(r->key)) == 0;
                if (dup)
                        continue;
                if (t->nkeys == t->capkeys) {
                        t->capkeys = t->capkeys ? 2 * t->capkeys : 256;
                        t->keys = realloc(t->keys, t->capkeys * sizeof(*t->keys));
                }
                t->keys[t->nkeys++] = r->key;
                t->rows++;
                t->input += r->input;
                t->output += r->output;
                t->cache_read += r->cache_read;
                t->cache_write += r->cache_write;
                t->reasoning += r->reasoning;
                t->total += r->total;
                t->cost_nano += r->cost_nano;
                t->calls += r->n_calls;
        }
}

static char *slurp(const char *path, size_t *ret_len)
{
        FILE *f = fopen(path, "re");
        char *data = NULL;
        size_t cap = 0, len = 0;

        if (!f)
                return NULL;
        for (;;) {
                if (cap - len < 65536) {
                        cap = cap ? cap * 2 : 1 << 20;
                        data = realloc(data, cap);
                }
                size_t k = fread(data + len, 1, cap - len, f);
                if (k == 0)
                        break;
                len += k;
        }
        fclose(f);
        *ret_len = len;
        return data;
}

/* Lines as the tail delivers them (a complete-JSON unterminated tail too). */
static int ingest_file(struct totals *t, const char *path)
{
        struct parse_state ps = { 0 };
        struct row_batch b = { 0 };
        struct source_ctx ctx = { .adapter = &adapter_pi, .path = path, .source_hash = hash64(path, strlen(path)) };
        size_t len, start = 0;
        char *data = slurp(path, &len);
        int r = 0;

        if (!data)
                return -errno;
        t->files++;
        while (start < len) {
                char *nl = memchr(data + start, '\n', len - start);
                size_t end = nl ? (size_t)(nl - data) : len;
                const char *s;
                size_t n = lines_trim(data + start, end - start, &s);
                if (n > 0 && (nl || lines_is_complete_json(s, n))) {
                        r = adapter_pi.parse_line(&ctx, &ps, s, n, &b);
                        if (r < 0 || r == PARSE_NOT_SOURCE)
                                break;
                }
                start = end + 1;
        }
        add_rows(t, &b);
        row_batch_free(&b);
        free(data);
        return r < 0 ? r : 0;
}

static void ingest_root(struct totals *t, const char *root)
{
        struct dirent **d1;
        int n1 = scandir(root, &d1, NULL, alphasort);

        for (int i = 0; i < n1; i++) {
                char p1[PATH_MAX * 2];
                struct stat st;
                snprintf(p1, sizeof(p1), "%s/%s", root, d1[i]->d_name);
                if (d1[i]->d_name[0] != '.' && stat(p1, &st) == 0) {
                        if (S_ISDIR(st.st_mode) &&
                            adapter_pi.classify(d1[i]->d_name, d1[i]->d_name, 1, true) == CLASS_DESCEND) {
                                struct dirent **d2;
                                int n2 = scandir(p1, &d2, NULL, alphasort);
                                for (int j = 0; j < n2; j++) {
                                        char p2[PATH_MAX * 3];
                                        snprintf(p2, sizeof(p2), "%s/%s", p1, d2[j]->d_name);
                                        if (adapter_pi.classify("", d2[j]->d_name, 2, false) == CLASS_LINES)
                                                ok(ingest_file(t, p2) == 0, "read %s", d2[j]->d_name);
                                        free(d2[j]);
                                }
                                if (n2 > 0)
                                        free(d2);
                        } else if (!S_ISDIR(st.st_mode) &&
                                   adapter_pi.classify(d1[i]->d_name, d1[i]->d_name, 1, false) == CLASS_LINES) {
                                ok(ingest_file(t, p1) == 0, "read %s", d1[i]->d_name);
                        }
                }
                free(d1[i]);
        }
        if (n1 > 0)
                free(d1);
}

/* Runs the oracle on path; NULL when python3 or the script is missing. */
static struct json_object *oracle(const char *path)
{
        const char *src = getenv("AM_SRCDIR");
        char script[PATH_MAX], cmd[PATH_MAX * 3];
        struct json_object *o;
        char *out = NULL;
        size_t cap = 0, len = 0;
        FILE *p;

        snprintf(script, sizeof(script), "%s/tests/lib/pi_oracle.py", src && *src ? src : ".");
        if (access(script, R_OK) != 0 || system("python3 -c '' 2>/dev/null") != 0)
                return NULL;
        snprintf(cmd, sizeof(cmd), "python3 '%s' --naive '%s'", script, path);
        p = popen(cmd, "r");
        if (!p)
                return NULL;
        for (;;) {
                if (cap - len < 4096) {
                        cap = cap ? cap * 2 : 65536;
                        out = realloc(out, cap);
                }
                size_t k = fread(out + len, 1, cap - len - 1, p);
                if (k == 0)
                        break;
                len += k;
        }
        pclose(p);
        if (!out)
                return NULL;
        out[len] = 0;
        o = json_tokener_parse(out);
        free(out);
        return o;
}

static int64_t jint(struct json_object *o, const char *k)
{
        struct json_object *v;
        return o && json_object_object_get_ex(o, k, &v) ? json_object_get_int64(v) : -1;
}

static void compare_oracle(const char *what, const char *path, const struct totals *t)
{
        struct json_object *o = oracle(path);
        char name[256];

        if (!o) {
                printf("# oracle not available: skipping the cross-check for %s\n", what);
                return;
        }
#define SAME(field, key)                                                         \
        snprintf(name, sizeof(name), "%s: C and oracle agree on %s", what, key); \
        is_int(t->field, jint(o, key), name)
        SAME(rows, "rows");
        SAME(input, "input");
        SAME(output, "output");
        SAME(cache_read, "cache_read");
        SAME(cache_write, "cache_write");
        SAME(reasoning, "reasoning");
        SAME(total, "total");
        SAME(cost_nano, "cost_nano");
        SAME(calls, "calls");
#undef SAME
        json_object_put(o);
}

static void test_realgen(const char *samples)
{
        char root[PATH_MAX];
        struct totals t = { .dedup = true }, naive = { .dedup = false };
        struct json_object *o;

        snprintf(root, sizeof(root), "%s/realgen/pi-1.6.0/agent/sessions", samples);
        ingest_root(&t, root);
        ingest_root(&naive, root);
        is_int(t.files, 8, "realgen pi 1.6.0: 8 files");
        /* samples/PROVENANCE.md: input 22,702, output 7,335, cacheRead
         * 32,576, cacheWrite 576, total 63,189 tokens, $0.091341 */
        is_int(t.input, 22702, "realgen: input 22,702");
        is_int(t.output, 7335, "realgen: output 7,335");
        is_int(t.cache_read, 32576, "realgen: cacheRead 32,576");
        is_int(t.cache_write, 576, "realgen: cacheWrite 576");
        is_int(t.total, 63189, "realgen: total 63,189");
        is_int(t.rows, 24, "realgen: 24 distinct calls");
        /* Rows keep whole nano-USD (llround of each cost.total * 1e9),
         * so the per-row sums are the written figures exactly. */
        is_int(t.cost_nano, 91341000, "realgen: $0.091341 exactly");
        is_int(naive.total, 86002, "realgen naive sum over files: 86,002 tokens");
        is_int((naive.cost_nano + 500) / 1000, 132910, "realgen naive cost: $0.132910 to the micro-dollar");
        compare_oracle("realgen", root, &t);

        o = oracle(root);
        if (o) {
                struct json_object *v;
                ok(json_object_object_get_ex(o, "cost_usd_exact", &v) &&
                           strcmp(json_object_get_string(v), "0.091341") == 0,
                   "oracle: exact USD sum $0.091341 as in PROVENANCE.md");
                ok(json_object_object_get_ex(o, "naive", &v) && jint(v, "total") == 86002,
                   "oracle: naive total 86,002 as in PROVENANCE.md");
                json_object_put(o);
        }
        free(t.keys);
        free(naive.keys);
}

static int count_cb(struct json_object *obj, void *u)
{
        (void)obj;
        (*(int *)u)++;
        return 0;
}

static void test_glued_compact(const char *samples)
{
        char path[PATH_MAX];
        size_t len, start = 0;
        char *data;
        int lineno = 0, objs = 0;
        struct parse_state ps = { 0 };
        struct row_batch b = { 0 };

        snprintf(path, sizeof(path), "%s/pi/pi-mono_compact.jsonl", samples);
        data = slurp(path, &len);
        ok(data != NULL, "pi-mono_compact.jsonl readable");
        if (!data)
                return;
        while (start < len) {
                char *nl = memchr(data + start, '\n', len - start);
                size_t end = nl ? (size_t)(nl - data) : len;
                lineno++;
                if (lineno == 1013) {
                        size_t before = b.n;
                        int64_t ms;
                        lines_json_foreach(data + start, end - start, count_cb, &objs, NULL);
                        is_int(objs, 2, "line 1013 holds two JSON objects");
                        is_int(pi_parse_line(&(struct pi_flavor){ .tool = "pi" }, NULL, &ps, data + start,
                                             end - start, &b),
                               PARSE_OK, "line 1013 parses");
                        is_int(b.n - before, 1, "line 1013: the assistant's usage is a row");
                        ok(b.n > before && b.rows[before].output == 23 && b.rows[before].cache_read == 130604 &&
                                   b.rows[before].total == 131140,
                           "line 1013: the glued assistant (output 23, cacheRead 130,604)");
                        timefmt_parse_rfc3339("2025-12-24T12:52:46.488Z", 24, &ms);
                        is_int(ps.last_time_ms, ms, "line 1013: the glued compaction was read too");
                } else {
                        pi_parse_line(&(struct pi_flavor){ .tool = "pi" }, NULL, &ps, data + start, end - start, &b);
                }
                start = end + 1;
        }
        row_batch_free(&b);
        free(data);
}

static void test_pi_mono(const char *samples)
{
        static const struct {
                const char *file;
                uint64_t rows, input, output, cache_read, cache_write, total;
                int64_t cost_nano;
        } want[] = {
                /* computed by tests/lib/pi_oracle.py; no duplicates inside a file */
                { "pi-mono_compact.jsonl", 498, 14151, 94696, 42913033, 934691, 43956571, 29736490250 },
                { "pi-mono_large-session.jsonl", 439, 1049, 83156, 43229469, 4296232, 47609906, 30330197700 },
        };
        for (size_t i = 0; i < sizeof(want) / sizeof(want[0]); i++) {
                char path[PATH_MAX], name[160];
                struct totals t = { .dedup = true };
                snprintf(path, sizeof(path), "%s/pi/%s", samples, want[i].file);
                ok(ingest_file(&t, path) == 0, "read %s", want[i].file);
#define W(field)                                                              \
        snprintf(name, sizeof(name), "%s: %s", want[i].file, #field);         \
        is_int(t.field, want[i].field, name)
                W(rows);
                W(input);
                W(output);
                W(cache_read);
                W(cache_write);
                W(total);
                W(cost_nano);
#undef W
                compare_oracle(want[i].file, path, &t);
                free(t.keys);
        }
}

/* OpenClaw 2026.9 keeps the same entries in SQLite; the dump of its
 * transcript_events table, fed through pi_parse_entry with the OpenClaw
 * flavor, one parse state per session (what the SQLite reader will do). */
static void test_openclaw_events(const char *samples)
{
        static const struct pi_flavor oc = { .tool = "openclaw", .skip_synthetic_openclaw = true,
                                             .model_snapshot = true };
        static const char *dumps[] = { "transcript_events.main.jsonl", "transcript_events.ops.jsonl" };
        struct totals t = { .dedup = true };
        struct {
                char id[128];
                struct parse_state ps;
        } sess[16];
        size_t nsess = 0;
        int bad = 0;

        for (size_t d = 0; d < 2; d++) {
                char path[PATH_MAX];
                size_t len, start = 0;
                char *data;
                snprintf(path, sizeof(path), "%s/realgen/openclaw-2026.9.6/%s", samples, dumps[d]);
                data = slurp(path, &len);
                if (!data) {
                        printf("# no %s\n", path);
                        return;
                }
                while (start < len) {
                        char *nl = memchr(data + start, '\n', len - start);
                        size_t end = nl ? (size_t)(nl - data) : len;
                        json_tokener *tok = json_tokener_new();
                        struct json_object *row = json_tokener_parse_ex(tok, data + start, (int)(end - start));
                        struct json_object *sid, *ev;
                        json_tokener_free(tok);
                        if (row && json_object_object_get_ex(row, "session_id", &sid) &&
                            json_object_object_get_ex(row, "event", &ev) && ev) {
                                size_t k;
                                struct row_batch b = { 0 };
                                for (k = 0; k < nsess && strcmp(sess[k].id, json_object_get_string(sid)) != 0; k++)
                                        ;
                                if (k == nsess && nsess < 16) {
                                        snprintf(sess[k].id, sizeof(sess[k].id), "%s", json_object_get_string(sid));
                                        memset(&sess[k].ps, 0, sizeof(sess[k].ps));
                                        nsess++;
                                }
                                if (k < nsess && pi_parse_entry(&oc, NULL, &sess[k].ps, ev, &b) != PARSE_OK)
                                        bad++;
                                add_rows(&t, &b);
                                row_batch_free(&b);
                        }
                        json_object_put(row);
                        start = (nl ? (size_t)(nl - data) : len) + 1;
                }
                free(data);
        }
        is_int(bad, 0, "openclaw events: every entry parses");
        is_int(nsess, 4, "openclaw events: 4 sessions");
        /* samples/PROVENANCE.md: 10 usage records: input 105,484, output
         * 289, cacheRead 143,168, cacheWrite 256, total 249,197, $0.302212 */
        is_int(t.rows, 10, "openclaw events: 10 usage records");
        is_int(t.input, 105484, "openclaw events: input 105,484");
        is_int(t.output, 289, "openclaw events: output 289");
        is_int(t.cache_read, 143168, "openclaw events: cacheRead 143,168");
        is_int(t.cache_write, 256, "openclaw events: cacheWrite 256");
        is_int(t.total, 249197, "openclaw events: total 249,197");
        is_int((t.cost_nano + 500) / 1000, 302212, "openclaw events: $0.302212 to the micro-dollar");
        free(t.keys);
}

int main(void)
{
        const char *samples = getenv("AM_SAMPLES");
        char probe[PATH_MAX];
        struct stat st;

        if (!samples || !*samples)
                samples = "../shared/samples";
        snprintf(probe, sizeof(probe), "%s/realgen/pi-1.6.0/agent/sessions", samples);
        if (stat(probe, &st) != 0 || !S_ISDIR(st.st_mode)) {
                printf("1..0 # SKIP no pi samples at %s\n", samples);
                return 0;
        }
        test_realgen(samples);
        snprintf(probe, sizeof(probe), "%s/realgen/openclaw-2026.9.6/transcript_events.main.jsonl", samples);
        if (stat(probe, &st) == 0)
                test_openclaw_events(samples);
        snprintf(probe, sizeof(probe), "%s/pi/pi-mono_compact.jsonl", samples);
        if (stat(probe, &st) == 0) {
                test_glued_compact(samples);
                test_pi_mono(samples);
        }
        return tap_done();
}
