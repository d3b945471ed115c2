#!/usr/bin/env bash
# ab.sh LABEL=BINARY ... : an A/B of dragnet builds on the peerbench web, runs alternated.
#
#   tools/bench/ab.sh base=/tmp/dragnet-base new=target/release/dragnet
#   ROUNDS=5 tools/bench/ab.sh a=/tmp/a b=/tmp/b
#   ROUNDS=3 tools/bench/ab.sh glibc=/tmp/new tcmalloc=/tmp/new-with-tcmalloc-wrapper
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
# Settings (environment): PEERBENCH (../shared/peerbench beside the repository), WORK
# (/tmp/dragnet-ab: the web, generated once and kept, and the crawls), H and P (the web: 200 and
# 1000), PORT (8083, so it runs beside peers.sh's 8081), ROUNDS (3), plus dragnet_crawl.sh's own
# DN_PARTITIONS and DN_FETCH_PARTITIONS. Needs nginx and GNU time (peerbench's setup.sh installs
# both).
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
for round in $(seq 1 "$ROUNDS"); do
    for arg in "$@"; do
        label=${arg%%=*}
        bin=$(cd "$(dirname "${arg#*=}")" && pwd)/$(basename "${arg#*=}")
        out=$WORK/crawl-$label
        rm -rf "$out"
        sync
        sleep 3
        load=$(cut -d' ' -f1 /proc/loadavg)
        DRAGNET=$bin /usr/bin/time -f "%e %U %S %M" -o "$WORK/$label.time" \
            bash "$PEERBENCH/dragnet_crawl.sh" "$out" > "$WORK/$label.log" 2>&1 ||
            die "$label: the crawl failed; see $WORK/$label.log"
        read -r e u s m < "$WORK/$label.time"
        line=$(awk -v l="$label" -v r="$round" -v e="$e" -v u="$u" -v s="$s" -v m="$m" -v ld="$load" -v p="$pages" \
            'BEGIN { c = u + s; printf "%-12s round %d: wall %6.1f s, user %6.1f, sys %5.1f, CPU %6.1f s = %.3f CPU-s / 1k pages, peak RSS %d MB, load %s", l, r, e, u, s, c, c / p * 1000, m / 1024, ld }')
        echo "$line" | tee -a "$WORK/results.txt"
        cpu_runs[$label]+="$(awk -v u="$u" -v s="$s" 'BEGIN { print u + s }') "
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
