/* Unit tests for common/timefmt.c: RFC 3339 as harnesses write it (Go trims
 * fractions), offsets, malformed input, and calendar days in named zones. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "tap.h"
#include "timefmt.h"

#define BASE 1779696699000LL /* 2026-05-25T08:11:39Z */

static int64_t parse(const char *s, int *ret)
{
        int64_t ms = -1;
        *ret = timefmt_parse_rfc3339(s, strlen(s), &ms);
        return ms;
}

static void test_rfc3339(void)
{
        static const struct {
                const char *s;
                int64_t ms;
        } good[] = {
                {"2026-05-25T08:11:39Z", BASE},
                {"2026-05-25T08:11:39.3Z", BASE + 300},
                {"2026-05-25T08:11:39.37Z", BASE + 370},
                {"2026-05-25T08:11:39.370Z", BASE + 370},
                {"2026-05-25T08:11:39.3700Z", BASE + 370},
                {"2026-05-25T08:11:39.37008Z", BASE + 370},
                {"2026-05-25T08:11:39.999999Z", BASE + 999},
                {"2026-05-25T08:11:39.1234567Z", BASE + 123},
                {"2026-05-25T08:11:39.12345678Z", BASE + 123},
                {"2026-05-25T08:11:39.123456789Z", BASE + 123},
                {"2026-05-25T10:11:39.37008+02:00", BASE + 370},
                {"2026-05-25T02:41:39-05:30", BASE},
                {"2026-05-25T08:11:39+00:00", BASE},
                {"2026-05-25t08:11:39z", BASE},
                {"2026-05-25 08:11:39Z", BASE},
                {"2026-05-25T08:11:60Z", BASE + 20000}, /* leap second clamps to :59 */
                {"1970-01-01T00:00:00Z", 0},
                {"1969-12-31T23:59:59.500Z", -500},
                {"2024-02-29T00:00:00Z", 1709164800000LL},
        };
        static const char *const bad[] = {
                "",
                "2026-05-25",
                "2026-05-25T08:11:39",        /* no zone */
                "2026-05-25T08:11:39.Z",      /* empty fraction */
                "2026-05-25T08:11:39.1234567890Z", /* 10 digits */
                "2026-05-25T08:11:39+0200",   /* offset without colon */
                "2026-05-25T08:11:39+02",
                "2026-05-25T08:11:39Zjunk",
                "2026-05-25T08:11:39 Z",
                "2026-13-25T08:11:39Z",
                "2026-00-25T08:11:39Z",
                "2026-02-30T08:11:39Z",
                "2025-02-29T08:11:39Z", /* not a leap year */
                "2026-04-31T08:11:39Z",
                "2026-05-25T24:00:00Z",
                "2026-05-25T08:60:00Z",
                "2026-05-25T08:11:61Z",
                "2026-05-25X08:11:39Z",
                "2026/05/25T08:11:39Z",
                "2026-05-25T08:11:39+24:00",
                "2026-05-2aT08:11:39Z",
                "+2026-05-25T08:11:39Z",
        };
        int r;

        for (size_t i = 0; i < sizeof(good) / sizeof(good[0]); i++) {
                int64_t ms = parse(good[i].s, &r);
                ok(r == 0 && ms == good[i].ms, "parse %s -> %lld (got %lld)", good[i].s,
                   (long long)good[i].ms, (long long)ms);
        }
        for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
                int64_t ms = parse(bad[i], &r);
                ok(r == -EINVAL && ms == -1, "reject '%s'", bad[i]);
        }
        /* the length bounds the parse: a valid prefix of a longer buffer */
        int64_t ms = -1;
        r = timefmt_parse_rfc3339("2026-05-25T08:11:39Zxyz", 20, &ms);
        ok(r == 0 && ms == BASE, "len bounds the input");
        r = timefmt_parse_rfc3339("2026-05-25T08:11:39Z", 19, &ms);
        is_int(r, -EINVAL, "cut before the zone: rejected");
}

static void test_format(void)
{
        char out[32];
        timefmt_format_utc(BASE + 370, out);
        is_str(out, "2026-05-25T08:11:39.370Z", "format UTC with ms");
        timefmt_format_utc(0, out);
        is_str(out, "1970-01-01T00:00:00.000Z", "format epoch");
        timefmt_format_utc(-1, out);
        is_str(out, "1969-12-31T23:59:59.999Z", "format -1 ms floors");
        timefmt_format_utc(-1000, out);
        is_str(out, "1969-12-31T23:59:59.000Z", "format -1000 ms");
        int64_t back = 0;
        timefmt_format_utc(BASE + 5, out);
        ok(timefmt_parse_rfc3339(out, strlen(out), &back) == 0 && back == BASE + 5,
           "format then parse round trips");
}

static void test_zones(void)
{
        char day[11], month[8];
        int64_t ms = 0, late = 1773185400000LL; /* 2026-03-10T23:30:00Z */

        is_int(timefmt_zone_valid(NULL), 0, "NULL zone = local, valid");
        is_int(timefmt_zone_valid(""), 0, "empty zone = local, valid");
        is_int(timefmt_zone_valid("UTC"), 0, "UTC valid");
        is_int(timefmt_zone_valid("Europe/Berlin"), 0, "Europe/Berlin valid");
        is_int(timefmt_zone_valid("Mars/Base"), -EINVAL, "Mars/Base invalid");
        is_int(timefmt_zone_valid("Europe"), -EINVAL, "a zoneinfo directory is not a zone");
        is_int(timefmt_zone_valid("../../etc/passwd"), -EINVAL, "path escape rejected");
        is_int(timefmt_zone_valid("EST5EDT"), 0, "POSIX TZ string accepted");

        timefmt_day(late, "UTC", day);
        is_str(day, "2026-03-10", "day in UTC");
        timefmt_day(late, "Europe/Berlin", day);
        is_str(day, "2026-03-11", "same instant, Berlin: next day");
        timefmt_day(late, "America/New_York", day);
        is_str(day, "2026-03-10", "New York: same day");
        timefmt_day(1773187200000LL, "Asia/Kolkata", day); /* 00:00Z = 05:30 IST */
        is_str(day, "2026-03-11", "Kolkata (+05:30)");
        timefmt_month(1772323200000LL - 1, "UTC", month); /* 2026-02-28T23:59:59.999Z */
        is_str(month, "2026-02", "month in UTC");
        timefmt_month(1772323200000LL - 1, "Europe/Berlin", month);
        is_str(month, "2026-03", "month in Berlin");

        ok(timefmt_parse_day("2026-03-11", "UTC", &ms) == 0 && ms == 1773187200000LL,
           "parse_day UTC midnight");
        ok(timefmt_parse_day("2026-03-11", "Europe/Berlin", &ms) == 0 &&
           ms == 1773187200000LL - 3600000, "parse_day Berlin midnight is 23:00Z");
        ok(timefmt_parse_day("2026-03-29", "Europe/Berlin", &ms) == 0 &&
           ms == 1774742400000LL - 3600000, "parse_day on the DST day (still +01 at midnight)");
        ok(timefmt_parse_day("2026-03-30", "Europe/Berlin", &ms) == 0 &&
           ms == 1774828800000LL - 7200000, "parse_day after DST (+02)");
        ok(timefmt_parse_day("2026-03-11", "Asia/Kolkata", &ms) == 0 &&
           ms == 1773187200000LL - 19800000, "parse_day Kolkata midnight");
        is_int(timefmt_parse_day("2026-02-30", "UTC", &ms), -EINVAL, "parse_day rejects Feb 30");
        is_int(timefmt_parse_day("2026-13-01", "UTC", &ms), -EINVAL, "parse_day rejects month 13");
        is_int(timefmt_parse_day("2026-1-01", "UTC", &ms), -EINVAL, "parse_day needs YYYY-MM-DD");
        is_int(timefmt_parse_day("2026-01-01x", "UTC", &ms), -EINVAL, "parse_day: trailing junk");
        is_int(timefmt_parse_day(NULL, "UTC", &ms), -EINVAL, "parse_day: NULL");

        /* the process zone is restored after a zone switch */
        setenv("TZ", "America/New_York", 1);
        timefmt_day(late, "Asia/Tokyo", day);
        is_str(getenv("TZ"), "America/New_York", "TZ restored after a switch");
        timefmt_day(late, NULL, day);
        is_str(day, "2026-03-10", "NULL zone uses the process zone (New York)");
        unsetenv("TZ");
        timefmt_day(late, "UTC", day);
        ok(getenv("TZ") == NULL, "unset TZ stays unset");
}

/* Zone names are checked before anything is opened; what is opened is a
 * regular TZif file inside the zoneinfo tree; offsets need no file. */
static void test_zone_checks(void)
{
        static const char *const bad[] = {
                "Europe/Berlin9", "../../etc/passwd1", "../../etc/passwd", "/etc/passwd",
                "/usr/share/zoneinfo/Europe/Berlin", "Europe//Berlin", "Europe/", "/Europe",
                "Europe/./Berlin", "Europe/Ber lin", "Europe/Berlin\n", "<+02>-2", "EST5EDT,M3.2.0",
                "+15", "+05:60", "+14:30", "UTC+", "+5:3", "+123",
        };
        char day[11], dir[300], path[400];
        int64_t midnight_z = 1773187200000LL; /* 2026-03-11T00:00:00Z */

        for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
                is_int(timefmt_zone_valid(bad[i]), -EINVAL, bad[i]);
        is_int(timefmt_zone_valid(":Europe/Berlin"), 0, ":Europe/Berlin (POSIX's file prefix)");
        is_int(timefmt_zone_valid("Etc/GMT-2"), 0, "Etc/GMT-2");
        is_int(timefmt_zone_valid("Z"), 0, "Z");
        static const char *const offsets[] = {"+05:30", "-8", "UTC+02:00", "GMT-0330", "+14", "-00:00"};
        for (size_t i = 0; i < sizeof(offsets) / sizeof(offsets[0]); i++)
                is_int(timefmt_zone_valid(offsets[i]), 0, offsets[i]);
        timefmt_day(midnight_z - 1, "+05:30", day);
        is_str(day, "2026-03-11", "+05:30: 23:59:59Z is already the next day");
        timefmt_day(midnight_z + 3600000, "-08:00", day);
        is_str(day, "2026-03-10", "-08:00: 01:00Z is still the day before");
        timefmt_day(midnight_z + 4 * 3600000 - 1, "UTC-4", day);
        is_str(day, "2026-03-10", "UTC-4 (east-positive, unlike POSIX)");
        int64_t ms = 0;
        ok(timefmt_parse_day("2026-03-11", "+02:00", &ms) == 0 && ms == midnight_z - 7200000,
           "parse_day with an offset");

        /* a TZDIR with a FIFO, a directory, a symlink out and a real file */
        snprintf(dir, sizeof(dir), "%s", tap_tmpdir());
        setenv("TZDIR", dir, 1);
        snprintf(path, sizeof(path), "%s/Fifo", dir);
        ok(mkfifo(path, 0600) == 0, "a FIFO in TZDIR");
        alarm(10); /* a blocking open would hang here: fail instead */
        is_int(timefmt_zone_valid("Fifo"), -EINVAL, "a FIFO is refused, without blocking");
        alarm(0);
        snprintf(path, sizeof(path), "%s/Out", dir);
        ok(symlink("/usr/share/zoneinfo/Europe/Berlin", path) == 0, "a symlink out of TZDIR");
        is_int(timefmt_zone_valid("Out"), -EINVAL, "a symlink out of the zoneinfo tree is refused");
        snprintf(path, sizeof(path), "%s/Dir", dir);
        mkdir(path, 0700);
        is_int(timefmt_zone_valid("Dir"), -EINVAL, "a directory is refused");
        snprintf(path, sizeof(path), "%s/NotTZ", dir);
        FILE *f = fopen(path, "w");
        fputs("hello", f);
        fclose(f);
        is_int(timefmt_zone_valid("NotTZ"), -EINVAL, "a regular file that is not TZif is refused");
        snprintf(path, sizeof(path), "%s/Here", dir);
        ok(symlink("NotTZ", path) == 0 && timefmt_zone_valid("Here") == -EINVAL,
           "a symlink inside to a non-TZif file is refused");
        unsetenv("TZDIR");
}

int main(void)
{
        test_rfc3339();
        test_format();
        test_zones();
        test_zone_checks();
        return tap_done();
}
