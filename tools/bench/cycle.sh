#!/usr/bin/env bash
# A whole crawl, every stage: `dragnet cycle --until-empty` over a websim web served by a separate
# websim process on loopback, from every host's `/` until the frontier is empty.
#
#   tools/bench/cycle.sh [HOSTS] [PAGES]      # defaults: 200 hosts x 1000 pages
#
# - The web: `websim serve --hostile-every 0 --max-crawl-delay-ms 0` (no hostile hosts, no
#   crawl-delay), its own process, so the crawler's CPU time is the crawler's alone.
# - The crawl: 8 partitions, `[fetch] threads` 16 per partition, FETCH_PARTITIONS (2) of them
#   fetched at a time, delays 0, per-IP limit 16 (the web's hosts share 4 loopback addresses), the scope limited to
#   the web's hosts, the lifetime host budget websim's ground truth uses (pages + 100), WARC
#   .warc.zst. Every stage runs: fetch, parse, split, dedup-merge, prioritize, cycle after cycle.
# - Measured with /usr/bin/time: wall time, user + system CPU, peak RSS; per-stage seconds from
#   `dragnet cycle --json` (fetch, parse and split of a partition run back to back; their times
#   are summed over partitions, merge and prioritize are wall time over all partitions).
#
# Prints a markdown report (machine, date, command, table) for docs/BENCHMARKS.md.
# Settings (environment): PORT (8496), FETCH_PARTITIONS (2), SORT_BUDGET (`[sort] memory_budget`,
# "256 MiB"), KEEP=1 keeps the scratch directory.
set -euo pipefail
cd "$(dirname "$0")/../.."

HOSTS=${1:-200}
PAGES=${2:-1000}
PORT=${PORT:-8496}

source "$(dirname "$0")/lib.sh"
need_gnu_time
bench_build
bench_workdir cycle-bench
websim_serve --seed 7 --hosts "$HOSTS" --pages "$PAGES" --port "$PORT" \
    --hostile-every 0 --max-crawl-delay-ms 0
ws_pid=$server
websim_home_seeds "$PORT"

cat >"$work/crawl.toml" <<EOF
[crawl]
name = "cycle-bench"
partitions = 8
$(websim_crawl_toml)
threads = 16
per_ip_connections = 16
[scope]
allowed_domains = ["websim.test"]
[prioritize]
max_urls_per_host_total = $((PAGES + 100))
[cycle]
fetch_partitions = ${FETCH_PARTITIONS:-2}
[sort]
memory_budget = "${SORT_BUDGET:-256 MiB}"
EOF
"$DRAGNET" init --seeds "$work/seeds.txt" --config "$work/crawl.toml" "$work/crawl" >/dev/null 2>&1
echo "== crawling $HOSTS hosts x $PAGES pages" >&2
/usr/bin/time -f "%e %U %S %M" -o "$work/time" \
    "$DRAGNET" cycle --until-empty --progress quiet --json "$work/crawl" >"$work/report.json" 2>"$work/cycle.log"
read -r wall user sys rss_kb <"$work/time"
# The server's CPU over the run (utime + stime, clock ticks), to see who the machine worked for.
ws_cpu=$(awk -v hz="$(getconf CLK_TCK)" '{printf "%.1f", ($14 + $15) / hz}' "/proc/$ws_pid/stat")

python3 - "$work/report.json" "$wall" "$user" "$sys" "$rss_kb" "$HOSTS" "$PAGES" "${FETCH_PARTITIONS:-2}" "$ws_cpu" <<'PY'
import json, sys, subprocess, platform, datetime
report = json.load(open(sys.argv[1]))
wall, user, sysc, rss = float(sys.argv[2]), float(sys.argv[3]), float(sys.argv[4]), int(sys.argv[5])
hosts, pages, fp, ws_cpu = sys.argv[6], sys.argv[7], sys.argv[8], float(sys.argv[9])
stages = {}
fetched = 0
for c in report["cycles"]:
    for name, s in c["stages"].items():
        stages[name] = stages.get(name, 0.0) + s["seconds"]
    # Results: the fetch lists' URLs and those followed within the run.
    fetched += c["stages"]["fetch"]["counts"].get("results", 0)
cpu = user + sysc
total = sum(stages.values()) or 1.0
cpu_model = next((l.split(":", 1)[1].strip() for l in open("/proc/cpuinfo") if l.startswith("model name")), "?")
print(f"### Whole crawl, {hosts} hosts x {pages} pages ({datetime.date.today()})\n")
print(f"Machine: {cpu_model}, {subprocess.getoutput('nproc')} cores, {platform.system()} {platform.release()}.")
print(f"Command: `FETCH_PARTITIONS={fp} tools/bench/cycle.sh {hosts} {pages}`.\n")
print("| cycles | URLs fetched | wall s | pages/s (whole cycle) | CPU s | CPU-s / 1,000 pages | peak RSS |")
print("|---|---|---|---|---|---|---|")
print(f"| {len(report['cycles'])} | {fetched} | {wall:.1f} | {fetched / wall:.0f} | {cpu:.1f} | {1000 * cpu / max(fetched, 1):.3f} | {rss / 1024:.0f} MiB |\n")
print(f"websim (the server, its own process) used {ws_cpu:.1f} CPU-s in the same run, on the same 2 cores.\n")
print("Stage seconds: fetch, parse and split are summed over partitions (they run side by side);")
print("merge and prioritize are wall time over all partitions.\n")
print("| stage | seconds | share |")
print("|---|---|---|")
for name in ["fetch", "parse", "split", "merge", "prioritize"]:
    s = stages.get(name, 0.0)
    print(f"| {name} | {s:.1f} | {100 * s / total:.0f}% |")
PY
