"""The observation encoder, its decoder, and the environment's observations against the reference encoder.

* the layout tiles the vector exactly, and the encoder overwrites all of it;
* ``decode_observation`` returns what the encoder was given, for every seat, after
  every action of random games in every variant (checked against the engine
  state directly, not against the encoder);
* the environment's observations (the one compiled encoder, on the env's game
  row) equal the independent reference encoder of ``tests/reference_engine.py``
  and ``encode_observation`` of the env's snapshot, after every action, for every
  seat, whether or not that seat's observation was read in between.
"""

from __future__ import annotations

import numpy as np
import pytest
import reference_engine as R
from conftest import RULE_VARIANTS, VARIANT_IDS, VARIANTS, random_game

from pcr_env import engine as E
from pcr_env import pass_cut_run_v0
from pcr_env.actions import PASS_BID
from pcr_env.cards import NUM_CARDS, cards_of
from pcr_env.config import RulesConfig
from pcr_env.engine import NOT_YET, PASSED, Phase
from pcr_env.observation import (
    decode_observation,
    encode_observation,
    encode_state,
    observation_bounds,
    observation_layout,
    observation_size,
    state_layout,
    state_size,
)


@pytest.mark.parametrize("players", [4, 6])
def test_layout_tiles_the_vector_exactly(players):
    n, tricks = players, RulesConfig(players=players).num_tricks
    layout = observation_layout(players)
    expected = {
        "phase": 7, "hand": 52, "passed": 52, "received": 52, "discarded": 52, "played": n * 52, "trick": n * 52,
        "bids": n * 14, "contract": 13, "declarer": n, "trump": 4, "dealer": n, "pass_direction": 4, "led_suit": 4,
        "voids": n * 4, "trick_winners": tricks * n, "team_tricks": 2, "run": 3, "scores": 3, "redeals": 1,
    }
    assert {k: s.stop - s.start for k, s in layout.slices.items()} == expected
    position = 0
    for sl in layout.slices.values():  # contiguous, in order, no gaps or overlaps
        assert sl.start == position and sl.step is None
        position = sl.stop
    assert position == layout.size == observation_size(players) == sum(expected.values())
    assert observation_size(4) == 797 and observation_size(6) == 1041
    full = state_layout(players)
    assert full.size == state_size(players) == layout.size + 3 * (n - 1) * NUM_CARDS + 2 * NUM_CARDS
    assert full["observation"] == slice(0, layout.size)


@pytest.mark.parametrize("players", [4, 6])
def test_encoder_overwrites_the_whole_output_buffer(players):
    rng = np.random.default_rng(0)
    for state, *_ in _sampled(RulesConfig(players=players), seed=1, every=7):
        seat = int(rng.integers(players))
        fresh = encode_observation(state, seat)
        assert fresh.dtype == np.float32 and fresh.shape == (observation_size(players),)
        dirty = np.full(observation_size(players), 7.0, np.float32)
        assert encode_observation(state, seat, dirty) is dirty
        np.testing.assert_array_equal(dirty, fresh)


def test_layout_rejects_bad_fields():
    from pcr_env.observation import Layout

    with pytest.raises(ValueError):
        Layout([("a", 3), ("a", 2)])
    with pytest.raises(ValueError):
        Layout([("a", 0)])


def test_decoder_rejects_vectors_of_unknown_length():
    with pytest.raises(ValueError, match="matches no table size"):
        decode_observation(np.zeros(100, np.float32))


def expected_view(state: E.GameState, seat: int) -> dict:
    """What ``seat`` may know, computed from the engine state (independently of the encoder)."""
    n = state.config.players
    rel = lambda s: (s - seat) % n  # noqa: E731
    trick: list[int | None] = [None] * n
    for s, card in state.trick:
        trick[rel(s)] = card
    bids = []
    for k in range(n):
        b = state.bids[(seat + k) % n]
        bids.append(None if b == NOT_YET else (PASSED if b == PASSED else b))
    mine = seat % 2
    return {
        "players": n,
        "phase": state.phase,
        "hand": cards_of(state.hands[seat]),
        "passed": cards_of(state.passed[seat]),
        "received": cards_of(state.received[seat]),
        "discarded": cards_of(state.discards) if seat == state.declarer else [],
        "played": [cards_of(state.played[(seat + k) % n]) for k in range(n)],
        "trick": trick,
        "bids": bids,
        "contract": state.high_bid or None,
        "declarer": rel(state.declarer) if state.high_bid else None,
        "trump": state.trump if state.trump >= 0 else None,
        "dealer": rel(state.dealer),
        "pass_direction": state.pass_direction,
        "led_suit": state.trick[0][1] // 13 if state.trick else None,
        "voids": [{s for s in range(4) if state.voids[(seat + k) % n] >> s & 1} for k in range(n)],
        "trick_winners": [rel(w) for w in state.trick_winners],
        "team_tricks": (state.team_tricks[mine], state.team_tricks[1 - mine]),
        "run": (None if state.run_length == 0 else int(state.run_team != mine), state.run_length),
        "scores": (state.scores[mine], state.scores[1 - mine]),
        "target": state.config.target_score,
        "redeals": min(state.redeals, 10),
    }


def _sampled(config: RulesConfig, seed: int, every: int = 1, max_rounds: int = 3, pass_bid_prob: float | None = 0.5):
    """States of a random game (a copy after every ``every``-th action)."""
    for i, (state, seat, action, result) in enumerate(random_game(config, seed, max_rounds=max_rounds,
                                                                    pass_bid_prob=pass_bid_prob)):
        if i % every == 0 or result is not None or state.phase == Phase.GAME_OVER:
            yield state.copy(), seat, action, result


def _check_round_trip(state: E.GameState, seat: int) -> None:
    vec = encode_observation(state, seat)
    view = decode_observation(vec)
    expected = expected_view(state, seat)
    got = {k: getattr(view, k) for k in expected}
    assert got == expected, {k: (got[k], expected[k]) for k in expected if got[k] != expected[k]}
    low, high = observation_bounds(state.config.players)
    assert np.all(vec >= low) and np.all(vec <= high), np.flatnonzero((vec < low) | (vec > high))
    if state.current == seat and state.trick:
        assert view.trick_leader == (state.trick[0][0] - seat) % state.config.players
    # The dict form the environment returns decodes the same way.
    assert decode_observation({"observation": vec, "action_mask": np.zeros(70, np.int8)}) == view


@pytest.mark.parametrize("rules", RULE_VARIANTS, ids=[str(v) for v in RULE_VARIANTS])
def test_decoder_round_trips_every_seat_after_every_action(rules):
    config = RulesConfig(target_score=60, **rules)
    for seed in range(2):
        for state, *_ in _sampled(config, seed=seed, every=1, max_rounds=2):
            for seat in range(config.players):
                _check_round_trip(state, seat)


def test_decoder_round_trips_scores_targets_and_redeals():
    rng = np.random.default_rng(4)
    for target, scores in [(100, (0, 0)), (150, (-13, 149)), (7, (250, -40)), (1, (3, 0)), (1000, (999, -999))]:
        state = E.new_game(RulesConfig(target_score=target, passing=False), rng, scores=scores)
        for k in range(3):
            _check_round_trip(state, k)
            for _ in range(4):
                E.apply_action(state, PASS_BID, rng)  # a redeal
        assert state.redeals == 3


@pytest.mark.parametrize("players", [4, 6])
def test_every_slice_is_written_in_some_game(players):
    """No dead slice: over a few random games every named slice is non-zero at some point.

    ``discarded`` is only ever used with six players (R9.3).
    """
    config = RulesConfig(players=players, target_score=60)
    layout = observation_layout(players)
    seen = np.zeros(layout.size, bool)
    for seed in range(3):
        for state, *_ in _sampled(config, seed=seed, every=3, max_rounds=None, pass_bid_prob=0.7):
            for seat in range(players):
                seen |= encode_observation(state, seat) != 0
    unused = {name for name, sl in layout.slices.items() if not seen[sl].any()}
    assert unused == (set() if players == 6 else {"discarded"})


def test_state_vector_is_the_observation_plus_every_hidden_card():
    config = RulesConfig(players=6)
    for state, *_ in _sampled(config, seed=5, every=5, max_rounds=1):
        for seat in (0, 3):
            vec = encode_state(state, seat)
            layout = state_layout(6)
            assert vec.shape == (state_size(6),) and vec.dtype == np.float32
            np.testing.assert_array_equal(vec[layout["observation"]], encode_observation(state, seat))
            others = [(seat + k) % 6 for k in range(1, 6)]
            for name, masks in (("other_hands", state.hands), ("other_passed", state.passed),
                                ("other_received", state.received)):
                block = vec[layout[name]].reshape(5, NUM_CARDS)
                for row, s in zip(block, others):
                    assert cards_of(sum(1 << int(c) for c in np.flatnonzero(row))) == cards_of(masks[s])
            assert np.flatnonzero(vec[layout["kitty"]]).tolist() == cards_of(state.kitty)
            assert np.flatnonzero(vec[layout["all_discards"]]).tolist() == cards_of(state.discards)


# ------------------------------------------------------------------------ the env's observations

def _check_tracker_game(env_kwargs: dict, seed: int, read: str, max_steps: int = 2500) -> int:
    """Drive ``raw_env`` with random legal actions; compare observe() with the reference encoder.

    ``read``: "all" reads every seat after every action; "actor" reads only the
    acting seat; "random" reads a random subset.
    """
    env = pass_cut_run_v0.raw_env(**env_kwargs)
    env.reset(seed=seed)
    rng = np.random.default_rng(seed + 1000)
    agents = env.possible_agents
    steps = 0
    for agent in _endless(env, seed, max_steps):
        obs, _, term, trunc, _ = env.last()
        if term or trunc:
            env.step(None)
            continue
        game = env.game
        if read == "all":
            seats = range(len(agents))
        elif read == "actor":
            seats = [agents.index(agent)]
        else:
            seats = [s for s in range(len(agents)) if rng.random() < 0.5]
        for s in seats:
            got = env.observe(agents[s])["observation"]
            want = R.encode_observation(game, s)
            assert np.array_equal(encode_observation(game, s), want)
            if not np.array_equal(got, want):
                diff = np.flatnonzero(got != want)
                names = [name for name, sl in observation_layout(len(agents)).slices.items()
                         if ((diff >= sl.start) & (diff < sl.stop)).any()]
                raise AssertionError(f"seat {s} after {steps} steps (phase {game.phase.name}): slices {names} differ")
        mask = obs["action_mask"]
        legal = np.flatnonzero(mask)
        # Bias towards "no bid" so that redeals (and their re-encoding) happen often.
        if game.phase == Phase.BID and rng.random() < 0.6:
            action = PASS_BID
        else:
            action = int(legal[rng.integers(len(legal))])
        env.step(action)
        steps += 1
    return steps


def _endless(env, seed: int, max_steps: int):
    """``agent_iter`` that starts a new episode (next seed) whenever one ends, up to ``max_steps`` agents."""
    count = 0
    while count < max_steps:
        for agent in env.agent_iter(max_steps - count):
            count += 1
            yield agent
        seed += 1
        env.reset(seed=seed)


@pytest.mark.parametrize("variant", VARIANTS, ids=VARIANT_IDS)
@pytest.mark.parametrize("read", ["all", "actor", "random"])
def test_tracker_equals_fresh_encoding_after_every_action(variant, read):
    kwargs = dict(variant, target_score=variant.get("target_score", 40))
    steps = sum(_check_tracker_game(kwargs, seed, read, max_steps=600) for seed in range(2))
    assert steps > 200


def test_tracker_survives_redeal_in_no_pass_rounds():
    """In a round without passing a redeal goes from BID to BID: the observations show the new deal."""
    env = pass_cut_run_v0.raw_env(passing=False, first_dealer=0)
    env.reset(seed=3)
    for _ in range(3):
        for a in env.possible_agents:
            env.observe(a)  # make every buffer live
        for _ in range(4):
            env.step(PASS_BID)
        assert env.game.phase == Phase.BID
        for s, a in enumerate(env.possible_agents):
            np.testing.assert_array_equal(env.observe(a)["observation"], R.encode_observation(env.game, s))
    assert env.game.redeals == 3


def test_observations_stay_in_bounds_when_redeals_truncate_the_game():
    """A game truncated by redeals (R4.4) ends with ``redeals = max_redeals + 1``; the
    observation must still lie in the declared observation space."""
    for max_redeals in (10, 14):
        env = pass_cut_run_v0.raw_env(passing=False, max_redeals=max_redeals)
        env.reset(seed=0)
        checked = 0
        for agent in env.agent_iter():
            obs, _, term, trunc, _ = env.last()
            assert env.observation_space(agent).contains(obs), decode_observation(obs).redeals
            checked += 1
            env.step(None if term or trunc else PASS_BID)
        assert env.game.truncated and checked > 4 * max_redeals
