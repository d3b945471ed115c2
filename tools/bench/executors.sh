#!/usr/bin/env bash
# The two executors on one crawl: the same websim web crawled to the end by `dragnet cycle`
# (local) and by `dragnet slurm submit --until-empty` (job arrays on a Slurm cluster), the latter
# twice: with per-partition chaining (`aftercorr`, the default) and with whole-stage barriers
# (`[slurm] per_partition = false`), from the same seeds and configuration. Reports cycles,
# pages, wall time, what Slurm adds per cycle (scheduling hops between dependent jobs) and what
# per-partition chaining saves, and checks every crawl fetched the same URLs.
#
#   tools/bench/executors.sh [HOSTS] [PAGES] [PARTITIONS]   # defaults: 100 hosts x 40 pages, 4
#
# Needs a Slurm cluster whose nodes see this machine's temporary directory and loopback web:
# the cluster of `.ci/slurm-up` (three nodes on this machine). Settings (environment): PORT (8498),
# FETCH_PARSE (`[fetch] parse`, true: false runs the parse as its own array), KEEP=1 keeps the
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
    echo "parse = ${FETCH_PARSE:-true}"
    echo '[scope]'
    echo 'allowed_domains = ["websim.test"]'
} > "$work/crawl.toml"
cp "$work/crawl.toml" "$work/crawl-stage.toml"
printf '[slurm]\nper_partition = false\n' >> "$work/crawl-stage.toml"
for c in local slurm; do
    "$DRAGNET" init --config "$work/crawl.toml" --seeds "$work/seeds.txt" "$work/$c" 2>/dev/null
done
"$DRAGNET" init --config "$work/crawl-stage.toml" --seeds "$work/seeds.txt" "$work/slurm-stage" 2>/dev/null

echo "== local: dragnet cycle --until-empty" >&2
/usr/bin/time -o "$work/local.time" -f "%e" \
    "$DRAGNET" cycle --until-empty --progress quiet "$work/local" 2>"$work/local.log"

echo "== slurm: dragnet slurm submit --until-empty (per-partition chaining, aftercorr)" >&2
slurm_wall=$(slurm_chain_wall "$name" "$DRAGNET" slurm submit --until-empty "$work/slurm" 2>"$work/slurm.log")
echo "== slurm: the same with whole-stage barriers ([slurm] per_partition = false)" >&2
stage_wall=$(slurm_chain_wall "$name" "$DRAGNET" slurm submit --until-empty "$work/slurm-stage" 2>"$work/slurm-stage.log")
kill "$server"; wait "$server" 2>/dev/null || true; server=""

summary() { # dir -> "cycles urls requests"
    "$DRAGNET" status --json "$1" | python3 -c 'import json,sys
d = json.load(sys.stdin); f = d["fetch_total"]
print(d["cycles_complete"], f["urls"], f["requests"])'
}
read -r lc lu lr < <(summary "$work/local")
read -r sc su sr < <(summary "$work/slurm")
read -r bc bu br < <(summary "$work/slurm-stage")
local_wall=$(cat "$work/local.time")
violations=$(python3 -c 'import json,sys; print(sum(json.load(open(sys.argv[1]))["counts"].values()))' \
    "$work/audit.json" 2>/dev/null || echo "?")

cat <<EOF
### $(date -u +%Y-%m-%d) — local vs Slurm executor, websim $HOSTS x $PAGES, $M partitions

- Machine: $(awk -F': ' '/model name/ {print $2; exit}' /proc/cpuinfo), $(nproc) cores, kernel $(uname -r); Slurm $(sinfo -V 2>/dev/null | cut -d' ' -f2), $(sinfo -h -o %D | head -n1) node(s)
- Command: \`FETCH_PARSE=${FETCH_PARSE:-true} tools/bench/executors.sh $HOSTS $PAGES $M\`
- Commit: $(git rev-parse --short HEAD)$(git diff --quiet || echo ' (+ uncommitted changes)')

| executor | cycles | fetch results | requests | wall s | s per cycle |
|---|---|---|---|---|---|
| local (\`dragnet cycle --until-empty\`) | $lc | $lu | $lr | $local_wall | $(awk -v w="$local_wall" -v c="$lc" 'BEGIN { printf "%.1f", w / c }') |
| Slurm (\`dragnet slurm submit --until-empty\`), per-partition chaining (aftercorr) | $sc | $su | $sr | $slurm_wall | $(awk -v w="$slurm_wall" -v c="$sc" 'BEGIN { printf "%.1f", w / c }') |
| Slurm, whole-stage barriers (\`[slurm] per_partition = false\`) | $bc | $bu | $br | $stage_wall | $(awk -v w="$stage_wall" -v c="$bc" 'BEGIN { printf "%.1f", w / c }') |

Slurm adds $(awk -v a="$slurm_wall" -v b="$local_wall" -v c="$sc" 'BEGIN { printf "%.1f", (a - b) / c }') s per cycle here with per-partition chaining, $(awk -v a="$stage_wall" -v b="$local_wall" -v c="$bc" 'BEGIN { printf "%.1f", (a - b) / c }') s with whole-stage barriers; per-partition chaining saves $(awk -v a="$stage_wall" -v b="$slurm_wall" 'BEGIN { printf "%.1f s (%.0f %%)", a - b, 100 * (a - b) / a }') of the Slurm crawl.
Politeness violations (websim's audit, both crawls): $violations.
EOF
[ "$lu" = "$su" ] && [ "$lu" = "$bu" ] || echo "WARNING: the executors fetched different numbers of URLs ($lu, $su, $bu)"
