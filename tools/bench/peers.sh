#!/usr/bin/env bash
# dragnet next to wget2, wget, spider-rs and Scrapy on one generated web served by nginx on
# loopback: the shared peerbench harness (../shared/peerbench, beside the repository), with a
# dragnet row from this checkout's release build and the crawl settings recommended below.
#
#   tools/bench/peers.sh                      # 200 hosts x 1,000 pages, all peers (~10 min)
#   H=50 P=400 tools/bench/peers.sh           # a quick web
#   CRAWLERS=wget2 tools/bench/peers.sh       # wget2 and dragnet only
#
# Settings (environment): PEERBENCH (the harness, default ../shared/peerbench), H, P, CRAWLERS,
# CAP_S (bench.sh's), DN_PARTITIONS (16) and DN_FETCH_PARTITIONS (8) for dragnet's crawl (see
# $PEERBENCH/dragnet_crawl.sh for the rest of its crawl.toml: no delays, as the web has no
# crawl-delay, 16 connections per IP like the peers, WARC .warc.zst always written).
#
# The harness prints one table (pages, coverage of the ground truth, robots.txt violations, wall
# time, pages/s, CPU-s per 1,000 pages, peak RSS); its raw files stay in
# /tmp/peerbench/runs/<date>-H<H>-P<P>/. Record the table in docs/BENCHMARKS.md as printed: a
# speed claim is dragnet's row next to the peers' rows from the same run. wget2 sometimes stalls
# (80 s instead of 17 s on the same web): compare with the peers' best of several runs.
set -euo pipefail
repo=$(cd "$(dirname "$0")/../.." && pwd)
PEERBENCH=${PEERBENCH:-$repo/../shared/peerbench}
[ -f "$PEERBENCH/bench.sh" ] || {
    echo "peers.sh: no peerbench harness at $PEERBENCH (set PEERBENCH to its directory)" >&2
    exit 2
}
cd "$repo"
source tools/bench/lib.sh
bench_build
bash "$PEERBENCH/setup.sh" >&2
export DRAGNET
export DN_PARTITIONS=${DN_PARTITIONS:-16}
export DN_FETCH_PARTITIONS=${DN_FETCH_PARTITIONS:-8}
export DRAGNET_VERSION="dragnet $(git -C "$repo" rev-parse --short HEAD) (M=$DN_PARTITIONS, $DN_FETCH_PARTITIONS fetching)"
export DRAGNET_CMD="bash '$PEERBENCH/dragnet_crawl.sh' /tmp/peerbench/dn"
bash "$PEERBENCH/bench.sh"
