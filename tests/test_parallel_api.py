"""examples/pettingzoo_parallel.py: the env through PettingZoo's Parallel API (turn_based_aec_to_parallel).

PettingZoo's ``parallel_api_test`` passes, and every seat's summed per-step reward over a
round equals its team's round margin (R8), for four and six players (R9.3).
"""

from __future__ import annotations

import pytest
from conftest import load_example


@pytest.mark.parametrize("players", [4, 6])
def test_parallel_example_passes_the_api_test_and_credits_each_seat(players):
    means = load_example("pettingzoo_parallel").main(["--episodes", "15", "--players", str(players)])
    assert sorted(means) == [f"player_{i}" for i in range(players)]
    # Zero-sum between the teams, identical within a team (R1.2, R8).
    assert len({means[f"player_{i}"] for i in range(0, players, 2)}) == 1
    assert means["player_0"] == pytest.approx(-means["player_1"])


def test_credit_check_is_exercised():
    example = load_example("pettingzoo_parallel")
    env = example.parallel_env(episode="round")
    observations, _ = env.reset(seed=0)
    last_infos = {}
    while env.agents:
        actions = {a: int(o["action_mask"].argmax()) for a, o in observations.items()}
        observations, rewards, _, _, infos = env.step(actions)
        last_infos = infos or last_infos
    assert "round_result" in last_infos["player_0"]  # what the example's per-seat check reads
