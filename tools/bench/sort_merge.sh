#!/usr/bin/env bash
# Run-file benchmark: external sort of N random 64-bit fingerprints with a 256 MiB budget, then a
# 16-way merge of the result, with the disk's sequential bandwidth (dd, direct I/O) and GNU sort /
# the zstd CLI measured on the same data in the same run as reference points.
#
# usage: tools/bench/sort_merge.sh [N] [WORKDIR]
#   N        fingerprints (default 100000000)
#   WORKDIR  parent directory for scratch files (default ${TMPDIR:-/tmp}); a fresh
#            dragnet-bench.XXXXXX directory is made in it and removed on exit (KEEP=1 keeps it).
# environment:
#   BUDGET=268435456   sorter budget in bytes (GNU sort gets the same, as -S)
#   WAYS=16            merge fan-in          SEED=42     generator seed
#   DD_MB=4096         size of the dd test file in MiB
#   WAIT_LOAD=1.0      wait (up to MAX_WAIT=900 s) until the 1-minute load average is below this
#   PERF=1             profile one extra merge and one read with perf record (0: skip)
#   PHASE_TIMEOUT=1800 seconds allowed per measured step
#   RESULTS=FILE       also write the final markdown report to FILE
#   CARGO_TARGET_DIR   honoured for the release build of the runbench example
set -euo pipefail
export LC_ALL=C

N=${1:-100000000}
PARENT=${2:-${TMPDIR:-/tmp}}
BUDGET=${BUDGET:-268435456}
WAYS=${WAYS:-16}
SEED=${SEED:-42}
DD_MB=${DD_MB:-4096}
WAIT_LOAD=${WAIT_LOAD:-}
MAX_WAIT=${MAX_WAIT:-900}
PERF=${PERF:-1}
PHASE_TIMEOUT=${PHASE_TIMEOUT:-1800}
COMMAND="$0 $*"

REPO=$(cd "$(dirname "$0")/../.." && pwd)
TARGET=${CARGO_TARGET_DIR:-$REPO/target}

say() { printf '== %s\n' "$*" >&2; }
die() { printf 'sort_merge.sh: %s\n' "$*" >&2; exit 1; }

# ---- prerequisites -------------------------------------------------------------------------
if [ ! -x /usr/bin/time ]; then
    say "installing GNU time (for peak RSS)"
    (apt-get update -qq && apt-get install -y -qq time) >/dev/null || die "cannot install time"
fi
for t in dd zstd sort awk df; do command -v "$t" >/dev/null || die "$t not found"; done

mkdir -p "$PARENT"
need_kb=$(( (N * 100 + DD_MB * 1048576) / 1024 ))
avail_kb=$(df -Pk "$PARENT" | awk 'NR==2 {print $4}')
[ "$avail_kb" -ge "$need_kb" ] || die "need ~$((need_kb / 1048576)) GiB free in $PARENT, have $((avail_kb / 1048576)) GiB"

W=$(mktemp -d "$PARENT/dragnet-bench.XXXXXX")
cleanup() {
    if [ "${KEEP:-0}" = 1 ]; then say "kept $W"; else rm -rf "$W"; fi
}
trap cleanup EXIT
trap 'exit 130' INT TERM
mkdir -p "$W/tmp"

say "building runbench (release)"
(cd "$REPO" && cargo build --release --quiet --example runbench) || die "build failed"
BIN=$TARGET/release/examples/runbench
[ -x "$BIN" ] || die "no binary at $BIN"

# ---- helpers -------------------------------------------------------------------------------
# jget FILE KEY: a scalar from the one-line JSON a runbench phase printed.
jget() { sed -n "s/.*\"$2\":\"\{0,1\}\([^,\"}]*\).*/\1/p" "$1" | head -1; }
# tget FILE FIELD: a field of /usr/bin/time -v output.
tget() { awk -F': ' -v k="$2" 'index($0, k) { v = $NF } END { print v }' "$1"; }
# to seconds from "h:mm:ss" or "m:ss.ss"
secs_of() { awk -F: '{ s = 0; for (i = 1; i <= NF; i++) s = s * 60 + $i; printf "%.3f", s }' <<<"$1"; }
calc() { awk "BEGIN { printf \"%.${2:-1}f\", $1 }"; }

# measure NAME CMD...: runs CMD under /usr/bin/time -v; stdout to $W/NAME.out, rusage to NAME.time.
measure() {
    local name=$1; shift
    say "$name: $*"
    timeout "$PHASE_TIMEOUT" /usr/bin/time -v -o "$W/$name.time" "$@" >"$W/$name.out" \
        || die "$name failed (see above)"
    [ ! -s "$W/$name.out" ] || sed 's/^/   /' "$W/$name.out" >&2
    local wall rss cpu
    wall=$(secs_of "$(tget "$W/$name.time" 'Elapsed (wall clock) time')")
    rss=$(tget "$W/$name.time" 'Maximum resident set size')
    cpu=$(tget "$W/$name.time" 'Percent of CPU this job got')
    printf '%s %s %s\n' "$wall" "$rss" "$cpu" >"$W/$name.rus"
    echo "   wall ${wall}s, peak RSS $((rss / 1024)) MiB, CPU $cpu" >&2
}
wall_of() { awk '{print $1}' "$W/$1.rus"; }
rss_mib() { awk '{printf "%.0f", $2 / 1024}' "$W/$1.rus"; }
cpu_of() { awk '{print $3}' "$W/$1.rus"; }
size_of() { stat -c %s "$1"; }
evict() { "$BIN" evict "$@" >/dev/null; }

# dd_rate FILE: MB/s (10^6) from dd's summary line.
dd_rate() {
    awk '/copied/ { split($0, a, ", "); b = $1; s = a[3]; sub(/ s.*/, "", s); printf "%.0f", b / s / 1e6 }' "$1"
}

# ---- wait for a quiet machine --------------------------------------------------------------
if [ -n "$WAIT_LOAD" ]; then
    waited=0
    while awk -v l="$WAIT_LOAD" '{ exit !($1 >= l) }' /proc/loadavg && [ "$waited" -lt "$MAX_WAIT" ]; do
        say "load $(cut -d' ' -f1-3 /proc/loadavg) >= $WAIT_LOAD; waiting (${waited}s so far)"
        sleep 30
        waited=$((waited + 30))
    done
fi

# ---- machine facts -------------------------------------------------------------------------
CPU_MODEL=$(lscpu 2>/dev/null | awk -F': +' '/^Model name/ {print $2; exit}')
CORES=$(nproc)
MEM_GIB=$(awk '/^MemTotal/ {printf "%.1f", $2 / 1048576}' /proc/meminfo)
KERNEL=$(uname -r)
DISK=$(df -PhT "$W" | awk 'NR==2 {printf "%s (%s), %s total, %s free", $1, $2, $3, $5}')
RUSTC=$(rustc --version)
COMMIT=$(cd "$REPO" && git rev-parse --short HEAD 2>/dev/null || echo unknown)
if [ -n "$(cd "$REPO" && git status --porcelain 2>/dev/null | head -1)" ]; then COMMIT="$COMMIT (+ uncommitted changes)"; fi
DATE=$(date -u '+%Y-%m-%d %H:%M UTC')
LOAD_START=$(cut -d' ' -f1-3 /proc/loadavg)
HAVE_PERF=no
if [ "$PERF" = 1 ] && command -v perf >/dev/null && perf stat -e task-clock true >/dev/null 2>&1; then HAVE_PERF=yes; fi
say "$CPU_MODEL, $CORES cores, $MEM_GIB GiB, kernel $KERNEL; load $LOAD_START"

# ---- disk bandwidth (direct I/O, bypassing the page cache) ---------------------------------
say "dd write/read, $DD_MB MiB, direct I/O"
dd if=/dev/zero of="$W/dd.bin" bs=1M count="$DD_MB" oflag=direct conv=fsync 2>"$W/dd-write.txt"
dd if="$W/dd.bin" of=/dev/null bs=1M iflag=direct 2>"$W/dd-read.txt"
rm -f "$W/dd.bin"
DD_WRITE=$(dd_rate "$W/dd-write.txt")
DD_READ=$(dd_rate "$W/dd-read.txt")
say "dd: write $DD_WRITE MB/s, read $DD_READ MB/s"

# ---- dragnet ---------------------------------------------------------------------------------
measure gen "$BIN" gen --n "$N" --seed "$SEED" --out "$W/raw.u64" --hex-out "$W/raw.hex"
# A direct-I/O read of real (random) data, in case the zero-filled dd file was special-cased.
dd if="$W/raw.u64" of=/dev/null bs=1M iflag=direct 2>"$W/dd-read2.txt"
DD_READ2=$(dd_rate "$W/dd-read2.txt")

evict "$W/raw.u64"
measure sort "$BIN" sort --input "$W/raw.u64" --budget "$BUDGET" --out "$W/sorted.run" --tmp "$W/tmp"
measure read-digest "$BIN" read --input "$W/sorted.run" --digest
measure split "$BIN" split --input "$W/sorted.run" --ways "$WAYS" --out-dir "$W/parts"
evict "$W/parts"
measure merge-cold "$BIN" merge --inputs "$W/parts" --out "$W/merged.run"
measure merge-warm "$BIN" merge --inputs "$W/parts" --out "$W/merged2.run"
rm -f "$W/merged2.run"
measure merge-null "$BIN" merge --inputs "$W/parts" --out "$W/unused.run" --null-sink
measure merge-dedup "$BIN" merge --inputs "$W/parts" --out "$W/seen.run" --dedup
rm -f "$W/seen.run"
measure merged-digest "$BIN" read --input "$W/merged.run" --digest
evict "$W/sorted.run"
measure read-cold "$BIN" read --input "$W/sorted.run"
measure read-warm "$BIN" read --input "$W/sorted.run"

# ---- verification: the benchmark must not measure garbage ----------------------------------
GEN_MS=$(jget "$W/gen.out" multiset)
S_REC=$(jget "$W/read-digest.out" records)
S_MS=$(jget "$W/read-digest.out" multiset)
S_ORD=$(jget "$W/read-digest.out" ordered)
M_REC=$(jget "$W/merged-digest.out" records)
M_ORD=$(jget "$W/merged-digest.out" ordered)
[ "$S_REC" = "$N" ] || die "verify: sorted run holds $S_REC records, expected $N"
[ "$S_MS" = "$GEN_MS" ] || die "verify: sorted run is not a permutation of the input ($S_MS vs $GEN_MS)"
[ "$M_REC" = "$N" ] && [ "$M_ORD" = "$S_ORD" ] || die "verify: merged run differs from the sorted run"
for w in merge-cold merge-warm merge-null merge-dedup; do
    [ "$(jget "$W/$w.out" records_out)" = "$N" ] || die "verify: $w wrote $(jget "$W/$w.out" records_out) records"
done
IDENTICAL=no
cmp -s "$W/sorted.run" "$W/merged.run" && IDENTICAL=yes
VERIFY="sorted run: $S_REC records, same multiset digest as the generator ($GEN_MS), keys in order (the reader checks); merged run: same ordered digest ($S_ORD); byte-identical files: $IDENTICAL"
say "verify ok: $VERIFY"

# ---- reference points on the same data -------------------------------------------------------
"$BIN" read --input "$W/sorted.run" --raw-out "$W/sorted.u64" >/dev/null
rm -f "$W/raw.u64"
evict "$W/raw.hex"
measure gnusort sort -S "$((BUDGET / 1048576))M" --parallel=1 -T "$W/tmp" -o "$W/sorted.hex" "$W/raw.hex"
rm -f "$W/raw.hex"
measure hexdigest "$BIN" hexdigest --input "$W/sorted.hex"
[ "$(jget "$W/hexdigest.out" ordered)" = "$S_ORD" ] || die "verify: GNU sort's output differs from dragnet's"
rm -f "$W/sorted.hex"
for l in 1 3; do
    measure "zstd$l-c" zstd -q -f --single-thread --no-asyncio "-$l" "$W/sorted.u64" -o "$W/sorted.u64.zst$l"
    measure "zstd$l-d" sh -c "zstd -q -d --no-asyncio -c '$W/sorted.u64.zst$l' >/dev/null"
done

# ---- profile of the merge ----------------------------------------------------------------------
# profile NAME CMD...: perf record of CMD; writes $W/NAME.prof (grouped shares, then flat profile)
# and $W/NAME.zstd (percent of samples in zstd).
profile() {
    local name=$1; shift
    say "perf record: $name"
    if ! perf record -q -F 999 -o "$W/$name.data" -- "$@" >/dev/null 2>"$W/$name.perf.err"; then
        echo "perf record failed: $(head -3 "$W/$name.perf.err")" >"$W/$name.prof"
        echo "?" >"$W/$name.zstd"
        return 0
    fi
    perf report -i "$W/$name.data" --stdio --no-children --sort dso,sym 2>/dev/null \
        | grep -v '^#' | grep -v '^$' | sed 's/ *$//' >"$W/$name.all" || true
    rm -f "$W/$name.data"
    # Where the time goes, grouped: zstd decompression / compression, key comparisons, the rest.
    awk '{ p = $1; sub(/%/, "", p); s = $0
           if (s ~ /ZSTD_decompress|HUF_decompress|FSE_decompress|ZSTD_decode|ZSTD_DCtx|ZSTD_copy|ZSTD_execSequence|ZSTD_buildFSETable|HUF_readDTable/) g = "zstd decompress"
           else if (s ~ /ZSTD_|HUF_|HIST_|FSE_/) g = "zstd compress"
           else if (s ~ /memcmp/) g = "memcmp (key comparisons)"
           else if (s ~ /memmove|memcpy/) g = "memmove/memcpy (key copies)"
           else if (s ~ /DecodedBlock::decode_/) g = "block decode (delta + transpose)"
           else if (s ~ /finish_into|BlockEncoder/) g = "block encode (delta + transpose)"
           else if (s ~ /xxh3|Xxh3/) g = "xxh3 checksums"
           else if (s ~ /\[k\]/) g = "kernel"
           else g = "merge loop, cursors, writer, other"
           t[g] += p }
         END { for (g in t) printf "%6.1f%%  %s\n", t[g], g }' "$W/$name.all" | sort -rn >"$W/$name.groups"
    awk '/zstd/ { z += $1 } END { printf "%.1f", z }' "$W/$name.groups" >"$W/$name.zstd"
    { cat "$W/$name.groups"; echo; awk '{ p = $1; sub(/%/, "", p); if (p + 0 >= 0.7) print }' "$W/$name.all" | head -25; } >"$W/$name.prof"
    sed 's/^/   /' "$W/$name.prof" >&2
}
if [ "$HAVE_PERF" = yes ]; then
    profile prof-merge "$BIN" merge --inputs "$W/parts" --out "$W/merged3.run"
    rm -f "$W/merged3.run"
    profile prof-read "$BIN" read --input "$W/sorted.run"
    PROFILE_MERGE=$(cat "$W/prof-merge.prof")
    PROFILE_READ=$(cat "$W/prof-read.prof")
    ZSTD_SHARE="zstd (compress + decompress) is $(cat "$W/prof-merge.zstd")% of the merge's samples"
else
    PROFILE_MERGE="perf not available (or PERF=0): no profile"
    PROFILE_READ=$PROFILE_MERGE
    ZSTD_SHARE="no profile"
fi
LOAD_END=$(cut -d' ' -f1-3 /proc/loadavg)

# ---- report ----------------------------------------------------------------------------------
RAW_MB=$(calc "$N * 8 / 1e6" 1)
row() { # step, what, seconds, records/s, raw MB/s, compressed MB/s, bytes/fp, RSS MiB, CPU
    printf '| %s | %s | %s | %s | %s | %s | %s | %s | %s |\n' "$@"
}
dragnet_row() { # name label bytes_for_fp compressed_bytes(or -)
    local name=$1 label=$2 fpbytes=$3 cbytes=$4 s
    s=$(jget "$W/$name.out" seconds)
    local cmb="-"
    [ "$cbytes" = - ] || cmb=$(calc "$cbytes / $s / 1e6" 0)
    local bpf="-"
    [ "$fpbytes" = - ] || bpf=$(calc "$fpbytes / $N" 3)
    row "$name" "$label" "$s" "$(calc "$N / $s / 1e6" 2) M" "$(calc "$N * 8 / $s / 1e6" 0)" "$cmb" "$bpf" "$(rss_mib "$name")" "$(cpu_of "$name")"
}
tool_row() { # name label outbytes(or -)
    local name=$1 label=$2 out=$3 s bpf="-"
    s=$(wall_of "$name")
    [ "$out" = - ] || bpf=$(calc "$out / $N" 3)
    row "$name" "$label" "$s" "$(calc "$N / $s / 1e6" 2) M" "$(calc "$N * 8 / $s / 1e6" 0)" "-" "$bpf" "$(rss_mib "$name")" "$(cpu_of "$name")"
}
SORTED_BYTES=$(size_of "$W/sorted.run")
PARTS_BYTES=$(jget "$W/split.out" out_bytes)
MERGE_CMBS=$(jget "$W/merge-cold.out" compressed_in_mb_per_s)
MERGE_WARM_CMBS=$(jget "$W/merge-warm.out" compressed_in_mb_per_s)
SORT_RSS=$(rss_mib sort)
MERGE_RSS=$(rss_mib merge-cold)
LIMIT_MIB=$((BUDGET / 1048576 + 64))
THEORY=$(awk -v n="$N" 'BEGIN { printf "%.2f", (log(exp(1)) / log(2) + 64 - log(n) / log(2)) / 8 }')
IO_PCT=$(calc "100 * $MERGE_CMBS / $DD_READ" 0)
if [ "$(calc "($MERGE_CMBS >= 0.5 * $DD_READ) ? 1 : 0" 0)" = 1 ]; then IO_OK="met"; else IO_OK="not met on I/O"; fi
if [ "$SORT_RSS" -le "$LIMIT_MIB" ] && [ "$MERGE_RSS" -le "$LIMIT_MIB" ]; then RSS_OK="met"; else RSS_OK="NOT met"; fi

report() {
cat <<EOF
### Run: N = $N, budget $BUDGET bytes, $WAYS-way merge

- Date: $DATE; commit $COMMIT
- Machine: $CPU_MODEL, $CORES cores, $MEM_GIB GiB RAM, kernel $KERNEL, $RUSTC
- Disk (workdir): $DISK
- Load average (1/5/15 min): $LOAD_START at start, $LOAD_END at end
- Command: \`$COMMAND\` (BUDGET=$BUDGET WAYS=$WAYS SEED=$SEED DD_MB=$DD_MB)
- Verification: $VERIFY; GNU sort's output has the same ordered digest.

| step | what | seconds | records/s | raw MB/s (8 B/fp) | compressed MB/s | bytes/fp on disk | peak RSS MiB | CPU |
|---|---|---|---|---|---|---|---|---|
$(row dd-write "dd if=/dev/zero bs=1M count=$DD_MB oflag=direct conv=fsync" - - "$DD_WRITE" - - - -)
$(row dd-read "dd bs=1M iflag=direct of the dd file" - - "$DD_READ" - - - -)
$(row dd-read-2 "dd bs=1M iflag=direct of the random raw input ($RAW_MB MB)" - - "$DD_READ2" - - - -)
$(dragnet_row sort "dragnet Sorter, $((BUDGET / 1048576)) MiB budget, raw input evicted from cache, key-only output (column groups, level 1) + fsync" "$SORTED_BYTES" -)
$(dragnet_row split "deal the sorted run round-robin into $WAYS runs" "$PARTS_BYTES" -)
$(dragnet_row merge-cold "$WAYS-way merge (KeepAll), inputs evicted from cache, key-only output (column groups, level 1) + fsync" "$(jget "$W/merge-cold.out" out_bytes)" "$(jget "$W/merge-cold.out" in_bytes)")
$(dragnet_row merge-warm "same, inputs in page cache" "$(jget "$W/merge-warm.out" out_bytes)" "$(jget "$W/merge-warm.out" in_bytes)")
$(dragnet_row merge-dedup "same with KeepFirst into a SEEN run, warm" "$(jget "$W/merge-dedup.out" out_bytes)" "$(jget "$W/merge-dedup.out" in_bytes)")
$(dragnet_row merge-null "same, merged records discarded (no writer), warm" - "$(jget "$W/merge-null.out" in_bytes)")
$(dragnet_row read-cold "RunReader over the sorted run, evicted from cache" "$SORTED_BYTES" "$SORTED_BYTES")
$(dragnet_row read-warm "same, in page cache" "$SORTED_BYTES" "$SORTED_BYTES")
$(tool_row gnusort "GNU sort -S $((BUDGET / 1048576))M --parallel=1, 16-hex-digit lines (17 B/fp), LC_ALL=C" -)
$(tool_row zstd1-c "zstd -1 --single-thread of the sorted raw fingerprints" "$(size_of "$W/sorted.u64.zst1")")
$(tool_row zstd1-d "zstd -d of that" -)
$(tool_row zstd3-c "zstd -3 --single-thread of the sorted raw fingerprints" "$(size_of "$W/sorted.u64.zst3")")
$(tool_row zstd3-d "zstd -d of that" -)

records/s and raw MB/s count N records of 8 bytes; compressed MB/s is the run-file bytes read per
second; MB = 10^6 bytes; RSS from /usr/bin/time -v; CPU = (user + sys) / wall. Sort spills: $(jget "$W/sort.out" spills) files,
$(jget "$W/sort.out" spill_bytes) bytes ($(jget "$W/sort.out" spill_bytes_per_fp) B per input record, spills use zstd level 1), $(jget "$W/sort.out" merge_passes) intermediate merge passes; sort time
$(jget "$W/sort.out" push_seconds) s reading + sorting + spilling, $(jget "$W/sort.out" finish_seconds) s final merge + write.

Targets:
- merge streams at >= 50% of sequential read bandwidth: cold merge reads $MERGE_CMBS MB/s of run files
  = $IO_PCT% of dd's $DD_READ MB/s ($IO_OK); warm (no I/O) $MERGE_WARM_CMBS MB/s; merge CPU $(cpu_of merge-cold); $ZSTD_SHARE.
- peak RSS <= budget + 64 MiB = $LIMIT_MIB MiB: sort $SORT_RSS MiB, merge $MERGE_RSS MiB ($RSS_OK).
- bytes/fp: sorted run $(calc "$SORTED_BYTES / $N" 3) vs entropy bound $THEORY (log2(e * 2^64 / N) / 8);
  zstd -1 $(calc "$(size_of "$W/sorted.u64.zst1") / $N" 3), zstd -3 $(calc "$(size_of "$W/sorted.u64.zst3") / $N" 3) on the raw sorted values.

Profile of a warm merge (perf record; grouped, then flat by DSO and symbol):

\`\`\`
$PROFILE_MERGE
\`\`\`

Profile of a warm read of the sorted run:

\`\`\`
$PROFILE_READ
\`\`\`
EOF
}
report
if [ -n "${RESULTS:-}" ]; then
    {
        report
        echo
        echo "Raw JSON lines:"
        echo
        echo '```'
        for f in "$W"/*.out; do [ -s "$f" ] && cat "$f"; done
        echo '```'
    } >"$RESULTS"
    say "report written to $RESULTS"
fi
