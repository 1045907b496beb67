/* The team push's kill points (team-push/kill-point.h): the variable names
 * each point by its exact name; anything else leaves the hook inert. */
#include <stdlib.h>

#include "tap.h"
#include "team-push/kill-point.h"

#define HOOK "AGENTMETER_TEST_TEAM_KILL"

static enum team_kill_point with(const char *value)
{
        if (value)
                setenv(HOOK, value, 1);
        else
                unsetenv(HOOK);
        return team_kill_point_from_env();
}

int main(void)
{
        static const enum team_kill_point all[] = { TEAM_KILL_BEFORE_BEGIN, TEAM_KILL_AFTER_BEGIN,
                                                    TEAM_KILL_MID_COPY, TEAM_KILL_COPY_END,
                                                    TEAM_KILL_BEFORE_ACK };

        ok(with(NULL) == TEAM_KILL_NONE, "unset: inert");
        ok(with("") == TEAM_KILL_NONE, "empty: inert");
        is_int(with("mid-copy"), TEAM_KILL_MID_COPY, "mid-copy names the point in the COPY");
        is_int(with("before-ack"), TEAM_KILL_BEFORE_ACK, "before-ack names the point after the COMMIT");
        for (size_t i = 0; i < sizeof(all) / sizeof(all[0]); i++)
                ok(with(team_kill_point_name(all[i])) == all[i], "%s: its name names it",
                   team_kill_point_name(all[i]));
        ok(with("none") == TEAM_KILL_NONE, "\"none\": inert");
        ok(with("MID-COPY") == TEAM_KILL_NONE && with("mid-copy ") == TEAM_KILL_NONE && with("mid") == TEAM_KILL_NONE,
           "not exactly a name: inert");
        is_str(team_kill_point_name(TEAM_KILL_NONE), "none", "no point: \"none\"");
        is_str(team_kill_point_name((enum team_kill_point)99), "none", "out of range: \"none\"");
        return tap_done();
}
