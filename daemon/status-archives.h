/* status: per OpenClaw agent, the calls first found in archives (deleted
 * sessions) and cold storage, and the archives that did not decode. */
#pragma once

struct json_object;
struct ingest;

/* An array of {agent, archive_calls, cold_calls, archive_faults}, one per
 * agent that has a database or archive files; NULL on -ENOMEM. */
struct json_object *status_openclaw_archives(struct ingest *in);
