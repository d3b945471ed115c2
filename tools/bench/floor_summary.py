#!/usr/bin/env python3
"""Issue 31's targets over several peerbench runs: one line a run and the medians.

    tools/bench/floor_summary.py RUN_DIR...             # each with the floor.json floor.sh wrote
    tools/bench/floor_summary.py --label 9de4b058 /tmp/peerbench/runs/2026113*

On the 2-core box one build's CPU per 1,000 pages moves by 15-25% between runs minutes apart (the
host's neighbours; docs/BENCHMARKS.md), more than the margin of any target, so one run that
meets the targets, or misses them, says little. This prints each run's row of the floor (wget2's
and dragnet's CPU per 1,000 pages, the archive's, dragnet's CPU as a multiple of the floor, its
wall time as a multiple of the bound, spider-rs lean's wall time, peak RSS), how many runs met
each target, and the median of each multiple. `--label TEXT` keeps only the runs whose dragnet
label contains TEXT. Run directories without a floor.json are skipped, and said so.
"""

import json
import os
import statistics
import sys

# Issue 31's targets: CPU per 1,000 pages at most 1.25x the floor, wall time at most 1.2x the
# bound (floor.json's wall_bound_s is already 1.2x the bound), faster than spider-rs lean, peak
# RSS at most 256 MB.
CPU_TARGET = 1.25
WALL_TARGET = 1.2
RSS_TARGET_MB = 256


def rows(dirs, label):
    for d in dirs:
        path = os.path.join(d, "floor.json")
        if not os.path.isfile(path):
            print(f"floor_summary: {d}: no floor.json (floor.sh did not run there)", file=sys.stderr)
            continue
        with open(path) as f:
            r = json.load(f)
        if label and label not in r.get("commit", ""):
            continue
        r["wall_x_bound"] = r["dragnet_wall_s"] / (r["wall_bound_s"] / WALL_TARGET)
        yield r


def main(argv):
    label = None
    if len(argv) >= 2 and argv[0] == "--label":
        label, argv = argv[1], argv[2:]
    if not argv:
        print(__doc__.strip(), file=sys.stderr)
        return 2
    runs = list(rows(argv, label))
    if not runs:
        print("floor_summary: no run with a floor.json matched", file=sys.stderr)
        return 1
    print("| run | dragnet | wget2 CPU-s / 1k | archive CPU-s / 1k | dragnet CPU-s / 1k "
          "| CPU x floor | dragnet wall s | wall x bound | spider-lean wall s | peak RSS MB |")
    print("|---|---|--:|--:|--:|--:|--:|--:|--:|--:|")
    for r in runs:
        lean = r.get("spider_lean_wall_s")
        print(f"| `{os.path.basename(r['run'].rstrip('/'))}` | {r['commit']} "
              f"| {r['wget2_cpu_s_per_1k']:.3f} | {r['archive_cpu_s_per_1k']:.3f} "
              f"| {r['dragnet_cpu_s_per_1k']:.3f} | {r['cpu_x_floor']:.2f}x "
              f"| {r['dragnet_wall_s']:.1f} | {r['wall_x_bound']:.2f}x "
              f"| {'-' if lean is None else f'{lean:.1f}'} | {r['dragnet_peak_rss_mb']:.0f} |")
    n = len(runs)
    cpu = [r["cpu_x_floor"] for r in runs]
    wall = [r["wall_x_bound"] for r in runs]
    met = {
        "CPU <= 1.25x floor": sum(c <= CPU_TARGET for c in cpu),
        "wall <= 1.2x bound": sum(w <= WALL_TARGET for w in wall),
        "faster than spider-lean": sum(
            r.get("spider_lean_wall_s") is not None
            and r["dragnet_wall_s"] < r["spider_lean_wall_s"]
            for r in runs
        ),
        "peak RSS <= 256 MB": sum(r["dragnet_peak_rss_mb"] <= RSS_TARGET_MB for r in runs),
        "all four in one run": sum(
            r["cpu_x_floor"] <= CPU_TARGET
            and r["wall_x_bound"] <= WALL_TARGET
            and r.get("spider_lean_wall_s") is not None
            and r["dragnet_wall_s"] < r["spider_lean_wall_s"]
            and r["dragnet_peak_rss_mb"] <= RSS_TARGET_MB
            for r in runs
        ),
    }
    print()
    print(f"- runs: {n}; median CPU x floor {statistics.median(cpu):.2f}x "
          f"(range {min(cpu):.2f}-{max(cpu):.2f}); median wall x bound "
          f"{statistics.median(wall):.2f}x (range {min(wall):.2f}-{max(wall):.2f})")
    print("- met: " + "; ".join(f"{k} in {v} of {n}" for k, v in met.items()))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
