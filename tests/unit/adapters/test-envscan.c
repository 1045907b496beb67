/* Every environment variable an adapter reads must be in the registry's
 * discovery table (install records those): scans adapters/ sources
 * ($AM_SRCDIR, default ".") for getenv / secure_getenv / discover_env_get. */
#include <ftw.h>
#include <limits.h>
#include <stdbool.h>
#include <stdint.h>

#include "adapter.h"
#include "registry.h"
#include "tap.h"
#include "testutil.h"

struct finding {
        int problems, literals;
        bool saw[64];
};

/* The source with comments blanked, and with string and char literal
 * contents blanked too unless keep_strings: offsets stay the same, so a
 * name found in the fully blanked text is read from the other one. */
static char *strip(const char *s, size_t n, bool keep_strings)
{
        char *o = malloc(n + 1);
        size_t i = 0;

        while (i < n) {
                if (s[i] == '/' && i + 1 < n && s[i + 1] == '*') {
                        o[i] = o[i + 1] = ' ';
                        i += 2;
                        while (i < n && !(s[i] == '*' && i + 1 < n && s[i + 1] == '/')) {
                                o[i] = s[i] == '\n' ? '\n' : ' ';
                                i++;
                        }
                        if (i < n) {
                                o[i] = o[i + 1] = ' ';
                                i += 2;
                        }
                } else if (s[i] == '/' && i + 1 < n && s[i + 1] == '/') {
                        while (i < n && s[i] != '\n')
                                o[i++] = ' ';
                } else if (s[i] == '"' || s[i] == '\'') {
                        char q = s[i];
                        o[i] = s[i];
                        i++;
                        while (i < n && s[i] != q && s[i] != '\n') {
                                if (s[i] == '\\' && i + 1 < n) {
                                        o[i] = keep_strings ? s[i] : ' ';
                                        i++;
                                }
                                o[i] = keep_strings ? s[i] : ' ';
                                i++;
                        }
                        if (i < n) {
                                o[i] = s[i];
                                i++;
                        }
                } else {
                        o[i] = s[i];
                        i++;
                }
        }
        o[n] = 0;
        return o;
}

static bool ident_char(char c)
{
        return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_';
}

static const char *skip_ws(const char *p)
{
        while (*p == ' ' || *p == '\t' || *p == '\n' || *p == '\r')
                p++;
        return p;
}

/* Skips one argument (balanced brackets) up to the ',' or ')' ending it. */
static const char *skip_arg(const char *p)
{
        int depth = 0;
        for (; *p; p++) {
                if (*p == '"' || *p == '\'') {
                        char q = *p++;
                        while (*p && *p != q)
                                p += (*p == '\\' && p[1]) ? 2 : 1;
                        if (!*p)
                                return p;
                        continue;
                }
                if (*p == '(' || *p == '[' || *p == '{')
                        depth++;
                else if (*p == ')' || *p == ']' || *p == '}') {
                        if (depth == 0)
                                return p;
                        depth--;
                } else if (*p == ',' && depth == 0)
                        return p;
        }
        return p;
}

/* A lone string literal argument: copies it and returns true. */
static bool literal_arg(const char *p, char *out, size_t cap)
{
        size_t n = 0;
        p = skip_ws(p);
        if (*p != '"')
                return false;
        for (p++; *p && *p != '"'; p++) {
                if (*p == '\\')
                        return false; /* no escapes in a variable name */
                if (n + 1 < cap)
                        out[n++] = *p;
        }
        if (*p != '"')
                return false;
        out[n] = 0;
        p = skip_ws(p + 1);
        return *p == ',' || *p == ')';
}

static void note_literal(struct finding *f, const char *name)
{
        for (size_t i = 0; registry_env_vars()[i]; i++)
                if (strcmp(registry_env_vars()[i], name) == 0 && i < 64)
                        f->saw[i] = true;
        f->literals++;
}

/* Scans one source text; `file` is its base name (registry.c may call
 * getenv with a variable, guarded by registry_env_known). */
static void scan_text(const char *file, const char *text, struct finding *f, bool quiet)
{
        static const char *fns[] = { "getenv", "secure_getenv", "discover_env_get" };
        char *code = strip(text, strlen(text), false);
        char *s = strip(text, strlen(text), true);

        for (size_t k = 0; k < 3; k++) {
                size_t fl = strlen(fns[k]);
                for (const char *c = code; (c = strstr(c, fns[k])); c += fl) {
                        const char *p = s + (c - code);
                        char name[128];
                        const char *q;
                        bool is_discover = k == 2;

                        if ((c > code && ident_char(c[-1])) || ident_char(c[fl]))
                                continue; /* part of another identifier */
                        q = skip_ws(p + fl);
                        if (*q != '(') {
                                /* taking its address or wrapping it in a macro
                                 * hides the name from this scan */
                                if (!(is_discover && strcmp(file, "adapter.c") == 0)) {
                                        f->problems++;
                                        if (!quiet)
                                                printf("# %s: %s used without a direct call\n", file, fns[k]);
                                }
                                continue;
                        }
                        q++;
                        if (is_discover) {
                                const char *a = skip_ws(q);
                                /* the declaration/definition itself */
                                if (strncmp(a, "const ", 6) == 0)
                                        continue;
                                q = skip_arg(q);
                                if (*q != ',') {
                                        f->problems++;
                                        continue;
                                }
                                q++;
                        }
                        if (literal_arg(q, name, sizeof(name))) {
                                if (!registry_env_known(name)) {
                                        f->problems++;
                                        if (!quiet)
                                                printf("# %s: %s(\"%s\") is not in registry_env_vars()\n", file,
                                                       fns[k], name);
                                }
                                note_literal(f, name);
                        } else if (!(!is_discover && strcmp(file, "registry.c") == 0)) {
                                f->problems++;
                                if (!quiet)
                                        printf("# %s: %s with a non-literal name\n", file, fns[k]);
                        }
                }
        }
        free(code);
        free(s);
}

static void self_test(void)
{
        struct finding f;

        f = (struct finding){ 0 };
        scan_text("x.c", "const char *h = discover_env_get(env, \"HOME\");", &f, true);
        ok(f.problems == 0 && f.literals == 1, "scanner: known literal accepted");
        f = (struct finding){ 0 };
        scan_text("x.c", "v = discover_env_get(env, \"PI_AGENT_DIR\");", &f, true);
        is_int(f.problems, 1, "scanner: unknown literal rejected");
        f = (struct finding){ 0 };
        scan_text("x.c", "v = getenv(\"HOME\"); w = secure_getenv ( \"XDG_X\" );", &f, true);
        is_int(f.problems, 1, "scanner: getenv / secure_getenv literals checked");
        f = (struct finding){ 0 };
        scan_text("x.c", "v = getenv(name);", &f, true);
        is_int(f.problems, 1, "scanner: non-literal getenv outside registry.c rejected");
        f = (struct finding){ 0 };
        scan_text("registry.c", "v = getenv(name);", &f, true);
        is_int(f.problems, 0, "scanner: non-literal getenv in registry.c allowed");
        f = (struct finding){ 0 };
        scan_text("x.c", "v = discover_env_get(env, names[i]);", &f, true);
        is_int(f.problems, 1, "scanner: non-literal discover_env_get rejected");
        f = (struct finding){ 0 };
        scan_text("x.c", "/* getenv(\"NOPE\") */ // secure_getenv(\"NOPE\")\nconst char *s = \"getenv\";", &f, true);
        is_int(f.problems, 0, "scanner: comments and strings ignored");
        f = (struct finding){ 0 };
        scan_text("x.c", "v = getenv(\"HOME\" \"X\");", &f, true);
        is_int(f.problems, 1, "scanner: concatenated literal is not a plain name");
        f = (struct finding){ 0 };
        scan_text("x.c", "#define G getenv\n", &f, true);
        is_int(f.problems, 1, "scanner: getenv without a call rejected");
        f = (struct finding){ 0 };
        scan_text("x.c", "my_getenv(\"NOPE\"); getenvx(\"NOPE\");", &f, true);
        is_int(f.problems, 0, "scanner: other identifiers ignored");
}

/* Every .c and .h below adapters/, its family folders included (nftw has
 * no user pointer: the walk's totals live here). */
static struct finding scan_found;
static int scan_files;

static int scan_one(const char *path, const struct stat *st, int type, struct FTW *ftw)
{
        const char *name = path + ftw->base;
        size_t l = strlen(name);

        (void)st;
        if (type != FTW_F || l < 3 || (strcmp(name + l - 2, ".c") != 0 && strcmp(name + l - 2, ".h") != 0))
                return 0;
        char *text = slurp(path, NULL);
        if (text) {
                int before = scan_found.problems;
                scan_text(name, text, &scan_found, false);
                ok(scan_found.problems == before, "%s: environment reads are registered", path);
                scan_files++;
                free(text);
        }
        return 0;
}

int main(void)
{
        char dir[PATH_MAX];

        self_test();

        snprintf(dir, sizeof(dir), "%s/adapters", am_srcdir());
        ok(nftw(dir, scan_one, 16, FTW_PHYS) == 0, "adapters/ walked at %s", dir);
        struct finding f = scan_found;
        int files = scan_files;
        ok(files >= 3, "scanned %d adapter sources", files);
        ok(f.literals >= 3, "found %d environment reads", f.literals);
        is_int(f.problems, 0, "no unregistered or hidden environment reads");

        /* every adapter's declared variables are in the table, and each
         * table variable a registered adapter declares is really read */
        for (size_t a = 0; registry_adapters[a]; a++) {
                const struct adapter *ad = registry_adapters[a];
                for (size_t i = 0; ad->env && ad->env[i]; i++) {
                        ok(registry_env_known(ad->env[i]), "%s declares %s: in the table", ad->id, ad->env[i]);
                        for (size_t k = 0; registry_env_vars()[k]; k++)
                                if (strcmp(registry_env_vars()[k], ad->env[i]) == 0)
                                        ok(f.saw[k], "%s: %s is read somewhere", ad->id, ad->env[i]);
                }
        }
        ok(registry_env_known("HOME"), "HOME in the table");
        return tap_done();
}
