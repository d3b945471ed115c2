#!/usr/bin/env bash
# Scale-out measured on a real (small) cluster, to check the simulation (issue 23 point 5): the
# same websim crawl run through `dragnet slurm submit` on n = 1, 2, 3 nodes of the cluster
# `.ci/slurm-up` starts on this machine, each node held to a CPU share by a cgroup of its own
# (every task process of node K joins cgroup nodeK: the `--binary` the jobs run is a wrapper that
# moves itself there), one task per node at a time (`--cpus-per-task` = the node's CPUs), the
# other nodes excluded (`--exclude`). Then `tools/bench/scale_sim.py --predict` replays the n = 1
# crawl's own per-partition task times on 1, 2, 3 nodes, and the measured times stand beside
# the predicted ones.
#
#   tools/bench/scale_real.sh [HOSTS] [PAGES] [PARTITIONS] [CYCLES]  # defaults 60 x 300, 12, 3
#
# Settings (environment): SHARE (CPU share of each node, 0.4 of a core: three nodes leave the
# rest of a 2-core machine to websim and Slurm), PORT (8499), KEEP=1 keeps the scratch directory.
# Needs root (cgroups) and the cluster of .ci/slurm-up with at least 3 nodes.
set -euo pipefail
cd "$(dirname "$0")/../.."

HOSTS=${1:-60}
PAGES=${2:-300}
M=${3:-12}
CYCLES=${4:-3}
SHARE=${SHARE:-0.4}
PORT=${PORT:-8499}

[ "$(timeout 5 sinfo -h -N -o '%N %T' 2>/dev/null | grep -cE '^node[1-3] (idle|mixed)$')" = 3 ] \
    || { echo "scale_real.sh: needs node1..node3 of .ci/slurm-up idle (run .ci/slurm-up)" >&2; exit 2; }
[ "$(id -u)" = 0 ] || { echo "scale_real.sh: needs root for the nodes' cgroups" >&2; exit 2; }

# The nodes' cgroups (v1 cpu controller or v2), quota SHARE x period.
period=100000
quota=$(awk -v s="$SHARE" -v p="$period" 'BEGIN { printf "%d", s * p }')
if [ -d /sys/fs/cgroup/cpu ] && [ -f /sys/fs/cgroup/cpu/cgroup.procs ]; then
    cgroot=/sys/fs/cgroup/cpu/dragnet-bench
    mkdir -p "$cgroot"
    for k in 1 2 3; do
        mkdir -p "$cgroot/node$k"
        echo "$period" >"$cgroot/node$k/cpu.cfs_period_us"
        echo "$quota" >"$cgroot/node$k/cpu.cfs_quota_us"
    done
elif [ -f /sys/fs/cgroup/cgroup.controllers ]; then
    cgroot=/sys/fs/cgroup/dragnet-bench
    mkdir -p "$cgroot"
    echo +cpu >/sys/fs/cgroup/cgroup.subtree_control 2>/dev/null || true
    echo +cpu >"$cgroot/cgroup.subtree_control"
    for k in 1 2 3; do
        mkdir -p "$cgroot/node$k"
        echo "$quota $period" >"$cgroot/node$k/cpu.max"
    done
else
    echo "scale_real.sh: no cgroup cpu controller here" >&2; exit 2
fi

source "$(dirname "$0")/lib.sh"
bench_build
bench_workdir scale-real
bench_cleanup() {
    for n in 1 2 3; do scancel -n "dragnet-real$n-$$" >/dev/null 2>&1 || true; done
}
cpus=$(timeout 5 sinfo -h -N -n node1 -o %c | head -n1)

cat >"$work/dragnet-node" <<EOF
#!/bin/sh
# The dragnet every job runs: joins its node's cgroup first.
[ -n "\${SLURMD_NODENAME:-}" ] && echo \$\$ > "$cgroot/\$SLURMD_NODENAME/cgroup.procs"
exec "$DRAGNET" "\$@"
EOF
chmod +x "$work/dragnet-node"

websim_serve --seed 11 --hosts "$HOSTS" --pages "$PAGES" --port "$PORT" \
    --hostile-every 0 --max-crawl-delay-ms 0
websim_home_seeds "$PORT"

declare -A wall
for n in 1 2 3; do
    exclude=""
    [ "$n" -lt 3 ] && exclude=$(seq -s, -f 'node%g' $((n + 1)) 3)
    cat >"$work/crawl$n.toml" <<EOF
[crawl]
name = "real$n-$$"
partitions = $M
$(websim_crawl_toml)
threads = 8
per_ip_connections = 16
backoff_base_secs = 0.0
backoff_max_secs = 0.0
[scope]
allowed_domains = ["websim.test"]
[prioritize]
max_urls_per_host_total = $((PAGES + 100))
[slurm]
args = ["--cpus-per-task=$cpus"$([ -n "$exclude" ] && printf ', "--exclude=%s"' "$exclude")]
EOF
    "$DRAGNET" init --seeds "$work/seeds.txt" --config "$work/crawl$n.toml" "$work/crawl$n" >/dev/null 2>&1
    echo "== n = $n node(s): $CYCLES cycles through Slurm" >&2
    wall[$n]=$(slurm_chain_wall "real$n-$$" "$DRAGNET" slurm submit --cycles "$CYCLES" \
        --binary "$work/dragnet-node" "$work/crawl$n" 2>"$work/submit$n.log")
    "$DRAGNET" status --json "$work/crawl$n" | python3 -c 'import json,sys
d = json.load(sys.stdin); print(d["cycles_complete"], d["fetch_total"]["urls"])' >"$work/summary$n"
done
kill "$server" 2>/dev/null; wait "$server" 2>/dev/null || true; server=""

EXTRACT_ONLY=1 CRAWL="$work/crawl1" OUT="$work/m1" tools/bench/scale.sh >/dev/null
python3 tools/bench/scale_sim.py --markers "$work/m1/markers.csv" --hosts-csv "$work/m1/hosts.csv" \
    --predict --nodes 1,2,3 --cpus-per-node 1 --partitions "$M" --no-fit >"$work/predict.md"

read -r c1 u1 <"$work/summary1"; read -r c2 u2 <"$work/summary2"; read -r c3 u3 <"$work/summary3"
cat <<EOF
### $(date -u +"%Y-%m-%d %H:%M UTC") — scale-out on a real 3-node cluster (one host), against the simulation

- Machine: $(awk -F': ' '/model name/ {print $2; exit}' /proc/cpuinfo), $(nproc) cores; Slurm $(sinfo -V | cut -d' ' -f2), nodes of .ci/slurm-up, each held to $SHARE of a core (cgroup), one task per node at a time
- Command: \`tools/bench/scale_real.sh $HOSTS $PAGES $M $CYCLES\` (websim seed 11, $HOSTS hosts x $PAGES pages, M = $M, $CYCLES cycles)
- Commit: $(git rev-parse --short HEAD)$(git diff --quiet || echo ' (+ uncommitted changes)')

| nodes | cycles | fetch results | wall s (submit to last job) | speed-up |
|--:|--:|--:|--:|--:|
| 1 | $c1 | $u1 | ${wall[1]} | 1.00 |
| 2 | $c2 | $u2 | ${wall[2]} | $(awk -v a="${wall[1]}" -v b="${wall[2]}" 'BEGIN { printf "%.2f", a / b }') |
| 3 | $c3 | $u3 | ${wall[3]} | $(awk -v a="${wall[1]}" -v b="${wall[3]}" 'BEGIN { printf "%.2f", a / b }') |

The simulation, replaying the n = 1 crawl's own task times (\`scale_sim.py --predict --nodes 1,2,3 --cpus-per-node 1\`):

$(cat "$work/predict.md")
EOF
