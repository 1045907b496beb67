/* How the client writes numbers for people: thousands separators, dollars
 * with the cost marks, byte sizes, durations, and the dash for "unknown". */
#pragma once

#include <stdint.h>

struct json_object;

#define FMT_MAX 64
#define FMT_DASH "\u2014" /* unknown: never the same as 0 */

const char *fmt_u64(uint64_t v, char *buf);            /* 1,234,567 */
const char *fmt_i64(int64_t v, char *buf);
/* A token count member of obj: thousands, or the dash when null/absent. */
const char *fmt_tokens(struct json_object *obj, const char *key, char *buf);
/* Dollars with six decimals and thousands: "$1,234.567890". */
const char *fmt_usd(double usd, char *buf);
/* The cost member `key` of obj with its marks: the dash when null; a "~"
 * prefix when obj's cost_source is "computed" or "mixed"; a "*" suffix when
 * obj's unpriced_events > 0. */
const char *fmt_cost(struct json_object *obj, const char *key, char *buf);
/* 512 B, 1.5 KiB, 12.3 MiB, ... */
const char *fmt_bytes(uint64_t v, char *buf);
/* 45s, 3m 12s, 5h 02m, 2d 04h */
const char *fmt_duration(uint64_t seconds, char *buf);
/* A time member (RFC 3339 string or epoch ms) as local "YYYY-MM-DD HH:MM:SS";
 * an unparsable string as written; the dash when absent. */
const char *fmt_time(struct json_object *obj, const char *key, char *buf);

/* One-line legend for the cost marks used by fmt_cost. */
#define FMT_COST_LEGEND                                                                     \
        "cost: $ as reported by the harness, ~ computed from agentmeterd's price table, "   \
        "* some events unpriced (not in the sum), " FMT_DASH " unknown (not zero)"
