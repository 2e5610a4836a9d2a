"""Where decision-time search gains: search at only some phases against its own base policy.

``search:<base>`` restricted to a set of phases (``SearchAgent(phases=...)``; the base policy
decides the others) plays duplicate deals against the base alone. The difference is what
searching those decisions is worth, so it says which decisions a distilled network should
learn from the search (``warmstart.label_phases`` of ``configs/experiments/distill_search.yaml``).

    python benchmarks/studies/search_by_phase.py                                   # bid+trump, then play; 16 worlds
    python benchmarks/studies/search_by_phase.py --groups pass bid,trump play --worlds 16 --deals 300 --seed 300
    python benchmarks/studies/search_by_phase.py --out benchmarks/results/search_by_phase

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

from agents.evaluation import evaluate, format_table, write_outputs  # noqa: E402
from agents.evaluation.phase_credit import group_phases  # noqa: E402
from agents.registry import make_agent  # noqa: E402
from agents.search import SearchAgent  # noqa: E402


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--base", default="ppo:pretrained", help="base policy spec (default ppo:pretrained)")
    parser.add_argument("--groups", nargs="+", default=["bid,trump", "play"],
                        help="phase sets to search, comma-separated within a set (default: bid,trump and play)")
    parser.add_argument("--worlds", type=int, default=16)
    parser.add_argument("--deals", type=int, default=300)
    parser.add_argument("--seed", type=int, default=300)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--out", default="", help="write each group's tables under OUT/<group>")
    args = parser.parse_args()
    summary = []
    for group in args.groups:
        phases = group_phases(group)
        agent = SearchAgent(make_agent(args.base), worlds=args.worlds, phases=phases,
                            source=f"search:{args.base}")
        agent.name = f"search[{'+'.join(phases)}]:{args.base}"
        result = evaluate([agent, args.base], deals=args.deals, seed=args.seed, workers=args.workers, progress=False)
        print(format_table(result), flush=True)
        if args.out:
            write_outputs(result, Path(args.out) / "-".join(phases))
        pair = result.pairs[0]
        summary.append((agent.name, pair.mean_diff, *pair.ci95))
    print(f"\n{args.worlds} worlds, {args.deals} duplicate deals, seed {args.seed}; search at only these phases "
          f"minus {args.base} alone:")
    for name, mean, low, high in summary:
        print(f"  {name:40s} {mean:+6.2f} [{low:+.2f}, {high:+.2f}]")


if __name__ == "__main__":
    main()
