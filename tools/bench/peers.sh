#!/usr/bin/env bash
# dragnet next to wget2, wget, spider-rs and Scrapy on one generated web served by nginx on
# loopback: the shared peerbench harness (../shared/peerbench, beside the repository), with a
# dragnet row from this checkout's release build and the crawl settings recommended below.
#
#   tools/bench/peers.sh                      # 200 hosts x 1,000 pages, all peers (~10 min)
#   H=50 P=400 tools/bench/peers.sh           # a quick web
#   CRAWLERS=wget2 tools/bench/peers.sh       # wget2 and dragnet only
#   CRAWLERS="wget2 spider-lean" tools/bench/peers.sh   # what issue 31's targets compare with
#   RUNS=5 CRAWLERS="wget2 spider-lean" tools/bench/peers.sh   # five runs, and the targets over them
#
# Settings (environment): PEERBENCH (the harness, default ../shared/peerbench), H, P, CRAWLERS,
# CAP_S (bench.sh's), PEERBENCH_WORK (/tmp/peerbench), PEERBENCH_PORT (8081: another of
# 8082..8089 runs a copy of the harness on that port, with its own web and runs under
# PEERBENCH_WORK-portN, for a machine where someone else's web holds 127.0.1.x:8081),
# DRAGNET (a dragnet binary to run instead of this checkout's release build; DRAGNET_LABEL names
# it in the table), DN_PARTITIONS (16) and DN_FETCH_PARTITIONS (8) for dragnet's crawl (see
# $PEERBENCH/dragnet_crawl.sh for the rest of its crawl.toml: no delays, as the web has no
# crawl-delay, 16 connections per IP like the peers, the WARC in dragnet's default compression),
# RUNS (1: more repeats the whole run and ends with tools/bench/floor_summary.py over them),
# RAM_WEB (1: the web is served from a copy in RAM_DIR, default /dev/shm, removed on exit),
# WARM (1: a web served from the disk is read into the page cache before each crawler); with
# RAM_WEB=0 WARM=0 the harness runs as it is.
#
# The harness prints one table (pages, coverage of the ground truth, robots.txt violations, wall
# time, pages/s, CPU-s per 1,000 pages, peak RSS); its raw files stay in
# $PEERBENCH_WORK/runs/<date>-H<H>-P<P>/, dragnet's crawl in $PEERBENCH_WORK/dn/crawl. Record the
# table in docs/BENCHMARKS.md as printed: a speed claim is dragnet's row next to the peers' rows
# from the same run. wget2 sometimes stalls
# (80 s instead of 17 s on the same web): compare with the peers' best of several runs.
#
# Then tools/bench/floor.sh measures the floor on the same run (unless FLOOR=0): the CPU of
# compressing dragnet's WARC records as one stream with the codec and level the crawl used and of
# two SHA-1 digests of them, added to wget2's CPU per page, and checks dragnet's row against
# issue 31's targets (CPU <= 1.25x the floor, wall time, faster than spider-lean, peak RSS).
set -euo pipefail
repo=$(cd "$(dirname "$0")/../.." && pwd)
PEERBENCH=${PEERBENCH:-$repo/../shared/peerbench}
[ -f "$PEERBENCH/bench.sh" ] || {
    echo "peers.sh: no peerbench harness at $PEERBENCH (set PEERBENCH to its directory)" >&2
    exit 2
}
WORK=${PEERBENCH_WORK:-/tmp/peerbench}
PORT=${PEERBENCH_PORT:-8081}
shared=$PEERBENCH
own=""
# A private copy of the harness, made once, for the changes below; the shared one is not touched.
own_copy() {
    [ -z "$own" ] || return 0
    own=$(mktemp -d "${TMPDIR:-/tmp}/peerbench-harness.XXXXXX")
    trap 'rm -rf "$own"' EXIT
    cp -r "$PEERBENCH"/. "$own"
    chmod -R u+w "$own"
    PEERBENCH=$own
}
if [ "$PORT" != 8081 ]; then
    # bench.sh serves on port 8081: a copy of the harness with the port changed, and a work
    # directory of its own (the web's URLs name the port) sharing the installed peers.
    grep -q '^PORT=8081$' "$PEERBENCH/bench.sh" || {
        echo "peers.sh: $PEERBENCH/bench.sh sets no PORT=8081 line to change" >&2
        exit 2
    }
    own_copy
    sed -i "s/^PORT=8081\$/PORT=$PORT/" "$own/bench.sh"
    base=$WORK
    WORK=$WORK-port$PORT
    mkdir -p "$WORK" "$base"
    for d in bin venv target crawlee; do
        [ -e "$base/$d" ] && [ ! -e "$WORK/$d" ] && ln -s "$base/$d" "$WORK/$d"
    done
fi
if [ "${RAM_WEB:-1}" != 0 ]; then
    # The web is served from a copy in RAM (tmpfs, $RAM_DIR, default /dev/shm), which the
    # kernel cannot page out without swap: nginx then never waits on the disk inside a crawl,
    # for any crawler. On the reference box DAMON pages out page-cache memory not touched for a
    # minute (kdamond, action pageout), and a web read into the page cache before a crawler
    # (WARM) was partly on disk again by the crawl's end: nginx's workers in D state, the CPU
    # idle with I/O waiting, at a few points of every crawl (docs/BENCHMARKS.md, 2026-11-30,
    # twelfth session). The copy is made once per invocation (~30 s for the 3.9 GB web, outside
    # the timed part), checked against the web's stamp, and removed on exit; nginx is given a
    # copy of the web's nginx.conf with its roots in the copy. Without room in $RAM_DIR (the
    # web's size and 1 GB more) the web is served from the disk, as RAM_WEB=0 does.
    gen='python3 "$HERE/gen.py" --hosts "$H" --pages "$P" --port "$PORT" --out "$WEB" --log >&2'
    grep -qxF "$gen" "$PEERBENCH/bench.sh" && [ "$(grep -c '"$WEB/nginx.conf"' "$PEERBENCH/bench.sh")" = 3 ] || {
        echo "peers.sh: $PEERBENCH/bench.sh has not the gen.py line and three uses of" >&2
        echo "peers.sh: \"\$WEB/nginx.conf\" this expects (RAM_WEB=0 serves the web from the disk)" >&2
        exit 2
    }
    own_copy
    RAM_COPY=$(mktemp -d "${RAM_DIR:-/dev/shm}/peerbench-web.XXXXXX") || {
        echo "peers.sh: cannot make a directory in ${RAM_DIR:-/dev/shm} (set RAM_DIR, or RAM_WEB=0)" >&2
        exit 2
    }
    chmod 755 "$RAM_COPY" # nginx's workers run as another user
    export RAM_COPY
    trap 'rm -rf "$own" "$RAM_COPY"' EXIT
    cat > "$own/ram_web.sh" <<'SH'
# (peers.sh, RAM_WEB) sourced by bench.sh after gen.py: serve $WEB/www from $RAM_COPY.
SERVED_CONF="$WEB/nginx.conf"
need=$(( $(du -sk "$WEB/www" | cut -f1) + 1048576 ))
if cmp -s "$WEB/stamp" "$RAM_COPY/stamp" 2>/dev/null; then
  SERVED_CONF="$RAM_COPY/nginx.conf"
elif [ "$(df -Pk "$RAM_COPY" | awk 'NR == 2 { print $4 }')" -gt "$need" ]; then
  log "web: copying $WEB/www to $RAM_COPY (RAM: never paged out, nothing read from the disk)"
  rm -rf "$RAM_COPY/www" "$RAM_COPY/stamp"
  cp -a "$WEB/www" "$RAM_COPY/www"
  sed "s#root $WEB/www/#root $RAM_COPY/www/#" "$WEB/nginx.conf" > "$RAM_COPY/nginx.conf"
  cp "$WEB/stamp" "$RAM_COPY/stamp"
  SERVED_CONF="$RAM_COPY/nginx.conf"
else
  log "web: no room for it in $(dirname "$RAM_COPY") (${need} KB needed): served from the disk"
fi
SH
    awk -v line="$gen" '{ gsub(/"\$WEB\/nginx.conf"/, "\"$SERVED_CONF\"") } { print }
        $0 == line { print "source \"$HERE/ram_web.sh\"" }' "$own/bench.sh" > "$own/bench.sh.new"
    mv "$own/bench.sh.new" "$own/bench.sh"
fi
if [ "${WARM:-1}" != 0 ]; then
    # Every crawler starts with the whole web in the page cache, if it is served from the disk
    # (RAM_WEB=0, or no room in RAM): the web is read (outside the timed part) just before each
    # crawler. Without it a crawler meets whatever the kernel has
    # dropped since the last one read the web: on the reference box DAMON pages out memory not
    # touched for a minute (kdamond, action pageout), ~3% of the 3.7 GB web every 10 s while the
    # floor is measured, and nginx then reads pages from the disk inside a crawl, its worker in
    # D state stalling every connection it serves (docs/BENCHMARKS.md, 2026-11-30).
    crawling='  log "$name: crawling (cap ${cap}s)"'
    grep -qxF "$crawling" "$PEERBENCH/bench.sh" || {
        echo "peers.sh: $PEERBENCH/bench.sh has no line '$crawling' to warm the web before" >&2
        echo "peers.sh: (WARM=0 runs the harness as it is)" >&2
        exit 2
    }
    own_copy
    awk -v line="$crawling" '$0 == line {
        print "  if [ \"${SERVED_CONF:-$WEB/nginx.conf}\" = \"$WEB/nginx.conf\" ]; then"
        print "    find \"$WEB/www\" -type f -print0 | xargs -0 cat > /dev/null"
        print "    log \"$name: the web read into the page cache\""
        print "  fi"
    } { print }' "$own/bench.sh" > "$own/bench.sh.new"
    mv "$own/bench.sh.new" "$own/bench.sh"
fi
export PEERBENCH_WORK=$WORK
cd "$repo"
source tools/bench/lib.sh
if [ -n "${DRAGNET:-}" ]; then
    # A binary built elsewhere (a clean tree at a commit): DRAGNET_LABEL names it.
    [ -x "$DRAGNET" ] || {
        echo "peers.sh: DRAGNET=$DRAGNET is not an executable" >&2
        exit 2
    }
    commit=${DRAGNET_LABEL:-$DRAGNET}
else
    bench_build
    commit=$(git -C "$repo" rev-parse --short HEAD)
    git -C "$repo" diff --quiet HEAD -- src Cargo.toml Cargo.lock || commit="$commit+uncommitted"
fi
bash "$PEERBENCH/setup.sh" >&2
export DRAGNET
export DN_PARTITIONS=${DN_PARTITIONS:-16}
export DN_FETCH_PARTITIONS=${DN_FETCH_PARTITIONS:-8}
export DRAGNET_VERSION="dragnet $commit (M=$DN_PARTITIONS, $DN_FETCH_PARTITIONS fetching)"
# The shared crawl script (a private copy of the harness changes only bench.sh), so that the
# recorded command names a file that stays.
export DRAGNET_CMD="bash '$shared/dragnet_crawl.sh' '$WORK/dn'"
runs=$WORK/runs
# RUNS=N: the whole run (crawlers, then the floor) N times, and the targets over all of them
# (tools/bench/floor_summary.py): one run of this box says little (docs/BENCHMARKS.md).
RUNS=${RUNS:-1}
ours=()
for ((i = 1; i <= RUNS; i++)); do
    [ "$RUNS" = 1 ] || echo "peers.sh: run $i of $RUNS" >&2
    before=$(ls -1d "$runs"/*/ 2>/dev/null | sort || true)
    echo "peers.sh: load average before the crawlers: $(cut -d' ' -f1-3 /proc/loadavg)" >&2
    bash "$PEERBENCH/bench.sh"
    echo "peers.sh: load average after the crawlers: $(cut -d' ' -f1-3 /proc/loadavg)" >&2
    if [ "${FLOOR:-1}" != 0 ]; then
        run=$(comm -13 <(echo "$before") <(ls -1d "$runs"/*/ | sort) | tail -n1)
        [ -n "$run" ] || {
            echo "peers.sh: cannot find this run's directory under $runs" >&2
            exit 1
        }
        PEERBENCH_WORK=$WORK LABEL="$DRAGNET_VERSION" tools/bench/floor.sh "$run" "$WORK/dn/crawl"
        ours+=("$run")
    fi
done
if [ "$RUNS" != 1 ] && [ ${#ours[@]} -gt 0 ]; then
    echo
    echo "## issue 31's targets over $RUNS runs"
    echo
    python3 tools/bench/floor_summary.py "${ours[@]}"
fi
