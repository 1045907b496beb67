/* Number, money, size and time formatting for the client's tables. */
#include <json-c/json.h>
#include <math.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "fmt.h"
#include "jfield.h"
#include "timefmt.h"

const char *fmt_u64(uint64_t v, char *buf)
{
        char digits[32];
        int n = snprintf(digits, sizeof(digits), "%llu", (unsigned long long)v);
        char *p = buf;

        for (int i = 0; i < n; i++) {
                if (i > 0 && (n - i) % 3 == 0)
                        *p++ = ',';
                *p++ = digits[i];
        }
        *p = 0;
        return buf;
}

const char *fmt_i64(int64_t v, char *buf)
{
        if (v >= 0)
                return fmt_u64((uint64_t)v, buf);
        buf[0] = '-';
        fmt_u64(-(uint64_t)v, buf + 1);
        return buf;
}

const char *fmt_tokens(struct json_object *obj, const char *key, char *buf)
{
        int64_t v;

        if (!jint(obj, key, &v))
                return strcpy(buf, FMT_DASH);
        return fmt_i64(v, buf);
}

const char *fmt_usd(double usd, char *buf)
{
        /* Costs are micro-USD integers in the ledger: round to them. */
        double m = round(fabs(usd) * 1e6);
        char whole[32];

        if (m > 9.0e18)
                m = 9.0e18;
        uint64_t micro = (uint64_t)m;
        fmt_u64(micro / 1000000u, whole);
        snprintf(buf, FMT_MAX, "%s$%s.%06llu", usd < 0 && micro ? "-" : "", whole,
                 (unsigned long long)(micro % 1000000u));
        return buf;
}

const char *fmt_cost(struct json_object *obj, const char *key, char *buf)
{
        const char *src = jstr(obj, "cost_source");
        bool estimated = src && (strcmp(src, "computed") == 0 || strcmp(src, "mixed") == 0);
        bool partial = jint_or(obj, "unpriced_events", 0) > 0;
        char usd[FMT_MAX];
        double v;

        if (!jdouble(obj, key, &v))
                return strcpy(buf, FMT_DASH);
        fmt_usd(v, usd); /* at most 33 bytes: "-$9,223,372,036,854.775807" */
        snprintf(buf, FMT_MAX, "%s%.60s%s", estimated ? "~" : "", usd, partial ? "*" : "");
        return buf;
}

const char *fmt_bytes(uint64_t v, char *buf)
{
        static const char *const unit[] = { "KiB", "MiB", "GiB", "TiB", "PiB" };
        double d = (double)v;
        int u = -1;

        if (v < 1024) {
                snprintf(buf, FMT_MAX, "%llu B", (unsigned long long)v);
                return buf;
        }
        while (d >= 1024.0 && u < 4) {
                d /= 1024.0;
                u++;
        }
        snprintf(buf, FMT_MAX, "%.1f %s", d, unit[u]);
        return buf;
}

const char *fmt_duration(uint64_t s, char *buf)
{
        if (s < 60)
                snprintf(buf, FMT_MAX, "%llus", (unsigned long long)s);
        else if (s < 3600)
                snprintf(buf, FMT_MAX, "%llum %02llus", (unsigned long long)(s / 60),
                         (unsigned long long)(s % 60));
        else if (s < 86400)
                snprintf(buf, FMT_MAX, "%lluh %02llum", (unsigned long long)(s / 3600),
                         (unsigned long long)(s % 3600 / 60));
        else
                snprintf(buf, FMT_MAX, "%llud %02lluh", (unsigned long long)(s / 86400),
                         (unsigned long long)(s % 86400 / 3600));
        return buf;
}

const char *fmt_time(struct json_object *obj, const char *key, char *buf)
{
        const char *s = jstr(obj, key);
        int64_t ms;
        bool have = s ? timefmt_parse_rfc3339(s, strlen(s), &ms) == 0 : jint(obj, key, &ms);

        if (have) {
                time_t t = (time_t)(ms / 1000);
                struct tm tm;
                if (localtime_r(&t, &tm) && strftime(buf, FMT_MAX, "%Y-%m-%d %H:%M:%S", &tm) > 0)
                        return buf;
        }
        if (s) {
                snprintf(buf, FMT_MAX, "%s", s);
                return buf;
        }
        return strcpy(buf, FMT_DASH);
}
