#!/usr/bin/env bash
# The priority-queue evaluation of Marin, Paredes & Bonacic (WIDM 2008) on dragnet's disk
# queues (tools/pqbench, docs/pqbench.md): Fig. 8 (key comparisons), Fig. 9 (block I/Os with
# RAM = 10 % and 30 % of the queue) and Table 1 (CBT load balance for T = 1, 2, 4, 8, with three
# ways of sharing the inserts among the slices and with the SELECTs skipped or all run).
#
#   tools/bench/pqbench.sh [PQBENCH ARGS...]     # e.g. --samples synthetic --n 100000
#
# Builds pqbench in release, prints the machine, then the markdown tables on stdout; progress
# goes to stderr. Charts go to PNG_DIR (default docs/img, files pqbench-*.png) and all numbers
# to JSON (default: none). Queue files go to TMPDIR (tens of MB at the default sizes).
# The defaults take about 5 minutes on 2 cores. Settings: PNG_DIR, JSON, EXPERIMENT (all).
set -euo pipefail
cd "$(dirname "$0")/../.."

echo "== building pqbench (release)" >&2
cargo build --release -q -p pqbench
PQ="${CARGO_TARGET_DIR:-target}/release/pqbench"
PNG_DIR=${PNG_DIR:-docs/img}
EXPERIMENT=${EXPERIMENT:-all}
extra=()
if [ -n "${JSON:-}" ]; then extra+=(--json "$JSON"); fi

cat <<EOF
# pqbench run, $(date -u '+%Y-%m-%d %H:%M UTC')

- Machine: $(awk -F': ' '/model name/ {print $2; exit}' /proc/cpuinfo), $(nproc) cores, $(awk '/MemTotal/ {printf "%.0f GiB", $2/1048576}' /proc/meminfo) RAM, kernel $(uname -r), $(rustc --version)
- Commit: $(git rev-parse --short HEAD 2>/dev/null || echo unknown)$(git diff --quiet 2>/dev/null || echo ' (+ uncommitted changes)')
- Command: \`$PQ $EXPERIMENT --png-dir $PNG_DIR ${extra[*]:-} $*\`

EOF
timefile=$(mktemp)
trap 'rm -f "$timefile"' EXIT
/usr/bin/time -f "%e s wall, %M KiB peak RSS" -o "$timefile" \
    "$PQ" "$EXPERIMENT" --png-dir "$PNG_DIR" "${extra[@]}" "$@"
echo
echo "Run time: $(cat "$timefile"); load average at end: $(cut -d' ' -f1-3 /proc/loadavg)"
