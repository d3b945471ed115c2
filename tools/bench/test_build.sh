#!/usr/bin/env bash
# How long a contributor waits for `cargo test` on a fresh clone: clones COMMIT (default HEAD)
# into a new directory with nothing beside it, builds with an empty target directory, and times
#   1. `cargo test --no-run` (compiling and linking everything `cargo test` needs), then
#   2. `cargo test` (running every test; the build is done by then).
# The crates.io downloads in ~/.cargo are reused (a fresh clone on a machine that has built Rust
# before); pass CARGO_HOME=$(mktemp -d) to time the downloads too.
#
#   tools/bench/test_build.sh [COMMIT] [WORKDIR]
#
# Extra environment (e.g. DRAGNET_TESTDATA for commits from before tests/data) is passed through.
# Results go to docs/BENCHMARKS.md ("Test build") by hand, with the machine and date printed here.
set -euo pipefail
repo=$(cd "$(dirname "$0")/../.." && pwd)
commit=${1:-HEAD}
work=${2:-$(mktemp -d)}
mkdir -p "$work"
rm -rf "$work/dragnet" "$work/target"
git clone -q "$repo" "$work/dragnet"
git -C "$work/dragnet" checkout -q "$(git -C "$repo" rev-parse "$commit")"
export CARGO_TARGET_DIR="$work/target"
echo "commit $(git -C "$work/dragnet" log --oneline -1)"
echo "machine $(nproc) cores, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | xargs), $(free -g | awk '/Mem:/{print $2}') GiB; $(rustc --version); $(date -u +%F)"
cd "$work/dragnet"
t0=$(date +%s.%N)
cargo test --no-run --quiet 2>&1 | grep -v '^ *Executable' || true
t1=$(date +%s.%N)
cargo test --quiet >"$work/test.log" 2>&1 || { tail -30 "$work/test.log"; echo "cargo test FAILED"; exit 1; }
t2=$(date +%s.%N)
bins=$(find "$CARGO_TARGET_DIR/debug/deps" -maxdepth 1 -type f -executable | wc -l)
awk -v a="$t0" -v b="$t1" -v c="$t2" -v n="$bins" 'BEGIN {
    printf "build %.0f s, tests %.0f s, total %.0f s (%.1f min); %d executables in target/debug/deps\n", b-a, c-b, c-a, (c-a)/60, n }'
grep -E '^test result' "$work/test.log" | awk '{p+=$4; i+=$8} END {print p " tests passed, " i " ignored"}'
