#!/usr/bin/env bash
# Archives out (issue 32, points 3 and 4): one websim crawl's WARC files converted between
# .warc.gz and .warc.zst, and the crawl exported as a WACZ package.
#
#   tools/bench/convert.sh [HOSTS] [PAGES]        # defaults: 100 hosts x 500 pages
#
# Rows: `dragnet warc convert --to zst FILES --out DIR` (gzip -> zstd), `--to gz` back, the
# crawl converted in place (`--crawl`, fetch results, indexes and markers rewritten), and
# `dragnet export --what wacz` of the .warc.zst crawl (converted to .warc.gz inside the
# package) and of the .warc.gz crawl (copied as is). Wall seconds, CPU seconds, MB/s of WARC
# read (wall), peak RSS. Prints a markdown report for docs/BENCHMARKS.md.
# Settings (environment): PORT (8499), KEEP=1 keeps the scratch directory.
set -euo pipefail
cd "$(dirname "$0")/../.."

HOSTS=${1:-100}
PAGES=${2:-500}
PORT=${PORT:-8499}

source "$(dirname "$0")/lib.sh"
need_gnu_time
bench_build
bench_workdir convert-bench

web=(--seed 1 --hosts "$HOSTS" --pages "$PAGES" --port "$PORT" --listeners 4 --hostile-every 0)
"$DRAGNET" websim truth "${web[@]}" --out "$work/truth" 2>/dev/null
grep -v '/robots\.txt$' "$work/truth/fetch.txt" > "$work/seeds.txt"
websim_serve "${web[@]}" --cache-mib 0
cat > "$work/crawl.toml" <<EOF
[crawl]
partitions = 1
[resolve]
hosts_files = ["$work/hosts"]
only = true
[fetch]
threads = 16
per_ip_connections = 16
default_delay_secs = 0.0
delay_factor = 0.0
max_retry_after_secs = 1.0
max_crawl_delay_secs = 0.0
allow_private_addresses = true
warc_compression = "gzip"
follow_per_host = 0
EOF
"$DRAGNET" init --config "$work/crawl.toml" --seeds "$work/seeds.txt" "$work/crawl" 2>/dev/null
crawl="$work/crawl"
echo "== fetch" >&2
"$DRAGNET" fetch --cycle 0 --partition 0 --progress quiet "$crawl" >/dev/null
kill "$server"; wait "$server" 2>/dev/null || true; server=""
warcs=("$crawl"/cycles/000000/warc/p0000-*.warc.gz)
gz_bytes=$(du -cb "${warcs[@]}" | tail -1 | cut -f1)

t() { /usr/bin/time -o "$1" -f "%e %U %S %M" "${@:2}"; }
echo "== convert gz -> zst" >&2
t "$work/to_zst.time" "$DRAGNET" warc convert --to zst --out "$work/zst" "${warcs[@]}" 2>/dev/null
zst_bytes=$(du -cb "$work"/zst/*.warc.zst | tail -1 | cut -f1)
echo "== convert zst -> gz" >&2
t "$work/to_gz.time" "$DRAGNET" warc convert --to gz --out "$work/gz" "$work"/zst/*.warc.zst 2>/dev/null
echo "== export wacz (gz crawl, copied)" >&2
t "$work/wacz_gz.time" "$DRAGNET" export --what wacz --out "$work/gz.wacz" "$crawl" 2>/dev/null
echo "== convert the crawl in place to zst" >&2
t "$work/crawl_zst.time" "$DRAGNET" warc convert --crawl "$crawl" --to zst 2>/dev/null
echo "== export wacz (zst crawl, converted inside)" >&2
t "$work/wacz_zst.time" "$DRAGNET" export --what wacz --out "$work/zst.wacz" "$crawl" 2>/dev/null
valid="not run (pip install wacz)"
if command -v wacz >/dev/null 2>&1; then
    valid=$(wacz validate -f "$work/zst.wacz" 2>&1 | tail -1)
fi

row() { # name timefile bytes-read
    read -r wall user sys rss < "$2"
    awk -v n="$1" -v w="$wall" -v u="$user" -v s="$sys" -v r="$rss" -v b="$3" 'BEGIN {
        printf "| %s | %.1f | %.1f | %.0f | %.0f |\n", n, w, u + s, b / w / 1e6, r / 1024 }'
}
cat <<EOF
### $(date -u +%Y-%m-%d) — warc convert and WACZ export, websim $HOSTS x $PAGES

- Machine: $(awk -F': ' '/model name/ {print $2; exit}' /proc/cpuinfo), $(nproc) cores, kernel $(uname -r)
- Command: \`tools/bench/convert.sh $HOSTS $PAGES\`; corpus: $((gz_bytes / 1000000)) MB of .warc.gz
  (one fetch of every page), $((zst_bytes / 1000000)) MB as .warc.zst (level 3, no dictionary)

| step | wall s | CPU s | MB/s of WARC read (wall) | peak RSS MB |
|---|--:|--:|--:|--:|
$(row "warc convert --to zst FILES (gzip -> zstd)" "$work/to_zst.time" "$gz_bytes")
$(row "warc convert --to gz FILES (zstd -> gzip)" "$work/to_gz.time" "$zst_bytes")
$(row "warc convert --crawl --to zst (in place)" "$work/crawl_zst.time" "$gz_bytes")
$(row "export --what wacz, .warc.gz crawl (copied)" "$work/wacz_gz.time" "$gz_bytes")
$(row "export --what wacz, .warc.zst crawl (to .warc.gz inside)" "$work/wacz_zst.time" "$zst_bytes")

- wacz validate: $valid
EOF
