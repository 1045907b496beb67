/* The `top` screen and its loop: poll() on the tail stream, the keyboard
 * and a signalfd; sums re-asked (coalesced) only after rows arrive; ncurses
 * for drawing (its KEY_RESIZE for resizes), endwin() on every way out. */
#include <curses.h>
#include <errno.h>
#include <json-c/json.h>
#include <limits.h>
#include <locale.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/signalfd.h>
#include <time.h>
#include <unistd.h>
#include <wchar.h>

#include "fmt.h"
#include "jfield.h"
#include "paths.h"
#include "render/render.h"
#include "tailconn.h"
#include "termtext.h"
#include "top/model.h"
#include "top/top.h"
#include "timefmt.h"

#define COALESCE_MS 250     /* rows arriving together: one re-query */
#define TICK_MS 1000        /* clock and block countdown (no daemon traffic) */
#define RECONNECT_MS 2000

struct top {
        const struct top_options *o;
        struct top_model m;
        struct tailconn *tc;
        int64_t refresh_due;    /* monotonic ms, 0 = none */
        int64_t reconnect_at;
        bool screen;
};

/* Cuts s to at most cols display columns (wide characters count two), so
 * no line wraps. Text is escaped before, so it holds no control bytes. */
static void fit(char *s, int cols)
{
        mbstate_t st = { 0 };
        size_t left = strlen(s);
        int used = 0;

        for (char *p = s; *p;) {
                wchar_t wc;
                size_t n = mbrtowc(&wc, p, left, &st);
                int w = 1;
                if (n == (size_t)-1 || n == (size_t)-2 || n == 0) {
                        n = 1; /* not this locale's text: a byte, a column */
                        memset(&st, 0, sizeof(st));
                } else if ((w = wcwidth(wc)) < 0) {
                        w = 1;
                }
                if (used + w > cols) {
                        *p = 0;
                        return;
                }
                used += w;
                p += n;
                left -= n;
        }
}

static void line(int y, int attr, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static void line(int y, int attr, const char *fmt, ...)
{
        char buf[2048];
        va_list ap;

        if (y >= LINES)
                return;
        va_start(ap, fmt);
        vsnprintf(buf, sizeof(buf), fmt, ap);
        va_end(ap);
        fit(buf, COLS);
        if (attr)
                attron(attr);
        mvaddstr(y, 0, buf);
        clrtoeol();
        if (attr) {
                /* a bar across the whole width */
                int x = getcurx(stdscr);
                for (; x < COLS; x++)
                        addch(' ');
                attroff(attr);
        }
}

static const char *usd_or_dash(const struct top_sums *s, char *buf)
{
        char u[FMT_MAX];
        if (!s->priced)
                return strcpy(buf, s->events ? FMT_DASH : "$0.000000");
        snprintf(buf, FMT_MAX, "%s%s", fmt_usd(s->cost_usd, u), s->unpriced ? "*" : "");
        return buf;
}

static int draw_block(struct top *t, int y)
{
        struct block_info b;
        char a[FMT_MAX], c[FMT_MAX], d[FMT_MAX], p[FMT_MAX], s[16], e[16];
        int64_t now = timefmt_now_ms();

        blocks_current(&t->m.blocks, now, &b);
        if (!b.active) {
                line(y, 0, "5-hour block  none active (the next call starts one)%s",
                     t->m.blocks_from_ledger ? "" : "; history unreadable, live calls only");
                return y + 1;
        }
        time_t ts = (time_t)(b.start_ms / 1000), te = (time_t)(b.end_ms / 1000);
        struct tm tm;
        strftime(s, sizeof(s), "%H:%M", localtime_r(&ts, &tm));
        strftime(e, sizeof(e), "%H:%M", localtime_r(&te, &tm));
        line(y, 0, "5-hour block  %s-%s, %s left: %s in %s calls, %s tokens%s", s, e,
             fmt_duration((uint64_t)(b.end_ms - now) / 1000, d), fmt_usd((double)b.cost_nano / 1e9, a),
             fmt_u64(b.calls, c), fmt_u64(b.tokens, p), b.unpriced ? " (some unpriced)" : "");
        line(y + 1, 0, "              burn %s/h, %s tokens/min; at this rate %s by %s",
             fmt_usd(b.usd_per_hour, a), fmt_u64((uint64_t)b.tokens_per_min, c),
             fmt_usd((double)b.projected_nano / 1e9, d), e);
        return y + 2;
}

static int draw_groups(struct top *t, int y, int max_rows)
{
        char a[FMT_MAX], b[FMT_MAX], c[FMT_MAX], k[FMT_MAX], key[TOP_KEY_MAX * 4];
        int w = COLS - 62 > 16 ? COLS - 62 : 16;

        line(y++, A_BOLD, "%-*s %14s %14s %14s %16s", w,
             t->m.group == TOP_BY_PROJECT ? "By project (whole sessions active in the period)"
             : t->m.group == TOP_BY_MODEL ? "By model"
                                          : "By harness",
             "today", "this week", "this month", "tokens (month)");
        if (t->m.n_lines == 0)
                line(y++, 0, "(nothing yet)");
        for (size_t i = 0; i < t->m.n_lines && (int)i < max_rows; i++) {
                const struct top_line *l = &t->m.lines[i];
                termtext(l->key, key, sizeof(key));
                fit(key, w);
                line(y++, 0, "%-*s %14s %14s %14s %16s", w, key, usd_or_dash(&l->p[TOP_TODAY], a),
                     usd_or_dash(&l->p[TOP_WEEK], b), usd_or_dash(&l->p[TOP_MONTH], c),
                     fmt_u64(l->p[TOP_MONTH].tokens, k));
        }
        return y;
}

static int draw_recent(struct top *t, int y, int max_rows)
{
        char tm[FMT_MAX], tok[FMT_MAX], cost[FMT_MAX], h[64], mo[512], pr[1024];

        line(y++, A_BOLD, "Last calls (%s since top started)", fmt_u64(t->m.rows_seen, tok));
        if (t->m.n_recent == 0 && max_rows > 0)
                line(y++, 0, "(waiting for the daemon to commit a row)");
        for (size_t i = 0; i < t->m.n_recent && (int)i < max_rows; i++) {
                json_object *r = t->m.recent[t->m.n_recent - 1 - i];
                const char *proj = jstr(r, "project"), *slash = proj ? strrchr(proj, '/') : NULL;
                termtext(jstr(r, "harness"), h, sizeof(h));
                termtext(jstr(r, "model"), mo, sizeof(mo));
                termtext(slash && slash[1] ? slash + 1 : proj, pr, sizeof(pr));
                fit(mo, 40);
                line(y++, 0, "%s  %-9s %-40s %12s %14s  %s", fmt_time(r, "time", tm), h, mo,
                     fmt_tokens(r, "total_tokens", tok), fmt_cost(r, "cost_usd", cost), pr);
        }
        return y;
}

static int draw_errors(struct top *t, int y, int max_rows)
{
        size_t n = t->m.errors ? json_object_array_length(t->m.errors) : 0;
        char p[2048], e[512];

        if (n == 0)
                return y;
        line(y++, A_BOLD, "Sources with errors (%zu)", n);
        for (size_t i = 0; i < n && (int)i < max_rows; i++) {
                json_object *s = json_object_array_get_idx(t->m.errors, i);
                termtext(jstr(s, "path"), p, sizeof(p));
                termtext(jstr(s, "error"), e, sizeof(e));
                line(y++, 0, "%s: %s", p, e);
        }
        return y;
}

static void draw(struct top *t)
{
        char clock[16], a[FMT_MAX], k[FMT_MAX], c[FMT_MAX];
        time_t now = time(NULL);
        struct tm tm;
        int y = 0;

        erase();
        strftime(clock, sizeof(clock), "%H:%M:%S", localtime_r(&now, &tm));
        line(y++, A_REVERSE, " agentmeterctl top   grouping: %s (g)   q: quit   %s%s",
             top_group_name(t->m.group), clock, t->tc ? "" : "   [daemon gone, reconnecting]");
        if (t->m.problem[0]) {
                char esc[512];
                line(y++, A_BOLD, "%s", termtext(t->m.problem, esc, sizeof(esc)));
        } else {
                y++;
        }
        line(y++, A_BOLD, "%-12s %16s %16s %10s", "", "cost", "tokens", "calls");
        for (int p = 0; p < TOP_PERIODS; p++) {
                const char *name = p == TOP_TODAY ? "Today" : p == TOP_WEEK ? "This week" : "This month";
                line(y++, 0, "%-12s %16s %16s %10s", name, usd_or_dash(&t->m.total[p], a),
                     fmt_u64(t->m.total[p].tokens, k), fmt_u64(t->m.total[p].events, c));
        }
        y++;
        y = draw_block(t, y) + 1;
        int left = LINES - y;
        size_t n_err = t->m.errors ? json_object_array_length(t->m.errors) : 0;
        int err_rows = n_err ? (int)(n_err < 3 ? n_err : 3) + 2 : 0;
        int groups = (int)t->m.n_lines;
        int cap = (left - err_rows - 3) / 2;
        if (groups > cap)
                groups = cap > 1 ? cap : 1;
        y = draw_groups(t, y, groups) + 1;
        y = draw_recent(t, y, LINES - y - err_rows - 1);
        draw_errors(t, y + 1, 3);
        refresh();
}

static void plain_summary(struct top *t)
{
        char a[FMT_MAX], k[FMT_MAX];
        printf("totals:");
        for (int p = 0; p < TOP_PERIODS; p++)
                printf("%s %s %s (%s tokens)", p ? ";" : "", top_period_name(p),
                       usd_or_dash(&t->m.total[p], a), fmt_u64(t->m.total[p].tokens, k));
        printf("\n");
        fflush(stdout);
}

static void refresh_model(struct top *t)
{
        (void)top_model_refresh(&t->m);
        t->refresh_due = 0;
        if (t->screen)
                draw(t);
        else
                plain_summary(t);
}

/* A copy of a row with every string (and tool call name) escaped, for the
 * plain stream: its reader may well be a terminal after all. */
static json_object *escaped_row(json_object *row)
{
        json_object *o = json_object_new_object();
        char buf[2048];

        json_object_object_foreach(row, k, v) {
                if (v && json_object_is_type(v, json_type_string)) {
                        json_object_object_add(o, k, json_object_new_string(
                                                             termtext(json_object_get_string(v), buf, sizeof(buf))));
                } else if (v && json_object_is_type(v, json_type_array)) {
                        json_object *a = json_object_new_array();
                        for (size_t i = 0; i < json_object_array_length(v); i++)
                                json_object_array_add(a, json_object_new_string(termtext(
                                        json_object_get_string(json_object_array_get_idx(v, i)), buf,
                                        sizeof(buf))));
                        json_object_object_add(o, k, a);
                } else {
                        json_object_object_add(o, k, v ? json_object_get(v) : NULL);
                }
        }
        return o;
}

static int on_event(json_object *ev, void *u)
{
        struct top *t = u;
        const char *kind = jstr(ev, "event");
        json_object *row = jfield(ev, "row");

        if (!kind || strcmp(kind, "row") != 0 || !row)
                return 0;
        top_model_add_row(&t->m, row);
        if (!t->screen) {
                json_object *safe = escaped_row(row);
                int r = render_tail_row(stdout, safe);
                json_object_put(safe);
                if (r < 0)
                        return -EPIPE;
        }
        if (!t->refresh_due)
                t->refresh_due = timefmt_mono_ms() + COALESCE_MS;
        return 0;
}

/* 1 = quit. */
static int on_key(struct top *t, int ch)
{
        switch (ch) {
        case 'q': case 'Q':
                return 1;
        case 'g': case 'G':
                t->m.group = (enum top_group)((t->m.group + 1) % TOP_GROUPS);
                refresh_model(t);
                break;
        case 'r': case 'R':
                refresh_model(t);
                break;
        case KEY_RESIZE:
        case 12: /* Ctrl-L */
                clearok(curscr, TRUE);
                draw(t);
                break;
        default:
                break;
        }
        return 0;
}

static int loop(struct top *t, int sigfd)
{
        int64_t next_tick = timefmt_mono_ms() + TICK_MS;

        for (;;) {
                struct pollfd p[3] = {
                        { .fd = sigfd, .events = POLLIN },
                        { .fd = t->tc ? tailconn_fd(t->tc) : -1, .events = POLLIN },
                        { .fd = t->screen ? STDIN_FILENO : -1, .events = POLLIN },
                };
                int64_t now = timefmt_mono_ms(), wake = t->screen ? next_tick : INT64_MAX;
                if (t->refresh_due && t->refresh_due < wake)
                        wake = t->refresh_due;
                if (!t->tc && t->reconnect_at < wake)
                        wake = t->reconnect_at;
                int timeout = wake == INT64_MAX ? -1 : wake > now ? (int)(wake - now) : 0;
                int n = poll(p, 3, timeout);
                if (n < 0 && errno != EINTR)
                        return -errno;
                if (n > 0 && (p[0].revents & POLLIN))
                        return 0;
                if (t->screen) {
                        int ch;
                        while ((ch = getch()) != ERR)
                                if (on_key(t, ch))
                                        return 0;
                }
                if (n > 0 && t->tc && (p[1].revents & (POLLIN | POLLHUP | POLLERR))) {
                        int r = tailconn_read(t->tc, on_event, t);
                        if (r == -EPIPE)
                                return 0;
                        if (r < 0) {
                                t->tc = tailconn_free(t->tc);
                                if (!t->screen)
                                        return 0; /* the stream ends with the daemon */
                                t->reconnect_at = timefmt_mono_ms() + RECONNECT_MS;
                                draw(t);
                        }
                }
                now = timefmt_mono_ms();
                if (!t->tc && now >= t->reconnect_at) {
                        if (tailconn_open(t->o->socket_path, 5000, &t->tc) == 0)
                                t->refresh_due = now;
                        else
                                t->reconnect_at = now + RECONNECT_MS;
                }
                if (t->refresh_due && now >= t->refresh_due)
                        refresh_model(t);
                if (t->screen && now >= next_tick) {
                        draw(t);
                        next_tick = now + TICK_MS;
                }
        }
}

int top_run(const struct top_options *o)
{
        struct top t = { .o = o, .m = { .socket = o->socket_path, .tz = o->tz } };
        char dir[PATH_MAX];
        sigset_t mask, old;
        int r, sigfd;

        setlocale(LC_ALL, "");
        r = tailconn_open(o->socket_path, 5000, &t.tc);
        if (r < 0)
                return r;
        r = top_model_refresh(&t.m);
        if (r < 0) {
                tailconn_free(t.tc);
                top_model_free(&t.m);
                return r;
        }
        if (o->state_dir)
                snprintf(dir, sizeof(dir), "%s", o->state_dir);
        if (o->state_dir || paths_state_dir(dir, sizeof(dir)) == 0)
                (void)top_model_load_history(&t.m, dir);

        sigemptyset(&mask);
        sigaddset(&mask, SIGINT);
        sigaddset(&mask, SIGTERM);
        sigaddset(&mask, SIGHUP);
        sigprocmask(SIG_BLOCK, &mask, &old);
        sigfd = signalfd(-1, &mask, SFD_CLOEXEC | SFD_NONBLOCK);
        if (sigfd < 0) {
                r = -errno;
                goto out;
        }
        SCREEN *scr = NULL;
        /* newterm, not initscr: an unknown $TERM is an error here, not an exit */
        if (isatty(STDOUT_FILENO) && isatty(STDIN_FILENO))
                scr = newterm(NULL, stdout, stdin);
        t.screen = scr != NULL;
        if (t.screen) {
                cbreak();
                noecho();
                nonl();
                keypad(stdscr, TRUE);
                nodelay(stdscr, TRUE);
                curs_set(0);
                draw(&t);
        } else {
                plain_summary(&t);
        }
        r = loop(&t, sigfd);
        if (t.screen) {
                endwin();
                delscreen(scr);
        }
        close(sigfd);
out:
        sigprocmask(SIG_SETMASK, &old, NULL);
        tailconn_free(t.tc);
        top_model_free(&t.m);
        return r;
}
