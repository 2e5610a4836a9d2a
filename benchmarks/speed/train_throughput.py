"""End-to-end training throughput: decisions per second of train.py (collection + PPO update).

Runs ``train.py`` on the default config (``configs/ppo_selfplay.yaml``: its network,
rollout and PPO settings) for a few iterations with the warm start and evaluation
switched off, once per worker count, and reads the per-iteration
``charts/decisions_per_second`` from each run's ``log.jsonl``. "Decisions" are all
decisions of all games (every seat, learner or opponent), as in the trainer's
progress bar. The runs take a snapshot every iteration (``selfplay.snapshot_every=1``), so
the opponent pool is full (10 snapshots, as for most of a real run) after 10 iterations, and
the first ``--skip`` iterations (default 11: start-up and the filling pool) are dropped. Printed:
median and min-max per setting, the ratio to the first setting, and the ratio to
the issue's target (20,000 decisions/s on 2 cores). Peers in the same run:
the batched engine alone with random legal actions, and self-play without the
scripted opponent (the heuristic plays 15% of the default games and is the
slowest player at the table).

``--against DIR`` measures another checkout (e.g. ``git worktree add /tmp/prev HEAD~1``)
in the same session instead: its own ``train.py`` and default config, runs alternating
ours/theirs (the order flips every repeat), and prints each side's median and the
median of the per-repeat ratios ours/theirs (the project rule: ratios measured in the
same run, never a figure from another day). ``--versus KEY=VALUE`` does the same within this
checkout: the config with the override against the config without it, e.g. the card-aware
network against the plain one (ratio variant/base).

    python benchmarks/speed/train_throughput.py                 # 1 and 2 workers, default opponents and self-play only
    python benchmarks/speed/train_throughput.py --iterations 20 --workers 2
    python benchmarks/speed/train_throughput.py --workers 2 --set precision=float32   # a variant of the config
    python benchmarks/speed/train_throughput.py --workers 2 --against /tmp/prev --repeats 3
    python benchmarks/speed/train_throughput.py --workers 2 --versus network.card_head=true --repeats 3

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

ROOT = Path(__file__).resolve().parents[2]
TARGET = 20_000


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


SKIP = 11


def train_rates(config: str, workers: int, iterations: int, extra: list[str], root: Path = ROOT,
                skip: int = SKIP) -> list[float]:
    """Per-iteration decisions/s of ``root``/train.py, the pool full, the first ``skip`` iterations dropped."""
    with tempfile.TemporaryDirectory() as tmp:
        run_dir = Path(tmp) / "run"
        cmd = [sys.executable, str(root / "train.py"), "--config", config, "--run-dir", str(run_dir), "--quiet",
               "--max-iterations", str(iterations), "--set", f"num_workers={workers}", "--set", "warmstart.decisions=0",
               "--set", "eval.deals=0", "--set", "selfplay.snapshot_every=1", *extra]
        env = dict(os.environ, OMP_NUM_THREADS="1")
        done = subprocess.run(cmd, cwd=root, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
        if done.returncode != 0:
            raise SystemExit(f"train.py failed in {root} (exit {done.returncode}):\n{done.stderr[-3000:]}")
        rows = [json.loads(line) for line in (run_dir / "log.jsonl").read_text().splitlines()]
    rates = [r["charts/decisions_per_second"] for r in rows if r["type"] == "iteration"]
    if len(rates) <= skip:
        raise SystemExit(f"--iterations {iterations} leaves nothing to time after the first {skip}: use more")
    return rates[skip:]


def alternate(sides: list[tuple[str, Path, str, list[str]]], workers: int, iterations: int, repeats: int) -> None:
    """Run two settings (label, checkout, config, overrides) alternately, the order flipping every repeat;
    print each one's median and the median of the per-repeat ratios first/second."""
    medians: dict[str, list[float]] = {label: [] for label, *_ in sides}
    for r in range(repeats):
        for label, root, config, extra in (sides if r % 2 == 0 else sides[::-1]):
            medians[label].append(statistics.median(train_rates(config, workers, iterations, extra, root)))
            print(f"  repeat {r + 1} {label:10s}: median {medians[label][-1]:,.0f} decisions/s", flush=True)
    (first, a), (second, b) = medians.items()
    ratios = [x / y for x, y in zip(a, b)]
    print()
    print(f"{'side':10s} {'median dec/s':>13s} {'vs 20k':>7s}")
    for label, values in medians.items():
        print(f"{label:10s} {statistics.median(values):13,.0f} {statistics.median(values) / TARGET:7.2f}")
    print(f"{first}/{second}: median of per-repeat ratios {statistics.median(ratios):.2f} "
          f"(min {min(ratios):.2f}, max {max(ratios):.2f})")
    print(f"load average at the end: {os.getloadavg()[0]:.2f}")


def compare(args: argparse.Namespace) -> None:
    """Ours and the ``--against`` checkout alternately, same settings; medians and the median ratio."""
    theirs = Path(args.against).resolve()
    common = [arg for item in args.set for arg in ("--set", item)]
    print(f"machine: {os.cpu_count()} CPUs, load average {os.getloadavg()[0]:.2f} at start; "
          f"ours = {ROOT}, theirs = {theirs}; {args.workers[-1]} worker(s), default opponents, {args.repeats} runs each")
    alternate([("ours", ROOT, str(ROOT / "configs" / "ppo_selfplay.yaml"), common),
               ("theirs", theirs, str(theirs / "configs" / "ppo_selfplay.yaml"), common)],
              args.workers[-1], args.iterations, args.repeats)


def versus(args: argparse.Namespace) -> None:
    """The config with the ``--versus`` overrides and without them, alternately, in this checkout."""
    common = [arg for item in args.set for arg in ("--set", item)]
    variant = [*common, *(arg for item in args.versus for arg in ("--set", item))]
    print(f"machine: {os.cpu_count()} CPUs, load average {os.getloadavg()[0]:.2f} at start; config {args.config}; "
          f"variant: {' '.join(args.versus)}; {args.workers[-1]} worker(s), default opponents, {args.repeats} runs each")
    alternate([("variant", ROOT, args.config, variant), ("base", ROOT, args.config, common)],
              args.workers[-1], args.iterations, args.repeats)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--config", default=str(ROOT / "configs" / "ppo_selfplay.yaml"))
    parser.add_argument("--iterations", type=int, default=16, help=f"iterations per run (the first {SKIP} are dropped)")
    parser.add_argument("--workers", type=int, nargs="+", default=[1, 2])
    parser.add_argument("--skip-selfplay-only", action="store_true", help="do not run the self-play-only peer")
    parser.add_argument("--set", action="append", default=[], metavar="KEY=VALUE",
                        help="config override applied to every setting, e.g. --set ppo.update_epochs=3")
    parser.add_argument("--against", metavar="DIR", help="compare with another checkout, run by run (see above)")
    parser.add_argument("--versus", action="append", default=[], metavar="KEY=VALUE",
                        help="compare the config with these overrides against the config without them, run by run "
                             "(e.g. --versus network.card_head=true: the card-aware network against the plain one)")
    parser.add_argument("--repeats", type=int, default=3, help="runs per side with --against or --versus")
    args = parser.parse_args()
    if args.against and args.versus:
        parser.error("--against and --versus are two different comparisons: give one")
    if args.against:
        return compare(args)
    if args.versus:
        return versus(args)

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
    print(f"{'setting':40s} {'median dec/s':>13s} {'min':>9s} {'max':>9s} {'vs first':>9s} {'vs 20k':>7s}")
    for label, rates in results:
        med = statistics.median(rates)
        print(f"{label:40s} {med:13,.0f} {min(rates):9,.0f} {max(rates):9,.0f} {med / base:9.2f} {med / TARGET:7.2f}")
    print(f"{'peer: batched engine alone, random play':40s} {engine:13,.0f}")
    print(f"load average at the end: {os.getloadavg()[0]:.2f}")


if __name__ == "__main__":
    main()
