# Shared by the benchmark scripts (source it): the release build, a scratch directory removed on
# exit (KEEP=1 keeps it), and websim serving a web on loopback.
#
#   need_gnu_time               installs /usr/bin/time (apt-get) where it is missing
#   bench_build                 builds dragnet (release); sets DRAGNET to its absolute path
#                               (or takes DRAGNET_BIN, a binary built before)
#   bench_workdir NAME          sets work to a new ${TMPDIR:-/tmp}/NAME.XXXXXX, removed on exit;
#                               a script's own bench_cleanup (if defined) runs first
#   websim_serve ARGS...        `dragnet websim serve ARGS --hosts-file $work/hosts --duration 3600
#                               --report $work/audit.json` in the background (log in
#                               $work/websim.log); sets server; returns when the hosts file exists
#   websim_home_seeds PORT      every host's `/` as a seed, in $work/seeds.txt
#   websim_crawl_toml           crawl.toml's shared [resolve] and [fetch] lines for websim
#   slurm_chain_wall NAME CMD   runs a `dragnet slurm submit` and prints the seconds until the
#                               chain of crawl NAME has left Slurm's queue

# need_gnu_time: installs GNU time (/usr/bin/time: wall, CPU, peak RSS) if it is missing.
need_gnu_time() {
    command -v /usr/bin/time >/dev/null && return 0
    echo "== installing time (apt-get)" >&2
    if [ "$(id -u)" = 0 ]; then apt-get install -y -qq time >/dev/null; else sudo apt-get install -y -qq time >/dev/null; fi
}

bench_build() {
    # DRAGNET_BIN: a dragnet binary built before (an A/B of two builds, or a tree being edited).
    if [ -n "${DRAGNET_BIN:-}" ]; then
        DRAGNET=$DRAGNET_BIN
        echo "== dragnet: $DRAGNET (DRAGNET_BIN)" >&2
        return
    fi
    echo "== building dragnet (release)" >&2
    cargo build --release -q
    local target=${CARGO_TARGET_DIR:-target}
    case "$target" in /*) ;; *) target="$(pwd)/$target" ;; esac
    DRAGNET="$target/release/dragnet"
}

server=""
_bench_exit() {
    if declare -F bench_cleanup >/dev/null; then bench_cleanup; fi
    [ -n "$server" ] && kill "$server" 2>/dev/null || true
    wait 2>/dev/null || true
    [ "${KEEP:-0}" = 1 ] || rm -rf "$work"
}

bench_workdir() {
    work=$(mktemp -d "${TMPDIR:-/tmp}/$1.XXXXXX")
    trap _bench_exit EXIT INT TERM
}

websim_serve() {
    "$DRAGNET" websim serve "$@" --hosts-file "$work/hosts" --duration 3600 \
        --report "$work/audit.json" 2>"$work/websim.log" &
    server=$!
    for _ in $(seq 1 100); do [ -s "$work/hosts" ] && break; sleep 0.1; done
    [ -s "$work/hosts" ] || { echo "websim did not start: $(tail -3 "$work/websim.log")" >&2; exit 1; }
    sleep 0.5
}

# slurm_chain_wall NAME CMD...: runs CMD (a `dragnet slurm submit`), waits (at most an hour) until
# no job whose name starts with `dragnet-NAME-` is queued, and prints the seconds from the
# submission to the end of the chain.
slurm_chain_wall() {
    local name=$1 start end deadline idle=0
    shift
    start=$(date +%s.%N)
    "$@" >&2
    deadline=$(( $(date +%s) + 3600 ))
    while [ "$idle" -lt 2 ]; do
        [ "$(date +%s)" -lt "$deadline" ] || { echo "the Slurm chain of $name did not end in an hour" >&2; exit 1; }
        sleep 0.5
        if squeue -h -o %j | grep -q "^dragnet-$name-"; then idle=0; else idle=$((idle + 1)); fi
    done
    end=$(date +%s.%N)
    awk -v a="$start" -v b="$end" 'BEGIN { printf "%.1f", b - a - 1.0 }' # minus the idle polls
}

# websim_home_seeds PORT: every websim host's `/` as a seed -> $work/seeds.txt.
websim_home_seeds() {
    awk -v port="$1" '/^[0-9]/ {print "http://" $2 ":" port "/"}' "$work/hosts" >"$work/seeds.txt"
}

# websim_crawl_toml: the crawl.toml lines every bench crawl of websim shares, from `[resolve]`
# (websim's names, nothing else) into `[fetch]` (loopback allowed, no delays, websim's 503
# Retry-After obeyed up to 1 s); the caller goes on with its own `[fetch]` keys.
websim_crawl_toml() {
    cat <<TOML
[resolve]
hosts_files = ["$work/hosts"]
only = true
[fetch]
allow_private_addresses = true
default_delay_secs = 0.0
delay_factor = 0.0
# websim's 503 pages say Retry-After: 120; obeyed up to 1 s here (docs/BENCHMARKS.md).
max_retry_after_secs = 1.0
max_crawl_delay_secs = 0.0
TOML
}
