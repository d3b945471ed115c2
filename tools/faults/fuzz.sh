#!/usr/bin/env bash
# Fuzzing campaign (docs/RELIABILITY.md, campaign 6): every parser of untrusted bytes under
# libFuzzer through cargo-fuzz, each for SECONDS, its corpus kept in the repository.
#
#   tools/faults/fuzz.sh [SECONDS] [TARGET...]     # defaults: 600 s, every target
#
# - Targets: `fuzz/fuzz_targets/*.rs`, each calling `dragnet::fuzz::<name>` (src/fuzz.rs):
#   run_file, warc, http_head, robots, sitemap, html, url, config.
# - Needs the nightly toolchain (libFuzzer's sanitizer flags) and cargo-fuzz; installs cargo-fuzz
#   with `cargo install --locked` if it is missing. Nothing else in the project uses nightly.
# - Seeds: a corpus directory that is empty is first seeded from tests/data (robots.txt cases,
#   HTML pages, WARC files, sitemaps, URL test inputs) and dragnet's own outputs (a run file, a
#   crawl.toml).
# - Each target runs with AddressSanitizer, one job, -timeout=10 (a single input taking longer is
#   a hang, reported), -rss_limit_mb=2048, -max_len per target; what it finds goes to
#   fuzz/corpus/<target>/, then `cargo fuzz cmin` keeps the smallest set with the same coverage.
#   A crash leaves its input in fuzz/artifacts/<target>/ and fails the script; fix it and copy the
#   input into the corpus, where `tests/fuzz_replay.rs` replays it on every `cargo test`.
# - Prints a markdown table (target, seconds, executions, corpus before/after, crashes).
set -euo pipefail
cd "$(dirname "$0")/../.."
ROOT=$(pwd)

SECONDS_EACH=${1:-600}
shift || true
TARGETS=("$@")
[ ${#TARGETS[@]} -gt 0 ] || TARGETS=(run_file warc http_head robots sitemap html url config)

rustup toolchain list | grep -q '^nightly' || rustup toolchain install nightly --profile minimal
command -v cargo-fuzz >/dev/null 2>&1 || cargo install --locked cargo-fuzz

max_len() {
    case "$1" in
        warc) echo 65536 ;;
        html | sitemap | run_file) echo 32768 ;;
        robots | http_head | config) echo 8192 ;;
        url) echo 1024 ;;
    esac
}

seed() { # seed TARGET DIR: fills an empty corpus directory
    local t=$1 dir=$2
    python3 - "$t" "$dir" "$ROOT" <<'EOF'
import gzip, hashlib, json, os, sys
t, out, root = sys.argv[1], sys.argv[2], sys.argv[3]
data = os.path.join(root, "tests", "data")
def put(b):
    if isinstance(b, str):
        b = b.encode()
    with open(os.path.join(out, hashlib.sha1(b).hexdigest()), "wb") as f:
        f.write(b)
if t == "robots":
    seen = set()
    for line in open(os.path.join(data, "robots", "google_cases.jsonl")):
        r = json.loads(line)["robots"]
        if r not in seen:
            seen.add(r); put(r)
    real = os.path.join(data, "robots", "real")
    for name in sorted(os.listdir(real))[:40]:
        p = os.path.join(real, name)
        if os.path.isfile(p):
            put(open(p, "rb").read()[:8192])
elif t == "html":
    pages = os.path.join(data, "html", "pages")
    for name in sorted(os.listdir(pages))[:40]:
        put(gzip.open(os.path.join(pages, name)).read()[:32768])
elif t == "warc":
    for name in ("iana.warc.gz", "whirlwind.warc.gz"):
        raw = gzip.open(os.path.join(data, "warc", name)).read()
        put(raw[:65536])
        put(open(os.path.join(data, "warc", name), "rb").read()[:65536])
elif t == "sitemap":
    for d in ("sitemap-crate", "trafilatura"):
        for name in sorted(os.listdir(os.path.join(data, "sitemaps", d))):
            if not name.endswith(".json"):
                put(open(os.path.join(data, "sitemaps", d, name), "rb").read()[:32768])
elif t == "url":
    tests = json.load(open(os.path.join(data, "urls", "urltestdata.json")))
    for c in tests:
        if isinstance(c, dict) and "input" in c:
            put(c["input"])
elif t == "http_head":
    put("HTTP/1.1 200 OK\r\nContent-Type: text/html; charset=utf-8\r\nContent-Length: 5\r\n\r\nhello")
    put("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhello\r\n0\r\n\r\n")
    put(b"HTTP/1.1 200 OK\r\nContent-Encoding: gzip\r\n\r\n" + gzip.compress(b"<html>hello</html>"))
    put("HTTP/1.0 301 Moved\nLocation: /x\nX-Robots-Tag: nofollow\n\n")
elif t == "config":
    put(open(os.path.join(root, "pipeline", "crawl.toml")).read())
    put('[crawl]\nname = "x"\npartitions = 4\n[fetch]\nthreads = 2\nmax_body = "1 MiB"\n')
elif t == "run_file":
    pass  # seeded below from a real run file
EOF
    if [ "$t" = run_file ]; then
        # Real run files of several schemas: a tiny crawl's state, made by dragnet itself.
        local tmp
        tmp=$(mktemp -d)
        printf 'http://a.test/\nhttp://b.test/x?y=1\n' > "$tmp/seeds.txt"
        cargo run -q --release -- init --seeds "$tmp/seeds.txt" "$tmp/crawl" >/dev/null 2>&1
        find "$tmp/crawl" -name '*.run' -size -32k | while read -r f; do
            cp "$f" "$dir/$(sha1sum "$f" | cut -c1-40)"
        done
        rm -rf "$tmp"
    fi
}

rows=()
fail=0
for t in "${TARGETS[@]}"; do
    corpus="fuzz/corpus/$t"
    mkdir -p "$corpus" "fuzz/artifacts/$t"
    [ -n "$(ls -A "$corpus")" ] || seed "$t" "$corpus"
    before=$(ls "$corpus" | wc -l)
    log=$(mktemp)
    echo "== fuzzing $t for ${SECONDS_EACH}s (corpus: $before inputs)" >&2
    set +e
    (cd fuzz && cargo +nightly fuzz run "$t" "corpus/$t" -- \
        -max_total_time="$SECONDS_EACH" -max_len="$(max_len "$t")" -timeout=10 \
        -rss_limit_mb=2048 -print_final_stats=1 -artifact_prefix="artifacts/$t/") > "$log" 2>&1
    rc=$?
    set -e
    execs=$(grep -o 'stat::number_of_executed_units: *[0-9]*' "$log" | grep -o '[0-9]*$' || echo "?")
    crashes=$(ls "fuzz/artifacts/$t" | wc -l)
    if [ "$rc" != 0 ]; then
        fail=1
        echo "== $t: libFuzzer exit $rc; last lines:" >&2
        tail -30 "$log" >&2
    fi
    # Keep the smallest corpus with the same coverage.
    (cd fuzz && cargo +nightly fuzz cmin "$t" "corpus/$t" -- -max_len="$(max_len "$t")" -rss_limit_mb=2048) > /dev/null 2>&1 || true
    after=$(ls "$corpus" | wc -l)
    rows+=("| $t | $SECONDS_EACH | $execs | $before -> $after | $crashes |")
    rm -f "$log"
done

echo "- Date: $(date -u +%Y-%m-%d), commit $(git rev-parse --short HEAD), $(nproc) cores, $(rustc +nightly --version)"
echo "- Command: \`tools/faults/fuzz.sh $SECONDS_EACH ${TARGETS[*]}\`"
echo
echo "| target | seconds | executions | corpus (inputs) | crashes |"
echo "|---|--:|--:|--:|--:|"
printf '%s\n' "${rows[@]}"
exit "$fail"
