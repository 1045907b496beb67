/* Unit tests of the Letta Code adapter: its root (the default and
 * LETTA_LOCAL_BACKEND_DIR), which files count, and the fixtures through the
 * pi parser with the sub-agent's "default" conversation named by the agent
 * id its folder encodes (and a folder that is no base64 left alone). */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tap.h"
#include "testutil.h"

#include "adapter.h"
#include "lines.h"
#include "registry.h"
#include "row.h"

extern const struct adapter adapter_letta;
static const struct adapter *A = &adapter_letta;

static void test_discover(void)
{
        struct fenv f = { 0 };
        struct root_list l = { 0 };
        struct discover_env env;

        fenv_set(&f, "HOME", "/home/u");
        env = fenv_env(&f);
        is_int(A->discover(&env, &l), 0, "discover: default");
        ok(l.n == 1 && strcmp(l.v[0].path, "/home/u/.letta/lc-local-backend/conversations") == 0 &&
                   l.v[0].reason == ROOT_DEFAULT,
           "discover: ~/.letta/lc-local-backend/conversations by default");
        root_list_free(&l);
        fenv_set(&f, "LETTA_LOCAL_BACKEND_DIR", "/srv/lb");
        env = fenv_env(&f);
        is_int(A->discover(&env, &l), 0, "discover: moved");
        ok(l.n == 1 && strcmp(l.v[0].path, "/srv/lb/conversations") == 0 && l.v[0].reason == ROOT_ENV &&
                   strcmp(l.v[0].env_var, "LETTA_LOCAL_BACKEND_DIR") == 0,
           "discover: $LETTA_LOCAL_BACKEND_DIR/conversations, said to be moved by it");
        root_list_free(&l);
        ok(registry_env_known("LETTA_LOCAL_BACKEND_DIR"), "the variable is in the registry's table");
}

static void test_classify(void)
{
        is_int(A->classify("", "conversations", 0, true), CLASS_DESCEND, "the root is walked");
        is_int(A->classify("Y29u", "Y29u", 1, true), CLASS_DESCEND, "a conversation folder is walked");
        is_int(A->classify("Y29u/x", "x", 2, true), CLASS_IGNORE, "nothing deeper");
        is_int(A->classify("Y29u/messages.jsonl", "messages.jsonl", 2, false), CLASS_LINES,
               "messages.jsonl is a line source");
        is_int(A->classify("Y29u/conversation.json", "conversation.json", 2, false), CLASS_IGNORE,
               "conversation.json is not");
        is_int(A->classify("messages.jsonl", "messages.jsonl", 1, false), CLASS_IGNORE,
               "messages.jsonl outside a conversation folder is not");
}

static void sessions_of(const char *path, char *ret, size_t cap)
{
        struct row_batch b = { 0 };

        ret[0] = '\0';
        if (read_lines(A, path, &b) == 0)
                for (size_t i = 0; i < b.n; i++)
                        if (!strstr(ret, b.rows[i].session) && strlen(ret) + strlen(b.rows[i].session) + 2 < cap) {
                                strcat(ret, b.rows[i].session);
                                strcat(ret, ";");
                        }
        row_batch_free(&b);
}

static void test_sessions(void)
{
        char dir[PATH_MAX], path[PATH_MAX], got[512], src[PATH_MAX];
        char *tmp = tap_tmpdir();
        const char *sub = "{\"type\":\"session\",\"version\":3,\"id\":\"default\",\"cwd\":\"/w\"}\n"
                          "{\"type\":\"message\",\"id\":\"a\",\"timestamp\":\"2026-11-02T10:00:00Z\","
                          "\"message\":{\"role\":\"assistant\",\"provider\":\"p\",\"model\":\"m\","
                          "\"responseId\":\"r1\",\"usage\":{\"input\":1,\"output\":2,\"cacheRead\":0,"
                          "\"cacheWrite\":0,\"cost\":{\"total\":0}}}}\n";

        /* "default:agent-x" in base64url, and a folder that decodes to nothing printable */
        xsnprintf(dir, sizeof(dir), "%s/ZGVmYXVsdDphZ2VudC14", tmp);
        mkdir_p(dir);
        pj(path, dir, "messages.jsonl");
        write_file(path, sub);
        sessions_of(path, got, sizeof(got));
        is_str(got, "agent-x;", "a sub-agent's 'default' conversation takes its agent id from the folder");
        xsnprintf(dir, sizeof(dir), "%s/not%%base64", tmp);
        mkdir_p(dir);
        pj(path, dir, "messages.jsonl");
        write_file(path, sub);
        sessions_of(path, got, sizeof(got));
        is_str(got, "default;", "a folder that is no key leaves the header's name");

        xsnprintf(src, sizeof(src), "%s/fixtures/letta/home/lc-local-backend/conversations/"
                                    "ZGVmYXVsdDphZ2VudC1sb2NhbC1zdWItMDAwMQ/messages.jsonl", am_srcdir());
        sessions_of(src, got, sizeof(got));
        is_str(got, "agent-local-sub-0001;", "fixture: the sub-agent's rows under its agent id");
        xsnprintf(src, sizeof(src), "%s/fixtures/letta/home/lc-local-backend/conversations/"
                                    "Y29udmVyc2F0aW9uOmxvY2FsLWNvbnYtMQ/messages.jsonl", am_srcdir());
        sessions_of(src, got, sizeof(got));
        is_str(got, "local-conv-1;", "fixture: a conversation keeps its header id");
        xsnprintf(dir, sizeof(dir), "rm -rf %s", tmp);
        if (system(dir) != 0)
                printf("# could not remove %s\n", tmp);
}

int main(void)
{
        test_discover();
        test_classify();
        test_sessions();
        return tap_done();
}
