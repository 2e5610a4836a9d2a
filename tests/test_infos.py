"""Infos hold numbers only, with a fixed structure, in every environment (AEC, Gymnasium view, VectorEnv).

Tianshou's replay buffer stacks infos over steps; a string leaf (``round_result["trump"]``
used to be a suit letter) or a ``None`` (``winner`` on a tie) made it an object
array padded with ``None``, and its trainer stopped with "NaNs in buffer". So
every leaf must be an int, float, bool, a list of them or a numeric array, and
``round_result`` (present exactly on the steps where a round ended) must have the
same keys and list lengths every time, so that padded steps are plain zeros
(recognisable by ``round == 0``: rounds count from 1).
"""

from __future__ import annotations

import gymnasium
import numpy as np
import pytest
from conftest import non_numeric_leaves

from pcr_env import pass_cut_run_v0
from pcr_env.cards import SUITS
from pcr_env.gym_env import PassCutRunEnv
from pcr_env.vector import VectorEnv

ROUND_KEYS = {"round", "dealer", "declarer", "bid", "trump", "tricks", "run_bonus", "scores", "made", "trick_winners",
              "total_scores", "winner"}


def _structure(value):
    """The shape of an info value: keys, list lengths and leaf kinds (numbers compared by kind, not value)."""
    if isinstance(value, dict):
        return {k: _structure(v) for k, v in value.items()}
    if isinstance(value, list):
        return ("list", len(value), tuple(sorted({type(v).__name__ for v in value})))
    return type(value).__name__


def _check_round_result(rr, players):
    tricks = 13 if players == 4 else 8
    assert set(rr) == ROUND_KEYS
    assert rr["trump"] in range(4) and SUITS[rr["trump"]] in "CDHS"
    assert rr["winner"] in (-1, 0, 1) and (rr["winner"] == -1) == (rr["tricks"][0] == rr["tricks"][1])
    assert len(rr["trick_winners"]) == tricks and all(0 <= s < players for s in rr["trick_winners"])
    assert rr["round"] >= 1 and isinstance(rr["made"], bool)
    return _structure(rr)


@pytest.mark.parametrize("kwargs", [
    {"target_score": 60},
    {"players": 6, "target_score": 60},
    {"episode": "round", "reward": "win"},
    {"passing": False, "bidding": "auction", "max_redeals": 0},  # redeal truncations
], ids=["default", "six", "round-win", "auction-redeals"])
@pytest.mark.parametrize("make", [pass_cut_run_v0.raw_env, pass_cut_run_v0.env], ids=["raw_env", "env"])
def test_aec_infos_are_numbers_only_on_every_step_of_random_games(make, kwargs):
    env = make(**kwargs)
    players = env.unwrapped.rules.players
    structures, rounds = set(), 0
    for seed in range(3):
        env.reset(seed=seed)
        rng = np.random.default_rng(seed)
        for agent in env.agent_iter():
            obs, reward, term, trunc, info = env.last()
            assert non_numeric_leaves(info) == [], info
            assert set(info) <= {"round_result"}
            for other in env.agents:
                assert non_numeric_leaves(env.infos[other]) == []
            if "round_result" in info:
                structures.add(repr(_check_round_result(info["round_result"], players)))
            if term or trunc:
                env.step(None)
                continue
            before = env.unwrapped.game.rounds_played
            env.step(int(rng.choice(np.flatnonzero(obs["action_mask"]))))
            rounds += env.unwrapped.game.rounds_played > before
    if kwargs.get("max_redeals") != 0:
        assert rounds >= 3
    assert len(structures) <= 1, structures  # the same keys, kinds and lengths every time


def test_six_player_tie_gives_winner_minus_one():
    """R8.3 with six players: a 4-4 split is a tie, reported as winner -1 (was None)."""
    env = pass_cut_run_v0.raw_env(players=6, episode="round")
    for seed in range(60):
        env.reset(seed=seed)
        rng = np.random.default_rng(seed)
        while not (all(env.terminations.values()) or all(env.truncations.values())):
            mask = env.observe(env.agent_selection)["action_mask"]
            env.step(int(rng.choice(np.flatnonzero(mask))))
        rr = env.infos["player_0"].get("round_result")
        if rr is not None and rr["tricks"] == [4, 4]:
            assert rr["winner"] == -1
            return
    pytest.fail("no 4-4 round in 60 random six-player rounds")


@pytest.mark.parametrize("kwargs", [
    {"target_score": 40},
    {"team": True, "seat": 1, "players": 6, "target_score": 40},
    {"episode": "round"},
], ids=["default", "six-team", "round"])
def test_gym_view_infos_are_numbers_only_on_every_step(kwargs):
    class RandomLegal:
        def __init__(self):
            self.rng = np.random.default_rng(0)

        def reset(self, seed=None):
            self.rng = np.random.default_rng(seed)

        def act(self, obs):
            return int(self.rng.choice(np.flatnonzero(obs["action_mask"])))

    env = PassCutRunEnv(others=RandomLegal(), **kwargs)
    structures = set()
    keys_seen = set()
    for seed in range(3):
        obs, info = env.reset(seed=seed)
        assert non_numeric_leaves(info) == []
        rng = np.random.default_rng(seed)
        while True:
            obs, reward, terminated, truncated, info = env.step(int(rng.choice(np.flatnonzero(env.action_masks()))))
            assert non_numeric_leaves(info) == [], info
            keys_seen |= set(info)
            if "round_result" in info:
                structures.add(repr(_check_round_result(info["round_result"], env.rules.players)))
            if terminated or truncated:
                break
    assert keys_seen <= {"seat", "action_mask", "round_result", "final_scores"}
    assert len(structures) == 1


def test_gym_view_illegal_action_info_is_numbers_only():
    env = gymnasium.make("PassCutRun-v0", others="random").unwrapped  # specs: through the registered id
    env.reset(seed=0)
    *_, info = env.step(69)  # trump during the pass phase
    assert info["illegal_action"] is True and non_numeric_leaves(info) == []


@pytest.mark.parametrize("kwargs", [{}, {"players": 6, "bidding": "auction"}, {"max_redeals": 0, "passing": False}],
                         ids=["default", "six-auction", "redeals"])
def test_vector_env_infos_are_numbers_only(kwargs):
    venv = VectorEnv(6, seed=1, target_score=40, **kwargs)
    obs, masks, seats = venv.reset()
    rng = np.random.default_rng(0)
    structures, finals = set(), 0
    for _ in range(2500):
        actions = (rng.random(masks.shape) * masks).argmax(axis=1)
        obs, masks, seats, rewards, dones, infos = venv.step(actions)
        for info in infos:
            assert non_numeric_leaves(info) == [], info
            if "round_result" in info:
                structures.add(repr(_check_round_result(info["round_result"], venv.n_players)))
            if "final" in info:
                finals += 1
                assert info["final"]["winner"] in (-1, 0, 1)
    assert finals >= 1 and len(structures) <= 1
