"""Cost of world sampling (:mod:`pcr_env.worlds`) over the decisions of random games, on one core.

Prints, for four and six players, the cost of building the counting tables of one observation
(``WorldSampler(obs)``) and of drawing 1, 16 and 256 worlds from them.

    python benchmarks/speed/world_sampling.py
"""

from __future__ import annotations

import time

import numpy as np

from pcr_env import engine as E
from pcr_env.config import RulesConfig
from pcr_env.engine import Phase
from pcr_env.observation import encode_observation
from pcr_env.worlds import WorldSampler, sample_worlds


def main() -> None:
    """Cost per call and per world over the decisions of random games (one core)."""
    for rules, label in ((RulesConfig(), "4 players"), (RulesConfig(players=6), "6 players")):
        rng = np.random.default_rng(0)
        positions = []
        state = E.new_game(rules, rng)
        while len(positions) < 300:
            if state.phase in (Phase.ROUND_END, Phase.GAME_OVER):
                state = E.new_game(rules, rng)
                continue
            mask = E.legal_mask(state)
            positions.append(({"observation": encode_observation(state, state.current), "action_mask": mask},
                              state.current))
            legal = np.flatnonzero(mask)
            E.apply_action(state, int(legal[rng.integers(len(legal))]), rng)
        sample_worlds(positions[0][0], rules, 0, 2, seat=positions[0][1])  # compile / load the cache
        t0 = time.perf_counter()
        samplers = [WorldSampler(obs, rules, seat=seat) for obs, seat in positions]
        build = (time.perf_counter() - t0) / len(positions)
        print(f"{label}: counting tables (WorldSampler(obs)): {build * 1e3:.3f} ms per observation")
        for count in (1, 16, 256):
            t0 = time.perf_counter()
            for sampler in samplers:
                sampler.sample(rng, count)
            dt = (time.perf_counter() - t0) / len(samplers)
            print(f"{label}: sample({count:3d}): {dt * 1e3:7.3f} ms per call = {dt / count * 1e6:7.1f} us per world"
                  f"; sample_worlds({count}) = {(build + dt) * 1e3:.3f} ms")


if __name__ == "__main__":
    main()
