"""One implementation of the rules: the compiled game row, its readable form, and both environments on it.

* ``GameState`` <-> game row conversions are exact, in every variant, at every decision;
* the AEC env (``raw_env``), stepped decision by decision, equals the independent
  reference engine and encoder (``tests/reference_engine.py``) driven by the same
  ``np_random`` stream: states, observations of every seat, rewards, infos, ends;
* ``VectorEnv.set_games`` continues from given positions exactly as the reference does;
* the rules run as plain Python with ``NUMBA_DISABLE_JIT=1`` and give the same games;
* ``pcr_env.cards.beats`` (R6.4) is the rule the engine and the agents use.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
import reference_engine as R
from conftest import VARIANT_IDS, VARIANTS
from gymnasium.utils import seeding

from pcr_env import engine as E
from pcr_env import pass_cut_run_v0
from pcr_env.cards import NUM_CARDS, beats, parse_card
from pcr_env.config import RulesConfig
from pcr_env.vector import VectorEnv

ROOT = Path(__file__).resolve().parents[1]


def test_beats_is_r6_4():
    # R6.4: the highest trump wins, else the highest card of the led suit; off-suit cards never win.
    c = parse_card
    hearts, spades, clubs = 2, 3, 0
    assert beats(c("2S"), c("AH"), hearts, spades)  # a trump beats the led suit
    assert beats(c("3S"), c("2S"), hearts, spades) and not beats(c("2S"), c("3S"), hearts, spades)
    assert beats(c("KH"), c("QH"), hearts, spades) and not beats(c("QH"), c("KH"), hearts, spades)
    assert not beats(c("AC"), c("2H"), hearts, spades)  # off-suit, not trump
    assert not beats(c("AH"), c("2S"), hearts, spades)  # the led suit does not beat a trump
    assert not beats(c("AD"), c("2C"), clubs, -1)  # no trump named yet (agents' views)
    for trump in range(-1, 4):
        for led in range(4):
            for card in range(0, NUM_CARDS, 5):
                for best in range(1, NUM_CARDS, 7):
                    trick = [(0, best), (1, card)] if best // 13 == led else None
                    if trick:
                        want = R.trick_winner(trick, trump) == 1
                        assert beats(card, best, led, trump) == want
                        assert E.trick_winner(trick, trump) == R.trick_winner(trick, trump)


@pytest.mark.parametrize("variant", VARIANTS, ids=VARIANT_IDS)
def test_rows_round_trip_and_step_like_the_reference(variant):
    """GameState -> row -> GameState is exact, and the wrappers step like the reference engine."""
    cfg = RulesConfig(**{k: v for k, v in variant.items() if k in RulesConfig.field_names()})
    for seed in range(3):
        ref_rng, rng = np.random.default_rng(seed), np.random.default_rng(seed)
        policy = np.random.default_rng(seed + 50)
        ref, game = R.new_game(cfg, ref_rng), E.new_game(cfg, rng)
        for _ in range(400):
            assert game == ref
            assert E.from_row(E.to_row(game)[0], cfg) == game
            if game.phase == E.Phase.GAME_OVER:
                break
            if game.phase == E.Phase.ROUND_END:
                R.start_next_round(ref, ref_rng)
                E.start_next_round(game, rng)
                continue
            legal = R.legal_actions(ref)
            assert E.legal_actions(game) == legal
            action = int(policy.choice(legal))
            assert E.apply_action(game, action, rng) == R.apply_action(ref, action, ref_rng)


def test_round_info_is_to_info_of_the_record():
    venv = VectorEnv(16, seed=4, target_score=20)
    obs, masks, seats = venv.reset()
    rng = np.random.default_rng(4)
    seen = 0
    for _ in range(400):
        obs, masks, seats, rewards, dones, infos = venv.step((rng.random(masks.shape) * masks).argmax(axis=1))
        for i, info in enumerate(infos):
            if "round_result" in info:
                seen += 1
                assert info["round_result"] == E.RoundResult.from_record(venv._round_info[i]).to_info()
    assert seen > 20


class RefAEC:
    """The AEC env's episodes, rewards and infos on the reference engine (the specification of raw_env.step)."""

    def __init__(self, rules: RulesConfig, episode: str, reward: str, seed: int):
        self.rules, self.episode, self.reward = rules, episode, reward
        self.rng, _ = seeding.np_random(seed)
        self.game = R.new_game(rules, self.rng)

    def step(self, action: int):
        """Returns (per-seat rewards or None, info or None, "terminated" / "truncated" / None)."""
        game = self.game
        result = R.apply_action(game, action, self.rng)
        if result is None:
            return None, None, ("truncated" if game.phase == E.Phase.GAME_OVER else None)
        diff = result.scores[0] - result.scores[1]
        n = self.rules.players
        rewards = [diff if s % 2 == 0 else -diff for s in range(n)] if self.reward == "score_diff" else [0] * n
        end = None
        if self.episode == "round" or game.phase == E.Phase.GAME_OVER:
            if self.reward == "win":
                sign = int(np.sign(diff)) if self.episode == "round" else (0 if game.winner is None else 1 - 2 * game.winner)
                rewards = [sign if s % 2 == 0 else -sign for s in range(n)]
            end = "truncated" if self.episode == "game" and game.truncated else "terminated"
        else:
            R.start_next_round(game, self.rng)
        return rewards, result.to_info(), end


AEC_VARIANTS = [
    ({"target_score": 30}, "game", "score_diff"),
    ({"players": 6, "target_score": 25}, "game", "win"),
    ({"bidding": "auction", "passing": False}, "round", "win"),
    ({"min_bid": 13, "max_redeals": 1}, "round", "score_diff"),
    ({"max_rounds": 2, "double_run_bonus": True}, "game", "win"),
]


@pytest.mark.parametrize("rules, episode, reward", AEC_VARIANTS, ids=[f"{r},{e},{w}" for r, e, w in AEC_VARIANTS])
def test_aec_env_matches_the_reference_decision_by_decision(rules, episode, reward):
    for seed in range(3):
        env = pass_cut_run_v0.raw_env(episode=episode, reward=reward, **rules)
        env.reset(seed=seed)
        ref = RefAEC(env.rules, episode, reward, seed)
        policy = np.random.default_rng(seed + 7)
        for _ in range(1500):
            assert env.game == ref.game
            for s, agent in enumerate(env.possible_agents):
                assert np.array_equal(env.observe(agent)["observation"], R.encode_observation(ref.game, s))
            assert np.array_equal(env.state(), R.encode_state(ref.game, 0))
            if any(env.terminations.values()) or any(env.truncations.values()):
                break
            mask = env.observe(env.agent_selection)["action_mask"]
            assert np.array_equal(mask, R.legal_mask(ref.game))
            action = int(policy.choice(np.flatnonzero(mask)))
            if ref.game.phase == E.Phase.BID and policy.random() < 0.5:
                action = R.A.PASS_BID
            env.step(action)
            rewards, info, end = ref.step(action)
            if rewards is not None:
                assert [env.rewards[a] for a in env.possible_agents] == rewards
                assert all(env.infos[a] == {"round_result": info} for a in env.possible_agents)
            else:
                assert not any(env.rewards.values())
            assert all(env.terminations.values()) == (end == "terminated")
            assert all(env.truncations.values()) == (end == "truncated")


def test_set_games_continues_from_given_positions():
    """Mid-round positions from the reference engine, loaded into a VectorEnv, play on as the reference does."""
    cfg = RulesConfig(target_score=40)
    games = []
    policy = np.random.default_rng(3)
    for i in range(6):
        rng = np.random.default_rng(i)
        game = R.new_game(cfg, rng)
        for _ in range(10 + 9 * i):  # somewhere in passing, bidding or play
            R.apply_action(game, int(policy.choice(R.legal_actions(game))), rng)
        if game.phase >= E.Phase.ROUND_END:
            continue
        games.append(game)
    starts = [g.copy() for g in games]
    venv = VectorEnv(len(games), seed=5, **cfg.to_dict())
    obs, masks, seats = venv.set_games(starts)
    for i, game in enumerate(games):
        assert venv.game(i) == game and seats[i] == game.current
        assert np.array_equal(obs[i], R.encode_observation(game, game.current))
        assert np.array_equal(masks[i], R.legal_mask(game))
    # Play on to the end of the round: identical to the reference (no new deal is drawn before it).
    for _ in range(60):
        live = [i for i, g in enumerate(games) if g.phase < E.Phase.ROUND_END]
        if not live:
            break
        actions = np.array([int(np.flatnonzero(masks[i])[0]) for i in range(len(games))])
        obs, masks, seats, rewards, dones, infos = venv.step(actions)
        for i in live:
            result = R.apply_action(games[i], int(actions[i]), np.random.default_rng(0))
            if result is not None:
                assert infos[i]["round_result"] == result.to_info()
            else:
                assert venv.game(i) == games[i]
    # Rows in the engine's format work too (get_state()["games"]), and positions without a seat to act are refused.
    again = VectorEnv(len(games), seed=5, **cfg.to_dict())
    again.set_games(venv.get_state()["games"])
    assert all(again.game(i) == venv.game(i) for i in range(len(games)))
    over = [g.copy() for g in starts]
    over[1].phase, over[1].current = E.Phase.ROUND_END, -1
    with pytest.raises(ValueError, match="game 1 has nobody to act"):
        again.set_games(over)
    with pytest.raises(ValueError, match="set_games got 1 games"):
        again.set_games(over[:1])


def test_set_games_with_a_seed_does_not_depend_on_what_the_env_played_before():
    """set_games(..., seed=s): the deals after the given positions (here the one after each round's end)
    come from s alone, as after reset(seed=s), whether the env is fresh or has played other games."""
    starts = [R.new_game(RulesConfig(), np.random.default_rng(i)) for i in range(4)]

    def deals_after(venv: VectorEnv) -> list:
        obs, masks, seats = venv.set_games([g.copy() for g in starts], seed=11)
        after: dict[int, list[int]] = {}
        while len(after) < len(starts):  # the first legal action everywhere, each game to the end of its round
            obs, masks, seats, rewards, dones, infos = venv.step(masks.argmax(1))
            for i in np.flatnonzero(dones):
                after.setdefault(int(i), list(venv.game(int(i)).hands))
        return [after[i] for i in range(len(starts))]

    fresh, used = VectorEnv(4, seed=0, episode="round"), VectorEnv(4, seed=0, episode="round")
    _, masks, _ = used.reset()
    for _ in range(70):  # past a round end: the streams have moved on
        masks = used.step(masks.argmax(1))[1]
    unused = VectorEnv(4, seed=0, episode="round")
    unused.reset()
    assert not np.array_equal(used.get_state()["rng"], unused.get_state()["rng"])
    assert deals_after(fresh) == deals_after(used)
    assert deals_after(fresh) != [list(g.hands) for g in starts]
    with pytest.raises(ValueError, match="seed -1 is not allowed"):
        fresh.set_games([g.copy() for g in starts], seed=-1)


_PLAY_SCRIPT = """
import hashlib, warnings
import numpy as np
warnings.simplefilter("ignore")  # uint64 wrap-around in the splitmix64 stream warns in plain numpy
from pcr_env import pass_cut_run_v0
from pcr_env.vector import VectorEnv
h = hashlib.sha256()
for kwargs in ({}, {"players": 6, "bidding": "auction"}):
    env = pass_cut_run_v0.raw_env(target_score=15, **kwargs)
    env.reset(seed=1)
    rng = np.random.default_rng(1)
    for agent in env.agent_iter(max_iter=400):
        obs, reward, term, trunc, info = env.last()
        h.update(obs["observation"].tobytes() + obs["action_mask"].tobytes() + repr((reward, info)).encode())
        env.step(None if term or trunc else int(rng.choice(np.flatnonzero(obs["action_mask"]))))
    venv = VectorEnv(3, seed=2, episode="round", **kwargs)
    obs, masks, seats = venv.reset()
    for _ in range(150):
        obs, masks, seats, rewards, dones, infos = venv.step((rng.random(masks.shape) * masks).argmax(axis=1))
        h.update(obs.tobytes() + rewards.tobytes() + repr(infos).encode())
    h.update(venv.state().tobytes())
print(h.hexdigest())
"""


def test_the_rules_run_as_plain_python_with_jit_disabled():
    """NUMBA_DISABLE_JIT=1 (debugging, coverage): the same functions as plain Python play the same games."""
    def run(disable: bool) -> str:
        env = dict(os.environ, PYTHONPATH=str(ROOT), NUMBA_DISABLE_JIT="1" if disable else "0")
        out = subprocess.run([sys.executable, "-c", _PLAY_SCRIPT], env=env, cwd=ROOT, capture_output=True, text=True,
                             timeout=600)
        assert out.returncode == 0, out.stderr[-3000:]
        return out.stdout.strip()

    assert run(True) == run(False)
