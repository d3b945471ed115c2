#!/usr/bin/env bash
# The two executors on one crawl: the same websim web crawled to the end by `dragnet cycle`
# (local) and by `dragnet slurm submit --until-empty` (job arrays on a Slurm cluster), from the
# same seeds and configuration. Reports cycles, pages, wall time and what Slurm adds per cycle
# (scheduling hops between dependent jobs), and checks both crawls fetched the same URLs.
#
#   tools/bench/executors.sh [HOSTS] [PAGES] [PARTITIONS]   # defaults: 100 hosts x 40 pages, 4
#
# Needs a Slurm cluster whose nodes see this machine's temporary directory and loopback web:
# the one-node cluster of `.ci/slurm-up`. Settings (environment): PORT (8498), KEEP=1 keeps the
# scratch directory. Prints a markdown report for docs/BENCHMARKS.md.
set -euo pipefail
cd "$(dirname "$0")/../.."

HOSTS=${1:-100}
PAGES=${2:-40}
M=${3:-4}
PORT=${PORT:-8498}

sinfo -h -o %T 2>/dev/null | grep -qE 'idle|mixed|allocated' \
    || { echo "executors.sh: no Slurm cluster answers here; start one with .ci/slurm-up" >&2; exit 2; }

source "$(dirname "$0")/lib.sh"
bench_build
bench_workdir executors-bench
name="bench$$"
bench_cleanup() { scancel -n "dragnet-$name" >/dev/null 2>&1 || true; }

web=(--seed 3 --hosts "$HOSTS" --pages "$PAGES" --port "$PORT" --listeners 4 --hostile-every 0
     --max-crawl-delay-ms 20)
"$DRAGNET" websim truth "${web[@]}" --out "$work/truth" 2>/dev/null
grep '/$' "$work/truth/fetch.txt" | grep -v '/robots\.txt$' | awk -F/ 'NF == 4' > "$work/seeds.txt"
websim_serve "${web[@]}"

{
    echo '[crawl]'
    echo "name = \"$name\""
    echo "partitions = $M"
    echo '[resolve]'
    echo "hosts_files = [\"$work/hosts\"]"
    echo 'only = true'
    echo '[fetch]'
    echo 'threads = 8'
    echo 'default_delay_secs = 0.0'
    echo 'delay_factor = 0.0'
    echo 'max_retry_after_secs = 1.0'
    echo 'allow_private_addresses = true'
    echo '[scope]'
    echo 'allowed_domains = ["websim.test"]'
} > "$work/crawl.toml"
for c in local slurm; do
    "$DRAGNET" init --config "$work/crawl.toml" --seeds "$work/seeds.txt" "$work/$c" 2>/dev/null
done

echo "== local: dragnet cycle --until-empty" >&2
/usr/bin/time -o "$work/local.time" -f "%e" \
    "$DRAGNET" cycle --until-empty --progress quiet "$work/local" 2>"$work/local.log"

echo "== slurm: dragnet slurm submit --until-empty" >&2
start=$(date +%s.%N)
"$DRAGNET" slurm submit --until-empty "$work/slurm" 2>"$work/slurm.log"
deadline=$(( $(date +%s) + 3600 ))
idle=0
while [ "$idle" -lt 2 ]; do
    [ "$(date +%s)" -lt "$deadline" ] || { echo "executors.sh: the Slurm chain did not end in an hour" >&2; exit 1; }
    sleep 0.5
    if squeue -h -o %j | grep -q "^dragnet-$name-"; then idle=0; else idle=$((idle + 1)); fi
done
end=$(date +%s.%N)
slurm_wall=$(awk -v a="$start" -v b="$end" 'BEGIN { printf "%.1f", b - a - 1.0 }') # minus the idle polls
kill "$server"; wait "$server" 2>/dev/null || true; server=""

summary() { # dir -> "cycles urls requests"
    "$DRAGNET" status --json "$1" | python3 -c 'import json,sys
d = json.load(sys.stdin); f = d["fetch_total"]
print(d["cycles_complete"], f["urls"], f["requests"])'
}
read -r lc lu lr < <(summary "$work/local")
read -r sc su sr < <(summary "$work/slurm")
local_wall=$(cat "$work/local.time")
violations=$(python3 -c 'import json,sys; print(sum(json.load(open(sys.argv[1]))["counts"].values()))' \
    "$work/audit.json" 2>/dev/null || echo "?")

cat <<EOF
### $(date -u +%Y-%m-%d) — local vs Slurm executor, websim $HOSTS x $PAGES, $M partitions

- Machine: $(awk -F': ' '/model name/ {print $2; exit}' /proc/cpuinfo), $(nproc) cores, kernel $(uname -r); Slurm $(sinfo -V 2>/dev/null | cut -d' ' -f2), $(sinfo -h -o %D | head -n1) node(s)
- Command: \`tools/bench/executors.sh $HOSTS $PAGES $M\`
- Commit: $(git rev-parse --short HEAD)$(git diff --quiet || echo ' (+ uncommitted changes)')

| executor | cycles | fetch results | requests | wall s | s per cycle |
|---|---|---|---|---|---|
| local (\`dragnet cycle --until-empty\`) | $lc | $lu | $lr | $local_wall | $(awk -v w="$local_wall" -v c="$lc" 'BEGIN { printf "%.1f", w / c }') |
| Slurm (\`dragnet slurm submit --until-empty\`) | $sc | $su | $sr | $slurm_wall | $(awk -v w="$slurm_wall" -v c="$sc" 'BEGIN { printf "%.1f", w / c }') |

Slurm adds $(awk -v a="$slurm_wall" -v b="$local_wall" -v c="$sc" 'BEGIN { printf "%.1f", (a - b) / c }') s per cycle here (six jobs a cycle, each waiting for the one before).
Politeness violations (websim's audit, both crawls): $violations.
EOF
[ "$lu" = "$su" ] || echo "WARNING: the executors fetched different numbers of URLs ($lu vs $su)"
