/* A test hook of the team push: AGENTMETER_TEST_TEAM_KILL=<point> makes the
 * daemon kill itself (SIGKILL) at that point of the first batch that
 * reaches it, so tests/system/team-faults.t can show that every row arrives
 * on the server once whenever a crash comes. Inert unless the variable
 * names one of the points below. */
#pragma once

enum team_kill_point {
        TEAM_KILL_NONE = 0,
        TEAM_KILL_BEFORE_BEGIN, /* "before-begin": the batch read, nothing of it sent */
        TEAM_KILL_AFTER_BEGIN,  /* "after-begin": the server inside the transaction, in the
                                 * rows' COPY, no row sent */
        TEAM_KILL_MID_COPY,     /* "mid-copy": part of a COPY's data sent */
        TEAM_KILL_COPY_END,     /* "copy-end": the whole query sent, both COPYs ended,
                                 * the COMMIT's answer not seen */
        TEAM_KILL_BEFORE_ACK,   /* "before-ack": the COMMIT seen, the ledger's ack not written */
};

/* The point AGENTMETER_TEST_TEAM_KILL names; TEAM_KILL_NONE when unset or unknown. */
enum team_kill_point team_kill_point_from_env(void);
/* The point's name as the variable spells it. */
const char *team_kill_point_name(enum team_kill_point at);
