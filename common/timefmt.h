/* Time formats: RFC 3339 (any number of fractional digits, as Go trims
 * them; Z or +hh:mm), epoch ms, and calendar days/months in a named zone. */
#pragma once

#include <stddef.h>
#include <stdint.h>

/* "2026-05-25T10:11:39.37008+02:00" -> UTC epoch ms. -EINVAL when malformed. */
int timefmt_parse_rfc3339(const char *s, size_t len, int64_t *ret_ms);

/* Formats UTC ms as "2026-05-25T08:11:39.370Z". */
void timefmt_format_utc(int64_t ms, char out[32]);

/* Local calendar in zone tz: NULL or "" = the process's local zone; "UTC"
 * or "Z"; a fixed offset east of UTC ("+05:30", "-8", "UTC+02:00"; at most
 * 14 hours); or a tz database name ("Europe/Berlin", "Etc/GMT-2",
 * "EST5EDT"). Calls are not thread-safe: they switch TZ and restore it.
 * timefmt_zone_valid checks a name before anything is opened (components
 * of [A-Za-z0-9_+-] joined by '/', so no absolute path and no ".."), then
 * that it is a regular TZif file inside $TZDIR or /usr/share/zoneinfo
 * (opened O_NONBLOCK, never a FIFO or device): 0 or -EINVAL. */
int timefmt_zone_valid(const char *tz);
/* The process zone set to tz for a run of conversions in tz (each then
 * skips its own switch); NULL or "" changes nothing. Single-threaded use. */
struct timefmt_zone {
        char *saved;
        int had, active;
};
void timefmt_zone_enter(struct timefmt_zone *z, const char *tz);
void timefmt_zone_leave(struct timefmt_zone *z);

void timefmt_day(int64_t ms, const char *tz, char out[11]);   /* YYYY-MM-DD */
void timefmt_month(int64_t ms, const char *tz, char out[8]);  /* YYYY-MM */
/* Midnight at the start of "YYYY-MM-DD" in tz, as UTC ms. -EINVAL if malformed. */
int timefmt_parse_day(const char *ymd, const char *tz, int64_t *ret_ms);

/* The clocks, in milliseconds: wall (UTC epoch, for times that are stored or
 * shown) and monotonic (for intervals and deadlines). */
int64_t timefmt_now_ms(void);
int64_t timefmt_mono_ms(void);
