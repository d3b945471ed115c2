#!/usr/bin/env bash
# A web with one slow host: does the whole crawl end when the slow host's own politeness allows?
#
#   tools/bench/crawl_delay.sh [SLOW_PAGES] [FAST_HOSTS] [FAST_PAGES] [BIG_PAGES]
#                                                       # defaults: 500 20 3000 21000
#   WINDOW=false tools/bench/crawl_delay.sh ...          # the same without the cycle window
#   FOLLOW=0 FETCH_BUDGET=2000 RESERVE=0 tools/bench/crawl_delay.sh ...
#                                                       # [fetch] follow_per_host, [prioritize]
#                                                       # fetch_budget and reserve_factor (unset:
#                                                       # the defaults)
#
# - The web (static files, written by this script, served by nginx on 127.0.0.1): `slow.test`
#   with SLOW_PAGES pages and `Crawl-delay: 1` in its robots.txt; FAST_HOSTS hosts
#   `fastNN.test` with FAST_PAGES pages each and no delay. Every site is a tree from its home
#   page (branching 4 on the slow host, 8 on the fast ones, so the slow host is ~5 links deep and
#   the fast ones ~4), each page also linking back home and to its parent; ~2 KB per page.
#   And `big.test` with BIG_PAGES pages (branching 8, no delay): more than `follow_per_host`
#   (1,000) and the fetch budget (5,000) together, so without the cycle window
#   (`[cycle] window`, issue 31 point 3) it needs cycles of its own after the slow host is done;
#   with it, its partition goes on following while the slow host's partition works.
# - dragnet: a crawl with 4 partitions seeded with the home pages, `default_delay_secs` and
#   `delay_factor` 0 (the fast hosts are fetched back to back), `per_ip_connections` lifted to
#   the thread count (every host is on 127.0.0.1), the default `max_crawl_delay_secs` (30: the
#   slow host's 1 s is kept), run as `dragnet cycle --until-empty`, timed with /usr/bin/time.
# - The slow host's own politeness bound: its robots.txt plus SLOW_PAGES pages, one request per
#   second: SLOW_PAGES + 1 seconds (its home page is also /p/0.html; the first request is free,
#   each later one waits 1 s). The target
#   (issue 19): the whole crawl ends within 1.2x that bound. The script also checks, from nginx's
#   log, that every page was fetched once and no two requests to the slow host came less than 1 s
#   apart.
#
# Prints a markdown report for docs/BENCHMARKS.md. Environment: PORT (8496), THREADS (16),
# KEEP=1 keeps the scratch directory. Needs nginx and python3 (installs nginx with apt-get).
set -euo pipefail
cd "$(dirname "$0")/../.."

SLOW=${1:-500}
FAST_HOSTS=${2:-20}
FAST=${3:-3000}
BIG=${4:-21000}
WINDOW=${WINDOW:-true}
FOLLOW=${FOLLOW:-}
FETCH_BUDGET=${FETCH_BUDGET:-}
RESERVE=${RESERVE:-}
PORT=${PORT:-8496}
THREADS=${THREADS:-16}

if ! command -v nginx >/dev/null 2>&1 && [ ! -x /usr/sbin/nginx ]; then
    echo "== installing nginx-light (apt-get)" >&2
    if [ "$(id -u)" = 0 ]; then apt-get install -y -qq nginx-light >/dev/null; else sudo apt-get install -y -qq nginx-light >/dev/null; fi
fi
NGINX=$(command -v nginx || echo /usr/sbin/nginx)

source "$(dirname "$0")/lib.sh"
bench_build
bench_workdir crawl-delay
chmod 755 "$work"
nginx_pid=""
bench_cleanup() { [ -n "$nginx_pid" ] && kill "$nginx_pid" 2>/dev/null || true; }

echo "== writing the web: slow.test x $SLOW pages (Crawl-delay: 1), $FAST_HOSTS x $FAST pages" >&2
python3 - "$work" "$SLOW" "$FAST_HOSTS" "$FAST" "$PORT" "$BIG" <<'EOF'
import os, sys
work, slow, nfast, fast, port, big = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4]), sys.argv[5], int(sys.argv[6])
filler = " ".join("lorem ipsum dolor sit amet consectetur" for _ in range(45))
def site(host, pages, branching, robots):
    d = os.path.join(work, "sites", host)
    os.makedirs(os.path.join(d, "p"), exist_ok=True)
    with open(os.path.join(d, "robots.txt"), "w") as f:
        f.write(robots)
    for i in range(pages):
        kids = [c for c in range(i * branching + 1, i * branching + branching + 1) if c < pages]
        parent = (i - 1) // branching if i > 0 else 0
        links = [f'<a href="/p/{c}.html">page {c}</a>' for c in kids]
        links += ['<a href="/">home</a>', f'<a href="/p/{parent}.html">up</a>']
        body = f"<!doctype html><title>{host} {i}</title><p>{filler}</p>\n" + "\n".join(links) + "\n"
        name = "index.html" if i == 0 else os.path.join("p", f"{i}.html")
        with open(os.path.join(d, name), "w") as f:
            f.write(body)
    # The home page is also /p/0.html (the "up" link of its children).
    with open(os.path.join(d, "index.html")) as src, open(os.path.join(d, "p", "0.html"), "w") as dst:
        dst.write(src.read())
hosts = ["slow.test"] + [f"fast{i:02}.test" for i in range(nfast)]
site("slow.test", slow, 4, "User-agent: *\nCrawl-delay: 1\n")
for h in hosts[1:]:
    site(h, fast, 8, "User-agent: *\nDisallow:\n")
if big > 0:
    hosts.append("big.test")
    site("big.test", big, 8, "User-agent: *\nDisallow:\n")
with open(os.path.join(work, "hosts"), "w") as f:
    for h in hosts:
        f.write(f"127.0.0.1 {h}\n")
with open(os.path.join(work, "seeds.txt"), "w") as f:
    for h in hosts:
        f.write(f"http://{h}:{port}/\n")
os.makedirs(os.path.join(work, "logs"), exist_ok=True)
with open(os.path.join(work, "nginx.conf"), "w") as f:
    f.write(f"""worker_processes 2;
pid {work}/nginx.pid;
error_log {work}/logs/error.log;
events {{ worker_connections 1024; }}
http {{
    log_format bench '$msec $host $request_uri $status';
    access_log {work}/logs/access.log bench buffer=64k flush=1s;
    client_body_temp_path {work}/tmp; proxy_temp_path {work}/tmp; fastcgi_temp_path {work}/tmp;
    uwsgi_temp_path {work}/tmp; scgi_temp_path {work}/tmp;
    default_type text/html;
    types {{ text/plain txt; text/html html; }}
    keepalive_requests 100000;
    server {{
        listen 127.0.0.1:{port};
        server_name _;
        root {work}/sites/$host;
    }}
}}
""")
EOF
mkdir -p "$work/tmp"
"$NGINX" -p "$work" -c "$work/nginx.conf" -g 'daemon off;' 2>"$work/nginx.err" &
nginx_pid=$!
for _ in $(seq 1 100); do
    curl -s -o /dev/null -H "Host: slow.test" "http://127.0.0.1:$PORT/robots.txt" && break
    sleep 0.1
done
# nginx flushes its log within a second: let the probe's line land, then start the log afresh.
sleep 1.5
: > "$work/logs/access.log"

{
    echo '[crawl]'
    echo 'name = "crawl-delay-bench"'
    echo 'partitions = 4'
    echo '[resolve]'
    echo "hosts_files = [\"$work/hosts\"]"
    echo 'only = true'
    echo '[fetch]'
    echo "threads = $THREADS"
    echo "per_ip_connections = $THREADS"
    echo 'default_delay_secs = 0.0'
    echo 'delay_factor = 0.0'
    echo 'allow_private_addresses = true'
    [ -n "$FOLLOW" ] && echo "follow_per_host = $FOLLOW"
    echo '[prioritize]'
    [ -n "$FETCH_BUDGET" ] && echo "fetch_budget = $FETCH_BUDGET"
    [ -n "$RESERVE" ] && echo "reserve_factor = $RESERVE"
    echo '[cycle]'
    echo "window = $WINDOW"
} > "$work/crawl.toml"
"$DRAGNET" init --config "$work/crawl.toml" --seeds "$work/seeds.txt" "$work/crawl" 2>/dev/null
echo "== dragnet cycle --until-empty (the slow host alone needs ~$SLOW s)" >&2
/usr/bin/time -o "$work/time" -f "%e %U %S %M" \
    "$DRAGNET" cycle --until-empty --progress log --json "$work/crawl" > "$work/cycle.json" 2> "$work/cycle.log"
sleep 1.5
kill "$nginx_pid"; wait "$nginx_pid" 2>/dev/null || true; nginx_pid=""

read -r wall user sys rss < "$work/time"
cycles=$(python3 -c 'import json,sys; print(len(json.load(open(sys.argv[1]))["cycles"]))' "$work/cycle.json" 2>/dev/null || echo "?")
settings="window $WINDOW, follow ${FOLLOW:-default}, budget ${FETCH_BUDGET:-default}, reserve ${RESERVE:-default}"
python3 - "$work/logs/access.log" "$SLOW" "$FAST_HOSTS" "$FAST" "$wall" "$user" "$sys" "$rss" "$cycles" "$BIG" "$settings" <<'EOF'
import sys, collections
log, slow, nfast, fast = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4])
wall, user, sys_, rss, cycles = float(sys.argv[5]), float(sys.argv[6]), float(sys.argv[7]), int(sys.argv[8]), sys.argv[9]
big, window = int(sys.argv[10]), sys.argv[11]
by_host = collections.defaultdict(list)
for line in open(log):
    t, host, uri, status = line.split()
    by_host[host.split(":")[0]].append((float(t), uri, status))
slow_reqs = sorted(by_host["slow.test"])
gaps = [b[0] - a[0] for a, b in zip(slow_reqs, slow_reqs[1:])]
pages = lambda h: len({u for _, u, s in by_host[h] if s == "200" and u != "/robots.txt"})
# /p/0.html is the home page again: each site has one page more than its count of distinct pages.
slow_ok = pages("slow.test")
fast_ok = sum(pages(f"fast{i:02}.test") for i in range(nfast))
dupes = sum(len(v) - len({u for _, u, _ in v}) for v in by_host.values())
slow_span = slow_reqs[-1][0] - slow_reqs[0][0] if slow_reqs else 0.0
bound = float(slow + 1)  # robots.txt, SLOW pages and /p/0.html, one a second: the first is free
total = sum(len(v) for v in by_host.values())
big_ok = pages("big.test")
print(f"| settings | slow host pages | fast host pages | big host pages | requests | repeated | cycles | wall s | slow host span s | bound s | wall / bound | min gap s (slow) | CPU s | peak RSS MB |")
print(f"|--|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|")
print(f"| {window} | {slow_ok} of {slow + 1} | {fast_ok} of {nfast * (fast + 1)} | {big_ok} of {big + 1 if big else 0} | {total} | {dupes} | {cycles} | {wall:.1f} | {slow_span:.1f} | {bound:.0f} | {wall / bound:.2f} | {min(gaps) if gaps else 0:.3f} | {user + sys_:.1f} | {rss / 1024:.0f} |")
EOF
