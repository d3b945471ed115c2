#!/usr/bin/env bash
# The cost of `dragnet report` (issue 33) on the crawl directory given: wall, CPU and peak RSS
# from GNU time, with the size of what it reads (cycles, fetch results, hosts, URL-db records).
# The report goes into a scratch directory (--out), so the crawl is only read. Make a crawl to
# measure with another bench script, kept (e.g. `KEEP=1 tools/bench/cycle.sh`), or use any crawl.
#
#   tools/bench/report.sh CRAWL_DIR
#
# Settings (environment): RUNS (3; the best wall time is kept), KEEP=1 keeps the scratch directory.
set -euo pipefail
[ $# -eq 1 ] && [ -d "$1" ] || { echo "usage: tools/bench/report.sh CRAWL_DIR" >&2; exit 2; }
crawl=$(cd "$1" && pwd)
cd "$(dirname "$0")/../.."
source tools/bench/lib.sh
need_gnu_time
bench_build
bench_workdir report-bench
RUNS=${RUNS:-3}
best=""
for _ in $(seq 1 "$RUNS"); do
    rm -rf "$work/report"
    /usr/bin/time -f "%e %U %S %M" -o "$work/time" \
        "$DRAGNET" report --out "$work/report" "$crawl" 2>"$work/report.log"
    read -r wall user sys rss <"$work/time"
    if [ -z "$best" ] || awk -v a="$wall" -v b="${best%% *}" 'BEGIN { exit !(a < b) }'; then
        best="$wall $user $sys $rss"
    fi
done
read -r wall user sys rss <<<"$best"
csv() { awk -F, -v k="$2" '$1 == k { print $2 }' "$work/report/$1"; }
cycles=$(($(wc -l <"$work/report/cycles.csv") - 1))
hosts=$(($(wc -l <"$work/report/hosts-report.csv") - 1))
results=$(csv crawl-report.csv "URIs Processed")
urldb=$(csv crawl-report.csv "URL DB Records")
skipped=$(csv crawl-report.csv "Skipped")
html=$(stat -c %s "$work/report/index.html")
echo "Machine: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //'), $(nproc) cores; $(date -u +%F); commit $(git rev-parse --short HEAD)."
echo "Command: \`tools/bench/report.sh $crawl\` (best of $RUNS)."
echo
echo "| cycles | fetch results | hosts | URL-db records | skipped | index.html bytes | wall s | CPU s (user + sys) | peak RSS MiB |"
echo "|--:|--:|--:|--:|--:|--:|--:|--:|--:|"
echo "| $cycles | $results | $hosts | $urldb | $skipped | $html | $wall | $(awk -v u="$user" -v s="$sys" 'BEGIN { printf "%.2f", u + s }') | $((rss / 1024)) |"
