"""End-to-end training throughput: decisions per second of train.py (collection + PPO update).

Runs ``train.py`` on the default config (``configs/ppo_selfplay.yaml``: its network,
rollout and PPO settings) for a few iterations with the warm start and evaluation
switched off, once per worker count, and reads the per-iteration
``charts/decisions_per_second`` from each run's ``log.jsonl``. "Decisions" are all
decisions of all games (every seat, learner or opponent), as in the trainer's
progress bar. The first iteration of each run is dropped (start-up). Printed:
median and min-max per setting, the ratio to the first setting, and the ratio to
the issue's target (15,000 decisions/s on 2 cores). Peers in the same run:
the batched engine alone with random legal actions, and self-play without the
scripted opponent (the heuristic plays 15% of the default games and is the
slowest player at the table).

    python benchmarks/train_throughput.py                 # 1 and 2 workers, default opponents and self-play only
    python benchmarks/train_throughput.py --iterations 8 --workers 2
    python benchmarks/train_throughput.py --workers 2 --set ppo.update_epochs=3   # a variant of the config

Timing claims about training belong here, not in tests. Run it on an idle
machine: other processes on the same cores lower every figure.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
TARGET = 15_000


def engine_alone(num_envs: int, seconds: float = 3.0) -> float:
    """Decisions/s of the batched engine with random legal actions (no network)."""
    sys.path.insert(0, str(ROOT))
    from pcr_env.vector import VectorEnv

    venv = VectorEnv(num_envs, seed=0)
    obs, masks, _ = venv.reset()
    rng = np.random.default_rng(0)
    for _ in range(20):
        obs, masks, _, _, _, _ = venv.step((rng.random(masks.shape) * masks).argmax(1))
    steps, start = 0, time.perf_counter()
    while time.perf_counter() - start < seconds:
        obs, masks, _, _, _, _ = venv.step((rng.random(masks.shape) * masks).argmax(1))
        steps += 1
    return steps * num_envs / (time.perf_counter() - start)


def train_rates(config: str, workers: int, iterations: int, extra: list[str]) -> list[float]:
    with tempfile.TemporaryDirectory() as tmp:
        run_dir = Path(tmp) / "run"
        cmd = [sys.executable, str(ROOT / "train.py"), "--config", config, "--run-dir", str(run_dir), "--quiet",
               "--max-iterations", str(iterations), "--set", f"num_workers={workers}", "--set", "warmstart.decisions=0",
               "--set", "eval.deals=0", *extra]
        env = dict(os.environ, OMP_NUM_THREADS="1")
        subprocess.run(cmd, check=True, cwd=ROOT, env=env, stdout=subprocess.DEVNULL)
        rows = [json.loads(line) for line in (run_dir / "log.jsonl").read_text().splitlines()]
    rates = [r["charts/decisions_per_second"] for r in rows if r["type"] == "iteration"]
    return rates[1:] if len(rates) > 1 else rates


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--config", default=str(ROOT / "configs" / "ppo_selfplay.yaml"))
    parser.add_argument("--iterations", type=int, default=6, help="iterations per run (the first is dropped)")
    parser.add_argument("--workers", type=int, nargs="+", default=[1, 2])
    parser.add_argument("--skip-selfplay-only", action="store_true", help="do not run the self-play-only peer")
    parser.add_argument("--set", action="append", default=[], metavar="KEY=VALUE",
                        help="config override applied to every setting, e.g. --set ppo.update_epochs=3")
    args = parser.parse_args()

    print(f"machine: {os.cpu_count()} CPUs, load average {os.getloadavg()[0]:.2f} at start; config {args.config}")
    common = [arg for item in args.set for arg in ("--set", item)]
    if args.set:
        print(f"overrides: {' '.join(args.set)}")
    settings: list[tuple[str, int, list[str]]] = [(f"default opponents, {w} worker(s)", w, common) for w in args.workers]
    if not args.skip_selfplay_only:
        settings += [(f"self-play only, {w} worker(s)", w, [*common, "--set", "selfplay.opponents={self: 1}"])
                     for w in args.workers]
    results = []
    for label, workers, extra in settings:
        rates = train_rates(args.config, workers, args.iterations, extra)
        results.append((label, rates))
        print(f"  ran {label}: {len(rates)} timed iterations", flush=True)
    engine = engine_alone(256)

    base = statistics.median(results[0][1])
    print()
    print(f"{'setting':40s} {'median dec/s':>13s} {'min':>9s} {'max':>9s} {'vs first':>9s} {'vs 15k':>7s}")
    for label, rates in results:
        med = statistics.median(rates)
        print(f"{label:40s} {med:13,.0f} {min(rates):9,.0f} {max(rates):9,.0f} {med / base:9.2f} {med / TARGET:7.2f}")
    print(f"{'peer: batched engine alone, random play':40s} {engine:13,.0f}")
    print(f"load average at the end: {os.getloadavg()[0]:.2f}")


if __name__ == "__main__":
    main()
