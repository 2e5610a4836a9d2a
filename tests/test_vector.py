"""The batched environment (pcr_env.vector.VectorEnv): equivalence with a reference, auto-reset, seeds, errors.

The rules (R1-R9), the observation encoder and the episode and reward logic are
written once, compiled (:mod:`pcr_env.engine`, :mod:`pcr_env.observation`).
``RefVector`` below is the specification they are held to: the independent
pure-Python rules and encoder of ``tests/reference_engine.py``, stepped game by
game with the episode and reward rules written out here, and dealing from
``RefDealRng`` (the per-game splitmix64 stream, in pure Python). The
equivalence tests play thousands of seeded random games through both and
require identical masks, observations (bit for bit), state vectors, rewards,
round results and final results at every decision, in every rule variant.
"""

from __future__ import annotations

import re
from typing import Any

import numpy as np
import pytest
import reference_engine as R

from pcr_env import engine as E
from pcr_env.actions import NUM_ACTIONS, PASS_BID, TRUMP_BASE, bid_action
from pcr_env.cards import card_bits
from pcr_env.observation import decode_observation, encode_observation, observation_size
from pcr_env.vector import DealRng, VectorEnv

_MASK64 = (1 << 64) - 1
_GOLDEN = 0x9E3779B97F4A7C15


def _mix64(z: int) -> int:
    z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & _MASK64
    z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & _MASK64
    return z ^ (z >> 31)


class RefDealRng:
    """Game ``index``'s stream of ``VectorEnv(seed=seed)``, restated in pure Python (the specification of DealRng)."""

    def __init__(self, seed: int, index: int):
        base = _mix64((int(seed) + _GOLDEN) & _MASK64)
        self.state = _mix64((base + (int(index) + 1) * _GOLDEN) & _MASK64)

    def _next(self) -> int:
        self.state = (self.state + _GOLDEN) & _MASK64
        return _mix64(self.state)

    def _below(self, k: int) -> int:
        m = (self._next() >> 32) * k
        if (m & 0xFFFFFFFF) < k:
            threshold = ((1 << 32) - k) % k
            while (m & 0xFFFFFFFF) < threshold:
                m = (self._next() >> 32) * k
        return m >> 32

    def integers(self, low: int, high: int | None = None) -> int:
        lo, hi = (0, low) if high is None else (low, high)
        return lo + self._below(hi - lo)

    def permutation(self, n: int) -> np.ndarray:
        order = list(range(n))
        for j in range(n - 1, 0, -1):
            r = self._below(j + 1)
            order[j], order[r] = order[r], order[j]
        return np.array(order, np.int64)


class RefVector:
    """VectorEnv's semantics on the reference engine, one game at a time."""

    def __init__(self, num_envs: int, seed: int = 0, episode: str = "game", reward: str = "score_diff", **rules: Any):
        self.num_envs, self.seed, self.episode, self.reward_kind = num_envs, seed, episode, reward
        self.rules = E.RulesConfig.from_kwargs(rules)
        self.n_players = self.rules.players

    def reset(self):
        self.rngs = [RefDealRng(self.seed, i) for i in range(self.num_envs)]
        self.games = [R.new_game(self.rules, rng) for rng in self.rngs]
        return self.observe()

    def step(self, actions):
        n = self.num_envs
        rewards = np.zeros((n, self.n_players), np.float32)
        dones = np.zeros(n, bool)
        infos: list[dict] = [{} for _ in range(n)]
        for i, game in enumerate(self.games):
            result = R.apply_action(game, int(actions[i]), self.rngs[i])
            if result is not None:
                infos[i]["round_result"] = result.to_info()
                diff = result.scores[0] - result.scores[1]
                if self.reward_kind == "score_diff":
                    rewards[i, 0::2], rewards[i, 1::2] = diff, -diff
                if self.episode == "round" or game.phase == E.Phase.GAME_OVER:
                    if self.reward_kind == "win":
                        if self.episode == "game":
                            sign = 0 if game.winner is None else (1 if game.winner == 0 else -1)
                        else:
                            sign = int(np.sign(diff))
                        rewards[i, 0::2], rewards[i, 1::2] = sign, -sign
                    self.finish(i, infos[i], truncated=self.episode == "game" and game.truncated)
                    dones[i] = True
                else:
                    R.start_next_round(game, self.rngs[i])
            elif game.phase == E.Phase.GAME_OVER:  # R4.4: too many redeals
                self.finish(i, infos[i], truncated=True)
                dones[i] = True
        return (*self.observe(), rewards, dones, infos)

    def finish(self, i: int, info: dict, truncated: bool) -> None:
        game = self.games[i]
        info["final"] = {"scores": list(game.scores), "winner": -1 if game.winner is None else game.winner,
                         "truncated": truncated,
                         "rounds": game.round_number}
        self.games[i] = R.new_game(self.rules, self.rngs[i])

    def observe(self):
        n = self.num_envs
        obs = np.zeros((n, observation_size(self.n_players)), np.float32)
        masks = np.zeros((n, NUM_ACTIONS), np.int8)
        seats = np.zeros(n, np.int64)
        for i, game in enumerate(self.games):
            seats[i] = game.current
            R.encode_observation(game, game.current, obs[i])
            masks[i, R.legal_actions(game)] = 1
        return obs, masks, seats

    def state(self):
        return np.stack([R.encode_state(g, g.current) for g in self.games])


def random_actions(masks: np.ndarray, rng: np.random.Generator, pass_bid_weight: float = 1.0) -> np.ndarray:
    """A random legal action per game (Gumbel-max over the mask; "no bid" can be favoured)."""
    weights = masks.astype(np.float64)
    weights[:, PASS_BID] *= pass_bid_weight
    keys = np.log(rng.random(masks.shape)) / np.where(weights > 0, weights, 1e-300)  # exponential race
    return np.where(masks > 0, keys, -np.inf).argmax(axis=1)


def bits(a: np.ndarray) -> np.ndarray:
    """float32 array as raw bits: equality is bit-for-bit (tells -0.0 from 0.0)."""
    return np.ascontiguousarray(a).view(np.uint32)


def assert_same_step(got, want, step: int) -> None:
    names = ("obs", "masks", "seats", "rewards", "dones")
    for name, g, w in zip(names, got[:5], want[:5]):
        if g.dtype == np.float32:
            same = np.array_equal(bits(g), bits(w))
        else:
            same = np.array_equal(g, w) and g.dtype == w.dtype
        if not same:
            bad = np.flatnonzero((g != w).reshape(len(g), -1).any(axis=1))
            raise AssertionError(f"step {step}: {name} differ in games {bad[:10].tolist()}")
    assert got[5] == want[5], f"step {step}: infos differ"


# Variants: every rule and episode setting, small targets so games end, truncation by redeals
# (max_redeals with a high min_bid and "no bid" favoured) and by max_rounds. (kwargs, envs, steps, pass weight)
EQUIVALENCE_VARIANTS: list[tuple[dict[str, Any], int, int, float]] = [
    ({"target_score": 25}, 24, 700, 1.0),
    ({"episode": "round"}, 32, 600, 1.0),
    ({"players": 6, "target_score": 20}, 24, 600, 1.0),
    ({"players": 6, "bidding": "auction", "episode": "round", "reward": "win"}, 24, 500, 1.0),
    ({"passing": False, "double_run_bonus": True, "target_score": 30, "reward": "win"}, 24, 600, 1.0),
    ({"bidding": "auction", "min_bid": 1, "target_score": 15}, 24, 600, 1.0),
    ({"min_bid": 13, "max_redeals": 1, "episode": "round", "reward": "win"}, 32, 500, 3.0),
    ({"players": 6, "min_bid": 8, "max_redeals": 0, "first_dealer": 2, "target_score": 10}, 24, 500, 2.0),
    ({"max_rounds": 2, "reward": "win"}, 24, 500, 1.0),
    ({"passing": False, "min_bid": 12, "max_redeals": 4, "first_dealer": 1, "target_score": 12}, 24, 400, 6.0),
    ({"min_bid": 4, "double_run_bonus": True, "target_score": 1, "episode": "game"}, 24, 400, 1.0),
]


def _variant_id(kw: dict[str, Any]) -> str:
    return ",".join(f"{k}={v}" for k, v in kw.items())


@pytest.mark.parametrize("kwargs, num_envs, steps, pass_weight", EQUIVALENCE_VARIANTS,
                         ids=[_variant_id(v[0]) for v in EQUIVALENCE_VARIANTS])
def test_matches_the_engine_decision_by_decision(kwargs, num_envs, steps, pass_weight):
    """R1-R9 through the engine and the reference: identical masks, observations, rewards, results, state, at every step."""
    seed = 1000 + len(_variant_id(kwargs))
    venv, ref = VectorEnv(num_envs, seed=seed, **kwargs), RefVector(num_envs, seed=seed, **kwargs)
    got, want = venv.reset(), ref.reset()
    assert_same_step((*got, np.zeros(0, np.float32), np.zeros(0, bool), []),
                     (*want, np.zeros(0, np.float32), np.zeros(0, bool), []), 0)
    rng = np.random.default_rng(seed)
    finished = rounds = 0
    for step in range(1, steps + 1):
        actions = random_actions(got[1], rng, pass_weight)
        got, want = venv.step(actions), ref.step(actions)
        assert_same_step(got, want, step)
        finished += int(got[4].sum())
        rounds += sum("round_result" in info for info in got[5])
        if step % 7 == 0:
            assert np.array_equal(bits(venv.state()), bits(ref.state())), f"step {step}: state() differs"
            i = step % num_envs
            assert venv.game(i) == ref.games[i]
            for seat in range(venv.n_players):  # any seat's view, not only the acting one
                assert np.array_equal(bits(venv.observe(i, seat)), bits(R.encode_observation(ref.games[i], seat)))
                assert np.array_equal(bits(venv.observe(i, seat)), bits(encode_observation(venv.game(i), seat)))
    assert finished >= 10 and rounds >= 10, (finished, rounds)  # the episode machinery was exercised


def test_thousands_of_round_episodes_match():
    """Many short episodes ("round"): every deal, bid and score of 2000+ rounds equal to the reference's."""
    num_envs, seed = 256, 77
    venv = VectorEnv(num_envs, seed=seed, episode="round", bidding="auction", min_bid=5)
    ref = RefVector(num_envs, seed=seed, episode="round", bidding="auction", min_bid=5)
    got, want = venv.reset(), ref.reset()
    rng = np.random.default_rng(seed)
    finished = 0
    step = 0
    while finished < 2000:
        step += 1
        actions = random_actions(got[1], rng)
        got, want = venv.step(actions), ref.step(actions)
        assert_same_step(got, want, step)
        finished += int(got[4].sum())


def test_deals_follow_the_stream_of_dealrng():
    # R2.1, R2.2: first dealer drawn from the game's stream, then 13 (or 8 + kitty) cards each.
    for players in (4, 6):
        venv = VectorEnv(5, seed=42, players=players)
        venv.reset()
        for i in range(5):
            assert venv.game(i) == E.new_game(venv.rules, DealRng(42, i)) == R.new_game(venv.rules, RefDealRng(42, i))
    for seed, index in ((0, 0), (1, 7), (2**64 - 1, 2**63 - 1)):  # DealRng is the reference stream
        a, b = DealRng(seed, index), RefDealRng(seed, index)
        assert a.state == b.state
        for k in (2, 4, 6, 52, 2**31 + 3):
            assert a.integers(k) == b.integers(k)
        assert a.permutation(52).tolist() == b.permutation(52).tolist()
    rng = DealRng(1, 0)
    assert sorted(rng.permutation(52).tolist()) == list(range(52))
    assert all(0 <= rng.integers(6) < 6 for _ in range(100))


def test_dealrng_is_uniform_enough():
    # Lemire's bounded draw is unbiased; a coarse chi-square check of the first dealer and first card.
    rng = DealRng(3, 0)
    counts = np.bincount([rng.integers(6) for _ in range(6000)], minlength=6)
    assert ((counts - 1000) ** 2 / 1000).sum() < 30
    first = np.bincount([DealRng(5, i).permutation(52)[0] for i in range(5200)], minlength=52)
    assert ((first - 100) ** 2 / 100).sum() < 110  # chi2(51) 99.99th percentile ~ 100


# ---------------------------------------------------------------------------- arrays and auto-reset


def test_shapes_and_dtypes():
    for players, obs_dim, state_dim in ((4, 797, 1369), (6, 1041, 1925)):
        venv = VectorEnv(3, players=players)
        obs, masks, seats = venv.reset()
        assert (obs.shape, obs.dtype) == ((3, obs_dim), np.float32)
        assert (masks.shape, masks.dtype) == ((3, NUM_ACTIONS), np.int8)
        assert (seats.shape, seats.dtype) == ((3,), np.int64)
        assert (venv.obs_dim, venv.state_dim, venv.num_actions, venv.n_players) == (obs_dim, state_dim, 70, players)
        out = venv.step(random_actions(masks, np.random.default_rng(0)))
        assert (out[3].shape, out[3].dtype) == ((3, players), np.float32)
        assert (out[4].shape, out[4].dtype) == ((3,), np.bool_)
        assert isinstance(out[5], list) and len(out[5]) == 3
        assert venv.state().shape == (3, state_dim)
        # Returned arrays are fresh: keeping them across steps is safe.
        obs2 = venv.step(random_actions(out[1], np.random.default_rng(1)))[0]
        assert not np.shares_memory(obs2, out[0])


def test_auto_reset_after_each_episode():
    """A finished game restarts at once: infos carry its results, the new observation is round 1's."""
    venv = VectorEnv(16, seed=5, episode="round", reward="win")
    obs, masks, seats = venv.reset()
    rng = np.random.default_rng(5)
    done_seen = 0
    for _ in range(400):
        obs, masks, seats, rewards, dones, infos = venv.step(random_actions(masks, rng))
        for i in np.flatnonzero(dones):
            done_seen += 1
            info = infos[i]
            final, result = info["final"], info["round_result"]
            assert final["rounds"] == 1 and final["scores"] == result["total_scores"]
            sign = np.sign(result["scores"][0] - result["scores"][1])
            assert rewards[i].tolist() == [sign, -sign, sign, -sign]
            view = decode_observation(obs[i])  # the next game's first decision
            assert view.phase == E.Phase.PASS and view.scores == (0, 0) and view.redeals == 0
            assert len(view.hand) == 13 and view.played == [[], [], [], []]
            assert venv.game(i).round_number == 1
        assert not rewards[~dones].any()  # "win": nothing before the episode ends
        assert all(not infos[i] for i in np.flatnonzero(~dones))  # a "round" episode ends with its round
    assert done_seen >= 50


def test_score_diff_rewards_every_round_and_game_results():
    # R8.1-R8.4: rewards at each round end are the team score difference; the final result follows R8.4.
    venv = VectorEnv(16, seed=11, target_score=20)
    obs, masks, seats = venv.reset()
    rng = np.random.default_rng(11)
    games = 0
    for _ in range(1500):
        obs, masks, seats, rewards, dones, infos = venv.step(random_actions(masks, rng))
        for i, info in enumerate(infos):
            if "round_result" in info:
                diff = info["round_result"]["scores"][0] - info["round_result"]["scores"][1]
                assert rewards[i].tolist() == [diff, -diff, diff, -diff]
            else:
                assert not rewards[i].any()
            if "final" in info:
                games += 1
                final, totals = info["final"], info["round_result"]["total_scores"]
                assert final["scores"] == totals and max(totals) >= 20 and totals[0] != totals[1]
                assert final["winner"] == int(totals[1] > totals[0]) and final["truncated"] is False
    assert games >= 10


def test_truncation_by_redeals_and_by_max_rounds():
    # R4.4: past max_redeals the episode is truncated (no reward); R8.4: max_rounds truncates a game.
    venv = VectorEnv(8, seed=2, max_redeals=0, min_bid=13)
    obs, masks, seats = venv.reset()
    truncated = 0
    for _ in range(200):
        actions = np.where(masks[:, PASS_BID] == 1, PASS_BID, masks.argmax(axis=1))
        obs, masks, seats, rewards, dones, infos = venv.step(actions)
        for i in np.flatnonzero(dones):
            assert infos[i]["final"] == {"scores": [0, 0], "winner": -1, "truncated": True, "rounds": 1}
            assert "round_result" not in infos[i] and not rewards[i].any()
            truncated += 1
    assert truncated >= 8
    venv = VectorEnv(4, seed=3, max_rounds=1, target_score=1000)
    obs, masks, seats = venv.reset()
    finals = []
    rng = np.random.default_rng(3)
    while len(finals) < 8:
        obs, masks, seats, rewards, dones, infos = venv.step(random_actions(masks, rng))
        finals += [infos[i]["final"] for i in np.flatnonzero(dones)]
    assert all(f["truncated"] and f["winner"] == -1 and f["rounds"] == 1 for f in finals)


# ---------------------------------------------------------------------------- seeds
def _play(num_envs: int, seed: int, steps: int, watch: int, **kwargs) -> list:
    """Trajectory of game ``watch`` when every game i acts from its own stream of random choices."""
    venv = VectorEnv(num_envs, seed=seed, **kwargs)
    obs, masks, seats = venv.reset()
    rngs = [np.random.default_rng([seed, i]) for i in range(num_envs)]
    trace = [(obs[watch].copy(), masks[watch].copy(), int(seats[watch]))]
    for _ in range(steps):
        actions = np.array([random_actions(masks[i:i + 1], rngs[i])[0] for i in range(num_envs)])
        obs, masks, seats, rewards, dones, infos = venv.step(actions)
        trace.append((obs[watch].copy(), masks[watch].copy(), int(seats[watch]), rewards[watch].copy(),
                      bool(dones[watch]), infos[watch]))
    return trace


def _same_trace(a: list, b: list) -> bool:
    if len(a) != len(b):
        return False
    for x, y in zip(a, b):
        for u, v in zip(x, y):
            if isinstance(u, np.ndarray):
                if not np.array_equal(u, v):
                    return False
            elif u != v:
                return False
    return True


@pytest.mark.parametrize("kwargs", [{"episode": "round"}, {"players": 6, "target_score": 15}],
                         ids=["round", "six,target=15"])
def test_game_i_is_the_same_whatever_num_envs(kwargs):
    """Per-game streams: game i plays the same deals for N = 1, 8 and 64 given the same actions."""
    steps = 300
    for watch in (0, 5):
        ref = _play(max(watch + 1, 1), 9, steps, watch, **kwargs)
        for n in (8, 64):
            assert _same_trace(_play(n, 9, steps, watch, **kwargs), ref), (watch, n)


def test_same_seed_same_arrays_and_reset_restarts():
    def run(seed: int) -> list[np.ndarray]:
        venv = VectorEnv(32, seed=seed, episode="round")
        obs, masks, seats = venv.reset()
        out = [obs, masks, seats]
        rng = np.random.default_rng(0)
        for _ in range(150):
            obs, masks, seats, rewards, dones, infos = venv.step(random_actions(masks, rng))
            out += [obs, masks, seats, rewards, dones]
        return out

    a, b = run(3), run(3)
    assert all(np.array_equal(x, y) for x, y in zip(a, b))
    venv = VectorEnv(32, seed=3, episode="round")
    first = venv.reset()
    venv.step(random_actions(first[1], np.random.default_rng(0)))
    again = venv.reset()  # reset restarts every stream
    assert all(np.array_equal(x, y) for x, y in zip(first, again))
    assert not np.array_equal(venv.reset(seed=4)[0], first[0])
    assert venv.seed == 4


def test_different_seeds_deal_different_cards():
    hands = {}
    for seed in (0, 1, 2, 2**64 - 1):
        venv = VectorEnv(16, seed=seed)
        venv.reset()
        hands[seed] = [tuple(venv.game(i).hands) for i in range(16)]
        assert len(set(hands[seed])) == 16  # the games of one env differ too
    flat = [h for hs in hands.values() for h in hs]
    assert len(set(flat)) == len(flat)
    # Seeds and indices do not alias: (seed 0, game 1) is not (seed 1, game 0).
    assert hands[0][1] != hands[1][0]


# ---------------------------------------------------------------------------- errors
def test_illegal_action_names_env_action_and_legal_set_and_changes_nothing():
    venv = VectorEnv(4, seed=0, first_dealer=0)
    obs, masks, seats = venv.reset()
    before = [venv.game(i) for i in range(4)]
    actions = masks.argmax(axis=1)
    hand = venv.game(2).hands[1]
    bad = next(c for c in range(52) if not hand >> c & 1)  # a card seat 1 does not hold
    actions[2] = bad
    legal = sorted(c for c in range(52) if hand >> c & 1)
    msg = re.escape(f"env 2: illegal action {bad} (") + r".*" + re.escape(f"legal actions are {legal}")
    with pytest.raises(ValueError, match=msg):
        venv.step(actions)
    assert [venv.game(i) for i in range(4)] == before  # atomic: no game moved
    for action in (-1, NUM_ACTIONS, bid_action(7), TRUMP_BASE):
        actions[2] = action
        with pytest.raises(ValueError, match=f"env 2: illegal action {action} "):
            venv.step(actions)
    # A legal step still works afterwards.
    venv.step(masks.argmax(axis=1))


def test_bid_legality_follows_r4_2():
    venv = VectorEnv(1, seed=0, passing=False, first_dealer=0, min_bid=8)
    obs, masks, seats = venv.reset()
    assert np.flatnonzero(masks[0]).tolist() == [bid_action(k) for k in range(8, 14)] + [PASS_BID]
    with pytest.raises(ValueError, match="env 0: illegal action 58 \\(bid 7\\)"):
        venv.step(np.array([bid_action(7)]))
    obs, masks, *_ = venv.step(np.array([bid_action(9)]))
    assert np.flatnonzero(masks[0]).tolist() == [bid_action(k) for k in range(10, 14)] + [PASS_BID]


@pytest.mark.parametrize("actions, match", [
    (np.zeros(3, np.int64), r"actions has shape \(3,\): expected \(4,\)"),
    (np.zeros((4, 1), np.int64), r"actions has shape \(4, 1\): expected \(4,\)"),
    (np.zeros(4, np.float32), "actions has dtype float32: expected integer action ids"),
])
def test_malformed_actions(actions, match):
    venv = VectorEnv(4)
    venv.reset()
    with pytest.raises(ValueError, match=match):
        venv.step(actions)


def test_use_before_reset_is_refused():
    venv = VectorEnv(2)
    with pytest.raises(ValueError, match="reset"):
        venv.step(np.zeros(2, np.int64))
    with pytest.raises(ValueError, match="reset"):
        venv.state()


@pytest.mark.parametrize("kwargs, match", [
    ({"num_envs": 0}, "num_envs 0 is not allowed: allowed an integer >= 1"),
    ({"num_envs": 2.0}, "num_envs 2.0 is not allowed"),
    ({"num_envs": True}, "num_envs True is not allowed"),
    ({"num_envs": 2, "seed": -1}, r"seed -1 is not allowed: allowed an integer 0\.\.2\*\*64-1"),
    ({"num_envs": 2, "seed": 2**64}, "seed 18446744073709551616 is not allowed"),
    ({"num_envs": 2, "seed": "0"}, "seed '0' is not allowed"),
    ({"num_envs": 2, "episode": "match"}, r"episode 'match' is not allowed: allowed \['game', 'round'\]"),
    ({"num_envs": 2, "reward": "points"}, r"reward 'points' is not allowed: allowed \['score_diff', 'win'\]"),
    ({"num_envs": 2, "players": 5}, "rules field 'players' = 5 is not allowed: allowed 4 or 6"),
    ({"num_envs": 2, "min_bid": 14}, "rules field 'min_bid' = 14 is not allowed"),
])
def test_bad_constructor_arguments(kwargs, match):
    with pytest.raises(ValueError, match=match):
        VectorEnv(**kwargs)


def test_unknown_constructor_keyword_is_a_type_error():
    with pytest.raises(TypeError, match=r"VectorEnv\(\) got an unexpected keyword argument 'colour': allowed num_envs"):
        VectorEnv(2, colour=1)


def test_inspection_arguments_are_checked():
    venv = VectorEnv(2)
    venv.reset()
    with pytest.raises(ValueError, match=r"game index 2 is out of range: allowed 0\.\.1"):
        venv.game(2)
    with pytest.raises(ValueError, match=r"seat 4 is not a seat: allowed 0\.\.3"):
        venv.observe(0, 4)
    with pytest.raises(ValueError, match="reset"):
        VectorEnv(1).game(0)


def test_masks_match_card_bits_of_the_engine():
    # R6.2 must-follow through the mask, against the reference's legal_card_mask for a few hundred plays.
    venv = VectorEnv(8, seed=21, passing=False)
    obs, masks, seats = venv.reset()
    rng = np.random.default_rng(21)
    checked = 0
    for _ in range(300):
        for i in range(8):
            game = venv.game(i)
            if game.phase == E.Phase.PLAY:
                assert np.array_equal(masks[i, :52], card_bits(R.legal_card_mask(game)))
                assert E.legal_card_mask(game) == R.legal_card_mask(game)
                checked += 1
        obs, masks, seats, *_ = venv.step(random_actions(masks, rng))
    assert checked > 1000
