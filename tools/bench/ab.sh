#!/usr/bin/env bash
# ab.sh LABEL=BINARY ... : an A/B of dragnet builds on the peerbench web, runs alternated.
#
#   tools/bench/ab.sh base=/tmp/dragnet-base new=target/release/dragnet
#   ROUNDS=5 tools/bench/ab.sh a=/tmp/a b=/tmp/b
#   ROUNDS=3 tools/bench/ab.sh glibc=/tmp/new tcmalloc=/tmp/new-with-tcmalloc-wrapper
#   PAIRED=1 ROUNDS=3 tools/bench/ab.sh base=/tmp/dragnet-base new=target/release/dragnet
#
# Each binary crawls the peerbench web (../shared/peerbench: gen.py's 200 hosts x 1,000 pages,
# nginx on 127.0.1.x with its access log off) to completion with `dragnet_crawl.sh`, the same
# crawl as dragnet's row in peers.sh, under GNU time; the binaries take turns, ROUNDS times
# (default 3), so a slow minute of a shared machine lands on both. Between runs the last crawl is
# removed and the page cache synced outside the timed part. A binary may be a wrapper script
# (environment, LD_PRELOAD) that execs dragnet.
#
# Why alternate and repeat: on the 2-core box, one crawl's CPU time varies by up to +-10% from
# run to run (scheduling of ~130 threads next to nginx, the host's neighbours), more than most
# single changes move it. Compare medians over the rounds, never one run against one run. The
# per-run lines and the medians are printed and appended to $WORK/results.txt.
#
# PAIRED=1 runs a round's crawls at the same time instead, one per binary, against the same
# nginx: the box flips between a fast and a slow state ~1.4x apart (docs/BENCHMARKS.md,
# "2026-11-30 (fourteenth session)"), and crawls running together meet the same state. Each
# crawl then takes about twice as long and ~30% more CPU (they share the cores and the caches),
# so compare only within the paired runs: the line to quote is the median of each round's change
# against the first binary. Swap the binaries' order once to see the slots' bias (under 1%).
#
# Settings (environment): PEERBENCH (../shared/peerbench beside the repository), WORK
# (/tmp/dragnet-ab: the web, generated once and kept, and the crawls), H and P (the web: 200 and
# 1000), PORT (8083, so it runs beside peers.sh's 8081), ROUNDS (3), PAIRED (0), plus
# dragnet_crawl.sh's own DN_PARTITIONS and DN_FETCH_PARTITIONS. Needs nginx and GNU time
# (peerbench's setup.sh installs both).
set -euo pipefail
repo=$(cd "$(dirname "$0")/../.." && pwd)
PEERBENCH=${PEERBENCH:-$repo/../shared/peerbench}
WORK=${WORK:-/tmp/dragnet-ab}
H=${H:-200}
P=${P:-1000}
PORT=${PORT:-8083}
ROUNDS=${ROUNDS:-3}
die() { echo "ab.sh: $*" >&2; exit 2; }
[ $# -ge 1 ] || die "usage: ab.sh LABEL=BINARY [LABEL=BINARY ...]"
[ -f "$PEERBENCH/gen.py" ] || die "no peerbench harness at $PEERBENCH (set PEERBENCH)"
command -v nginx >/dev/null || die "nginx is missing (bash $PEERBENCH/setup.sh installs it)"
[ -x /usr/bin/time ] || die "GNU time is missing (apt-get install time)"
for arg in "$@"; do
    case "$arg" in *=*) ;; *) die "'$arg' is not LABEL=BINARY" ;; esac
    [ -x "${arg#*=}" ] || die "${arg#*=} is not an executable"
done

web=$WORK/web-H$H-P$P-port$PORT
mkdir -p "$WORK"
if [ ! -f "$web/seeds.txt" ]; then
    echo "== generating the web: $H hosts x $P pages in $web" >&2
    python3 "$PEERBENCH/gen.py" --hosts "$H" --pages "$P" --port "$PORT" --out "$web" >&2
fi
# gen.py's truth: the reachable pages, the denominator of the per-1k column (as in peers.sh).
pages=$(python3 -c 'import json,sys; print(len(json.load(open(sys.argv[1]))["reachable"]))' "$web/truth.json")
sed 's#^\(\s*\)access_log .*;#\1access_log off;#' "$web/nginx.conf" > "$WORK/nginx-nolog.conf"
nginx -p "$web" -e "$web/logs/error.log" -c "$WORK/nginx-nolog.conf" &
ng=$!
trap 'kill $ng 2>/dev/null; wait $ng 2>/dev/null || true' EXIT
for _ in $(seq 1 100); do
    (exec 3<>"/dev/tcp/127.0.1.1/$PORT") 2>/dev/null && break
    kill -0 $ng 2>/dev/null || die "nginx exited; see $web/logs/error.log"
    sleep 0.1
done
export SEEDS=$web/seeds.txt HOSTS=$web/hosts.txt

echo "== $(date -u +%FT%TZ), $(nproc) cores, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | xargs), $H x $P web ($pages pages for the per-1k column), $ROUNDS rounds" | tee -a "$WORK/results.txt"
declare -A cpu_runs wall_runs rss_runs
# One crawl of binary $2 under label $1 into $WORK/crawl-$1; its times in $WORK/$1.time.
crawl() {
    DRAGNET=$2 /usr/bin/time -f "%e %U %S %M" -o "$WORK/$1.time" \
        bash "$PEERBENCH/dragnet_crawl.sh" "$WORK/crawl-$1" > "$WORK/$1.log" 2>&1 ||
        die "$1: the crawl failed; see $WORK/$1.log"
}
binary() { echo "$(cd "$(dirname "$1")" && pwd)/$(basename "$1")"; }
changes=""
for round in $(seq 1 "$ROUNDS"); do
    if [ "${PAIRED:-0}" = 1 ]; then
        for arg in "$@"; do rm -rf "$WORK/crawl-${arg%%=*}"; done
        sync
        sleep 3
        load=$(cut -d' ' -f1 /proc/loadavg)
        pids=()
        for arg in "$@"; do
            crawl "${arg%%=*}" "$(binary "${arg#*=}")" &
            pids+=($!)
        done
        for pid in "${pids[@]}"; do wait "$pid" || exit 2; done
    fi
    first=""
    for arg in "$@"; do
        label=${arg%%=*}
        if [ "${PAIRED:-0}" != 1 ]; then
            rm -rf "$WORK/crawl-$label"
            sync
            sleep 3
            load=$(cut -d' ' -f1 /proc/loadavg)
            crawl "$label" "$(binary "${arg#*=}")"
        fi
        read -r e u s m < "$WORK/$label.time"
        c=$(awk -v u="$u" -v s="$s" 'BEGIN { print u + s }')
        vs=""
        if [ -z "$first" ]; then
            first=$c
        else
            d=$(awk -v c="$c" -v f="$first" 'BEGIN { printf "%+.1f", 100 * (c - f) / f }')
            vs=", ${d}% CPU against ${1%%=*}"
            changes+="$label:$d "
        fi
        line=$(awk -v l="$label" -v r="$round" -v e="$e" -v u="$u" -v s="$s" -v m="$m" -v ld="$load" -v p="$pages" \
            'BEGIN { c = u + s; printf "%-12s round %d: wall %6.1f s, user %6.1f, sys %5.1f, CPU %6.1f s = %.3f CPU-s / 1k pages, peak RSS %d MB, load %s", l, r, e, u, s, c, c / p * 1000, m / 1024, ld }')
        echo "$line$vs" | tee -a "$WORK/results.txt"
        cpu_runs[$label]+="$c "
        wall_runs[$label]+="$e "
        rss_runs[$label]+="$((m / 1024)) "
    done
done
median() { tr ' ' '\n' | grep -v '^$' | sort -g | awk '{ v[NR] = $1 } END { print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }
for arg in "$@"; do
    label=${arg%%=*}
    c=$(echo "${cpu_runs[$label]}" | median)
    printf '%-12s median of %d: wall %s s, CPU %s s = %.3f CPU-s / 1k pages, peak RSS %s MB\n' \
        "$label" "$ROUNDS" "$(echo "${wall_runs[$label]}" | median)" "$c" \
        "$(awk -v c="$c" -v p="$pages" 'BEGIN { print c / p * 1000 }')" \
        "$(echo "${rss_runs[$label]}" | median)" | tee -a "$WORK/results.txt"
done
# The change of each binary's CPU against the first's within a round, medianed over the rounds:
# the number to quote for a paired run (PAIRED=1), where both crawls of a round meet the same box.
for arg in "${@:2}"; do
    label=${arg%%=*}
    d=$(echo "$changes" | tr ' ' '\n' | grep "^$label:" | cut -d: -f2 | median)
    printf '%-12s CPU against %s, median of the rounds: %+.1f%%\n' "$label" "${1%%=*}" "$d" |
        tee -a "$WORK/results.txt"
done
