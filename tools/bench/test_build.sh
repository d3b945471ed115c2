#!/usr/bin/env bash
# The README's two commands as a new user runs them on a fresh machine: clones COMMIT (default
# HEAD) into a new directory with nothing beside it, then, with an empty target directory and an
# empty CARGO_HOME (no crates.io index, no downloaded crates), times
#   1. `cargo run --release -- demo`: the release build (index, downloads and compiling, up to
#      cargo's "Finished" line) and the demo run after it;
#   2. `cargo test`, right after: the test build (up to its "Finished" line) and running the tests.
# Each command is run once, exactly as the README has it; the build/run split is read from the
# time stamp of cargo's "Finished" line. The load average is printed before and after each
# command, and sampled every 10 s during it (mean and max), so other work on the machine shows.
#
#   tools/bench/test_build.sh [COMMIT] [WORKDIR]
#
# WORKDIR (default: a new temp dir) gets dragnet/ (the clone), target/, cargo-home/ and the logs;
# it must not be the repository's own target directory. Environment:
#   KEEP_CARGO_HOME=1  reuse ~/.cargo (the registry cache and index) instead of an empty one
#   TIMINGS=1          add --timings to both commands (HTML reports copied into WORKDIR)
#   SKIP_DEMO=1        `cargo build --release --bin dragnet` instead of running the demo
# Other environment (e.g. DRAGNET_TESTDATA for commits from before tests/data) is passed through.
# rustup's toolchain is found before CARGO_HOME is emptied: RUSTUP_HOME is kept and the
# toolchain's own bin directory goes first on PATH.
# Results go to docs/BENCHMARKS.md ("Test build") by hand, with the machine and date printed here.
set -euo pipefail
repo=$(cd "$(dirname "$0")/../.." && pwd)
commit=${1:-HEAD}
work=${2:-$(mktemp -d "${TMPDIR:-/tmp}/test_build.XXXXXX")}
case "$(realpath -m "$work")" in "$(realpath -m "$repo/target")"*)
    echo "WORKDIR must not be under $repo/target" >&2; exit 2 ;; esac
mkdir -p "$work"
work=$(cd "$work" && pwd)
rm -rf "$work/dragnet" "$work/target" "$work/cargo-home"
git clone -q "$repo" "$work/dragnet"
git -C "$work/dragnet" checkout -q "$(git -C "$repo" rev-parse "$commit")"
cd "$work/dragnet"

# The toolchain (a rust-toolchain file in the clone is honoured), found while ~/.cargo/bin's
# rustup proxies are still usable.
if command -v rustup >/dev/null; then
    export RUSTUP_HOME=${RUSTUP_HOME:-$HOME/.rustup}
    toolchain_bin=$(dirname "$(rustup which cargo)")
    export PATH="$toolchain_bin:$PATH"
fi
if [ "${KEEP_CARGO_HOME:-0}" != 1 ]; then
    export CARGO_HOME="$work/cargo-home"
    mkdir -p "$CARGO_HOME"
fi
export CARGO_TARGET_DIR="$work/target"
unset RUSTFLAGS CARGO_BUILD_RUSTFLAGS RUSTC_WRAPPER CARGO_BUILD_RUSTC_WRAPPER CARGO_INCREMENTAL

timings=()
[ "${TIMINGS:-0}" = 1 ] && timings=(--timings)
echo "commit $(git log --oneline -1 | cut -c1-100)"
echo "machine $(nproc) cores, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | xargs), $(free -g | awk '/Mem:/{print $2}') GiB; $(rustc --version); $(date -u '+%F %H:%M') UTC"
echo "CARGO_HOME ${CARGO_HOME:-~/.cargo} ($(du -sh "${CARGO_HOME:-$HOME/.cargo}" 2>/dev/null | cut -f1)), target $CARGO_TARGET_DIR (empty)"

load() { cut -d' ' -f1-3 /proc/loadavg; }
# Other compilers on the machine (not ours): rustc/cc1/ld processes without our CARGO_TARGET_DIR.
others() {
    local n=0 p
    for p in $(pgrep -x 'rustc|cc1|cc1plus|ld|ld.lld' 2>/dev/null); do
        { tr '\0' '\n' <"/proc/$p/environ"; } 2>/dev/null | grep -qx "CARGO_TARGET_DIR=$CARGO_TARGET_DIR" ||
            n=$((n + 1))
    done
    echo "$n"
}
# Samples the 1-minute load average and others' compilers every 10 s into $1 until killed.
sample_load() { while :; do echo "$(cut -d' ' -f1 /proc/loadavg) $(others)" >>"$1"; sleep 10; done; }
# Microseconds since the epoch (bash 5's EPOCHREALTIME: no process per time stamp).
now_us() { local t=${EPOCHREALTIME/[.,]/}; echo "$t"; }
# CPU seconds (user + system) of this shell's finished children, from the `times` builtin: the
# difference over a command is its CPU time (cargo's, with every rustc and cc under it), which
# other work on the machine changes far less than the wall time.
# (`times` runs in this shell, not in a $(...) subshell, which has no children of its own.)
children_cpu() { times >"$work/.times"; }
cpu_seconds() { awk 'NR == 2 { for (i = 1; i <= 2; i++) { split($i, a, /[ms]/); s += a[1] * 60 + a[2] } printf "%.1f", s }' "$work/.times"; }

# timed NAME LOG CMD...: runs CMD with stdout and stderr to LOG, each line stamped with the seconds
# since the start (so cargo's "Finished" line splits build from run); sets rc, t_total, t_build.
timed() {
    local name=$1 log=$2; shift 2
    echo "== $name: $* (load before $(load), other compilers running: $(others))"
    : >"$work/$name.load"
    sample_load "$work/$name.load" & local sampler=$!
    local t0 line d c0; t0=$(now_us); children_cpu; c0=$(cpu_seconds)
    set +e
    "$@" 2>&1 | while IFS= read -r line; do
        d=$((${EPOCHREALTIME/[.,]/} - t0))
        printf '%d.%d %s\n' $((d / 1000000)) $((d / 100000 % 10)) "$line"
    done >"$log"
    rc=${PIPESTATUS[0]}
    set -e
    t_total=$(awk -v us=$(($(now_us) - t0)) 'BEGIN {printf "%.1f", us / 1e6}')
    children_cpu
    cpu=$(awk -v a="$c0" -v b="$(cpu_seconds)" 'BEGIN {printf "%.0f", b - a}')
    kill "$sampler" 2>/dev/null; wait "$sampler" 2>/dev/null || true
    t_build=$(awk '$2 == "Finished" {print $1; exit}' "$log")
    [ -n "$t_build" ] || t_build=$t_total
    local crates downloaded
    crates=$(grep -c '^[0-9.]* *Compiling ' "$log" || true)
    # The crates.io index and the downloads come before the first crate is compiled.
    downloaded=$(awk '$2 == "Downloaded" {n++} $2 == "Compiling" {if (n) printf "%d crates downloaded in the first %.0f s", n, $1; exit}' "$log")
    awk -v rc="$rc" -v b="$t_build" -v t="$t_total" -v n="$crates" -v d="${downloaded:+; $downloaded}" 'BEGIN {
        printf "   exit %d; build %.0f s (%d crates compiled%s), after the build %.0f s, total %.0f s\n", rc, b, n, d, t-b, t }'
    echo "   CPU time (user + system, build and run): $cpu s"
    echo "   load after $(load); during (every 10 s): $(awk '{s+=$1; if ($1>m) m=$1; o+=$2; if ($2>mo) mo=$2} END {if (NR) printf "1-min load mean %.2f, max %.2f; other compilers mean %.1f, max %d (%d samples)", s/NR, m, o/NR, mo, NR}' "$work/$name.load")"
}

if [ "${SKIP_DEMO:-0}" = 1 ]; then
    timed release "$work/release.log" cargo build --release --bin dragnet "${timings[@]}"
else
    timed release "$work/release.log" cargo run --release "${timings[@]}" -- demo
fi
rel_rc=$rc rel_build=$t_build rel_total=$t_total
[ "$rel_rc" = 0 ] || { tail -30 "$work/release.log"; echo "cargo run --release -- demo FAILED"; exit 1; }
[ "${TIMINGS:-0}" = 1 ] && cp "$CARGO_TARGET_DIR"/cargo-timings/cargo-timing.html "$work/timings-release.html"
grep -E '^[0-9.]+ +(coverage|politeness|crawl|throughput)' "$work/release.log" | cut -d' ' -f2- | head -8 || true

timed test "$work/test.log" cargo test "${timings[@]}"
test_rc=$rc test_build=$t_build test_total=$t_total
[ "${TIMINGS:-0}" = 1 ] && cp "$CARGO_TARGET_DIR"/cargo-timings/cargo-timing.html "$work/timings-test.html"
[ "$test_rc" = 0 ] || { grep -v '^[0-9.]* *Compiling' "$work/test.log" | tail -30; echo "cargo test FAILED"; }
grep -E '^[0-9.]+ test result' "$work/test.log" | awk '{p+=$5; f+=$7; i+=$9} END {print "   " p " tests passed, " f " failed, " i " ignored"}'

awk -v rb="$rel_build" -v rt="$rel_total" -v tb="$test_build" -v tt="$test_total" 'BEGIN {
    printf "\n| phase | seconds |\n|---|--:|\n"
    printf "| release build (`cargo run --release` up to Finished) | %.0f |\n", rb
    printf "| demo run | %.0f |\n", rt-rb
    printf "| **`cargo run --release -- demo` total** (target 300) | **%.0f** (%.1f min) |\n", rt, rt/60
    printf "| test build (`cargo test` up to Finished) | %.0f |\n", tb
    printf "| running the tests | %.0f |\n", tt-tb
    printf "| **`cargo test` total** (target 240) | **%.0f** (%.1f min) |\n", tt, tt/60
    printf "| both commands | %.0f (%.1f min) |\n", rt+tt, (rt+tt)/60 }'
echo "logs in $work (release.log, test.log)"
[ "$test_rc" = 0 ]
