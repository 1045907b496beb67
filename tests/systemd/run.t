#!/bin/bash
# prove's entry for the real systemd --user tests (tests/run-all.sh runs
# it): the normal build, or $AM_BUILD.
src=${AM_SRCDIR:-$(cd "$(dirname "$0")/../.." && pwd)}
exec "$(dirname "$0")/run.sh" "${AM_BUILD:-$src/build}"
