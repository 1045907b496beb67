#!/bin/bash
# One `agentmeterd --once` into an empty ledger in a private HOME, for A/B
# timing of two builds (tests/bench/README.md):
#   tests/bench/once.sh AGENTMETERD PI_SESSIONS_DIR STATE_DIR
set -eu
bin=$1 sessions=$2 state=$3
home=${state}.home
rm -rf "$state"; mkdir -p "$home/run"; chmod 700 "$home/run"
exec env -i PATH="$PATH" HOME="$home" XDG_STATE_HOME="$state" XDG_RUNTIME_DIR="$home/run" \
	PI_CODING_AGENT_SESSION_DIR="$sessions" "$bin" --once
