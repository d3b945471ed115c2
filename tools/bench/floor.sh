#!/usr/bin/env bash
# The floor of a crawler that archives (issue 31, point 1): what wget2 spends per page plus what
# the archive itself must cost, measured in the same run as the peers, and dragnet's row checked
# against the targets.
#
#   tools/bench/floor.sh [RUN_DIR] [CRAWL_DIR]
#
# RUN_DIR is a peerbench run directory with wget2's and dragnet's rows (default: the newest
# /tmp/peerbench/runs/*); CRAWL_DIR is the dragnet crawl of that run (default
# /tmp/peerbench/dn/crawl, where tools/bench/peers.sh puts it). tools/bench/peers.sh runs this
# after the crawlers unless FLOOR=0.
#
# What it measures: every WARC record the crawl wrote, decompressed into one stream (warcinfo,
# request, response, metadata and revisit records: every byte the WARC writer had to compress),
# then, with the CLI tools and one core each,
#   - compression of that stream as ONE stream with the codec and level the crawl used: the codec
#     from the WARC file names (.warc.zst, .warc.gz), the level from the crawl's crawl.toml
#     ([fetch] warc_level), or else measured on the crawl's first records (each compressed again
#     by the CLI at every level; the level whose sizes come closest), or LEVEL=N; `zstd -N --single-thread` for zstd, `gzip -N`
#     and `libdeflate-gzip -N` for gzip (installed here when missing: libdeflate-tools; the
#     cheaper of the two is the floor);
#   - two SHA-1 digests of the same bytes (the WARC block and payload digests), with Python's
#     hashlib (OpenSSL), both fed from the same buffers.
# The archive's CPU-s per 1,000 pages is that CPU over dragnet's pages. The floor is wget2's CPU-s
# per 1,000 pages (same run) plus the archive's. It prints:
#   - CPU: dragnet's CPU-s per 1,000 pages as a multiple of the floor (target <= 1.25);
#   - wall: dragnet's wall time against 1.2 x ((floor x pages / 1000 + the server's CPU-s during
#     dragnet's crawl) / cores), what the cores can do while archiving;
#   - spider-rs lean's wall time in the same run, if it ran (target: dragnet faster);
#   - dragnet's peak RSS (target <= 256 MB).
# Each measurement takes the least CPU of REPEAT (2) runs. The machine may be shared: the load
# average is printed before and after, and CPU-s per page is what to trust.
#
# Settings (environment): LEVEL (the WARC level, if the crawl's cannot be read), REPEAT (2),
# LABEL (names dragnet's binary in the report; default: this checkout's commit),
# SCRATCH (where the stream goes: /dev/shm if it has room, else TMPDIR), KEEP=1 (keep it),
# OUT (also write the report here; it always goes to RUN_DIR/floor.md and floor.json).
set -euo pipefail
repo=$(cd "$(dirname "$0")/../.." && pwd)
WORK=${PEERBENCH_WORK:-/tmp/peerbench}
RUN=${1:-$(ls -1dt "$WORK"/runs/*/ 2>/dev/null | head -n1)}
RUN=${RUN%/}
CRAWL=${2:-$WORK/dn/crawl}
REPEAT=${REPEAT:-2}
die() { echo "floor.sh: $*" >&2; exit 2; }
log() { printf '[floor %s] %s\n' "$(date +%H:%M:%S)" "$*" >&2; }
[ -n "$RUN" ] && [ -f "$RUN/results.json" ] || die "no peerbench run with results.json (${RUN:-none}); run tools/bench/peers.sh first"
[ -d "$CRAWL/cycles" ] || die "no dragnet crawl at $CRAWL"
command -v python3 >/dev/null || die "needs python3"
[ -x /usr/bin/time ] || die "needs GNU time (/usr/bin/time; apt-get install time)"
load_before=$(cut -d' ' -f1-3 /proc/loadavg)

# ---------------------------------------------------------------- the WARC files and codec
mapfile -t warcs < <(find "$CRAWL/cycles" -path '*/warc/*' -type f \
    \( -name '*.warc.zst' -o -name '*.warc.gz' -o -name '*.warc' \) ! -name '*.warc.wet*' | sort)
((${#warcs[@]})) || die "no WARC files under $CRAWL/cycles/*/warc/"
codecs=$(printf '%s\n' "${warcs[@]}" | sed -e 's/.*\.warc\.zst$/zstd/' -e 's/.*\.warc\.gz$/gzip/' \
    -e 's/.*\.warc$/none/' | sort -u)
[ "$(wc -l <<<"$codecs")" = 1 ] || die "WARC files of several codecs: $(echo $codecs)"
codec=$codecs
[ "$codec" != none ] || die "the crawl wrote uncompressed WARC files: no compression to measure"
# A gzip WARC is written with libdeflate: its floor is libdeflate-gzip's, not GNU gzip's (which
# costs ~4x as much and would flatter the crawl). Installed here when missing (Debian), and the
# floor refuses to run without it.
if [ "$codec" = gzip ] && ! command -v libdeflate-gzip >/dev/null; then
    if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null; then
        log "installing libdeflate-tools (libdeflate-gzip: the floor of a gzip WARC)"
        DEBIAN_FRONTEND=noninteractive apt-get -o DPkg::Lock::Timeout=300 install -y \
            --no-install-recommends libdeflate-tools >&2 ||
            { apt-get -o DPkg::Lock::Timeout=300 update >&2 &&
                DEBIAN_FRONTEND=noninteractive apt-get -o DPkg::Lock::Timeout=300 install -y \
                    --no-install-recommends libdeflate-tools >&2; } || true
    fi
    command -v libdeflate-gzip >/dev/null ||
        die "a gzip WARC's floor needs libdeflate-gzip (apt-get install libdeflate-tools): GNU gzip alone would flatter the crawl"
fi

# The level: LEVEL, else crawl.toml's [fetch] warc_level, else measured from the WARC itself
# (the first records, each compressed again by the CLI at each level as the writer compresses
# a record, one frame or member; the level whose sizes come closest), else the codec's default
# in FetchSection::warc_level (src/config/fetch.rs), else the library's own default.
level_from=""
level=${LEVEL:-}
[ -n "$level" ] && level_from="LEVEL"
if [ -z "$level" ] && [ -f "$CRAWL/crawl.toml" ]; then
    level=$(python3 - "$CRAWL/crawl.toml" <<'PY'
import sys, tomllib
c = tomllib.load(open(sys.argv[1], "rb"))
v = c.get("fetch", {}).get("warc_level")
print("" if v is None else v)
PY
)
    [ -n "$level" ] && level_from="crawl.toml [fetch] warc_level"
fi
if [ -z "$level" ]; then
    probe=$(mktemp -d)
    level=$(python3 - "$codec" "${warcs[0]}" "$probe" <<'PY'
import itertools, os, struct, subprocess, sys, zlib
codec, path, tmp = sys.argv[1:]
data = open(path, "rb").read(64 << 20)

def zstd_frames(b):
    """(offset, length) of the data frames of a zstd file, skippable frames left out."""
    i = 0
    while i + 8 <= len(b):
        magic = struct.unpack_from("<I", b, i)[0]
        if magic & 0xFFFFFFF0 == 0x184D2A50:
            i += 8 + struct.unpack_from("<I", b, i + 4)[0]
            continue
        if magic != 0xFD2FB528:
            return
        fhd = b[i + 4]
        fcs_flag, single, checksum, did = fhd >> 6, (fhd >> 5) & 1, (fhd >> 2) & 1, fhd & 3
        j = i + 5 + (0 if single else 1) + [0, 1, 2, 4][did] + [1 if single else 0, 2, 4, 8][fcs_flag]
        while j + 3 <= len(b):
            h = int.from_bytes(b[j:j + 3], "little")
            last, btype, size = h & 1, (h >> 1) & 3, h >> 3
            j += 3 + (1 if btype == 1 else size)
            if last:
                break
        j += 4 if checksum else 0
        if j > len(b):
            return
        yield i, j - i
        i = j

def gzip_members(b):
    i, view = 0, memoryview(b)
    while i < len(b):
        d = zlib.decompressobj(wbits=31)
        j = i
        try:
            while not d.eof and j < len(b):  # fed in pieces: a member's end, no copy of the rest
                d.decompress(view[j:j + (1 << 16)])
                j += 1 << 16
        except zlib.error:
            return
        if not d.eof:
            return
        n = j - i - len(d.unused_data)
        yield i, n
        i += n

frames = list(itertools.islice(zstd_frames(data) if codec == "zstd" else gzip_members(data), 40))
if len(frames) < 5:
    sys.exit(0)
levels = range(-5, 20) if codec == "zstd" else range(1, 13)
tool = "zstd" if codec == "zstd" else ("libdeflate-gzip" if subprocess.run(
    ["sh", "-c", "command -v libdeflate-gzip"], stdout=subprocess.DEVNULL).returncode == 0 else "gzip")
if tool == "gzip":
    levels = range(1, 10)
raw = []
for k, (off, n) in enumerate(frames):
    cmd = ["zstd", "-q", "-dc"] if codec == "zstd" else ["gzip", "-dc"]
    out = subprocess.run(cmd, input=data[off:off + n], stdout=subprocess.PIPE).stdout
    f = os.path.join(tmp, f"r{k}")
    open(f, "wb").write(out)
    raw.append((f, n))
best = None
for lv in levels:
    arg = f"--fast={-lv}" if lv < 0 else f"-{lv}"
    if lv == 0:
        continue
    err = 0
    for f, n in raw:
        cmd = [tool, "-c", arg, f] if tool != "zstd" else ["zstd", "-q", "-c", arg, "--single-thread", f]
        got = len(subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL).stdout)
        err += abs(got - n)
    if best is None or err < best[0]:
        best = (err, lv)
print(best[1] if best else "")
PY
)
    rm -rf "$probe"
    [ -n "$level" ] && level_from="measured: the level whose frames of the crawl's first records come closest"
fi
if [ -z "$level" ]; then
    level=$(python3 - "$repo/src/config/fetch.rs" "$codec" <<'PY'
import re, sys
src = open(sys.argv[1]).read()
m = re.search(r'fn warc_level\(&self\).*?\n    \}', src, re.S)
arm = m and re.search(r'\(None,\s*"%s"\)\s*=>\s*Some\((-?\d+)\)' % re.escape(sys.argv[2]), m.group(0))
print(arm.group(1) if arm else "")
PY
)
    [ -n "$level" ] && level_from="default for $codec (src/config/fetch.rs)"
fi
if [ -z "$level" ]; then
    case $codec in zstd) level=3 ;; gzip) level=6 ;; esac
    level_from="the $codec library's default"
fi
log "$(printf '%s files' "${#warcs[@]}"), codec $codec, level $level ($level_from)"

# A gzip member's XFL byte says "fastest" (4) or "best" (2) or neither (0): check it agrees.
xfl_note=""
if [ "$codec" = gzip ]; then
    xfl=$(od -An -tu1 -j8 -N1 "${warcs[0]}" | tr -d ' ')
    case "$xfl:$level" in
        4:1 | 2:9 | 2:8 | 2:1[0-2] | 0:[2-7]) ;;
        *) xfl_note="the first gzip member's XFL byte is $xfl, which does not fit level $level" ;;
    esac
fi

# ---------------------------------------------------------------- the stream
packed=$(cat "${warcs[@]}" | wc -c)
SCRATCH=${SCRATCH:-}
if [ -z "$SCRATCH" ]; then
    shm_free=$(($(df --output=avail -k /dev/shm 2>/dev/null | tail -n1 || echo 0) * 1024))
    if [ "$shm_free" -gt $((packed * 8)) ]; then SCRATCH=/dev/shm; else SCRATCH=${TMPDIR:-/tmp}; fi
fi
tmp=$(mktemp -d "$SCRATCH/dragnet-floor.XXXXXX")
[ "${KEEP:-0}" = 1 ] || trap 'rm -rf "$tmp"' EXIT
stream=$tmp/stream
log "decompressing $((packed / 1000000)) MB of WARC into $stream"
case $codec in
zstd)
    # A warc-zstd dictionary frame (skippable, magic 0x184D2A5D) is given to zstd with -D.
    for f in "${warcs[@]}"; do
        d=$(python3 - "$f" "$tmp/dict" <<'PY'
import struct, subprocess, sys
with open(sys.argv[1], "rb") as f:
    head = f.read(8)
    if len(head) < 8 or struct.unpack("<I", head[:4])[0] != 0x184D2A5D:
        sys.exit(0)
    d = f.read(struct.unpack("<I", head[4:])[0])
if d[:4] == b"\x28\xb5\x2f\xfd":  # the dictionary itself zstd-compressed
    d = subprocess.run(["zstd", "-dc"], input=d, stdout=subprocess.PIPE, check=True).stdout
open(sys.argv[2], "wb").write(d)
print(sys.argv[2])
PY
)
        zstd -q -dc ${d:+-D "$d"} "$f"
    done >"$stream"
    ;;
gzip) gzip -dc "${warcs[@]}" >"$stream" ;;
esac
raw=$(stat -c %s "$stream")
log "stream: $raw bytes ($(awk -v r="$raw" -v p="$packed" 'BEGIN{printf "%.2f", r / p}')x the WARC files)"

# ---------------------------------------------------------------- measurements
# cpu CMD...: least user+sys CPU seconds of REPEAT runs (GNU time), output to /dev/null.
cpu() {
    local best="" i t
    for i in $(seq 1 "$REPEAT"); do
        /usr/bin/time -f '%U %S' -o "$tmp/time" "$@" >/dev/null
        t=$(awk '{printf "%.3f", $1 + $2}' "$tmp/time")
        if [ -z "$best" ] || awk -v a="$t" -v b="$best" 'BEGIN{exit !(a < b)}'; then best=$t; fi
    done
    echo "$best"
}
cat >"$tmp/sha1.py" <<'PY'
import hashlib, sys
a, b = hashlib.sha1(), hashlib.sha1()
buf = bytearray(1 << 20)
view = memoryview(buf)
with open(sys.argv[1], "rb", buffering=0) as f:
    while n := f.readinto(buf):
        a.update(view[:n])
        b.update(view[:n])
print(a.hexdigest(), b.hexdigest())
PY
declare -A comp=()
case $codec in
zstd)
    zarg=-$level
    [ "$level" -lt 0 ] && zarg=--fast=$((-level))
    log "zstd $zarg --single-thread, one stream"
    comp["zstd $zarg"]=$(cpu zstd -q -c "$zarg" --single-thread --no-progress "$stream")
    ;;
gzip)
    glevel=$level
    [ "$glevel" -gt 9 ] && glevel=9
    log "gzip -$glevel, one stream"
    comp["gzip -$glevel"]=$(cpu gzip -c "-$glevel" "$stream")
    if command -v libdeflate-gzip >/dev/null; then
        log "libdeflate-gzip -$level, one stream"
        comp["libdeflate-gzip -$level"]=$(cpu libdeflate-gzip -c "-$level" "$stream")
    fi
    ;;
esac
best_tool=""
for k in "${!comp[@]}"; do
    if [ -z "$best_tool" ] || awk -v a="${comp[$k]}" -v b="${comp[$best_tool]}" 'BEGIN{exit !(a < b)}'; then
        best_tool=$k
    fi
done
log "two SHA-1 digests (hashlib)"
sha_cpu=$(cpu python3 "$tmp/sha1.py" "$stream")
comp_all=$(for k in "${!comp[@]}"; do printf '%s=%s;' "$k" "${comp[$k]}"; done)
load_after=$(cut -d' ' -f1-3 /proc/loadavg)

# ---------------------------------------------------------------- the report
commit=${LABEL:-}
if [ -z "$commit" ]; then
    commit=$(git -C "$repo" rev-parse --short HEAD)
    git -C "$repo" diff --quiet HEAD -- src Cargo.toml Cargo.lock 2>/dev/null || commit="$commit (+ uncommitted changes)"
fi
python3 - "$RUN" "$codec" "$level" "$level_from" "$best_tool" "${comp[$best_tool]}" "$comp_all" \
    "$sha_cpu" "$raw" "$packed" "$(nproc)" "$load_before" "$load_after" "$commit" "$xfl_note" \
    "${OUT:-}" <<'PY'
import json, os, sys
(run, codec, level, level_from, tool, comp_cpu, comp_all, sha_cpu, raw, packed, cores,
 load_before, load_after, commit, xfl_note, out) = sys.argv[1:]
comp_cpu, sha_cpu, raw, packed, cores = float(comp_cpu), float(sha_cpu), int(raw), int(packed), int(cores)
rows = {r["crawler"]: r for r in json.load(open(os.path.join(run, "results.json")))["rows"]}
for need in ("wget2", "dragnet"):
    if need not in rows:
        sys.exit(f"floor.sh: the run {run} has no {need} row")
dn, w2, sp = rows["dragnet"], rows["wget2"], rows.get("spider-lean")
pages = dn["pages"]
k = pages / 1000
archive = (comp_cpu + sha_cpu) / k
floor = w2["cpu_s_per_1k"] + archive
cpu_x = dn["cpu_s_per_1k"] / floor
wall_bound = 1.2 * (floor * k + dn["server_cpu_s"]) / cores
rss = dn["peak_rss_mb"]
def ok(b): return "**met**" if b else "**not met**"
lines = []
lines.append(f"- Run: `{os.path.basename(run)}`; {commit}; {cores} cores; load average "
             f"{load_before} before the floor's measurements, {load_after} after.")
lines.append(f"- Archive: the crawl's WARC records ({packed/1e6:,.0f} MB as {codec} files, "
             f"{raw/1e6:,.0f} MB decompressed) as one stream: `{tool}` {comp_cpu:.2f} CPU-s "
             f"(level {level}: {level_from}" + (f"; all tried: {comp_all.rstrip(';')}" if ';' in comp_all.rstrip(';') else "") +
             f"), two SHA-1 {sha_cpu:.2f} CPU-s; {archive:.3f} CPU-s per 1,000 of dragnet's "
             f"{pages:,} pages.")
if xfl_note:
    lines.append(f"- Note: {xfl_note}.")
lines.append("")
lines.append("| quantity | value | target | |")
lines.append("|---|--:|---|---|")
lines.append(f"| wget2 CPU-s / 1k pages | {w2['cpu_s_per_1k']:.3f} | | |")
lines.append(f"| archive CPU-s / 1k pages (compression + 2 SHA-1) | {archive:.3f} | | |")
lines.append(f"| floor = wget2 + archive | {floor:.3f} | | |")
lines.append(f"| dragnet CPU-s / 1k pages | {dn['cpu_s_per_1k']:.3f} = {cpu_x:.2f}x floor | <= 1.25x | {ok(cpu_x <= 1.25)} |")
lines.append(f"| dragnet wall s | {dn['wall_s']:.1f} = {dn['wall_s']/wall_bound*1.2:.2f}x ((floor x pages + server {dn['server_cpu_s']:.1f} CPU-s) / {cores} cores) | <= {wall_bound:.1f} s (1.2x) | {ok(dn['wall_s'] <= wall_bound)} |")
if sp:
    lines.append(f"| spider-lean wall s, same run | {sp['wall_s']:.1f} (dragnet {dn['wall_s']:.1f}) | dragnet faster | {ok(dn['wall_s'] < sp['wall_s'])} |")
else:
    lines.append("| spider-lean wall s, same run | not run (CRAWLERS without spider-lean) | dragnet faster | – |")
lines.append(f"| dragnet peak RSS MB | {rss:.0f} | <= 256 | {ok(rss <= 256)} |")
text = "\n".join(lines) + "\n"
sys.stdout.write(text)
res = {"run": run, "commit": commit, "codec": codec, "level": int(level), "level_from": level_from,
       "compress_tool": tool, "compress_cpu_s": comp_cpu, "compress_all": comp_all, "sha1x2_cpu_s": sha_cpu,
       "stream_bytes": raw, "warc_bytes": packed, "pages": pages, "archive_cpu_s_per_1k": archive,
       "wget2_cpu_s_per_1k": w2["cpu_s_per_1k"], "floor_cpu_s_per_1k": floor,
       "dragnet_cpu_s_per_1k": dn["cpu_s_per_1k"], "cpu_x_floor": cpu_x, "dragnet_wall_s": dn["wall_s"],
       "wall_bound_s": wall_bound, "spider_lean_wall_s": sp["wall_s"] if sp else None,
       "dragnet_peak_rss_mb": rss, "load_before": load_before, "load_after": load_after, "cores": cores}
open(os.path.join(run, "floor.md"), "w").write(text)
json.dump(res, open(os.path.join(run, "floor.json"), "w"), indent=1)
if out:
    open(out, "w").write(text)
PY
