#!/usr/bin/env bash
# Data out (issue 22): one websim crawl's WARC files (gzip, so the Python tools read them too)
# indexed, parsed with and without text, and exported, next to cdxj-indexer and warcio on the
# same files in the same run.
#
#   tools/bench/export.sh [HOSTS] [PAGES]        # defaults: 200 hosts x 1000 pages
#
# Rows: `dragnet index` vs `cdxj-indexer` (CDXJ of every WARC file); `dragnet parse` of the
# partition from its WARC files with `[parse] text` off and on (the WET file's cost); `dragnet
# reparse --text` vs a warcio script that reads every response and its payload (the Python
# baseline for one pass over the WARC files); `dragnet export` of pages, links, urls and text to
# Parquet. Wall seconds, CPU seconds, MB/s of WARC read, peak RSS. Targets: CDXJ >= 10x faster
# than cdxj-indexer; parse with text at most 30% slower than without. Prints a markdown report
# for docs/BENCHMARKS.md. Needs cdxj-indexer and warcio (pip; .ci/setup-extras installs them):
# their rows say "not installed" otherwise.
# Settings (environment): PORT (8498), KEEP=1 keeps the scratch directory.
set -euo pipefail
cd "$(dirname "$0")/../.."

HOSTS=${1:-200}
PAGES=${2:-1000}
PORT=${PORT:-8498}

source "$(dirname "$0")/lib.sh"
bench_build
bench_workdir export-bench

web=(--seed 1 --hosts "$HOSTS" --pages "$PAGES" --port "$PORT" --listeners 4 --hostile-every 0)
"$DRAGNET" websim truth "${web[@]}" --out "$work/truth" 2>/dev/null
grep -v '/robots\.txt$' "$work/truth/fetch.txt" > "$work/seeds.txt"
websim_serve "${web[@]}" --cache-mib 0

config() { # text: true|false
    cat <<EOF
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
parse = false
follow_per_host = 0
[parse]
text = $1
EOF
}
config false > "$work/crawl.toml"
"$DRAGNET" init --config "$work/crawl.toml" --seeds "$work/seeds.txt" "$work/crawl" 2>/dev/null
crawl="$work/crawl"
warcs=("$crawl"/cycles/000000/warc/p0000-*.warc.gz)

t() { /usr/bin/time -o "$1" -f "%e %U %S %M" "${@:2}"; }
echo "== fetch" >&2
t "$work/fetch.time" "$DRAGNET" fetch --cycle 0 --partition 0 --progress quiet "$crawl" >/dev/null
kill "$server"; wait "$server" 2>/dev/null || true; server=""
warcs=("$crawl"/cycles/000000/warc/p0000-*.warc.gz)
warc_mb=$(du -cm "${warcs[@]}" | tail -1 | cut -f1)
warc_bytes=$(du -cb "${warcs[@]}" | tail -1 | cut -f1)

echo "== parse, text off" >&2
t "$work/parse.time" "$DRAGNET" parse --cycle 0 --partition 0 "$crawl" >/dev/null
echo "== parse, text on" >&2
config true > "$crawl/crawl.toml"
rm -f "$crawl/cycles/000000/parse/p0000.done"
t "$work/parse_text.time" "$DRAGNET" parse --cycle 0 --partition 0 "$crawl" >/dev/null
wet_mb=$(du -cm "$crawl"/cycles/000000/warc/p0000-*.warc.wet.* | tail -1 | cut -f1)
# What the rest of the cycle needs for `export urls`.
for s in split merge prioritize; do "$DRAGNET" "$s" --cycle 0 --partition 0 "$crawl" >/dev/null 2>&1; done

echo "== index" >&2
t "$work/index.time" "$DRAGNET" index --warc "${warcs[@]}" --out "$work/dragnet.cdxj"
if command -v cdxj-indexer >/dev/null 2>&1; then
    t "$work/cdxj_indexer.time" cdxj-indexer -s "${warcs[@]}" -o "$work/cdxj-indexer.cdxj" \
        || echo "0 0 0 0" > "$work/cdxj_indexer.time"
else
    echo "not installed" > "$work/cdxj_indexer.time"
fi

echo "== reparse --text" >&2
t "$work/reparse.time" "$DRAGNET" reparse --text --warc "${warcs[@]}" --out "$work/reparse" >/dev/null
cat > "$work/warcio_read.py" <<'EOF'
import sys
from warcio.archiveiterator import ArchiveIterator
n = 0
for path in sys.argv[1:]:
    with open(path, 'rb') as f:
        for rec in ArchiveIterator(f):
            if rec.rec_type == 'response':
                rec.content_stream().read()
                n += 1
print(n)
EOF
if python3 -c 'import warcio' 2>/dev/null; then
    t "$work/warcio.time" python3 "$work/warcio_read.py" "${warcs[@]}" > "$work/warcio.out"
else
    echo "not installed" > "$work/warcio.time"
fi

for what in pages links urls text; do
    echo "== export $what" >&2
    t "$work/export_$what.time" "$DRAGNET" export --what "$what" --format parquet \
        --out "$work/$what.parquet" "$crawl" 2>"$work/export_$what.log" \
        || echo "failed" > "$work/export_$what.time"
done

row() { # name timefile [bytes read]
    if ! read -r wall user sys rss < "$2" || [ -z "${user:-}" ]; then
        echo "| $1 | $(cat "$2") | | | |"
        return
    fi
    awk -v n="$1" -v w="$wall" -v u="$user" -v s="$sys" -v r="$rss" -v b="${3:-$warc_bytes}" 'BEGIN {
        printf "| %s | %.1f | %.1f | %.0f | %.0f |\n", n, w, u + s, b / w / 1e6, r / 1024 }'
}
ratio() { # slower faster (wall)
    awk -v a="$(cut -d' ' -f1 "$1")" -v b="$(cut -d' ' -f1 "$2")" 'BEGIN { if (b > 0 && a > 0) printf "%.2f", a / b; else print "n/a" }'
}
lines() { [ -s "$1" ] && wc -l < "$1" || echo 0; }

cat <<EOF
### $(date -u +%Y-%m-%d) — data out: CDXJ, text, export, websim $HOSTS x $PAGES

- Machine: $(awk -F': ' '/model name/ {print $2; exit}' /proc/cpuinfo), $(nproc) cores, kernel $(uname -r)
- Command: \`tools/bench/export.sh $HOSTS $PAGES\`; corpus: ${warc_mb} MB of .warc.gz (one fetch of
  every page of the web); WET: ${wet_mb} MB

| step | wall s | CPU s | MB/s of WARC (wall) | peak RSS MB |
|---|--:|--:|--:|--:|
$(row "dragnet index ($(lines "$work/dragnet.cdxj") lines)" "$work/index.time")
$(row "cdxj-indexer 1.5.0 ($(lines "$work/cdxj-indexer.cdxj") lines)" "$work/cdxj_indexer.time")
$(row "dragnet parse, text off" "$work/parse.time")
$(row "dragnet parse, text on (WET)" "$work/parse_text.time")
$(row "dragnet reparse --text" "$work/reparse.time")
$(row "warcio: read every response ($(cat "$work/warcio.out" 2>/dev/null || echo 0))" "$work/warcio.time")
$(row "dragnet export pages" "$work/export_pages.time")
$(row "dragnet export links" "$work/export_links.time")
$(row "dragnet export urls" "$work/export_urls.time")
$(row "dragnet export text" "$work/export_text.time")

- CDXJ: cdxj-indexer / dragnet index = $(ratio "$work/cdxj_indexer.time" "$work/index.time")x (target >= 10x)
- Parse with text / without = $(ratio "$work/parse_text.time" "$work/parse.time") (target <= 1.30)
- warcio read / dragnet reparse --text = $(ratio "$work/warcio.time" "$work/reparse.time")x
EOF
