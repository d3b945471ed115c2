#!/usr/bin/env bash
# Fetch throughput: `dragnet fetch` against wget2 on the same web, websim's static export served by
# nginx on loopback, in one run.
#
#   tools/bench/fetch_vs_wget2.sh [HOSTS] [PAGES...]     # defaults: 200 hosts x 1000 pages
#
# Several PAGES values (e.g. `200 250 1000`) run both crawlers at each size, which is how the
# "memory does not grow with the crawl" claim is checked: peak RSS at 50k and at 200k pages.
#
# - The web: `websim export --hostile-every 0 --max-crawl-delay-ms 0` (no hostile hosts, no
#   crawl-delay: the per-host delay is 0 for both crawlers), served by nginx (2 workers). websim
#   still gives a few hosts `Crawl-delay: 0.1`; wget2 ignores crawl-delay, so dragnet's cap
#   `max_crawl_delay_secs` is set to 0 here to compare like with like.
# - dragnet: a crawl with 1 partition seeded with the ground truth's whole fetch set (robots.txt
#   files left out: dragnet fetches them itself, first), `threads` 16, one connection per host
#   (Mercator back queues), per-IP limit lifted to the thread count (the web's 200 hosts share 4
#   loopback addresses), delays 0, WARC .warc.zst, every request and response written and
#   digested. Fetch only: this stage does not parse, so it is given the URLs wget2 discovers.
# - wget2: `-r -l inf --max-threads=16 --robots=on --delete-after` from every host's `/`, with
#   the export's hosts file bind-mounted over /etc/hosts in a private mount namespace (nothing
#   outside the namespace changes). wget2 parses every page to find its links, so it does more
#   work per page than a fetch-only stage; the table says so.
# - Measured with /usr/bin/time: wall time, user + system CPU, peak RSS. Pages = HTTP responses
#   (robots.txt included) as nginx logged them during each run. wget2 1.99.1 sometimes idles after
#   its last request instead of exiting; it is then stopped after 10 idle seconds and timed to
#   its last request (the table notes it).
#
# Prints a markdown report (machine, date, command, table) for docs/BENCHMARKS.md.
# Settings (environment): PORT (8495), THREADS (16), KEEP=1 keeps the scratch directory.
# Needs nginx and wget2; installs them with apt-get if missing.
set -euo pipefail
cd "$(dirname "$0")/../.."

HOSTS=${1:-200}
shift || true
SIZES=("$@")
[ ${#SIZES[@]} -gt 0 ] || SIZES=(1000)
PORT=${PORT:-8495}
THREADS=${THREADS:-16}

need() {
    command -v "$1" >/dev/null 2>&1 && return 0
    [ -x "/usr/sbin/$1" ] && return 0
    echo "== installing $2 (apt-get)" >&2
    if [ "$(id -u)" = 0 ]; then apt-get install -y -qq "$2" >/dev/null; else sudo apt-get install -y -qq "$2" >/dev/null; fi
}
need nginx nginx-light
need wget2 wget2
need /usr/bin/time time
NGINX=$(command -v nginx || echo /usr/sbin/nginx)

source "$(dirname "$0")/lib.sh"
bench_build

work=$(mktemp -d "${TMPDIR:-/tmp}/fetch-bench.XXXXXX")
chmod 755 "$work"
nginx_pid=""
cleanup() {
    [ -n "$nginx_pid" ] && kill "$nginx_pid" 2>/dev/null || true
    wait 2>/dev/null || true
    [ "${KEEP:-0}" = 1 ] || rm -rf "$work"
}
trap cleanup EXIT INT TERM

# measure OUT CMD...: runs CMD under /usr/bin/time; OUT gets "wall user sys maxrss_kib".
measure() {
    local out=$1
    shift
    /usr/bin/time -o "$out" -f "%e %U %S %M" "$@"
}

# sample_rss NAME OUT: every 0.5 s, appends "seconds rss_kib" of the newest process NAME to OUT
# until it exits (started in the background right after the crawler).
sample_rss() {
    local name=$1 out=$2 pid="" t0
    t0=$(date +%s.%N)
    for _ in $(seq 1 100); do pid=$(pgrep -n -x "$name" || true); [ -n "$pid" ] && break; sleep 0.05; done
    [ -n "$pid" ] || return 0
    while kill -0 "$pid" 2>/dev/null; do
        awk -v t0="$t0" -v now="$(date +%s.%N)" '/^VmRSS/ {print now - t0, $2}' "/proc/$pid/status" >> "$out" 2>/dev/null || true
        sleep 0.5
    done
}

# rss_growth FILE: "RSS at a quarter of the run -> at the end" in MiB (max over each window).
rss_growth() {
    awk '{t[NR] = $1; r[NR] = $2} END {
        if (NR < 4) { print "n/a"; exit }
        q = t[NR] / 4; a = 0; b = 0
        for (i = 1; i <= NR; i++) { if (t[i] <= q && r[i] > a) a = r[i]; if (r[i] > b) b = r[i] }
        printf "%.0f -> %.0f", a / 1024, b / 1024 }' "$1"
}


rows=()
for PAGES in "${SIZES[@]}"; do
    web=(--seed 1 --hosts "$HOSTS" --pages "$PAGES" --port "$PORT" --listeners 4
         --hostile-every 0 --max-crawl-delay-ms 0)
    dir="$work/$PAGES"
    mkdir -p "$dir"
    chmod 755 "$dir"
    echo "== $HOSTS x $PAGES: export, truth" >&2
    "$DRAGNET" websim export "${web[@]}" "$dir/export" 2>/dev/null
    "$DRAGNET" websim truth "${web[@]}" --out "$dir/truth" 2>/dev/null
    grep -v '/robots\.txt$' "$dir/truth/fetch.txt" > "$dir/seeds.txt"
    awk -F'\t' '/^#/ || NF < 2 {next} {print "http://" $2 ":'"$PORT"'/"}' "$dir/export/hosts" \
        | sort -u > "$dir/homes.txt"
    nseeds=$(wc -l < "$dir/seeds.txt")

    # Count requests at the server: one log line per request ($msec: when it ended).
    sed -i "s|access_log off;|log_format bench '\$msec \$status'; access_log logs/bench.log bench buffer=64k flush=1s;|" \
        "$dir/export/nginx.conf"
    log="$dir/export/logs/bench.log"
    "$NGINX" -p "$dir/export" -c nginx.conf -g 'daemon off;' 2>"$dir/nginx.err" &
    nginx_pid=$!
    host=$(head -1 "$dir/homes.txt" | sed 's|http://\([^:/]*\).*|\1|')
    addr=$(awk -v h="$host" '$2 == h {print $1}' "$dir/export/hosts")
    for _ in $(seq 1 100); do
        curl -s -o /dev/null -H "Host: $host" "http://$addr:$PORT/robots.txt" && break
        sleep 0.1
    done
    # Warm the page cache so both crawlers are served from memory.
    find "$dir/export/sites" -type f -exec cat {} + > /dev/null
    sleep 1.5

    echo "== dragnet fetch ($nseeds URLs)" >&2
    {
        echo '[crawl]'
        echo 'name = "bench"'
        echo 'partitions = 1'
        echo '[resolve]'
        echo "hosts_files = [\"$dir/export/hosts\"]"
        echo 'only = true'
        echo '[fetch]'
        echo "threads = $THREADS"
        echo 'queues_per_thread = 3'
        echo "per_ip_connections = $THREADS"
        echo 'default_delay_secs = 0.0'
        echo 'delay_factor = 0.0'
        echo 'max_crawl_delay_secs = 0.0'
        echo 'allow_private_addresses = true'
        echo 'warc_compression = "zstd"'
    } > "$dir/crawl.toml"
    "$DRAGNET" init --config "$dir/crawl.toml" --seeds "$dir/seeds.txt" "$dir/crawl" 2>/dev/null
    before=$(wc -l < "$log")
    sample_rss dragnet "$dir/dragnet.rss" &
    measure "$dir/dragnet.time" "$DRAGNET" fetch --cycle 0 --partition 0 --progress log --json "$dir/crawl" \
        > "$dir/dragnet.json" 2> "$dir/dragnet.log"
    wait $! 2>/dev/null || true
    sleep 1.5
    d_pages=$(( $(wc -l < "$log") - before ))
    d_ok=$(python3 -c 'import json,sys; c=json.load(open(sys.argv[1]))["counts"]; print(c.get("status_2xx",0))' "$dir/dragnet.json")
    d_warc=$(du -sm "$dir/crawl/cycles/000000/warc" | cut -f1)
    d_wall=$(cut -d' ' -f1 < "$dir/dragnet.time")
    rm -rf "$dir/crawl/cycles/000000/warc"

    echo "== wget2 -r from $(wc -l < "$dir/homes.txt") home pages" >&2
    mkdir -p "$dir/wget2"
    before=$(wc -l < "$log")
    start=$(date +%s.%N)
    measure "$dir/wget2.time" unshare --mount sh -c "mount --bind '$dir/export/hosts' /etc/hosts && cd '$dir/wget2' && \
        exec wget2 -q -r -l inf --max-threads=$THREADS --robots=on --delete-after --no-host-directories \
             -i '$dir/homes.txt'" 2> "$dir/wget2.log" &
    tpid=$!
    sample_rss wget2 "$dir/wget2.rss" &
    # wget2 1.99.1 (Debian 12) can stay alive, idle, after its last request: stop it once the
    # server has seen nothing for 10 s, and time it to its last request.
    last=-1
    idle=0
    hung=""
    while kill -0 "$tpid" 2>/dev/null; do
        sleep 1
        n=$(wc -l < "$log")
        if [ "$n" = "$last" ]; then idle=$((idle + 1)); else idle=0; last=$n; fi
        if [ "$idle" -ge 10 ]; then
            pkill -TERM -x wget2 || true
            hung="; idle after its last request, stopped"
        fi
    done
    wait "$tpid" 2>/dev/null || true
    sleep 1.5
    w_pages=$(( $(wc -l < "$log") - before ))
    w_ok=$(tail -n "$w_pages" "$log" | awk '$2 ~ /^2/ {n++} END {print n + 0}')
    w_last=$(tail -1 "$log" | cut -d' ' -f1)
    w_wall=$(awk -v a="$w_last" -v b="$start" 'BEGIN { printf "%.2f", a - b }')
    # /usr/bin/time writes an extra line first when the command was killed.
    tail -1 "$dir/wget2.time" > "$dir/wget2.time1"

    kill "$nginx_pid"; wait "$nginx_pid" 2>/dev/null || true; nginx_pid=""

    row() { # name pages ok timefile wall notes
        read -r _ user sys rss < "$4"
        awk -v n="$1" -v p="$2" -v ok="$3" -v w="$5" -v u="$user" -v s="$sys" -v r="$rss" -v x="$6" \
            -v size="$HOSTS x $PAGES" 'BEGIN {
            printf "| %s | %s | %d | %d | %.1f | %.0f | %.1f | %.3f | %.0f | %s |\n",
                size, n, p, ok, w, p / w, u + s, (u + s) / p * 1000, r / 1024, x }'
    }
    rows+=("$(row dragnet "$d_pages" "$d_ok" "$dir/dragnet.time" "$d_wall" "RSS $(rss_growth "$dir/dragnet.rss") MiB (quarter -> end); fetch only; WARC .zst ${d_warc} MB")")
    rows+=("$(row wget2 "$w_pages" "$w_ok" "$dir/wget2.time1" "$w_wall" "RSS $(rss_growth "$dir/wget2.rss") MiB (quarter -> end); fetch + parse, --delete-after$hung")")
done

cat <<EOF
### $(date -u +%Y-%m-%d) — dragnet fetch vs wget2 on websim's export (nginx)

- Machine: $(awk -F': ' '/model name/ {print $2; exit}' /proc/cpuinfo), $(nproc) cores, kernel $(uname -r), $(wget2 --version | head -1)
- Command: \`tools/bench/fetch_vs_wget2.sh $HOSTS ${SIZES[*]}\` ($THREADS threads each, per-host delay 0, one connection per host for dragnet)
- Commit: $(git rev-parse --short HEAD)$(git diff --quiet || echo ' (+ uncommitted changes)'); load average at end: $(cut -d' ' -f1-3 /proc/loadavg)

| web | crawler | responses | 2xx | wall s | pages/s | CPU s | CPU s / 1,000 pages | peak RSS MiB | notes |
|---|---|---|---|---|---|---|---|---|---|
$(printf '%s\n' "${rows[@]}")

nginx, the crawler and (for dragnet) zstd compression of the WARC share the same 2 cores.
EOF
