/* Budget alerts: a journald warning with AGENTMETER_BUDGET* fields, an
 * org.freedesktop.Notifications.Notify call sent asynchronously through
 * sd-bus, and the user's command spawned (posix_spawn: no fork of a process
 * holding the LMDB env) with the figures in its environment and no
 * descriptor of ours but stdin (/dev/null), stdout and stderr. */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <systemd/sd-bus.h>
#include <unistd.h>

#include "budget/alert.h"
#include "log.h"

extern char **environ;

#define FIELD_LEN 600
#define N_FIELDS 9

struct budget_alert {
        sd_event *event;
        sd_bus *bus;
        bool bus_failed_logged;
};

int budget_alert_new(sd_event *e, struct budget_alert **ret)
{
        struct budget_alert *a = calloc(1, sizeof(*a));
        if (!a)
                return -ENOMEM;
        a->event = e ? sd_event_ref(e) : NULL;
        *ret = a;
        return 0;
}

struct budget_alert *budget_alert_free(struct budget_alert *a)
{
        if (!a)
                return NULL;
        if (a->bus) {
                sd_bus_flush(a->bus);
                sd_bus_detach_event(a->bus);
                sd_bus_close_unref(a->bus);
        }
        sd_event_unref(a->event);
        free(a);
        return NULL;
}

const char *budget_amount_text(enum budget_unit u, int64_t v, char *buf, size_t cap)
{
        if (u == BUDGET_USD) {
                int64_t a = v < 0 ? -v : v;
                snprintf(buf, cap, "%s$%lld.%06lld", v < 0 ? "-" : "", (long long)(a / 1000000000),
                         (long long)(a % 1000000000 / 1000));
                return buf;
        }
        char digits[32], out[48];
        size_t n, o = 0;
        snprintf(digits, sizeof(digits), "%lld", (long long)v);
        n = strlen(digits);
        for (size_t i = 0; i < n; i++) {
                if (i && (n - i) % 3 == 0 && digits[i - 1] != '-')
                        out[o++] = ',';
                out[o++] = digits[i];
        }
        out[o] = 0;
        snprintf(buf, cap, "%s tokens", out);
        return buf;
}

/* Plain decimal figure for fields and the environment: 12.345678 or 2000000. */
static void plain_figure(enum budget_unit u, int64_t v, char *buf, size_t cap)
{
        if (u == BUDGET_USD)
                snprintf(buf, cap, "%lld.%06lld", (long long)(v / 1000000000),
                         (long long)(v % 1000000000 / 1000));
        else
                snprintf(buf, cap, "%lld", (long long)v);
}

/* Whole percents of the figure `status` shows (budget_percent_tenths). */
static unsigned percent_of(int64_t amount, int64_t limit)
{
        return (unsigned)(budget_percent_tenths(amount, limit) / 10);
}

/* The figures as NAME=value strings: AGENTMETER_BUDGET, _PERIOD, _PERIOD_START,
 * _LEVEL, _PERCENT, _AMOUNT, _LIMIT, _UNIT, _SCOPE. */
static void build_fields(const struct budget_crossing *c, char f[N_FIELDS][FIELD_LEN])
{
        const struct budget_rule *b = c->rule;
        char amount[32], limit[32];

        plain_figure(b->unit, c->amount, amount, sizeof(amount));
        plain_figure(b->unit, b->limit, limit, sizeof(limit));
        snprintf(f[0], FIELD_LEN, "AGENTMETER_BUDGET=%s", b->name);
        snprintf(f[1], FIELD_LEN, "AGENTMETER_BUDGET_PERIOD=%s", budget_period_name(b->period));
        snprintf(f[2], FIELD_LEN, "AGENTMETER_BUDGET_PERIOD_START=%s", c->period_key);
        snprintf(f[3], FIELD_LEN, "AGENTMETER_BUDGET_LEVEL=%u", c->level);
        snprintf(f[4], FIELD_LEN, "AGENTMETER_BUDGET_PERCENT=%u", percent_of(c->amount, b->limit));
        snprintf(f[5], FIELD_LEN, "AGENTMETER_BUDGET_AMOUNT=%s", amount);
        snprintf(f[6], FIELD_LEN, "AGENTMETER_BUDGET_LIMIT=%s", limit);
        snprintf(f[7], FIELD_LEN, "AGENTMETER_BUDGET_UNIT=%s", budget_unit_name(b->unit));
        if (b->scope == BUDGET_TOTAL)
                snprintf(f[8], FIELD_LEN, "AGENTMETER_BUDGET_SCOPE=total");
        else
                snprintf(f[8], FIELD_LEN, "AGENTMETER_BUDGET_SCOPE=%s=%.500s",
                         budget_scope_name(b->scope), b->match);
}

/* One line for people: "budget day (daily 2026-12-01, total): 80% level
 * reached: $0.850000 of $1.000000 (85%)". */
static void describe(const struct budget_crossing *c, char *buf, size_t cap)
{
        const struct budget_rule *b = c->rule;
        char a[48], l[48], scope[ROW_PROJECT_MAX + 16];

        if (b->scope == BUDGET_TOTAL)
                snprintf(scope, sizeof(scope), "all harnesses");
        else
                snprintf(scope, sizeof(scope), "%s %s", budget_scope_name(b->scope), b->match);
        snprintf(buf, cap, "budget %s (%s %s, %s): %u%% level reached: %s of %s (%u%%)", b->name,
                 budget_period_name(b->period), c->period_key, scope, c->level,
                 budget_amount_text(b->unit, c->amount, a, sizeof(a)),
                 budget_amount_text(b->unit, b->limit, l, sizeof(l)),
                 percent_of(c->amount, b->limit));
}

/* Notification bodies may be read as markup: escape & < >. */
static void markup_escape(const char *s, char *out, size_t cap)
{
        size_t o = 0;
        for (; *s && o + 6 < cap; s++) {
                const char *rep = *s == '&' ? "&amp;" : *s == '<' ? "&lt;" : *s == '>' ? "&gt;" : NULL;
                if (rep) {
                        size_t k = strlen(rep);
                        memcpy(out + o, rep, k);
                        o += k;
                } else {
                        out[o++] = *s;
                }
        }
        out[o] = 0;
}

static int on_notify_reply(sd_bus_message *m, void *u, sd_bus_error *err)
{
        (void)u;
        (void)err;
        const sd_bus_error *e = sd_bus_message_get_error(m);
        if (e)
                log_debug("desktop notification not shown: %s", e->message ? e->message : e->name);
        return 0;
}

static int ensure_bus(struct budget_alert *a)
{
        int r;
        if (a->bus && sd_bus_is_open(a->bus) > 0)
                return 0;
        if (a->bus) {
                sd_bus_detach_event(a->bus);
                a->bus = sd_bus_close_unref(a->bus);
        }
        r = sd_bus_open_user(&a->bus);
        if (r < 0)
                return r;
        r = sd_bus_attach_event(a->bus, a->event, SD_EVENT_PRIORITY_NORMAL);
        if (r < 0)
                a->bus = sd_bus_close_unref(a->bus);
        return r;
}

static void notify_desktop(struct budget_alert *a, const struct budget_crossing *c,
                           const char *text)
{
        char summary[160], body[2 * ROW_PROJECT_MAX + 256];
        int r;

        if (!a->event)
                return;
        r = ensure_bus(a);
        if (r < 0) {
                if (!a->bus_failed_logged)
                        log_errno(LOG_INFO, r, "no D-Bus session bus, budget alerts are not shown on "
                                               "the desktop");
                a->bus_failed_logged = true;
                return;
        }
        a->bus_failed_logged = false;
        snprintf(summary, sizeof(summary), "%s budget at %u%%",
                 c->rule->period == BUDGET_DAILY    ? "Daily"
                 : c->rule->period == BUDGET_WEEKLY ? "Weekly"
                                                    : "Monthly",
                 c->level);
        markup_escape(text, body, sizeof(body));
        r = sd_bus_call_method_async(a->bus, NULL, "org.freedesktop.Notifications",
                                     "/org/freedesktop/Notifications",
                                     "org.freedesktop.Notifications", "Notify", on_notify_reply, a,
                                     "susssasa{sv}i", "agentmeterd", (uint32_t)0, "dialog-warning",
                                     summary, body, 0, 1, "urgency", "y",
                                     (uint8_t)(c->level >= 100 ? 2 : 1), (int32_t)-1);
        if (r < 0)
                log_errno(LOG_WARNING, r, "cannot send the desktop notification");
}

/* Floating and one-shot: the loop frees it. */
static int on_child(sd_event_source *s, const siginfo_t *si, void *u)
{
        (void)s;
        (void)u;
        if (si->si_code != CLD_EXITED || si->si_status != 0)
                log_warning("budget command (pid %d) %s %d", (int)si->si_pid,
                            si->si_code == CLD_EXITED ? "exited with status" : "was killed by signal",
                            si->si_status);
        return 0;
}

static void run_command(struct budget_alert *a, const char *command, char f[N_FIELDS][FIELD_LEN])
{
        posix_spawn_file_actions_t fa;
        posix_spawnattr_t attr;
        sigset_t none, all;
        size_t n_env = 0;
        pid_t pid;
        int r;

        while (environ[n_env])
                n_env++;
        char **env = calloc(n_env + N_FIELDS + 1, sizeof(char *));
        if (!env)
                return (void)log_errno(LOG_WARNING, -ENOMEM, "cannot run the budget command");
        size_t o = 0;
        for (size_t i = 0; i < n_env; i++)
                if (strncmp(environ[i], "AGENTMETER_BUDGET", 17) != 0)
                        env[o++] = environ[i];
        for (size_t i = 0; i < N_FIELDS; i++)
                env[o++] = f[i];
        env[o] = NULL;

        sigemptyset(&none);
        sigfillset(&all);
        posix_spawnattr_init(&attr);
        posix_spawnattr_setsigmask(&attr, &none);
        posix_spawnattr_setsigdefault(&attr, &all);
        posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF |
                                                POSIX_SPAWN_SETSID);
        posix_spawn_file_actions_init(&fa);
        posix_spawn_file_actions_addopen(&fa, STDIN_FILENO, "/dev/null", O_RDONLY, 0);
        /* nothing but stdin, stdout and stderr reaches the user's command:
         * not the ledger (LMDB opens its file without O_CLOEXEC), the
         * socket, nor what our own parent left open */
        r = posix_spawn_file_actions_addclosefrom_np(&fa, STDERR_FILENO + 1);
        if (r != 0) {
                posix_spawn_file_actions_destroy(&fa);
                posix_spawnattr_destroy(&attr);
                free(env);
                return (void)log_errno(LOG_WARNING, -r, "cannot run the budget command");
        }
        char *argv[] = { (char *)"sh", (char *)"-c", (char *)command, NULL };
        r = posix_spawn(&pid, "/bin/sh", &fa, &attr, argv, env);
        posix_spawn_file_actions_destroy(&fa);
        posix_spawnattr_destroy(&attr);
        free(env);
        if (r != 0)
                return (void)log_errno(LOG_WARNING, -r, "cannot run the budget command");
        if (a->event) {
                r = sd_event_add_child(a->event, NULL, pid, WEXITED, on_child, a);
                if (r < 0)
                        log_errno(LOG_WARNING, r, "cannot watch the budget command (pid %d)", (int)pid);
        }
}

void budget_alert_fire(struct budget_alert *a, const struct budget_crossing *c,
                       const char *command)
{
        char f[N_FIELDS][FIELD_LEN], text[ROW_PROJECT_MAX + 256];
        const char *fields[N_FIELDS + 1];

        build_fields(c, f);
        for (size_t i = 0; i < N_FIELDS; i++)
                fields[i] = f[i];
        fields[N_FIELDS] = NULL;
        describe(c, text, sizeof(text));
        log_fields(LOG_WARNING, fields, "%s", text);
        notify_desktop(a, c, text);
        if (command && *command)
                run_command(a, command, f);
}
