/* OpenClaw adapter internals shared by its files: discovery and the pi-line
 * flavor (openclaw.c), the config reader (openclaw/config.c), the SQLite
 * transcript reader (openclaw/db.c), the archive line formats (openclaw/archive.c),
 * the archives inside the database (openclaw/db-archives.c) and the archive
 * figures of status (openclaw/status.c). */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "adapter.h"
#include "pi/record.h"
#include "hash/sha256.h"

struct sqlite3;

/* tool "openclaw", synthetic delivery-mirror/gateway-injected rows skipped,
 * custom model-snapshot entries carry the model */
extern const struct pi_flavor openclaw_flavor;

/* The adapter itself (openclaw.c); the registry lists it. */
extern const struct adapter adapter_openclaw;

/* session.store from an OpenClaw config file (JSON, or JSON5-ish: comments,
 * trailing commas, bare keys, single quotes): 0 and the string in buf,
 * -ENOENT when there is none or the file cannot be read or parsed (a broken
 * config is not an error for discovery), -ENOMEM. */
int openclaw_config_store(const char *path, char *buf, size_t cap);

/* collect_rows for agents/<id>/agent/openclaw-agent.sqlite: rows of table
 * transcript_events past the rowid watermark (see openclaw/db.c for what
 * the parse_state holds for a database). Events whose event_json or
 * event_zstd cannot be decoded, or that are not JSON, are skipped and
 * counted in *io_malformed. -EBUSY locked, -EBADMSG corrupt, -EPROTO
 * unknown schema, -EACCES/-ENOENT cannot open: no rows (and no count) then. */
int openclaw_collect_db(const struct source_ctx *ctx, struct parse_state *ps,
                        uint64_t *io_watermark, size_t max_rows, struct row_batch *out,
                        uint64_t *io_malformed);

/* ---- archived transcripts (openclaw/archive.c) ---------------------------- */

enum oc_archive_format {
        OC_ARCHIVE_JSONL = 0, /* a deleted/reset session: its event_json lines, header first */
        OC_ARCHIVE_COLD = 1,  /* cold storage: restore records, events in kind:"event" ones */
};

/* One line of an archive .zst file read as a line source: a deleted
 * session's event_json line, or a cold-storage restore record whose
 * kind:"event" carries one (scanned, not built into a tree). A
 * parse_result, or -ENOMEM. */
int openclaw_archive_line(const struct source_ctx *ctx, struct parse_state *ps,
                          enum oc_archive_format format, const char *line, size_t len,
                          struct row_batch *out);

/* One read of an archive blob from the database: its lines go through the
 * pi parser with ps (a fresh state for a whole archive). Lines ending
 * before skip decoded bytes are passed over (read in an earlier call, their
 * effect is in ps). With max_rows > 0 the read stops at the first line end
 * with that many new rows. Lines longer than LINES_MAX_DEFAULT are skipped
 * and counted. Results: consumed (decoded bytes up to the last line
 * handled), malformed (lines that were not JSON or too long), more
 * (stopped early). */
struct oc_archive_read {
        const struct source_ctx *ctx;
        struct parse_state *ps;
        enum oc_archive_format format;
        uint64_t skip;
        size_t max_rows;
        struct row_batch *out;
        struct sha256 *digest_in;  /* optional: fed the stored bytes */
        struct sha256 *digest_out; /* optional: fed the decoded bytes */
        uint64_t consumed, malformed;
        bool more;
};

/* 0 all read, 1 stopped at max_rows; -EBADMSG not zstd, truncated or no
 * frame at all; -ENOMEM. On failure no rows are left in out. zstd: the
 * bytes are a zstd stream (else identity). */
int openclaw_archive_read_mem(struct oc_archive_read *a, bool zstd, const void *data, size_t n);

/* ---- archives inside the database (openclaw/db-archives.c) ---------------- */

enum oc_arch_phase { OC_ARCH_IDLE = 0, OC_ARCH_DELETED = 1, OC_ARCH_COLD = 2 };

/* What the database source keeps about its archives (in its parse_state). */
struct oc_db_archives {
        bool known;            /* set_fp is the set read completely last */
        uint64_t set_fp;
        uint8_t phase;         /* enum oc_arch_phase: a pass in progress ... */
        uint64_t pass_fp;      /* ... over the set with this fingerprint ... */
        int64_t cursor;        /* ... done up to this rowid of the phase's table */
        uint32_t bad, bad_lines;           /* faults of the last complete pass */
        uint32_t pass_bad, pass_bad_lines; /* of the pass in progress */
};

/* The rows' source_hash for calls first read from a database's archives
 * (OC_ARCHIVE_JSONL: session_transcript_archives) or cold windows. */
uint64_t openclaw_origin_hash(const char *db_path, enum oc_archive_format format);

/* Reads the database's archive blobs when the set of archives changed
 * since the last complete pass (inside the caller's read transaction).
 * Bad blobs (not decoding, sha256 not the recorded one, unknown encoding)
 * give no rows and are counted in ar->bad; *io_malformed grows by the new
 * faults of a completed pass. 0 done, 1 row budget used (call again),
 * negative errno (no rows then). Tables that do not exist hold nothing. */
int openclaw_db_archives(struct sqlite3 *db, const struct source_ctx *ctx, struct oc_db_archives *ar,
                         size_t max_rows, struct row_batch *out, uint64_t *io_malformed);

/* The archive faults a database source's checkpointed state records: 0
 * and the bad blobs of its last complete pass, -EINVAL when the state is
 * not a database source's. */
int openclaw_db_faults(const struct parse_state *ps, uint32_t *ret_bad_blobs);

/* Whether a path is an archive .zst file (by name: *.jsonl.deleted.*.zst,
 * *.jsonl.reset.*.zst, cold/<name>.jsonl.zst): a line source of that format. */
bool openclaw_is_archive_file(const char *path, enum oc_archive_format *ret_format);

/* adapter.status_extra (openclaw/status.c): {"agents": [{agent,
 * archive_calls, cold_calls, archive_faults}, ...]}. */
struct json_object *openclaw_status(const struct adapter_status_ctx *ctx);
