/* Unit tests of the extensions' tasks (adapters/vscode-tasks/): which files
 * count, the two meanings of tokensIn (openai counts the cached tokens,
 * anthropic and openai-native do not; the provider from the row, else
 * task_metadata.json), cancelled rows, deleted_api_reqs, a row rewritten
 * from request-only to provisional to final under one key, the same task
 * under Roo Code a different harness, and a torn file; every editor root
 * flagged as the origin of its sessions, and the custom storage path
 * settings read from each editor's settings.json (JSONC, a server's
 * Machine/ settings over User/, a broken file a note, never a root). */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tap.h"
#include "testutil.h"

#include "adapter.h"
#include "registry.h"
#include "row.h"
#include "vscode-tasks/tasks.h"

extern const struct adapter adapter_cline;
extern const struct adapter adapter_roo;
extern const struct adapter adapter_kilo;

static char fixdir[PATH_MAX];

static int parse_as(const struct adapter *a, const char *path, const char *doc, struct row_batch *b)
{
        struct source_ctx ctx = { .adapter = a, .path = path };
        struct parse_state ps = { 0 };
        size_t known = 0;

        return a->parse_document(&ctx, &ps, doc, strlen(doc), &known, b);
}

/* common prefix length of a and b */
static size_t common(const char *a, const char *b)
{
        size_t i = 0;

        while (a[i] && a[i] == b[i])
                i++;
        return i;
}

/* doc parsed with *io_known (the prefix shared with the version before, capped
 * at what the parser reported for it), as the daemon does */
static int parse_known(const char *path, const char *doc, size_t *io_known, struct row_batch *b)
{
        struct source_ctx ctx = { .adapter = &adapter_cline, .path = path };
        struct parse_state ps = { 0 };

        return adapter_cline.parse_document(&ctx, &ps, doc, strlen(doc), io_known, b);
}

static const struct usage_row *at_ts(const struct row_batch *b, int64_t ts)
{
        for (size_t i = 0; i < b->n; i++)
                if (b->rows[i].time_ms == ts)
                        return &b->rows[i];
        return NULL;
}

static void test_classify(void)
{
        const struct adapter *A = &adapter_roo;

        is_int(A->classify("", "tasks", 0, true), CLASS_DESCEND, "tasks/ is walked");
        is_int(A->classify("1", "1", 1, true), CLASS_DESCEND, "a task directory is walked");
        is_int(A->classify("1/ui_messages.json", "ui_messages.json", 2, false), CLASS_DOCUMENT,
               "ui_messages.json is a document");
        is_int(A->classify("1/ui_messages.json.tmp.17.ab.json", "ui_messages.json.tmp.17.ab.json", 2, false),
               CLASS_IGNORE, "its tmp file is not");
        is_int(A->classify("1/api_conversation_history.json", "api_conversation_history.json", 2, false),
               CLASS_IGNORE, "the conversation history repeats the numbers: not read");
        is_int(A->classify("1/task_metadata.json", "task_metadata.json", 2, false), CLASS_IGNORE,
               "nor the metadata");
        is_int(adapter_cline.classify("1/ui_messages.json", "ui_messages.json", 2, false), CLASS_DOCUMENT,
               "cline reads the tasks layout too");
        is_int(adapter_cline.classify("s/s.messages.json", "s.messages.json", 2, false), CLASS_DOCUMENT,
               "and still its 3.x sessions");
        /* kilo: rooted at the extension's storage, tasks/ tells them apart */
        is_int(adapter_kilo.classify("tasks", "tasks", 1, true), CLASS_DESCEND, "kilo: tasks/ is walked");
        is_int(adapter_kilo.classify("tasks/1", "1", 2, true), CLASS_DESCEND, "kilo: a task directory too");
        is_int(adapter_kilo.classify("tasks/1/ui_messages.json", "ui_messages.json", 3, false), CLASS_DOCUMENT,
               "kilo: a task's ui_messages.json is a document");
        is_int(adapter_kilo.classify("tasks/1/ui_messages.json.tmp.1.a.json", "ui_messages.json.tmp.1.a.json", 3,
                                     false),
               CLASS_IGNORE, "kilo: its tmp file is not");
        is_int(adapter_kilo.classify("kilo.db", "kilo.db", 1, false), CLASS_TABLE, "kilo: the CLI's kilo.db still is");
        is_int(adapter_kilo.classify("settings", "settings", 1, true), CLASS_IGNORE,
               "kilo: nothing else of the extension's storage");
}

static void test_discover(void)
{
        struct root_list l = { 0 };
        bool code = false, ssh = false, cli = false;

        setenv("HOME", "/h", 1);
        unsetenv("CLINE_DIR");
        ok(adapter_cline.discover(&registry_process_env, &l) == 0, "cline: discover");
        for (size_t i = 0; i < l.n; i++) {
                code |= !strcmp(l.v[i].path, "/h/.config/Code/User/globalStorage/saoudrizwan.claude-dev/tasks");
                ssh |= !strcmp(l.v[i].path,
                               "/h/.vscode-server/data/User/globalStorage/saoudrizwan.claude-dev/tasks");
                cli |= !strcmp(l.v[i].path, "/h/.cline/data/tasks");
        }
        ok(code && ssh && cli, "cline: ~/.cline/data/tasks, VS Code's and the Remote-SSH server's storage");
        root_list_free(&l);
        l = (struct root_list){ 0 };
        cli = false;
        setenv("CLINE_DIR", "/opt/cl", 1);
        ok(adapter_cline.discover(&registry_process_env, &l) == 0, "cline: discover with CLINE_DIR");
        for (size_t i = 0; i < l.n; i++) {
                cli |= !strcmp(l.v[i].path, "/opt/cl/data/tasks") && l.v[i].reason == ROOT_ENV;
                ok(strcmp(l.v[i].path, "/h/.cline/data/tasks") != 0, "CLINE_DIR: not ~/.cline (%s)", l.v[i].path);
        }
        ok(cli, "cline: $CLINE_DIR/data/tasks");
        unsetenv("CLINE_DIR");
        root_list_free(&l);
        l = (struct root_list){ 0 };
        ssh = false;
        ok(adapter_roo.discover(&registry_process_env, &l) == 0, "roo: discover");
        for (size_t i = 0; i < l.n; i++)
                ssh |= !strcmp(l.v[i].path,
                               "/h/.vscode-server/data/User/globalStorage/rooveterinaryinc.roo-cline/tasks");
        ok(ssh, "roo: the Remote-SSH server's storage");
        ssh = false;
        for (size_t i = 0; i < l.n; i++)
                ssh |= !strcmp(l.v[i].path, "/h/.var/app/com.visualstudio.code/config/Code/User/globalStorage/"
                                            "rooveterinaryinc.roo-cline/tasks");
        ok(ssh, "roo: the Flatpak VS Code's storage");
        root_list_free(&l);
        l = (struct root_list){ 0 };
        ssh = false;
        ok(adapter_kilo.discover(&registry_process_env, &l) == 0, "kilo: discover");
        for (size_t i = 0; i < l.n; i++)
                ssh |= !strcmp(l.v[i].path, "/h/.vscode-server/data/User/globalStorage/kilocode.kilo-code") &&
                       l.v[i].max_depth == 2;
        ok(ssh, "kilo: the extension's storage on the Remote-SSH server, two levels deep");
        root_list_free(&l);
}

static void test_fixture(void)
{
        char path[PATH_MAX];
        struct row_batch b = { 0 };
        const struct usage_row *r;
        char *doc;
        uint64_t in = 0, out = 0, cr = 0, cw = 0;

        xsnprintf(path, sizeof(path), "%s/1700000000000/ui_messages.json", fixdir);
        doc = slurp(path, NULL);
        if (!doc)
                exit(99);
        is_int(parse_as(&adapter_cline, path, doc, &b), PARSE_OK, "fixture: parsed");
        is_int((long long)b.n, 5, "fixture: 5 rows (4 calls with usage and one deleted_api_reqs)");
        r = at_ts(&b, 1700000000001);
        ok(r && r->input == 400 && r->cache_read == 600 && r->output == 50 && r->cost_source == COST_NONE &&
                   !strcmp(r->provider, "openai") && !strcmp(r->model, "fake-gpt"),
           "openai: tokensIn 1000 includes the 600 cached: input 400, no price");
        r = at_ts(&b, 1700000000002);
        ok(r && r->input == 200 && r->cache_read == 600 && r->cache_write == 64 && r->cost_source == COST_VENDOR &&
                   r->cost_nano == 10000000,
           "anthropic: tokensIn 200 is the uncached part; Cline's cost kept");
        r = at_ts(&b, 1700000000003);
        ok(r && r->input == 300 && r->cache_read == 900, "openai-native: tokensIn 300 is the uncached part");
        ok(!at_ts(&b, 1700000000004) && !at_ts(&b, 1700000000005), "cancelled requests are no calls");
        r = at_ts(&b, 1700000000006);
        ok(r && r->input == 600 && r->output == 70 && !strcmp(r->provider, "openai"),
           "deleted_api_reqs: counted, provider from task_metadata.json (openai at its time)");
        ok(!at_ts(&b, 1700000000007), "a request never given usage is nothing");
        r = at_ts(&b, 1700000000009);
        ok(r && r->input == 100 && r->cache_read == 50 && !strcmp(r->provider, "openai-native") &&
                   !strcmp(r->model, "gpt-4.1"),
           "a row without modelInfo: the metadata's provider in force at its ts (openai-native)");
        for (size_t i = 0; i < b.n; i++) {
                in += b.rows[i].input;
                out += b.rows[i].output;
                cr += b.rows[i].cache_read;
                cw += b.rows[i].cache_write;
                ok(!strcmp(b.rows[i].session, "1700000000000") && !strcmp(b.rows[i].tool, "cline") &&
                           (b.rows[i].flags & ROW_F_UPSERT),
                   "row %zu: session is the task id, harness cline, upserted", i);
        }
        ok(in == 1600 && out == 187 && cr == 2250 && cw == 64, "fixture totals 1600/187/2250/64");
        ok(b.n && !strcmp(b.rows[0].project, "/home/u/work/alpha"),
           "the project is the task's cwdOnTaskInitialization in state/taskHistory.json");
        row_batch_free(&b);
        free(doc);
}

#define ROW_V(text) \
        "[{\"ts\":1,\"type\":\"say\",\"say\":\"task\",\"text\":\"t\"},{\"ts\":5,\"type\":\"say\"," \
        "\"say\":\"api_req_started\",\"text\":\"" text "\",\"modelInfo\":{\"providerId\":\"anthropic\"," \
        "\"modelId\":\"claude-sonnet-4-5\"}}]"

static void test_rewrite(void)
{
        const char *p = "/h/.cline/data/tasks/42/ui_messages.json";
        const char *v1 = ROW_V("{\\\"request\\\":\\\"hi\\\"}");
        const char *v2 = ROW_V("{\\\"request\\\":\\\"hi\\\",\\\"tokensIn\\\":10,\\\"tokensOut\\\":1,"
                               "\\\"cacheWrites\\\":3,\\\"cacheReads\\\":4,\\\"cost\\\":0.001}");
        const char *v3 = ROW_V("{\\\"request\\\":\\\"hi\\\",\\\"tokensIn\\\":10,\\\"tokensOut\\\":77,"
                               "\\\"cacheWrites\\\":3,\\\"cacheReads\\\":4,\\\"cost\\\":0.002}");
        struct row_batch b1 = { 0 }, b2 = { 0 }, b3 = { 0 }, r3 = { 0 };

        is_int(parse_as(&adapter_cline, p, v1, &b1), PARSE_OK, "request-only: parsed");
        is_int((long long)b1.n, 0, "request-only: no row yet");
        is_int(parse_as(&adapter_cline, p, v2, &b2), PARSE_OK, "provisional: parsed");
        ok(b2.n == 1 && b2.rows[0].output == 1 && (b2.rows[0].flags & ROW_F_UPSERT), "provisional: tokensOut 1, upserted");
        is_int(parse_as(&adapter_cline, p, v3, &b3), PARSE_OK, "final: parsed");
        ok(b3.n == 1 && b3.rows[0].output == 77 && b2.n == 1 &&
                   !memcmp(&b2.rows[0].key, &b3.rows[0].key, sizeof(struct row_key)),
           "final: tokensOut 77 under the provisional row's key (the upsert raises it)");
        is_int(parse_as(&adapter_roo, "/h/x/rooveterinaryinc.roo-cline/tasks/42/ui_messages.json", v3, &r3),
               PARSE_OK, "roo: parsed");
        ok(r3.n == 1 && !strcmp(r3.rows[0].tool, "roo") && b3.n == 1 &&
                   memcmp(&r3.rows[0].key, &b3.rows[0].key, sizeof(struct row_key)) != 0,
           "the same task under Roo Code is Roo's row, with a key of its own");
        ok(r3.n == 1 && r3.rows[0].input == 3 && r3.rows[0].cache_read == 4 && r3.rows[0].cache_write == 3,
           "roo: tokensIn is the whole prompt (10 less 4 read, 3 written: input 3)");
        ok(b3.n == 1 && b3.rows[0].input == 10, "cline anthropic: tokensIn 10 is the uncached part");
        row_batch_free(&b1);
        row_batch_free(&b2);
        row_batch_free(&b3);
        row_batch_free(&r3);
}

static void test_known(void)
{
        char p[PATH_MAX];
        const char *v2 = ROW_V("{\\\"tokensIn\\\":10,\\\"tokensOut\\\":1}");
        const char *v3 = ROW_V("{\\\"tokensIn\\\":10,\\\"tokensOut\\\":9}");
        char v4[1024];
        struct row_batch b = { 0 };
        size_t known = 0, k2;

        /* the fixture task's id: its history names the project, so the
         * prefix read is remembered */
        xsnprintf(p, sizeof(p), "%s/1700000000000/ui_messages.json", fixdir);
        row_batch_clear(&b);
        is_int(parse_known("/h/.cline/data/tasks/42/ui_messages.json", v2, &known, &b), PARSE_OK,
               "known: a task the history does not list");
        ok(b.n == 1 && known == 0, "known: nothing remembered until its project is known (the upsert fills it in)");
        row_batch_clear(&b);
        known = 0;

        is_int(parse_known(p, v2, &known, &b), PARSE_OK, "known: first version");
        ok(b.n == 1 && known > 0 && known < strlen(v2), "known: its row, and the end of its last row reported");
        k2 = known;
        row_batch_clear(&b);
        is_int(parse_known(p, v2, &known, &b), PARSE_OK, "known: the same bytes again");
        is_int((long long)b.n, 0, "known: nothing emitted again");
        known = common(v2, v3) < k2 ? common(v2, v3) : k2;
        is_int(parse_known(p, v3, &known, &b), PARSE_OK, "known: the row rewritten in place");
        ok(b.n == 1 && b.rows[0].output == 9, "known: the rewritten row is emitted with its new usage");
        /* a row appended after it: only the new one */
        xsnprintf(v4, sizeof(v4), "%.*s,{\"ts\":6,\"type\":\"say\",\"say\":\"deleted_api_reqs\","
                  "\"text\":\"{\\\"tokensIn\\\":3}\"}]", (int)strlen(v3) - 1, v3);
        row_batch_clear(&b);
        k2 = known;
        known = common(v3, v4) < k2 ? common(v3, v4) : k2;
        is_int(parse_known(p, v4, &known, &b), PARSE_OK, "known: a row appended");
        ok(b.n == 1 && b.rows[0].time_ms == 6, "known: only the appended row is emitted");
        row_batch_free(&b);
}

static void test_torn(void)
{
        const char *p = "/h/.cline/data/tasks/42/ui_messages.json";
        const char *full = ROW_V("{\\\"tokensIn\\\":10,\\\"tokensOut\\\":7}");
        char cut[512];
        struct row_batch b = { 0 };

        xsnprintf(cut, sizeof(cut), "%.*s", (int)strlen(full) - 3, full);
        is_int(parse_as(&adapter_cline, p, cut, &b), PARSE_INCOMPLETE, "a torn array is incomplete");
        is_int((long long)b.n, 0, "and leaves no rows");
        is_int(parse_as(&adapter_cline, p, "{\"not\":\"tasks\"}", &b), PARSE_MALFORMED, "an object is not a task");
        is_int(parse_as(&adapter_cline, p, "[1,\"x\",{\"ts\":2}]", &b), PARSE_OK, "odd elements are passed over");
        is_int((long long)b.n, 0, "with no rows");
        row_batch_free(&b);
}


/* The root of adapter a at path in l, or NULL. */
static const struct root *root_at(const struct root_list *l, const char *path)
{
        for (size_t i = 0; i < l->n; i++)
                if (strcmp(l->v[i].path, path) == 0)
                        return &l->v[i];
        return NULL;
}

static void test_setting_read(void)
{
        char dir[PATH_MAX], f[PATH_MAX], buf[PATH_MAX], why[256];

        xsnprintf(dir, sizeof(dir), "%s", tap_tmpdir());
        pj(f, dir, "settings.json");
        write_file(f, "// user settings\n{\n  /* big */ \"editor.fontSize\": 14,\n"
                      "  \"roo-cline.customStoragePath\": \"/data/roo/\", // moved\n  \"x\": [1, 2,],\n}\n");
        ok(vt_read_storage_setting(f, "roo-cline.customStoragePath", buf, sizeof(buf), why, sizeof(why)) == 0 &&
                   strcmp(buf, "/data/roo") == 0,
           "JSONC (comments, trailing commas): roo-cline.customStoragePath /data/roo (%s)", buf);
        ok(vt_read_storage_setting(f, "kilo-code.customStoragePath", buf, sizeof(buf), why, sizeof(why)) == -ENOENT,
           "a setting not set: -ENOENT");
        write_file(f, "{\"kilo-code.customStoragePath\": \"\"}");
        ok(vt_read_storage_setting(f, "kilo-code.customStoragePath", buf, sizeof(buf), why, sizeof(why)) == -ENOENT,
           "\"\" (the extension's default): -ENOENT");
        write_file(f, "{\"kilo-code.customStoragePath\": \"rel/dir\"}");
        why[0] = 0;
        ok(vt_read_storage_setting(f, "kilo-code.customStoragePath", buf, sizeof(buf), why, sizeof(why)) == -EINVAL &&
                   strstr(why, "not absolute"),
           "a relative path: -EINVAL, not followed (%s)", why);
        write_file(f, "{\"kilo-code.customStoragePath\": 5}");
        ok(vt_read_storage_setting(f, "kilo-code.customStoragePath", buf, sizeof(buf), why, sizeof(why)) == -EINVAL &&
                   strstr(why, "not a path"),
           "a number: -EINVAL (%s)", why);
        write_file(f, "{ \"kilo-code.customStoragePath\": \"/x\",\n \"a\": [1,\n");
        ok(vt_read_storage_setting(f, "kilo-code.customStoragePath", buf, sizeof(buf), why, sizeof(why)) == -EINVAL &&
                   strstr(why, "not a JSON object"),
           "a torn file: -EINVAL, said why (%s)", why);
        write_file(f, "[\"/x\"]");
        ok(vt_read_storage_setting(f, "kilo-code.customStoragePath", buf, sizeof(buf), why, sizeof(why)) == -EINVAL,
           "an array: -EINVAL");
        write_bytes(f, "{\"a\":\"\0\"}", 9);
        ok(vt_read_storage_setting(f, "kilo-code.customStoragePath", buf, sizeof(buf), why, sizeof(why)) == -EINVAL,
           "a NUL byte: -EINVAL");
        pj(f, dir, "none.json");
        ok(vt_read_storage_setting(f, "kilo-code.customStoragePath", buf, sizeof(buf), why, sizeof(why)) == -ENOENT,
           "no file: -ENOENT");
        ok(vt_read_storage_setting(dir, "kilo-code.customStoragePath", buf, sizeof(buf), why, sizeof(why)) == -EINVAL,
           "a directory: -EINVAL");
}

static void test_setting_roots(void)
{
        char home[PATH_MAX], f[PATH_MAX], want[PATH_MAX];
        struct root_list l = { 0 };
        const struct root *r;
        bool all_origin = true;

        xsnprintf(home, sizeof(home), "%s", tap_tmpdir());
        setenv("HOME", home, 1);
        xsnprintf(f, sizeof(f), "%s/.config/Code/User/settings.json", home);
        write_file(f, "{\n // Roo moved\n \"roo-cline.customStoragePath\": \"/data/roo\",\n"
                      " \"kilo-code.customStoragePath\": \"/data/kilo\",\n}\n");
        xsnprintf(f, sizeof(f), "%s/.vscode-server/data/User/settings.json", home);
        write_file(f, "{\"roo-cline.customStoragePath\": \"/srv/user\"}");
        xsnprintf(f, sizeof(f), "%s/.vscode-server/data/Machine/settings.json", home);
        write_file(f, "{\"roo-cline.customStoragePath\": \"/srv/machine\"}");
        xsnprintf(f, sizeof(f), "%s/.cursor-server/data/User/settings.json", home);
        write_file(f, "{ \"roo-cline.customStoragePath\": ");

        ok(adapter_roo.discover(&registry_process_env, &l) == 0, "roo: discover with settings");
        r = root_at(&l, "/data/roo/tasks");
        xsnprintf(want, sizeof(want), "%s/.config/Code/User/settings.json roo-cline.customStoragePath", home);
        ok(r && r->reason == ROOT_CONFIG && strcmp(r->label, "Code") == 0 && strcmp(r->detail, want) == 0 &&
                   r->max_depth == 1 && (r->flags & ROOT_F_ORIGIN),
           "roo: Code's setting is a root <path>/tasks, from config <settings.json> <setting>, labelled Code");
        xsnprintf(want, sizeof(want), "%s/.config/Code/User/globalStorage/rooveterinaryinc.roo-cline/tasks", home);
        ok(root_at(&l, want) != NULL, "roo: the global storage stays a root (tasks from before the move)");
        r = root_at(&l, "/srv/machine/tasks");
        ok(r && strcmp(r->label, "vscode-server") == 0, "roo: a server's Machine/settings.json wins");
        ok(!root_at(&l, "/srv/user/tasks"), "roo: ... over its User/settings.json");
        for (size_t i = 0; i < l.n; i++)
                all_origin &= (l.v[i].flags & ROOT_F_ORIGIN) != 0;
        ok(all_origin, "roo: every root names the editor of its tasks (ROOT_F_ORIGIN)");
        xsnprintf(want, sizeof(want), "%s/.cursor-server/data/User/settings.json", home);
        bool noted = false;
        for (size_t i = 0; i < l.n_notes; i++)
                noted |= l.notes[i].adapter == &adapter_roo && strstr(l.notes[i].text, want) &&
                         strstr(l.notes[i].text, "not a JSON object") && strstr(l.notes[i].text, "cursor-server");
        ok(noted, "roo: a torn settings.json is a note naming the editor and the file");
        ok(root_list_has_file(&l, want), "roo: ... and still a file discovery watches");
        xsnprintf(want, sizeof(want), "%s/.config/Cursor/User/settings.json", home);
        ok(root_list_has_file(&l, want), "roo: a settings.json that does not exist yet is watched for");
        xsnprintf(want, sizeof(want), "%s/.config/Code/Machine/settings.json", home);
        ok(!root_list_has_file(&l, want), "roo: a desktop editor has no Machine/ settings");
        root_list_free(&l);

        ok(adapter_kilo.discover(&registry_process_env, &l) == 0, "kilo: discover with settings");
        r = root_at(&l, "/data/kilo");
        ok(r && r->reason == ROOT_CONFIG && r->max_depth == 2 && strcmp(r->label, "Code") == 0 &&
                   strstr(r->detail, "kilo-code.customStoragePath"),
           "kilo: the setting's path itself, two levels deep (tasks/<id>/ui_messages.json below it)");
        root_list_free(&l);

        ok(adapter_cline.discover(&registry_process_env, &l) == 0, "cline: discover with settings");
        bool config = false;
        for (size_t i = 0; i < l.n; i++)
                config |= l.v[i].reason == ROOT_CONFIG;
        ok(!config && l.n_files == 0, "cline: Cline's extension has no storage setting: none read");
        root_list_free(&l);
        setenv("HOME", "/h", 1);
}

int main(void)
{
        xsnprintf(fixdir, sizeof(fixdir), "%s/fixtures/vscode-tasks/tasks", am_srcdir());
        test_classify();
        test_discover();
        test_setting_read();
        test_setting_roots();
        test_fixture();
        test_rewrite();
        test_known();
        test_torn();
        return tap_done();
}
