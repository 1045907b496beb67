/* budgets.conf parsing: amounts, units, scopes, levels, the command, bad
 * lines reported with their number and skipped (an amount too long to
 * hold refused, not cut into another), periods and matching, and the one
 * percent status, the journal and the command show. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "budget-conf.h"
#include "tap.h"

static struct budget_conf c;

static void parse(const char *text)
{
        memset(&c, 0, sizeof(c));
        ok(budget_conf_parse(text, strlen(text), &c) == 0, "parses %zu bytes", strlen(text));
}

int main(void)
{
        parse("# comment\n\n  daily $10 \nweekly 2.5 usd harness=pi levels=50,100,50\n"
              "monthly 2M tokens model=\"model a\" name=big\n"
              "daily 0.000000001usd project=/home/u/work/ name=tiny\n"
              "command notify-send \"$AGENTMETER_BUDGET\"  \n");
        is_int(c.n_rules, 4, "four rules");
        is_int(c.n_errors, 0, "no errors");
        is_int(c.rules[0].period, BUDGET_DAILY, "daily");
        is_int(c.rules[0].unit, BUDGET_USD, "$ is USD");
        is_int(c.rules[0].limit, 10000000000LL, "$10 in nano-USD");
        is_int(c.rules[0].n_levels, 2, "default levels");
        is_int(c.rules[0].levels[0] * 1000 + c.rules[0].levels[1], 80100, "80% and 100%");
        is_str(c.rules[0].name, "daily-3", "default name from the line");
        is_int(c.rules[1].limit, 2500000000LL, "2.5 usd");
        is_int(c.rules[1].scope, BUDGET_HARNESS, "harness scope");
        is_str(c.rules[1].match, "pi", "harness id");
        is_int(c.rules[1].n_levels, 2, "levels deduplicated");
        is_int(c.rules[1].levels[0], 50, "levels sorted");
        is_int(c.rules[2].unit, BUDGET_TOKENS, "tokens");
        is_int(c.rules[2].limit, 2000000, "2M tokens");
        is_str(c.rules[2].match, "model a", "quoted value keeps its blank");
        is_str(c.rules[2].name, "big", "name=");
        is_int(c.rules[3].limit, 1, "nine decimals of a dollar");
        is_str(c.rules[3].match, "/home/u/work", "trailing slash of a project dropped");
        is_str(c.command, "notify-send \"$AGENTMETER_BUDGET\"", "command kept verbatim, trimmed");

        parse("daily 10\ndaily $10 tokens\nhourly $1\ndaily $-1\ndaily $0\ndaily $1 color=red\n"
              "daily $1 harness=pi model=x\ndaily $1 levels=0\ndaily $1.0000000001\n"
              "daily 99999999999999999999 tokens\ndaily \"$1\ndaily $1 name=a\ndaily $2 name=a\n"
              "daily $1 levels=1,2,3,4,5,6,7,8,9\n");
        is_int(c.n_rules, 1, "only the one good line is kept");
        is_str(c.rules[0].name, "a", "... the first name=a");
        is_int(c.n_errors, 13, "every bad line is counted");
        is_str(c.errors[0], "line 1: the amount needs a unit: $10, 10 usd or 2M tokens", "no unit");
        is_str(c.errors[1], "line 2: the amount has two different units", "two units");
        ok(strncmp(c.errors[2], "line 3: a rule starts with daily", 32) == 0, "unknown period");
        ok(strstr(c.errors[5], "unknown option") != NULL, "unknown option: %s", c.errors[5]);

        /* an amount longer than the parser holds is refused, not cut: cut to
         * 63 bytes "000...0010000" was read as $1 (the cut dropped "0000") */
        char longline[512], zeros[128];
        memset(zeros, '0', 62);
        zeros[62] = 0;
        snprintf(longline, sizeof(longline), "daily $5\ndaily %s10000 usd name=long\n"
                 "daily $%s10000 name=long2\nweekly %s2M tokens name=long3\n", zeros, zeros, zeros);
        parse(longline);
        is_int(c.n_rules, 1, "long amounts: only the short rule is kept");
        is_int(c.rules[0].limit, 5000000000LL, "... $5");
        is_int(c.n_errors, 3, "... each long amount is an error");
        is_str(c.errors[0], "line 2: the amount is too long (at most 63 characters)", "... with its line");
        is_str(c.errors[1], "line 3: the amount is too long (at most 63 characters)", "... after a $ too");
        is_str(c.errors[2], "line 4: the amount is too long (at most 63 characters)", "... and for tokens");
        memset(zeros, '0', 58);
        zeros[58] = 0;
        snprintf(longline, sizeof(longline), "daily %s10000 usd\n", zeros);
        parse(longline);
        is_int(c.n_rules == 1 ? c.rules[0].limit : -1, 10000000000000LL, "63 characters still fit: $10000");

        /* the percent: tenths, floored (never rounded up past a level not crossed), capped */
        is_int(budget_percent_tenths(850000000, 1000000000), 850, "85.0%");
        is_int(budget_percent_tenths(999600000, 1000000000), 999, "99.96% is 99.9%, not 100.0%");
        is_int(budget_percent_tenths(1000000000, 1000000000), 1000, "100.0%");
        is_int(budget_percent_tenths(0, 1000000000), 0, "nothing spent");
        is_int(budget_percent_tenths(-5, 1000000000), 0, "a negative spend is 0");
        is_int(budget_percent_tenths(850000000, 1), (int64_t)BUDGET_PERCENT_MAX * 10, "capped");
        is_int(budget_percent_tenths(INT64_MAX, 1), (int64_t)BUDGET_PERCENT_MAX * 10, "no overflow");
        is_int(budget_percent_tenths(1, 3), 333, "one third: 33.3%");

        /* a bigger file than the error list still counts every error */
        char *big = malloc(20 * 8 + 1);
        big[0] = 0;
        for (int i = 0; i < 20; i++)
                strcat(big, "bad  x\n");
        parse(big);
        free(big);
        is_int(c.n_errors, 20, "twenty bad lines counted");
        ok(strncmp(c.errors[BUDGET_ERRORS_MAX - 1], "line 8:", 7) == 0, "first eight kept");

        struct budget_rule r = { .scope = BUDGET_PROJECT };
        strcpy(r.match, "/home/u/work");
        ok(budget_rule_matches(&r, "pi", "m", "/home/u/work"), "project itself");
        ok(budget_rule_matches(&r, "pi", "m", "/home/u/work/sub"), "below the project");
        ok(!budget_rule_matches(&r, "pi", "m", "/home/u/workshop"), "not a sibling prefix");
        ok(!budget_rule_matches(&r, "pi", "m", NULL), "no project");

        setenv("TZ", "Europe/Berlin", 1);
        tzset();
        int64_t from, until;
        char key[16];
        /* 2026-12-02 (a Wednesday) 10:00 UTC */
        int64_t ms = 1796205600000LL;
        budget_period_of(BUDGET_DAILY, ms, &from, &until, key, sizeof(key));
        is_str(key, "2026-12-02", "day label");
        is_int(from, 1796166000000LL, "the day starts at local midnight");
        is_int(until - from, 86400000, "a day long");
        budget_period_of(BUDGET_WEEKLY, ms, &from, &until, key, sizeof(key));
        is_str(key, "2026-W49", "ISO week label");
        is_int(from, 1796166000000LL - 2 * 86400000LL, "the week starts on Monday");
        budget_period_of(BUDGET_MONTHLY, ms, &from, &until, key, sizeof(key));
        is_str(key, "2026-12", "month label");
        is_int(until - from, 31 * 86400000LL, "December has 31 days");
        return tap_done();
}
