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
# WARM (1: the web is read into the page cache before each crawler; 0 runs the harness as is).
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
if [ "${WARM:-1}" != 0 ]; then
    # Every crawler starts with the whole web in the page cache: the web is read (outside the
    # timed part) just before each crawler. Without it a crawler meets whatever the kernel has
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
        print "  find \"$WEB/www\" -type f -print0 | xargs -0 cat > /dev/null"
        print "  log \"$name: the web read into the page cache\""
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
