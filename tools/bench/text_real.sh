#!/usr/bin/env bash
# The cost of `[parse] text` on real pages: `dragnet reparse` with and without `--text` over a
# .warc.gz of the 150 real pages of tests/data/html/pages, REPS times over (their text is ~7% of
# their bytes; websim's pages are nearly all text, so tools/bench/export.sh shows the worst case).
#
#   tools/bench/text_real.sh [REPS]        # default 20 (444 MB of HTML, 3,000 pages)
#
# Three runs of each, alternated. Needs warcio (pip) to write the WARC.
set -euo pipefail
cd "$(dirname "$0")/../.."
REPS=${1:-20}
source "$(dirname "$0")/lib.sh"
bench_build
bench_workdir text-real
python3 tools/bench/real_pages_warc.py "$REPS" "$work/real.warc.gz"
echo "| run | reparse wall s | CPU s | reparse --text wall s | CPU s |"
echo "|---|--:|--:|--:|--:|"
for i in 1 2 3; do
    row="| $i"
    for t in "" "--text"; do
        rm -rf "$work/out"
        /usr/bin/time -o "$work/t" -f "%e %U %S" "$DRAGNET" reparse $t --warc "$work/real.warc.gz" \
            --out "$work/out" >/dev/null 2>&1
        read -r wall user sys < "$work/t"
        row="$row | $wall | $(awk -v u="$user" -v s="$sys" 'BEGIN { printf "%.2f", u + s }')"
    done
    echo "$row |"
done
