"""Bid likelihood weights over sampled worlds (agents.search.beliefs)."""

from __future__ import annotations

import numpy as np
import pytest
from test_worlds import find_position, obs_of

from agents.search.beliefs import bid_weights, bidding_positions
from pcr_env import engine as E
from pcr_env.config import RulesConfig
from pcr_env.engine import Phase
from pcr_env.observation import encode_observation
from pcr_env.worlds import sample_worlds


@pytest.mark.parametrize("rules", [{}, {"players": 6}, {"passing": False}])
def test_bidding_positions_rebuild_what_each_bidder_saw(rules):
    config = RulesConfig(**rules)
    checked = 0
    for seed in range(6):
        # a random game, recording each bidder's observation before its bid
        rng = np.random.default_rng(seed)
        state = E.new_game(config, rng)
        before = {}
        while state.phase not in (Phase.ROUND_END, Phase.GAME_OVER):
            seat = state.current
            legal = E.legal_actions(state)
            action = int(legal[rng.integers(len(legal))])
            if state.phase == Phase.BID:
                before[seat] = (encode_observation(state, seat), action)
            redeals = state.redeals
            E.apply_action(state, action, rng)
            if state.redeals != redeals:
                before = {}
            if state.phase == Phase.PLAY and len(state.trick_winners) in (0, 3) and not state.trick:
                for observer in range(config.players):
                    positions = bidding_positions(state, observer)
                    assert {b for b, _, _ in positions} == set(before) - {observer}
                    for bidder, pos, act in positions:
                        assert np.array_equal(encode_observation(pos, bidder), before[bidder][0])
                        assert act == before[bidder][1]
                        checked += 1
    assert checked > 20


def test_bid_weights_are_normalised_and_follow_the_policy():
    config = RulesConfig(passing=False)
    state, seat = find_position(config, lambda s: not s.trick_winners and not s.trick and s.high_bid)
    worlds = sample_worlds(obs_of(state, seat), config, 0, 50, seat=seat)
    flat = bid_weights(worlds, seat, lambda o, m: np.zeros(m.shape))
    assert flat == pytest.approx(np.full(50, 1 / 50))
    # a policy that bids more the more spades it holds favours worlds where the bidders hold spades
    def spades(o, m):
        n_spades = o[:, 7 + 39:7 + 52].sum(1)
        lp = np.full(m.shape, -1.0)  # unnormalised: weights only need ratios
        lp[:, E.PASS_BID] = -n_spades.astype(float)
        return lp
    w = bid_weights(worlds, seat, spades)
    assert w.sum() == pytest.approx(1) and w.std() > 0
