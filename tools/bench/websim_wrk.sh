#!/usr/bin/env bash
# websim throughput: wrk (keep-alive) against `websim serve` and against nginx serving the same web
# exported as static files (`websim export`), on the same URLs, in one run.
#
#   tools/bench/websim_wrk.sh [HOSTS] [PAGES]        # defaults: 200 hosts x 200 pages
#
# The URLs are the well-behaved HTML pages, robots.txt files and other documents of the hosts
# served on 127.0.1.1 (the ground truth's fetch set, hostile hosts left out), cycled through by a
# wrk Lua script with the right Host header, so every request names a real page of the web.
# Prints a markdown report (machine, date, command, table) for docs/BENCHMARKS.md.
#
# Settings (environment): DURATION (seconds per wrk run, 10), THREADS (wrk threads, 1),
# CONNS (connections, 32), PORT (8490), CACHE_MIB (websim's answer cache, 128), KEEP=1 keeps the
# scratch directory. Needs wrk and nginx; installs them with apt-get if missing.
set -euo pipefail
cd "$(dirname "$0")/../.."

HOSTS=${1:-200}
PAGES=${2:-200}
DURATION=${DURATION:-10}
THREADS=${THREADS:-1}
CONNS=${CONNS:-32}
PORT=${PORT:-8490}
CACHE_MIB=${CACHE_MIB:-128}

need() {
    command -v "$1" >/dev/null 2>&1 && return 0
    echo "== installing $2 (apt-get)" >&2
    if [ "$(id -u)" = 0 ]; then apt-get install -y -qq "$2" >/dev/null; else sudo apt-get install -y -qq "$2" >/dev/null; fi
}
need wrk wrk
command -v nginx >/dev/null 2>&1 || [ -x /usr/sbin/nginx ] || need nginx nginx-light
NGINX=$(command -v nginx || echo /usr/sbin/nginx)

echo "== building websim (release)" >&2
cargo build --release -q -p websim
target=${CARGO_TARGET_DIR:-target}
WEBSIM="$target/release/websim"

work=$(mktemp -d "${TMPDIR:-/tmp}/websim-bench.XXXXXX")
# nginx workers run as an unprivileged user when started as root: they must read the export.
chmod 755 "$work"
pids=()
cleanup() {
    for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
    wait 2>/dev/null || true
    [ "${KEEP:-0}" = 1 ] || rm -rf "$work"
}
trap cleanup EXIT INT TERM

web=(--seed 1 --hosts "$HOSTS" --pages "$PAGES" --port "$PORT" --listeners 4)

# The URL list: fetch set of the ground truth on 127.0.1.1, hostile hosts left out.
"$WEBSIM" truth "${web[@]}" --out "$work/truth" 2>/dev/null
"$WEBSIM" hosts "${web[@]}" --out "$work/hosts"
awk -F'\t' 'NR==FNR { if ($1 == "127.0.1.1") on1[$2] = 1; next }
     FNR > 1 && ($4 == "html" || $4 == "robots" || $4 == "other" || $4 == "sitemap") {
         split($1, u, "/"); hp = u[3]; split(hp, h, ":");
         if (h[1] in on1) { path = substr($1, length("http://" hp) + 1); print hp "\t" path }
     }' "$work/hosts" "$work/truth/fetch.tsv" > "$work/urls.tsv"
nurls=$(wc -l < "$work/urls.tsv")
[ "$nurls" -gt 0 ] || { echo "no URLs on 127.0.1.1" >&2; exit 1; }

# wrk script: each request takes the next (host, path) of the list.
{
    echo 'local reqs = {}'
    echo 'local i = 0'
    echo 'init = function(args)'
    echo '  for line in io.lines("'"$work/urls.tsv"'") do'
    echo '    local host, path = line:match("([^\t]+)\t(.*)")'
    echo '    reqs[#reqs + 1] = wrk.format("GET", path, { ["Host"] = host, ["Accept-Encoding"] = "gzip" })'
    echo '  end'
    echo '  i = math.random(#reqs)'
    echo 'end'
    echo 'request = function() i = i % #reqs + 1; return reqs[i] end'
} > "$work/cycle.lua"

# Wait until a server answers robots.txt of the first host on the list.
wait_up() {
    local host path
    IFS=$'\t' read -r host path < "$work/urls.tsv"
    for _ in $(seq 1 100); do
        if curl -s -o /dev/null -H "Host: $host" "http://127.0.1.1:$PORT/robots.txt"; then return 0; fi
        sleep 0.1
    done
    echo "server on 127.0.1.1:$PORT did not come up" >&2
    exit 1
}

# CPU ticks (user + sys) of a process and its children (nginx's workers).
ticks() {
    local t=0 p
    for p in "$1" $(pgrep -P "$1" || true); do
        t=$((t + $(awk '{print $14 + $15}' "/proc/$p/stat" 2>/dev/null || echo 0)))
    done
    echo "$t"
}

# run_wrk NAME PID: one wrk run; appends a table row with the server's CPU use.
rows=()
run_wrk() {
    local name=$1 pid=$2 before after out rps mbps lat cpu errs
    before=$(ticks "$pid")
    out=$(wrk -t"$THREADS" -c"$CONNS" -d"${DURATION}s" --latency -s "$work/cycle.lua" "http://127.0.1.1:$PORT/")
    after=$(ticks "$pid")
    echo "$out" >&2
    rps=$(echo "$out" | awk '/Requests\/sec/ {print $2}')
    mbps=$(echo "$out" | awk '/Transfer\/sec/ {print $2}')
    lat=$(echo "$out" | awk '/ 99%/ {print $2}')
    errs=$(echo "$out" | awk '/Non-2xx|Socket errors/ {printf "%s ", $0}')
    cpu=$(awk -v a="$after" -v b="$before" -v d="$DURATION" -v hz="$(getconf CLK_TCK)" 'BEGIN { printf "%.2f", (a - b) / hz / d }')
    rows+=("| $name | $rps | $mbps | $lat | $cpu | ${errs:-none} |")
}

echo "== websim serve" >&2
"$WEBSIM" serve "${web[@]}" --cache-mib "$CACHE_MIB" --report "$work/report.json" --duration 600 2>"$work/websim.log" &
pids+=($!)
wait_up
# One pass over every URL warms the answer cache, as a crawl's repeated fetches would.
wrk -t1 -c4 -d2s -s "$work/cycle.lua" "http://127.0.1.1:$PORT/" >/dev/null
run_wrk "websim (answer cache $CACHE_MIB MiB)" "${pids[-1]}"
kill "${pids[-1]}"; wait "${pids[-1]}" 2>/dev/null || true; pids=()

echo "== websim serve --cache-mib 0" >&2
"$WEBSIM" serve "${web[@]}" --cache-mib 0 --report "$work/report0.json" --duration 600 2>>"$work/websim.log" &
pids+=($!)
wait_up
run_wrk "websim (no cache: every answer rendered)" "${pids[-1]}"
kill "${pids[-1]}"; wait "${pids[-1]}" 2>/dev/null || true; pids=()

echo "== nginx on the export" >&2
"$WEBSIM" export "${web[@]}" "$work/export" 2>/dev/null
# nginx forks workers; run it in the foreground so the pid we hold is the master's.
"$NGINX" -p "$work/export" -c nginx.conf -g 'daemon off;' 2>"$work/nginx.err" &
pids+=($!)
wait_up
sleep 0.5
master=${pids[-1]}
run_wrk "nginx $("$NGINX" -v 2>&1 | sed 's/.*\///') (worker_processes 2, static export)" "$master"
kill "$master"; wait "$master" 2>/dev/null || true; pids=()

cat <<EOF
### $(date -u +%Y-%m-%d) — websim vs nginx under wrk, $HOSTS hosts x $PAGES pages

- Machine: $(awk -F': ' '/model name/ {print $2; exit}' /proc/cpuinfo), $(nproc) cores, kernel $(uname -r)
- Command: \`tools/bench/websim_wrk.sh $HOSTS $PAGES\` (wrk -t$THREADS -c$CONNS -d${DURATION}s, keep-alive, Accept-Encoding: gzip)
- URLs: $nurls pages of the hosts on 127.0.1.1 (ground truth's fetch set, hostile hosts out), cycled with their Host header
- Commit: $(git rev-parse --short HEAD)$(git diff --quiet || echo ' (+ uncommitted changes)'); load average at end: $(cut -d' ' -f1-3 /proc/loadavg)

| server | requests/s | transfer/s | p99 latency | server CPU (cores) | errors |
|---|---|---|---|---|---|
$(printf '%s\n' "${rows[@]}")

wrk runs on the same 2 cores as the server, so every server here shares the machine with its
load generator.
EOF
