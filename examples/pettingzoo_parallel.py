"""Pass Cut Run through PettingZoo's Parallel API, for libraries that step every agent at once.

    python examples/pettingzoo_parallel.py --episodes 100

The game is turn-based, so the AEC env is the native one; PettingZoo's own
``turn_based_aec_to_parallel`` gives the Parallel view: every step each live
agent submits an action and only the acting seat's is used (the others' masks
are all zeros, and whatever they send is ignored). Rewards come back for every
agent on every step, so nothing is lost between turns. No pcr code is involved
beyond ``pass_cut_run_v0.env()``; this script runs PettingZoo's
``parallel_api_test`` on it and plays masked random rounds, checking that each
seat's summed reward is its team's round margin (R8).
"""

from __future__ import annotations

import argparse
from typing import Any, Sequence

import numpy as np
from pettingzoo.test import parallel_api_test
from pettingzoo.utils.conversions import turn_based_aec_to_parallel

from pcr_env import pass_cut_run_v0


def parallel_env(**kwargs: Any):
    """``pass_cut_run_v0.env(**kwargs)`` as a PettingZoo ``ParallelEnv``."""
    return turn_based_aec_to_parallel(pass_cut_run_v0.env(**kwargs))


def play_random_rounds(episodes: int, seed: int = 0, **kwargs: Any) -> dict[str, float]:
    """Masked random play; returns the mean return of every agent and checks credit per seat."""
    env = parallel_env(episode="round", **kwargs)
    rng = np.random.default_rng(seed)
    returns: dict[str, list[float]] = {a: [] for a in env.possible_agents}
    for episode in range(episodes):
        observations, infos = env.reset(seed=seed + episode)
        totals = dict.fromkeys(env.possible_agents, 0.0)
        result = None
        while env.agents:
            actions = {}
            for agent, obs in observations.items():
                legal = np.flatnonzero(obs["action_mask"])
                actions[agent] = int(rng.choice(legal)) if len(legal) else 0  # a waiting seat's action is ignored
            observations, rewards, terminations, truncations, infos = env.step(actions)
            for agent, r in rewards.items():
                totals[agent] += r
            result = infos.get("player_0", {}).get("round_result", result)
        if result is not None:  # None only if the deal was thrown in past max_redeals (truncated, R4.4)
            margin = result["scores"][0] - result["scores"][1]
            assert totals == {a: float(margin if i % 2 == 0 else -margin) for i, a in enumerate(env.possible_agents)}
        for agent, total in totals.items():
            returns[agent].append(total)
    return {agent: float(np.mean(values)) for agent, values in returns.items()}


def main(argv: Sequence[str] | None = None) -> dict[str, float]:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--episodes", type=int, default=100)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--players", type=int, choices=[4, 6], default=4)
    args = parser.parse_args(argv)
    parallel_api_test(parallel_env(episode="round", players=args.players), num_cycles=300)
    means = play_random_rounds(args.episodes, args.seed, players=args.players)
    print("mean round return per agent (random play):", {a: round(m, 2) for a, m in means.items()})
    return means


if __name__ == "__main__":
    main()
