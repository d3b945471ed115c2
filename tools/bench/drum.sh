#!/usr/bin/env bash
# The URL-seen check+update at scale (docs/design.md §5, IRLbot's DRUM): a seen set of S fingerprints,
# built with the external sorter, merged in one sequential pass with a sorted batch of B incoming
# fingerprints of which a fraction are new (`dragnet::merge::check_update`, the core of
# `dragnet merge`), for several S. Caches are dropped before each merge (cold reads), and the
# disk's sequential bandwidth is measured in the same run with dd (O_DIRECT, 2 GiB): reading
# alone, and reading while another dd writes as much (a merge writes about what it reads, and a
# disk that shares one bandwidth between the two caps it there).
#
#   tools/bench/drum.sh [B] [S...]        # defaults: B = 10^8, S = 10^7 10^8 10^9
#
# Needs ~14 bytes of disk per seen fingerprint at the largest S (raw input, sorted run, new
# run); TMPDIR chooses where. Settings: BUDGET (sort memory, 256 MiB), NEW_FRAC (0.2), KEEP=1,
# PROFILE=1 (a perf profile of each merge, by thread, appended to the report), DRUM_LEVEL (zstd
# level of the merge outputs, default: the key-only scheme's level 1).
# Prints a markdown report for docs/BENCHMARKS.md.
set -euo pipefail
cd "$(dirname "$0")/../.."

B=${1:-100000000}
shift || true
SIZES=("$@")
[ ${#SIZES[@]} -gt 0 ] || SIZES=(10000000 100000000 1000000000)
BUDGET=${BUDGET:-268435456}
NEW_FRAC=${NEW_FRAC:-0.2}

echo "== building runbench (release)" >&2
cargo build --release -q --example runbench
RB="${CARGO_TARGET_DIR:-target}/release/examples/runbench"

work=$(mktemp -d "${TMPDIR:-/tmp}/drum-bench.XXXXXX")
cleanup() { [ "${KEEP:-0}" = 1 ] || rm -rf "$work"; }
trap cleanup EXIT INT TERM

field() { python3 -c 'import json,sys; print(json.loads(sys.argv[1])[sys.argv[2]])' "$1" "$2"; }

rows=()
# The disk's sequential read bandwidth: a 2 GiB file of random bytes, written and read around
# the page cache, read three times (this virtual disk varies by tens of percent between reads);
# the median is what the merges are compared with. Then the same read three times while a
# second dd writes 2 GiB: a merge reads and writes about the same bytes at once.
echo "== disk bandwidth (dd, O_DIRECT)" >&2
dd_read() { dd if="$work/dd.bin" of=/dev/null bs=8M iflag=direct 2>&1 | awk '/copied/ {printf "%.0f\n", $1 / $(NF-3) / 1e6}'; }
dd if=/dev/urandom of="$work/dd.bin" bs=8M count=256 oflag=direct status=none
dd_runs=$(for _ in 1 2 3; do dd_read; done | sort -n | tr '\n' ' ')
dd_rw_runs=$(for _ in 1 2 3; do
    dd if="$work/dd.bin" of="$work/dd-w.bin" bs=8M oflag=direct status=none &
    dd_read
    wait
    rm -f "$work/dd-w.bin"
done | sort -n | tr '\n' ' ')
rm -f "$work/dd.bin"
dd_mbs="$(echo "$dd_runs" | awk '{print $2}') MB/s"
dd_rw_mbs="$(echo "$dd_rw_runs" | awk '{print $2}') MB/s"
for S in "${SIZES[@]}"; do
    echo "== seen set of $S" >&2
    "$RB" gen --n "$S" --seed 1 --out "$work/seen.u64" >/dev/null
    "$RB" sort --input "$work/seen.u64" --budget "$BUDGET" --out "$work/seen.run" --tmp "$work" > "$work/sort-seen.json"
    rm -f "$work/seen.u64"
    echo "== batch of $B ($NEW_FRAC new)" >&2
    "$RB" gen-batch --seen-n "$S" --seen-seed 1 --n "$B" --new-frac "$NEW_FRAC" --seed 7 --out "$work/batch.u64" > "$work/gen-batch.json"
    "$RB" sort --input "$work/batch.u64" --budget "$BUDGET" --out "$work/batch.run" --tmp "$work" >/dev/null
    rm -f "$work/batch.u64"
    "$RB" evict "$work/seen.run" "$work/batch.run" >/dev/null
    echo "== check+update" >&2
    if [ "${PROFILE:-0}" = 1 ] && command -v perf >/dev/null; then
        # The profile asked for when the target is missed: where each thread spends its time.
        perf record -q -o "$work/perf.data" "$RB" drum --seen "$work/seen.run" --batch "$work/batch.run" \
            --out-seen "$work/seen2.run" --out-new "$work/new.run" >/dev/null 2>&1
        { echo "#### profile, seen = $S (perf, share of samples by thread, then by thread and symbol)"; echo '```'
          perf report -i "$work/perf.data" --no-children --sort comm --stdio 2>/dev/null | grep -E '^ +[0-9]'
          perf report -i "$work/perf.data" --no-children --sort comm,sym --percent-limit 1.5 --stdio 2>/dev/null | grep -E '^ +[0-9]'
          echo '```'; } >> "$work/profiles.md"
        rm -f "$work/seen2.run" "$work/new.run" "$work/perf.data"
        "$RB" evict "$work/seen.run" "$work/batch.run" >/dev/null
    fi
    out=$(/usr/bin/time -o "$work/drum.time" -f "%e %U %S %M" "$RB" drum --seen "$work/seen.run" --batch "$work/batch.run" \
        --out-seen "$work/seen2.run" --out-new "$work/new.run")
    read -r wall user sys rss < "$work/drum.time"
    seen_mb=$(( $(stat -c %s "$work/seen.run") / 1000000 ))
    in_mbs=$(field "$out" in_mb_per_s)
    share=$(awk -v a="$in_mbs" -v d="${dd_mbs%% *}" 'BEGIN {printf "%.0f%%", 100 * a / d}')
    share_rw=$(awk -v a="$in_mbs" -v d="${dd_rw_mbs%% *}" 'BEGIN {printf "%.0f%%", 100 * a / d}')
    rows+=("| $S | $B | $(field "$out" new) | $wall | $(awk -v u="$user" -v s="$sys" 'BEGIN {printf "%.1f", u + s}') | $(field "$out" records_per_s) | $in_mbs | $share | $share_rw | $(field "$out" ns_per_incoming) | $seen_mb | $(( rss / 1024 )) |")
    rm -f "$work/seen.run" "$work/batch.run" "$work/seen2.run" "$work/new.run"
done

cat <<EOF
### $(date -u +%Y-%m-%d) — DRUM check+update, batch of $B incoming ($NEW_FRAC new)

- Machine: $(awk -F': ' '/model name/ {print $2; exit}' /proc/cpuinfo), $(nproc) cores, kernel $(uname -r); disk sequential read (dd, O_DIRECT, 8 MiB blocks, 2 GiB, median of $dd_runs MB/s): $dd_mbs; read while a second dd writes (median of $dd_rw_runs MB/s): $dd_rw_mbs
- Command: \`tools/bench/drum.sh $B ${SIZES[*]}\` (sort budget $BUDGET bytes); caches dropped before each merge
- Commit: $(git rev-parse --short HEAD)$(git diff --quiet || echo ' (+ uncommitted changes)'); load average at end: $(cut -d' ' -f1-3 /proc/loadavg)

| seen | incoming | new | wall s | CPU s | records/s | MB/s read | of dd read | of dd read+write | ns per incoming | seen run MB | peak RSS MiB |
|---|---|---|---|---|---|---|---|---|---|---|---|
$(printf '%s\n' "${rows[@]}")
EOF
[ -f "$work/profiles.md" ] && { echo; cat "$work/profiles.md"; }
true
