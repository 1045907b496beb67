/* Text from users' files (model, tool, project and file names) made safe for
 * a terminal before a table, CSV or status line prints it: control
 * characters and anything that could steer the terminal become visible
 * escapes. JSON output needs none of this (json-c escapes it). */
#pragma once

#include <stddef.h>
#include <stdio.h>

/* The escapes: C0 controls (0x00-0x1f), DEL (0x7f) and bytes that are not
 * valid UTF-8 become \xNN; the C1 controls U+0080-U+009F and the
 * bidirectional overrides and isolates (U+202A-U+202E, U+2066-U+2069) and
 * line/paragraph separators (U+2028, U+2029) become \u{NNNN}. Everything
 * else, backslashes included, is kept as it is. */

/* Bytes needed for the escaped s, without the terminating NUL. */
size_t escape_len(const char *s);
/* A malloc'd escaped copy of s (NULL reads as ""); NULL on ENOMEM. */
char *escape_dup(const char *s);
/* Writes s escaped to f; returns EOF on a write error, else 0. */
int escape_fputs(const char *s, FILE *f);
/* An escaped copy in one of 8 rotating buffers of 1024 bytes (cut at a
 * character boundary when longer), for a few arguments of one printf; NULL
 * reads as NULL. Not for strings kept beyond that. */
const char *escape_tmp(const char *s);
