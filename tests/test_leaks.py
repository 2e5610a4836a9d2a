"""No hidden-information leaks (RULES.md, "What no player sees").

A seat's observation must be a function of what that seat may know: changing
only information hidden from it (other hands, other players' pass picks, what
they passed and received, the kitty, another declarer's discards) must leave it
unchanged. Each test also has a positive control so it cannot pass vacuously.
"""

from __future__ import annotations

import numpy as np
import pytest
from conftest import RULE_VARIANTS, random_game

from pcr_env import engine as E
from pcr_env import pass_cut_run_v0
from pcr_env.actions import PASS_BID, bid_action
from pcr_env.cards import FULL_DECK, card_str, cards_of, mask_of
from pcr_env.config import RulesConfig
from pcr_env.engine import Phase
from pcr_env.observation import encode_observation


def _random_mask(pool: int, size: int, rng: np.random.Generator) -> int:
    cards = cards_of(pool)
    return mask_of(int(c) for c in rng.choice(cards, size=min(size, len(cards)), replace=False))


def hidden_twin(state: E.GameState, seat: int, rng: np.random.Generator) -> E.GameState:
    """A copy of ``state`` in which everything hidden from ``seat`` is redrawn at random.

    Redrawn: the other seats' hands, passed and received cards (same sizes), the
    kitty, and the discards unless ``seat`` is the declarer. Kept: ``seat``'s own
    cards and everything public (bids, trump, cards played, trick winners, ...).
    """
    twin = state.copy()
    n = state.config.players
    played = 0
    for p in state.played:
        played |= p
    known = state.hands[seat] | state.passed[seat] | state.received[seat] | played
    if seat == state.declarer:
        known |= state.discards
    pool = FULL_DECK & ~known  # cards whose whereabouts this seat does not know
    for p in range(n):
        if p == seat:
            continue
        twin.hands[p] = _random_mask(pool, state.hands[p].bit_count(), rng)
        twin.passed[p] = _random_mask(pool, state.passed[p].bit_count(), rng)
        twin.received[p] = _random_mask(pool, state.received[p].bit_count(), rng)
    twin.kitty = _random_mask(pool, state.kitty.bit_count(), rng)
    if seat != state.declarer:
        twin.discards = _random_mask(pool, state.discards.bit_count(), rng)
    return twin


@pytest.mark.parametrize("rules", RULE_VARIANTS, ids=[str(v) for v in RULE_VARIANTS])
def test_redrawing_hidden_information_never_changes_an_observation(rules):
    config = RulesConfig(target_score=60, **rules)
    rng = np.random.default_rng(7)
    changed_controls = 0
    for seed in range(2):
        for i, (state, *_rest) in enumerate(random_game(config, seed, max_rounds=2, pass_bid_prob=0.4)):
            if i % 3:
                continue
            for seat in range(config.players):
                before = encode_observation(state, seat)
                twin = hidden_twin(state, seat, rng)
                np.testing.assert_array_equal(encode_observation(twin, seat), before,
                                              err_msg=f"seat {seat} phase {state.phase.name}")
                # Positive control: a change of what this seat does know shows.
                if state.hands[seat] and state.hands[seat] != FULL_DECK:
                    other = state.copy()
                    other.hands[seat] = _random_mask(FULL_DECK & ~state.hands[seat], 1, rng)
                    changed_controls += not np.array_equal(encode_observation(other, seat), before)
    assert changed_controls > 100


def _deal_strings(state: E.GameState) -> list[list[str]]:
    return [[card_str(c) for c in cards_of(h)] for h in state.hands]


def _agent_obs(env, agent):
    obs = env.observe(agent)
    return obs["observation"].copy(), obs["action_mask"].copy()


def test_swapping_two_other_players_hands_does_not_change_my_observation():
    """Seats 1 and 3 swap hands; seats 0 and 2 (who pass to each other in round 1) see no difference
    through the whole pass phase and bidding, whatever seats 1 and 3 pick to pass."""
    base = E.new_game(RulesConfig(), np.random.default_rng(0))
    hands = _deal_strings(base)
    swapped = [hands[0], hands[3], hands[2], hands[1]]
    envs = [pass_cut_run_v0.raw_env(), pass_cut_run_v0.raw_env()]
    for env, deal in zip(envs, (hands, swapped)):
        env.reset(seed=1, options={"hands": deal, "dealer": 3, "round": 1})
    rngs = [np.random.default_rng(10), np.random.default_rng(20)]
    bids = [bid_action(7), PASS_BID, bid_action(8), PASS_BID]
    steps = 0
    while envs[0].game.phase in (Phase.PASS, Phase.BID):
        for seat in (0, 2):
            a = envs[0].possible_agents[seat]
            (o1, m1), (o2, m2) = _agent_obs(envs[0], a), _agent_obs(envs[1], a)
            np.testing.assert_array_equal(o1, o2, err_msg=f"seat {seat} after {steps} steps")
            np.testing.assert_array_equal(m1, m2)
        assert envs[0].agent_selection == envs[1].agent_selection
        actor = envs[0].game.current
        for env, rng in zip(envs, rngs):
            if env.game.phase == Phase.BID:
                action = bids[actor]
            elif actor in (0, 2):
                action = cards_of(env.game.hands[actor])[0]  # the same pick in both games
            else:
                action = int(rng.choice(cards_of(env.game.hands[actor])))
            env.step(action)
        assert envs[0].infos == envs[1].infos
        steps += 1
    assert steps == 12 + 4 and envs[0].game.phase == Phase.TRUMP
    # Positive control: seat 1 itself does see the difference.
    assert not np.array_equal(_agent_obs(envs[0], "player_1")[0], _agent_obs(envs[1], "player_1")[0])


@pytest.mark.parametrize("players", [4, 6])
def test_another_players_pass_picks_do_not_change_my_observation(players):
    """R3.1: picks are private. Seat ``picker`` chooses differently in two games with the same
    deal; every other seat except the one it passes to sees identical observations throughout
    the pass phase and after the exchange."""
    config = {"players": players}
    env_a, env_b = pass_cut_run_v0.raw_env(**config), pass_cut_run_v0.raw_env(**config)
    for round_number, offset in ((1, 2), (2, 1), (3, -1)):
        dealt = E.new_game(RulesConfig(players=players), np.random.default_rng(round_number))
        deal = _deal_strings(dealt)
        kitty = [card_str(c) for c in cards_of(dealt.kitty)]
        options = {"hands": deal, "kitty": kitty, "dealer": 0, "round": round_number}
        env_a.reset(seed=0, options=options)
        env_b.reset(seed=0, options=options)
        picker = 2
        receiver = (picker + offset) % players
        compared = 0
        while env_a.game.phase == Phase.PASS:
            actor = env_a.game.current
            env_a.step(cards_of(env_a.game.hands[actor])[0])
            env_b.step(cards_of(env_b.game.hands[actor])[-1 if actor == picker else 0])
            for seat in range(players):
                if seat in (picker, receiver) and env_a.game.phase != Phase.PASS or seat == picker:
                    continue
                agent = env_a.possible_agents[seat]
                np.testing.assert_array_equal(_agent_obs(env_a, agent)[0], _agent_obs(env_b, agent)[0],
                                              err_msg=f"round {round_number}, seat {seat}")
                compared += 1
        assert env_a.game.phase == Phase.BID and compared == 3 * players * (players - 1) - 1
        # Positive controls: the picker and, after the exchange, its receiver do see the difference.
        for seat in (picker, receiver):
            agent = env_a.possible_agents[seat]
            assert not np.array_equal(_agent_obs(env_a, agent)[0], _agent_obs(env_b, agent)[0])


def test_kitty_and_another_declarers_discards_stay_hidden():
    """R9.3: nobody but the declarer sees the kitty or the discards."""
    config = RulesConfig(players=6, passing=False)
    rng = np.random.default_rng(3)
    state = E.new_game(config, rng, dealer=5)
    E.apply_action(state, bid_action(5), rng)  # seat 0 declares
    while state.phase == Phase.BID:
        E.apply_action(state, PASS_BID, rng)
    E.apply_action(state, E.legal_actions(state)[0], rng)  # trump
    a, b = state.copy(), state.copy()
    hand = cards_of(state.hands[0])
    for card in hand[:4]:
        E.apply_action(a, card, rng)
    for card in hand[-4:]:
        E.apply_action(b, card, rng)
    assert a.phase == b.phase == Phase.PLAY and a.discards != b.discards
    # The other seats cannot tell which four cards were discarded (the declarer's hand is hidden from them).
    for seat in range(1, 6):
        np.testing.assert_array_equal(encode_observation(a, seat), encode_observation(b, seat))
    assert not np.array_equal(encode_observation(a, 0), encode_observation(b, 0))
