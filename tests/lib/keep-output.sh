#!/bin/bash
# prove's --exec for tests/run-all.sh: runs one test program and keeps a
# copy of what it printed in $AM_TEST_LOGS, so that a failure in a parallel
# run (whose "not ok" lines and diagnostics prove does not show) can be
# printed after the summary. Its standard error goes where it went; the
# exit status is the program's own.
set -o pipefail
log=${AM_TEST_LOGS:?}/$(printf '%s' "$1" | tr '/' '_').log
"$@" | tee "$log"
