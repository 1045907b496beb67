/* One OpenCode (or Kilo) message, as the database's data column and the
 * JSON-era message file both hold it: the fields that matter, read by the
 * validating scanner, turned into one usage row with a content key that is
 * the same for the same call wherever it is read (a fork's copy under new
 * ids, the JSON file and the row an upgrade migrated from it, every update
 * in place of the row).
 *
 * Tokens: input is uncached, cache read and write apart. Output: the
 * database era writes output WITHOUT reasoning, the JSON-file era WITH it.
 * When reasoning is not 0 and tokens.total is written, total tells which
 * (input + output + reasoning + cache = output excludes it; input + output
 * + cache = it includes it), so a migrated JSON-era row in a database is
 * read as what it is; otherwise the era of the source decides. */
#include <errno.h>
#include <math.h>
#include <string.h>

#include "opencode/opencode.h"
#include "row.h"

_Static_assert(ROW_PROJECT_MAX <= JSCAN_SET_MAX, "row fields fit jscan_span_set");

/* ---- fields ------------------------------------------------------------------ */

/* A token count: a number as it is; any other value (text, null: JSON's
 * NaN, an object) present but not a number, so the row is refused rather
 * than counted with 0 in its place. */
static bool read_count(struct jscan *s, struct jscan_num *ret_num, int depth)
{
        if (!jscan_read_num(s, ret_num, depth))
                return false;
        if (!ret_num->present)
                *ret_num = (struct jscan_num){ .present = true, .is_int = false, .d = NAN };
        return true;
}

static bool cache_key(struct jscan *s, const struct jscan_span *k, void *u, int depth)
{
        struct ocode_msg *m = u;

        if (JSCAN_KEY_IS(k, "read"))
                return read_count(s, &m->cache_read, depth);
        if (JSCAN_KEY_IS(k, "write"))
                return read_count(s, &m->cache_write, depth);
        return jscan_skip(s, depth);
}

static bool tokens_key(struct jscan *s, const struct jscan_span *k, void *u, int depth)
{
        struct ocode_msg *m = u;

        if (JSCAN_KEY_IS(k, "total"))
                return read_count(s, &m->total, depth);
        if (JSCAN_KEY_IS(k, "input"))
                return read_count(s, &m->input, depth);
        if (JSCAN_KEY_IS(k, "output"))
                return read_count(s, &m->output, depth);
        if (JSCAN_KEY_IS(k, "reasoning"))
                return read_count(s, &m->reasoning, depth);
        if (JSCAN_KEY_IS(k, "cache")) {
                m->cache_read.present = m->cache_write.present = false;
                if (jscan_at(s, '{'))
                        return jscan_object(s, cache_key, m, depth + 1);
                return jscan_skip(s, depth);
        }
        return jscan_skip(s, depth);
}

static bool time_key(struct jscan *s, const struct jscan_span *k, void *u, int depth)
{
        struct ocode_msg *m = u;

        if (JSCAN_KEY_IS(k, "created"))
                return jscan_read_time(s, &m->created, depth);
        if (JSCAN_KEY_IS(k, "completed")) {
                struct jscan_time t;
                if (!jscan_read_time(s, &t, depth))
                        return false;
                m->completed = t.present;
                m->completed_ms = t.present ? t.ms : 0;
                return true;
        }
        return jscan_skip(s, depth);
}

static bool path_key(struct jscan *s, const struct jscan_span *k, void *u, int depth)
{
        struct ocode_msg *m = u;

        if (JSCAN_KEY_IS(k, "cwd"))
                return jscan_read_str(s, &m->cwd, depth);
        if (JSCAN_KEY_IS(k, "root"))
                return jscan_read_str(s, &m->root, depth);
        return jscan_skip(s, depth);
}

/* A member that must be an object to mean anything: read by fn, else skipped. */
static bool sub_object(struct jscan *s, jscan_key_fn fn, struct ocode_msg *m, int depth)
{
        if (jscan_at(s, '{'))
                return jscan_object(s, fn, m, depth + 1);
        return jscan_skip(s, depth);
}

static bool msg_key(struct jscan *s, const struct jscan_span *k, void *u, int depth)
{
        struct ocode_msg *m = u;

        if (JSCAN_KEY_IS(k, "role"))
                return jscan_read_str(s, &m->role, depth);
        if (JSCAN_KEY_IS(k, "id"))
                return jscan_read_str(s, &m->id, depth);
        if (JSCAN_KEY_IS(k, "sessionID"))
                return jscan_read_str(s, &m->session, depth);
        if (JSCAN_KEY_IS(k, "providerID"))
                return jscan_read_str(s, &m->provider, depth);
        if (JSCAN_KEY_IS(k, "modelID"))
                return jscan_read_str(s, &m->model, depth);
        if (JSCAN_KEY_IS(k, "agent"))
                return jscan_read_str(s, &m->agent, depth);
        if (JSCAN_KEY_IS(k, "cost"))
                return jscan_read_num(s, &m->cost, depth);
        if (JSCAN_KEY_IS(k, "error")) {
                m->error = jscan_at(s, '{');
                return jscan_skip(s, depth);
        }
        if (JSCAN_KEY_IS(k, "time"))
                return sub_object(s, time_key, m, depth);
        if (JSCAN_KEY_IS(k, "path"))
                return sub_object(s, path_key, m, depth);
        if (JSCAN_KEY_IS(k, "tokens")) {
                m->has_tokens = jscan_at(s, '{');
                return sub_object(s, tokens_key, m, depth);
        }
        return jscan_skip(s, depth);
}

int ocode_msg_parse(const char *text, size_t len, struct ocode_msg *ret)
{
        struct jscan s = { text, text + len };
        struct ocode_msg m = { 0 };

        jscan_ws(&s);
        if (!jscan_at(&s, '{') || !jscan_object(&s, msg_key, &m, 0))
                return -EBADMSG;
        jscan_ws(&s);
        if (s.p != s.end)
                return -EBADMSG;
        *ret = m;
        return 0;
}

bool ocode_msg_pending(const struct ocode_msg *m)
{
        return jscan_span_eq(&m->role, "assistant") && !m->error && !m->completed;
}

/* ---- numbers ------------------------------------------------------------------ */

/* A token count: absent 0; negative, fractional beyond int64 or not a
 * number UINT64_MAX, which row_check_bounds refuses. */
static uint64_t tokens(const struct jscan_num *n)
{
        int64_t v;

        if (!n->present)
                return 0;
        if (!jscan_num_i64(n, &v) || v < 0)
                return UINT64_MAX;
        return (uint64_t)v;
}

/* Adds without wrapping (a sum that overflows is refused by the bounds). */
static uint64_t sat_add(uint64_t a, uint64_t b)
{
        return a > UINT64_MAX - b ? UINT64_MAX : a + b;
}

struct counts {
        uint64_t input, output, reasoning, cache_read, cache_write; /* as written */
};

static struct counts counts_of(const struct ocode_msg *m)
{
        return (struct counts){
                .input = tokens(&m->input),
                .output = tokens(&m->output),
                .reasoning = tokens(&m->reasoning),
                .cache_read = tokens(&m->cache_read),
                .cache_write = tokens(&m->cache_write),
        };
}

/* Whether tokens.output already includes tokens.reasoning. */
static bool output_includes_reasoning(const struct ocode_msg *m, const struct counts *c, enum ocode_era era)
{
        uint64_t rest, total;

        if (c->reasoning == 0)
                return true; /* nothing to add either way */
        if (m->total.present && (total = tokens(&m->total)) != UINT64_MAX) {
                rest = sat_add(sat_add(c->input, c->output), sat_add(c->cache_read, c->cache_write));
                if (total == sat_add(rest, c->reasoning))
                        return false;
                if (total == rest && c->output >= c->reasoning)
                        return true;
        }
        return era == OCODE_ERA_JSON && c->output >= c->reasoning;
}

/* ---- the row ------------------------------------------------------------------ */

struct names {
        char provider[ROW_PROVIDER_MAX], model[ROW_MODEL_MAX], agent[64];
        char cwd[ROW_PROJECT_MAX], root[ROW_PROJECT_MAX];
};

static void names_of(const struct ocode_msg *m, struct names *n)
{
        jscan_span_set(n->provider, sizeof(n->provider), &m->provider);
        jscan_span_set(n->model, sizeof(n->model), &m->model);
        jscan_span_set(n->agent, sizeof(n->agent), &m->agent);
        jscan_span_set(n->cwd, sizeof(n->cwd), &m->cwd);
        jscan_span_set(n->root, sizeof(n->root), &m->root);
}

/* The call's identity: what a fork's copy, the migrated row and every later
 * update of the row hold alike, and what tells two calls apart (their
 * start time to the millisecond, where, which model, and their tokens). */
static int msg_key_of(const struct ocode_msg *m, const struct names *n, const struct counts *c,
                      struct row_key *ret)
{
        struct keyhash h;
        int r = keyhash_begin(&h, OCODE_KEY_FORMAT);

        if (r < 0)
                return r;
        keyhash_str(&h, n->provider);
        keyhash_str(&h, n->model);
        keyhash_u64(&h, m->created.present ? (uint64_t)m->created.ms : UINT64_MAX);
        keyhash_str(&h, n->cwd);
        keyhash_str(&h, n->root);
        keyhash_str(&h, n->agent);
        keyhash_u64(&h, c->input);
        keyhash_u64(&h, c->output);
        keyhash_u64(&h, c->reasoning);
        keyhash_u64(&h, c->cache_read);
        keyhash_u64(&h, c->cache_write);
        keyhash_end(&h, ret);
        return 0;
}

bool ocode_msg_same_call(const struct ocode_msg *a, const struct ocode_msg *b)
{
        struct names na, nb;
        struct counts ca = counts_of(a), cb = counts_of(b);
        struct row_key ka, kb;

        names_of(a, &na);
        names_of(b, &nb);
        return msg_key_of(a, &na, &ca, &ka) == 0 && msg_key_of(b, &nb, &cb, &kb) == 0 &&
               memcmp(&ka, &kb, sizeof(ka)) == 0;
}

int ocode_msg_row(const struct ocode_flavor *fl, const struct ocode_msg *m, enum ocode_era era,
                  const char *session, int64_t fallback_ms, uint64_t source_hash, struct row_batch *out)
{
        struct counts c;
        struct names n;
        struct usage_row *row;
        int64_t cost_nano = 0;
        bool priced = false;
        int r;

        if (!jscan_span_eq(&m->role, "assistant") || !m->has_tokens)
                return 0;
        c = counts_of(m);
        if (m->cost.present && !isnan(m->cost.d) && m->cost.d != 0) {
                double d = m->cost.d; /* out of int64 nano: row_check_bounds refuses it */
                cost_nano = fabs(d) < 9.0e9 ? llround(d * 1e9) : d > 0 ? INT64_MAX : INT64_MIN;
                priced = true;
        }
        if (!c.input && !c.output && !c.reasoning && !c.cache_read && !c.cache_write && !priced)
                return 0; /* inserted at the step's start, or a call that failed */
        names_of(m, &n);
        r = row_batch_push(out, &row);
        if (r < 0)
                return r;
        row->flags = ROW_F_TOKENS_KNOWN | ROW_F_UPSERT | (m->created.present ? 0 : ROW_F_TIME_APPROX);
        row->kind = ROW_KIND_MESSAGE;
        row->time_ms = m->created.present ? m->created.ms : fallback_ms;
        row->input = c.input;
        row->reasoning = c.reasoning;
        row->output = output_includes_reasoning(m, &c, era) ? c.output : sat_add(c.output, c.reasoning);
        row->cache_read = c.cache_read;
        row->cache_write = c.cache_write;
        row->total = m->total.present ? tokens(&m->total)
                                      : sat_add(sat_add(row->input, row->output), sat_add(row->cache_read, row->cache_write));
        /* a cost of 0 with tokens is a model OpenCode could not price: the
         * table prices it (unpriced is not free) */
        row->cost_source = priced ? COST_VENDOR : COST_NONE;
        row->cost_nano = cost_nano;
        row->source_hash = source_hash;
        ROW_SET(row->tool, fl->tool);
        if (session)
                ROW_SET(row->session, session);
        else
                jscan_span_set(row->session, sizeof(row->session), &m->session);
        /* the project: the worktree root, or the directory when it is none */
        ROW_SET(row->project, n.root[0] && strcmp(n.root, "/") != 0 ? n.root : n.cwd);
        ROW_SET(row->provider, n.provider);
        ROW_SET(row->model, n.model);
        r = msg_key_of(m, &n, &c, &row->key);
        if (r < 0) {
                out->n--;
                return r;
        }
        return 1;
}
