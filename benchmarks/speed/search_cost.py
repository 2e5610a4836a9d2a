"""Milliseconds per decision of the search agents (``search:<base>``, ``pimc``) on one core.

Positions: the real decisions (more than one legal action) of seeded heuristic games, every
phase in the proportion it occurs, the same positions for every setting. Prints, per agent and
budget, the median and 90th percentile per phase and the mean over all decisions (what a game
costs), so settings and peers are compared in the same run.

    python benchmarks/speed/search_cost.py                                  # search:ppo:pretrained, 4..32 worlds
    python benchmarks/speed/search_cost.py --base heuristic --worlds 8 16 --pimc
"""

from __future__ import annotations

import argparse
import os
import time

os.environ.setdefault("OMP_NUM_THREADS", "1")

import numpy as np  # noqa: E402
import torch  # noqa: E402

from agents.registry import make_agent  # noqa: E402
from agents.search import SearchAgent  # noqa: E402
from pcr_env import pass_cut_run_v0  # noqa: E402
from pcr_env.config import RulesConfig  # noqa: E402
from pcr_env.observation import decode_observation  # noqa: E402


def positions(rounds: int, seed: int) -> list[dict[str, np.ndarray]]:
    """Observations of every real decision in ``rounds`` seeded heuristic rounds."""
    agent = make_agent("heuristic", seed=seed)
    env = pass_cut_run_v0.raw_env(episode="round")
    out = []
    for r in range(rounds):
        env.reset(seed=seed + r)
        for name in env.agent_iter():
            obs, _, term, trunc, _ = env.last()
            if term or trunc:
                env.step(None)
                continue
            if obs["action_mask"].sum() > 1:
                out.append({k: v.copy() for k, v in obs.items()})
            env.step(agent.act(obs))
    return out


def measure(agent, obs_list) -> dict[str, list[float]]:
    times: dict[str, list[float]] = {}
    for obs in obs_list:
        start = time.perf_counter()
        agent.act(obs)
        times.setdefault(decode_observation(obs).phase.name.lower(), []).append(1000 * (time.perf_counter() - start))
    return times


def report(label: str, times: dict[str, list[float]]) -> None:
    everything = [t for v in times.values() for t in v]
    parts = "  ".join(f"{k} {np.median(v):.0f}/{np.percentile(v, 90):.0f}" for k, v in times.items())
    print(f"{label:34s} mean {np.mean(everything):7.1f} ms   median/p90 by phase: {parts}", flush=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--base", default="ppo:pretrained", help="base policy of the search agent")
    parser.add_argument("--worlds", type=int, nargs="+", default=[4, 8, 16, 32])
    parser.add_argument("--rounds", type=int, default=3, help="heuristic rounds whose decisions are timed")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--pimc", action="store_true", help="also time the pimc agent (needs the pimc extra)")
    args = parser.parse_args()
    torch.set_num_threads(1)
    obs_list = positions(args.rounds, args.seed)
    print(f"{len(obs_list)} decisions from {args.rounds} heuristic rounds (seed {args.seed}), one core")
    rules = RulesConfig()
    warm = SearchAgent(make_agent(args.base, seed=0, rules=rules), rules, seed=0, worlds=2)
    measure(warm, obs_list[:3])  # compile and load once, outside the timings
    for w in args.worlds:
        agent = SearchAgent(make_agent(args.base, seed=0, rules=rules), rules, seed=0, worlds=w)
        report(f"search:{args.base} worlds={w}", measure(agent, obs_list))
    if args.pimc:
        from agents.search.pimc import PIMCAgent

        report("pimc (12 worlds, 6 for bids)", measure(PIMCAgent(seed=0), obs_list))


if __name__ == "__main__":
    main()
