/* The team push's kill points (team-push/kill-point.h): the variable's
 * names. The kill itself is push.c's (it flushes the connection first). */
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "team-push/kill-point.h"

static const char *const names[] = {
        [TEAM_KILL_BEFORE_BEGIN] = "before-begin", [TEAM_KILL_AFTER_BEGIN] = "after-begin",
        [TEAM_KILL_MID_COPY] = "mid-copy",         [TEAM_KILL_COPY_END] = "copy-end",
        [TEAM_KILL_BEFORE_ACK] = "before-ack",
};

enum team_kill_point team_kill_point_from_env(void)
{
        const char *v = getenv("AGENTMETER_TEST_TEAM_KILL");

        if (!v)
                return TEAM_KILL_NONE;
        for (size_t i = 1; i < sizeof(names) / sizeof(names[0]); i++)
                if (strcmp(v, names[i]) == 0)
                        return (enum team_kill_point)i;
        return TEAM_KILL_NONE;
}

const char *team_kill_point_name(enum team_kill_point at)
{
        return at > TEAM_KILL_NONE && (size_t)at < sizeof(names) / sizeof(names[0]) ? names[at] : "none";
}
