/* The Claude Code adapter against files Claude Code wrote itself ($AM_SAMPLES,
 * default ../shared/samples; skipped when absent): the realgen 2.1.328
 * corpus's truth totals (compare-report.md), and the older public files
 * against an independent count of their final records (json-c, the last
 * record per message.id). */
#include <json-c/json.h>
#include <limits.h>
#include <stdint.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "claude-walk.h"
#include "ledger/ledger.h"
#include "tap.h"
#include "testutil.h"

static const char *samples(void)
{
        const char *s = getenv("AM_SAMPLES");
        static char buf[PATH_MAX];
        if (s && *s)
                return s;
        xsnprintf(buf, sizeof(buf), "%s/../shared/samples", am_srcdir());
        return buf;
}

static bool is_dir(const char *p)
{
        struct stat st;
        return stat(p, &st) == 0 && S_ISDIR(st.st_mode);
}

static void realgen(bool restart)
{
        char projects[PATH_MAX];
        struct cw_totals t = { .restart_every_line = restart };
        struct ledger *l = NULL;
        const char *pfx = restart ? "realgen (state restored at every line)" : "realgen";
        char nm[160];

        xsnprintf(projects, sizeof(projects), "%s/realgen/claude-code-2.1.328/claude-config/projects", samples());
        if (!is_dir(projects)) {
                tap_ok(1, "# SKIP %s not present", projects);
                return;
        }
#define IS(a, b, what)                                                                              \
        do {                                                                                        \
                snprintf(nm, sizeof(nm), "%s: %s", pfx, what);                                      \
                is_int((a), (b), nm);                                                               \
        } while (0)
        IS(cw_ingest_projects(projects, &t, &l), 0, "read");
        IS(t.files, 8, "8 transcript files");
        IS(t.malformed, 0, "no malformed line");
        IS(t.rows, 22, "22 calls");
        IS(t.message_rows, 20, "20 from assistant lines");
        IS(t.compaction_rows, 2, "2 compaction calls from cost-state");
        IS(t.sidechain_rows, 2, "2 sub-agent calls");
        IS(t.input, 177968, "input 177,968");
        IS(t.output, 860, "output 860");
        IS(t.cache_read, 336256, "cache read 336,256");
        IS(t.cache_write, 56712, "cache write 56,712");
        IS(t.reasoning, 44, "reasoning 44");
        IS(t.unmetered_runs, 0, "every cost-state difference explained");
        IS(cw_1h_sum(&t), 5600, "1-hour cache writes 5,600");
        if (l)
                ledger_close(l);
}

/* The 20 assistant-line calls alone: compaction rows subtracted. */
static int message_only_cb(const struct usage_row *r, void *u)
{
        struct cw_totals *t = u;
        if (r->kind == ROW_KIND_MESSAGE)
                cw_row_cb(r, t);
        return 0;
}

static void realgen_messages(void)
{
        char projects[PATH_MAX];
        struct cw_totals t = { 0 }, m = { 0 };
        struct ledger *l = NULL;

        xsnprintf(projects, sizeof(projects), "%s/realgen/claude-code-2.1.328/claude-config/projects", samples());
        if (!is_dir(projects)) {
                tap_ok(1, "# SKIP %s not present", projects);
                return;
        }
        if (cw_ingest_projects(projects, &t, &l) < 0)
                return;
        ledger_foreach_row(l, message_only_cb, &m);
        is_int(m.rows, 20, "realgen assistant lines: 20 calls");
        is_int(m.input, 171965, "input 171,965");
        is_int(m.output, 790, "output 790");
        is_int(m.cache_read, 300480, "cache read 300,480");
        is_int(m.cache_write, 50720, "cache write 50,720");
        is_int(m.cache_write - cw_1h_sum(&t), 45120, "of it 45,120 5-minute writes");
        ledger_close(l);
}

/* ---- the older files: an independent count of final records ----------------- */

struct indep {
        char ids[64][128];
        int64_t in[64], out[64], cr[64], cw[64];
        size_t n;
};

static int64_t uget(struct json_object *u, const char *k)
{
        struct json_object *v;
        return json_object_object_get_ex(u, k, &v) ? json_object_get_int64(v) : 0;
}

static void indep_line(struct json_object *o, void *p)
{
        struct indep *x = p;
        struct json_object *type, *msg, *usage, *id, *model;
        size_t i;

        if (!o || !json_object_object_get_ex(o, "type", &type) ||
            strcmp(json_object_get_string(type), "assistant") != 0 ||
            !json_object_object_get_ex(o, "message", &msg) || !json_object_object_get_ex(msg, "usage", &usage) ||
            !json_object_object_get_ex(msg, "id", &id))
                return;
        if (json_object_object_get_ex(msg, "model", &model) &&
            strcmp(json_object_get_string(model), "<synthetic>") == 0)
                return;
        for (i = 0; i < x->n; i++)
                if (strcmp(x->ids[i], json_object_get_string(id)) == 0)
                        break;
        if (i == x->n) {
                if (x->n == 64)
                        return;
                snprintf(x->ids[x->n++], sizeof(x->ids[0]), "%s", json_object_get_string(id));
        }
        /* the last record of each message.id stands */
        x->in[i] = uget(usage, "input_tokens");
        x->out[i] = uget(usage, "output_tokens");
        x->cr[i] = uget(usage, "cache_read_input_tokens");
        x->cw[i] = uget(usage, "cache_creation_input_tokens");
}

static void older(const char *name, int64_t want_rows)
{
        char path[PATH_MAX];
        struct indep x = { 0 };
        struct cw_totals t = { 0 };
        struct ledger *l;
        int64_t in = 0, out = 0, cr = 0, cw = 0;
        char nm[200];

        xsnprintf(path, sizeof(path), "%s/claude-code/%s", samples(), name);
        if (access(path, R_OK) != 0) {
                tap_ok(1, "# SKIP %s not present", path);
                return;
        }
        json_lines(path, indep_line, &x);
        for (size_t i = 0; i < x.n; i++) {
                in += x.in[i];
                out += x.out[i];
                cr += x.cr[i];
                cw += x.cw[i];
        }
        if (ledger_open(tap_tmpdir(), 0, &l) < 0)
                return;
        snprintf(nm, sizeof(nm), "%s: read", name);
        is_int(cw_ingest_file(l, &t, path), 0, nm);
        ledger_foreach_row(l, cw_row_cb, &t);
        snprintf(nm, sizeof(nm), "%s: %lld calls (one per message.id)", name, (long long)want_rows);
        ok(t.rows == (uint64_t)want_rows && x.n == (size_t)want_rows, "%s", nm);
        snprintf(nm, sizeof(nm), "%s: input equals the final records'", name);
        is_int(t.input, in, nm);
        snprintf(nm, sizeof(nm), "%s: output equals the final records' (%lld)", name, (long long)out);
        is_int(t.output, out, nm);
        snprintf(nm, sizeof(nm), "%s: cache read", name);
        is_int(t.cache_read, cr, nm);
        snprintf(nm, sizeof(nm), "%s: cache write", name);
        is_int(t.cache_write, cw, nm);
        ledger_close(l);
}

int main(void)
{
        if (!is_dir(samples())) {
                printf("1..0 # SKIP no samples at %s\n", samples());
                return 0;
        }
        realgen(false);
        realgen(true);
        realgen_messages();
        older("short.jsonl", 1);
        older("tool_heavy.jsonl", 4);
        older("4d5611e5-241a-462a-8d15-5122611a9569__subagents__agent-acompact-e1f845.jsonl", 1);
        return tap_done();
}
