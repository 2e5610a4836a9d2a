"""One recipe over training seeds: each seed's duplicate score against one opponent, and the recipe's mean.

Reads ``evaluate.py --out`` results (``results.json``, or the folder holding it), one per seed's network (the
first agent of each, or the second when the first is the opponent), all against the same opponent. Prints each
seed's figure, the seeds' mean with Student's t interval over seeds (the spread of the recipe: with three seeds it
is wide) and, where every seed played the same deals, the seeds' per-deal average with its interval over deals
(these networks on these deals: the deal noise alone).

    python benchmarks/studies/over_seeds.py runs/mt_seed1/eval runs/mt_seed2/eval runs/mt_seed3/eval --against heuristic
    python benchmarks/studies/over_seeds.py runs/mt_seed*/eval_vs_pretrained --against ppo:pretrained --out seeds.md
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from agents.evaluation import over_seeds  # noqa: E402


def seed_row(path: Path, against: str) -> tuple[str, int, int, list[float]]:
    """``(agent, deals, seed, per-deal differences agent − against)`` from one results file; the seed's network
    is the first agent given to ``evaluate.py``, or the second when the first is the opponent."""
    file = path / "results.json" if path.is_dir() else path
    if not file.is_file():
        raise ValueError(f"results: {str(path)!r} is neither evaluate.py's results.json nor a folder holding one")
    result = json.loads(file.read_text())
    config = result["config"]
    names = [p["agent_a"] for p in result["pairs"]] + [p["agent_b"] for p in result["pairs"]]
    first = [name for name in dict.fromkeys(names) if name != against][:1]
    for pair in result["pairs"]:
        if {pair["agent_a"], pair["agent_b"]} == {against, *first} and pair["agent_a"] != pair["agent_b"]:
            sign = 1.0 if pair["agent_b"] == against else -1.0
            return first[0], int(config["deals"]), int(config["seed"]), [sign * d for d in pair["diffs"]]
    raise ValueError(f"--against: {against!r} played no pair with {first[0] if first else 'another agent'!r} in "
                     f"{str(file)!r}; its agents are {sorted(set(names))}")


def _signed(x: float) -> str:
    """``+1.23`` or ``−1.23`` (the minus sign of the docs' tables)."""
    return f"{x:+.2f}".replace("-", "\N{MINUS SIGN}")


def report(paths: list[Path], against: str) -> str:
    """The markdown table of each seed and the recipe's summary lines."""
    rows = [seed_row(p, against) for p in paths]
    suites = {(deals, seed) for _, deals, seed, _ in rows}
    summary = over_seeds([diffs for *_, diffs in rows], same_deals=len(suites) == 1)
    lines = [f"| results | agent | deals, seed | − {against} |", "|---|---|---|---|"]
    for path, (agent, deals, seed, _), mean in zip(paths, rows, summary.means):
        lines.append(f"| `{path}` | `{agent}` | {deals:,}, seed {seed} | {_signed(mean)} |")
    lines.append("")
    lines.append(f"Mean over {len(rows)} seeds: **{_signed(summary.mean)} [{_signed(summary.low)}, {_signed(summary.high)}]** "
                 f"(95% t interval over seeds; sd between seeds {summary.sd:.2f}; "
                 f"range {_signed(min(summary.means))} to {_signed(max(summary.means))})")
    if summary.paired is not None:
        mean, low, high = summary.paired
        deals, seed = next(iter(suites))
        lines.append(f"The seeds' per-deal average on the same {deals:,} deals of seed {seed}: "
                     f"{_signed(mean)} [{_signed(low)}, {_signed(high)}] (95% t interval over deals)")
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("results", nargs="+", type=Path, help="evaluate.py --out folders or results.json files, a seed each")
    parser.add_argument("--against", required=True, help="the opponent's spec as the results name it (e.g. heuristic)")
    parser.add_argument("--out", type=Path, default=None, help="also write the report to this markdown file")
    args = parser.parse_args()
    if len(args.results) < 2:
        parser.error(f"results: {len(args.results)} given; a spread needs at least 2 seeds")
    try:
        text = report(args.results, args.against)
    except ValueError as err:
        parser.error(str(err))
    print(text)
    if args.out is not None:
        args.out.write_text(text + "\n")


if __name__ == "__main__":
    main()
