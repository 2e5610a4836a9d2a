"""Where one agent's lead over another lies: hand one phase at a time to the other agent.

For each group of phases, ``A`` with ``B`` deciding those phases (:class:`agents.search.phase_mix.PhaseMix`)
plays duplicate deals against ``A`` alone. ``A − mix`` is what ``A``'s own decisions at those phases
are worth over ``B``'s, the rest of the round played by ``A``; ``A − B`` is the whole lead. The parts
need not add up to the whole (a phase's worth depends on who plays the others), but they say
which decisions to improve first: a distillation target, a teacher's phases. With ``--against b`` each mix
plays ``B`` instead: ``mix − B`` says whether ``A`` with ``B``'s decisions at those phases beats ``B``, a
candidate made of the better phases of each. The method: :mod:`agents.evaluation.phase_credit`.

    python benchmarks/studies/phase_credit.py                         # ppo:pretrained against heuristic; pass, bid+trump, play
    python benchmarks/studies/phase_credit.py --a ppo:pretrained --b heuristic --groups bid,trump play --deals 2000 --seed 93
    python benchmarks/studies/phase_credit.py --out benchmarks/results/phase_credit
    python benchmarks/studies/phase_credit.py --a ppo:X.pt --b ppo:pretrained --groups pass --against b --deals 2000

Strength claims need deal suites not used for selection: use a seed of its own.
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

os.environ.setdefault("OMP_NUM_THREADS", "1")

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from agents.evaluation import format_table  # noqa: E402
from agents.evaluation.phase_credit import DEFAULT_GROUPS, phase_credit  # noqa: E402


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--a", default="ppo:pretrained", help="the agent whose lead is split (default ppo:pretrained)")
    parser.add_argument("--b", default="heuristic", help="the agent it leads (default heuristic)")
    parser.add_argument("--groups", nargs="+", default=list(DEFAULT_GROUPS),
                        help="phase sets handed to B, comma-separated within a set (default: pass, bid,trump, play)")
    parser.add_argument("--deals", type=int, default=500)
    parser.add_argument("--seed", type=int, default=400)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--against", choices=("a", "b"), default="a",
                        help="whom each mix plays: A (default: what A's phases are worth) or B (the mix as a candidate)")
    parser.add_argument("--out", default="", help="write each comparison's tables under OUT/<name>")
    args = parser.parse_args()
    results: list = []
    rows = phase_credit(args.a, args.b, args.groups, deals=args.deals, seed=args.seed, workers=args.workers,
                        against=args.against, out=args.out or None, results=results)
    for result in results:
        print(format_table(result), flush=True)
    if args.against == "a":
        print(f"\n{args.deals} duplicate deals, seed {args.seed}: {args.a} minus {args.a} with {args.b} deciding "
              f"the phases named ('whole': minus {args.b} itself)")
    else:
        print(f"\n{args.deals} duplicate deals, seed {args.seed}: {args.a} with {args.b} deciding the phases named, "
              f"minus {args.b} ('whole': {args.a} itself minus {args.b})")
    for label, mean, low, high in rows:
        print(f"  {label:12s} {mean:+6.2f} [{low:+.2f}, {high:+.2f}]")


if __name__ == "__main__":
    main()
