#!/usr/bin/env bash
# The crash campaign (docs/RELIABILITY.md, campaign 2): `dragnet init` and a 4-cycle websim crawl
# killed with SIGKILL at POINTS exact points (just before the Nth storage operation, spread over
# init and every stage, queue commit, state write and pruning), each followed by a plain re-run
# that must end with the same fetch lists, seen sets, URL dbs and fetched set as an
# uninterrupted crawl, and `dragnet check crawl` clean. Then the storage fault sweep (campaign 3):
# EIO or ENOSPC at every storage operation of one cycle, each followed by a re-run.
#
#   tools/faults/crash.sh [POINTS]      # default 100
#
# Uses the debug build (the fault hook `DRAGNET_FAULT` exists only there). Prints each test's
# summary line.
set -euo pipefail
cd "$(dirname "$0")/../.."
POINTS=${1:-100}
DRAGNET_KILL_POINTS=$POINTS cargo test --test integration -- --ignored --nocapture \
    kill_points::sigkill_at_100 storage_faults::every 2>&1 \
    | grep -E '^(kill points|storage faults):|panicked|test result: (ok|FAILED)\. [1-9]'
