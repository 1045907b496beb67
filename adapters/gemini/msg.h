/* What both generations of Gemini CLI session files share: a message
 * record and its tokens, the usage row it makes (keyed by the message id),
 * where the file's project directory is and which cwd it stands for, and the
 * adapter-private part of the parse state. */
#pragma once

#include <stdbool.h>
#include <stdint.h>

#include "adapter.h"
#include "json/jscan.h"

#define GEMINI_KEY_MSG "gemini-msg-v1" /* the message id */

/* A message's `tokens` object; absent members read as absent numbers. */
struct gm_tokens_f {
        bool present;
        struct jscan_num input, output, cached, thoughts, tool, total;
};

struct gm_call_f {
        struct jscan_span id, name;
};

/* One record: a message ({id, timestamp, type, model, tokens, toolCalls})
 * and, for a JSONL line, the header's members and the update markers. */
struct gm_msg_f {
        struct jscan_span id, type, model;
        struct jscan_time ts;
        struct gm_tokens_f tok;
        uint32_t n_calls; /* toolCalls elements seen; calls[] keeps the first ROW_CALLS_MAX */
        struct gm_call_f calls[ROW_CALLS_MAX];
        struct jscan_span session_id, project_hash, kind;
        bool is_set, is_rewind; /* {"$set": ...}, {"$rewindTo": ...} */
};

/* Reads the object at s (at '{', nesting level depth) into m (reset
 * first). false: not valid JSON. */
bool gm_scan_record(struct jscan *s, struct gm_msg_f *m, int depth);

/* parse_state.priv as both parsers keep it (see gemini/msg.c for the
 * layout): flags, and a document's resume region. */
#define GM_SUBAGENT    0x1u /* a sub-agent's file (chats/<parent>/, or kind "subagent") */
#define GM_PROJECT_SET 0x2u /* the project directory was looked up */
#define GM_REGION      0x4u /* region below is valid */
struct gm_state {
        uint8_t flags;
        /* A document's messages already parsed: the bytes from just after
         * the '[' of its messages array (region_start in the version they
         * were read from) for region_len bytes, ending just after a
         * complete message, hash64 region_hash. */
        uint64_t region_start, region_len, region_hash;
        uint32_t region_msgs;
};
void gm_state_load(const struct parse_state *ps, struct gm_state *ret);
void gm_state_save(const struct gm_state *st, struct parse_state *ps);

/* The session and project of a file, from its path and header: a sub-agent
 * file's session is its parent's (the folder's name), a main file's the
 * header's; the project is the cwd .project_root or projects.json names for
 * the file's tmp/<project>/ folder (projects.json by short name, or by the
 * sha256 projectHash an older CLI named its folders by). Sets ps->session,
 * ps->project (once per source), and GM_SUBAGENT in st. */
void gm_identify(const struct source_ctx *ctx, struct parse_state *ps, struct gm_state *st,
                 const struct jscan_span *session_id, const struct jscan_span *project_hash,
                 const struct jscan_span *kind);

/* The usage row of a `gemini` message with tokens, appended to out:
 * PARSE_OK (also when the record is no call), -ENOMEM. Carries the model
 * in ps->model for a message without one. */
int gm_emit(const struct source_ctx *ctx, struct parse_state *ps, const struct gm_state *st,
            const struct gm_msg_f *m, struct row_batch *out);
