/* Parser for budgets.conf: one rule per line, bad lines skipped with their
 * line number, numbers bounded, and the calendar periods the rules use. */
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "budget-conf.h"
#include "paths.h"

#define USD_MAX_NANO (1000000000LL * 1000000000LL) /* one billion dollars */
#define TOKENS_MAX 1000000000000000LL              /* 1e15 */
#define WORDS_MAX 16
#define LINE_MAX_LEN 4096

static const char *const period_names[] = {
        [BUDGET_DAILY] = "daily", [BUDGET_WEEKLY] = "weekly", [BUDGET_MONTHLY] = "monthly",
};

const char *budget_period_name(enum budget_period p)
{
        return p >= BUDGET_DAILY && p <= BUDGET_MONTHLY ? period_names[p] : "?";
}

const char *budget_unit_name(enum budget_unit u)
{
        return u == BUDGET_USD ? "usd" : u == BUDGET_TOKENS ? "tokens" : "?";
}

const char *budget_scope_name(enum budget_scope s)
{
        switch (s) {
        case BUDGET_HARNESS: return "harness";
        case BUDGET_MODEL: return "model";
        case BUDGET_PROJECT: return "project";
        default: return "total";
        }
}

static void add_error(struct budget_conf *c, unsigned line, const char *fmt, ...)
        __attribute__((format(printf, 3, 4)));
static void add_error(struct budget_conf *c, unsigned line, const char *fmt, ...)
{
        va_list ap;
        if (c->n_errors < BUDGET_ERRORS_MAX) {
                char *e = c->errors[c->n_errors];
                int n = snprintf(e, BUDGET_ERROR_LEN, "line %u: ", line);
                va_start(ap, fmt);
                vsnprintf(e + n, BUDGET_ERROR_LEN - (size_t)n, fmt, ap);
                va_end(ap);
        }
        c->n_errors++;
}

/* Splits a line into words; "double quoted" parts may hold blanks (the
 * quotes are removed). Edits s in place. -E2BIG, -EINVAL (open quote). */
static int split_words(char *s, char **words, size_t *ret_n)
{
        size_t n = 0;
        char *p = s;

        for (;;) {
                while (*p == ' ' || *p == '\t')
                        p++;
                if (!*p || *p == '#')
                        break;
                if (n == WORDS_MAX)
                        return -E2BIG;
                char *out = p;
                words[n++] = out;
                bool quoted = false;
                while (*p && (quoted || (*p != ' ' && *p != '\t'))) {
                        if (*p == '"') {
                                quoted = !quoted;
                                p++;
                                continue;
                        }
                        *out++ = *p++;
                }
                if (quoted)
                        return -EINVAL;
                bool end = !*p;
                *out = 0;
                if (end)
                        break;
                p++;
        }
        *ret_n = n;
        return 0;
}

/* "12", "12.5", "0.000001": nano-USD, bounded. */
static int parse_usd(const char *s, int64_t *ret)
{
        int64_t whole = 0, frac = 0, scale = 100000000;
        const char *p = s;

        if (*p < '0' || *p > '9')
                return -EINVAL;
        for (; *p >= '0' && *p <= '9'; p++) {
                whole = whole * 10 + (*p - '0');
                if (whole > USD_MAX_NANO / 1000000000LL)
                        return -ERANGE;
        }
        if (*p == '.') {
                p++;
                for (; *p >= '0' && *p <= '9'; p++) {
                        if (scale == 0)
                                return -EINVAL; /* more than nine decimals */
                        frac += (*p - '0') * scale;
                        scale /= 10;
                }
        }
        if (*p)
                return -EINVAL;
        *ret = whole * 1000000000LL + frac;
        return 0;
}

/* "2000000", "500k", "2M", "1G": tokens, bounded. */
static int parse_tokens(const char *s, int64_t *ret)
{
        char *end;
        int64_t mult = 1;

        if (*s < '0' || *s > '9')
                return -EINVAL;
        errno = 0;
        unsigned long long v = strtoull(s, &end, 10);
        if (errno)
                return -ERANGE;
        if (*end == 'k' || *end == 'K')
                mult = 1000, end++;
        else if (*end == 'M' || *end == 'm')
                mult = 1000000, end++;
        else if (*end == 'G' || *end == 'g')
                mult = 1000000000, end++;
        if (*end)
                return -EINVAL;
        if (v > (unsigned long long)(TOKENS_MAX / mult))
                return -ERANGE;
        *ret = (int64_t)v * mult;
        return 0;
}

static bool unit_word(const char *w, enum budget_unit *ret)
{
        if (strcasecmp(w, "usd") == 0 || strcmp(w, "$") == 0)
                *ret = BUDGET_USD;
        else if (strcasecmp(w, "tokens") == 0 || strcasecmp(w, "token") == 0)
                *ret = BUDGET_TOKENS;
        else
                return false;
        return true;
}

/* The amount, from words[*i] (and the next word when it is the unit). */
static const char *parse_amount(char **words, size_t n, size_t *i, struct budget_rule *b)
{
        char num[64];
        const char *w = words[*i];
        enum budget_unit u = 0;
        size_t len;

        if (*w == '$')
                u = BUDGET_USD, w++;
        if (strlen(w) >= sizeof(num)) /* cut, it would be another amount */
                return "the amount is too long (at most 63 characters)";
        snprintf(num, sizeof(num), "%s", w);
        len = strlen(num);
        if (len > 3 && strcasecmp(num + len - 3, "usd") == 0)
                u = BUDGET_USD, num[len - 3] = 0;
        else if (len > 6 && strcasecmp(num + len - 6, "tokens") == 0)
                u = BUDGET_TOKENS, num[len - 6] = 0;
        (*i)++;
        if (*i < n && !strchr(words[*i], '=')) {
                enum budget_unit u2;
                if (!unit_word(words[*i], &u2))
                        return "expected a unit (usd or tokens) after the amount";
                if (u && u != u2)
                        return "the amount has two different units";
                u = u2;
                (*i)++;
        }
        if (!u)
                return "the amount needs a unit: $10, 10 usd or 2M tokens";
        int r = u == BUDGET_USD ? parse_usd(num, &b->limit) : parse_tokens(num, &b->limit);
        if (r == -ERANGE)
                return "the amount is out of range";
        if (r < 0)
                return u == BUDGET_USD ? "the amount is not a number of dollars (like 12.50)"
                                       : "the amount is not a number of tokens (like 2000000 or 2M)";
        if (b->limit <= 0)
                return "the limit must be above zero";
        b->unit = u;
        return NULL;
}

static int cmp_unsigned(const void *a, const void *b)
{
        unsigned x = *(const unsigned *)a, y = *(const unsigned *)b;
        return x < y ? -1 : x > y;
}

static const char *parse_levels(const char *v, struct budget_rule *b)
{
        char buf[128];
        char *save = NULL;

        if (strlen(v) >= sizeof(buf))
                return "levels= is too long";
        snprintf(buf, sizeof(buf), "%s", v);
        b->n_levels = 0;
        for (char *t = strtok_r(buf, ",", &save); t; t = strtok_r(NULL, ",", &save)) {
                char *end;
                size_t k = strlen(t);
                if (k && t[k - 1] == '%')
                        t[k - 1] = 0;
                unsigned long pct = strtoul(t, &end, 10);
                if (!*t || *end || pct == 0 || pct > 1000)
                        return "levels= wants percents from 1 to 1000, like levels=50,80,100";
                if (b->n_levels == BUDGET_LEVELS_MAX)
                        return "too many levels (at most 8)";
                b->levels[b->n_levels++] = (unsigned)pct;
        }
        if (b->n_levels == 0)
                return "levels= is empty";
        qsort(b->levels, b->n_levels, sizeof(b->levels[0]), cmp_unsigned);
        size_t out = 1;
        for (size_t j = 1; j < b->n_levels; j++)
                if (b->levels[j] != b->levels[out - 1])
                        b->levels[out++] = b->levels[j];
        b->n_levels = out;
        return NULL;
}

static const char *parse_option(const char *w, struct budget_rule *b)
{
        const char *eq = strchr(w, '=');
        size_t klen = (size_t)(eq - w);
        const char *v = eq + 1;

        if (klen == 6 && strncmp(w, "levels", 6) == 0)
                return parse_levels(v, b);
        if (klen == 4 && strncmp(w, "name", 4) == 0) {
                if (!*v || strlen(v) >= sizeof(b->name))
                        return "name= must have 1 to 63 characters";
                for (const char *p = v; *p; p++)
                        if ((unsigned char)*p < 0x21 || *p == 0x7f)
                                return "name= may not hold blanks or control characters";
                snprintf(b->name, sizeof(b->name), "%s", v);
                return NULL;
        }
        enum budget_scope s = BUDGET_TOTAL;
        if (klen == 7 && strncmp(w, "harness", 7) == 0)
                s = BUDGET_HARNESS;
        else if (klen == 5 && strncmp(w, "model", 5) == 0)
                s = BUDGET_MODEL;
        else if (klen == 7 && strncmp(w, "project", 7) == 0)
                s = BUDGET_PROJECT;
        else
                return "unknown option (harness=, model=, project=, levels=, name=)";
        if (b->scope != BUDGET_TOTAL)
                return "a rule has at most one of harness=, model=, project=";
        if (!*v || strlen(v) >= sizeof(b->match))
                return "the scope value is empty or too long";
        b->scope = s;
        snprintf(b->match, sizeof(b->match), "%s", v);
        if (s == BUDGET_PROJECT) {
                size_t k = strlen(b->match);
                while (k > 1 && b->match[k - 1] == '/')
                        b->match[--k] = 0;
        }
        return NULL;
}

static const char *parse_rule(char **words, size_t n, unsigned line, struct budget_rule *b)
{
        size_t i = 1;
        const char *err;

        memset(b, 0, sizeof(*b));
        b->line = line;
        for (int p = BUDGET_DAILY; p <= BUDGET_MONTHLY; p++)
                if (strcmp(words[0], period_names[p]) == 0)
                        b->period = (enum budget_period)p;
        if (!b->period)
                return "a rule starts with daily, weekly or monthly (or the line is: command ...)";
        if (n < 2)
                return "the limit is missing (like: daily $10)";
        if ((err = parse_amount(words, n, &i, b)))
                return err;
        for (; i < n; i++) {
                if (!strchr(words[i], '='))
                        return "expected key=value after the amount";
                if ((err = parse_option(words[i], b)))
                        return err;
        }
        if (b->n_levels == 0) {
                b->levels[0] = 80;
                b->levels[1] = 100;
                b->n_levels = 2;
        }
        if (!b->name[0])
                snprintf(b->name, sizeof(b->name), "%s-%u", period_names[b->period], line);
        return NULL;
}

static void parse_line(struct budget_conf *c, char *s, unsigned line)
{
        char *words[WORDS_MAX];
        size_t n = 0;
        const char *err;

        s += strspn(s, " \t");
        if (strncmp(s, "command", 7) == 0 && (s[7] == ' ' || s[7] == '\t')) {
                char *cmd = s + 8 + strspn(s + 8, " \t");
                size_t k = strlen(cmd);
                while (k && (cmd[k - 1] == ' ' || cmd[k - 1] == '\t' || cmd[k - 1] == '\r'))
                        cmd[--k] = 0;
                if (!k || k >= sizeof(c->command))
                        add_error(c, line, "command is empty or longer than %d bytes",
                                  BUDGET_COMMAND_MAX - 1);
                else
                        snprintf(c->command, sizeof(c->command), "%s", cmd);
                return;
        }
        for (char *p = s; *p; p++) {
                if (*p == '\r')
                        *p = ' ';
                else if ((unsigned char)*p < 0x20 && *p != '\t')
                        return add_error(c, line, "control character in the line");
        }
        int r = split_words(s, words, &n);
        if (r == -E2BIG)
                return add_error(c, line, "too many words");
        if (r < 0)
                return add_error(c, line, "unterminated quote");
        if (n == 0)
                return;
        if (c->n_rules == BUDGET_MAX)
                return add_error(c, line, "more than %d rules; this one is ignored", BUDGET_MAX);
        struct budget_rule *b = &c->rules[c->n_rules];
        if ((err = parse_rule(words, n, line, b)))
                return add_error(c, line, "%s", err);
        for (size_t j = 0; j < c->n_rules; j++)
                if (strcmp(c->rules[j].name, b->name) == 0)
                        return add_error(c, line, "the name '%s' is used by line %u", b->name,
                                         c->rules[j].line);
        c->n_rules++;
}

int budget_conf_parse(const char *text, size_t len, struct budget_conf *ret_conf)
{
        struct budget_conf *c = calloc(1, sizeof(*c));
        char line[LINE_MAX_LEN];
        unsigned lineno = 0;
        size_t pos = 0;

        if (!c)
                return -ENOMEM;
        while (pos < len) {
                const char *nl = memchr(text + pos, '\n', len - pos);
                size_t k = nl ? (size_t)(nl - (text + pos)) : len - pos;
                lineno++;
                if (memchr(text + pos, 0, k))
                        add_error(c, lineno, "NUL byte in the line");
                else if (k >= sizeof(line))
                        add_error(c, lineno, "line longer than %d bytes", LINE_MAX_LEN - 1);
                else {
                        memcpy(line, text + pos, k);
                        line[k] = 0;
                        parse_line(c, line, lineno);
                }
                pos += k + (nl ? 1 : 0);
        }
        *ret_conf = *c;
        free(c);
        return 0;
}

int budget_conf_load(const char *path, struct budget_conf *ret_conf)
{
        struct stat st;
        int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
        int r = 0;

        if (fd < 0)
                return -errno;
        if (fstat(fd, &st) < 0)
                r = -errno;
        else if (!S_ISREG(st.st_mode))
                r = -EINVAL;
        else if (st.st_size > (off_t)BUDGET_FILE_MAX)
                r = -EFBIG;
        if (r < 0) {
                close(fd);
                return r;
        }
        char *buf = malloc((size_t)st.st_size + 1);
        size_t got = 0;
        if (!buf) {
                close(fd);
                return -ENOMEM;
        }
        while (got < (size_t)st.st_size) {
                ssize_t k = read(fd, buf + got, (size_t)st.st_size - got);
                if (k < 0 && errno == EINTR)
                        continue;
                if (k <= 0) {
                        r = k < 0 ? -errno : 0;
                        break;
                }
                got += (size_t)k;
        }
        close(fd);
        if (r == 0)
                r = budget_conf_parse(buf, got, ret_conf);
        free(buf);
        return r;
}

int64_t budget_percent_tenths(int64_t amount, int64_t limit)
{
        if (amount <= 0 || limit <= 0)
                return 0;
        __int128 t = (__int128)amount * 1000 / limit; /* floored: amount >= 0 */
        return t > (__int128)BUDGET_PERCENT_MAX * 10 ? (int64_t)BUDGET_PERCENT_MAX * 10 : (int64_t)t;
}

bool budget_rule_matches(const struct budget_rule *b, const char *harness, const char *model,
                         const char *project)
{
        switch (b->scope) {
        case BUDGET_HARNESS:
                return harness && strcmp(harness, b->match) == 0;
        case BUDGET_MODEL:
                return model && strcmp(model, b->match) == 0;
        case BUDGET_PROJECT: {
                size_t k = strlen(b->match);
                if (!project || strncmp(project, b->match, k) != 0)
                        return false;
                return project[k] == 0 || project[k] == '/' || (k == 1 && b->match[0] == '/');
        }
        default:
                return true;
        }
}

void budget_period_of(enum budget_period p, int64_t ms, int64_t *ret_start_ms,
                      int64_t *ret_end_ms, char *ret_key, size_t cap)
{
        time_t t = (time_t)(ms / 1000);
        struct tm tm, start, end;

        localtime_r(&t, &tm);
        start = tm;
        start.tm_hour = start.tm_min = start.tm_sec = 0;
        start.tm_isdst = -1;
        if (p == BUDGET_WEEKLY)
                start.tm_mday -= (tm.tm_wday + 6) % 7; /* back to Monday */
        else if (p == BUDGET_MONTHLY)
                start.tm_mday = 1;
        end = start;
        if (p == BUDGET_DAILY)
                end.tm_mday += 1;
        else if (p == BUDGET_WEEKLY)
                end.tm_mday += 7;
        else
                end.tm_mon += 1;
        time_t s = mktime(&start), e = mktime(&end);
        *ret_start_ms = (int64_t)s * 1000;
        *ret_end_ms = (int64_t)e * 1000;
        if (p == BUDGET_DAILY)
                strftime(ret_key, cap, "%Y-%m-%d", &start);
        else if (p == BUDGET_WEEKLY)
                strftime(ret_key, cap, "%G-W%V", &start);
        else
                strftime(ret_key, cap, "%Y-%m", &start);
}

int budget_conf_path(char *buf, size_t cap)
{
        char dir[4096];
        int r = paths_config_home(dir, sizeof(dir));
        if (r < 0)
                return r;
        if (strlen(dir) + strlen("/agentmeterd/" BUDGET_FILE) >= cap)
                return -ENAMETOOLONG;
        snprintf(buf, cap, "%s/agentmeterd/" BUDGET_FILE, dir);
        return 0;
}
