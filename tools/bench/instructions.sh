#!/usr/bin/env bash
# Instructions per fetched page: an A/B of builds that does not depend on the box's noise.
#
#   tools/bench/instructions.sh                          # this checkout's release build
#   tools/bench/instructions.sh /tmp/old/dragnet target/release/dragnet   # A/B of two builds
#
# On a shared 2-core VM the CPU-s of one crawl vary by 10-15% between runs minutes apart (the
# peerbench rows in docs/BENCHMARKS.md), more than most single steps of a lean path save, and the
# VM has no hardware counters (`perf stat -e instructions`: not supported). So each build crawls
# the same websim web for one cycle under valgrind's cachegrind (`--cache-sim=no`: instructions
# only, Ir), and the script prints instructions per fetched page. Two runs of one build differ
# by under 0.1%.
#
# What it counts: user-space instructions of the dragnet process (not the kernel's socket and
# file work, not websim's). Under valgrind the CPU features differ: the SHA-1 digests run the
# portable code instead of the SHA-NI instructions of a real run (about a third of the count),
# and memcpy takes its AVX2 variant. So compare builds with it, and take time on the peer web
# (tools/bench/peers.sh) for the absolute numbers.
#
# Settings (environment): HOSTS (8) and PAGES (1000) of the web (websim, seed 1, no hostile
# hosts, no delays), PORT (8497), PARTITIONS (4), TOP (15: the functions listed with the first build's
# count, 0 for none). Needs valgrind (apt-get install valgrind).
set -euo pipefail
cd "$(dirname "$0")/../.."
. tools/bench/lib.sh
command -v valgrind >/dev/null || { echo "instructions.sh: needs valgrind (apt-get install valgrind)" >&2; exit 2; }
HOSTS=${HOSTS:-8} PAGES=${PAGES:-1000} PARTITIONS=${PARTITIONS:-4} TOP=${TOP:-15}
PORT=${PORT:-8497}
if [ $# -eq 0 ]; then
    bench_build
    set -- "$DRAGNET"
fi
bench_workdir dragnet-instructions
DRAGNET=$1
websim_serve --seed 1 --hosts "$HOSTS" --pages "$PAGES" --port "$PORT" --hostile-every 0 \
    --max-crawl-delay-ms 0
websim_home_seeds "$PORT"
first=1
printf '%-40s %8s %16s %12s\n' build pages instructions per-page
for bin in "$@"; do
    w=$work/crawl-$(echo "$bin" | md5sum | cut -c1-8)
    mkdir -p "$w"
    {
        printf '[crawl]\nname = "instructions"\npartitions = %s\n' "$PARTITIONS"
        websim_crawl_toml
        printf 'threads = 16\nper_ip_connections = 16\n[prioritize]\nfetch_budget = 1000000\n'
        printf 'max_urls_per_host = 100000\n[cycle]\nfetch_partitions = %s\n' "$PARTITIONS"
    } >"$w/crawl.toml"
    "$bin" init --config "$w/crawl.toml" --seeds "$work/seeds.txt" "$w/crawl" >/dev/null 2>&1
    valgrind --tool=cachegrind --cache-sim=no --cachegrind-out-file="$w/cg.out" \
        "$bin" cycle --max-cycles 1 "$w/crawl" >"$w/log" 2>&1 || {
        echo "instructions.sh: the crawl under valgrind failed: $(tail -3 "$w/log")" >&2
        exit 1
    }
    pages=$("$bin" status "$w/crawl" | grep -o '[0-9,]* fetched' | head -1 | tr -d ',' | cut -d' ' -f1)
    ir=$(awk '/^summary:/ {print $2}' "$w/cg.out")
    [ "${pages:-0}" -gt 0 ] || { echo "instructions.sh: $bin fetched nothing ($w/log)" >&2; exit 1; }
    printf '%-40s %8d %16d %12d\n' "$bin" "$pages" "$ir" $((ir / pages))
    if [ "$first" = 1 ] && [ "$TOP" -gt 0 ]; then
        cg_annotate "$w/cg.out" 2>/dev/null | awk '/file:function/ {on=1; next} on && NF' \
            | head -"$TOP" | sed 's#/root/.cargo/registry/src/[^/]*/##; s#/rustc/[0-9a-f]*/##' | cut -c1-150 >"$work/top.txt" || true
    fi
    first=0
done
if [ -s "$work/top.txt" ]; then
    echo
    echo "top functions of $1 (self instructions, by source file):"
    cat "$work/top.txt"
fi
