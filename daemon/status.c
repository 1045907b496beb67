/* Building status/sources answers from the ingest engine and the ledger. */
#include <errno.h>
#include <json-c/json.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "adapt-sqlite.h"
#include "control.h"
#include "ingest/ingest.h"
#include "ledger/ledger.h"
#include "ratelimits.h"
#include "registry.h"
#include "row-bounds.h"
#include "status.h"
#include "timefmt.h"
#include "watch/watch.h"

#define add(o, k, v) json_object_object_add((o), (k), (v))

static json_object *time_or_null(int64_t ms)
{
        char b[32];
        if (ms <= 0)
                return NULL;
        timefmt_format_utc(ms, b);
        return json_object_new_string(b);
}

static json_object *str_or_null(const char *s)
{
        return s && *s ? json_object_new_string(s) : NULL;
}

bool status_var_from_install(const char *var)
{
        const char *list = getenv("AGENTMETER_INSTALL_VARS");
        size_t n = strlen(var);
        if (!list)
                return false;
        for (const char *p = list; *p;) {
                size_t k = strcspn(p, ",");
                if (k == n && strncmp(p, var, n) == 0)
                        return true;
                p += k;
                if (*p == ',')
                        p++;
        }
        return false;
}

int status_record_install_env(struct ledger *l)
{
        const char *vars = getenv("AGENTMETER_INSTALL_VARS");
        const char *when = getenv("AGENTMETER_INSTALL_TIME");
        json_object *rec, *vo;
        int r;

        if (!vars && !when)
                return 0;
        rec = json_object_new_object();
        vo = json_object_new_object();
        for (size_t i = 0; registry_env_vars()[i]; i++) {
                const char *v = getenv(registry_env_vars()[i]);
                if (v && status_var_from_install(registry_env_vars()[i]))
                        add(vo, registry_env_vars()[i], json_object_new_string(v));
        }
        add(rec, "recorded_at", str_or_null(when));
        add(rec, "vars", vo);
        r = ledger_meta_set(l, "install_record", json_object_to_json_string_ext(rec, JSON_C_TO_STRING_PLAIN));
        json_object_put(rec);
        return r;
}

static json_object *install_record(struct ledger *l)
{
        char buf[8192];
        json_object *o = NULL;
        if (ledger_meta_get(l, "install_record", buf, sizeof(buf)) == 0)
                o = json_tokener_parse(buf);
        if (!o) {
                o = json_object_new_object();
                add(o, "recorded_at", NULL);
                add(o, "vars", json_object_new_object());
        }
        return o;
}

/* Spending a harness counted that no row could meter exactly (e.g. Claude
 * Code calls seen only in its cost totals), from the sources' states. */
struct unmetered {
        uint64_t runs, tokens;
        json_object *sessions; /* at most UNMETERED_SESSIONS_MAX, each once */
};
#define UNMETERED_SESSIONS_MAX 20

static void unmetered_add(const struct adapter *a, const struct checkpoint *cp, struct unmetered *um)
{
        struct parse_state ps;
        uint64_t runs = 0, tokens = 0;
        size_t n;

        if (parse_state_decode(cp->state, cp->state_len, &ps) < 0)
                return;
        a->unmetered(&ps, &runs, &tokens);
        if (runs == 0)
                return;
        um->runs += runs;
        um->tokens += tokens;
        n = json_object_array_length(um->sessions);
        for (size_t i = 0; i < n; i++)
                if (strcmp(json_object_get_string(json_object_array_get_idx(um->sessions, i)), ps.session) == 0)
                        return;
        if (n < UNMETERED_SESSIONS_MAX && ps.session[0])
                json_object_array_add(um->sessions, json_object_new_string(ps.session));
}

struct limits_find {
        const char *scope;
        json_object *found;
};

static int limits_match(const char *scope, const struct rate_limits *rl, void *u)
{
        struct limits_find *lf = u;
        char text[1024];

        if (strcmp(scope, lf->scope) != 0 || limits_format(rl, text, sizeof(text)) < 0)
                return 0;
        lf->found = json_tokener_parse(text);
        return 1;
}

/* The latest rate-limit windows seen under a root (Codex), or NULL. */
static json_object *root_limits(struct ledger *l, const char *root_path)
{
        struct limits_find lf = { root_path, NULL };

        if (l)
                (void)ledger_foreach_limits(l, limits_match, &lf);
        return lf.found;
}

/* The walk over one adapter's sources that status_extra asks for. */
struct extra_walk {
        struct ingest *in;
        const struct adapter *a;
        struct source_rec *s;
        size_t it;
        bool started;
        struct checkpoint cp;
};

static bool extra_next(void *u, struct adapter_source_view *ret)
{
        struct extra_walk *w = u;

        for (;;) {
                w->s = w->started ? ingest_sources_next(w->in, &w->it) : ingest_sources_first(w->in, &w->it);
                w->started = true;
                if (!w->s)
                        return false;
                if (w->s->adapter != w->a)
                        continue;
                bool have = ledger_get_checkpoint(ingest_ledger(w->in), w->s->path, &w->cp) == 0;
                *ret = (struct adapter_source_view){
                        .path = w->s->path, .kind = w->s->kind, .last_error = w->s->last_error,
                        .cp = have ? &w->cp : NULL,
                };
                return true;
        }
}

/* The adapter's own figures, added to its entry. */
static void add_extra(json_object *h, struct ingest *in, const struct adapter *a)
{
        struct extra_walk *w = calloc(1, sizeof(*w)); /* a checkpoint is over 1 KB */
        void **cache = ingest_status_cache(in, a);
        json_object *extra;

        if (!w || !cache) {
                free(w);
                return;
        }
        *w = (struct extra_walk){ .in = in, .a = a };
        extra = a->status_extra(&(struct adapter_status_ctx){
                .ledger = ingest_ledger(in), .next = extra_next, .it = w, .cache = cache });
        free(w);
        if (!extra)
                return;
        json_object_object_foreach(extra, k, v)
                add(h, k, json_object_get(v));
        json_object_put(extra);
}

/* What discovery could not use (a settings.json that is not JSON), after
 * the adapter's own notes. */
static void add_discovery_notes(json_object *h, const struct root_list *rl, const struct adapter *a)
{
        json_object *notes = NULL;

        for (size_t i = 0; i < rl->n_notes; i++) {
                if (rl->notes[i].adapter != a)
                        continue;
                if (!notes && (!json_object_object_get_ex(h, "notes", &notes) ||
                               !json_object_is_type(notes, json_type_array))) {
                        notes = json_object_new_array();
                        add(h, "notes", notes);
                }
                json_object_array_add(notes, json_object_new_string(rl->notes[i].text));
        }
}

/* Per root, the sources found under it and the rows they added first (for
 * the VS Code extensions: the tasks and calls of each editor): one pass
 * over the sources for every harness. Arrays NULL when out of memory. */
struct root_counts {
        uint64_t *files, *rows;
};

static void root_counts_fill(struct ingest *in, struct root_counts *rc)
{
        const struct root_list *rl = ingest_roots(in);
        size_t it;

        rc->files = calloc(rl->n ? rl->n : 1, sizeof(*rc->files));
        rc->rows = calloc(rl->n ? rl->n : 1, sizeof(*rc->rows));
        if (!rc->files || !rc->rows) {
                free(rc->files);
                free(rc->rows);
                rc->files = rc->rows = NULL;
                return;
        }
        for (struct source_rec *s = ingest_sources_first(in, &it); s; s = ingest_sources_next(in, &it))
                if (s->root_idx < rl->n && s->adapter == rl->v[s->root_idx].adapter && !s->not_source) {
                        rc->files[s->root_idx]++;
                        rc->rows[s->root_idx] += s->counts.rows;
                }
}

static json_object *harness_json(const struct status_info *si, const struct root_counts *rc,
                                 const struct adapter *a)
{
        json_object *h = json_object_new_object(), *caps = json_object_new_object();
        json_object *roots = json_object_new_array();
        const struct root_list *rl = ingest_roots(si->ingest);
        struct adapter_stats st;
        struct unmetered um = { .sessions = json_object_new_array() };
        size_t it;

        add(h, "id", json_object_new_string(a->id));
        add(h, "name", json_object_new_string(a->display_name));
        add(caps, "tokens", json_object_new_string(cap_tokens_name(a->caps.tokens)));
        add(caps, "cost", json_object_new_string(cap_cost_name(a->caps.cost)));
        add(caps, "activity", json_object_new_string(cap_activity_name(a->caps.activity)));
        add(caps, "reasoning", json_object_new_string(cap_reasoning_name(a->caps.reasoning)));
        add(caps, "events", json_object_new_string(cap_events_name(a->caps.events)));
        add(h, "capabilities", caps);
        add(h, "verified", json_object_new_boolean(a->unverified == NULL));
        if (a->unverified)
                add(h, "unverified", json_object_new_string(a->unverified));
        for (size_t i = 0; i < rl->n; i++) {
                const struct root *r = &rl->v[i];
                if (r->adapter != a)
                        continue;
                json_object *ro = json_object_new_object();
                add(ro, "path", json_object_new_string(r->path));
                add(ro, "exists", json_object_new_boolean(ingest_root_exists(si->ingest, i)));
                add(ro, "reason", json_object_new_string(root_reason_name(r->reason)));
                add(ro, "env_var", r->reason == ROOT_ENV ? str_or_null(r->env_var) : NULL);
                add(ro, "from_install_record",
                    json_object_new_boolean(r->reason == ROOT_ENV && status_var_from_install(r->env_var)));
                add(ro, "label", json_object_new_string(r->label));
                add(ro, "detail", str_or_null(r->detail));
                add(ro, "watched", json_object_new_boolean(si->watch && watch_has(si->watch, r->path)));
                add(ro, "rate_limits", root_limits(ingest_ledger(si->ingest), r->path));
                add(ro, "origin", json_object_new_boolean((r->flags & ROOT_F_ORIGIN) != 0));
                add(ro, "files", rc->files ? json_object_new_int64((int64_t)rc->files[i]) : NULL);
                add(ro, "rows", rc->rows ? json_object_new_int64((int64_t)rc->rows[i]) : NULL);
                json_object_array_add(roots, ro);
        }
        add(h, "roots", roots);
        /* the engine's running sums: no ledger read per source */
        ingest_adapter_stats(si->ingest, a, &st);
        /* only a harness that can tell unmetered spending reads its sources'
         * states (today Claude Code) */
        for (struct source_rec *s = a->unmetered ? ingest_sources_first(si->ingest, &it) : NULL; s;
             s = ingest_sources_next(si->ingest, &it)) {
                struct checkpoint cp;
                if (s->adapter == a && ledger_get_checkpoint(ingest_ledger(si->ingest), s->path, &cp) == 0)
                        unmetered_add(a, &cp, &um);
        }
        add(h, "files", json_object_new_int64((int64_t)st.files));
        add(h, "not_transcripts", json_object_new_int64((int64_t)st.not_source));
        add(h, "bytes_read", json_object_new_int64((int64_t)st.bytes_read));
        add(h, "lines", json_object_new_int64((int64_t)st.lines));
        add(h, "malformed", json_object_new_int64((int64_t)st.malformed));
        add(h, "oversized", json_object_new_int64((int64_t)st.oversized));
        add(h, "rows", json_object_new_int64((int64_t)st.rows));
        add(h, "errors", json_object_new_int64((int64_t)st.errors));
        add(h, "last_commit", time_or_null(st.last_commit_ms));
        if (a->unmetered) {
                json_object *uo = json_object_new_object();
                add(uo, "runs", json_object_new_int64((int64_t)um.runs));
                add(uo, "tokens", json_object_new_int64((int64_t)um.tokens));
                add(uo, "sessions", um.sessions);
                add(h, "unmetered", uo);
        } else {
                json_object_put(um.sessions);
        }
        if (a->status_extra)
                add_extra(h, si->ingest, a);
        add_discovery_notes(h, rl, a);
        return h;
}

/* Rows refused for numbers out of bounds (row-bounds.h), by reason. */
static json_object *refused_json(struct ledger *l)
{
        struct ledger_refused rf = {{0}};
        json_object *o = json_object_new_object();

        (void)ledger_get_refused(l, &rf);
        add(o, "total", json_object_new_int64((int64_t)rf.n[0]));
        for (int i = 1; i < ROW_REFUSAL_KINDS; i++)
                add(o, row_refusal_name((enum row_refusal)i), json_object_new_int64((int64_t)rf.n[i]));
        return o;
}

int status_build(const struct status_info *si, struct json_object **ret)
{
        struct ledger *l = ingest_ledger(si->ingest);
        struct ledger_stats ls = {0};
        json_object *o = json_object_new_object(), *lo = json_object_new_object();
        json_object *io = json_object_new_object(), *env = json_object_new_object();
        json_object *hs = json_object_new_array(), *warn = json_object_new_array();
        uint64_t done, known;
        struct timespec ts;

        clock_gettime(CLOCK_REALTIME, &ts);
        int64_t now = (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
        (void)ledger_get_stats(l, &ls);
        add(o, "version", json_object_new_string(AM_VERSION));
        add(o, "pid", json_object_new_int((int)getpid()));
        add(o, "uptime_s", json_object_new_int64((now - si->start_ms) / 1000));
        add(o, "state_dir", json_object_new_string(si->state_dir));
        add(o, "socket", json_object_new_string(si->socket_path));
        add(lo, "path", json_object_new_string(ledger_path(l)));
        add(lo, "bytes", json_object_new_int64((int64_t)ls.file_bytes));
        add(lo, "rows", json_object_new_int64((int64_t)ls.rows));
        add(lo, "sessions", json_object_new_int64((int64_t)ls.sessions));
        add(lo, "sources", json_object_new_int64((int64_t)ls.sources));
        add(lo, "calls", json_object_new_int64((int64_t)ls.calls));
        add(lo, "rows_refused", refused_json(l));
        int lerr = ingest_ledger_error(si->ingest);
        add(lo, "write_error", lerr ? json_object_new_string(strerror(-lerr)) : NULL);
        add(o, "ledger", lo);
        ingest_progress(si->ingest, &done, &known);
        add(io, "bytes_done", json_object_new_int64((int64_t)done));
        add(io, "bytes_known", json_object_new_int64((int64_t)known));
        add(io, "initial_scan_done", json_object_new_boolean(si->initial_scan_done));
        {
                size_t it, n = 0;
                for (struct source_rec *s = ingest_sources_first(si->ingest, &it); s;
                     s = ingest_sources_next(si->ingest, &it))
                        n++;
                add(io, "files", json_object_new_int64((int64_t)n));
        }
        add(io, "watches", json_object_new_int64(si->watch ? (int64_t)watch_count(si->watch) : 0));
        add(o, "ingest", io);
        add(o, "last_commit", time_or_null(ingest_last_commit_ms(si->ingest)));
        add(o, "install_record", install_record(l));
        for (size_t i = 0; registry_env_vars()[i]; i++) {
                const char *v = getenv(registry_env_vars()[i]);
                if (v && *v)
                        add(env, registry_env_vars()[i], json_object_new_string(v));
        }
        add(o, "env", env);
        struct root_counts rc;
        root_counts_fill(si->ingest, &rc);
        for (size_t i = 0; registry_adapters[i]; i++)
                json_object_array_add(hs, harness_json(si, &rc, registry_adapters[i]));
        free(rc.files);
        free(rc.rows);
        add(o, "harnesses", hs);
        for (size_t i = 0; si->warnings && si->warnings[i]; i++)
                json_object_array_add(warn, json_object_new_string(si->warnings[i]));
        add(o, "warnings", warn);
        add(o, "rate_limits", si->rate_limits ? json_object_get(si->rate_limits) : NULL);
        *ret = o;
        return 0;
}

static json_object *source_json(struct ingest *in, const struct source_rec *s)
{
        struct checkpoint cp = {0};
        bool have = ledger_get_checkpoint(ingest_ledger(in), s->path, &cp) == 0;
        json_object *so = json_object_new_object();
        add(so, "path", json_object_new_string(s->path));
        add(so, "harness", json_object_new_string(s->adapter->id));
        add(so, "kind", json_object_new_string(s->kind == CLASS_TABLE      ? "table"
                                               : s->kind == CLASS_DOCUMENT ? "document"
                                                                           : "lines"));
        add(so, "size", json_object_new_int64((int64_t)(have ? cp.size : s->size)));
        add(so, "offset", json_object_new_int64((int64_t)(have ? cp.offset : 0)));
        add(so, "bytes_read", json_object_new_int64((int64_t)cp.bytes_read));
        add(so, "decoded_bytes", json_object_new_int64((int64_t)s->decoded));
        add(so, "lines", json_object_new_int64((int64_t)cp.lines));
        add(so, "malformed", json_object_new_int64((int64_t)cp.malformed));
        add(so, "oversized", json_object_new_int64((int64_t)cp.oversized));
        add(so, "rows_added", json_object_new_int64((int64_t)cp.rows_added));
        add(so, "resets", json_object_new_int64((int64_t)cp.resets));
        add(so, "not_transcript", json_object_new_boolean(s->not_source));
        add(so, "last_commit", time_or_null(cp.last_commit_ms));
        add(so, "error", !s->last_error              ? NULL
                         : s->kind == CLASS_TABLE ? json_object_new_string(adapt_db_strerror(s->last_error))
                                                  : json_object_new_string(strerror(-s->last_error)));
        return so;
}

int sources_build(struct ingest *in, struct json_object **ret)
{
        json_object *o = json_object_new_object(), *arr = json_object_new_array();
        size_t it;
        for (struct source_rec *s = ingest_sources_first(in, &it); s; s = ingest_sources_next(in, &it))
                json_object_array_add(arr, source_json(in, s));
        add(o, "sources", arr);
        *ret = o;
        return 0;
}

struct sources_stream {
        struct ingest *in;
        char **paths;
        size_t n, next;
};

static void sources_stream_free(void *u)
{
        struct sources_stream *ss = u;
        for (size_t i = ss->next; i < ss->n; i++)
                free(ss->paths[i]);
        free(ss->paths);
        free(ss);
}

static int sources_stream_next(void *u, json_object **ret_item)
{
        struct sources_stream *ss = u;
        while (ss->next < ss->n) {
                char *path = ss->paths[ss->next++];
                const struct source_rec *s = ingest_find(ss->in, path);
                free(path);
                if (s) {
                        *ret_item = source_json(ss->in, s);
                        return 1;
                }
        }
        return 0;
}

int sources_stream_new(struct ingest *in, struct control_stream *ret_stream)
{
        struct sources_stream *ss = calloc(1, sizeof(*ss));
        size_t it, cap = 0;

        if (!ss)
                return -ENOMEM;
        ss->in = in;
        for (struct source_rec *s = ingest_sources_first(in, &it); s; s = ingest_sources_next(in, &it)) {
                if (ss->n == cap) {
                        size_t ncap = cap ? cap * 2 : 1024;
                        char **np = realloc(ss->paths, ncap * sizeof(*np));
                        if (!np)
                                goto oom;
                        ss->paths = np;
                        cap = ncap;
                }
                if (!(ss->paths[ss->n] = strdup(s->path)))
                        goto oom;
                ss->n++;
        }
        *ret_stream = (struct control_stream){
                .key = "sources", .next = sources_stream_next, .free = sources_stream_free, .u = ss};
        return 0;
oom:
        sources_stream_free(ss);
        return -ENOMEM;
}
