/* The candidates for `agentmeterctl __complete WORDS...`: find the command
 * and the option whose value is being typed, then list what fits: command
 * names, options the command takes, report kinds, adapter ids from the
 * registry, zone names from the machine's tz database, and session ids or
 * projects from the daemon (through the spec's callback, which bounds its
 * wait). Nothing here writes anything but the candidates. */
#include <ftw.h>
#include <stdlib.h>
#include <string.h>

#include "complete/complete.h"
#include "registry.h"
#include "report/query.h"
#include "timefmt.h"

static bool starts(const char *s, const char *prefix)
{
        return strncmp(s, prefix, strlen(prefix)) == 0;
}

static void cand(FILE *out, const char *keep, const char *word, const char *help, const char *prefix)
{
        if (!starts(word, prefix))
                return;
        fprintf(out, "%s%s%s%s\n", keep, word, help && *help ? "\t" : "", help && *help ? help : "");
}

static const struct complete_option *find_opt(const struct complete_spec *sp, const char *name, size_t len)
{
        for (size_t i = 0; i < sp->n_opts; i++)
                if (strlen(sp->opts[i].name) == len && strncmp(sp->opts[i].name, name, len) == 0)
                        return &sp->opts[i];
        return NULL;
}

static const struct complete_command *find_cmd(const struct complete_spec *sp, const char *name)
{
        for (size_t i = 0; i < sp->n_cmds; i++)
                if (strcmp(sp->cmds[i].name, name) == 0)
                        return &sp->cmds[i];
        return NULL;
}

/* ---- zones: every TZif file under the zoneinfo tree, by its name ---- */

static struct {
        FILE *out;
        const char *keep, *prefix;
        size_t base_len;
} zwalk;

static int zone_cb(const char *path, const struct stat *st, int type, struct FTW *ftw)
{
        const char *name = path + zwalk.base_len;

        (void)st;
        if (ftw->level == 0)
                return FTW_CONTINUE;
        if (*name == '/')
                name++;
        if (type == FTW_D) /* posix/ and right/ repeat every zone; a dir the prefix rules out */
                return ftw->level == 1 && (strcmp(name, "posix") == 0 || strcmp(name, "right") == 0)
                               ? FTW_SKIP_SUBTREE
                       : starts(zwalk.prefix, name) || starts(name, zwalk.prefix) ? FTW_CONTINUE
                                                                                 : FTW_SKIP_SUBTREE;
        if ((type == FTW_F || type == FTW_SL) && starts(name, zwalk.prefix) && timefmt_zone_valid(name) == 0)
                fprintf(zwalk.out, "%s%s\n", zwalk.keep, name);
        return FTW_CONTINUE;
}

static void zones(FILE *out, const char *keep, const char *prefix)
{
        const char *base = getenv("TZDIR");

        if (!base || base[0] != '/')
                base = "/usr/share/zoneinfo";
        zwalk.out = out;
        zwalk.keep = keep;
        zwalk.prefix = prefix;
        zwalk.base_len = strlen(base);
        /* FTW_PHYS: a link is listed by its own name (Etc/UTC and UTC both) */
        nftw(base, zone_cb, 16, FTW_PHYS | FTW_ACTIONRETVAL);
}

/* ---- values ---- */

/* Whether id is one of the comma-separated elements of the first len bytes of list. */
static bool in_list(const char *list, size_t len, const char *id)
{
        size_t n = strlen(id);

        for (size_t i = 0; i < len;) {
                size_t e = i;
                while (e < len && list[e] != ',')
                        e++;
                if (e - i == n && strncmp(list + i, id, n) == 0)
                        return true;
                i = e + 1;
        }
        return false;
}

/* "pi,cl": complete the last element, keep the ones before, skip repeats. */
static void harnesses(FILE *out, const char *keep, const char *cur)
{
        const char *comma = strrchr(cur, ',');
        size_t done = comma ? (size_t)(comma - cur + 1) : 0;
        char head[512];

        snprintf(head, sizeof(head), "%s%.*s", keep, (int)done, cur);
        for (size_t i = 0; registry_adapters[i]; i++) {
                const char *id = registry_adapters[i]->id;
                if (!in_list(cur, done, id))
                        cand(out, head, id, registry_adapters[i]->display_name, cur + done);
        }
}

static void values(FILE *out, const struct complete_spec *sp, enum complete_value v, const char *keep,
                   const char *cur)
{
        static const char *const shells[] = { "bash", "zsh", "fish" };

        switch (v) {
        case CV_FILE:
                fputs(":files\n", out);
                break;
        case CV_DIR:
                fputs(":dirs\n", out);
                break;
        case CV_KIND:
                for (int k = 1; k <= REPORT_KIND_LAST; k++)
                        cand(out, keep, report_kind_name((enum report_kind)k), NULL, cur);
                break;
        case CV_SHELL:
                for (size_t i = 0; i < sizeof(shells) / sizeof(shells[0]); i++)
                        cand(out, keep, shells[i], NULL, cur);
                break;
        case CV_HARNESS:
                harnesses(out, keep, cur);
                break;
        case CV_ZONE:
                zones(out, keep, cur);
                break;
        case CV_COST:
                for (int c = REPORT_COST_AUTO; c <= REPORT_COST_COMPUTED; c++)
                        cand(out, keep, report_cost_name((enum report_cost)c), NULL, cur);
                break;
        case CV_BREAKDOWN:
                cand(out, keep, report_breakdown_name(REPORT_BREAKDOWN_MODEL), NULL, cur);
                cand(out, keep, report_breakdown_name(REPORT_BREAKDOWN_HARNESS), NULL, cur);
                break;
        case CV_PARTY:
                cand(out, keep, "machine", NULL, cur);
                cand(out, keep, "user", NULL, cur);
                break;
        case CV_TEAM:
                cand(out, keep, "init", "create or migrate the schema", cur);
                break;
        case CV_WEEKDAY:
                for (int d = 1; d <= 7; d++)
                        cand(out, keep, report_week_start_name(d % 7), NULL, cur);
                break;
        case CV_SESSION:
        case CV_PROJECT:
                if (sp->daemon_values) {
                        /* the callback writes bare values: the "--opt=" part is added here */
                        char *buf = NULL;
                        size_t len = 0;
                        FILE *m = open_memstream(&buf, &len);
                        if (!m)
                                break;
                        sp->daemon_values(sp->userdata, v, cur, m);
                        if (fclose(m) == 0)
                                for (char *line = buf, *nl; line && *line; line = nl ? nl + 1 : NULL) {
                                        nl = strchr(line, '\n');
                                        fprintf(out, "%s%.*s\n", keep, nl ? (int)(nl - line) : (int)strlen(line),
                                                line);
                                }
                        free(buf);
                }
                break;
        case CV_NONE:
        case CV_TEXT:
                break;
        }
}

void complete_words(FILE *out, const struct complete_spec *sp, int n, char *const *words)
{
        const struct complete_command *cmd = NULL;
        const struct complete_option *want = NULL; /* the option whose value is being typed */
        const char *cur = n > 0 ? words[n - 1] : "";
        char keep[256] = "";
        bool seen_cmd = false, dashdash = false;
        int npos = 0;
        unsigned given = 0;

        for (int i = 0; i < n - 1; i++) {
                const char *w = words[i];
                if (!dashdash && strcmp(w, "--") == 0) {
                        dashdash = true;
                } else if (!dashdash && starts(w, "--")) {
                        const char *eq = strchr(w, '=');
                        const struct complete_option *o = find_opt(sp, w + 2, eq ? (size_t)(eq - w - 2) : strlen(w + 2));
                        if (o)
                                given |= o->bit;
                        if (o && o->has_arg && !eq)
                                i++; /* its value */
                        if (o && o->has_arg && !eq && i == n - 1)
                                want = o;
                } else if (!dashdash && w[0] == '-' && w[1]) {
                        /* -j, -h, -V: no values */
                } else if (!seen_cmd) {
                        seen_cmd = true;
                        cmd = find_cmd(sp, w);
                } else {
                        npos++;
                }
        }
        if (want) { /* "--tz Eur" */
                values(out, sp, want->value, "", cur);
                return;
        }
        if (!dashdash && starts(cur, "--") && strchr(cur, '=')) { /* "--tz=Eur" */
                const char *eq = strchr(cur, '=');
                const struct complete_option *o = find_opt(sp, cur + 2, (size_t)(eq - cur - 2));
                if (o && o->has_arg && (size_t)(eq - cur + 1) < sizeof(keep)) {
                        snprintf(keep, sizeof(keep), "%.*s", (int)(eq - cur + 1), cur);
                        values(out, sp, o->value, keep, eq + 1);
                }
                return;
        }
        if (!dashdash && cur[0] == '-') {
                for (size_t i = 0; i < sp->n_opts; i++) {
                        const struct complete_option *o = &sp->opts[i];
                        char name[64];
                        bool fits = o->bit == 0 || (cmd ? (cmd->allowed & o->bit) != 0 : false);
                        /* a given option once, but --harness may be repeated */
                        if (!fits || (o->bit && (given & o->bit) && o->value != CV_HARNESS))
                                continue;
                        snprintf(name, sizeof(name), "--%s", o->name);
                        cand(out, "", name, o->help, cur);
                }
                return;
        }
        if (!seen_cmd) {
                for (size_t i = 0; i < sp->n_cmds; i++)
                        if (!starts(sp->cmds[i].name, "__"))
                                cand(out, "", sp->cmds[i].name, sp->cmds[i].help, cur);
                return;
        }
        if (cmd && npos < cmd->n_pos)
                values(out, sp, cmd->positional, "", cur);
}
