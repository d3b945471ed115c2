#!/usr/bin/env python3
"""Scale-out of a dragnet cycle under Slurm, simulated from measured stage times (issue 23, point 5).

Input: the per-partition `.done` markers of a real crawl, extracted by tools/bench/scale.sh to
markers.csv (cycle, stage, partition, seconds, counts, bytes and records in and out) and
hosts.csv (per cycle and partition: hosts fetched, pages, pages of the largest host).

1. Cost model, fitted on the markers, per stage: task seconds = a + b x work (least squares;
   work = pages fetched for fetch and parse, input records for split, merge and prioritize).
   The fetch is bounded by politeness: one connection per host, so a partition's fetch lasts
   at least its largest host's pages / the per-host rate (fitted on the markers; see
   fit_fetch), and a host whose robots.txt never answers holds its partition's fetch for the
   timeouts (the stall, measured):
       fetch seconds = a + max(b x pages, pages / (threads x rate), largest host / rate, stall).
2. Workload: a power-law web, H hosts whose sizes (pages per cycle) follow a Pareto law of
   density exponent ALPHA (p(x) ~ x^-ALPHA; the web's host sizes: 1.5-2), capped per cycle at
   `[prioritize] max_urls_per_host` (5,000), scaled so that the cycle fetches URLS pages.
   Hosts go to M partitions by hash (uniform random); a partition's work is its hosts' sum.
   The other stages' work is the measured ratio (their work units per fetched page) x pages.
3. Slurm: n nodes of c CPUs (task slots); each stage is a job array whose tasks are dispatched
   in index order to the first free slot (lowest node, then CPU): Slurm's scheduler at equal
   priority is list scheduling in job id and array index order. afterok: an array starts when
   the whole previous array has ended, plus a scheduling hop (HOP seconds); aftercorr: task p
   of split (and parse, prioritize) starts HOP after task p of the stage before, while merge
   waits for every split (its inputs come from every partition). Every task also pays
   TASK_START seconds (process start). The cycle ends with the `finish` job (one more hop).
4. Output: per M, variant and n: cycle time, speed-up T1/Tn, efficiency speed-up/n, load
   variance over nodes (coefficient of variation of busy seconds, max/mean), averaged over
   seeds; WebGather's measured speed-ups (Yan et al. 2002, Table 4) beside them.

`--predict --nodes 1,2,3 --cpus-per-node K --partitions M` instead replays the measured crawl
itself (its own per-partition tasks, each cycle) on a small cluster and prints the predicted
time of every cycle, for setting beside a real multi-node run of the same crawl.

Python 3 standard library only; deterministic for a given --seed.
"""

import argparse
import bisect
import csv
import heapq
import json
import math
import random
import statistics
import sys
from collections import defaultdict

STAGES = ["fetch", "parse", "split", "merge", "prioritize"]
WEBGATHER = {1: 1.0, 2: 1.85, 3: 2.95, 4: 4.40}  # Yan et al. 2002, Table 4 (actual system)


# ---------------------------------------------------------------------------------------------
# Measurements and the fit


def load_markers(path, hosts_path):
    rows = []
    with open(path) as f:
        for r in csv.DictReader(f):
            rows.append(r)
    hosts = {}
    if hosts_path:
        with open(hosts_path) as f:
            for r in csv.DictReader(f):
                hosts[(int(r["cycle"]), int(r["partition"]))] = (
                    int(r["hosts"]), int(r["pages"]), int(r["max_host_pages"]))
    tasks = []
    for r in rows:
        g = lambda k: float(r.get(k) or 0)  # noqa: E731
        c, p, st = int(r["cycle"]), int(r["partition"]), r["stage"]
        if st not in STAGES:
            continue
        h = hosts.get((c, p), (0, 0, 0))
        if st == "fetch":
            work = g("n_results")
        elif st == "parse":
            work = g("n_pages")
        else:
            work = g("in_records")
        tasks.append({"cycle": c, "partition": p, "stage": st, "seconds": g("seconds"),
                      "work": work, "pages": g("n_results") if st == "fetch" else 0.0,
                      "max_host": float(h[2]), "inline": g("n_inline") > 0,
                      "hosts": float(h[0]), "stalled": g("n_error_robots_unreachable") > 0})
    return tasks


def lstsq(xs, ys):
    """Least squares y = X beta, X rows given; normal equations (tiny systems)."""
    k = len(xs[0])
    a = [[sum(x[i] * x[j] for x in xs) for j in range(k)] for i in range(k)]
    b = [sum(x[i] * y for x, y in zip(xs, ys)) for i in range(k)]
    # Gauss-Jordan with partial pivoting.
    for col in range(k):
        piv = max(range(col, k), key=lambda r: abs(a[r][col]))
        if abs(a[piv][col]) < 1e-300:
            return None
        a[col], a[piv] = a[piv], a[col]
        b[col], b[piv] = b[piv], b[col]
        for r in range(k):
            if r != col:
                f = a[r][col] / a[col][col]
                for j in range(k):
                    a[r][j] -= f * a[col][j]
                b[r] -= f * b[col]
    return [b[i] / a[i][i] for i in range(k)]


def r2(xs, ys, beta):
    mean = sum(ys) / len(ys)
    ss_tot = sum((y - mean) ** 2 for y in ys) or 1e-300
    ss_res = sum((y - sum(bi * xi for bi, xi in zip(beta, x))) ** 2 for x, y in zip(xs, ys))
    return 1 - ss_res / ss_tot


def fit_line(ws, ys):
    """y = a + b w with a, b >= 0 (a clamped: refit through the origin; b clamped: a = mean)."""
    xs = [(1.0, w) for w in ws]
    beta = lstsq(xs, ys) if len(set(ws)) > 1 else None
    if beta is None or beta[1] < 0:
        beta = [sum(ys) / len(ys), 0.0]
    if beta[0] < 0:
        sw = sum(w * w for w in ws) or 1e-300
        beta = [0.0, sum(w * y for w, y in zip(ws, ys)) / sw]
    return beta, r2(xs, ys, beta)


FETCH_BENCH_US = 1e6 / 4055  # fetch-only benchmark: 4,055 pages/s on one partition, CPU-bound


def fit_fetch(m, every, ts, ys):
    """The fetch's model. On a websim crawl a partition holds a few hosts and fetches each over
    one connection, so its time is its largest host's: pages of the host / per-host rate (503
    Retry-After waits included). The least-squares fits on pages and on the largest host are
    kept for the record, but the largest host's size hardly varies (websim's hosts are all the
    same size), so the model takes: a = median time of fetch tasks with 1-10 results (the fixed
    cost), rate = sum of largest hosts / sum of (seconds - a) (ratio estimator, tasks with a
    largest host of 100+ pages), b = CPU-bound cost per page from the fetch-only benchmark
    (never reached here: a partition of a few hosts is host-bound), and the stall."""
    m["ls_a"], m["ls_b"], m["ls_r2"] = m["a"], m["b"], m["r2"]
    empty = [t["seconds"] for t in every if t["work"] == 0 and not t["stalled"]]
    m["empty_tasks"] = len(empty)
    m["empty_secs"] = statistics.median(empty) if empty else 0.0
    tiny = [t["seconds"] for t in ts if 0 < t["work"] <= 10]
    m["tiny_tasks"] = len(tiny)
    a = statistics.median(tiny) if tiny else max(0.0, m["a"])
    big = [t for t in ts if t["max_host"] >= 100]
    busy = sum(max(0.0, t["seconds"] - a) for t in big)
    m["host_rate"] = sum(t["max_host"] for t in big) / busy if big and busy > 0 else float("inf")
    m["rate_tasks"] = len(big)
    if big:
        xs = [(1.0, t["max_host"] / m["host_rate"]) for t in big]
        m["rate_r2"] = r2(xs, [t["seconds"] for t in big], [a, 1.0])
        xs3 = [(1.0, t["work"], t["max_host"]) for t in big]
        beta = lstsq(xs3, [t["seconds"] for t in big])
        if beta is not None:
            m["host3"] = {"a": beta[0], "b": beta[1], "c": beta[2],
                          "r2": r2(xs3, [t["seconds"] for t in big], beta)}
    m["a"], m["b"], m["r2"] = a, FETCH_BENCH_US * 1e-6, m.get("rate_r2", 0.0)
    # Stalls: a host whose robots.txt never answers keeps its partition's fetch waiting for the
    # timeouts (40 s here) however little it has to do. Such tasks are left out of the fit; the
    # stall is the longest of them, the share of stalling hosts the first cycle's tasks that
    # lasted that long over the hosts that cycle reached.
    stalled = [t for t in every if t["stalled"]]
    m["stall_tasks"] = len(stalled)
    m["stall_secs"] = max((t["seconds"] for t in stalled), default=0.0)
    c0 = min(t["cycle"] for t in every)
    n_st = sum(1 for t in stalled if t["cycle"] == c0 and t["seconds"] >= 0.9 * m["stall_secs"])
    n_ok = sum(t["hosts"] for t in every if t["cycle"] == c0)
    m["stall_hosts"] = n_st
    m["stall_frac"] = n_st / (n_ok + n_st) if n_st and n_ok else 0.0  # n_ok: from hosts.csv
    m["model"] = "largest host / rate"


def fit(tasks, threads):
    model = {"stages": {}, "threads": threads}
    fetched = sum(t["work"] for t in tasks if t["stage"] == "fetch") or 1.0
    for st in STAGES:
        every = [t for t in tasks if t["stage"] == st]
        if not every:
            continue
        # A fetch holding a host whose robots.txt never answers waits for the timeouts however
        # little it has to do: those tasks give the stall, the others the cost model.
        ts = [t for t in every if not t["stalled"]] or every
        ws, ys = [t["work"] for t in ts], [t["seconds"] for t in ts]
        (a, b), q = fit_line(ws, ys)
        m = {"a": a, "b": b, "r2": q, "tasks": len(every), "fitted": len(ts),
             "seconds": sum(t["seconds"] for t in every),
             "work": sum(t["work"] for t in every), "per_page": sum(t["work"] for t in every) / fetched,
             "inline": all(t["inline"] for t in every) and st == "parse"}
        if st == "fetch":
            fit_fetch(m, every, ts, ys)
        model["stages"][st] = m
    return model


def print_fit(model, out):
    p = lambda *a: print(*a, file=out)  # noqa: E731
    p("Cost model fitted on the markers (seconds of one task = a + b x work; least squares over")
    p("every (cycle, partition) of the crawl; work per fetched page is the stage's total work over")
    p("the pages fetched):\n")
    p("| stage | tasks | measured s (sum) | work unit | work per fetched page | a: s per task | b: µs per unit | R² |")
    p("|---|--:|--:|---|--:|--:|--:|--:|")
    unit = {"fetch": "page fetched", "parse": "page parsed", "split": "link record in",
            "merge": "record in (state + new)", "prioritize": "record in"}
    for st, m in model["stages"].items():
        note = " (inline in the fetch)" if m["inline"] else ""
        p(f"| {st}{note} | {m['tasks']} | {m['seconds']:.1f} | {unit[st]} | {m['per_page']:.2f} | "
          f"{m['a']:.3f} | {1e6 * m['b']:.1f} | {m['r2']:.2f} |")
    f = model["stages"].get("fetch", {})
    if "rate_tasks" in f:
        p(f"\nFetch (the table's row is the model below; R² is the largest-host model's):")
        p(f"- least squares on pages: {f['ls_a']:.3f} s + {1e6 * f['ls_b']:.1f} µs x pages, "
          f"R² {f['ls_r2']:.2f}" + (f"; on pages and the largest host: {f['host3']['a']:.3f} s + "
          f"{1e6 * f['host3']['b']:.1f} µs x pages + {1e3 * f['host3']['c']:.2f} ms x largest host, "
          f"R² {f['host3']['r2']:.2f}" if "host3" in f else "") + ": websim's hosts are all "
          "the same size, so neither separates the terms;")
        p(f"- fixed cost a = {f['a']:.3f} s (median of the {f['tiny_tasks']} fetch tasks with 1-10 "
          f"results; {f['empty_tasks']} with none took {f['empty_secs']:.3f} s);")
        p(f"- per-host rate {f['host_rate']:.0f} pages/s = largest hosts' pages over their tasks' "
          f"seconds beyond a ({f['rate_tasks']} tasks, largest host 100+ pages; loopback, no "
          f"crawl-delay, websim's 503 Retry-After waits of up to 1 s included); "
          f"R² of a + largest host / rate: {f.get('rate_r2', 0):.2f};")
        p(f"- throughput b = {1e6 * f['b']:.0f} µs per page (CPU-bound fetch of one partition, "
          f"fetch-only benchmark, 4,055 pages/s; a partition of this crawl never gets there);")
        p(f"- stall: {f['stall_secs']:.1f} s, the longest of the {f['stall_tasks']} fetch tasks "
          f"holding a host whose robots.txt did not answer (left out of the fit); "
          f"{f['stall_hosts']} such tasks in the first cycle, a share of {f['stall_frac']:.3f} of "
          f"its hosts;")
        p(f"- model: seconds = a + max(b x pages, pages / ({model['threads']} threads x rate), "
          f"largest host / rate, stall if the partition holds a stalling host).")


# ---------------------------------------------------------------------------------------------
# The synthetic web


def pareto_sizes(rng, hosts, alpha, cap, urls):
    """Host sizes (pages this cycle): Pareto of density exponent alpha (tail index alpha - 1),
    x_min chosen so the capped sizes sum to `urls`."""
    raw = [(1.0 - rng.random()) ** (-1.0 / (alpha - 1.0)) for _ in range(hosts)]  # x_min = 1
    srt = sorted(raw)
    prefix = [0.0]
    for r in srt:
        prefix.append(prefix[-1] + r)

    def total(xmin):  # sum of min(cap, xmin * r)
        k = bisect.bisect_left(srt, cap / xmin)  # srt[:k] below the cap
        return xmin * prefix[k] + cap * (len(srt) - k)
    lo, hi = 1e-6, float(cap)
    if total(hi) < urls:  # cannot reach: every host at the cap
        xmin = hi
    else:
        for _ in range(80):
            mid = math.sqrt(lo * hi)
            if total(mid) < urls:
                lo = mid
            else:
                hi = mid
        xmin = hi
    return [max(1, int(round(min(cap, xmin * r)))) for r in raw]


def make_partitions(rng, sizes, m, stall_frac):
    """Hosts to partitions by hash (uniform); a host stalls (robots.txt never answers) with
    probability stall_frac."""
    pages = [0] * m
    biggest = [0] * m
    stalled = [False] * m
    for s in sizes:
        p = rng.randrange(m)
        pages[p] += s
        if s > biggest[p]:
            biggest[p] = s
        if stall_frac and rng.random() < stall_frac:
            stalled[p] = True
    return pages, biggest, stalled


def task_seconds(model, stage, pages, biggest, host_rate, threads, stall=0.0):
    m = model["stages"][stage]
    if m["inline"]:
        return 0.0
    if stage == "fetch":
        t = max(m["b"] * pages, stall)
        if host_rate and host_rate < float("inf"):
            t = max(t, pages / (threads * host_rate), biggest / host_rate)
        return m["a"] + t
    return m["a"] + m["b"] * m["per_page"] * pages


# ---------------------------------------------------------------------------------------------
# Slurm


def simulate(durations, nodes, cpus, variant, hop, task_start, parse_array):
    """durations: {stage: [seconds per partition]}. Returns (cycle seconds, busy per node).

    One event loop (list scheduling): a task is released when its dependencies have ended plus
    `hop`; whenever slots are free, the released tasks go to them by priority (stage, array
    index), the slots taken in (node, CPU) order. afterok releases a whole array when the
    previous array's last task has ended; aftercorr releases task p of a stage when task p of
    the stage before has ended, except merge, which waits for every split."""
    stages = [s for s in STAGES if s in durations and (s != "parse" or parse_array)]
    m = len(durations[stages[0]])
    merge_i = stages.index("merge") if "merge" in stages else None
    busy = [0.0] * nodes
    slots = [(0.0, nd, c) for nd in range(nodes) for c in range(cpus)]
    heapq.heapify(slots)
    events = [(0.0, 0, p) for p in range(m)]  # (release time, stage index, partition)
    heapq.heapify(events)
    left = [m] * len(stages)  # tasks of each stage not yet started
    last_end = [0.0] * len(stages)
    avail = []
    t = 0.0
    while events or avail:
        if not avail:
            t = max(t, events[0][0])
        while events and events[0][0] <= t:
            _, si, p = heapq.heappop(events)
            heapq.heappush(avail, (si, p))
        if slots[0][0] > t:
            t = slots[0][0]
            continue
        freed = []
        while slots and slots[0][0] <= t:
            freed.append(heapq.heappop(slots))
        freed.sort(key=lambda s: (s[1], s[2]))
        for k, (f, nd, c) in enumerate(freed):
            if not avail:
                for s in freed[k:]:
                    heapq.heappush(slots, (t, s[1], s[2]))
                break
            si, p = heapq.heappop(avail)
            d = task_start + durations[stages[si]][p]
            e = t + d
            busy[nd] += d
            heapq.heappush(slots, (e, nd, c))
            left[si] -= 1
            last_end[si] = max(last_end[si], e)
            if si + 1 == len(stages):
                continue
            whole = variant == "afterok" or si + 1 == merge_i
            if not whole:
                heapq.heappush(events, (e + hop, si + 1, p))
            elif left[si] == 0:
                for q in range(m):
                    heapq.heappush(events, (last_end[si] + hop, si + 1, q))
    return last_end[-1] + hop, busy  # the last hop: the cycle's `finish` job


def stats(busy):
    mean = sum(busy) / len(busy)
    if len(busy) < 2 or mean == 0:
        return 0.0, 1.0
    return statistics.pstdev(busy) / mean, max(busy) / mean


# ---------------------------------------------------------------------------------------------


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--markers", required=True, help="markers.csv from tools/bench/scale.sh")
    ap.add_argument("--hosts-csv", help="hosts.csv from tools/bench/scale.sh")
    ap.add_argument("--nodes", default="1,2,3,4,8,16",
                    help="node counts (default 1,2,3,4,8,16: 3 for WebGather's table)")
    ap.add_argument("--cpus-per-node", type=int, default=16, help="task slots per node (16)")
    ap.add_argument("--partitions", default="256,4096", help="M values (default 256,4096)")
    ap.add_argument("--urls", type=float, default=2e8,
                    help="pages fetched per cycle in the simulated web (2e8: docs/scale.md)")
    ap.add_argument("--hosts", type=float, default=2e6, help="hosts in the simulated web (2e6)")
    ap.add_argument("--alpha", type=float, default=1.8,
                    help="power-law density exponent of host sizes (1.8; the web: 1.5-2)")
    ap.add_argument("--host-cap", type=float, default=5000,
                    help="pages per host per cycle, [prioritize] max_urls_per_host (5000)")
    ap.add_argument("--host-rate", type=float, default=None,
                    help="pages/s one host is fetched at (default: fitted on the markers)")
    ap.add_argument("--stall-frac", type=float, default=None,
                    help="share of hosts whose robots.txt never answers (default: measured)")
    ap.add_argument("--stall-secs", type=float, default=None,
                    help="seconds a fetch holding such a host lasts at least (default: measured)")
    ap.add_argument("--fetch-overhead", type=float, default=None,
                    help="seconds per fetch task, instead of the fit's intercept")
    ap.add_argument("--fetch-us-per-page", type=float, default=None,
                    help="µs per page of a fetch task's throughput term, instead of the fit's")
    ap.add_argument("--threads", type=int, default=16, help="[fetch] threads per task (16)")
    ap.add_argument("--hop", type=float, default=1.0,
                    help="seconds from a dependency's end to the dependent's start (1.0)")
    ap.add_argument("--task-start", type=float, default=0.1, help="seconds to start a task (0.1)")
    ap.add_argument("--parse-array", action="store_true",
                    help="parse as its own array ([fetch] parse = false); default: inline")
    ap.add_argument("--variants", default="afterok,aftercorr")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--seeds", type=int, default=5, help="webs averaged over (5)")
    ap.add_argument("--predict", action="store_true",
                    help="replay the measured crawl's own tasks on --nodes x --cpus-per-node")
    ap.add_argument("--json", help="also write the results as JSON here")
    ap.add_argument("--no-fit", action="store_true", help="do not print the fitted model")
    ap.add_argument("--summary", metavar="LABEL",
                    help="print only one table row per M and dependency, for the largest n, "
                         "labelled LABEL (no header: see --summary-header)")
    ap.add_argument("--summary-header", action="store_true",
                    help="print the header of the --summary table and exit")
    args = ap.parse_args()

    if args.summary_header:
        print("| setting | M | dependency | nodes | cycle s at n = 1 | at n | speed-up | "
              "efficiency | ≥ 0.9 n | node busy CV | max/mean |")
        print("|---|--:|---|--:|--:|--:|--:|--:|---|--:|--:|")
        return
    tasks = load_markers(args.markers, args.hosts_csv)
    model = fit(tasks, args.threads)
    fm = model["stages"]["fetch"]
    if args.fetch_overhead is not None:
        fm["a"] = args.fetch_overhead
    if args.fetch_us_per_page is not None:
        fm["b"] = args.fetch_us_per_page * 1e-6
    rate = args.host_rate if args.host_rate else fm["host_rate"]
    stall_frac = fm["stall_frac"] if args.stall_frac is None else args.stall_frac
    stall_secs = fm["stall_secs"] if args.stall_secs is None else args.stall_secs
    args.stall_frac, args.stall_secs = stall_frac, stall_secs
    nodes = [int(x) for x in args.nodes.split(",")]
    variants = args.variants.split(",")
    out = sys.stdout
    if args.predict:
        return predict(args, tasks, model, rate, nodes, variants)

    if not args.no_fit:
        print_fit(model, out)
    results = []
    sizes_info = []
    webs = {}
    for m in [int(x) for x in args.partitions.split(",")]:
        for s in range(args.seeds):
            if s not in webs:  # the same web for every M
                webs[s] = pareto_sizes(random.Random(args.seed * 1_000_003 + s), int(args.hosts),
                                       args.alpha, args.host_cap, args.urls)
            sizes = webs[s]
            rng = random.Random((args.seed * 1_000_003 + s) * 31 + m)
            pages, biggest, stalled = make_partitions(rng, sizes, m, stall_frac)
            durations = {st: [task_seconds(model, st, pages[p], biggest[p], rate, args.threads,
                                           stall_secs if stalled[p] else 0.0)
                              for p in range(m)] for st in model["stages"]}
            fetch = durations["fetch"]
            sizes_info.append({"M": m, "seed": s, "pages": sum(sizes), "largest_host": max(sizes),
                               "part_cv": statistics.pstdev(pages) / (sum(pages) / m),
                               "part_max_mean": max(pages) / (sum(pages) / m),
                               "fetch_max_mean": max(fetch) / (sum(fetch) / m),
                               "host_bound": sum(
                                   1 for p in range(m)
                                   if max(biggest[p] / rate, stall_secs if stalled[p] else 0.0)
                                   >= max(fm["b"] * pages[p], pages[p] / (args.threads * rate))),
                               "work": sum(sum(v) for v in durations.values())})
            for v in variants:
                for n in nodes:
                    t, busy = simulate(durations, n, args.cpus_per_node, v, args.hop,
                                       args.task_start, args.parse_array)
                    cv, mx = stats(busy)
                    results.append({"M": m, "seed": s, "variant": v, "n": n, "T": t,
                                    "cv": cv, "max_mean": mx})
    report(args, results, sizes_info, nodes, variants, rate, out)
    if args.json:
        json.dump({"model": model, "results": results, "webs": sizes_info,
                   "args": vars(args)}, open(args.json, "w"), indent=1, default=str)


def summarize(results, m, v, n, nodes):
    """Mean cycle time, speed-up (per seed, then averaged), CV and max/mean at n nodes."""
    rs = [r for r in results if r["M"] == m and r["variant"] == v and r["n"] == n]
    sps = []
    for r in rs:
        base = [q for q in results if q["M"] == m and q["variant"] == v
                and q["seed"] == r["seed"] and q["n"] == nodes[0]][0]
        sps.append(base["T"] / r["T"] * nodes[0])
    k = len(rs)
    return (sum(r["T"] for r in rs) / k, sum(sps) / k, sum(r["cv"] for r in rs) / k,
            sum(r["max_mean"] for r in rs) / k)


def report(args, results, sizes_info, nodes, variants, rate, out):
    p = lambda *a: print(*a, file=out)  # noqa: E731
    if args.summary:
        n = nodes[-1]
        for m in sorted({r["M"] for r in results}):
            for v in variants:
                T1 = summarize(results, m, v, nodes[0], nodes)[0]
                T, sp, cv, mx = summarize(results, m, v, n, nodes)
                ok = "yes" if sp >= 0.9 * n else "**no**"
                p(f"| {args.summary} | {m} | {v} | {n} | {T1:.0f} | {T:.0f} | {sp:.2f} | "
                  f"{sp / n:.3f} | {ok} | {cv:.3f} | {mx:.3f} |")
        return
    p(f"\nSimulated web: {args.hosts:.0f} hosts, {args.urls:.3g} pages per cycle, host sizes "
      f"Pareto with density exponent {args.alpha} capped at {args.host_cap:.0f} pages per "
      f"cycle; per-host rate {rate:.0f} pages/s, {args.threads} fetch threads per task; "
      f"{args.cpus_per_node} task slots per node; hop {args.hop} s, task start "
      f"{args.task_start} s; parse {'its own array' if args.parse_array else 'inline in the fetch'};"
      + (f" a host in {1 / args.stall_frac:.0f} stalls its partition's fetch for "
         f"{args.stall_secs:.0f} s (robots.txt never answers);" if args.stall_frac
         and args.stall_secs else " no stalling hosts;")
      + f" mean of {args.seeds} seed{'s' if args.seeds > 1 else ''} (seed {args.seed}).\n")
    for m in sorted({r["M"] for r in sizes_info}):
        ws = [w for w in sizes_info if w["M"] == m]
        avg = lambda k: sum(w[k] for w in ws) / len(ws)  # noqa: E731
        p(f"- M = {m}: {avg('pages'):.3g} pages, largest host {avg('largest_host'):.0f}; pages per "
          f"partition CV {avg('part_cv'):.3f}, max/mean {avg('part_max_mean'):.2f}; fetch task "
          f"max/mean {avg('fetch_max_mean'):.2f}; fetch tasks bound by their largest host or a stall "
          f"{avg('host_bound'):.0f} of {m}; total task seconds {avg('work'):.0f}.")
    p("")
    p("| M | dependency | nodes | CPUs | cycle s | speed-up | efficiency | ≥ 0.9 n | node busy CV | node busy max/mean | WebGather speed-up |")
    p("|--:|---|--:|--:|--:|--:|--:|---|--:|--:|--:|")
    for m in sorted({r["M"] for r in results}):
        for v in variants:
            for n in nodes:
                T, sp, cv, mx = summarize(results, m, v, n, nodes)
                wg = f"{WEBGATHER[n]:.2f}" if n in WEBGATHER and n > 1 else ""
                ok = "yes" if sp >= 0.9 * n else f"**no** ({sp / n:.3f} n)"
                p(f"| {m} | {v} | {n} | {n * args.cpus_per_node} | {T:.0f} | {sp:.2f} | "
                  f"{sp / n:.2f} | {ok} | {cv:.3f} | {mx:.3f} | {wg} |")


def predict(args, tasks, model, rate, nodes, variants):
    """Replay the measured crawl: its own tasks per cycle, measured seconds and the model's."""
    p = print
    if not args.no_fit:
        print_fit(model, sys.stdout)
    cycles = sorted({t["cycle"] for t in tasks})
    ms = sorted({t["partition"] for t in tasks})
    m = max(ms) + 1
    if args.partitions and "," not in args.partitions and int(args.partitions) != m:
        p(f"\n(note: the markers have {m} partitions; --partitions {args.partitions} ignored)")
    p(f"\nPredicted cycle times of the measured crawl ({len(cycles)} cycles, M = {m}) on n nodes x "
      f"{args.cpus_per_node} CPUs under Slurm (hop {args.hop} s, task start {args.task_start} s). "
      "'replay': every task takes the seconds its marker measured on this machine; 'model': the "
      "fitted cost of its work. Sum over cycles, then the cycles one by one (replay).\n")
    by = defaultdict(dict)
    for t in tasks:
        by[(t["cycle"], t["stage"])][t["partition"]] = t
    head = "| source | dependency | " + " | ".join(f"n = {n}" for n in nodes) + " |"
    p(head)
    p("|---|---|" + "--:|" * len(nodes))
    per_cycle = {}
    for src in ["replay", "model"]:
        for v in variants:
            tot = []
            for n in nodes:
                s = 0.0
                for c in cycles:
                    d = {}
                    for st in STAGES:
                        ts = by.get((c, st), {})
                        if not ts:
                            continue
                        row = []
                        for q in range(m):
                            t = ts.get(q)
                            if t is None:
                                row.append(0.0)
                            elif src == "replay":
                                row.append(0.0 if t["inline"] else t["seconds"])
                            elif st == "fetch":
                                row.append(task_seconds(model, st, t["work"], t["max_host"], rate,
                                                        args.threads,
                                                        args.stall_secs if t["stalled"] else 0.0))
                            else:
                                sm = model["stages"][st]
                                row.append(0.0 if sm["inline"] else sm["a"] + sm["b"] * t["work"])
                        d[st] = row
                    if "fetch" not in d:
                        continue
                    T, _ = simulate(d, n, args.cpus_per_node, v, args.hop, args.task_start,
                                    args.parse_array)
                    s += T
                    per_cycle[(src, v, n, c)] = T
                tot.append(s)
            p(f"| {src} | {v} | " + " | ".join(f"{x:.1f} s" for x in tot) + " |")
    p("\nPer cycle (replay, afterok), seconds:\n")
    p("| cycle | pages fetched | " + " | ".join(f"n = {n}" for n in nodes) + " |")
    p("|--:|--:|" + "--:|" * len(nodes))
    for c in cycles:
        pages = sum(t["work"] for t in by.get((c, "fetch"), {}).values())
        if ("replay", variants[0], nodes[0], c) not in per_cycle:
            continue
        p(f"| {c} | {pages:.0f} | " + " | ".join(
            f"{per_cycle[('replay', variants[0], n, c)]:.1f}" for n in nodes) + " |")


if __name__ == "__main__":
    main()
