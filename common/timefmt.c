/* Time parsing and zone-aware calendar formatting for rows and reports. */
#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

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

/* v in exactly width decimal digits (v < 10^width, as the callers clamp). */
static char *put_digits(char *p, unsigned v, int width)
{
        for (int i = width - 1; i >= 0; i--) {
                p[i] = (char)('0' + v % 10);
                v /= 10;
        }
        return p + width;
}

void timefmt_format_utc(int64_t ms, char out[32])
{
        time_t t = (time_t)(ms >= 0 ? ms / 1000 : (ms - 999) / 1000);
        unsigned rem = (unsigned)(ms - (int64_t)t * 1000);
        struct tm tm = {0};
        char buf[96];

        if (!gmtime_r(&t, &tm))
                memset(&tm, 0, sizeof(tm)); /* out of range: 1900-00-00 rather than garbage */
        /* "%04u-%02u-%02uT%02u:%02u:%02u.%03uZ" without printf: a report
         * writes two per session */
        char *p = buf;
        p = put_digits(p, year4(&tm), 4);
        *p++ = '-';
        p = put_digits(p, (unsigned)tm.tm_mon + 1, 2);
        *p++ = '-';
        p = put_digits(p, (unsigned)tm.tm_mday, 2);
        *p++ = 'T';
        p = put_digits(p, (unsigned)tm.tm_hour, 2);
        *p++ = ':';
        p = put_digits(p, (unsigned)tm.tm_min, 2);
        *p++ = ':';
        p = put_digits(p, (unsigned)tm.tm_sec, 2);
        *p++ = '.';
        p = put_digits(p, rem % 1000, 3);
        *p++ = 'Z';
        *p = 0;
        put_fixed(out, 32, buf);
}

/* Switches the process zone to tz for one conversion, restoring it after. */
struct tz_guard {
        char *saved;
        int had;
        int active;
};

/* A fixed offset east of UTC: "+05:30", "-8", "UTC+02:00", "GMT-0330";
 * hours 0-14, minutes 0-59. true and the minutes, or false. */
static bool parse_offset(const char *tz, int *ret_minutes)
{
        int h = 0, m = 0, sign;
        size_t nh = 0;

        if (strncmp(tz, "UTC", 3) == 0 || strncmp(tz, "GMT", 3) == 0)
                tz += 3;
        if (*tz != '+' && *tz != '-')
                return false;
        sign = *tz++ == '-' ? -1 : 1;
        while (isdigit((unsigned char)tz[nh]))
                nh++;
        if (nh == 4 && tz[4] == 0) { /* HHMM */
                if (digits(tz, 2, &h) < 0 || digits(tz + 2, 2, &m) < 0)
                        return false;
        } else { /* H, HH, H:MM, HH:MM */
                if (nh == 0 || nh > 2 || digits(tz, nh, &h) < 0)
                        return false;
                tz += nh;
                if (*tz == ':' && (strlen(tz) != 3 || digits(tz + 1, 2, &m) < 0))
                        return false;
                if (*tz != ':' && *tz)
                        return false;
        }
        if (h > 14 || m > 59 || (h == 14 && m > 0))
                return false;
        *ret_minutes = sign * (h * 60 + m);
        return true;
}

static void tz_enter(struct tz_guard *g, const char *tz)
{
        const char *cur = getenv("TZ");
        char posix[32];
        int off;

        if (tz && *tz && parse_offset(tz, &off)) { /* POSIX counts west: "<+0530>-05:30" */
                int a = off < 0 ? -off : off;
                snprintf(posix, sizeof(posix), "<%c%02d%02d>%c%02d:%02d", off < 0 ? '-' : '+',
                         a / 60, a % 60, off < 0 ? '+' : '-', a / 60, a % 60);
                tz = posix;
        }
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

/* A zone name: components of [A-Za-z0-9_+-] joined by single '/', none
 * "." or ".." (none can be: '.' is not allowed), at most 255 bytes. */
static bool zone_name_ok(const char *tz)
{
        size_t n = strlen(tz), comp = 0;

        if (n == 0 || n > 255)
                return false;
        for (const char *p = tz; *p; p++) {
                if (*p == '/') {
                        if (comp == 0)
                                return false; /* leading, trailing or doubled '/' */
                        comp = 0;
                        continue;
                }
                if (!isalnum((unsigned char)*p) && *p != '_' && *p != '+' && *p != '-')
                        return false;
                comp++;
        }
        return comp > 0;
}

int timefmt_zone_valid(const char *tz)
{
        const char *base = getenv("TZDIR");
        char path[512], real[PATH_MAX], realbase[PATH_MAX];
        char magic[4];
        struct stat st;
        int minutes, fd;
        ssize_t n;

        if (!tz || !*tz)
                return 0;
        if (strcmp(tz, "UTC") == 0 || strcmp(tz, "Z") == 0 || parse_offset(tz, &minutes))
                return 0;
        if (tz[0] == ':')
                tz++;
        /* checked before anything is opened: no absolute paths, no "..",
         * no POSIX rule strings (Europe/Berlin9 is neither a name nor a rule) */
        if (!zone_name_ok(tz))
                return -EINVAL;
        if (!base || base[0] != '/')
                base = "/usr/share/zoneinfo";
        if ((size_t)snprintf(path, sizeof(path), "%s/%s", base, tz) >= sizeof(path))
                return -EINVAL;
        /* a regular file inside the zoneinfo tree (symlinks there may point
         * elsewhere in it); O_NONBLOCK so a FIFO planted there cannot block */
        if (!realpath(base, realbase) || !realpath(path, real) ||
            strncmp(real, realbase, strlen(realbase)) != 0 || real[strlen(realbase)] != '/')
                return -EINVAL;
        fd = open(real, O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);
        if (fd < 0)
                return -EINVAL;
        if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode)) {
                close(fd);
                return -EINVAL;
        }
        n = read(fd, magic, sizeof(magic));
        close(fd);
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

int64_t timefmt_now_ms(void)
{
        struct timespec ts;
        clock_gettime(CLOCK_REALTIME, &ts);
        return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

int64_t timefmt_mono_ms(void)
{
        struct timespec ts;
        clock_gettime(CLOCK_MONOTONIC, &ts);
        return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}
