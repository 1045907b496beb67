/* The adapters' shared discovery helpers (adapters/adapt-util.c): `~` and
 * relative paths, roots listed once, small files read whole (and refused
 * when they are directories, FIFOs or too big), JSON string members, lexical
 * path cleaning. */
#include <errno.h>
#include <fcntl.h>
#include <json-c/json.h>
#include <limits.h>
#include <stdio.h>
#include <sys/stat.h>
#include <unistd.h>

#include "adapt-util.h"
#include "registry.h"
#include "tap.h"
#include "testutil.h"

static bool resolves(const char *value, const char *home, const char *base, const char *want)
{
        char buf[PATH_MAX];
        return adapt_resolve_path(value, home, base, buf, sizeof(buf)) == 0 && strcmp(buf, want) == 0;
}

static void test_resolve(void)
{
        char small[8];

        ok(resolves("~", "/h", NULL, "/h"), "~ is home");
        ok(resolves("~/x/y", "/h", NULL, "/h/x/y"), "~/x is under home");
        ok(resolves("~user/x", "/h", "/b", "/b/~user/x"), "~user is not expanded: relative to base");
        ok(resolves("/abs/", "/h", "/b", "/abs"), "absolute as it is, trailing slash dropped");
        ok(resolves("/", NULL, NULL, "/"), "the root stays /");
        ok(resolves("rel//", NULL, "/b", "/b/rel"), "relative against base, trailing slashes dropped");
        is_int(adapt_resolve_path("~/x", NULL, "/b", small, sizeof(small)), -EINVAL, "~ without home: -EINVAL");
        is_int(adapt_resolve_path("~/x", "rel", "/b", small, sizeof(small)), -EINVAL, "~ with a relative home: -EINVAL");
        is_int(adapt_resolve_path("x", "/h", NULL, small, sizeof(small)), -EINVAL, "relative without base: -EINVAL");
        is_int(adapt_resolve_path("x", "/h", "b", small, sizeof(small)), -EINVAL, "relative with a relative base: -EINVAL");
        is_int(adapt_resolve_path("/12345678", NULL, NULL, small, sizeof(small)), -ENAMETOOLONG,
               "too long for the buffer: -ENAMETOOLONG");
        is_int(adapt_resolve_path("/123456", NULL, NULL, small, sizeof(small)), 0, "exactly fits");
}

static void test_roots(void)
{
        struct root_list l = { 0 };
        char longdetail[400];

        memset(longdetail, 'd', sizeof(longdetail) - 1);
        longdetail[sizeof(longdetail) - 1] = 0;
        is_int(adapt_add_root(&l, &adapter_pi, "/a", "one", ROOT_ENV, "PI_CODING_AGENT_DIR", longdetail, 2), 1,
               "a new root: 1");
        is_int(adapt_add_root(&l, &adapter_pi, "/a", "again", ROOT_DEFAULT, NULL, NULL, 0), 0,
               "the same path for the same adapter: 0, not listed again");
        is_int(adapt_add_root(&l, &adapter_openclaw, "/a", "oc", ROOT_DEFAULT, NULL, NULL, 3), 1,
               "the same path for another adapter: listed");
        is_int(l.n, 2, "two roots");
        ok(strcmp(l.v[0].label, "one") == 0 && l.v[0].reason == ROOT_ENV &&
                   strcmp(l.v[0].env_var, "PI_CODING_AGENT_DIR") == 0 && l.v[0].max_depth == 2 &&
                   l.v[0].adapter == &adapter_pi,
           "fields set");
        is_int(strlen(l.v[0].detail), sizeof(l.v[0].detail) - 1, "a long detail is cut to its field");
        ok(l.v[1].env_var[0] == 0 && l.v[1].detail[0] == 0 && l.v[1].adapter == &adapter_openclaw,
           "NULL env_var and detail: empty");
        root_list_free(&l);
}

static void test_read_file(const char *dir)
{
        char path[PATH_MAX], *text = NULL;
        size_t len = 0;

        snprintf(path, sizeof(path), "%s/f", dir);
        write_bytes(path, "hello\0world", 11);
        is_int(adapt_read_file(path, 64, &text, &len), 0, "a small file: read");
        ok(len == 11 && memcmp(text, "hello\0world", 11) == 0 && text[11] == 0,
           "all its bytes (NULs too), NUL-terminated");
        free(text);
        is_int(adapt_read_file(path, 11, &text, &len), 0, "exactly max bytes: read");
        free(text);
        text = NULL;
        is_int(adapt_read_file(path, 10, &text, &len), -EFBIG, "one byte over max: -EFBIG");
        ok(text == NULL, "  nothing returned");

        char big[100000];
        for (size_t i = 0; i < sizeof(big); i++)
                big[i] = (char)('a' + i % 26);
        write_bytes(path, big, sizeof(big));
        is_int(adapt_read_file(path, sizeof(big), &text, &len), 0, "100000 bytes: read");
        ok(len == sizeof(big) && memcmp(text, big, sizeof(big)) == 0, "  whole and in order");
        free(text);

        write_bytes(path, "", 0);
        is_int(adapt_read_file(path, 64, &text, &len), 0, "an empty file: read");
        ok(len == 0 && text[0] == 0, "  as \"\"");
        free(text);

        snprintf(path, sizeof(path), "%s/missing", dir);
        is_int(adapt_read_file(path, 64, &text, &len), -ENOENT, "missing: -ENOENT");
        is_int(adapt_read_file(dir, 64, &text, &len), -EISDIR, "a directory: -EISDIR");
        snprintf(path, sizeof(path), "%s/fifo", dir);
        ok(mkfifo(path, 0600) == 0, "a FIFO made");
        alarm(10); /* a blocking open would hang here */
        is_int(adapt_read_file(path, 64, &text, &len), -EINVAL, "a FIFO: -EINVAL, without blocking");
        alarm(0);
        is_int(adapt_read_file("/dev/null", 64, &text, &len), -EINVAL, "a device: -EINVAL");
}

static void test_json_str(void)
{
        struct json_object *o = json_tokener_parse(
                "{\"s\":\"value\",\"e\":\"\",\"n\":5,\"z\":\"a\\u0000b\",\"long\":\"0123456789\"}");
        struct json_object *arr = json_tokener_parse("[\"s\"]");
        char buf[16];

        ok(o && arr, "test objects parsed");
        memset(buf, 'q', sizeof(buf));
        ok(adapt_json_str(o, "s", buf, sizeof(buf)) == 0 && strcmp(buf, "value") == 0, "a string member copied");
        memset(buf, 'q', sizeof(buf));
        is_int(adapt_json_str(o, "e", buf, sizeof(buf)), -ENOENT, "empty: -ENOENT");
        ok(buf[0] == 'q', "  buf untouched");
        is_int(adapt_json_str(o, "n", buf, sizeof(buf)), -ENOENT, "a number: -ENOENT");
        is_int(adapt_json_str(o, "z", buf, sizeof(buf)), -ENOENT, "a NUL inside: -ENOENT");
        is_int(adapt_json_str(o, "long", buf, 10), -ENOENT, "10 bytes in a 10-byte buffer: -ENOENT");
        ok(adapt_json_str(o, "long", buf, 11) == 0 && strcmp(buf, "0123456789") == 0, "  fits in 11");
        is_int(adapt_json_str(o, "missing", buf, sizeof(buf)), -ENOENT, "missing: -ENOENT");
        is_int(adapt_json_str(arr, "s", buf, sizeof(buf)), -ENOENT, "not an object: -ENOENT");
        is_int(adapt_json_str(NULL, "s", buf, sizeof(buf)), -ENOENT, "NULL: -ENOENT");
        json_object_put(o);
        json_object_put(arr);
}

static void test_paths(void)
{
        static const char *const cases[][2] = {
                { "/", "/" },           { "//", "/" },        { "/a/b/", "/a/b" },   { "/a//b", "/a/b" },
                { "/a/./b", "/a/b" },   { "/a/../b", "/b" },  { "/..", "/" },        { "/a/b/../..", "/" },
                { "/a/b/../../..", "/" }, { "/.a/..b", "/.a/..b" }, { "rel/../x", "rel/../x" }, { "", "" },
        };
        char buf[64];

        for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
                snprintf(buf, sizeof(buf), "%s", cases[i][0]);
                adapt_path_clean(buf);
                is_str(buf, cases[i][1], cases[i][0][0] ? cases[i][0] : "(empty)");
        }
        adapt_path_dirname("/a/b/c", buf, sizeof(buf));
        is_str(buf, "/a/b", "dirname /a/b/c");
        adapt_path_dirname("/c", buf, sizeof(buf));
        is_str(buf, "/", "dirname /c");
        adapt_path_dirname("c", buf, sizeof(buf));
        is_str(buf, ".", "dirname c");
        adapt_path_dirname("/abcdef/x", buf, 4);
        is_str(buf, "/ab", "dirname cut to the buffer");
}

static void test_count(void)
{
        struct json_object *o = json_tokener_parse(
                "{\"i\":12,\"neg\":-3,\"d\":7.9,\"frac\":0.5,\"s\":\"5\",\"max\":9223372036854775807,\"huge\":1e300}");

        is_int((int)adapt_get_count(o, "i"), 12, "a count: an integer");
        is_int((int)adapt_get_count(o, "neg"), 0, "a negative count is 0");
        is_int((int)adapt_get_count(o, "d"), 7, "an integral number: its whole part");
        is_int((int)adapt_get_count(o, "frac"), 0, "a fraction below 1 is 0");
        is_int((int)adapt_get_count(o, "s"), 0, "text is not a count");
        is_int((int)adapt_get_count(o, "absent"), 0, "absent is 0");
        ok(adapt_get_count(o, "max") == 9223372036854775807ULL, "2^63-1 as written (the ledger's bounds refuse it)");
        is_int((int)adapt_get_count(o, "huge"), 0, "a number past 2^63 is 0, not a wrapped count");
        ok(adapt_sat_add(UINT64_MAX - 1, 5) == UINT64_MAX, "a sum saturates");
        json_object_put(o);
}

int main(void)
{
        char dir[256], cmd[300];

        snprintf(dir, sizeof(dir), "%s", tap_tmpdir());
        test_resolve();
        test_roots();
        test_read_file(dir);
        test_json_str();
        test_paths();
        test_count();
        snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
        (void)!system(cmd);
        return tap_done();
}
