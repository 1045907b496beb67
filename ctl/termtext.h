/* Text from harness files and configs made safe for a terminal: control
 * characters (C0, DEL, C1), invalid UTF-8, the bidirectional overrides and
 * isolates and the line/paragraph separators are shown as the \xNN of each
 * of their bytes, so a crafted model, project or file name can never move
 * the cursor, retitle the terminal, clear it or reorder what is shown.
 * Everything else (UTF-8, backslashes) is kept. JSON output needs none of
 * this (json-c escapes it). */
#pragma once

#include <stddef.h>
#include <stdio.h>

/* Writes the escaped form of s (NULL reads as "") into buf (truncated on a
 * character boundary, an escape never cut) and returns buf. */
const char *termtext(const char *s, char *buf, size_t cap);
/* Bytes of the escaped form of s, without the terminating NUL. */
size_t termtext_len(const char *s);
/* A malloc'd escaped copy of s (NULL reads as ""); NULL on ENOMEM. */
char *termtext_dup(const char *s);
/* Writes s escaped to f; EOF on a write error, else 0. */
int termtext_fputs(const char *s, FILE *f);
/* An escaped copy in one of 8 rotating buffers of 1024 bytes, for a few
 * arguments of one printf; NULL reads as NULL. */
const char *termtext_tmp(const char *s);
