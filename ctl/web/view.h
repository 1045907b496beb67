/* The live page's state as the browser receives it: one JSON object whose
 * "view" and "calls" members are HTML made here, every ledger text through
 * html_escape and every figure written as `agentmeterctl report` writes it
 * (fmt.h's marks ~ * and the dash), plus the plain totals for scripts. */
#pragma once

struct web_data;

/* The state as JSON text (malloc'd), or NULL (no memory). */
char *web_view_state(const struct web_data *d);
