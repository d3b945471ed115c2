#!/usr/bin/env bash
# The fixed cost of a cycle that has little to do (issue 19: "a cycle with under 100 URLs over 16
# partitions costs under 0.15 s and 0.1 CPU-s of fixed work"): a crawl of 16 partitions over a
# tiny websim web (HOSTS hosts x PAGES pages, no hostile hosts, no delays), run one cycle per
# `dragnet cycle --max-cycles 1` call until a cycle's fetch lists are empty (that empty cycle
# is run and timed too), each call timed with
# /usr/bin/time (wall, user + system CPU). The fetch itself (requests to a loopback server) is in
# the numbers; with a few dozen URLs per cycle it is a few milliseconds of CPU.
#
#   tools/bench/small_cycle.sh [HOSTS] [PAGES]     # defaults: 40 hosts x 3 pages
#
# Settings (environment): PARTITIONS (16), PORT (8497), KEEP=1 keeps the scratch directory.
set -euo pipefail
cd "$(dirname "$0")/../.."
source tools/bench/lib.sh
M=${PARTITIONS:-16}
HOSTS=${1:-40} PAGES=${2:-3} PORT=${PORT:-8497}
bench_build
bench_workdir small-cycle
websim_serve --seed 11 --hosts "$HOSTS" --pages "$PAGES" --port "$PORT" \
    --hostile-every 0 --max-crawl-delay-ms 0
websim_home_seeds "$PORT"
cat >"$work/crawl.toml" <<TOML
[crawl]
name = "small-cycle"
partitions = $M
$(websim_crawl_toml)
per_ip_connections = 16
[scope]
allowed_domains = ["websim.test"]
TOML
"$DRAGNET" init --seeds "$work/seeds.txt" --config "$work/crawl.toml" "$work/crawl" >/dev/null 2>&1
echo "Machine: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //'), $(nproc) cores; $(date -u +%F); commit $(git rev-parse --short HEAD)."
echo "Command: \`PARTITIONS=$M tools/bench/small_cycle.sh $HOSTS $PAGES\`."
echo
echo "| cycle | URLs in its fetch lists | wall s | CPU s (user + sys) |"
echo "|--:|--:|--:|--:|"
for c in $(seq 0 50); do
    out=$(/usr/bin/time -f "%e %U %S" -o "$work/time" "$DRAGNET" cycle --max-cycles 1 --progress log "$work/crawl" 2>&1 || true)
    read -r wall user sys <"$work/time"
    urls=$(echo "$out" | grep -o "cycle $c: [0-9]* URLs\? to fetch" | grep -o '[0-9]* URL' | grep -o '[0-9]*' || true)
    [ -n "$urls" ] || break
    echo "| $c | $urls | $wall | $(echo "$user + $sys" | bc) |"
    # One empty cycle is measured too (the fixed cost of a cycle with nothing to do), then stop.
    [ "$urls" = 0 ] && break
done
