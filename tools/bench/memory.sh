#!/usr/bin/env bash
# Peak resident memory of whole runs (issue 19's memory targets): `dragnet demo`, and whole
# crawls of websim webs of two sizes, to see that the peak is set by configuration and stays flat
# as the crawl grows.
#
#   tools/bench/memory.sh                   # demo, then 100 x 1,000 and 1,000 x 1,000 pages
#   SIZES="100x1000" tools/bench/memory.sh  # other webs (HOSTSxPAGES, space-separated)
#   DEMO=0 tools/bench/memory.sh            # skip the demo
#
# Each crawl is `tools/bench/cycle.sh HOSTS PAGES` (its crawl.toml: 8 partitions, 2 fetched at a
# time, default [sort] memory_budget of 256 MiB); peak RSS is /usr/bin/time's maximum resident
# set of the `dragnet` process (the demo's includes websim, which serves from the same process).
# Prints a markdown table for docs/BENCHMARKS.md ("Memory").
set -euo pipefail
cd "$(dirname "$0")/../.."
source tools/bench/lib.sh
bench_build
SIZES=${SIZES:-"100x1000 1000x1000"}
rows=()
if [ "${DEMO:-1}" = 1 ]; then
    bench_workdir memory-bench
    echo "== dragnet demo" >&2
    /usr/bin/time -f "%e %U %S %M" -o "$work/time" "$DRAGNET" demo --dir "$work/demo" \
        >"$work/demo.out" 2>"$work/demo.log"
    read -r wall user sys rss <"$work/time"
    fetched=$(grep -o 'fetched *[0-9]* URLs' "$work/demo.log" | grep -o '[0-9]*' | head -1)
    rows+=("| \`dragnet demo\` (300 hosts x 15 pages, with websim) | $fetched | $wall | $(echo "$user + $sys" | bc) | $((rss / 1024)) MiB |")
fi
for size in $SIZES; do
    h=${size%x*} p=${size#*x}
    echo "== whole crawl, $h hosts x $p pages" >&2
    out=$(tools/bench/cycle.sh "$h" "$p")
    row=$(echo "$out" | grep -A2 '^| cycles' | tail -1)
    # | cycles | URLs fetched | wall s | pages/s | CPU s | CPU-s/1k | peak RSS |
    IFS='|' read -r _ cycles urls wall _ cpu _ rss _ <<<"$row"
    rows+=("| whole crawl, $h x $p pages ($(echo $cycles) cycles) |$urls|$wall|$cpu|$rss|")
done
echo "Machine: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //'), $(nproc) cores; $(date -u +%F); commit $(git rev-parse --short HEAD)."
echo "Command: \`SIZES=\"$SIZES\" tools/bench/memory.sh\`."
echo
echo "| run | URLs fetched | wall s | CPU s | peak RSS |"
echo "|---|--:|--:|--:|--:|"
printf '%s\n' "${rows[@]}"
