/* The live pipeline: what inotify, the timers and the signals do to the
 * ingest queue, and how the queue is drained in slices between answers. */
#pragma once

#include "daemon.h"
#include "ingest/ingest.h"
#include "watch/watch.h"

/* The hooks main hands to ingest_new and watch_new, for daemon d. */
struct ingest_hooks pipeline_ingest_hooks(struct daemon *d);
struct watch_callbacks pipeline_watch_callbacks(struct daemon *d);

/* Adds the drain, reconcile, sync and signal sources to d->event. */
int pipeline_add_sources(struct daemon *d);
/* The control command `rescan` (u = the daemon): discovery again, watches
 * re-armed, every source read with its consumed bytes checked. */
void pipeline_rescan(void *u);
/* Watches the roots (or their nearest ancestors), scans them, starts
 * reading and says READY=1: reading a large history goes on after it. */
int pipeline_start(struct daemon *d);
/* Frees the event sources pipeline_add_sources added. */
void pipeline_remove_sources(struct daemon *d);
