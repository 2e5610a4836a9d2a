"""Wall time for a training recipe to reach the heuristic's level, and +1 to +4 points per deal above it.

Runs ``train.py`` on the given config (the main job's, ``configs/card_hour.yaml``, unless told otherwise) with its
in-training duplicate evaluation pointed at one fixed suite (``--deals`` deals against the
heuristic, seed ``--seed``, every ``--every`` iterations), stops it after ``--minutes`` of wall
time (Ctrl-C: the run saves and can be continued with ``train.py --resume``), then reads the
run's ``log.jsonl`` and prints the curve and the first wall time at which the evaluation's mean
reached 0 ("level"), +1, +2, +3 and +4 per deal, with the 95% interval at that point. The picture of the
curve is written with :mod:`agents.training.curves`, and the curve's rows to
``RUN_DIR/time_to_strength.json``.

``--compare RUN_DIR ...`` runs nothing: it reads the ``time_to_strength.json`` of earlier runs
(for example the same recipe with ``--set precision=float32``) and prints and draws their
curves against wall time in one picture, to show that a change learns at least as well per
second.

    python benchmarks/studies/time_to_strength.py --minutes 75 --every 80 --seed 4242  # the main job's recipe (make train)
    python benchmarks/studies/time_to_strength.py --config configs/smoke.yaml --minutes 1 --every 1 --deals 20
    python benchmarks/studies/time_to_strength.py --compare runs/tts_bf16 runs/tts_fp32 -o runs/tts_compare.png
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


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
        # Ctrl-C as a terminal sends it: to the whole process group (the workers finish their
        # iteration in step and save latest.pt; the spawning parent ignores it and waits).
        os.killpg(proc.pid, signal.SIGINT)
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


LEVELS = (("level with the heuristic (mean >= 0)", 0.0), ("+1 per deal above it", 1.0), ("+2 per deal above it", 2.0),
          ("+3 per deal above it", 3.0), ("+4 per deal above it", 4.0))
"""The levels whose first wall time is reported: (label, mean per deal against the heuristic)."""


def first_reaching(rows: list[dict], level: float) -> dict | None:
    return next((r for r in rows if r["mean"] is not None and r["mean"] >= level), None)


def print_curve(rows: list[dict]) -> None:
    print(f"{'minutes':>8} {'iteration':>9} {'decisions':>11} {'mean':>7}  95% CI")
    for r in rows:
        print(f"{r['minutes']:8.1f} {r['iteration']:9d} {r['decisions']:11d} {r['mean']:+7.2f}  "
              f"[{r['ci_low']:+.2f}, {r['ci_high']:+.2f}]")
    for label, level in LEVELS:
        hit = first_reaching(rows, level)
        print(f"{label}: " + (f"{hit['minutes']:.1f} min (iteration {hit['iteration']}, {hit['decisions']:,} decisions, "
                              f"{hit['mean']:+.2f} [{hit['ci_low']:+.2f}, {hit['ci_high']:+.2f}])" if hit else "not reached"))


def compare(run_dirs: list[str], out: str | None) -> None:
    """Curves of earlier runs (their time_to_strength.json) against wall time, printed and drawn together."""
    try:
        from matplotlib.figure import Figure
    except ImportError:
        Figure = None
    runs = []
    for run_dir in run_dirs:
        path = Path(run_dir) / "time_to_strength.json"
        if not path.exists():
            raise SystemExit(f"time_to_strength.py: error: {path} does not exist (run the benchmark into that folder first)")
        runs.append((Path(run_dir).name, json.loads(path.read_text())))
    for name, data in runs:
        print(f"\n{name}: {data['config']} {' '.join(data['overrides'])}; {data['deals']} deals vs heuristic "
              f"(seed {data['seed']}), {data['minutes']} min budget")
        print_curve(data["rows"])
    if Figure is None or out is None:
        return
    fig = Figure(figsize=(7, 4.2))
    ax = fig.add_subplot()
    for name, data in runs:
        rows = data["rows"]
        x = [r["minutes"] for r in rows]
        ax.plot(x, [r["mean"] for r in rows], marker="o", ms=3, label=name)
        ax.fill_between(x, [r["ci_low"] for r in rows], [r["ci_high"] for r in rows], alpha=0.15)
    ax.axhline(0.0, color="grey", lw=0.8)
    ax.set_xlabel("wall time since train.py started (minutes)")
    ax.set_ylabel("score difference per deal vs heuristic")
    ax.set_title("time to strength (duplicate deals, 95% intervals)")
    ax.legend()
    fig.tight_layout()
    fig.savefig(out, dpi=110)
    print(f"\npicture: {out}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--config", default=str(ROOT / "configs" / "card_hour.yaml"),
                        help="the recipe (default: the main job's, as make train runs it)")
    parser.add_argument("--run-dir", default=str(ROOT / "runs" / "time_to_strength"))
    parser.add_argument("--minutes", type=float, default=75.0, help="wall-time budget of the training run")
    parser.add_argument("--every", type=int, default=20, help="evaluate every this many PPO iterations")
    parser.add_argument("--deals", type=int, default=400, help="duplicate deals of each evaluation (fixed suite)")
    parser.add_argument("--seed", type=int, default=99, help="seed of the evaluation suite")
    parser.add_argument("--set", action="append", default=[], metavar="KEY=VALUE", help="more train.py overrides")
    parser.add_argument("--compare", nargs="+", metavar="RUN_DIR", help="draw earlier runs together (runs nothing)")
    parser.add_argument("-o", "--out", default=None, help="picture of --compare (PNG)")
    args = parser.parse_args()
    if args.compare:
        return compare(args.compare, args.out)
    run_dir = Path(args.run_dir)
    if (run_dir / "checkpoints" / "latest.pt").exists():
        raise SystemExit(f"time_to_strength.py: error: {run_dir} already holds a run: choose another --run-dir")
    extra = [x for item in args.set for x in ("--set", item)]
    start = run_training(args.config, run_dir, args.minutes, args.every, args.deals, args.seed, extra)
    rows = curve(run_dir, start)
    print(f"{Path(args.config).name}: {len(rows)} evaluations of {args.deals} duplicate deals vs heuristic "
          f"(seed {args.seed}), wall time from the start of train.py")
    print_curve(rows)
    (run_dir / "time_to_strength.json").write_text(json.dumps(
        {"config": args.config, "overrides": args.set, "minutes": args.minutes, "every": args.every,
         "deals": args.deals, "seed": args.seed, "rows": rows}, indent=1))
    try:
        subprocess.run([sys.executable, "-m", "agents.training.curves", str(run_dir), "-o", str(run_dir / "curves.png")],
                       check=True, cwd=ROOT)
        print(f"curve: {run_dir / 'curves.png'}")
    except (subprocess.CalledProcessError, FileNotFoundError) as err:
        print(f"no curve picture ({err})")


if __name__ == "__main__":
    main()
