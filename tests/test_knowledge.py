"""pcr_env.knowledge against the hidden truth of real games: what a seat infers is sound and as sharp as the rules allow.

Positions come from heuristic games of every variant; the engine's state (every hand, the passes, the kitty and the
discards) is the truth the observer's knowledge is checked against (R3.2, R3.3, R6.2, R9.3).
"""

from __future__ import annotations

import numpy as np
import pytest

from agents.scripted.heuristic import HeuristicAgent
from pcr_env.cards import NUM_CARDS
from pcr_env.config import RulesConfig
from pcr_env.engine import Phase, apply_action, legal_actions, new_game, pass_offset
from pcr_env.knowledge import seat_knowledge
from pcr_env.observation import decode_observation, encode_observation

VARIANTS = {"default": {}, "no_pass": {"passing": False}, "six": {"players": 6}, "auction": {"bidding": "auction"}}


def positions(rules: RulesConfig, games: int, seed: int):
    """(state copy, observer seat) at every decision of heuristic games, each seat observing in turn."""
    rng = np.random.default_rng(seed)
    agent = HeuristicAgent(seed=seed, rules=rules)
    for _ in range(games):
        state = new_game(rules, rng)
        step = 0
        while legal_actions(state):
            seat = (state.current + step) % rules.players  # the observer need not be the seat to act
            yield state, seat
            obs = encode_observation(state, state.current)
            mask = np.zeros(70, np.int8)
            mask[legal_actions(state)] = 1
            step += 1
            if apply_action(state, agent.act({"observation": obs, "action_mask": mask}), rng) is not None:
                break


def bits(mask: int) -> set[int]:
    return {c for c in range(NUM_CARDS) if mask >> c & 1}


@pytest.mark.parametrize("variant", sorted(VARIANTS))
def test_knowledge_is_sound_and_exact_on_real_games(variant):
    rules = RulesConfig(**VARIANTS[variant])
    n = rules.players
    checked = passed_checked = void_checked = 0
    for state, seat in positions(rules, games=6, seed=len(variant)):
        kn = seat_knowledge(encode_observation(state, seat), n)
        rel = lambda k: (seat + k) % n  # noqa: E731 - relative -> absolute seat
        # The observer's own hand, exactly.
        assert bits(state.hands[seat]) == set(np.flatnonzero(kn.hand)), "hand"
        # Unseen = every card the observer cannot place by sight: the other hands, the kitty, the hidden discards,
        # and (passing phase) the other seats' picks, which are still theirs.
        kitty_out = state.kitty if state.phase in (Phase.PASS, Phase.BID) else 0  # R9.2: until the declarer takes it
        hidden = kitty_out | (0 if seat == state.declarer else state.discards)
        for k in range(1, n):
            hidden |= state.hands[rel(k)] | (state.passed[rel(k)] if state.phase == Phase.PASS else 0)
        # My passed cards not yet played (in the passing phase: my picks so far, on their way to the receiver).
        passed_still = state.passed[seat] & ~state.hands[seat] & ~bits_mask(state.played)
        assert set(np.flatnonzero(kn.unseen)) == bits(hidden | passed_still), "unseen"
        for k in range(1, n):
            # Sound: every card seat k really holds is one it may hold (nothing it holds is ruled out).
            holds = state.hands[rel(k)] | (state.passed[rel(k)] if state.phase == Phase.PASS else 0)
            assert bits(holds) <= set(np.flatnonzero(kn.may_hold[k])), (variant, k)
            # R6.2: a shown void rules out the whole suit.
            for suit in decode_observation(encode_observation(state, seat)).voids[k]:
                void_checked += 1
                assert not kn.may_hold[k, suit * 13:(suit + 1) * 13].any()
        if state.phase != Phase.PASS and rules.passing and state.passed[seat]:
            # R3.2/R3.3: my passed cards not yet played are with the receiver, and only the receiver may hold them.
            receiver = pass_offset(int(state.pass_direction)) % n
            assert kn.receiver == receiver
            for c in np.flatnonzero(kn.passed_held):
                passed_checked += 1
                holders = [k for k in range(1, n) if kn.may_hold[k, c]]
                if n == 4:
                    assert holders == [receiver] and state.hands[rel(receiver)] >> int(c) & 1
                else:  # R9.3: a declarer receiver may have discarded it (and then shown out of its suit)
                    assert holders in ([receiver], [])
        checked += 1
    assert checked > 300
    if rules.passing:
        assert passed_checked > 50
    assert void_checked > 10


def bits_mask(masks: list[int]) -> int:
    out = 0
    for m in masks:
        out |= m
    return out


def test_receiver_follows_the_pass_direction():
    """R3.2: partner, left, right; no passing: -1."""
    for players in (4, 6):
        rules = RulesConfig(players=players, first_dealer=0)
        for round_number in (1, 2, 3, 4):
            state = new_game(rules, np.random.default_rng(round_number), round_number=round_number)
            kn = seat_knowledge(encode_observation(state, 0), players)
            direction = state.pass_direction
            expected = -1 if int(direction) == 3 else pass_offset(int(direction)) % players
            assert kn.receiver == expected, (players, round_number)
