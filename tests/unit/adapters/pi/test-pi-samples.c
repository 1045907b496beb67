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
#include "pi/record.h"
#include "registry.h"
#include "row.h"
#include "tap.h"
#include "testutil.h"
#include "timefmt.h"

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
                                                ok(ingest_file(t, &adapter_pi, p2) == 0, "read %s", d2[j]->d_name);
                                        free(d2[j]);
                                }
                                if (n2 > 0)
                                        free(d2);
                        } else if (!S_ISDIR(st.st_mode) &&
                                   adapter_pi.classify(d1[i]->d_name, d1[i]->d_name, 1, false) == CLASS_LINES) {
                                ok(ingest_file(t, &adapter_pi, p1) == 0, "read %s", d1[i]->d_name);
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
        char script[PATH_MAX], cmd[PATH_MAX * 3];
        struct json_object *o;
        char *out;
        FILE *p;

        snprintf(script, sizeof(script), "%s/tests/lib/pi_oracle.py", am_srcdir());
        if (access(script, R_OK) != 0 || system("python3 -c '' 2>/dev/null") != 0)
                return NULL;
        snprintf(cmd, sizeof(cmd), "python3 '%s' --naive '%s'", script, path);
        p = popen(cmd, "r");
        if (!p)
                return NULL;
        out = read_all(p, NULL);
        pclose(p);
        if (!out)
                return NULL;
        o = json_tokener_parse(out);
        free(out);
        return o;
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
        is_int(t->field, jint(o, key, -1), name)
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
        struct totals t = { 0 }, naive = { .naive = true };
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
                ok(json_object_object_get_ex(o, "naive", &v) && jint(v, "total", -1) == 86002,
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
        size_t len, pos = 0, n;
        const char *line;
        char *data;
        int lineno = 0, objs = 0;
        struct parse_state ps = { 0 };
        struct row_batch b = { 0 };

        snprintf(path, sizeof(path), "%s/pi/pi-mono_compact.jsonl", samples);
        data = slurp(path, &len);
        ok(data != NULL, "pi-mono_compact.jsonl readable");
        if (!data)
                return;
        while (next_line(data, len, &pos, &line, &n, NULL)) {
                lineno++;
                if (lineno == 1013) {
                        size_t before = b.n;
                        int64_t ms;
                        lines_json_foreach(line, n, count_cb, &objs, NULL);
                        is_int(objs, 2, "line 1013 holds two JSON objects");
                        is_int(pi_parse_line(&(struct pi_flavor){ .tool = "pi" }, NULL, &ps, line, n, &b),
                               PARSE_OK, "line 1013 parses");
                        is_int(b.n - before, 1, "line 1013: the assistant's usage is a row");
                        ok(b.n > before && b.rows[before].output == 23 && b.rows[before].cache_read == 130604 &&
                                   b.rows[before].total == 131140,
                           "line 1013: the glued assistant (output 23, cacheRead 130,604)");
                        timefmt_parse_rfc3339("2025-12-24T12:52:46.488Z", 24, &ms);
                        is_int(ps.last_time_ms, ms, "line 1013: the glued compaction was read too");
                } else {
                        pi_parse_line(&(struct pi_flavor){ .tool = "pi" }, NULL, &ps, line, n, &b);
                }
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
                struct totals t = { 0 };
                snprintf(path, sizeof(path), "%s/pi/%s", samples, want[i].file);
                ok(ingest_file(&t, &adapter_pi, path) == 0, "read %s", want[i].file);
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
 * transcript_events table, each event's text fed through pi_parse_line with the OpenClaw
 * flavor, one parse state per session (what the SQLite reader will do). */
static void test_openclaw_events(const char *samples)
{
        static const struct pi_flavor oc = { .tool = "openclaw", .skip_synthetic_openclaw = true,
                                             .model_snapshot = true };
        static const char *dumps[] = { "transcript_events.main.jsonl", "transcript_events.ops.jsonl" };
        struct totals t = { 0 };
        struct {
                char id[128];
                struct parse_state ps;
        } sess[16];
        size_t nsess = 0;
        int bad = 0;

        for (size_t d = 0; d < 2; d++) {
                char path[PATH_MAX];
                size_t len, pos = 0, n;
                const char *line;
                char *data;
                snprintf(path, sizeof(path), "%s/realgen/openclaw-2026.9.6/%s", samples, dumps[d]);
                data = slurp(path, &len);
                if (!data) {
                        printf("# no %s\n", path);
                        return;
                }
                while (next_line(data, len, &pos, &line, &n, NULL)) {
                        json_tokener *tok = json_tokener_new();
                        struct json_object *row = json_tokener_parse_ex(tok, line, (int)n);
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
                                size_t tlen = 0;
                                const char *text = json_object_to_json_string_length(
                                        ev, JSON_C_TO_STRING_PLAIN | JSON_C_TO_STRING_NOSLASHESCAPE, &tlen);
                                if (k < nsess && (!text || pi_parse_line(&oc, NULL, &sess[k].ps, text, tlen, &b) != PARSE_OK))
                                        bad++;
                                add_rows(&t, &b);
                                row_batch_free(&b);
                        }
                        json_object_put(row);
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
