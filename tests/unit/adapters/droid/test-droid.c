/* Unit tests of the Factory Droid adapter: discovery and classification
 * (the .bak is never a source), the customModels map, each fixture
 * snapshot, a snapshot replaced five times (growth, a reset, the same
 * again), the key of a step read twice (a crash before its commit), and
 * the snapshots Droid 0.225.2 wrote itself (../shared/samples/realgen,
 * skipped when absent). */
#include <dirent.h>
#include <errno.h>
#include <json-c/json.h>
#include <limits.h>
#include <stdint.h>
#include <sys/stat.h>
#include <unistd.h>

#include "tap.h"
#include "testutil.h"

#include "adapter.h"
#include "droid/snapshot.h"
#include "registry.h"
#include "row.h"

#pragma GCC diagnostic ignored "-Wformat-truncation"

extern const struct adapter adapter_droid;
static const struct adapter *A = &adapter_droid;

/* ---- discovery, classification, config --------------------------------------------- */

static void test_discovery(void)
{
        char *tmp = tap_tmpdir(), home[PATH_MAX], p[PATH_MAX];
        struct root_list l = { 0 };
        struct fenv f = { 0 };
        struct discover_env env;
        const struct root *r;

        pj(home, tmp, "home");
        mkdir_p(home);
        fenv_set(&f, "HOME", home);
        env = fenv_env(&f);
        is_int(A->discover(&env, &l), 0, "discover");
        r = find_root(&l, pj(p, home, ".factory/sessions"));
        ok(r && r->reason == ROOT_DEFAULT && r->max_depth == 1, "~/.factory/sessions, one level of cwd slugs");
        is_int(l.n, 1, "one root");
        for (size_t i = 0; i < f.n_asked; i++)
                ok(strcmp(f.asked[i], "HOME") == 0, "asked only for HOME (%s)", f.asked[i]);
        ok(A->env == NULL, "no variable moves Droid's files");
        root_list_free(&l);
}

static void test_classify(void)
{
        static const struct {
                const char *rel;
                int depth;
                bool dir;
                int want;
        } c[] = {
                { "", 0, true, CLASS_DESCEND },
                { "-work-alpha", 1, true, CLASS_DESCEND },
                { "-work-alpha/sub", 2, true, CLASS_IGNORE },
                { "-work-alpha/1111.settings.json", 2, false, CLASS_DOCUMENT },
                { "-work-alpha/1111.settings.json.bak", 2, false, CLASS_IGNORE },
                { "-work-alpha/1111.jsonl", 2, false, CLASS_IGNORE },
                { "-work-alpha/.1111.settings.json.tmp", 2, false, CLASS_IGNORE },
                { "-work-alpha/.settings.json", 2, false, CLASS_IGNORE },
                { "1111.settings.json", 1, false, CLASS_DOCUMENT },
        };
        for (size_t i = 0; i < sizeof(c) / sizeof(c[0]); i++) {
                const char *name = strrchr(c[i].rel, '/') ? strrchr(c[i].rel, '/') + 1 : c[i].rel;
                int got = A->classify(c[i].rel, name, c[i].depth, c[i].dir);
                ok(got == c[i].want, "classify %s: %d", *c[i].rel ? c[i].rel : "(root)", got);
        }
}

/* A HOME whose .factory is the fixture's. */
static struct droid_config *load_fixture_config(void)
{
        char *tmp = tap_tmpdir(), home[PATH_MAX], link[PATH_MAX], target[PATH_MAX];
        struct fenv f = { 0 };
        struct discover_env env;
        const char *warning = NULL;
        void *cfg = NULL;

        pj(home, tmp, "cfghome");
        mkdir_p(home);
        pj(link, am_srcdir(), "fixtures/droid/factory");
        if (!realpath(link, target))
                exit(99);
        pj(link, home, ".factory");
        unlink(link);
        if (symlink(target, link) != 0)
                exit(99);
        fenv_set(&f, "HOME", home);
        env = fenv_env(&f);
        is_int(A->load_config(&env, &cfg, &warning), 0, "load_config of the fixture's settings.json");
        ok(cfg && !warning, "... no warning");
        return cfg;
}

static void test_models(const struct droid_config *c)
{
        const struct droid_model *m;

        ok(c && c->n == 4, "four custom models");
        m = droid_custom_model(c, "custom:My-Claude-0");
        ok(m && strcmp(m->model, "claude-sonnet-4-5") == 0 && strcmp(m->provider, "anthropic") == 0,
           "custom:My-Claude-0 is customModels[1] (named by its displayName)");
        m = droid_custom_model(c, "custom:Local-Box-0");
        ok(m && strcmp(m->model, "fake-local") == 0, "custom:Local-Box-0 is customModels[0]");
        m = droid_custom_model(c, "custom:Mini-0");
        ok(m && strcmp(m->model, "gpt-5-mini") == 0, "custom:Mini-0: the first entry named Mini");
        m = droid_custom_model(c, "custom:Mini-1");
        ok(m && strcmp(m->model, "gpt-4.1") == 0, "custom:Mini-1: the second entry named Mini");
        ok(!droid_custom_model(c, "custom:Mini-2"), "custom:Mini-2: no third one");
        ok(!droid_custom_model(c, "custom:Gone-0"), "a name no entry has: unmapped");
        m = droid_custom_model(c, "custom:my-claude-0");
        ok(m && strcmp(m->model, "claude-sonnet-4-5") == 0, "ASCII case ignored");
        ok(!droid_custom_model(c, "claude-sonnet-4-5"), "not a custom id");
        ok(!droid_custom_model(c, "custom:My-Claude-x"), "no index");
        ok(!droid_custom_model(NULL, "custom:My-Claude-0"), "no config: unmapped");
}

/* ---- documents ------------------------------------------------------------------------- */

static int parse_doc(const char *path, const struct droid_config *cfg, struct parse_state *ps, struct row_batch *b)
{
        struct source_ctx ctx = { .adapter = A, .path = path, .config = cfg,
                                  .source_hash = hash64(path, strlen(path)) };
        size_t len, known = 99;
        char *doc = slurp(path, &len);
        int r;

        if (!doc)
                return -errno;
        stat(path, &ctx.st);
        r = A->parse_document(&ctx, ps, doc, len, &known, b);
        free(doc);
        if (known != 0)
                return -EINVAL;
        return r;
}

static void sum_rows(struct totals *t, const struct row_batch *b)
{
        add_rows(t, b);
}

static void test_home(const struct droid_config *cfg)
{
        char dir[PATH_MAX], path[PATH_MAX], fx[PATH_MAX];
        static const char *const slugs[] = { "-work-alpha", "-work-beta" };
        struct json_object *exp, *c;
        struct totals t = { 0 };
        struct row_batch b = { 0 };
        unsigned incomplete = 0, priced = 0, projects = 0;
        struct row_key k1 = { 0 }, k2 = { 0 };

        pj(fx, am_srcdir(), "fixtures/droid");
        exp = json_object_from_file(pj(path, fx, "expected.json"));
        c = json_object_object_get(json_object_object_get(exp, "cases"), "home");
        ok(c != NULL, "expected.json: home");
        for (size_t s = 0; s < 2; s++) {
                struct dirent *de;
                DIR *d;

                snprintf(dir, sizeof(dir), "%s/factory/sessions/%s", fx, slugs[s]);
                d = opendir(dir);
                while (d && (de = readdir(d))) {
                        struct parse_state ps = { 0 };
                        int r;

                        if (A->classify(de->d_name, de->d_name, 2, false) != CLASS_DOCUMENT)
                                continue;
                        snprintf(path, sizeof(path), "%s/%s", dir, de->d_name);
                        r = parse_doc(path, cfg, &ps, &b);
                        incomplete += r == PARSE_INCOMPLETE;
                }
                if (d)
                        closedir(d);
        }
        for (size_t i = 0; i < b.n; i++) {
                const struct usage_row *r = &b.rows[i];
                priced += strcmp(r->model, "claude-sonnet-4-5") == 0 || strcmp(r->model, "gpt-4.1") == 0;
                projects += strcmp(r->project, "/work/alpha") == 0;
                if (strncmp(r->session, "11111111", 8) == 0)
                        k1 = r->key;
                if (strncmp(r->session, "22222222", 8) == 0)
                        k2 = r->key;
                ok(r->kind == ROW_KIND_SNAPSHOT_STEP && strcmp(r->tool, "droid") == 0 &&
                           (r->flags & ROW_F_TIME_APPROX) && r->time_ms > 0,
                   "row %s: a snapshot step of droid at the file's time", r->session);
        }
        sum_rows(&t, &b);
        is_int(t.rows, jint(c, "rows", -1), "home: rows");
        is_int(t.input, jint(c, "input", -1), "home: input");
        is_int(t.output, jint(c, "output", -1), "home: output");
        is_int(t.cache_read, jint(c, "cache_read", -1), "home: cache read");
        is_int(t.cache_write, jint(c, "cache_write", -1), "home: cache write");
        is_int(t.reasoning, jint(c, "reasoning", -1), "home: reasoning");
        is_int(t.total, jint(c, "total", -1), "home: total");
        is_int(priced, jint(c, "priced", -1), "home: rows mapped to a priced model");
        is_int(incomplete, jint(c, "incomplete", -1), "home: the torn snapshot is incomplete");
        is_int(projects, 2, "home: the project from the transcript's session_start");
        ok(memcmp(&k1, &k2, sizeof(k1)) != 0, "two sessions with identical usage: two keys");
        for (size_t i = 0; i < b.n; i++)
                if (strncmp(b.rows[i].session, "11111111", 8) == 0)
                        ok(strcmp(b.rows[i].model_alias, "custom:My-Claude-0") == 0 &&
                                   strcmp(b.rows[i].provider, "anthropic") == 0,
                           "the id Droid wrote is kept as the alias, the entry's provider");
        row_batch_free(&b);
        free(t.keys);
        json_object_put(exp);
}

static void encode_roundtrip(struct parse_state *ps)
{
        uint8_t enc[PS_ENCODED_MAX];
        size_t el;
        struct parse_state back;

        ok(parse_state_encode(ps, enc, sizeof(enc), &el) == 0 && parse_state_decode(enc, el, &back) == 0 &&
                   back.priv_len == ps->priv_len && memcmp(back.priv, ps->priv, ps->priv_len) == 0,
           "the state survives its checkpoint encoding");
        *ps = back;
}

static void test_steps(const struct droid_config *cfg)
{
        char fx[PATH_MAX], path[PATH_MAX], sess[PATH_MAX];
        struct json_object *exp, *c;
        struct parse_state ps = { 0 }, before;
        struct row_batch b = { 0 }, again = { 0 };
        struct totals t = { 0 };
        uint32_t rollbacks = 0;
        char *tmp = tap_tmpdir();

        pj(fx, am_srcdir(), "fixtures/droid");
        exp = json_object_from_file(pj(path, fx, "expected.json"));
        c = json_object_object_get(json_object_object_get(exp, "cases"), "steps");
        /* the source is <id>.settings.json, replaced by each version in turn */
        snprintf(sess, sizeof(sess), "%s/77777777-0000-4000-8000-000000000007.settings.json", tmp);
        for (int k = 1; k <= 5; k++) {
                size_t n0 = b.n, len;
                char *text;

                snprintf(path, sizeof(path), "%s/steps/77777777-0000-4000-8000-000000000007.settings.json.%d", fx, k);
                text = slurp(path, &len);
                if (!text)
                        exit(99);
                write_bytes(sess, text, len);
                free(text);
                before = ps;
                ok(parse_doc(sess, cfg, &ps, &b) == PARSE_OK, "step %d parsed", k);
                /* 3 rolls back to lower totals, 4 is 3 again, 5 regrows to 2's */
                ok(b.n - n0 == (k <= 2 ? 1u : 0u), "step %d: %s", k,
                   k <= 2 ? "one row" : k == 3 ? "a rollback, no row" : k == 4 ? "unchanged, no row"
                                                                         : "back at the highest totals, no row");
                if (k == 2) {
                        /* a crash before the commit: read again from the state before */
                        struct parse_state re = before;
                        row_batch_clear(&again);
                        parse_doc(sess, cfg, &re, &again);
                        ok(again.n == 1 && memcmp(&again.rows[0].key, &b.rows[b.n - 1].key, sizeof(struct row_key)) == 0 &&
                                   again.rows[0].input == b.rows[b.n - 1].input,
                           "step %d read again after a crash: the same row and key", k);
                }
                encode_roundtrip(&ps);
        }
        sum_rows(&t, &b);
        is_int(t.rows, jint(c, "rows", -1), "steps: rows (all keys distinct)");
        is_int(t.input, jint(c, "input", -1), "steps: input");
        is_int(t.output, jint(c, "output", -1), "steps: output");
        is_int(t.cache_read, jint(c, "cache_read", -1), "steps: cache read");
        is_int(t.cache_write, jint(c, "cache_write", -1), "steps: cache write");
        is_int(t.reasoning, jint(c, "reasoning", -1), "steps: reasoning");
        is_int(t.total, jint(c, "total", -1), "steps: total");
        ok(droid_rollbacks(&ps, &rollbacks) == 0 && rollbacks == jint(c, "rollbacks", -1), "steps: one rollback seen");
        /* growth past the highest totals: only the rise counts */
        write_file(sess, "{\"model\": \"custom:My-Claude-0\", \"tokenUsage\": {\"inputTokens\": 3500, "
                         "\"outputTokens\": 35, \"cacheCreationTokens\": 64, \"cacheReadTokens\": 1500, "
                         "\"thinkingTokens\": 4}}");
        row_batch_clear(&again);
        is_int(parse_doc(sess, cfg, &ps, &again), PARSE_OK, "past the highest totals");
        ok(again.n == 1 && again.rows[0].input == 500 && again.rows[0].output == 5 && again.rows[0].cache_read == 0 &&
                   again.rows[0].cache_write == 0,
           "... only the rise above them counts");
        /* the same last version read again: nothing */
        row_batch_clear(&again);
        is_int(parse_doc(sess, cfg, &ps, &again), PARSE_OK, "the last version again");
        is_int(again.n, 0, "... adds nothing");
        /* a torn version: incomplete, no rows, the state untouched */
        write_file(sess, "{\n  \"model\": \"custom:My-Claude-0\",\n  \"tokenUsage\": {\"inputTokens\": 99999");
        before = ps;
        is_int(parse_doc(sess, cfg, &ps, &again), PARSE_INCOMPLETE, "a torn version is incomplete");
        ok(again.n == 0 && before.priv_len == ps.priv_len && memcmp(before.priv, ps.priv, ps.priv_len) == 0,
           "... no rows, the last snapshot kept");
        write_file(sess, "{\"tokenUsage\": {\"inputTokens\": -5}}");
        is_int(parse_doc(sess, cfg, &ps, &again), PARSE_MALFORMED, "a negative total is malformed");
        write_file(sess, "{\"tokenUsage\": {\"inputTokens\": 1.5}}");
        is_int(parse_doc(sess, cfg, &ps, &again), PARSE_MALFORMED, "a fraction is malformed");
        is_int(again.n, 0, "... neither makes a row");
        row_batch_free(&b);
        row_batch_free(&again);
        free(t.keys);
        json_object_put(exp);
}

/* ---- realgen: the snapshots Droid 0.225.2 wrote --------------------------------------- */

static void test_realgen(const char *samples)
{
        char root[PATH_MAX], dir[PATH_MAX], path[PATH_MAX], home[PATH_MAX], link[PATH_MAX];
        struct fenv f = { 0 };
        struct discover_env env;
        const char *warning = NULL;
        void *cfg = NULL;
        struct totals t = { 0 };
        struct row_batch b = { 0 };
        struct dirent *de, *fe;
        size_t files = 0, baks = 0, claude = 0, mini = 0, fake = 0;
        DIR *d;

        snprintf(root, sizeof(root), "%s/realgen/droid-0.225.2/factory-home", samples);
        snprintf(dir, sizeof(dir), "%s/sessions", root);
        d = opendir(dir);
        if (!d) {
                ok(1, "# SKIP no realgen droid samples");
                return;
        }
        pj(home, tap_tmpdir(), "rghome");
        mkdir_p(home);
        pj(link, home, ".factory");
        unlink(link);
        if (!realpath(root, path) || symlink(path, link) != 0)
                exit(99);
        fenv_set(&f, "HOME", home);
        env = fenv_env(&f);
        A->load_config(&env, &cfg, &warning);
        while ((de = readdir(d))) {
                DIR *sd;
                if (de->d_name[0] == '.')
                        continue;
                snprintf(path, sizeof(path), "%s/%s", dir, de->d_name);
                if (!(sd = opendir(path)))
                        continue;
                while ((fe = readdir(sd))) {
                        char p[PATH_MAX];
                        struct parse_state ps = { 0 };
                        size_t nl = strlen(fe->d_name);
                        baks += nl > 4 && strcmp(fe->d_name + nl - 4, ".bak") == 0;
                        if (A->classify(fe->d_name, fe->d_name, 2, false) != CLASS_DOCUMENT)
                                continue;
                        snprintf(p, sizeof(p), "%s/%s", path, fe->d_name);
                        files++;
                        ok(parse_doc(p, cfg, &ps, &b) == PARSE_OK, "realgen %.8s parsed", fe->d_name);
                }
                closedir(sd);
        }
        closedir(d);
        add_rows(&t, &b);
        is_int(files, 9, "realgen: nine snapshots (the .bak files are not sources)");
        ok(baks > 0, "realgen: .bak files were there");
        /* FACTS.md and the issue: the sum of the nine final snapshots */
        is_int(t.input, 89487, "realgen: input 89,487");
        is_int(t.output, 596, "realgen: output 596");
        is_int(t.cache_read, 88512, "realgen: cache read 88,512");
        is_int(t.cache_write, 64, "realgen: cache write 64");
        is_int(t.reasoning, 42, "realgen: thinking 42");
        is_int(t.rows, 8, "realgen: eight steps (one session has no usage)");
        for (size_t i = 0; i < b.n; i++) {
                claude += strcmp(b.rows[i].model, "claude-sonnet-4-5") == 0;
                mini += strcmp(b.rows[i].model, "gpt-5-mini") == 0;
                fake += strcmp(b.rows[i].model, "fake-gpt") == 0;
        }
        ok(claude == 2 && mini == 1 && fake == 5,
           "realgen: custom:Fake-Claude-0 -> claude-sonnet-4-5 (2), Fake-Responses-0 -> gpt-5-mini (1), fake-gpt (5)");
        row_batch_free(&b);
        free(t.keys);
        A->free_config(cfg);
}

int main(void)
{
        const char *samples = getenv("AM_SAMPLES");
        char def[PATH_MAX];
        struct droid_config *cfg;

        if (!samples || !*samples) {
                snprintf(def, sizeof(def), "%s/../shared/samples", am_srcdir());
                samples = def;
        }
        test_discovery();
        test_classify();
        cfg = load_fixture_config();
        test_models(cfg);
        test_home(cfg);
        test_steps(cfg);
        A->free_config(cfg);
        test_realgen(samples);
        return tap_done();
}
