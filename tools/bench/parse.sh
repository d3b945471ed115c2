#!/usr/bin/env bash
# Parse throughput against fetch throughput, per core, on one corpus: a websim web (served by
# `dragnet websim serve` on loopback) fetched by `dragnet fetch` into .warc.zst files, then
# parsed by `dragnet parse` (the crawl's fetch results and WARCs) and `dragnet reparse` (the same
# WARC files read from the start, as for anyone's WARCs).
#
#   tools/bench/parse.sh [HOSTS] [PAGES]        # defaults: 200 hosts x 250 pages
#
# Pages/s per core = pages / (user + system CPU seconds) of the process, so the numbers do not
# depend on what else shares the machine. The target (issue 6): parse >= 5x the fetch stage's
# pages/s per core. Prints a markdown report for docs/BENCHMARKS.md.
# Settings (environment): PORT (8497), KEEP=1 keeps the scratch directory.
set -euo pipefail
cd "$(dirname "$0")/../.."

HOSTS=${1:-200}
PAGES=${2:-250}
PORT=${PORT:-8497}

source "$(dirname "$0")/lib.sh"
bench_build
bench_workdir parse-bench

web=(--seed 1 --hosts "$HOSTS" --pages "$PAGES" --port "$PORT" --listeners 4 --hostile-every 0)
"$DRAGNET" websim truth "${web[@]}" --out "$work/truth" 2>/dev/null
grep -v '/robots\.txt$' "$work/truth/fetch.txt" > "$work/seeds.txt"
websim_serve "${web[@]}" --cache-mib 0

{
    echo '[crawl]'
    echo 'partitions = 1'
    echo '[resolve]'
    echo "hosts_files = [\"$work/hosts\"]"
    echo 'only = true'
    echo '[fetch]'
    echo 'threads = 16'
    echo 'per_ip_connections = 16'
    echo 'default_delay_secs = 0.0'
    echo 'delay_factor = 0.0'
    echo 'max_retry_after_secs = 1.0'
    echo 'max_crawl_delay_secs = 0.0'
    echo 'allow_private_addresses = true'
} > "$work/crawl.toml"
"$DRAGNET" init --config "$work/crawl.toml" --seeds "$work/seeds.txt" "$work/crawl" 2>/dev/null

t() { /usr/bin/time -o "$1" -f "%e %U %S %M" "${@:2}"; }
echo "== fetch" >&2
t "$work/fetch.time" "$DRAGNET" fetch --cycle 0 --partition 0 --progress quiet --json "$work/crawl" > "$work/fetch.json"
kill "$server"; wait "$server" 2>/dev/null || true; server=""
echo "== parse" >&2
t "$work/parse.time" "$DRAGNET" parse --cycle 0 --partition 0 --json "$work/crawl" > "$work/parse.json"
echo "== reparse" >&2
t "$work/reparse.time" "$DRAGNET" reparse --warc "$work"/crawl/cycles/000000/warc/*.warc.zst \
    --out "$work/reparse" --json > "$work/reparse.json"

count() { python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["counts"].get(sys.argv[2], 0))' "$1" "$2"; }
fetch_pages=$(count "$work/fetch.json" requests)
parse_pages=$(count "$work/parse.json" pages)
parse_html=$(count "$work/parse.json" html_pages)
parse_bytes=$(count "$work/parse.json" bytes)
parse_links=$(count "$work/parse.json" links)
reparse_pages=$(count "$work/reparse.json" pages)
reparse_bytes=$(count "$work/reparse.json" bytes)
warc_mb=$(du -sm "$work/crawl/cycles/000000/warc" | cut -f1)

row() { # name pages bytes timefile extra
    read -r wall user sys rss < "$4"
    awk -v n="$1" -v p="$2" -v b="$3" -v w="$wall" -v u="$user" -v s="$sys" -v r="$rss" -v x="$5" 'BEGIN {
        c = u + s; printf "| %s | %d | %.1f | %.1f | %.0f | %.1f | %.0f | %s |\n",
            n, p, w, c, p / c, b / c / 1e6, r / 1024, x }'
}
per_core() { read -r _ user sys _ < "$2"; awk -v p="$1" -v u="$user" -v s="$sys" 'BEGIN { printf "%.0f", p / (u + s) }'; }
fetch_pc=$(per_core "$fetch_pages" "$work/fetch.time")
parse_pc=$(per_core "$parse_pages" "$work/parse.time")

cat <<EOF
### $(date -u +%Y-%m-%d) — parse vs fetch per core, websim $HOSTS x $PAGES

- Machine: $(awk -F': ' '/model name/ {print $2; exit}' /proc/cpuinfo), $(nproc) cores, kernel $(uname -r)
- Command: \`tools/bench/parse.sh $HOSTS $PAGES\`; corpus: ${warc_mb} MB of .warc.zst written by the fetch stage
- Commit: $(git rev-parse --short HEAD)$(git diff --quiet || echo ' (+ uncommitted changes)'); load average at end: $(cut -d' ' -f1-3 /proc/loadavg)

| stage | pages | wall s | CPU s | pages/s per core | decoded MB/s per core | peak RSS MiB | notes |
|---|---|---|---|---|---|---|---|
$(row "fetch (16 threads)" "$fetch_pages" 0 "$work/fetch.time" "requests incl. robots.txt; websim (uncached) shares the cores")
$(row "parse" "$parse_pages" "$parse_bytes" "$work/parse.time" "$parse_html HTML pages, $parse_links links; one record read per page by offset")
$(row "reparse" "$reparse_pages" "$reparse_bytes" "$work/reparse.time" "the same WARCs streamed from the start")

Parse / fetch, pages per core: $(awk -v a="$parse_pc" -v b="$fetch_pc" 'BEGIN { printf "%.1fx", a / b }') (target >= 5x).
EOF
