/* agentmeterctl statusline: the command for Claude Code's `statusLine`
 * setting. Reads the JSON Claude Code sends on stdin (bounded), asks the
 * daemon (bounded), and prints one line; a short fallback line when stdin
 * is not JSON or no daemon answers in time. */
#pragma once

#include <stdbool.h>
#include <stdio.h>

struct json_object;

#define STATUSLINE_DEFAULT_FORMAT \
        "{model} | session {session} | today {today} | block {block} ({burn}/h, {left} left){limits}"
#define STATUSLINE_INPUT_MAX (256 * 1024)

/* Reads one JSON object from fd within timeout_ms. 0 and the object;
 * -ENODATA (fd is a terminal, or empty), -EBADMSG (not a JSON object),
 * -ETIMEDOUT, -E2BIG (over STATUSLINE_INPUT_MAX). */
int statusline_read_input(int fd, int timeout_ms, struct json_object **ret_input);

/* The request for the daemon's `statusline` command built from the input
 * (session id, rate limits) and the zone (NULL: the daemon's). */
struct json_object *statusline_request(struct json_object *input, const char *tz);

/* Writes the line: fields of format ({model}, {session}, {today}, {block},
 * {burn}, {left}, {limits}, {limit_5h}, {limit_7d}, {cwd}, {project}) from
 * the input and the daemon's answer. answer NULL: the fallback line
 * (why: "no agentmeterd" or similar). Text from the input is escaped as
 * termtext.h says (controls, bidi overrides, invalid UTF-8 as \\xNN). */
void statusline_print(FILE *f, const char *format, struct json_object *input,
                      struct json_object *answer, const char *why);
/* --json: {"model", "session_cost_usd", "today_cost_usd", "block", "rate_limits",
 * "daemon": bool, "fallback": why|null}. */
void statusline_print_json(FILE *f, struct json_object *input, struct json_object *answer,
                           const char *why);
