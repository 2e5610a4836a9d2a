"""Throughput of the duplicate evaluation harness (``agents.evaluation.evaluate``, as ``evaluate.py``).

Measures duplicate deals per second (each deal = 2 rounds, the teams swapped)
for heuristic vs random and heuristic vs heuristic with 1 and 2 worker
processes. Each configuration is timed ``--repeats`` times, interleaved (the
machine is shared and noisy); the script prints the median deals/s, the median
rounds/s and the speed-up of 2 workers over 1 measured side by side. Timings
include starting the worker processes, as a user of ``evaluate.py`` pays them.

Target of issue 3: 2,000 duplicate deals (4,000 rounds) of heuristic vs
heuristic in under 2 minutes on the 2-core machine. ``--full`` times exactly
that command once (2 workers) and prints PASS/FAIL.

    python benchmarks/speed/eval_throughput.py                  # 200 deals x 3 repeats per configuration
    python benchmarks/speed/eval_throughput.py --deals 100 --repeats 2
    python benchmarks/speed/eval_throughput.py --full           # also the 2,000-deal target run
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
from pathlib import Path

for _var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_var, "1")

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from agents.evaluation import evaluate  # noqa: E402

TARGET_DEALS = 2000
TARGET_SECONDS = 120.0
CONFIGS = [(("heuristic", "random"), 1), (("heuristic", "random"), 2),
           (("heuristic", "heuristic"), 1), (("heuristic", "heuristic"), 2)]


def time_once(agents: tuple[str, str], workers: int, deals: int, seed: int) -> float:
    """Wall seconds of one evaluation (worker start-up included)."""
    start = time.perf_counter()
    evaluate(list(agents), deals=deals, seed=seed, workers=workers, progress=False)
    return time.perf_counter() - start


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--deals", type=int, default=200, help="duplicate deals per timed evaluation (default 200)")
    parser.add_argument("--repeats", type=int, default=3, help="timed evaluations per configuration (default 3)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--full", action="store_true", help="also time the 2,000-deal heuristic-vs-heuristic target run")
    args = parser.parse_args(argv)
    load = os.getloadavg()[0] if hasattr(os, "getloadavg") else float("nan")
    print(f"machine: {os.cpu_count()} CPUs, load average {load:.1f} at start; {args.deals} duplicate deals "
          f"({2 * args.deals} rounds) per evaluation, {args.repeats} repeats, interleaved")
    times: dict[tuple, list[float]] = {c: [] for c in CONFIGS}
    for r in range(args.repeats):
        order = CONFIGS[r % len(CONFIGS):] + CONFIGS[:r % len(CONFIGS)]
        for agents, workers in order:
            times[(agents, workers)].append(time_once(agents, workers, args.deals, args.seed + r))
    print()
    print("| pair | workers | median s | deals/s | rounds/s | speed-up vs 1 worker |")
    print("|---|---|---|---|---|---|")
    for agents, workers in CONFIGS:
        t = times[(agents, workers)]
        med = statistics.median(t)
        single = times[(agents, 1)]
        ratio = statistics.median(a / b for a, b in zip(single, t))
        print(f"| {agents[0]} vs {agents[1]} | {workers} | {med:.2f} | {args.deals / med:.1f} | "
              f"{2 * args.deals / med:.1f} | {ratio:.2f}x |")
    if args.full:
        seconds = time_once(("heuristic", "heuristic"), 2, TARGET_DEALS, args.seed)
        verdict = "PASS" if seconds < TARGET_SECONDS else "FAIL"
        print(f"\ntarget: {TARGET_DEALS} duplicate deals of heuristic vs heuristic, 2 workers: {seconds:.1f} s "
              f"({TARGET_DEALS / seconds:.1f} deals/s; limit {TARGET_SECONDS:.0f} s) -> {verdict}")
        return 0 if verdict == "PASS" else 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
