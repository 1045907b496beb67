/* A validating JSON scanner that hands the caller only the members it asks
 * for and skips the rest (content, images) without building it: pi lines. */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h> /* memcmp, for JSCAN_KEY_IS */

/* Nesting beyond this is refused as malformed (it bounds the recursion). */
#define JSCAN_MAX_DEPTH 512

/* The longest field jscan_span_set fills, NUL included. */
#define JSCAN_SET_MAX 512

/* The text still to scan: [p, end). Every function below leaves p after what
 * it consumed on success; on failure p is somewhere inside the bad value and
 * the caller gives the value up (the scan state is not worth resuming). */
struct jscan {
        const char *p, *end;
};

/* A string's raw bytes between its quotes, escapes not decoded. p is NULL
 * when the value was absent or not a string (see jscan_read_str). */
struct jscan_span {
        const char *p;
        size_t n;
};

/* A number. present is false when it was absent, not a number, or a
 * non-integer written with 64 or more characters. is_int: no fraction or
 * exponent and at most 18 characters (then i is exact and d == i); else
 * only d (strtod) holds it. */
struct jscan_num {
        bool present, is_int;
        int64_t i;
        double d;
};

/* A time: epoch milliseconds, or present false. */
struct jscan_time {
        bool present;
        int64_t ms;
};

/* Called by jscan_object for each member, with s at the value and depth the
 * object's; it must consume the value (jscan_skip when it does not want it). */
typedef bool (*jscan_key_fn)(struct jscan *s, const struct jscan_span *key, void *u, int depth);
/* Called by jscan_array for each element, s at it; it must consume it. */
typedef bool (*jscan_elem_fn)(struct jscan *s, void *u, int depth);

/* Whether the next byte is c (false at the end). */
static inline bool jscan_at(const struct jscan *s, char c)
{
        return s->p < s->end && *s->p == c;
}

/* Skips JSON white space (space, tab, CR, LF). */
void jscan_ws(struct jscan *s);

/* At '"': to after the closing quote (one not escaped by an odd run of
 * backslashes). The contents are delimited, not validated: escapes and
 * control bytes are only looked at by jscan_span_decode. false: no closing
 * quote before end. ret_span may be NULL. */
bool jscan_string(struct jscan *s, struct jscan_span *ret_span);

/* A number by the strict grammar (-?(0|[1-9][0-9]*)(.[0-9]+)?([eE][+-]?[0-9]+)?:
 * no '+', no leading zeros, no bare '.' or 'e'). false when there is none at
 * s->p. ret_num may be NULL. */
bool jscan_number(struct jscan *s, struct jscan_num *ret_num);

/* true, false or null. */
bool jscan_literal(struct jscan *s);

/* At '{': calls fn for each member (fn NULL: skips them). depth is the
 * object's nesting level (0 for a top-level value); more than
 * JSCAN_MAX_DEPTH fails. Duplicate keys are all passed to fn, in order. */
bool jscan_object(struct jscan *s, jscan_key_fn fn, void *u, int depth);

/* At '[': calls fn for each element (fn NULL: skips them); depth as above. */
bool jscan_array(struct jscan *s, jscan_elem_fn fn, void *u, int depth);

/* Any value, validated and thrown away; depth is that of its container
 * (nested objects and arrays count one more). */
bool jscan_skip(struct jscan *s, int depth);

/* A member the caller wants as a string / number / time: any other value is
 * validated, skipped and reported absent (ret_span->p NULL, ret_num->present
 * false, ret_time->present false). A time is epoch ms as a number (rounded
 * when not an integer) or an RFC 3339 string; an unparsable one is absent.
 * false only when the value is not valid JSON. */
bool jscan_read_str(struct jscan *s, struct jscan_span *ret_span, int depth);
bool jscan_read_num(struct jscan *s, struct jscan_num *ret_num, int depth);
bool jscan_read_time(struct jscan *s, struct jscan_time *ret_time, int depth);

/* An integer-valued number: ints as they are, finite doubles within
 * +-9.2e18 rounded to the nearest. false for absent numbers. */
bool jscan_num_i64(const struct jscan_num *n, int64_t *ret_value);

/* Decodes a span into buf: at most cap bytes, no NUL added; returns the
 * length (0 for an absent span). \b \f \n \r \t and \uXXXX are decoded (a
 * surrogate pair to one 4-byte UTF-8 sequence; a lone surrogate is encoded
 * as it is), any other escaped byte stands for itself; a \u without four hex
 * digits decodes to nothing (the bytes after it are kept). An escaped
 * character whose UTF-8 does not fit whole is left out (decoding goes on,
 * so a later shorter one may still fit): escapes never leave a partial
 * sequence. Raw bytes are copied as they are, so a cut at cap may split a
 * raw UTF-8 sequence: use jscan_span_set for a field. */
size_t jscan_span_decode(const struct jscan_span *sp, char *buf, size_t cap);

/* Decodes a span into a fixed NUL-terminated field: the longest prefix of
 * the decoded string that has at most min(cap, JSCAN_SET_MAX) - 1 bytes,
 * ends on a UTF-8 boundary and holds no NUL (a \u0000 ends it); "" for an
 * absent span. */
void jscan_span_set(char *dst, size_t cap, const struct jscan_span *sp);

/* Whether the span decodes to exactly lit (lit of at most 64 bytes when the
 * span holds escapes). false for an absent span. */
bool jscan_span_eq(const struct jscan_span *sp, const char *lit);

/* Whether a raw key span is exactly the literal (no escapes decoded: keys a
 * parser looks for are plain ASCII, and writers do not escape those). */
#define JSCAN_KEY_IS(k, lit) ((k)->n == sizeof(lit) - 1 && memcmp((k)->p, lit, sizeof(lit) - 1) == 0)
