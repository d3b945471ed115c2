#!/usr/bin/env bash
# Scale-out under Slurm, simulated from measured stage times (issue 23 point 5): a real crawl of
# a websim web to the end (every stage, cycle after cycle, on this machine), the per-partition
# `.done` markers it leaves (seconds and counts of every stage of every partition of every
# cycle) extracted to CSV, and `tools/bench/scale_sim.py` fed with them: a per-stage cost model
# fitted on the markers, a power-law web scaled up from the crawl, M = 256 and 4,096 partitions
# on n = 1, 2, 3, 4, 8, 16 nodes under Slurm's job-array scheduling (afterok, and aftercorr),
# then a replay of the crawl's own tasks on 1-3 nodes (the prediction for a real run).
#
#   tools/bench/scale.sh [HOSTS] [PAGES] [PARTITIONS]     # defaults: 200 hosts x 1000 pages, 64
#
# - The crawl: as tools/bench/cycle.sh (websim without hostile hosts or crawl-delay, 16 fetch
#   threads per partition, delays 0, per-IP limit 16, scope the web's hosts, lifetime host budget
#   pages + 100), but PARTITIONS partitions, FETCH_PARTITIONS (nproc) of them fetched at a time
#   (a task per CPU, as Slurm runs an array on one node), and no back-off after 5xx answers
#   (BACKOFF=1 keeps dragnet's 1-300 s): websim's error pages would otherwise make a
#   partition's fetch mostly sleep (17-130 s for ~100 requests), which measures websim, not work.
# - The markers: cycles/NNNNNN/<stage>/pNNNN.done -> markers.csv (cycle, stage, partition,
#   seconds, counts, bytes in and out), plus, per (cycle, partition), the fetched pages of the
#   partition's largest host (from `dragnet export --what pages`) -> hosts.csv; the simulator
#   fits the fetch's politeness term on it.
# - The report: markdown (machine, date, commands, the fit, the tables) on stdout.
#
# Settings (environment): PORT (8497), FETCH_PARTITIONS (nproc), BACKOFF (0),
# SORT_BUDGET ("256 MiB"), SIM_ARGS (extra arguments for scale_sim.py, e.g. "--alpha 1.8 --seeds 5"),
# MAX_CYCLES (100: to the end), MARKERS=DIR (skip the crawl: use DIR/markers.csv and
# DIR/hosts.csv of an earlier run), CRAWL=DIR (skip the crawl: extract the markers of that crawl
# directory, e.g. one crawled by `dragnet slurm submit` on several nodes; needs OUT),
# OUT=DIR (keep markers.csv, hosts.csv, crawl.md and report.json there; default: the scratch
# directory), EXTRACT_ONLY=1 (with CRAWL: extract, do not simulate; tools/bench/scale_real.sh),
# KEEP=1 keeps the scratch directory.
#
# The hook for the real multi-node run (issue 23 point 5, second part): with the same markers,
#   python3 tools/bench/scale_sim.py --markers DIR/markers.csv --hosts-csv DIR/hosts.csv \
#       --nodes 1,2,3 --cpus-per-node K --predict
# prints the predicted cycle times to set beside the measured ones; and a crawl run on the
# cluster is read back with `CRAWL=ITS_DIR OUT=DIR tools/bench/scale.sh`.
set -euo pipefail
cd "$(dirname "$0")/../.."

HOSTS=${1:-200}
PAGES=${2:-1000}
M=${3:-64}
PORT=${PORT:-8497}
FP=${FETCH_PARTITIONS:-$(nproc)}
SIM=tools/bench/scale_sim.py
read -r -a sim_args <<<"${SIM_ARGS:-}"

machine() {
    echo "Machine: $(awk -F': ' '/model name/ {print $2; exit}' /proc/cpuinfo), $(nproc) cores" \
        "($(lscpu | awk -F': *' '/^Thread\(s\) per core/ {print $2 " thread(s) per core"}')), " \
        "$(awk '/MemTotal/ {printf "%.0f GiB", $2 / 1048576}' /proc/meminfo), kernel $(uname -r);" \
        "load average $(cut -d' ' -f1-3 /proc/loadavg)."
}

# extract CRAWL_DIR OUT_DIR: the markers of every complete cycle -> OUT_DIR/markers.csv, and
# per (cycle, partition) the hosts fetched and the largest host's pages -> OUT_DIR/hosts.csv.
extract() {
    echo "== extracting the markers of $1" >&2
    "$DRAGNET" export --what pages --format jsonl --out "$2/pages.jsonl" "$1" >/dev/null
    python3 - "$1" "$2/pages.jsonl" "$2" <<'PY'
import csv, glob, json, os, re, sys
from collections import Counter, defaultdict
from urllib.parse import urlsplit
crawl, pages, out = sys.argv[1:4]
rows, keys = [], set()
markers = [json.load(open(path))
           for path in sorted(glob.glob(os.path.join(crawl, "cycles", "*", "*", "p*.done")))]
# Complete cycles only (every partition's prioritize done), e.g. when a crawl was stopped.
m_parts = len({m["partition"] for m in markers})
prio = Counter(m["cycle"] for m in markers if m["stage"] == "prioritize")
complete = {c for c, k in prio.items() if k == m_parts}
for m in markers:
    if m["cycle"] not in complete:
        continue
    r = {"cycle": m["cycle"], "stage": m["stage"], "partition": m["partition"],
         "seconds": m["seconds"], "started": m["started"], "finished": m["finished"],
         "in_bytes": sum(f["bytes"] for f in m["inputs"]),
         "out_bytes": sum(f["bytes"] for f in m["outputs"]),
         "in_records": sum(f.get("records") or 0 for f in m["inputs"]),
         "out_records": sum(f.get("records") or 0 for f in m["outputs"])}
    for k, v in m["counts"].items():
        r["n_" + k] = v
    keys.update(r)
    rows.append(r)
first = ["cycle", "stage", "partition", "seconds", "started", "finished",
         "in_bytes", "out_bytes", "in_records", "out_records"]
cols = first + sorted(k for k in keys if k not in first)
with open(os.path.join(out, "markers.csv"), "w", newline="") as f:
    w = csv.DictWriter(f, cols, restval=0)
    w.writeheader()
    w.writerows(rows)
# Pages per (cycle, partition, host) -> per (cycle, partition): hosts, largest host's pages.
per = defaultdict(Counter)
part_re = re.compile(r"/p(\d+)-\d+\.warc")  # warc_file: CCCCCC/warc/pPPPP-NNNNNN.warc.zst
with open(pages) as f:
    for line in f:
        p = json.loads(line)
        part = int(part_re.search(p["warc_file"]).group(1))
        if p["cycle"] in complete:
            per[(p["cycle"], part)][urlsplit(p["url"]).hostname] += 1
with open(os.path.join(out, "hosts.csv"), "w", newline="") as f:
    w = csv.writer(f)
    w.writerow(["cycle", "partition", "hosts", "pages", "max_host_pages"])
    for (c, p), cnt in sorted(per.items()):
        w.writerow([c, p, len(cnt), sum(cnt.values()), max(cnt.values())])
print(f"{len(rows)} markers of {len(complete)} complete cycles, {m_parts} partitions; "
      f"{len(per)} (cycle, partition) page groups", file=sys.stderr)
PY
    rm -f "$2/pages.jsonl"
}

if [ -n "${MARKERS:-}" ]; then
    data=$MARKERS
    crawl_line="$(cat "$MARKERS/crawl.md" 2>/dev/null || true) (Markers of that earlier run, in \`$MARKERS\`.)"
elif [ -n "${CRAWL:-}" ]; then
    source "$(dirname "$0")/lib.sh"
    bench_build
    data=${OUT:?CRAWL=DIR needs OUT=DIR for the extracted markers}
    mkdir -p "$data"
    extract "$CRAWL" "$data"
    [ -z "${EXTRACT_ONLY:-}" ] || exit 0
    crawl_line="Crawl: the markers of \`$CRAWL\` (complete cycles), extracted with \`CRAWL=$CRAWL tools/bench/scale.sh\`."
else
    source "$(dirname "$0")/lib.sh"
    need_gnu_time
    bench_build
    bench_workdir scale-bench
    data=${OUT:-$work}
    mkdir -p "$data"
    websim_serve --seed 7 --hosts "$HOSTS" --pages "$PAGES" --port "$PORT" \
        --hostile-every 0 --max-crawl-delay-ms 0
    websim_home_seeds "$PORT"
    cat >"$work/crawl.toml" <<EOF
[crawl]
name = "scale-bench"
partitions = $M
$(websim_crawl_toml)
threads = 16
per_ip_connections = 16
$([ "${BACKOFF:-0}" = 1 ] || printf 'backoff_base_secs = 0.0\nbackoff_max_secs = 0.0')
[scope]
allowed_domains = ["websim.test"]
[prioritize]
max_urls_per_host_total = $((PAGES + 100))
[cycle]
fetch_partitions = $FP
[sort]
memory_budget = "${SORT_BUDGET:-256 MiB}"
EOF
    "$DRAGNET" init --seeds "$work/seeds.txt" --config "$work/crawl.toml" "$work/crawl" >/dev/null 2>&1
    echo "== crawling $HOSTS hosts x $PAGES pages, $M partitions, $FP fetched at a time" >&2
    /usr/bin/time -f "%e %U %S %M" -o "$work/time" \
        "$DRAGNET" cycle --until-empty --max-cycles "${MAX_CYCLES:-100}" --progress quiet --json "$work/crawl" \
        >"$data/report.json" 2>"$work/cycle.log"
    read -r wall user sys rss_kb <"$work/time"
    kill "$server" 2>/dev/null; wait "$server" 2>/dev/null || true; server=""
    extract "$work/crawl" "$data"
    crawl_line="Crawl: \`FETCH_PARTITIONS=$FP tools/bench/scale.sh $HOSTS $PAGES $M\`: websim $HOSTS hosts x $PAGES pages, $M partitions, $FP fetched at a time; wall $wall s, CPU $(awk -v u="$user" -v s="$sys" 'BEGIN {printf "%.1f", u + s}') s, peak RSS $((rss_kb / 1024)) MiB."
    echo "$crawl_line" >"$data/crawl.md"
fi

echo "== simulating" >&2
cat <<EOF
### $(date -u +"%Y-%m-%d %H:%M UTC") — scale-out under Slurm, simulated from measured stage times

$(machine)
Commit: $(git rev-parse --short HEAD 2>/dev/null || echo '?')$(git diff --quiet 2>/dev/null || echo ' (+ uncommitted changes)').
$crawl_line
Simulation: \`python3 $SIM --markers markers.csv --hosts-csv hosts.csv ${sim_args[*]:-}\`.

EOF
python3 "$SIM" --markers "$data/markers.csv" --hosts-csv "$data/hosts.csv" "${sim_args[@]}"
echo
echo "Sensitivity, n = 16 against n = 1 (each row changes one setting of the run above):"
echo
python3 "$SIM" --markers "$data/markers.csv" --summary-header
for extra in "" "--alpha 1.5" "--alpha 2.0" "--host-cap 50000" "--hosts 2e5" "--cpus-per-node 4" \
    "--cpus-per-node 64" "--host-rate 1" "--stall-frac 0" "--fetch-us-per-page 1465" \
    "--fetch-overhead 2.5" "--hop 10" "--parse-array"; do
    python3 "$SIM" --markers "$data/markers.csv" --hosts-csv "$data/hosts.csv" "${sim_args[@]}" \
        --nodes 1,16 --no-fit $extra --summary="${extra:-as above}" || true
done
echo
echo "Predicted cycle times for a small real cluster (the hook for the multi-node run):"
echo
python3 "$SIM" --markers "$data/markers.csv" --hosts-csv "$data/hosts.csv" "${sim_args[@]}" \
    --nodes 1,2,3 --cpus-per-node "$(nproc)" --predict --no-fit
echo
echo "The same replay on this machine's one node, with no hop and no task start (what the local"
echo "executor does), against the crawl's measured wall time above:"
echo
python3 "$SIM" --markers "$data/markers.csv" --hosts-csv "$data/hosts.csv" "${sim_args[@]}" \
    --nodes 1 --cpus-per-node "$(nproc)" --hop 0 --task-start 0 --predict --no-fit | sed -n '/^| source/,/^$/p'
