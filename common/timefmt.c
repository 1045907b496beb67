/* Time parsing and zone-aware calendar formatting for rows and reports. */
#include <ctype.h>
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "timefmt.h"

static int digits(const char *s, size_t n, int *ret)
{
        int v = 0;
        for (size_t i = 0; i < n; i++) {
                if (!isdigit((unsigned char)s[i]))
                        return -EINVAL;
                v = v * 10 + (s[i] - '0');
        }
        *ret = v;
        return 0;
}

static int64_t days_from_civil(int64_t y, unsigned m, unsigned d)
{
        /* Howard Hinnant's algorithm: days since 1970-01-01 (proleptic Gregorian). */
        y -= m <= 2;
        int64_t era = (y >= 0 ? y : y - 399) / 400;
        unsigned yoe = (unsigned)(y - era * 400);
        unsigned doy = (153 * (m + (m > 2 ? -3 : 9)) + 2) / 5 + d - 1;
        unsigned doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
        return era * 146097 + (int64_t)doe - 719468;
}

static int days_in_month(int y, int m)
{
        static const int dim[12] = {31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
        bool leap = (y % 4 == 0 && y % 100 != 0) || y % 400 == 0;
        return m == 2 && leap ? 29 : dim[m - 1];
}

int timefmt_parse_rfc3339(const char *s, size_t len, int64_t *ret_ms)
{
        int y, mo, d, h, mi, sec;
        size_t i;
        int64_t frac_ms = 0, offset_s = 0;

        if (len < 19 || s[4] != '-' || s[7] != '-' || (s[10] != 'T' && s[10] != 't' && s[10] != ' ') ||
            s[13] != ':' || s[16] != ':')
                return -EINVAL;
        if (digits(s, 4, &y) < 0 || digits(s + 5, 2, &mo) < 0 || digits(s + 8, 2, &d) < 0 ||
            digits(s + 11, 2, &h) < 0 || digits(s + 14, 2, &mi) < 0 || digits(s + 17, 2, &sec) < 0)
                return -EINVAL;
        if (mo < 1 || mo > 12 || d < 1 || d > days_in_month(y, mo) || h > 23 || mi > 59 ||
            sec > 60)
                return -EINVAL;
        i = 19;
        if (i < len && s[i] == '.') {
                size_t n = 0;
                int scale = 100;
                for (i++; i < len && isdigit((unsigned char)s[i]); i++, n++) {
                        if (n < 3) {
                                frac_ms += (s[i] - '0') * scale;
                                scale /= 10;
                        }
                }
                if (n == 0 || n > 9)
                        return -EINVAL;
        }
        if (i >= len)
                return -EINVAL;
        if (s[i] == 'Z' || s[i] == 'z') {
                i++;
        } else if (s[i] == '+' || s[i] == '-') {
                int oh, om;
                if (len - i < 6 || s[i + 3] != ':' || digits(s + i + 1, 2, &oh) < 0 ||
                    digits(s + i + 4, 2, &om) < 0 || oh > 23 || om > 59)
                        return -EINVAL;
                offset_s = (oh * 3600 + om * 60) * (s[i] == '+' ? 1 : -1);
                i += 6;
        } else {
                return -EINVAL;
        }
        if (i != len)
                return -EINVAL;
        int64_t days = days_from_civil(y, (unsigned)mo, (unsigned)d);
        int64_t secs = days * 86400 + h * 3600 + mi * 60 + (sec == 60 ? 59 : sec) - offset_s;
        *ret_ms = secs * 1000 + frac_ms;
        return 0;
}

/* Years outside 0000..9999 do not fit the fixed-width formats: clamp. */
static unsigned year4(const struct tm *tm)
{
        long y = (long)tm->tm_year + 1900;
        return y < 0 ? 0u : y > 9999 ? 9999u : (unsigned)y;
}

/* Copies a formatted value into a fixed output (sized for the clamped form). */
static void put_fixed(char *out, size_t cap, const char *s)
{
        size_t n = strnlen(s, cap - 1);
        memcpy(out, s, n);
        out[n] = 0;
}

void timefmt_format_utc(int64_t ms, char out[32])
{
        time_t t = (time_t)(ms >= 0 ? ms / 1000 : (ms - 999) / 1000);
        unsigned rem = (unsigned)(ms - (int64_t)t * 1000);
        struct tm tm = {0};
        char buf[96];

        if (!gmtime_r(&t, &tm))
                memset(&tm, 0, sizeof(tm)); /* out of range: 1900-00-00 rather than garbage */
        snprintf(buf, sizeof(buf), "%04u-%02u-%02uT%02u:%02u:%02u.%03uZ", year4(&tm),
                 (unsigned)tm.tm_mon + 1, (unsigned)tm.tm_mday, (unsigned)tm.tm_hour,
                 (unsigned)tm.tm_min, (unsigned)tm.tm_sec, rem % 1000);
        put_fixed(out, 32, buf);
}

/* Switches the process zone to tz for one conversion, restoring it after. */
struct tz_guard {
        char *saved;
        int had;
        int active;
};

static void tz_enter(struct tz_guard *g, const char *tz)
{
        const char *cur = getenv("TZ");

        /* already there (inside timefmt_zone_enter): switching back and
         * forth would make glibc read a zone file twice per conversion */
        g->active = tz && *tz && !(cur && strcmp(cur, tz) == 0);
        if (!g->active)
                return;
        g->had = cur != NULL;
        g->saved = cur ? strdup(cur) : NULL;
        setenv("TZ", tz, 1);
        tzset();
}

static void tz_leave(struct tz_guard *g)
{
        if (!g->active)
                return;
        if (g->had && g->saved)
                setenv("TZ", g->saved, 1);
        else
                unsetenv("TZ");
        free(g->saved);
        tzset();
}

void timefmt_zone_enter(struct timefmt_zone *z, const char *tz)
{
        struct tz_guard g;
        tz_enter(&g, tz);
        z->saved = g.saved;
        z->had = g.had;
        z->active = g.active;
}

void timefmt_zone_leave(struct timefmt_zone *z)
{
        struct tz_guard g = {.saved = z->saved, .had = z->had, .active = z->active};
        tz_leave(&g);
        z->active = 0;
}

static void local_tm(int64_t ms, const char *tz, struct tm *tm)
{
        struct tz_guard g;
        time_t t = (time_t)(ms >= 0 ? ms / 1000 : (ms - 999) / 1000);
        tz_enter(&g, tz);
        if (!localtime_r(&t, tm))
                memset(tm, 0, sizeof(*tm));
        tz_leave(&g);
}

int timefmt_zone_valid(const char *tz)
{
        if (!tz || !*tz)
                return 0;
        if (strcmp(tz, "UTC") == 0 || strcmp(tz, "Z") == 0)
                return 0;
        /* A zone name must exist in the zoneinfo database; POSIX TZ strings
         * with an offset ("EST5EDT", "<+02>-2") are accepted as written. */
        if (tz[0] == ':' )
                tz++;
        if (strpbrk(tz, "0123456789") != NULL && tz[0] != '/')
                return 0;
        char path[512];
        const char *base = getenv("TZDIR");
        snprintf(path, sizeof(path), "%s/%s", base && *base ? base : "/usr/share/zoneinfo", tz);
        if (tz[0] == '/')
                snprintf(path, sizeof(path), "%s", tz);
        if (strstr(tz, "..") != NULL)
                return -EINVAL;
        FILE *f = fopen(path, "re");
        if (!f)
                return -EINVAL;
        char magic[4] = {0};
        size_t n = fread(magic, 1, 4, f);
        fclose(f);
        return n == 4 && memcmp(magic, "TZif", 4) == 0 ? 0 : -EINVAL;
}

void timefmt_day(int64_t ms, const char *tz, char out[11])
{
        struct tm tm;
        char buf[64];
        local_tm(ms, tz, &tm);
        snprintf(buf, sizeof(buf), "%04u-%02u-%02u", year4(&tm), (unsigned)tm.tm_mon + 1,
                 (unsigned)tm.tm_mday);
        put_fixed(out, 11, buf);
}

void timefmt_month(int64_t ms, const char *tz, char out[8])
{
        struct tm tm;
        char buf[64];
        local_tm(ms, tz, &tm);
        snprintf(buf, sizeof(buf), "%04u-%02u", year4(&tm), (unsigned)tm.tm_mon + 1);
        put_fixed(out, 8, buf);
}

int timefmt_parse_day(const char *ymd, const char *tz, int64_t *ret_ms)
{
        int y, m, d;
        struct tm tm = {0};
        struct tz_guard g;
        time_t t;

        if (!ymd || strlen(ymd) != 10 || ymd[4] != '-' || ymd[7] != '-' ||
            digits(ymd, 4, &y) < 0 || digits(ymd + 5, 2, &m) < 0 || digits(ymd + 8, 2, &d) < 0 ||
            m < 1 || m > 12 || d < 1 || d > days_in_month(y, m))
                return -EINVAL;
        tm.tm_year = y - 1900;
        tm.tm_mon = m - 1;
        tm.tm_mday = d;
        tm.tm_isdst = -1;
        tz_enter(&g, tz);
        t = mktime(&tm);
        tz_leave(&g);
        if (t == (time_t)-1)
                return -EINVAL;
        *ret_ms = (int64_t)t * 1000;
        return 0;
}
