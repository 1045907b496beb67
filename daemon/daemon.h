/* The running daemon's parts, as main wires them together: the loop, the
 * ledger, the ingest engine, the watches and the socket, and the state the
 * loop's handlers share (daemon/ingest/pipeline.c, daemon/once.c). */
#pragma once

#include <limits.h>
#include <stdbool.h>
#include <stdint.h>
#include <systemd/sd-event.h>

#include "commands.h"
#include "statusline-answer.h"

#define DAEMON_SLICE_BYTES (8u << 20) /* read at most this much per loop turn */
#define DAEMON_SLICE_MS 4             /* ... and after the initial scan, work this long */
#define DAEMON_MAX_WARNINGS 16

struct daemon {
        sd_event *event;
        struct ledger *ledger;
        struct ingest *ingest;
        struct watch *watch;
        struct control *control;
        struct budget *budget;
        struct prices *prices;  /* NULL: no table (logged), rows stay unpriced */
        struct metrics *metrics;
        struct team *team;      /* the team ledger (team.conf), or NULL */
        struct statusline_state statusline;
        struct report_cache *report_cache; /* for the ledger handle above */
        sd_event_source *drain, *reconcile_timer, *sync_timer, *retry_timer, *reconcile_soon;
        sd_event_source *reload_timer; /* a SIGHUP's reload, coalesced (pipeline.c) */
        uint64_t last_reload_usec;     /* CLOCK_MONOTONIC, when the last reload ended */
        struct command_env commands;
        uint64_t reconcile_usec;
        uint64_t commits_at_sync;
        uint64_t ledger_bytes_at_start; /* cache-shed.c: the ledger's size as opened */
        bool initial_scan_done;
        bool roots_dirty;       /* a directory appeared: re-check missing roots */
        bool rediscover;        /* a file discovery read changed (an editor's settings.json) */
        bool watch_degraded;    /* a watch could not be added: said once */
        int64_t start_ms;
        uint64_t last_status_pct;
        int64_t last_status_ms; /* monotonic: the initial scan's STATUS= at most every PROGRESS_GAP_MS */
        char state_dir[PATH_MAX];
        char socket_path[PATH_MAX];
        char *warnings[DAEMON_MAX_WARNINGS + 1];
        size_t n_warnings;
};
