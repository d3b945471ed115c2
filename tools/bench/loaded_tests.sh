#!/usr/bin/env bash
# The README's `cargo test` in a fresh clone, N times in a row, with both cores of the machine
# kept busy by two other processes (`while :; do :; done` busy loops, one per core, started
# before each run and stopped after it): a test that fails only under load is a defect
# (issue 31, point 5).
#
#   tools/bench/loaded_tests.sh              # 10 runs of HEAD in /tmp/dragnet-loaded
#   N=3 WORK=/tmp/x tools/bench/loaded_tests.sh
#
# The clone is of the committed HEAD (uncommitted changes are not tested), built once with
# `cargo test --no-run` (not timed as a run). Each run's whole output stays in WORK/runN.log;
# WORK/summary has one line per run: exit code, seconds, load average at its end and the names
# of the tests that failed. Exits 1 if any run failed.
set -uo pipefail
N=${N:-10}
WORK=${WORK:-/tmp/dragnet-loaded}
repo=$(git -C "$(dirname "$0")" rev-parse --show-toplevel) || exit 2
rm -rf "$WORK" && mkdir -p "$WORK" || exit 2
git clone -q "$repo" "$WORK/dragnet" || exit 2
cd "$WORK/dragnet" || exit 2
summary=$WORK/summary
echo "commit $(git rev-parse --short HEAD), $(nproc) cores, $(date -u +%FT%TZ)" | tee "$summary"
t=$(date +%s)
cargo test --no-run > "$WORK/build.log" 2>&1
echo "build: exit $?, $(( $(date +%s) - t )) s" | tee -a "$summary"
failed=0
for i in $(seq "$N"); do
    busy=()
    for _ in 1 2; do (while :; do :; done) & busy+=($!); done
    t=$(date +%s)
    cargo test > "$WORK/run$i.log" 2>&1
    rc=$?
    kill "${busy[@]}"; wait "${busy[@]}" 2>/dev/null
    fails=$(grep -E '^test .* FAILED$' "$WORK/run$i.log" | sed 's/^test //; s/ \.\.\. FAILED$//' | tr '\n' ' ')
    [ "$rc" = 0 ] || failed=1
    echo "run $i: exit $rc, $(( $(date +%s) - t )) s, load $(cut -d' ' -f1-3 /proc/loadavg) ${fails}" | tee -a "$summary"
done
exit "$failed"
