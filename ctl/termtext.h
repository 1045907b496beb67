/* Text from harness files and configs made safe for a terminal: control
 * characters (C0, DEL, C1) and invalid UTF-8 shown as \xNN escapes, so a
 * crafted model or project name can never move the cursor or retitle it. */
#pragma once

#include <stddef.h>

/* Writes the escaped form of s (NULL reads as "") into buf (truncated on a
 * character boundary) and returns buf. */
const char *termtext(const char *s, char *buf, size_t cap);
