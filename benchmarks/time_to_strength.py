"""Wall time for a training recipe to reach the heuristic's level, and +1 point per deal above it.

Runs ``train.py`` on the given config (the default recipe unless told otherwise) with its
in-training duplicate evaluation pointed at one fixed suite (``--deals`` deals against the
heuristic, seed ``--seed``, every ``--every`` iterations), stops it after ``--minutes`` of wall
time (Ctrl-C: the run saves and can be continued with ``train.py --resume``), then reads the
run's ``log.jsonl`` and prints the curve and the first wall time at which the evaluation's mean
reached 0 ("level") and +1 per deal, with the 95% interval at that point. The picture of the
curve is written with :mod:`agents.curves`.

    python benchmarks/time_to_strength.py --minutes 60                      # the default recipe
    python benchmarks/time_to_strength.py --config configs/smoke.yaml --minutes 1 --every 1 --deals 20
"""

from __future__ import annotations

import argparse
import json
import signal
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def run_training(config: str, run_dir: Path, minutes: float, every: int, deals: int, seed: int,
                 extra: list[str]) -> float:
    """Train until done or ``minutes`` have passed; returns the start time (UNIX seconds)."""
    cmd = [sys.executable, str(ROOT / "train.py"), "--config", config, "--run-dir", str(run_dir), "--quiet",
           "--set", f"eval.every={every}", "--set", f"eval.deals={deals}", "--set", f"eval.seed={seed}",
           "--set", "eval.opponents=[heuristic]", "--set", "eval.best_opponent=heuristic", *extra]
    start = time.time()
    proc = subprocess.Popen(cmd, start_new_session=True)
    try:
        proc.wait(timeout=minutes * 60)
    except subprocess.TimeoutExpired:
        proc.send_signal(signal.SIGINT)  # the trainer finishes its iteration and saves latest.pt
        proc.wait()
    return start


def curve(run_dir: Path, start: float) -> list[dict]:
    rows = []
    for line in (run_dir / "log.jsonl").read_text().splitlines():
        record = json.loads(line)
        if record.get("type") == "eval" and "heuristic" in record.get("results", {}):
            r = record["results"]["heuristic"]
            rows.append({"minutes": (record["time"] - start) / 60, "iteration": record["iteration"],
                         "decisions": record["decisions"], "mean": r["mean"], "ci_low": r["ci_low"],
                         "ci_high": r["ci_high"]})
    return rows


def first_reaching(rows: list[dict], level: float) -> dict | None:
    return next((r for r in rows if r["mean"] is not None and r["mean"] >= level), None)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--config", default=str(ROOT / "configs" / "ppo_selfplay.yaml"))
    parser.add_argument("--run-dir", default=str(ROOT / "runs" / "time_to_strength"))
    parser.add_argument("--minutes", type=float, default=60.0, help="wall-time budget of the training run")
    parser.add_argument("--every", type=int, default=20, help="evaluate every this many PPO iterations")
    parser.add_argument("--deals", type=int, default=400, help="duplicate deals of each evaluation (fixed suite)")
    parser.add_argument("--seed", type=int, default=99, help="seed of the evaluation suite")
    parser.add_argument("--set", action="append", default=[], metavar="KEY=VALUE", help="more train.py overrides")
    args = parser.parse_args()
    run_dir = Path(args.run_dir)
    if (run_dir / "checkpoints" / "latest.pt").exists():
        raise SystemExit(f"time_to_strength.py: error: {run_dir} already holds a run: choose another --run-dir")
    extra = [x for item in args.set for x in ("--set", item)]
    start = run_training(args.config, run_dir, args.minutes, args.every, args.deals, args.seed, extra)
    rows = curve(run_dir, start)
    print(f"{Path(args.config).name}: {len(rows)} evaluations of {args.deals} duplicate deals vs heuristic "
          f"(seed {args.seed}), wall time from the start of train.py")
    print(f"{'minutes':>8} {'iteration':>9} {'decisions':>11} {'mean':>7}  95% CI")
    for r in rows:
        print(f"{r['minutes']:8.1f} {r['iteration']:9d} {r['decisions']:11d} {r['mean']:+7.2f}  "
              f"[{r['ci_low']:+.2f}, {r['ci_high']:+.2f}]")
    for label, level in (("level with the heuristic (mean >= 0)", 0.0), ("+1 per deal above it", 1.0)):
        hit = first_reaching(rows, level)
        print(f"{label}: " + (f"{hit['minutes']:.1f} min (iteration {hit['iteration']}, {hit['decisions']:,} decisions, "
                              f"{hit['mean']:+.2f} [{hit['ci_low']:+.2f}, {hit['ci_high']:+.2f}])" if hit else "not reached"))
    try:
        subprocess.run([sys.executable, "-m", "agents.curves", str(run_dir), "-o", str(run_dir / "curves.png")],
                       check=True, cwd=ROOT)
        print(f"curve: {run_dir / 'curves.png'}")
    except (subprocess.CalledProcessError, FileNotFoundError) as err:
        print(f"no curve picture ({err})")


if __name__ == "__main__":
    main()
