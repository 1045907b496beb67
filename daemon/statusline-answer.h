/* The daemon's answer to `statusline` (agentmeterctl statusline, run by
 * Claude Code for every status line render): this session's sums, today's,
 * the harness's latest 5-hour block, and the rate limits the harness last
 * reported through the status line input (kept in memory). */
#pragma once

struct json_object;
struct ledger;
struct root_list;

struct statusline_state {
        struct json_object *rate_limits; /* per harness: {"claude": {...,"received_at"}} */
};

/* req: {"harness":"claude","session":"<id>","tz":"Europe/Berlin",
 *       "rate_limits":{...}|absent}; without "harness", the harness whose
 * root (in roots) holds "transcript_path". -EINVAL with *ret_error on a bad
 * request. */
int statusline_answer(struct ledger *l, struct statusline_state *st, const struct root_list *roots,
                      struct json_object *req,
                      struct json_object **ret_result, const char **ret_error);
void statusline_state_done(struct statusline_state *st);
