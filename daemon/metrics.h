/* The ledger as Prometheus metrics: the exposition text built from the
 * report builder and the ingest engine's counters, counters held at their
 * high-water marks (kept in the ledger, so they never go down, not even
 * across restarts or a reprice), written atomically to a textfile at most
 * once a second and only when it changed. */
#pragma once

#include <stdint.h>
#include <systemd/sd-event.h>

struct ingest;
struct metrics;

struct report_cache;

struct metrics_config {
        const char *path; /* textfile to keep up to date; NULL: none (text on demand only) */
        const char *user; /* the `user` label; NULL/"": "<login name>@<host name>" */
        int64_t start_ms; /* daemon start (CLOCK_REALTIME ms) */
        struct report_cache *report_cache; /* the daemon's, for the model series; may be NULL */
};

/* ev may be NULL (no timer: metrics_text on demand only). */
int metrics_new(sd_event *ev, struct ingest *in, const struct metrics_config *cfg,
                struct metrics **ret);
struct metrics *metrics_free(struct metrics *m); /* NULL-safe, returns NULL */

/* The exposition as it stands now (malloc'd), high-water marks applied. */
int metrics_text(struct metrics *m, char **ret_text);

/* Renders and writes the file now when the text differs from the last
 * written (the timer calls it; start and stop too). */
int metrics_write(struct metrics *m);

