/* Lines as harnesses write them: complete-line splitting limits, and the JSON
 * objects on one line (a torn-then-resumed pi file glues two objects onto
 * one physical line, and both must count). */
#pragma once

#include <stdbool.h>
#include <stddef.h>

struct json_object;

/* Default longest line we hold in memory; a longer line is skipped up to its
 * newline and counted (never stops the file). */
#define LINES_MAX_DEFAULT (16u * 1024u * 1024u)

/* Calls cb for each complete top-level JSON value on the line, in order
 * (whitespace between and around values is allowed). cb returns 0 to go
 * on, non-zero to stop (returned as is).
 * Returns 0 when the whole line was consumed as JSON values, 1
 * (LINES_MALFORMED) when some of it was not valid JSON (cb has been called
 * for the values before the bad part), -ENOMEM. *ret_count gets the number
 * of values passed to cb (may be NULL). The objects are freed after cb. */
#define LINES_MALFORMED 1
int lines_json_foreach(const char *line, size_t len,
                       int (*cb)(struct json_object *obj, void *u), void *u,
                       size_t *ret_count);

/* True when the bytes are one or more complete JSON values and nothing else
 * (used for an unterminated last line). */
bool lines_is_complete_json(const char *line, size_t len);

/* Strips a trailing '\r' and surrounding blanks; returns the new length. */
size_t lines_trim(const char *line, size_t len, const char **ret_start);
